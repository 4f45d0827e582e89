"""Kernel `celu` (celu.default, celu_.default): aten's CompositeExplicitAutograd function is elu (elu_) with alpha,
scale 1.0 and input_scale 1 / alpha in double, after its check that alpha is not 0; so is this wrapper, by elu's
wrapper (the row's `calls`: `base`). elu's own refusals stand: at target 2.10 it is aten's CPU kernel replicated
(kernel cpu_activation), which computes where autograd does not record the call, so celu's derivative (whose
input_scale is 1 / float(alpha), not elu's) is never the composition's."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at

CELU_PASSED = {"base": 4}  # role -> how many leading parameters the body passes that role's wrapper


class Celu(Kernel):
    name = "celu"
    prover = "prove_celu"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, CELU_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten computes it as aten::{rule['calls']['base']}(self, alpha, 1.0, 1.0 / alpha) after "
                f"checking that alpha is not 0; so does this wrapper, by elu's wrapper (proven equal on torch "
                f"{', '.join(map(str, rule['proven']))}).",
                "elu's refusals stand (at target 2.10: aten's CPU kernel, where autograd does not record the "
                "call), each an error naming the remedy."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        f = callees(rule, plan)
        self_, alpha = rule["params"]
        return "\n".join([
            f"if (!({alpha}.to_double() != 0)) {{",
            f'shimgen::detail::fail("{w.op.name}", "ZeroDivisionError: alpha cannot be 0 for CELU (aten raises)");',
            "}",
            f"return {f['base']}({self_}, {alpha}, 1.0, 1.0 / {alpha}.to_double());"])


register(Celu())
