"""Kernel `cpu_number` (pow.Tensor_Scalar, lerp.Scalar): an op with a number no libtorch route carries as aten's CPU
kernel computes it, from target 2.10, on contiguous CPU tensors of the dtypes the row's helper takes, outside autograd
on x86-64 (kernels/cpu_activation.h: aten's loop replicated, libtorch's parallel_for chunks, Sleef's vector functions
looked up in libtorch_cpu and libm's in the scalar tail, at the CPU capability aten chose). No released boxed
dispatcher carries a Scalar, and the Tensor sibling (the number as a 0-dim tensor) computes another value there:
pow.Tensor_Tensor's scalar tail is powf of two floats where aten's Scalar kernel takes the exponent as a double, and
lerp.Tensor's weight is the tensors' bfloat16 or float16 where aten's Scalar kernel takes it as a float.

- `pow_cpu` (pow.Tensor_Scalar, and pow_.Scalar through kernel `inplace`): pow's 0 and 1, its specialized products
  for 2, 3 and -2, bfloat16's rsqrt for -0.5 and std::pow otherwise, on float, double, bfloat16 and float16 tensors.
- `lerp_cpu` (lerp.Scalar): two tensors of one floating dtype and the same sizes, in that dtype (float for bfloat16
  and float16), the multiply-add fused as aten's compiled kernel fuses it (its AVX2 kernel, which runs at AVX512
  too); a NaN weight is the sibling's.

The op's number rules come first (pow's 2 as mul, 0.5 as sqrt, ...: aten's own ops, on any device); then the helper
where `<helper>_computes` says it computes the call; every other call is the sibling's (the row's route replaces the
`sibling` route, whose body it ends with: routes/sibling.lowered_body), which computes its proven cells and refuses the
rest naming why. Row keys: `helper` (the section's function: `<helper>_computes`, then `<helper>`), `params` (the
overload's parameters, in order), `dtypes` (what the helper takes, for the doc)."""

from __future__ import annotations

from shimgen.facts import scalar_facts as scalars
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven
from shimgen.generate.routes.kernels.cpu_activation import PARALLEL_FOR
from shimgen.generate.routes.sibling import lowered_body


class CpuNumber(Kernel):
    name = "cpu_number"
    prover = "prove_cpu_number"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The sibling route's variant (the Tensor sibling with every parameter), which the body ends with; the
        kernel's own test asks the running build (cpu_parallel_available: a target below 2.10 never computes)."""
        if q.lowering is None or [p.name for p in q.params] != rule["params"]:
            return None
        return Variant(route, q.lowering[1], q.level, lowering=q.lowering[0])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        lowered = " and ".join(f"aten::{t}" for t in scalars.targets(w.op.name))
        return [f"Route: from target 2.10, a {rule['params'][-1]} on contiguous CPU tensors of {rule['dtypes']} on "
                f"x86-64, where autograd does not record the call, as aten's CPU kernel of {w.op.name.split('.')[0]} "
                f"with its loop replicated (shimgen::detail::{rule['helper']}: libtorch's parallel_for chunks, "
                "Sleef's vector functions looked up in libtorch_cpu, libm's in the scalar tail, at the CPU capability "
                f"aten chose; proven equal bit for bit on torch {proven(rule)}).",
                f"Every other call: {lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped "
                "numbers, where shimgen proved it equal; else a shimgen: error naming why."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        args = ", ".join(rule["params"])
        return "\n".join([f"if (shimgen::detail::{rule['helper']}_computes({args})) {{",
                          f'return shimgen::detail::{rule["helper"]}("{w.op.name}", {args});',
                          "}",
                          lowered_body(w, v, plan)])

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The wrapper itself, built at target 2.10 (cpu_activation's cases: each capability and thread count)."""
        return {"prover": self.prover, "compiled": str(PARALLEL_FOR)}


register(CpuNumber())
