"""The typed model of a torch::stable wrapper: its parameters (`Param`), the forms it takes over the releases
(`Variant`, each calling aten through one route) and the wrapper itself (`Wrapper`); the interface every route
implements (`Route`, the routes themselves are shimgen.generate.routes) and what a route is asked (`Query`); a C
shim's signature and the releases that carry it (`CShim`, `ShimVersion`, computed by signatures/c.py); and what the
signature stage decides for the emitters (`Resolved`: per build world a `Surface`, each variant's `Form`).

sig_cpp computes the wrappers, the routes build variants, signatures.stage.resolve decides everything the emitters
need once, and the emitters only lay it out; this module holds only the shapes, so the routes and the signature
rules can build on it without importing the rules that choose between them. It names no later stage, only the
plan (the data it is computed from, for types) and what the plan is built on: the routes and the signature modules
import it, never the other way round."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from torchgen.model import Argument

from shimgen.generate.parse import Op
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import Version

if TYPE_CHECKING:  # typing only: the plan is the data the model is computed from, below it
    from shimgen.generate.plan import Plan, Release, World


# ---- a C shim's signature (signatures/c.py computes them) -------------------------------------------------


@dataclass(frozen=True)
class CShim:
    op: Op
    function: str  # aoti_torch_aten_add_Tensor (aoti_torch_aten_<name>_v<N> for a later version)
    params: tuple[str, ...]  # "AtenTensorHandle self", ... , "AtenTensorHandle* ret0"
    aten_args: tuple[str, ...]  # expressions rebuilding the ATen arguments
    backend_call: str  # at::add
    ret_assignments: tuple[str, ...]  # "*ret0 = new_tensor_handle(std::move(tmp_result));"
    nargs: int = 0  # how many schema arguments (in C order) it takes; the others get their schema default
    version: int = 1  # N of torchgen's `_vN` names (1: the original name)
    declaration: str = field(init=False, compare=False)  # `AOTITorchError aoti_torch_aten_add_Tensor(...)`

    def __post_init__(self) -> None:
        object.__setattr__(self, "declaration", f"AOTITorchError {self.function}({', '.join(self.params)})")


@dataclass(frozen=True)
class ShimVersion:
    shim: CShim
    since: Version  # the first release whose libtorch (upstream) or overlay (shimgen's) carries it
    upstream: bool  # libtorch ships it (manifest); otherwise shimgen generates it


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

    @cached_property  # asked for every form of every world: torchgen rebuilds the text on every str()
    def type_text(self) -> str:
        """The schema type as written: `Tensor`, `int[1]?`."""
        return str(self.arg.type)

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


@dataclass(frozen=True, eq=False)
class Route:
    """The interface every route implements (shimgen.generate.routes' docstring: what each method answers, how to
    add a route). Instances are made once, from data/routes.yaml, and compared by identity."""

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
