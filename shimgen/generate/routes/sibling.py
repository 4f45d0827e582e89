"""Route `sibling`: a Scalar overload called as its Tensor sibling (`mul.Scalar` -> `mul.Tensor`) with the numbers
as 0-dim tensors, or as a composition (`full` -> `empty` + `fill_.Tensor`): shimgen/facts/scalar_facts.py finds the
targets by rule and data/scalar_facts.yaml says where each was measured equal to the Scalar overload. It carries nothing
itself: a form takes what its targets' wrappers take at the release (sig_cpp lowering, in the query).

The C shim routes lower through the same code where their double would change a number (`scalar_body`), so the
emission of every lowered call lives here."""

from __future__ import annotations

from shimgen.facts import device_checks, scalar_facts as scalars
from shimgen.base.errors import ShimgenError
from shimgen.generate.cpp_model import Param, Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import Version


class Sibling(Route):
    lowers = True

    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return None  # the targets' wrappers carry the values

    def returns_need(self, op: Op, table: Table) -> Version | None:
        return None

    def variant_at(self, q: Query) -> Variant | None:
        """None where the op has a proven kernel composition (data/scalar_facts.yaml kernel_compositions): the row
        exists because it computes calls the sibling's proven cells refuse (pow_.Scalar as pow.Tensor_Scalar, then
        copy_: an in-place form carrying its functional's proofs), so the composition route serves it."""
        if q.lowering is None or q.op.name in scalars.load().kernel_compositions:
            return None
        return Variant(self, q.lowering[1], q.level, lowering=q.lowering[0])

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        lowered = " and ".join(f"aten::{t}" for t in v.lowering)
        return [f"Route: {lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped numbers."]

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        return lowered_body(w, v, plan)


ROUTE_CLASS = Sibling


def _tensor_operands(w: Wrapper, v: Variant) -> list[Param]:
    """The Tensor parameters of the call (not out=): the operands of its type promotion."""
    return [p for p in w.kept(v) if str(p.arg.type) == "Tensor" and not p.is_out]


def exactness(w: Wrapper, v: Variant, plan: Plan) -> tuple[list[str], list[tuple[str, str]]]:
    """(statements, [(parameter, condition)]): when the variant's C shim carries each number exactly."""
    # The floating clause reads the Tensor arguments' dtypes: it needs at least one, and no tensor lists.
    lists = any(str(a.type).startswith("Tensor") and "[" in str(a.type) for a in w.op.schema.arguments.flat_all)
    proven = w.op.name in scalars.load().int_as_double and not lists and bool(_tensor_operands(w, v))
    prelude: list[str] = []
    checks: list[tuple[str, str]] = []
    for p in w.kept(v):
        row = p.row
        if not row.exact_c:
            continue
        conds = [row.fill(row.exact_c, p.name)]
        default = p.arg.default or ""
        if (v.route.exact_integral_defaults and row.exact_c_default and row.aten_default
                and default.lstrip("-").isdigit()):
            conds.append(row.fill(row.exact_c_default, p.name, default=default))
        if proven and row.exact_c_floating:
            conds.append(f"(floating && {row.fill(row.exact_c_floating, p.name)})")
        checks.append((p.name, " || ".join(conds)))
    if proven and checks:
        tensors = ", ".join(f"&{t.name}" for t in _tensor_operands(w, v))
        n = len(_tensor_operands(w, v))
        prelude.append(f"const bool floating = shimgen::detail::any_floating<{n}>({{{tensors}}});")
    return prelude, checks


