"""Kernel `none_value` (norm.ScalarOpt_dim): an op whose `Scalar?` number (`argument`) the boxed dispatcher carries
only as None, where aten reads None as one value (`value`: norm's p None is p = 2, forward and backward, as
`value_or(2.0)`): None and that value go to the dispatcher as None (aten's own op, any device, autograd); another
value goes to the row's `otherwise`, a kernel section's helper that computes what it can as aten's CPU kernel and
refuses the rest (called with the op's name, the number's name and the op's parameters, the number given);
`otherwise_doc` says in the wrapper's comment what it computes."""

from __future__ import annotations

import dataclasses

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route, boxed
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import number_is, overlay_shim_serves, proven


class NoneValue(Kernel):
    name = "none_value"
    prover = "prove_none_value"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The dispatcher's variant at q.level with every parameter, the number alone carried only as None and no
        leak guard, as this route's; none where the overlay's C shim serves the op (it carries every value, so this
        kernel, which computes only some, gives way: the overlay only adds forms)."""
        if overlay_shim_serves(q):
            return None
        v = boxed().variant_at(q, none_only=True)  # type: ignore[call-arg]
        if v is None or v.kept < len(q.params) or v.none_only != (rule["argument"],) or v.guard or v.guard_from:
            return None
        return Variant(route, v.kept, q.level, stack=v.stack, lowering=v.lowering)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        a = rule["argument"]
        return [f"Route: the boxed dispatcher, {a} None or {rule['value']} pushed as None, which aten reads as "
                f"{rule['value']} (proven equal, gradients included, on torch {proven(rule)}).",
                f"Another {a}: shimgen::detail::{rule['otherwise']} computes aten's CPU kernel for "
                f"{rule['otherwise_doc']}; any other call raises an error (no libtorch route carries it)."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """Another value to `otherwise`, then the dispatcher's call with the number pushed as None."""
        a, value = rule["argument"], rule["value"]
        args = ", ".join(f"*{p.name}" if p.name == a else p.name for p in w.params)
        lines = [f"if ({a}.has_value()) {{", f"if (!({number_is(f'{a}->', value)})) {{",
                 f'return shimgen::detail::{rule["otherwise"]}("{w.op.name}", "{a}", {args});', "}", "}"]
        pushed = dataclasses.replace(v, none_only=(a,))  # the number pushed as None
        return "\n".join([*lines, boxed().call(w, pushed, plan)])  # type: ignore[attr-defined]

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover}


register(NoneValue())
