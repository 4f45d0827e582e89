"""Kernel `subcmul` (_test_serialization_subcmul.default): aten's CompositeImplicitAutograd function is `self - (other
* alpha)`, which is aten::mul.Scalar(other, alpha), then aten::sub.Tensor(self, product) with its default alpha; so
is this wrapper, each call by its wrapper (the row's `calls`: `times`, `minus`), so any number mul's wrapper refuses
is refused here, with its error."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at

SUBCMUL_PASSED = {"times": 2, "minus": 2}  # role -> how many leading parameters the body passes that role's wrapper


def _subcmul_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = callees(rule, plan)
    self_, other, alpha = rule["params"]
    return "\n".join([f"const torch::stable::Tensor product = {f['times']}({other}, {alpha});",
                      f"return {f['minus']}({self_}, product);"])


def _subcmul_doc(rule: dict) -> list[str]:
    calls = rule["calls"]
    return [f"Route: aten computes it as self - (other * alpha): aten::{calls['times']}(other, alpha), then "
            f"aten::{calls['minus']}(self, product); so does this wrapper, by their wrappers (proven equal, "
            f"gradients included, on torch {', '.join(map(str, rule['proven']))}).",
            "Where alpha has no exact libtorch route for other's dtype, mul's wrapper raises an error naming the "
            "remedy."]


class Subcmul(Kernel):
    name = "subcmul"
    prover = "prove_subcmul"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, SUBCMUL_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _subcmul_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _subcmul_body(w, plan, rule)


register(Subcmul())
