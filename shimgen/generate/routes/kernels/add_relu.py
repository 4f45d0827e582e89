"""Kernel `add_relu` (_add_relu.Tensor; its out=, in-place and Scalar forms are rows of `out`, `inplace` and
`wrapped_numbers` over it): aten's add_relu with alpha 1, `min(max(self + other, 0), largest of self's dtype)`, as
scalar.h's add_relu_operands / add_relu_select around `via` (add.Tensor's wrapper, with alpha 1 of the common
dtype's kind); another alpha (a fused multiply-add in aten's vectorized body), a call autograd records (aten has no
derivative) and a floating sum holding NaN or -0.0 (answered by position) are refused."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import carried_at


def _add_relu_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    target = plan.wrapper_of(rule["via"])
    assert target is not None
    args = ", ".join(str(a) for a in rule["args"])
    return "\n".join([
        f'const auto s = shimgen::detail::add_relu_operands("{w.op.name}", {args});',
        f'return shimgen::detail::add_relu_select("{w.op.name}", s, torch::stable::{target.name}(self, other, s.one));'])


def _add_relu_doc(rule: dict) -> list[str]:
    return [f"Route: aten's add_relu kernel with alpha 1, clamp(self + other, 0, the largest value of self's dtype), "
            f"as aten::{rule['via']} (its wrapper) and aten::clamp.Tensor (shimgen::detail::add_relu_select; proven "
            f"equal, where autograd does not record the call, on torch {', '.join(map(str, rule['proven']))}).",
            "Another alpha (aten's vectorized body computes a fused multiply-add), a call autograd records (aten has "
            "no derivative for it) and a floating self + other holding a NaN or -0.0 (aten's answer depends on the "
            "element's position in its vectorized loop) raise an error naming the remedy."]


class AddRelu(Kernel):
    name = "add_relu"
    prover = "prove_add_relu"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return carried_at(route, q, rule)  # its `via` (add.Tensor, sub.Tensor) where it has a libtorch route

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _add_relu_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _add_relu_body(w, plan, rule)


register(AddRelu())
