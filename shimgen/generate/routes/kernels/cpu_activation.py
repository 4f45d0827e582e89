"""Kernel `cpu_activation` (elu.default, softplus.default): aten's own CPU kernel of the activation, its loop
replicated in the wrapper (kernels/cpu_activation.h): the chunks of libtorch's parallel_for (torch_parallel_for, from
2.10), in each chunk the blocks of two Vectorized<T> computed with the Sleef functions aten's vectorized lambda calls
(looked up in libtorch_cpu at run time) and the rest with aten's scalar lambda (libm), at the CPU capability aten's
DispatchStub chose (ATEN_CPU_CAPABILITY, else the CPU's features). No number crosses the ABI, so the op computes where
no released dispatcher carries its Scalars.

The row names the C++ helper (`helper`: elu_cpu, softplus_cpu) and the op's parameters (`params`, passed in order).
Computed: a contiguous CPU tensor of float or double on x86-64, numbers that convert to its dtype exactly and in
range, a call autograd does not record. Every other call raises a `shimgen:` error naming the reason (another layout,
device or dtype, a bfloat16 or float16 tensor, a call autograd records: aten's derivative is not computed here)."""

from __future__ import annotations

from shimgen.facts.versions import Version
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven

PARALLEL_FOR = Version(2, 10)  # the first release whose stable C ABI has torch_parallel_for


class CpuActivation(Kernel):
    name = "cpu_activation"
    prover = "prove_cpu_activation"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        if [p.name for p in q.params] != rule["params"] or q.level < PARALLEL_FOR:
            return None
        return Variant(route, len(q.params), q.level)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten's CPU kernel of the op, its loop replicated: libtorch's parallel_for chunks, in each the "
                "blocks of two vectors by the Sleef functions aten's vectorized lambda calls (looked up in "
                "libtorch_cpu at run time) and the rest by its scalar lambda, at the CPU capability aten chose "
                f"(shimgen::detail::{rule['helper']}; proven equal bit for bit on torch {proven(rule)}).",
                "Computed on a contiguous CPU tensor of float or double on x86-64 where autograd does not record the "
                "call; any other call (layout, device, dtype, a number out of the dtype's range, a call autograd "
                "records) raises a shimgen: error naming the reason and the remedy."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        args = ", ".join(rule["params"])
        return f'return shimgen::detail::{rule["helper"]}("{w.op.name}", {args});'

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "compiled": str(PARALLEL_FOR)}


register(CpuActivation())
