"""Elementwise kernels of aten computed as the dispatching aten calls that compute what they compute, carrying
only tensors: `threshold` (threshold_backward: aten's threshold kernel, `self <= threshold ? 0 : grad_output` over
the common dtype, which shimgen::detail::threshold_select computes with aten::le.Tensor, aten::where.self and
aten::_to_copy), `leaky_relu`, `clamp` (hardtanh), `hardshrink` and `scatter_fill` (scatter.value) are kernels of
the same kind (scalar.h <kernel>_select). A row names the kernel's arguments in the order of its parameters: the
overload's arguments, or numbers. The numbers become 0-dim tensors of the dtype aten computes them in; one out of
that dtype's range (where aten raises) is refused with a `shimgen:` error, never computed.

`softshrink`, `shrink_grad` (hardshrink_backward, softshrink_backward: aten's shrink_backward) and
`hardtanh_backward` are elementwise kernels of the same kind (scalar.h softshrink_select, shrink_grad_select,
hardtanh_backward_select). softshrink subtracts: its row names `via` (sub.Tensor), whose wrapper the kernel calls
(scalar.h softshrink_operands), so it routes where that wrapper has a libtorch route. The backward kernels refuse a
NaN self (aten's answer there depends on the element's position in its vectorized loop)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import carried_at, proven, select_args


class Select(Kernel):
    """scalar.h's <name>_select on the row's arguments (with `via`: <name>_operands and `via`'s wrapper).
    `mirror`: the worker's Python mirror of the select; `prover`: its hook (prove_kernel for the first kind,
    prove_select for the backward kind, whose samples leave NaN out); `nan_gradient`: aten's backward at a NaN input
    depends on the element's position, so gradients are compared where the input is not NaN."""

    def __init__(self, name: str, prover: str = "prove_kernel", mirror: str = "", nan_gradient: bool = False):
        self.name, self.prover, self.nan_gradient = name, prover, nan_gradient
        self.mirror = mirror or f"{name}_select"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return carried_at(route, q, rule)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        if "via" in rule:  # softshrink: its subtractions by `via`'s wrapper
            return [f"Route: aten's {self.name} kernel as the dispatching aten calls that compute it, its "
                    f"subtractions by aten::{rule['via']} (shimgen::detail::{self.name}_select; proven equal, "
                    f"gradients included, on torch {proven(rule)}).",
                    "A number out of the range of the dtype aten computes it in raises an error (shimgen::Scalar)."] + (
                        [rule["caveat"]] if "caveat" in rule else [])
        return [f"Route: aten's {self.name} kernel as the dispatching aten calls that compute it "
                f"(shimgen::detail::{self.name}_select; proven equal, gradients included, on torch "
                f"{proven(rule)}).",
                "A number out of the range of the dtype aten computes it in raises an error (shimgen::Scalar)."] + (
                    [rule["caveat"]] if "caveat" in rule else [])  # what the proof leaves out, and why

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        args = select_args(rule)
        if "via" in rule:  # softshrink: its operands, its two subtractions by `via`'s wrapper (sub.Tensor), the select
            target = plan.wrapper_of(rule["via"])
            assert target is not None
            sub = f"torch::stable::{target.name}"
            return "\n".join([
                f'const auto s = shimgen::detail::{self.name}_operands("{w.op.name}", {", ".join(args)});',
                f'return shimgen::detail::{self.name}_select(s, {sub}(s.x, s.hi), {sub}(s.x, s.lo));'])
        return f'return shimgen::detail::{self.name}_select("{w.op.name}", {", ".join(args)});'

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "mirror": self.mirror, "nan_gradient": self.nan_gradient}


register(Select("threshold"), Select("leaky_relu"), Select("clamp", nan_gradient=True),
         Select("hardshrink", nan_gradient=True), Select("scatter_fill", prover="prove_scatter_fill"),
         Select("softshrink", prover="prove_select", nan_gradient=True),
         Select("shrink_grad", prover="prove_select"), Select("hardtanh_backward", prover="prove_select"))
