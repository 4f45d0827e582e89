"""Kernel `str_value` (div.Tensor_mode with rounding_mode None -> div.Tensor, "floor" -> floor_divide.default): an op
taking a `str` computed, for each value of its `str` `argument` the row names, as another overload of libtorch's
routes (`calls`: the value -> the overload; `none_via`: the overload for None), the row's `args` passed on in order.
The string is compared in C++ (no conversion crosses the ABI, so nothing leaks per call where the dispatcher's
conversion of a `str` would: libtorch 2.10-2.13). A value whose overload has no derivative where the op has one
(`no_derivative`: floor_divide, where div with a rounding mode has a zero gradient) raises a `shimgen:` error where
autograd records the call; a value with no exact composition (`refused`: "trunc") raises a `shimgen:` error naming
the remedies; any other value raises aten's own error for it (`unknown`, `{}` standing for the value). Where a
route carries the str itself (the dispatcher from 2.14 or with SHIMGEN_LEAKY_STR, ranked first; the overlay's C
shim in a build linking it), that route serves the call."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import guarded_body, guarded_form, overlay_shim_serves, proven

REMEDY = ("target torch 2.14 (TORCH_TARGET_VERSION: its dispatcher carries the str without leaking), define "
          "SHIMGEN_LEAKY_STR at target 2.10-2.13 (their dispatcher carries it, leaking 48 bytes per call), or define "
          "SHIMGEN_OVERLAY and link libshimgen_overlay at target 2.13 (rebuilt for each torch release)")


def _libtorch(q: Query, via: str) -> bool:
    """Whether overload `via`'s wrapper has a libtorch route (not the overlay) at q.level."""
    target = q.plan.wrapper_of(via)
    tv = target.active(q.level) if target is not None else None
    return tv is not None and not tv.route.overlay


def _div_trunc(w: Wrapper, plan: Plan, calls: list[str]) -> list[str]:
    """div(self, other, "trunc") as aten's CPU kernel computes it for the result dtype (shimgen::detail::
    div_trunc_case, cxx/kernels/div_trunc.h): integral (case 1) as floor_divide(self - fmod(self, other), other),
    float, double (and complex, which both refuse) and bfloat16 or half by a tensor `other` of several elements
    (case 2) as trunc(self / other); bfloat16 or half by a single-element `other` (case 3) in float, rounded once:
    trunc(float(self in the result dtype) / float(other)) in the result dtype; case 0 (another device) is the
    caller's refusal. `calls`: the row's overloads for fmod, sub, floor_divide, trunc, div and to, in that order."""
    fmod, sub, floor, trunc, div, to = (f"torch::stable::{plan.wrapper_of(c).name}"  # type: ignore[union-attr]
                                        for c in calls)
    a, b = (p.name for p in w.params[:2])
    wide = "torch::headeronly::ScalarType::Float"
    return ["if (how == 1) {", f"const torch::stable::Tensor rest = {fmod}({a}, {b});",
            f"return {floor}({sub}({a}, rest), {b});", "}",
            "if (how == 3) {", f"const auto dtype = shimgen::detail::div_trunc_dtype({a}, {b});",
            f"const torch::stable::Tensor q = {div}({to}({to}({a}, dtype), {wide}), {to}({b}, {wide}));",
            f"return {to}({trunc}(q), dtype);", "}",
            f"return {trunc}({div}({a}, {b}));"]


# The compositions a row's `composed` values name (`how`): each emits the statements computing the value, given
# `how`, the case its C++ helper (`case`, the kernel section's) chose; case 0 is refused by the caller.
COMPOSED = {"div_trunc": ("div_trunc_case", _div_trunc)}


