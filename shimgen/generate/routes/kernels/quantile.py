"""Kernel `quantile` (quantile.default, quantile.scalar, nanquantile.default, nanquantile.scalar below target 2.14, in a
build that did not accept the str leak): aten's CompositeImplicitAutograd quantile with an interpolation string as
libtorch 2.9-2.13 compute it (Sorting.cpp quantile_checks, quantile_compute: a sort, ranks in the input's dtype, two
gathers and a lerp), by the same dispatching calls in the same order, each by its wrapper (the row's `calls`, by
role; kernels/quantile.h names them unqualified, found by argument-dependent lookup where the wrapper instantiates
it). The string is compared in C++, so no `str` crosses the ABI and nothing leaks on libtorch 2.10-2.13. Because
aten computes quantile as these calls on every device, the result is aten's there, gradients included.

libtorch 2.14 changed the computation (ranks in float64, and on CPU a selection without a sort), so the wrapper
asks the running release (shimgen::detail::running_release) and from 2.14 takes the dispatcher's guarded form:
aten's own op, whose str no longer leaks. Row keys: `argument` (the str), `ignore_nan` (nanquantile), and for a
number q (`.scalar`) the call `number` that makes it a tensor of the input's dtype and device
(aten::scalar_tensor), after aten's range check."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (callees, guarded_body, guarded_calls_at, leak_free_release,
                                                    proven)

# role -> how many leading parameters the body passes that role's wrapper
QUANTILE_PASSED = {"at_least": 2, "at_most": 2, "both": 2, "every": 1, "flat": 3, "sorted": 3, "grow": 2, "swap": 3,
                   "viewed": 2, "nan": 1, "negated": 1, "count": 3, "count_less_one": 2, "product": 2, "scaled": 2,
                   "below_zero": 2, "clamp_zero": 3, "nan_row": 3, "broadcast": 1, "pin_last": 3, "round_down": 1,
                   "round_up": 1, "round_near": 1, "cast": 2, "gathered": 3, "half": 2, "weight": 2, "interpolate": 3,
                   "drop": 2, "grow_": 2, "swap_": 3, "number": 4}


class Quantile(Kernel):
    name = "quantile"
    prover = "prove_quantile"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Where the dispatcher's form is guarded for the interpolation string (a build without SHIMGEN_LEAKY_STR, a
        target below 2.14) and every call has a libtorch route: kernels.common.guarded_calls_at."""
        return guarded_calls_at(route, q, rule, QUANTILE_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        what = w.op.name.partition(".")[0]
        number = (" (a number q checked as aten checks it, then aten::scalar_tensor of the input's dtype and device)"
                  if "number" in rule["calls"] else "")
        return [f"Route: on a running libtorch before 2.14, aten's {what} as libtorch 2.9-2.13 compute it{number}: "
                "aten's checks, q's range on a CPU tensor, a sort of the input with the reduced dimension last, "
                "ranks in its dtype rounded as the interpolation asks, two gathers and a lerp, by the same "
                "dispatching calls in the same order, on any device; no str crosses the ABI (proven equal, gradients "
                f"included, on torch {proven(rule)}).",
                "On libtorch 2.14 and later the boxed dispatcher: aten's own op, whose str no longer leaks."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        arg = rule["argument"]
        op = w.op.name
        q = "q"
        number = []
        if "number" in rule["calls"]:
            f = callees(rule, plan)
            q = "number"
            number = [f'shimgen::detail::quantile_number("{op}", q);',
                      f"const torch::stable::Tensor number = {f['number']}(q, self.scalar_type(), std::nullopt, "
                      "self.device());"]
        ignore_nan = "true" if rule.get("ignore_nan") else "false"
        return "\n".join([f"const bool leaks = shimgen::detail::running_release() < {leak_free_release(v)};",
                          "if (leaks) {",
                          *number,
                          f'return shimgen::detail::quantile_compute("{op}", self, {q}, dim, keepdim, {arg}, '
                          f"{ignore_nan});",
                          "}",
                          guarded_body(w, v, plan, arg)])


register(Quantile())
