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
from shimgen.generate.routes import Query, Route, return_outs
from shimgen.generate.routes.sibling import scalar_body
from shimgen.generate.signatures.c import ShimVersion
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import FIRST_STABLE, Version


class CShimRoute(Route):
    """A call to an aoti_torch_aten_* C shim; subclasses say whose: libtorch's (c_shim_aten.h) or shimgen's overlay
    (c_shim_aten_overlay.h)."""

    calls_c_shim = True

    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return row.since if row.c else None

    def returns_need(self, op: Op, table: Table) -> Version | None:
        rows = [table.ret(r.type, op.name, f"return {i}") for i, r in enumerate(op.schema.returns)]
        needs = [r.since if r.c else None for r in rows] if sig_c.has_c_returns(op) else []
        if any(n is None for n in needs):
            return None
        return max(needs, default=FIRST_STABLE)  # type: ignore[type-var]

    def shim_at(self, q: Query) -> ShimVersion | None:
        """The C shim version this route calls at q.level (the newest shipped by then), or None."""
        raise NotImplementedError

    def variant_at(self, q: Query) -> Variant | None:
        shim = self.shim_at(q)
        if shim is None or not q.at.c_compatible:
            return None
        kept = self.fit(q, shim.shim.nargs)
        if kept is None:
            return None
        return Variant(self, kept, q.level, shim=shim.shim.function, shim_nargs=shim.shim.nargs,
                       lowering=self.fallback(q, kept))

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
        return scalar_body(w, v, plan, shim_call(w, v, plan))


class LibtorchShim(CShimRoute):
    def shim_at(self, q: Query) -> ShimVersion | None:
        shipped = [sv for sv in q.shims if sv.since <= q.level and sv.upstream]
        return shipped[-1] if shipped else None

    def whose(self, v: Variant) -> str:
        return f"libtorch's C shim {v.shim}"


ROUTE_CLASS = LibtorchShim


def shim_call(w: Wrapper, v: Variant, plan: Plan) -> str:
    """The C shim call of a wrapper form: arguments converted as the table says, returns read back."""
    kept = {p.name: p for p in w.kept(v)}
    lines: list[str] = []
    args: list[str] = []
    for a in sig_c.c_arguments(w.op)[: v.shim_nargs]:
        row = plan.table.argument(a.type, w.op.name, a.name)
        p = kept.get(a.name)
        if p is None:  # dropped: None is a null pointer; its length / device index is 0
            args += ["nullptr"] + ["0"] * (len(row.c) - 1)
            continue
        if row.prelude:
            lines.append(row.fill(row.prelude, a.name))
        args += [row.fill(e, a.name) for e in row.to_c]
    locals_, addrs, ret = returns_from_c(w, plan)
    lines += locals_
    call = f"{v.shim}({', '.join(args + addrs)})"
    lines.append(f"SHIMGEN_CHECK({call});")
    if ret:
        lines.append(ret)
    return "\n".join(lines)


def returns_from_c(w: Wrapper, plan: Plan) -> tuple[list[str], list[str], str]:
    """(locals declared before the shim call, their &addresses, the return statement)."""
    op = w.op
    if op.schema.is_out_fn():
        return [], [], return_outs(w)
    if op.schema.name.name.inplace:
        return [], [], "return self;" if op.schema.returns else ""
    locals_, addrs, values = [], [], []
    for i, r in enumerate(op.schema.returns):
        row = plan.table.ret(r.type, op.name, f"return {i}")
        locals_.append(row.fill(row.c_local, f"ret{i}"))
        addrs.append(f"&ret{i}")
        values.append(row.fill(row.from_c, f"ret{i}"))
    if not values:
        return locals_, addrs, ""
    if len(values) == 1:
        return locals_, addrs, f"return {values[0]};"
    return locals_, addrs, f"return std::make_tuple({', '.join(values)});"
