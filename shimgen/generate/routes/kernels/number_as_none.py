"""Kernel `number_as_none` (linalg_vector_norm.default -> via linalg_norm.default): for the one value `value` of its
number `argument`, the op is `via` with that number as via's `Scalar?` None (`none`), which the dispatcher carries
(linalg_norm with ord None computes linalg_vector_norm with ord 2); another value, or a list argument of a length
`via` refuses (`lengths`), raises a `shimgen:` error naming the remedy. `fixed` gives via's other parameters a value
of their own (norm.Scalar is norm.ScalarOpt_dim with dim [] and keepdim false, as aten calls it); `operand` names a
wrapper whose result stands in for one of via's arguments (dist(a, b, p) is aten's norm(a - b, p): sub.Tensor
first, `as` the name the row's `args` bind). `otherwise` names a kernel section's helper that takes the op's
other values (it computes what it can as aten's CPU kernel and refuses the rest), called with the op's name, the
number's name and the op's parameters (with `operand`, its result in place of its arguments); `otherwise_doc` says in
the wrapper's comment what it computes."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import literal, number_is, proven


class NumberAsNone(Kernel):
    name = "number_as_none"
    prover = "prove_number_as_none"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes all of its own with libtorch alone at q.level: the op's
        arguments bound to them (`args`) and the number (`argument`), which `via` gets as None (`none`)."""
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        operand = rule.get("operand")  # dist: via's operand is `operand`'s wrapper on the op's tensors
        mine = set(rule["args"].values()) | set(operand["args"] if operand else ())
        if mine - {operand["as"] if operand else None} | {rule["argument"]} != {p.name for p in q.params}:
            return None
        if set(rule["args"]) | {rule["none"]} | set(rule.get("fixed", {})) != {
                p.name for p in target.params}:  # type: ignore[union-attr]
            return None
        if operand:
            first = q.plan.wrapper_of(operand["via"])
            fv = first.active(q.level) if first is not None else None
            if fv is None or fv.route.overlay or fv.kept < len(operand["args"]):
                return None
            return Variant(route, len(q.params), q.level, lowering=(rule["via"], operand["via"]))
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: {rule['argument']} = {rule['value']} as aten::{rule['via']} with {rule['none']} None, "
                f"which computes aten::{w.op.name} with {rule['value']} (proven equal, gradients included, on "
                f"torch {proven(rule)}).",
                (f"Another {rule['argument']}: shimgen::detail::{rule['otherwise']} computes aten's CPU kernel "
                 f"for {rule['otherwise_doc']}; any other call raises an error (no libtorch route carries it)."
                 if "otherwise" in rule else f"Another {rule['argument']} raises an error: no libtorch route "
                 "carries it.")]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """The number checked to be the rule's value (an integer or a double equal to it) and each `lengths` list
        argument of an allowed length (where `via` raises otherwise), then `via`'s wrapper with None for the
        number."""
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        a, value, op = rule["argument"], rule["value"], w.op.name
        why = (f"only {a}={value} has a libtorch route (aten::{rule['via']} with {rule['none']} None, which computes "
               "it): define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each torch release)")
        operand = rule.get("operand")
        lines = []
        params = [p.name for p in w.params]
        if operand:  # dist: aten computes norm(self - other, p), the difference first
            first = plan.wrapper_of(operand["via"])
            assert first is not None
            lines.append(f"const torch::stable::Tensor {operand['as']} = torch::stable::{first.name}"
                         f"({', '.join(operand['args'])});")
            at = params.index(operand["args"][0])
            params = [n for n in params if n not in operand["args"]]
            params.insert(at, operand["as"])
        other = (f'return shimgen::detail::{rule["otherwise"]}("{op}", "{a}", {", ".join(params)});'
                 if "otherwise" in rule else f'shimgen::detail::refuse("{op}", "{a}", {a}, "{why}");')
        lines += [f"if (!({number_is(f'{a}.', value)})) {{", other, "}"]
        for name, lengths in sorted(rule.get("lengths", {}).items()):
            allowed = " || ".join(f"{name}->size() == {n}" for n in lengths)
            lines += [f"if ({name}.has_value() && !({allowed})) {{",
                      f'shimgen::detail::fail("{op}", "with {a}={value}, `{name}` of {" or ".join(map(str, lengths))} '
                      f'dims only (aten::{rule["via"]} refuses others): define SHIMGEN_OVERLAY and link '
                      'libshimgen_overlay (rebuilt for each torch release)");', "}"]
        fixed = rule.get("fixed", {})  # via's parameters given a value of their own (norm.Scalar: all dims)
        args = ", ".join("std::optional<shimgen::Scalar>()" if p.name == rule["none"] else
                         literal(fixed[p.name]) if p.name in fixed else rule["args"][p.name] for p in target.params)
        lines.append(f"return torch::stable::{target.name}({args});")
        return "\n".join(lines)


register(NumberAsNone())
