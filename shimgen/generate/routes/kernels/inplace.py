"""Kernel `inplace` (`add_.Tensor` -> via `add.Tensor`): the in-place op as its functional overload's wrapper (where
that has a libtorch route with every parameter at the release) and aten::copy_ into self, under aten's in-place rules
(shimgen::detail::assign_inplace: the result dtype must cast to self's; self sharing memory with an input other than
as the very same view is refused, since aten computes it element by element in place). A row with `saves_self: true`
(mul_, threshold_: the functional's backward reads self) computes from a clone of self where autograd records the
call (grad mode, and an input requiring grad: shimgen::detail::saved_self), so what the backward saves is not the
tensor copy_ overwrites; the prover finds a row that needs it and lacks it (autograd's "modified by an inplace
operation")."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (CARRIED, backward_refusal, backward_refusal_doc, cast_refusal,
                                           cast_refusal_doc, proven)


class Inplace(Kernel):
    name = "inplace"
    prover = "prove_inplace"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        if any(str(p.arg.type) not in CARRIED or p.is_out for p in q.params):
            return None
        # the functional overload's wrapper, with every parameter and libtorch alone at this release
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        if [p.name for p in q.params] != [p.name for p in target.params]:  # type: ignore[union-attr]
            return None
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        saved = (" (on a clone of self where autograd records the call: its backward saves self)"
                 if rule.get("saves_self") else "")
        grads = "where autograd does not record it" if rule.get("autograd") == "refused" else "gradients included"
        return [f"Route: aten::{rule['via']} out of place{saved}, then aten::copy_ into self, with aten's in-place "
                "rules "
                f"(shimgen::detail::assign_inplace; proven equal, {grads}, on torch {proven(rule)}).",
                "Where self shares memory with an input other than as the very same view, it raises an error "
                "(aten computes such a call element by element in place)."] + backward_refusal_doc(rule) + (
                    _inplace_doc(rule)) + cast_refusal_doc(rule, "self")

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        inputs = ", ".join(f"&{p.name}" for p in w.kept(v) if str(p.arg.type) == "Tensor" and p.name != "self")
        # `saves_self: true`: the functional's backward reads self (mul_, threshold_), which copy_ overwrites
        saved = f"shimgen::detail::saved_self(self, {{{inputs}}})" if rule.get("saves_self") else "self"
        args = ", ".join(saved if p.name == "self" else p.name for p in w.kept(v))
        return "\n".join([
            *_leaf_check(rule),
            f"torch::stable::Tensor result = torch::stable::{target.name}({args});",
            *backward_refusal(w, rule),
            *_alias_refusal(w, rule, inputs),
            *cast_refusal(w, rule, "self"),
            f'return shimgen::detail::assign_inplace("{w.op.name}", self, result, {{{inputs}}});'])

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "writes_self": True}


# ---- `refuse_aliased: true`, `refuse_strides: true` and `autograd: refused` of an inplace row (addmm_ over
# addmm.default): self sharing any byte with an input is refused (aten's kernel reads the inputs while it writes
# self); so is a self not laid out as a new contiguous tensor (aten computes in self's layout); where autograd
# records the call `via`'s route refuses it (a legacy out= shim), after aten's own in-place error for a leaf self
# that requires grad (scalar.h inplace_leaf_check: aten::copy_ of self onto itself raises it) ----

def _leaf_check(rule: dict) -> list[str]:
    return ["shimgen::detail::inplace_leaf_check(self);"] if rule.get("autograd") == "refused" else []


def _alias_refusal(w: Wrapper, rule: dict, inputs: str) -> list[str]:
    lines = [f'shimgen::detail::refuse_strides("{w.op.name}", self, result);'] if rule.get("refuse_strides") else []
    if rule.get("refuse_aliased"):
        lines.append(f'shimgen::detail::refuse_aliased("{w.op.name}", self, {{{inputs}}});')
    return lines


def _inplace_doc(rule: dict) -> list[str]:
    lines = []
    if rule.get("refuse_aliased"):
        lines.append("Where self shares any memory with an input (the very same view included), it raises an error: "
                     "aten's kernel reads the inputs while it writes self.")
    if rule.get("refuse_strides"):
        lines.append("Where self has the result's sizes but not a new contiguous tensor's strides, it raises an error: "
                     "aten computes in self's layout, which rounds otherwise.")
    if rule.get("autograd") == "refused":
        lines.append(f"Where autograd records the call (grad mode, an input requiring grad), aten::{rule['via']}'s "
                     "route refuses it, naming the remedy; on a leaf that requires grad it raises aten's in-place "
                     "error.")
    return lines


register(Inplace())
