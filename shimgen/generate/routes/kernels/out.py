"""Kernel `out` (`add.out` -> via `add.Tensor`): an out= overload as its functional overload's wrapper (where that
has a libtorch route with every parameter at the release) under aten's out= rules (shimgen::detail::check_out_autograd
and assign_out): in grad mode no argument, out included, may require grad; the result dtype must cast to out's
(`same_dtype: true`: must be out's, as aten's unary ops check); out overlapping an input other than as the very
same view, or resized while it overlaps one, or writing an element twice, is refused; a resized out gets the
result's strides (aten's structured kernels restride it: a channels_last input gives a channels_last out), and
aten's warning on resizing a non-empty out.

`composite: true` (linalg_matrix_norm.out, quantile.out): aten's out= overload of a CompositeImplicitAutograd op is
not a structured kernel's: it checks out's device, calls the functional (which autograd records), checks the dtype,
resizes out (at::native::resize_output) and copies with copy_ (recorded too), so it computes in grad mode where kernel
`out` raises aten's out= autograd error (scalar.h check_out_device, assign_composite_out). With `refuse_aliased: true`
(quantile's, whose aten out= resizes out before it computes) out sharing memory with an input is refused
(refuse_aliased_out)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import cast_refusal, cast_refusal_doc, proven


class Out(Kernel):
    name = "out"
    prover = "prove_out"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes the others, in the same order, with libtorch alone at
        q.level, and the overload has one Tensor out=."""
        if sum(p.is_out for p in q.params) != 1 or any(str(p.arg.type) != "Tensor" for p in q.params if p.is_out):
            return None
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        if [p.name for p in q.params if not p.is_out] != [p.name for p in target.params]:  # type: ignore[union-attr]
            return None
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        if rule.get("composite"):
            return _composite_out_doc(rule)
        grad = ("refuse_recorded_out and assign_out:" if rule.get("no_derivative") else
                "check_out_autograd and assign_out: in grad mode no argument may require grad;")
        return [f"Route: aten::{rule['via']}, then aten's out= rules (shimgen::detail::{grad} the result dtype "
                "must cast to out's; a "
                "resized out gets the result's strides), written into out by aten::copy_ (aten::where.self_out "
                "where out is resized: TensorIterator's resize and warning) (proven equal on "
                f"torch {proven(rule)}).",
                "Where out shares memory with an input other than as the very same view, or is resized while "
                "it shares memory with one, it raises an error (aten computes such a call element by element)."
                ] + cast_refusal_doc(rule, "out") + (
                    ["aten has no derivative for it: where autograd would record the call (grad mode, an argument "
                     "requiring grad) it raises an error naming the remedy (aten computes it and leaves out "
                     "requiring grad)."] if rule.get("no_derivative") else []) + (
                    ["As aten's meta does, out is first resized to [0] (aten's warning where it had elements), "
                     "then to the result's sizes (shimgen::detail::empty_out_first)."]
                    if rule.get("empty_first") else [])

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """aten's autograd check, `via`'s wrapper out of place, then aten's out= rules into out."""
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        out = next(p.name for p in w.kept(v) if p.is_out)
        inputs = [p.name for p in w.kept(v) if str(p.arg.type) == "Tensor" and not p.is_out]
        same = "true" if rule.get("same_dtype") else "false"
        args = ", ".join(p.name for p in target.params)
        if rule.get("composite"):
            return _composite_out_body(w, target.name, out, inputs, args, bool(rule.get("refuse_aliased")))
        check = "refuse_recorded_out" if rule.get("no_derivative") else "check_out_autograd"
        return "\n".join([
            f'shimgen::detail::{check}("{w.op.name}", {{{", ".join(f"&{n}" for n in [out, *inputs])}}});',
            f"torch::stable::Tensor result = torch::stable::{target.name}({args});",
            *cast_refusal(w, rule, out),
            *([f'shimgen::detail::empty_out_first("{w.op.name}", {out}, result);'] if rule.get("empty_first") else []),
            f'shimgen::detail::assign_out("{w.op.name}", {out}, result, {{{", ".join(f"&{n}" for n in inputs)}}}, '
            f'{same});',
            f"return {out};"])

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "writes_out": True}


def _composite_out_body(w: Wrapper, via: str, out: str, inputs: list[str], args: str, aliased: bool) -> str:
    refuse = ([f'shimgen::detail::refuse_aliased_out("{w.op.name}", {out}, {{{", ".join(f"&{n}" for n in inputs)}}});']
              if aliased else [])
    return "\n".join([
        f'shimgen::detail::check_out_device("{w.op.name}", {inputs[0]}, {out});',
        *refuse,
        f"const torch::stable::Tensor result = torch::stable::{via}({args});",
        f'shimgen::detail::assign_composite_out("{w.op.name}", {out}, result);',
        f"return {out};"])


def _composite_out_doc(rule: dict) -> list[str]:
    return [f"Route: aten::{rule['via']}, then aten's out= of a CompositeImplicitAutograd op: out on the input's "
            "device, the result's dtype out's, out resized as at::native::resize_output resizes it (aten's warning "
            "on a non-empty out, a new contiguous tensor's strides), then aten::copy_, which autograd records as it "
            f"records aten's (proven equal on torch {proven(rule)}).",
            "Resizing an out that requires grad in grad mode raises an error naming the remedy (aten resizes it "
            "below autograd)."] + (
                ["out sharing memory with an input raises an error naming the remedy (aten resizes out before it "
                 "computes, and reads such an input resized)."] if rule.get("refuse_aliased") else [])


register(Out())
