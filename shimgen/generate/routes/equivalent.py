"""Route `equivalent`: libtorch's own C shim of the overload aten computes the op as (the scalar facts'
`equivalents`: sub.Tensor is subtract.Tensor; add.Tensor is subtract.Tensor with -alpha, as ATen's sub is add
with -alpha; rsub.Tensor is subtract.Tensor with self and other swapped), each proven equal, gradients included,
on every runtime (`python -m shimgen.dev prove equivalents`) before it enters the data. libtorch 2.10+ exports
aoti_torch_aten_subtract_Tensor, a dispatching call (autograd and every other key see it): ~1.05x at::.

It takes every parameter or none. Numbers travel as the shim's double: checked per call as on the `shim` route
(routes.sibling.scalar_body); where the double would change what aten computes (an integer on integer tensors)
the call raises naming SHIMGEN_OVERLAY. Ranks after shimgen's own shim, which carries those numbers exactly:
a build that opts in to the overlay keeps it."""

from __future__ import annotations

from shimgen.facts import scalar_facts as scalars
from shimgen.generate.signatures import c as sig_c
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.base.errors import Refusal
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query
from shimgen.generate.routes.aten_shim import CShimRoute
from shimgen.generate.routes.sibling import scalar_body


class Equivalent(CShimRoute):
    calls_c_shim = False  # it calls the equivalent overload's shim, which the plan generates for that op

    def variant_at(self, q: Query) -> Variant | None:
        rule = scalars.load().equivalents.get(q.op.name)
        via = q.plan.op_named(rule["via"]) if rule else None
        if via is None or not q.at.c_compatible:
            return None
        try:
            shipped = [sv for sv in sig_c.versions(via, q.plan) if sv.upstream and sv.since <= q.level]
        except Refusal:
            return None
        if not shipped or any((n := sig_c.carries(p.row)) is None or n > q.level for p in q.params):
            return None
        sv = shipped[-1]
        if {a.name for a in sig_c.c_arguments(via)[: sv.shim.nargs]} != set(rule["args"]):  # type: ignore[index]
            return None
        if sig_c.returns_need(q.op, q.plan.table) is None:
            return None
        return Variant(self, len(q.params), q.level, shim=sv.shim.function, shim_nargs=sv.shim.nargs)

    def whose(self, v: Variant) -> str:
        return f"libtorch's C shim {v.shim}"

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        rule = scalars.load().equivalents[w.op.name]
        args = ", ".join(f"{k}={x}" for k, x in rule["args"].items())
        return [f"Route: libtorch's C shim {v.shim}, as aten computes aten::{w.op.name}: aten::{rule['via']}({args}) "
                f"(proven equal, gradients included, on torch {', '.join(rule['proven'])}).",
                "Numbers the shim's double would change raise an error (shimgen::Scalar)."] + (
                ["A Bool operand beside a floating one is first converted to their common dtype, as aten converts "
                 f"it (aten::{rule['via']} refuses a Bool operand)."] if rule.get("cast_bool") else []) + [
                f"A {d} tensor {'otherwise ' if rule.get('cast_bool') else ''}raises an error: aten::{rule['via']} "
                f"refuses it where aten::{w.op.name} takes it." for d in rule.get("refuse_dtypes", [])]

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        why = (f"aten::{w.op.name}'s numbers reach libtorch only as a double, which changes what aten computes for "
               "non-floating tensors: define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each torch "
               "release) for a route that carries them")
        return "\n".join([*_bool_cast(w, v), *_dtype_refusals(w, v), scalar_body(w, v, plan, _call(w, v, plan), why)])


def _bool_cast(w: Wrapper, v: Variant) -> list[str]:
    """Row key `cast_bool` (add.Tensor): a Bool operand beside a floating one is converted to their common dtype
    first, as aten's TensorIterator converts it (exactly: 0 and 1), since `via` refuses a Bool operand; then the
    wrapper again, on tensors `via` takes."""
    rule = scalars.load().equivalents[w.op.name]
    if not rule.get("cast_bool"):
        return []
    a, b = [p.name for p in w.kept(v) if str(p.arg.type) == "Tensor"][:2]
    args = ", ".join(f"shimgen::detail::to_dtype({p.name}, common)" if p.name in (a, b) else p.name
                     for p in w.kept(v))
    return [f"if (shimgen::detail::bool_beside_floating({a}, {b})) {{",
            f"const auto common = shimgen::detail::common_dtype({a}, {b});",
            f"return {w.name}({args});", "}"]


def _dtype_refusals(w: Wrapper, v: Variant) -> list[str]:
    """A `shimgen:` error for each dtype the rule's `via` rejects where the op takes it (`refuse_dtypes`, measured
    by the prover: add.Tensor on a Bool tensor, which aten::subtract refuses)."""
    rule = scalars.load().equivalents[w.op.name]
    tensors = [p for p in w.kept(v) if str(p.arg.type) == "Tensor"]
    lines = []
    for dtype in rule.get("refuse_dtypes", []):
        why = (f"a {dtype} tensor: aten::{rule['via']}, whose libtorch C shim this route calls, refuses it where "
               f"aten::{w.op.name} takes it: define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each "
               "torch release) for a route that carries it")
        args = ", ".join(f"&{p.name}" for p in tensors)
        flag = f"refused_{dtype.lower()}"
        lines.append(f"const bool {flag} = shimgen::detail::any_is<{len(tensors)}>("
                     f"torch::headeronly::ScalarType::{dtype}, {{{args}}});\n"
                     f'if ({flag}) {{\nshimgen::detail::fail("{w.op.name}", "{why}");\n}}')
    return lines


def _call(w: Wrapper, v: Variant, plan: Plan) -> str:
    """The equivalent overload's C shim call, its arguments mapped from the wrapper's (`-name`: the double negated)."""
    rule = scalars.load().equivalents[w.op.name]
    via: Op | None = plan.op_named(rule["via"])
    assert via is not None
    kept = {p.name: p for p in w.kept(v)}
    lines: list[str] = []
    args: list[str] = []
    for a in sig_c.c_arguments(via)[: v.shim_nargs]:
        expr = rule["args"][a.name]
        p = kept[expr.lstrip("-")]
        if p.row.prelude:
            lines.append(p.row.fill(p.row.prelude, p.name))
        values = [p.row.fill(e, p.name) for e in p.row.to_c]
        args += [f"-{x}" for x in values] if expr.startswith("-") else values
    locals_, addrs, ret = sig_c.returns_from_c(w, plan)
    lines += locals_
    lines.append(f"SHIMGEN_CHECK({v.shim}({', '.join(args + addrs)}));")
    if ret:
        lines.append(ret)
    return "\n".join(lines)


ROUTE_CLASS = Equivalent
