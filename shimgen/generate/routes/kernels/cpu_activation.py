"""Kernel `cpu_activation` (elu.default, softplus.default, their in-place and out= forms): aten's own CPU kernel of
the activation, its loop replicated in the wrapper (kernels/cpu_activation.h): the chunks of libtorch's parallel_for
(torch_parallel_for, from 2.10), in each chunk the blocks of two Vectorized<T> computed with the Sleef functions
aten's vectorized lambda calls (looked up in libtorch_cpu at run time) and the rest with aten's scalar lambda (libm),
at the CPU capability aten's DispatchStub chose (ATEN_CPU_CAPABILITY, else the CPU's features). No number crosses the
ABI, so the op computes where no released dispatcher carries its Scalars.

The row names the C++ helper (`helper`: elu_cpu, softplus_cpu) and the op's parameters (`params`, passed in order).
Computed: a contiguous CPU tensor of float or double, or of bfloat16 or float16 (computed in float and rounded back,
as aten's reduced-float kernel: each vector block by the float kernel's vectorized lambda and the conversion of the
capability, the tail by the scalar lambda in float), on x86-64, numbers that convert to the dtype aten computes in
exactly and in range, a call autograd does not record. Every other call raises a `shimgen:` error naming the reason
(another layout, device or dtype, a call autograd records: aten's derivative is not computed here).

The row's `form` extends it to the in-place and out= overloads (elu_, elu.out, softplus.out): the same computation,
then aten's in-place rules into self (kernels/compositions.h assign_inplace) or its out= rules into a contiguous out
(cpu_activation.h act_out_first, act_assign_out: check_out_autograd, assign_out with the same-dtype check, out that
is self's very view written in place). A strided out is refused: aten computes into it in its own layout, whose loop
this section does not replicate; these overloads have no dispatcher form on 2.10-2.13 (a Scalar cannot cross)."""

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
                "Computed on a contiguous CPU tensor of float, double, bfloat16 or float16 (the last two in float, "
                "as aten's reduced-float kernel) on x86-64 where autograd does not record the call; any other call "
                "(layout, device, dtype, a number out of the dtype's range, a call autograd records) raises a "
                "shimgen: error naming the reason and the remedy.", *_FORMS[rule.get("form", "")]]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        args = ", ".join(p for p in rule["params"] if p != "out")
        call = f'shimgen::detail::{rule["helper"]}("{w.op.name}", {args})'
        form = rule.get("form", "")
        if form == "inplace":
            return "\n".join([f"const torch::stable::Tensor result = {call};",
                              f'return shimgen::detail::assign_inplace("{w.op.name}", self, result, {{}});'])
        if form == "out":
            return "\n".join([f'shimgen::detail::act_out_first("{w.op.name}", out, self);',
                              f"const torch::stable::Tensor result = {call};",
                              f'shimgen::detail::act_assign_out("{w.op.name}", out, self, result);',
                              "return out;"])
        return f"return {call};"

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The functional's hook with the row's `form` (inplace, out: the in-place or out= overload's own cases)."""
        return {"prover": self.prover, "compiled": str(PARALLEL_FOR), **({"form": rule["form"]} if rule.get("form")
                                                                          else {})}


# the row's `form` -> what its doc adds
_FORMS = {
    "": [],
    "inplace": ["Then written into self by aten::copy_ under aten's in-place rules (a strided self is refused with the "
                "functional's checks)."],
    "out": ["Then written into out under aten's out= rules (no argument may require grad in grad mode; out's dtype "
            "must be the result's; an out of other sizes is resized with aten's warning; out that is self's very "
            "view is written in place); a strided out, or out overlapping self otherwise, raises a shimgen: error "
            "naming the reason."],
}


register(CpuActivation())
