"""Kernel `cpu_kernel` (baddbmm, addmv, histc, _addmm_activation and their in-place and out= forms): an op libtorch ships no C shim for,
whose Scalar no released boxed dispatcher carries, computed on CPU tensors by aten's own CPU kernel through
libtorch's CPU C shim of the row's `via` (aoti_torch_cpu_*, which every release 2.9-2.15 exports:
data/device_shims.json). That is the kernel aten's dispatcher reaches for such a call; the wrapper first does what
the dispatcher does above it (kernels/cpu_kernel.h): negative and conjugate views resolved (aten::resolve_neg,
aten::resolve_conj), autocast's cast where the op is on autocast's lower-precision list (row key `lower_precision`:
the operand whose dtype a probe of aten::mm tests; the functional form only, as autocast registers it), and a call
autograd would record refused by name (the shim records no gradient). A tensor on another device is refused by name
too (the CUDA shim lives in libtorch_cuda.so, which a default build never names), and so are integer tensors (the
shim's double changes what aten computes there) and numbers the double would change (routes/sibling.py exactness).

Row keys: `via`, the overload whose CPU shim computes; `form`: `inplace` or `out`; `same_dtype`: out must have the
result's dtype (aten's structured out= check); `no_gradient`: aten's result never requires grad (histc: no
derivative, no out= autograd check), so a call in grad mode computes too; `no_derivative`: aten records the call
with a backward that raises (_addmm_activation: no derivative, so its out= form has no autograd check either and
leaves out requiring grad), so a call autograd would record is refused by name, the out= form's too, where aten's
out= error would otherwise come first; `given_only` (an optional str: searchsorted.Tensor_out's side): the CPU kernel
serves only a call passing the string, one leaving it None takes the dispatcher, which converts nothing there and
keeps aten's own checks and messages (its out dtype's). How each form computes:
- an out= shim (`via` baddbmm.out): the functional into a new tensor (aten's empty({0}, self.options())); in place,
  into a copy of self in self's layout with out and self that copy (as aten computes in self), then written into
  self by aten::copy_ under aten's in-place rules (kernels/compositions.h assign_inplace); out=, into out itself
  (aten's resize, checks and layout), then out's version counter bumped (cpu_kernel_written) so autograd sees it;
- a functional shim: its result; in place and out=, that result written by aten::copy_ under aten's rules
  (assign_inplace, kernels/out_inplace.h assign_out), a non-contiguous self or out of the result's sizes refused by
  name (aten computes into it in its own layout, whose kernel may take other paths)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.device_shim import shims_of
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (CARRIED, LISTS_CROSS, guarded_body, guarded_form,
                                                    leak_free_release, overlay_shim_serves, proven)
from shimgen.generate.routes.sibling import exactness
from shimgen.generate.signatures import c as sig_c


def _shim(via: Op, level, plan: Plan) -> str | None:
    """The CPU C shim of overload `via` an extension targeting `level` may call, taking every argument with the C
    signature the table gives via's schema (routes/device_shim.py shims_of), or None."""
    n_all = len(sig_c.c_arguments(via))
    usable = [sv for sv in shims_of(via, plan.table, "cpu") if sv.since <= level and sv.shim.nargs == n_all]
    return usable[-1].shim.function if usable else None


def _shim_call(op: Op, function: str, plan: Plan, names: dict[str, str]) -> list[str]:
    """The shim call's lines, every argument of `op`'s schema (C order) converted as the table says, each read from
    the C++ name `names` gives it (its own name otherwise); a functional shim's Tensor return read into `result`."""
    lines: list[str] = []
    args: list[str] = []
    for a in sig_c.c_arguments(op):
        row = plan.table.argument(a.type, op.name, a.name)
        name = names.get(a.name, a.name)
        if row.prelude:
            lines.append(row.fill(row.prelude, name))
        args += [row.fill(e, name) for e in row.to_c]
    # the shim is declared in shimgen::detail (kernels/cpu_kernel.h): named there, called as libtorch's own shims are
    lines.append(f"using shimgen::detail::{function};")
    if op.schema.is_out_fn():
        return [*lines, f"SHIMGEN_CHECK({function}({', '.join(args)}));"]
    (ret,) = op.schema.returns
    row = plan.table.ret(ret.type, op.name, "return 0")
    call = f"{function}({', '.join([*args, '&ret0'])})"
    return [*lines, row.fill(row.c_local, "ret0"), f"SHIMGEN_CHECK({call});",
            f"torch::stable::Tensor result = {row.fill(row.from_c, 'ret0')};"]


