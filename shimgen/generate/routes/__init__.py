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
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_yaml
from shimgen.facts.versions import Version
from shimgen.generate.cpp_model import Query

if TYPE_CHECKING:  # typing only
    from shimgen.generate.cpp_model import Variant, Wrapper
    from shimgen.generate.parse import Op
    from shimgen.generate.plan import Plan
    from shimgen.generate.table import Row, Table

__all__ = ["Query", "Route", "boxed", "get", "ordered"]


@dataclass(frozen=True, eq=False)
class Route:
    """The interface every route implements (see the module docstring). Instances are made once, from
    data/routes.yaml, and compared by identity."""

    name: str
    rank: int
    cost: str
    overlay: bool  # needs shimgen's overlay library besides libtorch
    calls_c_shim = False  # a call through it goes to a C shim the plan generates
    boxed = False  # a call through it goes through libtorch's boxed dispatcher, which converts the returns itself
    lowers = False  # a call through it calls another overload (whose own checks word aten's errors otherwise)
    exact_integral_defaults = False  # its C shim rebuilds an integral schema default exactly (table aten_default)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Route({self.name})"

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    # ---- what it can carry --------------------------------------------------------------------------------

    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        """The first release from which this route carries a value of `row`'s type; None: never. `leaky`: the
        extension accepts a conversion that leaks (plan.World.leaky_str)."""
        raise NotImplementedError

    def returns_need(self, op: Op, table: Table) -> Version | None:
        """The first release from which this route hands back the op's returns; None: never."""
        raise NotImplementedError

    def variant_at(self, q: Query) -> Variant | None:
        """The form this route gives the wrapper at q.level, or None."""
        raise NotImplementedError

    # ---- how a call through it is emitted -----------------------------------------------------------------

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        """The "Route: ..." line(s) of the wrapper's comment."""
        raise NotImplementedError

    def later_notes(self, w: Wrapper, v: Variant) -> list[str]:
        """Comment lines after the note on dropped arguments (none by default)."""
        return []

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        """The C++ statements of the wrapper form."""
        raise NotImplementedError

    # ---- a surface of its own, besides the default wrappers (none by default) -----------------------------
    # A route whose calls must be asked for by name (the device route: torch::stable::cpu::, like at::cpu::)
    # offers no form to the default wrappers and emits its own headers instead.

    @property
    def owned(self) -> tuple[str, ...]:
        """Output folders (ending in "/") whose .h files only this route writes."""
        return ()

    def wrappers(self, plan: Plan, ws: list[Wrapper]) -> list[Wrapper]:
        """The wrappers of the route's own surface (its namespace), made from the plan's wrappers `ws`
        (signatures.stage.wrappers)."""
        return []

    def files(self, plan: Plan, ws: list[Wrapper]) -> dict[str, str]:
        """The files of the route's own surface: output-relative path -> text."""
        return {}


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

