"""Kernel `conv_padding` (conv1d.padding, conv2d.padding, conv3d.padding): aten's CompositeImplicitAutograd
conv<N>d with a padding string (Convolution.cpp: batchify, _convolution_mode, convolution_same) as the same
dispatching calls in the same order, each by its wrapper (the row's `calls`, by role): `batch` (unsqueeze: an
unbatched input), `padded` (pad with mode "constant": the zeros aten adds to the input's end where "same" is not
symmetric, aten's constant_pad_nd), `conv` (aten::convolution with the padding aten computes: none for "valid",
dilation * (kernel - 1) split for "same") and `unbatch` (squeeze.dim). aten's checks and paddings are scalar.h's
conv_padding_plan; the row's `spatial` is N. No `str` crosses the ABI (the string is compared in C++), so the call
needs no leaking conversion on libtorch 2.10-2.13; from 2.14 the dispatcher carries the op itself and wins. A
complex input is refused (aten's complex_convolution_mode: three real convolutions)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import callees, calls_at, proven

# role -> how many leading parameters the body passes that role's wrapper
CONV_PADDING_PASSED = {"conv": 9, "padded": 4, "batch": 2, "unbatch": 2}


class ConvPadding(Kernel):
    name = "conv_padding"
    prover = "prove_conv_padding"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, CONV_PADDING_PASSED)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        f = callees(rule, plan)
        op, func = w.op.name, w.op.name.split(".")[0]
        return "\n".join([
            f'const auto plan = shimgen::detail::conv_padding_plan("{op}", "{func}", {rule["spatial"]}, input, '
            "weight, stride, padding, dilation, groups);",
            f"torch::stable::Tensor batched = plan.batched ? input : {f['batch']}(input, 0);",
            "if (!plan.pad.empty()) {",
            f'batched = {f["padded"]}(batched, plan.pad, "constant", std::nullopt);',
            "}",
            f"torch::stable::Tensor output = {f['conv']}(batched, weight, bias, stride, plan.padding, dilation, "
            "false, plan.output_padding, groups);",
            f"return plan.batched ? output : {f['unbatch']}(output, 0);"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten computes aten::{w.op.name} as aten::convolution with the padding its string names "
                "(\"valid\": none; \"same\": dilation * (kernel - 1) split, the odd unit padded with zeros into the "
                "input's end first), an unbatched input unsqueezed; so does this wrapper, by the same dispatching "
                f"calls, comparing the string itself (proven equal, gradients included, on torch {proven(rule)}).",
                "A complex input raises an error naming the remedies (aten convolves its real and imaginary parts)."]


register(ConvPadding())
