"""Route `generated_shim`: shimgen's own C shim for an op libtorch ships none for (or not yet at a release),
compiled into the overlay library. The overlay is built against one libtorch's internals, so it is not
ABI-stable: the route needs more than libtorch (`needs: overlay` in data/routes.yaml) and ranks last.

It carries what libtorch's shims carry; its definitions also rebuild an integral schema default exactly
(`alpha=1` reaches aten as the integer 1: the table's `aten_default`)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant
from shimgen.generate.routes import Query
from shimgen.generate.routes.aten_shim import CShimRoute
from shimgen.generate.cpp_model import ShimVersion


class OverlayShim(CShimRoute):
    exact_integral_defaults = True

    def shim_at(self, q: Query) -> ShimVersion | None:
        shipped = [sv for sv in q.shims if sv.since <= q.level]
        if not shipped or shipped[-1].upstream:
            return None  # no shim by then, or the newest is libtorch's own (the `shim` route)
        return shipped[-1]

    def whose(self, v: Variant) -> str:
        return f"shimgen's C shim {v.shim} (link the overlay library)"


ROUTE_CLASS = OverlayShim
