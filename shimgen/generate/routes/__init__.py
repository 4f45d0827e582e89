"""Routes: the ways a torch::stable wrapper can call an aten op, as typed objects.

A route is a kind of thing, not a string. Each one knows
- what it can carry from which release: `carries(row)` for a parameter's conversion-table row, `returns_need(op,
  table)` for the op's returns (None: never);
- which form of a wrapper it offers to an extension targeting a release: `variant_at(query)` (None: it cannot
  serve that release), usually through the query's `fit()`, the rules every route shares (trailing parameters the
  route cannot carry may be dropped only where their default is None), given what the route carries;
- what it costs: `rank` (its place in data/routes.yaml: among routes taking as many parameters, one needing
  libtorch alone wins over one needing the overlay, then the first listed wins) and `cost`, the per-call overhead
  measured against at:: (benchmarks/bench_calls.py);
- whether it needs more than libtorch: `overlay` (shimgen's overlay library, compiled against one libtorch's
  internals, so not ABI-stable); the default surface prefers routes that need libtorch alone;
- whether its calls go through a C shim the plan must generate (`calls_c_shim`;
  shimgen.generate.signatures.stage.c_shims),
  through the boxed dispatcher (`boxed`) or through another overload (`lowers`): what --verify needs to know;
- how a call through it is emitted: `describe(w, v)` (the "Route: ..." lines of the wrapper's comment),
  `later_notes(w, v)` (lines after the dropped-argument note) and `body(w, v, plan)` (the C++ statements).

Adding a route is one module plus data plus a test:
1. `shimgen/generate/routes/<module>.py` defining `ROUTE_CLASS`, a subclass of `Route` implementing the methods above
   (the route's own facts live in data files its module reads, as the others read the conversion table and the
   manifest);
2. a row in `shimgen/data/routes.yaml` (`name`, `module`, `needs: libtorch | overlay`, `cost`), placed by
   preference: the list's order is the rank;
3. a test that a wrapper takes the route where it should, and that its generated call compiles and runs.
A route may also offer a surface of its own instead of forms of the default wrappers (`wrappers`, `files`,
`owned`: the device route's torch::stable::cpu:: header); the pipeline writes every route's files.
Nothing else names a route: signatures/cpp.py asks every route in rank order (and the `boxed` route of the data
for an optional parameter taken as None), signatures/stage.py (`resolve`) asks the variant's route for its text
once (and the boxed route for what a hidden form lacks) and hands it to the emitters, verify asks `overlay`. The
name is what reports and JSON records carry. A route asks nothing of the signature stage: what it needs of the
wrappers it calls comes with the values handed to it (the query, `Plan.wrapper_of`, `Wrapper.active`).

The interface itself (`Route`, with `Query`) lives in shimgen.generate.cpp_model beside the values a route builds
(a `Variant` names its route); this package is the routes and their registry (data/routes.yaml).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_yaml
from shimgen.generate.cpp_model import Query, Route

__all__ = ["Query", "Route", "boxed", "get", "ordered"]



@dataclass(frozen=True)
class _Registry:
    ordered: tuple[Route, ...]
    by_name: dict[str, Route] = field(hash=False)
    boxed: Route | None = None


@functools.cache
def _registry() -> _Registry:
    raw = package_yaml("data/routes.yaml")
    ordered = []
    for rank, row in enumerate(raw["routes"]):
        # Route modules are named by the data and build on sig_cpp, which asks this registry: loaded on first use.
        module = importlib.import_module(f"shimgen.generate.routes.{row['module']}")
        if row["needs"] not in ("libtorch", "overlay"):
            raise ShimgenError(f"data/routes.yaml: route {row['name']}: needs is libtorch or overlay")
        ordered.append(module.ROUTE_CLASS(row["name"], rank, str(row["cost"]), row["needs"] == "overlay"))
    boxed = [r for r, row in zip(ordered, raw["routes"]) if row.get("boxed")]
    if len(boxed) != 1:
        raise ShimgenError("data/routes.yaml: exactly one route is `boxed: true` (the boxed dispatcher's)")
    return _Registry(tuple(ordered), {r.name: r for r in ordered}, boxed[0])


def ordered() -> tuple[Route, ...]:
    """Every route, in order of preference (data/routes.yaml)."""
    return _registry().ordered


def boxed() -> Route:
    """The route calling any op through libtorch's boxed dispatcher (data/routes.yaml `boxed: true`)."""
    route = _registry().boxed
    assert route is not None
    return route


def get(name: str) -> Route:
    """The route named `name` (as reports and JSON records carry it)."""
    try:
        return _registry().by_name[name]
    except KeyError:
        raise ShimgenError(f"no route named {name!r} (data/routes.yaml)") from None

