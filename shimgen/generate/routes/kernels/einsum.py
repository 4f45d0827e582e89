"""Kernel `einsum` (einsum.default): aten's CompositeImplicitAutograd einsum (Linear.cpp: einsum, sumproduct_pair) as
the same dispatching calls in the same order, each by its wrapper (the row's `calls`, by role: `diagonal`, `movedim`,
`unsqueeze`, `permute`, `sum` (sum.dim_IntList), `mul`, `reshape`, `bmm`, `view`). The equation is parsed in C++
with aten's checks in its words (kernels/einsum.h einsum_compute), so no `str` crosses the ABI and nothing leaks on
libtorch 2.10-2.13; from 2.14 the dispatcher carries the op itself and wins. Because aten computes einsum as these
calls on every device, autograd, autocast and dispatch modes see the calls aten's own einsum makes."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at, proven

# role -> how many leading parameters the body passes that role's wrapper
EINSUM_PASSED = {"diagonal": 4, "movedim": 3, "unsqueeze": 2, "permute": 2, "sum": 3, "mul": 2, "reshape": 2,
                 "bmm": 2, "view": 2}

# role -> (the C++ parameters of the static function Calls gives einsum_compute, the arguments it passes on)
EINSUM_CALLS = {
    "diagonal": ("const torch::stable::Tensor& t, int64_t offset, int64_t a, int64_t b", "t, offset, a, b"),
    "movedim": ("const torch::stable::Tensor& t, int64_t from, int64_t to", "t, from, to"),
    "unsqueeze": ("const torch::stable::Tensor& t, int64_t dim", "t, dim"),
    "permute": ("const torch::stable::Tensor& t, const std::vector<int64_t>& dims", "t, dims"),
    "sum": ("const torch::stable::Tensor& t, const std::vector<int64_t>& dims, bool keepdim",
            "t, torch::headeronly::IntHeaderOnlyArrayRef(dims), keepdim"),
    "mul": ("const torch::stable::Tensor& a, const torch::stable::Tensor& b", "a, b"),
    "reshape": ("const torch::stable::Tensor& t, const std::vector<int64_t>& sizes", "t, sizes"),
    "bmm": ("const torch::stable::Tensor& a, const torch::stable::Tensor& b", "a, b"),
    "view": ("const torch::stable::Tensor& t, const std::vector<int64_t>& sizes", "t, sizes"),
}


class Einsum(Kernel):
    name = "einsum"
    prover = "prove_einsum"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, EINSUM_PASSED)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        f = callees(rule, plan)
        lines = ["struct Calls {"]
        for role, (params, args) in EINSUM_CALLS.items():
            lines += [f"static torch::stable::Tensor {role}({params}) {{", f"return {f[role]}({args});", "}"]
        lines += ["};",
                  "const std::vector<torch::stable::Tensor> operands(tensors.begin(), tensors.end());",
                  "std::optional<std::vector<int64_t>> order;",
                  "if (path.has_value()) {",
                  "order = std::vector<int64_t>(path->begin(), path->end());",
                  "}",
                  "return shimgen::detail::einsum_compute<Calls>(equation, operands, order);"]
        return "\n".join(lines)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: aten computes aten::einsum as dispatching calls (Linear.cpp: diagonals for repeated labels, "
                "unsqueeze and permute to align the operands, sums of dimensions one operand has, then per pair "
                "permute, reshape, bmm, view and permute, or mul where nothing is summed); so does this wrapper, by "
                "the same calls in the same order, parsing the equation here with aten's checks in its words (proven "
                f"equal, gradients included, on torch {proven(rule)})."]


register(Einsum())
