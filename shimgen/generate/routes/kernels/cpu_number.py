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
overload's parameters, in order), `dtypes` (what the helper takes, for the doc).

`form: out` (pow.Tensor_Scalar_out, lerp.Scalar_out, with `via`: the functional) makes the row an out= overload's:
where every input is a contiguous CPU tensor of self's sizes and out a contiguous CPU tensor or one aten resizes
(cpu_activation.h number_out_computes), aten computes the call in the functional's very order, so the functional's
wrapper (its number rules, the helper, the sibling) computes it and aten's out= rules write it into out
(check_out_autograd, assign_out_or_inplace: the result cast to out's dtype where it casts, aten's resize and its
warning, out that is self's very view written in place, another overlap refused). Any other out= call is the
sibling's (its Tensor overload's out= form)."""

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
        via = (rule["via"],) if rule.get("form") == "out" else ()  # the functional the out= form computes
        return Variant(route, q.lowering[1], q.level, lowering=(*q.lowering[0], *via))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        lowered = " and ".join(f"aten::{t}" for t in scalars.targets(w.op.name))
        if rule.get("form") == "out":
            return [f"Route: from target 2.10, where every input is a contiguous CPU tensor of self's sizes and out "
                    "a contiguous CPU tensor or one aten resizes, "
                    f"aten::{rule['via']}'s wrapper (aten computes such a call in the functional's very order), "
                    "then aten's out= rules: in grad mode no argument may require grad; the result is cast to out's "
                    "dtype where it casts; an out of other sizes is resized with aten's warning; out that is self's "
                    "very view is written in place, another overlap raises a shimgen: error (proven equal bit for bit "
                    f"on torch {proven(rule)}).",
                    f"Every other call: {lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped "
                    "numbers, where shimgen proved it equal; else a shimgen: error naming why."]
        return [f"Route: from target 2.10, a {rule['params'][-1]} on contiguous CPU tensors of {rule['dtypes']} on "
                f"x86-64, where autograd does not record the call, as aten's CPU kernel of {w.op.name.split('.')[0]} "
                f"with its loop replicated (shimgen::detail::{rule['helper']}: libtorch's parallel_for chunks, "
                "Sleef's vector functions looked up in libtorch_cpu, libm's in the scalar tail, at the CPU capability "
                f"aten chose; proven equal bit for bit on torch {proven(rule)}).",
                f"Every other call: {lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped "
                "numbers, where shimgen proved it equal; else a shimgen: error naming why."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        if rule.get("form") == "out":
            return _out_body(w, v, plan, rule)
        args = ", ".join(rule["params"])
        return "\n".join([f"if (shimgen::detail::{rule['helper']}_computes({args})) {{",
                          f'return shimgen::detail::{rule["helper"]}("{w.op.name}", {args});',
                          "}",
                          lowered_body(w, v, plan)])

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The wrapper itself, built at target 2.10 (cpu_activation's cases: each capability and thread count; an out=
        form's own cases)."""
        return {"prover": self.prover, "compiled": str(PARALLEL_FOR), **({"form": rule["form"]} if rule.get("form")
                                                                          else {})}


def _out_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """Where out and the inputs are contiguous CPU tensors: the functional's wrapper under aten's out= rules; else the
    sibling."""
    target = plan.wrapper_of(rule["via"])
    assert target is not None
    inputs = ", ".join(f"&{p.name}" for p in w.kept(v) if str(p.arg.type) == "Tensor" and not p.is_out)
    args = ", ".join(p.name for p in target.params)
    return "\n".join([f"if (shimgen::detail::number_out_computes(out, {{{inputs}}})) {{",
                      f'shimgen::detail::check_out_autograd("{w.op.name}", {{&out, {inputs}}});',
                      f"const torch::stable::Tensor result = torch::stable::{target.name}({args});",
                      f'shimgen::detail::assign_out_or_inplace("{w.op.name}", out, self, {{{inputs}}}, result, '
                      "false);",
                      "return out;",
                      "}",
                      lowered_body(w, v, plan)])


register(CpuNumber())
