"""Kernel `matrix_norm_two` (linalg_matrix_norm.default; its out= is kernel `out`): aten's CompositeImplicitAutograd
linalg_matrix_norm with a number ord (LinearAlgebra.cpp) for ord = 2 and -2, as the same dispatching calls in the
same order, each by its wrapper (the row's `calls`: the op of each role below): aten's checks first (scalar.h
matrix_norm_dims: complex ord, the order, A's dims and dtype, dim, dtype=), then `max_min(linalg_svdvals((dtype ?
A.to(dtype) : A).permute(backshift)), -1)` and, with keepdim, `.unsqueeze(-1).permute(reverse)`. aten computes ord
1, -1, inf and -inf with linalg_vector_norm's ord 1, which no libtorch route carries: matrix_norm_dims refuses them
naming the remedy."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (callees, calls_at, guarded_body, guarded_calls_at,
                                                    leak_free_release, proven)

# role -> how many leading parameters the body passes that role's wrapper
MATRIX_NORM_PASSED = {"cast": 2, "order": 2, "spectrum": 1, "most": 3, "least": 3, "grow": 2}


def _matrix_norm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = callees(rule, plan)
    return "\n".join([
        f'const std::vector<int64_t> dims = shimgen::detail::matrix_norm_dims("{w.op.name}", self, ord, dim, dtype);',
        "const std::vector<int64_t> order = shimgen::detail::backshift_permutation(dims[0], dims[1], self.dim());",
        "torch::stable::Tensor A = self;",
        "if (dtype.has_value()) {",
        f"A = {f['cast']}(self, dtype.value());",
        "}",
        f"const torch::stable::Tensor values = {f['spectrum']}({f['order']}(A, order));",
        "torch::stable::Tensor result = values;",
        "if (ord.to_double() > 0) {",
        f"result = {f['most']}(values, {{-1}}, keepdim);",
        "} else {",
        f"result = {f['least']}(values, {{-1}}, keepdim);",
        "}",
        "if (keepdim) {",
        f"result = {f['order']}({f['grow']}(result, -1), shimgen::detail::reverse_permutation(order));",
        "}",
        "return result;"])


def _matrix_norm_doc(rule: dict) -> list[str]:
    return ["Route: for ord = 2 or -2 aten computes the largest or smallest singular value, "
            "amax / amin(linalg_svdvals(A.permute(dim last)), -1), after its checks; so does this wrapper, by the "
            "same dispatching calls (proven equal, gradients included, on torch "
            f"{', '.join(map(str, rule['proven']))}).",
            "ord 1, -1, inf and -inf raise an error naming the remedy: aten computes them with "
            "linalg_vector_norm's ord 1, which no libtorch route carries."]


class MatrixNormTwo(Kernel):
    name = "matrix_norm_two"
    prover = "prove_matrix_norm"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, # role -> how many leading parameters the body passes that role's wrapper
MATRIX_NORM_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _matrix_norm_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _matrix_norm_body(w, plan, rule)


register(MatrixNormTwo())


# ---- kernel `matrix_norm_str` (linalg_matrix_norm.str_ord, linalg_norm.ord_str below target 2.14, in a build that did
# not accept the str leak): aten's CompositeImplicitAutograd linalg_matrix_norm with an ord string as the same calls
# (LinearAlgebra.cpp): "fro" is linalg_vector_norm with ord 2 over the two dims (role `vector`: linalg_norm with ord
# None, which is that, and whose header includes no other of these), "nuc" the sum of the singular values (`cast`
# where dtype= is given, `order`, `spectrum`, `summed`, and with keepdim `grow` and `order` back). linalg_norm with an
# ord string (row key `norm_checks`) is its own checks, then the same (aten calls linalg_matrix_norm). The string
# is compared in C++ (kernels/matrix_norm_str.h), so no `str` crosses the ABI on libtorch 2.10-2.13; from 2.14 the
# wrapper takes the dispatcher's guarded form, aten's own op, whose str no longer leaks. ----

MATRIX_NORM_STR_PASSED = {"vector": 5, "cast": 2, "order": 2, "spectrum": 1, "summed": 3, "grow": 2}


def _matrix_norm_str_body(w: Wrapper, plan: Plan, rule: dict) -> list[str]:
    f = callees(rule, plan)
    op = w.op.name
    dims = rule["params"][2]  # the op's dim
    norm = []
    if rule.get("norm_checks"):  # linalg_norm: its checks, then linalg_matrix_norm's
        norm = [f'const std::vector<int64_t> norm_dims = shimgen::detail::linalg_norm_str_dims("{op}", self, {dims});']
        dims = "norm_dims"
    return [*norm,
            f'const std::vector<int64_t> dims = shimgen::detail::matrix_norm_str_dims("{op}", self, ord, {dims}, '
            "dtype);",
            'if (ord == "fro") {',
            "return shimgen::detail::matrix_norm_fro(self, dims, keepdim, dtype);",
            "}",
            "const std::vector<int64_t> order = shimgen::detail::backshift_permutation(dims[0], dims[1], self.dim());",
            "torch::stable::Tensor A = self;",
            "if (dtype.has_value()) {",
            f"A = {f['cast']}(self, dtype.value());",
            "}",
            f"const torch::stable::Tensor values = {f['spectrum']}({f['order']}(A, order));",
            f"torch::stable::Tensor result = {f['summed']}(values, {{-1}}, keepdim);",
            "if (keepdim) {",
            f"result = {f['order']}({f['grow']}(result, -1), shimgen::detail::reverse_permutation(order));",
            "}",
            "return result;"]


class MatrixNormStr(Kernel):
    name = "matrix_norm_str"
    prover = "prove_matrix_norm_str"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return guarded_calls_at(route, q, rule, MATRIX_NORM_STR_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        what = "linalg_norm's checks, then linalg_matrix_norm's: " if rule.get("norm_checks") else ""
        return [f"Route: on a running libtorch before 2.14, {what}\"fro\" as aten computes it, linalg_vector_norm with "
                "ord 2 over the two dims, and \"nuc\" as the sum of linalg_svdvals(A.permute(the two dims last)), "
                "after aten's checks, by the same dispatching calls, on any device; no str crosses the ABI (proven "
                f"equal, gradients included, on torch {proven(rule)}).",
                "On libtorch 2.14 and later the boxed dispatcher: aten's own op, whose str no longer leaks."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return "\n".join([f"const bool leaks = shimgen::detail::running_release() < {leak_free_release(v)};",
                          "if (leaks) {",
                          *_matrix_norm_str_body(w, plan, rule),
                          "}",
                          guarded_body(w, v, plan, rule["argument"])])


register(MatrixNormStr())
