"""Route `composition`: an aten kernel computed as the dispatching aten calls that compute what it computes,
carrying only tensors (data/scalar_facts.yaml `kernel_compositions`: `threshold_backward` is aten's threshold
kernel, `self <= threshold ? 0 : grad_output` over the common dtype, which shimgen::detail::threshold_select
computes with aten::le.Tensor, aten::where.self and aten::_to_copy). A row names the kernel and its
arguments in the order of its parameters: the overload's arguments, or numbers; each row is proven equal to aten on every runtime before it is
used (`python -m shimgen.provers.scalars kernel-compositions`: results, dtypes, errors, float64 gradients, where
a gradient aten's formula gives as zeros is one autograd never reaches). Every call is one the dispatcher sees, so
autograd, autocast and Python modes see the composition's calls instead of the op's.

The numbers become 0-dim tensors of the dtype aten computes them in; one out of that dtype's range (where aten
raises) is refused with a `shimgen:` error, never computed."""

from __future__ import annotations

from shimgen import scalars
from shimgen.cpp_model import Variant, Wrapper
from shimgen.parse import Op
from shimgen.plan import Plan
from shimgen.routes import Query, Route
from shimgen.table import Row, Table
from shimgen.versions import FIRST_STABLE, Version

CARRIED = {"Tensor", "Scalar"}


class Composition(Route):
    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return None  # the composition's own calls carry tensors only; variant_at reads the facts

    def returns_need(self, op: Op, table: Table) -> Version | None:
        return FIRST_STABLE if op.name in scalars.load().kernel_compositions else None

    def variant_at(self, q: Query) -> Variant | None:
        rule = scalars.load().kernel_compositions.get(q.op.name)
        if rule is None or any(str(p.arg.type) not in CARRIED or p.is_out for p in q.params):
            return None
        bound = {b for b in rule["args"] if isinstance(b, str)}
        if bound != {p.name for p in q.params}:
            return None
        return Variant(self, len(q.params), q.level)

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        rule = scalars.load().kernel_compositions[w.op.name]
        return [f"Route: aten's {rule['kernel']} kernel as the dispatching aten calls that compute it "
                f"(shimgen::detail::{rule['kernel']}_select; proven equal, gradients included, on torch "
                f"{', '.join(map(str, rule['proven']))}).",
                "A number out of the range of the dtype aten computes it in raises an error (shimgen::Scalar)."]

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        rule = scalars.load().kernel_compositions[w.op.name]
        args = [str(a) for a in rule["args"]]  # the kernel's parameters in order (scalar.h)
        return f'return shimgen::detail::{rule["kernel"]}_select("{w.op.name}", {", ".join(args)});'


ROUTE_CLASS = Composition
