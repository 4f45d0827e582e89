"""Kernel `self_dtype_number` (mul_.Scalar -> via `mul_.Tensor`): an in-place op whose number aten converts to self's
dtype before its kernel reads it, as the in-place Tensor overload with the number as a 0-dim tensor of self's dtype.
aten's `mul_(x, 0.1)` on a bfloat16 or float16 tensor multiplies by 0.1 rounded to that dtype (its wrapped number is
cast to the common dtype; the functional `mul(x, 0.1)` keeps it in float), so the functional composition (kernel
`inplace`) and the sibling's 0-dim tensor of the number's own dtype are another value there: measured on 2.9.1-2.15.0,
mul_ alone among add_, sub_, mul_ and div_. The tensor is scalar.h number_tensor's (the number as a float, then
aten's _to_copy: the double rounding of aten's own cast), which aten's kernel reads as a CPU scalar
(`original_scalar_value`).

Computed where self is a bfloat16 or float16 CPU tensor, the number is real and autograd does not record the call
(aten's derivative multiplies by the unrounded number; cxx/kernels/self_dtype_number.h self_dtype_number_computes).
Every other call is the sibling's (routes/sibling.lowered_body): its proven cells, else the `shimgen:` refusal. Row
keys: `via` (the in-place Tensor overload), `argument` (the number)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven
from shimgen.generate.routes.sibling import lowered_body


class SelfDtypeNumber(Kernel):
    name = "self_dtype_number"
    prover = "prove_self_dtype_number"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The sibling route's variant (every parameter), which the body ends with, where `via` is that sibling."""
        if q.lowering is None or rule["via"] not in q.lowering[0]:
            return None
        return Variant(route, q.lowering[1], q.level, lowering=q.lowering[0])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: on a bfloat16 or float16 CPU self where autograd does not record the call, "
                f"aten::{rule['via']} with the {rule['argument']} as a 0-dim tensor of self's dtype: aten's in-place "
                f"kernel rounds the number to self's dtype first (proven equal on torch {proven(rule)}).",
                f"Every other call: aten::{rule['via']} with the number as a 0-dim tensor promoting as aten's "
                "wrapped number, where shimgen proved it equal; else a shimgen: error naming why."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        number = rule["argument"]
        args = ", ".join(f"shimgen::detail::number_tensor({p.name}, self.scalar_type())" if p.name == number
                         else p.name for p in w.kept(v))
        return "\n".join([f"if (shimgen::detail::self_dtype_number_computes(self, {number})) {{",
                          f"return torch::stable::{target.name}({args});",
                          "}",
                          lowered_body(w, v, plan)])


register(SelfDtypeNumber())
