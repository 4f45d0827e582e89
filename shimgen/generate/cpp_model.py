"""The typed model of a torch::stable wrapper: its parameters (`Param`), the forms it takes over the releases
(`Variant`, each calling aten through one route, shimgen.generate.routes) and the wrapper itself (`Wrapper`); and
what the signature stage decides for the emitters (`Resolved`: per build world a `Surface`, each variant's `Form`).

sig_cpp computes the wrappers, the routes build variants, signatures.stage.resolve decides everything the emitters
need once, and the emitters only lay it out; this module holds only the shapes, so the routes can build on it
without importing the rules that choose between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchgen.model import Argument

from shimgen.generate.parse import Op
from shimgen.generate.table import Row
from shimgen.facts.versions import Version

if TYPE_CHECKING:  # typing only: the routes build on this module
    from shimgen.generate.plan import Plan, Release, World
    from shimgen.generate.routes import Route
    from shimgen.generate.signatures.c import ShimVersion


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
    # dispatcher route: the `str` parameters (or pushed defaults) whose conversion leaks on the libtorch releases
    # before `guard_from` (the table's leak_free), in a build that did not accept the leak (World.leaky_str): the
    # form asks the running libtorch for its release once per process and raises a `shimgen:` error before it
    guard: tuple[str, ...] = ()
    # ... and a form that computes some calls without the str crossing (a composition) and gives the rest to that
    # guarded dispatcher form: `guard_from` alone (no `guard`: it wins a tie against the dispatcher's)
    guard_from: Version | None = None

    def same_call(self, other: Variant) -> bool:
        """Does `other` call aten the same way (so that neighbouring releases share one range)?"""
        return (self.route, self.kept, self.shim, self.stack, self.lowering, self.none_only, self.guard,
                self.guard_from) == (other.route, other.kept, other.shim, other.stack, other.lowering,
                                     other.none_only, other.guard, other.guard_from)


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

    def return_outs(self) -> str:
        """The return statement of an out= form: the caller's own out tensors (every route hands them back so)."""
        outs = [a.name for a in self.op.schema.arguments.out]
        if self.returns == "void":
            return ""
        if len(outs) == 1:
            return f"return {outs[0]};"
        return f"return std::make_tuple({', '.join(outs)});"

    def active(self, level: Version) -> Variant | None:
        """The variant serving an extension that targets release `level` (None: none does)."""
        for v in self.variants:
            if v.start <= level and (v.end is None or level < v.end):
                return v
        return None


@dataclass(frozen=True)
class Query:
    """What a route is asked at one targeted release: can it call `op` (yaml schema, wrapper parameters `params`)
    for an extension targeting `level`? `at` is the op in that release (plan.timeline), `shims` the op's C shim
    versions (sig_c.versions), `lowering` where its numbers can be lowered to (sig_cpp, None: nowhere)."""

    op: Op
    params: list[Param]
    plan: Plan
    level: Version
    shims: list[ShimVersion]
    at: Release
    lowering: tuple[tuple[str, ...], int] | None

    def fit(self, cap: int, returns_need: Version | None, needs: list[Version | None]) -> int | None:
        """How many leading parameters (of the `cap` the callee takes at self.level) a route carries, or None when
        it cannot serve, given the release from which it hands back the op's returns and the one from which it
        carries each parameter (None: never): a parameter it cannot carry may be dropped only when its default
        is None, and every parameter past `cap` (arguments a later release added) must have a default."""
        if returns_need is None or returns_need > self.level:
            return None
        ps = self.params
        kept = 0
        while kept < cap and (n := needs[kept]) is not None and n <= self.level:
            kept += 1
        if not all(p.none_default for p in ps[kept:cap]) or any(p.default is None for p in ps[cap:]):
            return None
        return kept

    def fallback(self, kept: int) -> tuple[str, ...]:
        """Where a form taking `kept` parameters lowers the numbers its callee would change (or nowhere)."""
        return self.lowering[0] if self.lowering is not None and self.lowering[1] >= kept else ()


@dataclass(frozen=True)
class Extra:
    """A hand-written overload (data/extra_overloads.yaml) that forwards to a generated wrapper. Where that
    wrapper is not generated, or not available at a release, it is left out, or deleted (`delete`: the call it
    exists for must not fall through to another overload, std(t, 0) to std(t, unbiased))."""

    name: str
    target: Wrapper | None
    params: tuple[tuple[str, str, str | None], ...]  # (C++ type, name, default)
    call: tuple[str, ...]  # the arguments it passes to the target
    target_op: str  # `std.correction`
    source: str  # `ATen/Functions.h`
    delete: bool


# ---- what the signature stage decides for the emitters (signatures.stage.resolve) ---------------------------


@dataclass(frozen=True, eq=False)
class Form:
    """One variant of a wrapper as an emitter lays it out: its route's lines of the comment and C++ statements,
    the number rules it takes and the wrapper names its body calls."""

    route_lines: tuple[str, ...]  # the "Route: ..." lines (Route.describe)
    later_notes: tuple[str, ...]  # the lines after the dropped-argument note (Route.later_notes)
    body: str  # the route's C++ statements (Route.body)
    # the Scalar facts' number rules the form takes, each with the wrapper it goes to and that wrapper's form
    # serving the variant's releases (both None for a rule naming a scalar.h kernel)
    rules: tuple[tuple[dict, Wrapper | None, Variant | None], ...]
    calls: tuple[str, ...]  # the other wrapper names its body calls (their headers come first)


@dataclass(eq=False)
class Surface:
    """The wrappers of one build world (plan.world) as an extension built there sees them, decided."""

    plan: Plan
    wrappers: list[Wrapper]
    forms: dict[str, tuple[Form, ...]]  # op name -> the Form of each variant of its wrapper, in order
    gone: dict[str, tuple[Version, str]]  # op name -> (release, what happened) where a later release cannot call it
    # op name (an op of the widest world's) -> the [start, end) ranges of releases where this world cannot call it,
    # each with its message (the op, the reason, the remedy)
    hidden: dict[str, list[tuple[Version, Version | None, str]]]
    extras: list[Extra]  # the hand-written overloads of this world's names
    wide_extras: list[Extra]  # those of the widest world's wrappers of this world's ops


@dataclass(eq=False)
class Resolved:
    """Everything the emitters need of a plan, decided once before any of them runs (signatures.stage.resolve)."""

    plan: Plan
    wrappers: list[Wrapper]  # the plan's own world's (the Python stubs'), C++ collisions resolved
    notes: list[str]  # the overloads skipped, one line each
    gone: dict[str, tuple[Version, str]]  # of `wrappers`, as Surface.gone
    wide: dict[str, Wrapper]  # op name -> its wrapper in the widest world (WORLDS[0])
    leaky: set[str]  # the C++ names with a parameter a leaking conversion carries (their own build worlds)
    worlds: dict[World, Surface]  # per build world; a world refusing leaky strings holds only the `leaky` names
    shims: list[ShimVersion]  # the plan's C shim set (signatures.stage.c_shims)
    shim_notes: list[str]  # the C shims skipped