def _lower_precision(w: Wrapper, v: Variant, rule: dict) -> list[str]:
    """Row key `lower_precision: <operand>` (baddbmm.default, on autocast's lower-precision list): where autocast
    computes a matrix product of that operand's dtype in another (kernels/addbmm_loop.h autocast_target, probed as
    aten::mm on empty tensors), the wrapper again on the operands cast as autocast casts them (autocast_like)."""
    probe = rule.get("lower_precision")
    if probe is None:
        return []
    args = ", ".join(f"shimgen::detail::autocast_like({p.name}, *autocast)" if p.type_text == "Tensor" else p.name
                     for p in w.kept(v))
    return [f"const std::optional<torch::stable::Tensor> autocast = shimgen::detail::autocast_target({probe});",
            "if (autocast) {", f"return torch::stable::{w.name}({args});", "}"]


class CpuKernel(Kernel):
    name = "cpu_kernel"
    prover = "prove_cpu_kernel"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """From 2.10 (new_empty's size list crosses the dispatcher from then), where `via`'s CPU shim may be called
        at q.level: every parameter a Tensor, Scalar, int or bool; or, for a row naming its `argument` (a str), where
        the dispatcher's form of the op is guarded for that str alone (a build without SHIMGEN_LEAKY_STR, a target
        below the str's leak-free release) and takes every parameter: that form, which this one computes more of
        (no `guard`: it wins the tie), with its `guard_from`. Not in a build with the overlay where the op has a C
        shim by q.level, which computes every call (any device, autograd)."""
        via = q.plan.op_named(rule["via"])
        if q.level < LISTS_CROSS or via is None or _shim(via, q.level, q.plan) is None:
            return None
        if overlay_shim_serves(q):
            return None  # a C shim (the overlay's, in a build linking it) computes every call
        if "argument" in rule:
            dv = guarded_form(q, rule["argument"])
            if dv is None or dv.kept < len(q.params):
                return None
            return Variant(route, dv.kept, q.level, stack=dv.stack, guard_from=dv.guard_from)
        if any(str(p.arg.type) not in CARRIED for p in q.params):
            return None
        return Variant(route, len(q.params), q.level)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        into = {"": "", "inplace": ", written into self by aten::copy_ under aten's in-place rules",
                "out": ", written into out under aten's out= rules"}[rule.get("form", "")]
        route = (f"aten's CPU kernel of aten::{rule['via']}, through libtorch's CPU C shim (libtorch_cpu.so exports "
                 f"it on every release 2.9-2.15), after what aten's dispatcher does above it (negative and conjugate "
                 f"views resolved){into}; proven equal on torch {proven(rule)}")
        if "argument" in rule:
            return [f"Route: on a running libtorch before 2.14, on CPU tensors where autograd does not record the "
                    f"call, {route}; no str crosses the dispatcher.",
                    "Every other call takes the boxed dispatcher: aten's own op from libtorch 2.14; before it, a "
                    f"shimgen: error naming the 48 bytes the dispatcher leaks per call converting `{rule['argument']}`, "
                    "unless the extension defines SHIMGEN_LEAKY_STR to accept the leak."]
        return [f"Route: {route}.",
                "A tensor not on the CPU, a call autograd would record (the shim records no gradient), a number the "
                "shim's double would change" + (" and an out that is not contiguous" if rule.get("form") == "out"
                                                else "") + " raise a shimgen: error naming the remedy."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        arg = rule.get("argument")
        if arg is None:
            return "\n".join(self._computed(w, v, plan, rule))
        # a str row: on a running libtorch whose dispatcher leaks the str, the CPU kernel where it computes the call
        # as aten does; every other call the dispatcher's guarded form (aten's op from the leak-free release)
        tensors = [p.name for p in w.kept(v) if p.type_text == "Tensor"]
        differentiable = "false" if rule.get("no_gradient") else "true"
        leak_free = leak_free_release(v)
        listed = ", ".join(f"&{n}" for n in tensors)
        # given_only: a call leaving the str None converts nothing, and takes the dispatcher (aten's own checks)
        given = [f"const bool given = {arg}.has_value();"] if rule.get("given_only") else []
        leaks = f"{'given && ' if given else ''}shimgen::detail::running_release() < {leak_free}"
        return "\n".join([*given, f"const bool leaks = {leaks};",
                          f"const bool cpu = shimgen::detail::cpu_kernel_serves({{{listed}}}, {differentiable}, "
                          "leaks);",
                          "if (cpu) {", *self._computed(w, v, plan, rule, checked=True), "}",
                          guarded_body(w, v, plan, arg)])

    def _computed(self, w: Wrapper, v: Variant, plan: Plan, rule: dict, checked: bool = False) -> list[str]:
        """The lines computing the call by the CPU shim, ending in a return; its device and autograd checks first
        unless the caller `checked` them (cpu_kernel_serves)."""
        via = plan.op_named(rule["via"])
        assert via is not None
        function = _shim(via, v.start, plan)
        assert function is not None
        form = rule.get("form", "")
        out_shim = via.schema.is_out_fn()
        tensors = [p.name for p in w.kept(v) if p.type_text == "Tensor" and not p.is_out]
        outs = [p.name for p in w.params if p.is_out]
        listed = ", ".join(f"&{n}" for n in (*tensors, *outs))
        differentiable = not rule.get("no_gradient")
        prelude, checks = exactness(w, v, plan)
        refusals = [f'if (!({c})) {{\nshimgen::detail::refuse("{w.op.name}", "{name}", {name}, '
                    '"libtorch\'s CPU C shim carries it as a double, which changes what aten computes");\n}'
                    for name, c in checks]
        # an out= call autograd would record is aten's own error (its out= rule) before the kernel's refusal; an op
        # with no derivative has no such rule (aten computes, out then requiring grad): the kernel's refusal alone
        autograd = ([f'shimgen::detail::check_out_autograd("{w.op.name}", {{{listed}}});']
                    if form == "out" and differentiable and not rule.get("no_derivative") else [])
        check = [f'shimgen::detail::cpu_kernel_check("{w.op.name}", {{{listed}}}, '
                 f'{"true" if differentiable else "false"});']
        # numbers cross as doubles, which integer tensors do not hold as aten's Scalar does
        integral = [f'shimgen::detail::cpu_kernel_integral("{w.op.name}", {{{", ".join(f"&{n}" for n in tensors)}}});']
        lines = [*([] if checked else [*autograd, *check]), *_lower_precision(w, v, rule),
                 *(integral if checks else []), *prelude, *refusals,
                 *[f"const torch::stable::Tensor {n}_k = shimgen::detail::cpu_kernel_operand({n});" for n in tensors]]
        names = {n: f"{n}_k" for n in tensors}
        inputs = ", ".join(f"&{n}" for n in tensors if n != "self")
        if out_shim:
            shim_out = via.schema.arguments.out[0].name
            if form == "out":  # aten's CPU kernel into out itself: its resize, checks and layout
                names[shim_out] = outs[0]
                return [*lines, f'shimgen::detail::cpu_kernel_plain_out("{w.op.name}", {outs[0]});',
                        *_shim_call(via, function, plan, names),
                        f"shimgen::detail::cpu_kernel_written({outs[0]});", f"return {outs[0]};"]
            if form == "inplace":  # in a copy of self, as aten computes in self (out and self the same tensor)
                lines.append("torch::stable::Tensor result = shimgen::detail::cpu_kernel_copy(self_k);")
                names["self"] = "result"
            else:
                lines.append(f"torch::stable::Tensor result = shimgen::detail::new_empty_of({tensors[0]}_k);")
            names[shim_out] = "result"
        elif form == "inplace":  # the functional's result is contiguous: a strided self is computed otherwise
            lines.append(f'shimgen::detail::cpu_kernel_out_layout("{w.op.name}", "self", self, self);')
        lines += _shim_call(via, function, plan, names)
        if form == "inplace":
            lines.append(f'return shimgen::detail::assign_inplace("{w.op.name}", self, result, {{{inputs}}});')
        elif form == "out":
            all_inputs = ", ".join(f"&{n}" for n in tensors)
            lines += [f'shimgen::detail::cpu_kernel_out_layout("{w.op.name}", "out", {outs[0]}, result);',
                      f'shimgen::detail::assign_out("{w.op.name}", {outs[0]}, result, {{{all_inputs}}}, '
                      f'{"true" if rule.get("same_dtype") else "false"});',
                      f"return {outs[0]};"]
        else:
            lines.append("return result;")
        return lines

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "via": rule["via"], "form": rule.get("form", ""),
                "no_gradient": bool(rule.get("no_gradient")), "no_derivative": bool(rule.get("no_derivative")),
                "argument": rule.get("argument")}


register(CpuKernel())
