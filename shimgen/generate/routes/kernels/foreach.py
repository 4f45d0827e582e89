"""Kernel `foreach` (a _foreach_ op): aten's CPU kernel (its slow path), `via` on each element in order, after
aten's checks (a non-empty list, lists of one length, a Tensor beside the lists 0-dim); `fixed` gives via's
parameters the op lacks the values aten's kernel passes (`_foreach_norm`: no dim, keepdim false). An in-place op's `via` is
in place (`add_.Tensor`); a functional op's is functional (`add.Tensor`), its results returned in order, as aten's
slow path collects them. A tensor not on the CPU is refused by name (kernels/foreach.h foreach_on_cpu): aten's
CUDA foreach kernels are fused multi-tensor ones, which the composition is not proven equal to.

No row serves the functional `_foreach_maximum`/`_foreach_minimum` with a number: aten computes them as clamp_min
and clamp_max do, but its derivative gives half the gradient at a tie where clamp_min's gives it whole, and the
overlay has no C shim for a Tensor[] result to name as the remedy of a refusal."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (CARRIED, LISTS, backward_refusal, backward_refusal_doc, literal,
                                                     proven)


FORWARDED = {"ScalarType"}  # handed to via's wrapper as it is (_foreach_norm's dtype)


class Foreach(Kernel):
    name = "foreach"
    prover = "prove_foreach"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes the ones it is given with libtorch alone at q.level."""
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or (tv.route.overlay and not q.plan.world.overlay):  # the overlay's build links its shims
            return None
        theirs = [p.name for p in target.kept(tv)]  # type: ignore[union-attr]
        if not set(rule["args"]) <= set(theirs) or {p.name for p in q.params} != set(rule["args"].values()):
            return None
        if any(str(p.arg.type).rstrip("?") not in CARRIED | LISTS | FORWARDED for p in q.params):
            return None
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} on each element in order, as aten's CPU kernel for "
                f"aten::{w.op.name} does (proven equal, gradients included, on torch "
                f"{proven(rule)}), on CPU tensors: a tensor on another device raises an error naming "
                f"aten::{rule['via']} (aten's CUDA foreach kernels are fused ones, not proven equal to it)."] + \
            backward_refusal_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """aten's checks (a non-empty list, lists of one length), then `via`'s wrapper on each element in order."""
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        lists = [p.name for p in w.kept(v) if str(p.arg.type).rstrip("?") in LISTS]
        first = next(p.name for p in w.kept(v) if str(p.arg.type).rstrip("?") == "Tensor[]")  # aten checks this one
        by_via = {va: fa for va, fa in rule["args"].items()}
        last = max(i for i, p in enumerate(target.params) if p.name in by_via)
        fixed = rule.get("fixed", {})  # via's parameters the op does not have (_foreach_norm: dim None, keepdim)
        args = [("std::nullopt" if fixed[p.name] is None else literal(fixed[p.name])) if p.name in fixed
                else f"{by_via[p.name]}[i]" if by_via[p.name] in lists else by_via[p.name]
                for p in target.params[: last + 1]]
        lines = [f'if ({first}.size() == 0) {{\nshimgen::detail::fail("{w.op.name}", "Tensor list must have at least '
                 'one tensor (aten raises)");\n}']
        for p in w.kept(v):  # a Tensor beside the lists stands for a number: aten requires it 0-dim
            if str(p.arg.type) == "Tensor":
                lines.append(f'if ({p.name}.dim() != 0) {{\nshimgen::detail::fail("{w.op.name}", "`{p.name}` must '
                             'be a 0-dim tensor (aten raises)");\n}')
        for name in sorted(set(lists) - {first}):
            lines.append(f'if ({name}.size() != {first}.size()) {{\nshimgen::detail::fail("{w.op.name}", "`{name}` '
                         f'must have as many elements as `{first}` (aten raises)");\n}}')
        tensors = [p.name if str(p.arg.type) == "Tensor[]" else f"{{{p.name}}}" for p in w.kept(v)
                   if str(p.arg.type) in ("Tensor[]", "Tensor")]  # on the CPU, where it is proven
        lines += [f'shimgen::detail::foreach_on_cpu("{w.op.name}", {t}, "{target.name}");' for t in tensors]
        lines += backward_refusal(w, rule, each=True)
        call = f"{target.name}({', '.join(args)})"
        if w.returns == "void":
            lines.append(f"for (size_t i = 0; i < self.size(); ++i) {{\n{call};\n}}")
            return "\n".join(lines)
        lines.append(f"{w.returns} result;\nresult.reserve({first}.size());")
        lines.append(f"for (size_t i = 0; i < {first}.size(); ++i) {{\nresult.push_back({call});\n}}")
        lines.append("return result;")
        return "\n".join(lines)


register(Foreach())
