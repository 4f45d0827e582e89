"""Kernel `gelu_addmm` (gelu.default below target 2.14, in a build that did not accept the str leak): gelu with
approximate "none" on a CPU tensor as aten's own CPU gelu kernel, reached through libtorch's CPU C shim of
aten::_addmm_activation (every release 2.9-2.15 exports aoti_torch_cpu__addmm_activation), which computes addmm
into a new tensor and then at::gelu_ on it. With an empty product and beta 1 the addmm is a contiguous copy of the
input, so on a contiguous input the kernel runs over the same values in the same order and chunks as aten::gelu's
(kernels/gelu_addmm.h). No `str`
crosses the ABI, so nothing leaks on libtorch 2.10-2.13.

Row key `value_kernels` (value -> helper prefix): the values of the str another kernel section computes on 2.10-2.13,
asked in order after gelu_addmm's own (`tanh: gelu_tanh`: `<prefix>_computes(self, approximate)`, then
`<prefix>_cpu(self)`; kernels/cpu_activation.h replicates aten's CPU loop for a contiguous tensor of a floating
dtype).

Every other call is the dispatcher's guarded form (routes/dispatcher.py): aten's own op from libtorch 2.14, a
`shimgen:` error naming the leak before. That is, on 2.10-2.13: approximate "tanh" where its value kernel does
not compute it (strided), a tensor on another device,
an integer dtype, a tensor that is not contiguous (aten's loop over a strided tensor takes other paths: its scalar
erf where the copy's is vectorized), and a call autograd records (aten::_addmm_activation has no derivative). Where the running libtorch is 2.14 or
newer, the dispatcher serves every call (aten's op, any device, autograd).

The row's `form` extends it to the in-place and out= overloads (gelu_, gelu.out): the same computation, then aten's
in-place rules into self (kernels/compositions.h assign_inplace) or its out= rules into a contiguous out
(kernels/out_inplace.h check_out_autograd, assign_out with gelu's same-dtype check); aten computes into a strided
out in that out's layout, which takes its scalar loop, so such an out is the dispatcher's."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (guarded_body, guarded_form, leak_free_release, overlay_shim_serves,
                                                    proven)


class GeluAddmm(Kernel):
    name = "gelu_addmm"
    prover = "prove_gelu_addmm"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Where the dispatcher's form of the op is guarded at q.level (a build without SHIMGEN_LEAKY_STR, a target
        below the str's leak-free release): that form, which this one computes more of (no `guard`: it wins the
        tie), with the guard's `guard_from` (Variant); not in a build with the overlay where the op has a C shim by
        q.level, which computes every call."""
        if [p.name for p in q.params] != rule["params"]:
            return None
        if overlay_shim_serves(q):
            return None  # a C shim (the overlay's, in a build linking it) computes every call
        dv = guarded_form(q, rule["argument"])
        if dv is None:
            return None
        return Variant(route, dv.kept, q.level, stack=dv.stack, guard_from=dv.guard_from)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        into = _FORMS[rule.get("form", "")][0]
        values = [f"On a running libtorch before 2.14, approximate \"{value}\" on a contiguous CPU tensor of a "
                  "floating dtype on x86-64, where autograd does not record the call, as aten's CPU gelu kernel with "
                  f"its loop replicated (shimgen::detail::{prefix}_cpu: libtorch's parallel_for chunks, Sleef's "
                  "vector tanh looked up in libtorch_cpu, libm's in the scalar tail, at the CPU capability aten "
                  f"chose){_VALUE_INTO[rule.get('form', '')]}."
                  for value, prefix in rule.get("value_kernels", {}).items()]
        return [f"Route: on a running libtorch before 2.14, approximate \"none\" on a contiguous CPU tensor of a floating "
                "dtype, where autograd does not record the call, as aten's CPU gelu kernel through libtorch's CPU C "
                f"shim aoti_torch_cpu__addmm_activation (an empty product, then aten's gelu_ on the copy){into}; no "
                f"str crosses the ABI (proven equal on torch {proven(rule)}).",
                *values,
                "Every other call takes the boxed dispatcher: aten's own op from libtorch 2.14; before it, a "
                "shimgen: error naming the 48 bytes the dispatcher leaks per call converting `approximate`, unless "
                "the extension defines SHIMGEN_LEAKY_STR to accept the leak."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        arg = rule["argument"]
        leak_free = leak_free_release(v)
        _, taken, computed = _FORMS[rule.get("form", "")]
        test, lines = _VALUE_FORMS[rule.get("form", "")]
        values = []
        for prefix in rule.get("value_kernels", {}).values():  # "tanh": aten's kernel replicated (cpu_activation.h)
            values += [f"if (leaks && shimgen::detail::{test.format(prefix=prefix, arg=arg)}) {{",
                       *[line.format(op=w.op.name, call=f"shimgen::detail::{prefix}_cpu(self)") for line in lines],
                       "}"]
        return "\n".join([f"const bool leaks = shimgen::detail::running_release() < {leak_free};",
                          f"if (leaks && shimgen::detail::{taken.format(arg=arg)}) {{",
                          *[line.format(op=w.op.name) for line in computed],
                          "}",
                          *values,
                          guarded_body(w, v, plan, arg)])

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The row's `form` names its hook (prove_gelu_addmm_inplace, _out); a row with `value_kernels` is proven
        with its wrapper compiled at 2.10 (those values' kernels replicate aten's loop, which no Python mirror
        follows: kernels/cpu_activation.h)."""
        hook = f"{self.prover}{'_' + rule['form'] if rule.get('form') else ''}"
        if not rule.get("value_kernels"):
            return {"prover": hook}
        return {"prover": hook, "compiled": "2.10", **({"form": rule["form"]} if rule.get("form") else {})}


# the row's `form` -> (what its doc adds, the kernel header's test of the call, the computing lines: {op} is the
# overload's name)
_FORMS = {
    "": ("", "gelu_by_addmm(self, {arg})", ["return shimgen::detail::gelu_addmm(self);"]),
    "inplace": (", written into self by aten::copy_ under aten's in-place rules", "gelu_by_addmm(self, {arg})",
                ["const torch::stable::Tensor result = shimgen::detail::gelu_addmm(self);",
                 'return shimgen::detail::assign_inplace("{op}", self, result, {{}});']),
    "out": (", written into out by aten::copy_ under aten's out= rules where out is contiguous (a strided out is "
            "computed in its own layout by aten)", "gelu_out_by_addmm(out, self, {arg})",
            ['shimgen::detail::check_out_autograd("{op}", {{&out, &self}});',
             "const torch::stable::Tensor result = shimgen::detail::gelu_addmm(self);",
             'shimgen::detail::assign_out("{op}", out, result, {{&self}}, true);',
             "return out;"]),
}

# the row's `form` -> what a value kernel's doc adds
_VALUE_INTO = {"": "", "inplace": ", written into self by aten::copy_ under aten's in-place rules",
               "out": ", written into a contiguous out under aten's out= rules (an out that is self's very view "
                      "written in place, as aten writes it)"}

# the row's `form` -> (the value kernel's test of the call, the computing lines: {op} is the overload's name, {call}
# the value kernel's computation): kernels/cpu_activation.h's rules for a form, as its own rows' (an out that is
# self's very view written in place)
_VALUE_FORMS = {
    "": ("{prefix}_computes(self, {arg})", ["return {call};"]),
    "inplace": ("{prefix}_computes(self, {arg})",
                ["const torch::stable::Tensor result = {call};",
                 'return shimgen::detail::assign_inplace("{op}", self, result, {{}});']),
    "out": ("{prefix}_takes_out(out, self, {arg})",
            ['shimgen::detail::act_out_first("{op}", out, self);',
             "const torch::stable::Tensor result = {call};",
             'shimgen::detail::act_assign_out("{op}", out, self, result);',
             "return out;"]),
}


register(GeluAddmm())
