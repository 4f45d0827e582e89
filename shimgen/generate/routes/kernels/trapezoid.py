"""Kernels `trapezoid_dx` / `cumulative_trapezoid_dx` (trapezoid.dx, cumulative_trapezoid.dx): aten's
CompositeImplicitAutograd functions (Integration.cpp) as the same dispatching calls in the same order, each by its
wrapper (the row's `calls`: the op of each role below): aten's checks first (scalar.h trapezoid_check; trapezoid
returns zeros of y's options for an empty dim before them, sizes_except), then
`(y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx` and
`(dx / 2. * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim)`, the Scalar dx taken as aten takes it
(dx.toDouble()) and each product by mul.Scalar's wrapper, as aten multiplies a tensor by a double."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at, proven

# role -> how many leading parameters the body passes that role's wrapper
TRAPEZOID_PASSED = {"pick": 3, "plus": 2, "minus": 2, "times": 2, "total": 2, "blank": 2, "part": 4, "scan": 2}


class Trapezoid(Kernel):
    """`cumulative`: cumulative_trapezoid's running sum, else trapezoid's total."""

    prover = "prove_trapezoid"

    def __init__(self, name: str, cumulative: bool):
        self.name, self.cumulative = name, cumulative

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, TRAPEZOID_PASSED)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        f = callees(rule, plan)
        op, name = w.op.name, w.op.name.split(".")[0]
        times = f["times"]
        if not self.cumulative:
            return "\n".join([
                "// aten: zeros of y's options for an empty dim, before its checks",
                "if (y.size(dim) == 0) {",
                f"return {f['blank']}(y, shimgen::detail::sizes_except(y, dim));",
                "}",
                f'shimgen::detail::trapezoid_check("{op}", "{name}", y, dx);',
                f"const torch::stable::Tensor ends = {f['plus']}({f['pick']}(y, dim, 0), {f['pick']}(y, dim, -1));",
                f"const torch::stable::Tensor middle = {f['minus']}({f['total']}(y, {{dim}}), "
                f"{times}(ends, shimgen::Scalar(0.5)));",
                f"return {times}(middle, shimgen::Scalar(dx.to_double()));"])
        return "\n".join([
            f'shimgen::detail::trapezoid_check("{op}", "{name}", y, dx);',
            f"const torch::stable::Tensor left = {f['part']}(y, dim, 0, -1);",
            f"const torch::stable::Tensor right = {f['part']}(y, dim, 1);",
            f"const torch::stable::Tensor scaled = {times}({f['plus']}(left, right), "
            "shimgen::Scalar(dx.to_double() / 2.));",
            f"return {f['scan']}(scaled, dim);"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        how = ("(dx / 2. * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim)" if self.cumulative else
               "(y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx, with zeros for an empty dim")
        return [f"Route: aten computes aten::{w.op.name} as {how}, dx as a double; so does this wrapper, by the same "
                f"dispatching calls (proven equal, gradients included, on torch {proven(rule)}).",
                "Where a product's number has no exact libtorch route for the tensor's dtype, mul's wrapper raises an "
                "error naming the remedy."]

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "cumulative": self.cumulative}


register(Trapezoid("trapezoid_dx", cumulative=False), Trapezoid("cumulative_trapezoid_dx", cumulative=True))
