"""Kernel `einsum` (einsum.default): aten's CompositeImplicitAutograd einsum (Linear.cpp: einsum, sumproduct_pair) as
the same dispatching calls in the same order, each by its wrapper (the row's `calls`, by role: `diagonals`, `moved`,
`aligned`, `permuted`, `summed`, `product`, `flat`, `batched`, `viewed`: kernels/einsum.h names them unqualified,
found by argument-dependent lookup where the wrapper instantiates it). The equation is parsed in C++
with aten's checks in its words (kernels/einsum.h einsum_compute), so no `str` crosses the ABI and nothing leaks on
libtorch 2.10-2.13; from 2.14 the dispatcher carries the op itself and wins. Because aten computes einsum as these
calls on every device, autograd, autocast and dispatch modes see the calls aten's own einsum makes."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import calls_at, proven

# role -> how many leading parameters the body passes that role's wrapper
EINSUM_PASSED = {"diagonals": 4, "moved": 3, "aligned": 2, "permuted": 2, "summed": 3, "product": 2, "flat": 2,
                 "batched": 2, "viewed": 2}

class Einsum(Kernel):
    name = "einsum"
    prover = "prove_einsum"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, EINSUM_PASSED)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """kernels/einsum.h einsum_compute on the operands and the path: it names the calls' wrappers
        unqualified on torch::stable::Tensor (found by argument-dependent lookup where it is instantiated here, after
        this header included them: the row's `calls`)."""
        return "return shimgen::detail::einsum_compute(equation, tensors, path.as_optional());"

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: aten computes aten::einsum as dispatching calls (Linear.cpp: diagonals for repeated labels, "
                "unsqueeze and permute to align the operands, sums of dimensions one operand has, then per pair "
                "permute, reshape, bmm, view and permute, or mul where nothing is summed); so does this wrapper, by "
                "the same calls in the same order, parsing the equation here with aten's checks in its words (proven "
                f"equal, gradients included, on torch {proven(rule)})."]


register(Einsum())
