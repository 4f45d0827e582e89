"""Route `shim`: libtorch's own C shim (`aoti_torch_aten_<op>`, c_shim_aten.h), where the manifest says libtorch
ships it: the cheapest call (~1.05x at::), a C function with a frozen declaration.

Carries a parameter whose conversion-table row has a C representation (`c`) from the row's `since`; returns
likewise (in-place and out= ops return nothing through the shim). Numbers the shim's double would change are
checked per call (shimgen.generate.routes.sibling.scalar_body)."""

from __future__ import annotations

from shimgen.generate.signatures import c as sig_c
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.sibling import scalar_body
from shimgen.generate.cpp_model import ShimVersion
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import Version


class CShimRoute(Route):
    """A call to an aoti_torch_aten_* C shim; subclasses say whose: libtorch's (c_shim_aten.h) or shimgen's overlay
    (c_shim_aten_overlay.h)."""

    calls_c_shim = True

    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return sig_c.carries(row)

    def returns_need(self, op: Op, table: Table) -> Version | None:
        return sig_c.returns_need(op, table)

    def shim_at(self, q: Query) -> ShimVersion | None:
        """The C shim version this route calls at q.level (the newest shipped by then), or None."""
        raise NotImplementedError

    def variant_at(self, q: Query) -> Variant | None:
        shim = self.shim_at(q)
        if shim is None or not q.at.c_compatible:
            return None
        ret_need = q.plan.per_op(("returns_need", self.name, q.op.name), lambda: self.returns_need(q.op, q.plan.table))
        kept = q.fit(shim.shim.nargs, ret_need, [self.carries(p.row) for p in q.params[: shim.shim.nargs]])
        if kept is None:
            return None
        return Variant(self, kept, q.level, shim=shim.shim.function, shim_nargs=shim.shim.nargs,
                       lowering=q.fallback(kept))

    def whose(self, v: Variant) -> str:
        raise NotImplementedError

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        lines = [f"Route: {self.whose(v)}."]
        if any(p.row.exact_c for p in w.kept(v)):
            if v.lowering:
                lowered = " and ".join(f"aten::{t}" for t in v.lowering)
                lines.append(f"Numbers the shim's double would change go to {lowered} instead, as 0-dim tensors.")
            else:
                lines.append("Numbers the shim's double would change raise an error (shimgen::Scalar).")
        return lines

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        return scalar_body(w, v, plan, sig_c.shim_call(w, v, plan))


class LibtorchShim(CShimRoute):
    def shim_at(self, q: Query) -> ShimVersion | None:
        shipped = [sv for sv in q.shims if sv.since <= q.level and sv.upstream]
        return shipped[-1] if shipped else None

    def whose(self, v: Variant) -> str:
        return f"libtorch's C shim {v.shim}"


ROUTE_CLASS = LibtorchShim