def lowered_body(w: Wrapper, v: Variant, plan: Plan) -> str:
    """The call lowered to the Tensor sibling (numbers as 0-dim tensors) or to a composition."""
    comp = scalars.load().compositions.get(w.op.name)
    if comp is not None:
        return _composition_body(w, v, plan, comp, next(p for p in w.kept(v) if p.row.stand_in))
    target = plan.wrapper_of(v.lowering[0])
    assert target is not None
    theirs = {p.name: str(p.arg.type) for p in target.params}
    numbers = [p for p in w.kept(v) if p.row.stand_in and theirs.get(p.name) == p.row.stand_in]
    operands = _tensor_operands(w, v)
    facts = scalars.load()
    lines = [
        f"const auto dtypes = shimgen::detail::stand_in_dtypes<{len(operands)}, {len(numbers)}>(",
        f'"{w.op.name}", {facts.cells.get(w.op.name, 0):#x}, {facts.cells_fit.get(w.op.name, 0):#x}, '
        f'{facts.cells_exact.get(w.op.name, 0):#x}, '
        f'{{{", ".join(f"shimgen::detail::operand({t.name})" for t in operands)}}}, '
        f'{{{", ".join(_number_pointer(p) for p in numbers)}}}, {{{", ".join(chr(34) + p.name + chr(34) for p in numbers)}}});',
    ]
    index = {p.name: i for i, p in enumerate(numbers)}
    # where the target's CUDA kernel checks devices, the numbers go to the first operand's (device_checks.py)
    like = operands[0].name if operands and numbers_on_device(target.op.name, plan) else None
    maker = (lambda p: f"shimgen::detail::number_tensor_on({p.name}, dtypes[{index[p.name]}], {like})") if like \
        else (lambda p: f"shimgen::detail::number_tensor({p.name}, dtypes[{index[p.name]}])")
    args = [maker(p) if p.name in index else p.name for p in w.kept(v)]
    call = f"{target.name}({', '.join(args)})"
    lines.append(f"return {call};" if w.returns != "void" else f"{call};")
    return "\n".join(lines)


def numbers_on_device(target: str, plan: Plan) -> bool:
    """Does overload `target` check its operands' devices, so that a number tensor must be on theirs?"""
    def lookup(name: str):
        try:
            return plan.native.select([name], plan.table)[0].f if plan.native is not None else None
        except ShimgenError:
            return None
    def overloads(base: str):
        try:
            return [o.f for o in plan.native.select([base], plan.table)] if plan.native is not None else []
        except ShimgenError:
            return []
    memo = plan.derived.setdefault("numbers_on_device", {})
    if target not in memo:  # type: ignore[operator]
        memo[target] = device_checks.checks_devices(target, lookup(target), lookup, overloads)  # type: ignore[index]
    return memo[target]  # type: ignore[index]


def _number_pointer(p: Param) -> str:
    return f"{p.name}.has_value() ? &*{p.name} : nullptr" if str(p.arg.type).endswith("?") else f"&{p.name}"


def _composition_body(w: Wrapper, v: Variant, plan: Plan, comp: dict[str, str], number: Param) -> str:
    create, fill = (plan.wrapper_of(comp[k]) for k in ("create", "fill"))
    assert create is not None and fill is not None
    ours = {p.name for p in w.kept(v)}
    args = []
    for p in create.params:
        if p.name not in ours:
            break  # the rest keep their defaults
        if p.name == "dtype" and comp.get("infer_dtype") == number.name:
            args.append(f"{p.name}.has_value() ? {p.name} : shimgen::detail::full_dtype({number.name})")
        else:
            args.append(p.name)
    # The number goes through fill_'s own Scalar wrapper, which carries it exactly or refuses it.
    return "\n".join([
        f"torch::stable::Tensor result = {create.name}({', '.join(args)});",
        f"{fill.name}(result, {number.name});",
        "return result;",
    ])


def scalar_body(w: Wrapper, v: Variant, plan: Plan, own: str, why: str | None = None) -> str:
    """A C shim variant's body with its numbers checked: the shim where it carries them exactly, else the
    lowered call, else a `shimgen:` error naming the number."""
    prelude, checks = exactness(w, v, plan)
    if not checks:
        return own
    if v.lowering:
        cond = " && ".join(f"({c})" for _, c in checks) if len(checks) > 1 else checks[0][1]
        return "\n".join([*prelude, f"if ({cond}) {{", own, "}", lowered_body(w, v, plan)])
    why = why or ("the C shim carries it as a double, which changes what aten computes, and no Tensor overload can "
                  "stand in for it")
    refusals = [
        f'if (!({c})) {{\nshimgen::detail::refuse("{w.op.name}", "{name}", {name}, "{why}");\n}}'
        for name, c in checks
    ]
    return "\n".join([*prelude, *refusals, own])
