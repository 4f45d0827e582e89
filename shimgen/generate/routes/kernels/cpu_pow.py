"""Kernel `cpu_pow` (pow.Tensor_Scalar): pow with an exponent no libtorch route carries as aten's CPU kernel computes
it, on a contiguous CPU tensor of float, double, bfloat16 or float16 outside autograd on x86-64, from target 2.10
(kernels/cpu_activation.h pow_cpu: aten's pow_tensor_scalar_kernel, its specialized products for 2, 3 and -2 and its
std::pow loop replicated, Sleef's pow in the vectors and libm's in the scalar tail, at the CPU capability aten chose).
No released boxed dispatcher carries a Scalar, and the Tensor sibling (pow.Tensor_Tensor with the exponent as a 0-dim
tensor) computes the scalar tail with another pow than aten's Scalar kernel (powf of two floats, where aten's takes
the exponent as a double), so its cells for a floating exponent are not proven.

The op's number rules come first (2 as mul, 0.5 as sqrt, ...: aten's own ops, on any device); then this kernel where
`<helper>_computes` says it computes the call; every other call is the sibling's (the row's route replaces the
`sibling` route, whose body it ends with: routes/sibling.lowered_body), which computes its proven cells and refuses the
rest naming why. Row keys: `helper` (the section's function: `<helper>_computes`, then `<helper>`), `params` (the
overload's parameters, in order)."""

from __future__ import annotations

from shimgen.facts import scalar_facts as scalars
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven
from shimgen.generate.routes.sibling import lowered_body

PARALLEL_FOR = "2.10"  # the target the prover builds the wrapper at: its libtorch runs parallel_for (cpu_activation)


class CpuPow(Kernel):
    name = "cpu_pow"
    prover = "prove_cpu_activation"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The sibling route's variant (the Tensor sibling with every parameter), which the body ends with; the
        kernel's own test asks the running build (cpu_parallel_available: a target below 2.10 never computes)."""
        if q.lowering is None or [p.name for p in q.params] != rule["params"]:
            return None
        return Variant(route, q.lowering[1], q.level, lowering=q.lowering[0])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        lowered = " and ".join(f"aten::{t}" for t in scalars.targets(w.op.name))
        return [f"Route: from target 2.10, another {rule['params'][-1]} on a contiguous CPU tensor of float, double, "
                "bfloat16 or float16 on x86-64, where autograd does not record the call, as aten's CPU pow kernel "
                f"with its loop replicated (shimgen::detail::{rule['helper']}: libtorch's parallel_for chunks, "
                "Sleef's vector pow looked up in libtorch_cpu, libm's in the scalar tail, at the CPU capability aten "
                f"chose; proven equal bit for bit on torch {proven(rule)}).",
                f"Every other call: {lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped "
                "numbers, where shimgen proved it equal; else a shimgen: error naming why."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        args = ", ".join(rule["params"])
        return "\n".join([f"if (shimgen::detail::{rule['helper']}_computes({args})) {{",
                          f'return shimgen::detail::{rule["helper"]}("{w.op.name}", {args});',
                          "}",
                          lowered_body(w, v, plan)])

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The wrapper itself, built at target 2.10 (cpu_activation's prover: each capability and thread count)."""
        return {"prover": self.prover, "module": "cpu_activation", "compiled": PARALLEL_FOR}


register(CpuPow())
