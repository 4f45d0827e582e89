"""Kernel `elu_grad` (elu_backward.default; its out= is kernel `out`): aten's elu_backward kernel with is_result=true,
`x <= 0 ? grad * input_scale * (x + alpha * scale) : grad * scale`, as scalar.h's elu_grad_operands /
elu_grad_select, its one addition by `via` (sub.Tensor: x - (-(alpha * scale))), so it routes where that wrapper has
a libtorch route (common.carried_at, the elementwise kernels' rule). is_result=false (exp, computed by aten's
vectorized body and scalar tail in two ways), a call autograd records (aten's derivative is elu_double_backward) and
a NaN self_or_result are refused."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import carried_at


def _elu_grad_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    target = plan.wrapper_of(rule["via"])
    assert target is not None
    args = ", ".join(("true" if a else "false") if isinstance(a, bool) else str(a) for a in rule["args"])
    return "\n".join([
        f'const auto s = shimgen::detail::elu_grad_operands("{w.op.name}", {args});',
        f"return shimgen::detail::elu_grad_select(s, torch::stable::{target.name}(s.x, s.minus_negcoef));"])


def _elu_grad_doc(rule: dict) -> list[str]:
    return [f"Route: aten's elu_backward kernel with is_result=true as the dispatching aten calls that compute it, "
            f"its addition by aten::{rule['via']} (shimgen::detail::elu_grad_select; proven equal, where autograd "
            f"does not record the call, on torch {', '.join(map(str, rule['proven']))}).",
            "is_result=false (aten's kernel computes exp one way in its vectorized body and another in its scalar "
            "tail), a call autograd records (grad mode, an input requiring grad: aten's derivative is "
            "elu_double_backward), a NaN in self_or_result (aten's answer depends on the element's position in its "
            "vectorized loop) and a number out of the range of the dtype aten computes in raise an error naming the "
            "remedy."]


class EluGrad(Kernel):
    name = "elu_grad"
    prover = "prove_elu_backward"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return carried_at(route, q, rule)  # its `via` (add.Tensor, sub.Tensor) where it has a libtorch route

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _elu_grad_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _elu_grad_body(w, plan, rule)


register(EluGrad())
