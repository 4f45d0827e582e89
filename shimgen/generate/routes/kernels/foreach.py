"""Kernel `foreach` (a _foreach_ op): aten's CPU kernel (its slow path), `via` on each element in order, after
aten's checks (a non-empty list, lists of one length, a Tensor beside the lists 0-dim)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import CARRIED, LISTS, backward_refusal, backward_refusal_doc, proven


class Foreach(Kernel):
    name = "foreach"
    prover = "prove_foreach"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes the ones it is given with libtorch alone at q.level."""
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay:
            return None
        theirs = [p.name for p in target.kept(tv)]  # type: ignore[union-attr]
        if not set(rule["args"]) <= set(theirs) or {p.name for p in q.params} != set(rule["args"].values()):
            return None
        if any(str(p.arg.type).rstrip("?") not in CARRIED | LISTS for p in q.params):
            return None
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} on each element in order, as aten's CPU kernel for "
                f"aten::{w.op.name} does (proven equal, gradients included, on torch "
                f"{proven(rule)})."] + backward_refusal_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """aten's checks (a non-empty list, lists of one length), then `via`'s wrapper on each element in order."""
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        lists = {p.name for p in w.kept(v) if str(p.arg.type).rstrip("?") in LISTS}
        by_via = {va: fa for va, fa in rule["args"].items()}
        last = max(i for i, p in enumerate(target.params) if p.name in by_via)
        args = [f"{by_via[p.name]}[i]" if by_via[p.name] in lists else by_via[p.name]
                for p in target.params[: last + 1]]
        lines = [f'if (self.size() == 0) {{\nshimgen::detail::fail("{w.op.name}", "Tensor list must have at least '
                 'one tensor (aten raises)");\n}']
        for p in w.kept(v):  # a Tensor beside the lists stands for a number: aten requires it 0-dim
            if str(p.arg.type) == "Tensor":
                lines.append(f'if ({p.name}.dim() != 0) {{\nshimgen::detail::fail("{w.op.name}", "`{p.name}` must '
                             'be a 0-dim tensor (aten raises)");\n}')
        for name in sorted(lists - {"self"}):
            lines.append(f'if ({name}.size() != self.size()) {{\nshimgen::detail::fail("{w.op.name}", "`{name}` '
                         f'must have as many elements as `self` (aten raises)");\n}}')
        lines += backward_refusal(w, rule, each=True)
        lines.append(f"for (size_t i = 0; i < self.size(); ++i) {{\n{target.name}({', '.join(args)});\n}}")
        return "\n".join(lines)


register(Foreach())