def _cpp_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class StrValue(Kernel):
    name = "str_value"
    prover = "prove_str_value"

    @staticmethod
    def _vias(rule: dict) -> list[str]:
        """The overloads the row names: `none_via` (a `str?` argument's None; a plain `str` has none), then `calls`'."""
        return [*([rule["none_via"]] if "none_via" in rule else []), *rule["calls"].values()]

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The hook for the row's operands: div's (self, other), or another family's (`samples`: scatter's)."""
        return {"prover": f"{self.prover}{'_' + rule['samples'] if rule.get('samples') else ''}"}

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter (the row's `args` and the `str` argument, whose type the headers have at q.level), where
        each overload the values name takes the row's `args` (its parameters, by name) with libtorch alone at
        q.level; not in a build with the overlay where the op has a C shim by q.level (it computes every value,
        "trunc" too, and a libtorch route would win the tie)."""
        if {p.name for p in q.params} != set(rule["args"]) | {rule["argument"]}:
            return None
        if overlay_shim_serves(q):
            return None  # a C shim (the overlay's, in a build linking it) carries every value of the str
        if any(p.row.since is None or p.row.since > q.level for p in q.params):
            return None
        for via in self._vias(rule):
            target = q.plan.wrapper_of(via)
            tv = target.active(q.level) if target is not None else None
            if tv is None or tv.route.overlay or tv.kept < len(rule["args"]):
                return None
            if {p.name for p in target.params} != set(rule["args"]):  # type: ignore[union-attr]
                return None
        # a value composed of several calls (`composed`) where each of them has a libtorch route at q.level
        composed = tuple(c for spec in rule.get("composed", {}).values() if all(_libtorch(q, c) for c in spec["calls"])
                         for c in spec["calls"])
        # where the dispatcher's form is guarded (routes/dispatcher.py), the calls no overload computes take it:
        # aten's op from the str's leak-free release, an error naming the leak before (`guard_from`, Variant)
        guarded = guarded_form(q, rule["argument"])
        return Variant(route, len(q.params), q.level, lowering=(*self._vias(rule), *composed),
                       stack=guarded.stack if guarded else (), guard_from=guarded.guard_from if guarded else None)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        a = rule["argument"]
        values = ", ".join(f'{a}="{k}" as aten::{v}' for k, v in rule["calls"].items())
        none = f"{a}=None as aten::{rule['none_via']}, " if "none_via" in rule else ""
        lines = [f"Route: {none}{values}, which compute aten::{w.op.name} with that "
                 f"{a} (proven equal on torch {proven(rule)}); the string is compared here, so no str crosses "
                 "the ABI (nothing leaks per call)."]
        for k, spec in rule.get("composed", {}).items():
            lines.append(f'{a}="{k}" as aten\'s own CPU kernel computes it, composed of '
                         f'{", ".join("aten::" + c for c in spec["calls"])} (proven equal on torch {proven(rule)}); '
                         "on another device, for a dtype aten does not compute and where autograd records the call "
                         "it takes the dispatcher as below.")
        for k in rule.get("no_derivative", []):
            lines.append(f'With {a}="{k}", where autograd records the call (grad mode, an input requires grad), '
                         f"aten::{rule['calls'][k]} does not carry aten::{w.op.name}'s derivative: from "
                         "target 2.10 the call takes the boxed dispatcher, aten's op on libtorch 2.14 and later; "
                         "before, it raises an error naming the remedies.")
        for k in rule.get("refused", []):
            lines.append(f'{a}="{k}" (no exact composition computes it): from target 2.10 it takes the boxed '
                         "dispatcher, aten's op on libtorch 2.14 and later; before, it raises an error naming the "
                         "remedies.")
        lines.append(f"Another {a} raises aten's error for it.")
        return lines

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """None and each value of the row (compared as a std::string_view), its overload's wrapper on the row's
        `args`; the refusals; aten's error for any other value."""
        a, op = rule["argument"], w.op.name

        def call(via: str) -> str:
            target = plan.wrapper_of(via)
            assert target is not None
            return f"return torch::stable::{target.name}({', '.join(p.name for p in target.params)});"

        def dispatched(why: str) -> list[str]:
            """A call no overload computes: the dispatcher's guarded form where the target has one (aten's op from
            the str's leak-free release, an error naming the leak before), else the refusal naming `why`."""
            if v.guard_from is None:
                return [f'shimgen::detail::refuse("{op}", "{a}", {a}, "{_cpp_string(why)}");']
            return [guarded_body(w, v, plan, a)]

        tensors = ", ".join(f"&{p.name}" for p in w.params if p.name in rule["args"] and "Tensor" in str(p.arg.type))
        # a `str?` is compared through its optional (`*a`); a plain `str` is the string_view itself
        text = f"*{a}" if "none_via" in rule else a
        lines = [f"if (!{a}.has_value()) {{", call(rule["none_via"]), "}"] if "none_via" in rule else []
        for value, via in rule["calls"].items():
            lines.append(f'if ({text} == std::string_view("{_cpp_string(value)}")) {{')
            if value in rule.get("no_derivative", []):
                why = (f"autograd records this call (grad mode, an input requires grad) and aten::{via}, which "
                       f"computes it, does not carry aten::{op}'s derivative: call it where autograd does not "
                       f"record it, or {REMEDY}")
                lines += [f"if (shimgen::detail::records_grad({{{tensors}}})) {{", *dispatched(why), "}"]
            lines += [call(via), "}"]
        for value, spec in rule.get("composed", {}).items():
            helper, emit = COMPOSED[spec["how"]]
            why = (f"computed only on CPU tensors of the dtypes aten's kernel computes, where autograd does not "
                   f"record the call: {REMEDY}")
            if not set(spec["calls"]) <= set(v.lowering):  # a call without a libtorch route at this target
                lines += [f'if ({text} == std::string_view("{_cpp_string(value)}")) {{', *dispatched(why), "}"]
                continue
            lines += [f'if ({text} == std::string_view("{_cpp_string(value)}")) {{',
                      f"const int how = shimgen::detail::{helper}({', '.join(p.name for p in w.params[:2])});",
                      f"if (how == 0 || shimgen::detail::records_grad({{{tensors}}})) {{", *dispatched(why), "}",
                      *emit(w, plan, spec["calls"]), "}"]
        for value in rule.get("refused", []):
            why = f"no libtorch route computes it without the str crossing the ABI: {REMEDY}"
            lines += [f'if ({text} == std::string_view("{_cpp_string(value)}")) {{', *dispatched(why), "}"]
        head, named, tail = rule["unknown"].partition("{}")
        # one statement per piece: a line clang-format's layout writer lays out itself (no long `+` expression)
        lines += ["std::string message;", f'message.append("{_cpp_string(head)}");',
                  *([f"message.append({text});"] if named else []),
                  f'message.append("{_cpp_string(tail)} (aten raises)");',
                  f'shimgen::detail::fail("{op}", message.c_str());']
        return "\n".join(lines)


register(StrValue())
