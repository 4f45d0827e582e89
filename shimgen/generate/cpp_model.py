"""The typed model of a torch::stable wrapper: its parameters (`Param`), the forms it takes over the releases
(`Variant`, each calling aten through one route, shimgen.generate.routes) and the wrapper itself (`Wrapper`).

sig_cpp computes them, the routes build variants, emit_cpp renders them; this module holds only the shapes, so
the routes can build on it without importing the rules that choose between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchgen.model import Argument

from shimgen.generate.parse import Op
from shimgen.generate.table import Row
from shimgen.facts.versions import Version

if TYPE_CHECKING:  # typing only: the routes build on this module
    from shimgen.generate.routes import Route


@dataclass(frozen=True)
class Param:
    arg: Argument
    row: Row
    cpp_type: str
    default: str | None  # C++ default expression
    synthesized: bool = False  # `= std::nullopt` added to an optional with no schema default
    is_out: bool = False

    @property
    def name(self) -> str:
        return self.arg.name

    @property
    def none_default(self) -> bool:
        return self.default == "std::nullopt"

    def need(self, route: Route, leaky: bool = False) -> Version | None:
        """The release this parameter needs on a route; None: the route cannot carry it. `leaky`: the extension
        accepts a dispatcher conversion that leaks (plan.World.leaky_str)."""
        return route.carries(self.row, leaky)


@dataclass(frozen=True)
class Variant:
    route: Route
    kept: int  # how many parameters (in C++ order) the variant takes; the rest get their defaults
    start: Version
    end: Version | None = None  # first release it does not serve (a fuller variant, or none); None: open-ended
    shim: str | None = None  # the C shim function called (shim routes): the newest `_vN` shipped by `start`
    shim_nargs: int = 0  # how many arguments (C order) that shim takes
    stack: tuple[Argument, ...] = ()  # dispatcher route: what is pushed, in stack order (routes/dispatcher.py)
    # Scalar ops (shimgen/facts/scalar_facts.py): the wrappers a call is lowered to where the C shim's double would
    # change a number (the Tensor sibling, or a composition's ops); on the `sibling` route, always.
    lowering: tuple[str, ...] = ()
    # dispatcher route: optional parameters it carries only as None (a type no release's dispatcher carries,
    # Scalar?): a call passing a value raises a `shimgen:` error
    none_only: tuple[str, ...] = ()


@dataclass(frozen=True)
class Wrapper:
    op: Op
    name: str
    params: tuple[Param, ...]
    returns: str  # C++ return type
    variants: tuple[Variant, ...]
    # C++ parameter positions where a `std::nullopt_t` overload forwards to this wrapper (`_with_nullopt_forwarding`)
    nullopt_at: tuple[int, ...] = ()

    @property
    def since(self) -> Version:
        return self.variants[0].start

    def kept(self, v: Variant) -> tuple[Param, ...]:
        return self.params[: v.kept]

    def active(self, level: Version) -> Variant | None:
        """The variant serving an extension that targets release `level` (None: none does)."""
        for v in self.variants:
            if v.start <= level and (v.end is None or level < v.end):
                return v
        return None
