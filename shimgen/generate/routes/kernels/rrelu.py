"""Kernel `rrelu_eval` (rrelu.default, rrelu_.default, rrelu_with_noise.default/.out/_,
rrelu_with_noise_backward.default): aten's rrelu in eval mode is `via` (leaky_relu, leaky_relu_, leaky_relu.out,
leaky_relu_backward) with the slope (lower + upper) / 2 as aten computes it (scalar.h rrelu_slope: over 0-dim
tensors in the forward, `slope: backward`: in double, rrelu_backward_slope); training=true is refused (random slopes
from aten's generator); `noise` is checked for self's sizes and otherwise unused, as in eval; `contiguous_result:
true`: the result laid out as a new contiguous tensor, as aten's kernel allocates it; `check_bounds: true` (rrelu,
rrelu_): aten's lower <= upper check; `finite_bounds: true` (rrelu): a non-finite bound refused (2.15 raises)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import CARRIED


def _rrelu_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """The parameters up to the generator, and the generator where the release's stable headers carry its C++ type
    (the table's `since`; in eval mode aten ignores it), where `via`'s wrapper takes all of its own with libtorch
    alone at q.level."""
    target = q.plan.wrapper_of(rule["via"])
    tv = target.active(q.level) if target is not None else None
    if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
        return None
    kept = 0
    for p in q.params:
        t = str(p.arg.type)
        if t == "Generator?" and not (p.row.since is not None and p.row.since <= q.level):
            break
        if t not in CARRIED and t != "Generator?":
            return None
        kept += 1
    if any(p.default is None for p in q.params[kept:]):
        return None
    return Variant(route, kept, q.level, lowering=(rule["via"],))


def _rrelu_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    target = plan.wrapper_of(rule["via"])
    assert target is not None
    op = w.op.name
    kept = {p.name for p in w.kept(v)}
    training = "training" if "training" in kept else "false"
    lower = "lower" if "lower" in kept else "shimgen::Scalar(0.125)"
    upper = "upper" if "upper" in kept else "shimgen::Scalar(0.3333333333333333)"
    slope = "rrelu_backward_slope" if rule.get("slope") == "backward" else "rrelu_slope"
    lines = ["static_cast<void>(generator);"] if "generator" in kept else []  # eval mode ignores it
    if "noise" in kept and rule.get("slope") == "backward":
        lines.append("static_cast<void>(noise);")  # used in training mode only, which is refused
    if "noise" in kept and rule.get("slope") != "backward":
        lines.append(f'shimgen::detail::rrelu_noise_check("{op}", self, noise);')
    if rule.get("check_bounds"):
        finite = "true" if rule.get("finite_bounds") else "false"
        lines.append(f'shimgen::detail::rrelu_check_bounds("{op}", {lower}, {upper}, {finite});')
    lines.append(f'const shimgen::Scalar slope = shimgen::detail::{slope}("{op}", {lower}, {upper}, {training});')
    if rule.get("backward_raises"):  # rrelu_: the refusal of its via (leaky_relu_), naming this op
        why = "with (lower + upper) / 2 < 0 on a tensor autograd records, aten's backward of the in-place op raises"
        lines.append("const bool negative = !(slope.to_double() >= 0);")
        lines.append(f"if (negative && shimgen::detail::records_inplace(self)) {{\n"
                     f'shimgen::detail::refuse_backward("{op}", "{why}");\n}}')
    args = ", ".join("slope" if p.name == "negative_slope" else p.name for p in target.params)
    call = f"torch::stable::{target.name}({args})"
    if rule.get("contiguous_result"):
        call = f"shimgen::detail::contiguous_result({call})"
    lines.append(f"return {call};")
    return "\n".join(lines)


def _rrelu_doc(rule: dict) -> list[str]:
    how = ("in double" if rule.get("slope") == "backward" else
           "over 0-dim tensors, as aten's kernel does: in double where lower or upper is floating")
    return [f"Route: in eval mode aten computes it as aten::{rule['via']} with the slope (lower + upper) / 2 ({how}); "
            f"so does this wrapper (proven equal, gradients included, on torch {', '.join(map(str, rule['proven']))})"
            + (", its result laid out as a new contiguous tensor as aten's kernel allocates it."
               if rule.get("contiguous_result") else "."),
            "training=true (random slopes from aten's generator) raises an error naming the remedy"
            + ("; so do two integer bounds (aten divides them in the default dtype), a bool or complex bound"
               if rule.get("slope") != "backward" else "; so does a complex bound")
            + ("; so does a bound that is not finite (torch 2.15 raises, earlier releases compute with it)."
               if rule.get("finite_bounds") else ".")] + (
                ["Where autograd records the call with (lower + upper) / 2 < 0 (grad mode, self not a leaf), it raises "
                 "an error: aten's backward raises there, and the composition would differentiate it."]
                if rule.get("backward_raises") else [])


class RreluEval(Kernel):
    name = "rrelu_eval"
    prover = "prove_rrelu"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return _rrelu_at(route, q, rule)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _rrelu_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _rrelu_body(w, v, plan, rule)


register(RreluEval())
