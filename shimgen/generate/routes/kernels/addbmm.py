"""Kernel `addbmm_loop` (addbmm.default, addbmm_.default, addbmm.out): aten's CPU addbmm_out, a loop of addmm_
(scalar.h addbmm_loop), each addmm_ by addmm.out's wrapper (`via`, the legacy shim) with out and self the result;
the functional form's result is aten::new_empty(self, [0]) resized there, as aten's empty({0}, self.options())."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import CARRIED, LISTS_CROSS, proven


def _addbmm_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """Every parameter, from 2.10 (expand's size list crosses the dispatcher from then), where addmm.out's wrapper
    takes all of its parameters with libtorch alone at q.level."""
    if q.level < LISTS_CROSS or any(str(p.arg.type) not in CARRIED for p in q.params):
        return None
    target = q.plan.wrapper_of(rule["via"])
    tv = target.active(q.level) if target is not None else None
    if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
        return None
    return Variant(route, len(q.params), q.level, lowering=(rule["via"],))


def _addbmm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    """scalar.h addbmm_prepare, then one addmm_ per batch by `via`'s wrapper (addmm.out) into the result."""
    target = plan.wrapper_of(rule["via"])
    assert target is not None
    out = next((p.name for p in w.params if p.is_out), None)
    in_place = w.op.name.split(".")[0].endswith("_")
    result = out or ("self" if in_place else "shimgen::detail::new_empty_of(self)")
    returned = out or ("self" if in_place else "result")
    # the functional form under autocast (addbmm is in its lower-precision list; out= and in-place forms are not):
    # the operands cast as autocast casts them (scalar.h autocast_target, autocast_like), then the same calls
    functional = not (out or in_place)
    s, b1, b2 = ("self_a", "batch1_a", "batch2_a") if functional else ("self", "batch1", "batch2")
    cast = [] if not functional else [
        "const std::optional<torch::stable::Tensor> autocast = shimgen::detail::autocast_target(batch1);",
        *[f"const torch::stable::Tensor {n}_a = autocast ? shimgen::detail::autocast_like({n}, *autocast) : {n};"
          for n in ("self", "batch1", "batch2")]]
    result = result.replace("new_empty_of(self)", f"new_empty_of({s})")
    return "\n".join([
        *cast,
        f"torch::stable::Tensor result = {result};",
        f'const int64_t batches = shimgen::detail::addbmm_prepare("{w.op.name}", {s}, {b1}, {b2}, beta, '
        f'result, {"true" if in_place else "false"});',
        "for (int64_t b = 0; b < batches; ++b) {",
        "const shimgen::Scalar beta_b = b == 0 ? beta : shimgen::Scalar(int64_t(1));",
        f"const torch::stable::Tensor m1 = shimgen::detail::batch_of({b1}, b);",
        f"const torch::stable::Tensor m2 = shimgen::detail::batch_of({b2}, b);",
        f"torch::stable::{target.name}(result, result, m1, m2, beta_b, alpha);",
        "}",
        f"return {returned};"])


class AddbmmLoop(Kernel):
    name = "addbmm_loop"
    prover = "prove_addbmm_loop"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return _addbmm_at(route, q, rule)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: aten's CPU addbmm, which is a loop of addmm_ (LinearAlgebra.cpp addbmm_impl_): the same "
                "calls in the same order, each addmm_ as libtorch's legacy C shim aoti_torch_addmm_out with out "
                "and self the result (shimgen::detail::addbmm_loop; proven equal on torch "
                f"{proven(rule)}).",
                "A tensor not on the CPU (CUDA computes one gemm), a call autograd records (aten's derivative "
                "is addbmm's own), numbers the legacy shim's float does not carry and, in place, a self "
                "without the product's shape raise an error naming the remedy."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _addbmm_body(w, plan, rule)


register(AddbmmLoop())
