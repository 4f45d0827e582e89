"""Kernel `renorm_two` (renorm.default): aten's structured renorm (Normalization.cpp renorm_out) for p = 2, as the
calls its kernel makes, each by its wrapper (the row's `calls`): aten's checks first, then this route's refusals
(scalar.h renorm_dims: another p, more than 3 dims, a dtype aten raises for or not proven, a call autograd records:
renorm's derivative is its own); `norm = linalg_vector_norm(self, p, every dim but dim, true, float for half /
bfloat16)`, its scale factor kernel `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` in norm's dtype as gt, add, div
and where on 0-dim tensors of that dtype (cast to self's where it differs), then `self * factor`, copied into a new
contiguous tensor where it is not laid out as one (aten's structured output)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at

# role -> how many leading parameters the body passes that role's wrapper
RENORM_PASSED = {"length": 5, "plus": 2, "over": 2, "above": 2, "pick": 3, "times": 2, "compact": 2}


def _renorm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = callees(rule, plan)
    return "\n".join([
        f'const std::vector<int64_t> reduce = shimgen::detail::renorm_dims("{w.op.name}", self, p, dim, maxnorm);',
        "const std::optional<torch::headeronly::ScalarType> acc = "
        "shimgen::detail::renorm_norm_dtype(self.scalar_type());",
        f"const torch::stable::Tensor norm = {f['length']}(self, p.to_double(), reduce, true, acc);",
        "const torch::headeronly::ScalarType common = norm.scalar_type();",
        "const torch::stable::Tensor limit = shimgen::detail::number_tensor(shimgen::Scalar(maxnorm.to_double()), common);",
        "const torch::stable::Tensor eps = shimgen::detail::number_tensor(shimgen::Scalar(1e-7), common);",
        "const torch::stable::Tensor one = shimgen::detail::number_tensor(shimgen::Scalar(1.0), common);",
        f"const torch::stable::Tensor scaled = {f['over']}(limit, {f['plus']}(norm, eps));",
        f"torch::stable::Tensor factor = {f['pick']}({f['above']}(norm, limit), scaled, one);",
        "factor = shimgen::detail::to_dtype(factor, self.scalar_type());",
        f"const torch::stable::Tensor result = {f['times']}(self, factor);",
        "if (shimgen::detail::new_contiguous(result)) {",
        "return result;",
        "}",
        f"return {f['compact']}(result, torch::headeronly::MemoryFormat::Contiguous);"])


def _renorm_doc(rule: dict) -> list[str]:
    return ["Route: for p = 2, aten's renorm kernel as the calls it makes: linalg_vector_norm over every dim but "
            "dim (float for half / bfloat16), its scale factor `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` as "
            "gt, add, div and where in the norm's dtype, then self * factor in a new contiguous tensor (proven "
            f"equal on torch {', '.join(map(str, rule['proven']))}).",
            "Another p, a tensor of more than 3 dims, and a call autograd records (renorm's derivative is its own) "
            "raise an error naming the remedy."]


class RenormTwo(Kernel):
    name = "renorm_two"
    prover = "prove_renorm"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, # role -> how many leading parameters the body passes that role's wrapper
RENORM_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _renorm_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _renorm_body(w, plan, rule)


register(RenormTwo())
