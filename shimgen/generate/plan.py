"""A generation plan: which ops, from which yaml, tagged with which versions. Every emitter takes a Plan."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from torchgen.model import Argument, FunctionSchema

from shimgen.facts import history as history_mod
from shimgen.facts import manifest as manifest_mod
from shimgen.facts import releases as releases_mod
from shimgen.facts import scalar_facts as scalars
from shimgen.generate import table as table_mod
from shimgen.facts import upstream_surface
from shimgen.base.errors import ShimgenError
from shimgen.generate.parse import CACHED_PARSE_MIN, NativeYaml, Op
from shimgen.facts.versions import FIRST_STABLE, Version

T = TypeVar("T")


@dataclass(frozen=True)
class World:
    """What an extension's build lets its wrappers call besides libtorch's stable routes (docs/routes.md "Stable means
    libtorch alone"). `overlay`: shimgen's own C shims, which libtorch does not export (the author defines
    SHIMGEN_OVERLAY and links libshimgen_overlay, rebuilt for each torch release). `leaky_str`: `str` arguments
    through the boxed dispatcher of libtorch 2.10-2.13, which leaks 48 bytes per call converting them (off unless
    the author defines SHIMGEN_LEAKY_STR: nothing leaks per call in a build that did not ask for it; without it
    such a call takes a leak-free route or does not compile, its message naming the leak and the remedies)."""

    overlay: bool = True
    leaky_str: bool = True

    @property
    def condition(self) -> str:
        """The preprocessor condition under which an extension's build is this world."""
        return " && ".join([
            "defined(SHIMGEN_OVERLAY)" if self.overlay else "!defined(SHIMGEN_OVERLAY)",
            "defined(SHIMGEN_LEAKY_STR)" if self.leaky_str else "!defined(SHIMGEN_LEAKY_STR)",
        ])

    @property
    def macros(self) -> list[str]:
        """The -D flags an extension's build passes to be this world."""
        return [*(["-DSHIMGEN_OVERLAY"] if self.overlay else []),
                *(["-DSHIMGEN_LEAKY_STR"] if self.leaky_str else [])]

    @property
    def label(self) -> str:
        """Its name on the command line (`shimgen --verify --world default`): the default build is `default`."""
        if self == DEFAULT_WORLD:
            return "default"
        return "-".join([*(["overlay"] if self.overlay else []), *(["leaky-str"] if self.leaky_str else [])])


# Every world an extension can build in; the first is the widest (what --verify, the Python stubs and the docs
# describe), the default build (no macro) is DEFAULT_WORLD.
WORLDS = (World(True, True), World(True, False), World(False, True), World(False, False))
DEFAULT_WORLD = World(overlay=False, leaky_str=False)


def world_named(label: str) -> World:
    """The world of a command-line label (World.label); ShimgenError naming the choices otherwise."""
    for w in WORLDS:
        if w.label == label:
            return w
    raise ShimgenError(f"unknown build world {label!r}: choose one of {', '.join(w.label for w in WORLDS)}")


@dataclass
class Plan:
    ops: list[Op]
    table: table_mod.Table
    manifest: manifest_mod.Manifest
    release: Version | None  # the torch release the yaml comes from (None: unknown)
    since: Version | None  # --since: the version tag of ops the manifest does not know
    notes: list[str] = field(default_factory=list)
    native: NativeYaml | None = field(default=None, repr=False, compare=False)  # the yaml the ops came from
    history: history_mod.History = field(default_factory=history_mod.load, repr=False, compare=False)
    # Results derived from the plan that several emitters need (e.g. the C++ wrappers), computed once. Not an
    # __init__ field: a copy (dataclasses.replace(plan, ops=...)) starts with its own empty cache, never the
    # original's (whose wrappers are those of other ops).
    derived: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)
    world: World = field(default_factory=World)
    # How routes are chosen, both True in every generated surface. `overlay_ties_to_libtorch`: a route needing
    # libtorch alone beats an overlay shim taking as many parameters (the overlay only adds forms); False is the
    # order where the overlay's shim won ties, for a test that observes a shim's own overload being called and for
    # benchmarks/bench_new_routes.py's old overlay build. `share_across_worlds`: a build without the overlay reuses
    # the overlay build's answers that take no overlay route (sig_cpp.variant_at); False only to test that it
    # changes nothing.
    overlay_ties_to_libtorch: bool = True
    share_across_worlds: bool = True

    def in_world(self, world: World, ops: list[Op] | None = None) -> Plan:
        """This plan as an extension built in `world` sees it (the release facts it has computed are shared);
        `ops`: only those ops (a plan of its own: the world's full plan stays what in_world(world) returns). A plan
        made so asks the plan it was made from: one plan per world and op set, whichever world asks (the
        default build's message naming the overlay build's form reads the overlay plan resolve computed)."""
        origin = self.derived.get("origin")
        if origin is not None:  # made by in_world: its origin's memo holds every world's plan, each made once
            root, subset = origin  # type: ignore[misc]
            return root.in_world(world, subset if ops is None else ops)
        if world == self.world and ops is None:
            return self
        key = ("world", world) if ops is None else ("world", world, tuple(op.name for op in ops))
        cached = self.derived.get(key)  # type: ignore[call-overload]
        if cached is None:
            cached = replace(self, world=world) if ops is None else replace(self, world=world, ops=ops)
            self._per_op()  # one memo for every world (created before the copy, so that they share it)
            cached.derived.update({k: v for k, v in self.derived.items() if k in ("releases", "per_op", "build")})
            cached.derived["origin"] = (self, ops)
            self.derived[key] = cached  # type: ignore[index]
        return cached  # type: ignore[return-value]

    def index_wrappers(self, build: Callable[[str, Plan], Any]) -> None:
        """Called by the signature stage before it asks any route: `build(name, plan)` makes the (uncollided)
        wrapper of op `name` (a shimgen.generate.cpp_model.Wrapper, or None), which wrapper_of hands out. The plan
        is the data the wrappers are computed from, below the model: it keeps what the stage builds, once per
        op, without naming the model's types."""
        self.derived.setdefault("build", build)

    def wrapper_of(self, name: str) -> Any:
        """The (uncollided) wrapper of op `name` in this plan's world (a cpp_model.Wrapper), None where it has
        none: what a route or a composition kernel asks of the wrappers it calls (a lowering target, a
        composition's ops), built once per plan. The plan hands it down, so that neither asks the signature stage
        again."""
        built = self.derived.get("wrappers_of")
        if built is None:
            built = self.derived["wrappers_of"] = {}
        if name not in built:  # type: ignore[operator]
            build = self.derived.get("build")
            if build is None:
                raise ShimgenError("internal: the plan's wrappers are asked before the signature stage indexed them")
            built[name] = build(name, self)  # type: ignore[index, operator]
        return built[name]  # type: ignore[index]

    def _per_op(self) -> dict:
        return self.derived.setdefault("per_op", {})  # type: ignore[return-value]

    def per_op(self, key: tuple, compute: Callable[[], T]) -> T:
        """compute()'s value, once for this plan and every world of it (in_world): for results that depend on one
        op and the plan's data (table, manifest, history, releases) but not on the world. `key` names the result
        and the op, e.g. ("timeline", "add.Tensor")."""
        memo = self.derived.get("per_op")  # asked ~200,000 times for a whole yaml: no setdefault's new dict
        if memo is None:
            memo = self._per_op()
        try:
            return memo[key]  # type: ignore[return-value]
        except KeyError:
            value = memo[key] = compute()
            return value

    @property
    def banner(self) -> str:
        source = f"torch {self.release}'s" if self.release else "an unknown release's"
        return f"Generated by shimgen from {source} native_functions.yaml. DO NOT EDIT."

    def shim_since(self, op: Op) -> Version:
        """The release whose libtorch first carries this op's C shim (manifest, else --since, else the yaml's)."""
        entry = self.manifest.entries.get(op.name)
        if entry is not None:
            return entry.since
        if self.since is not None:
            return self.since
        if self.release is not None:
            return self.release
        why = f" ({self.native.release_problem})" if self.native and self.native.release_problem else ""
        raise ShimgenError(
            f"cannot tell which torch release the yaml comes from{why}, so no version tag; pass --since X.Y", op.name
        )


    # ---- the op's schema in each release (data/history.json, with the yaml's own schema at its release) -------

    def releases(self) -> list[Version]:
        """Every release the version rules consider: the stable ABI's first, the history's, the yaml's."""
        cached = self.derived.get("releases")
        if cached is None:
            found = {FIRST_STABLE, *self.history.releases}
            if self.release is not None:
                found.add(self.release)
            cached = self.derived["releases"] = sorted(r for r in found if r >= FIRST_STABLE)
        return cached  # type: ignore[return-value]

    def follows_history(self, op: Op) -> bool:
        """Does the history describe this op? Only if it knows the yaml's release and, where that release is one
        the history covers, agrees with the yaml's schema there (a fixture or a patched yaml is not that
        release). Otherwise the yaml's schema is taken to hold in every release, as before shimgen had history."""
        h = self.history
        if self.release is None or h.newest is None:
            return False
        if self.release > h.newest:  # a newer yaml: the history tells the past, the yaml the present
            return True
        text = h.schema_text(op.name, self.release)
        if text is None:
            return False
        return history_mod.compare(history_mod.parse_schema(text), op.schema).kind in _AGREE

    def timeline(self, op: Op) -> dict[Version, Release]:
        """The op in every release of releases(): its schema there and how it relates to the yaml's."""
        return self.per_op(("timeline", op.name), lambda: self._timeline(op))

    def schema_at(self, op: Op, release: Version) -> FunctionSchema | None:
        """The op's schema in `release` (one of releases()); None where aten lacks the op."""
        return self.timeline(op)[release].schema

    def op_named(self, name: str) -> Op | None:
        """The plan's op of that aten overload name, or the yaml's (None: neither has it)."""
        by_name = self.derived.get("ops_by_name")
        if by_name is None:
            by_name = self.derived["ops_by_name"] = {o.name: o for o in self.ops}
        op = by_name.get(name)  # type: ignore[union-attr]
        if op is None and self.native is not None:
            try:
                op = self.native.select([name], self.table)[0]
            except ShimgenError:
                return None
        return op

    def _timeline(self, op: Op) -> dict[Version, Release]:
        """The yaml's schema holds at its own release (and, past the newest release the history knows, from there
        on); ops the history does not describe hold the yaml's schema in every release."""
        same = Release(op.schema, True, True)
        if not self.follows_history(op):
            return {r: same for r in self.releases()}
        assert self.release is not None
        h, newest = self.history, self.history.newest
        assert newest is not None
        own = h.schema_text(op.name, min(self.release, newest)) if self.release <= newest else None
        result: dict[Version, Release] = {}
        for r in self.releases():
            if r == self.release or (r > newest and r >= self.release):
                result[r] = same
                continue
            text = h.schema_text(op.name, min(r, newest))
            if text is None:
                result[r] = Release(None, False, False)
            elif text == own:  # the yaml's release has this very schema
                result[r] = Release(history_mod.parse_schema(text), True, True)
            else:
                schema = history_mod.parse_schema(text)
                flat = history_mod.compare(schema, op.schema).compatible
                c = history_mod.compare(schema, op.schema, c_order=True).compatible
                result[r] = Release(schema, flat, c)
        return result


@dataclass(frozen=True)
class Release:
    """An op in one release: its schema (None: absent), and whether it is compatible with the yaml's schema for
    the boxed stack (stack order) and for the C shim (C order): history.compare says compatible."""

    schema: FunctionSchema | None
    stack_compatible: bool
    c_compatible: bool

    @functools.cached_property
    def flat_arguments(self) -> tuple[Argument, ...]:
        """The schema's arguments in schema order (torchgen's flat_all, which builds a new list on every call;
        the routes ask at every release of every op)."""
        return tuple(self.schema.arguments.flat_all) if self.schema is not None else ()


# The yaml agrees with the history at its release when the schemas differ at most in argument names or defaults.
_AGREE = (history_mod.Kind.SAME, history_mod.Kind.DEFAULT_CHANGED, history_mod.Kind.RENAMED)


def make(
    ops: list[str] | None, yaml_path: str | None = None, since: str | None = None, additive: bool = False,
    overlay_ties_to_libtorch: bool = True, share_across_worlds: bool = True,
) -> Plan:
    """The plan for `ops` (None: the manifest's default set). `additive` (what the command line does unless
    --only): upstream's surface for the release, the manifest's default set as far as the yaml has it, is
    included too, so a generated ops.h never takes a wrapper away from code written against upstream's."""
    since_v = releases_mod.parse(since, "--since") if since is not None else None
    table = table_mod.load()
    manifest = manifest_mod.load()
    native = NativeYaml(yaml_path)
    notes: list[str] = []
    chosen: dict[str, Op] = {}
    present = set(native.all_op_names())
    if additive or not ops:
        # the manifest's set and upstream's surface of the yaml's release (a newer torch's: read from its ops.h)
        surface = upstream_surface.for_yaml(native.release, native.path, sorted(present))
        base = sorted(o for o in {*manifest.default_ops, *surface} if o in present)
        chosen.update((op.name, op) for op in (native.select(base, table, notes) if base else []))
    for op in native.select(ops, table, notes) if ops else []:  # an error if all of its own are refused
        chosen[op.name] = op if op.explicit or op.name not in chosen else chosen[op.name]
    if not chosen:
        raise ShimgenError("no op selected")
    selected = sorted(chosen.values(), key=lambda op: op.name)
    # The overloads the selected ones lower their numbers to (scalars.py) are generated too.
    have = {op.name for op in selected}
    # (Only those this yaml has: without its sibling, a wrapper falls back to its other routes.)
    # Transitively: add_.Tensor's composition calls add.Tensor, whose equivalent calls subtract.Tensor.
    frontier = [op.name for op in selected]
    while frontier:
        wanted = sorted({t for name in frontier for t in (*scalars.targets(name), *scalars.vias(name))}
                        & present - have)
        if not wanted:
            break
        extra = [replace(op, explicit=False, added=True) for op in native.select(wanted, table, notes)]
        selected = sorted([*selected, *extra], key=lambda op: op.name)
        have |= {op.name for op in extra}
        frontier = [op.name for op in extra]
    if len(selected) >= CACHED_PARSE_MIN:  # many ops: their schemas in every release, parsed, from the cache
        history_mod.preload_schemas()
    plan = Plan(selected, table, manifest, native.release, since_v, notes, native=native,
                overlay_ties_to_libtorch=overlay_ties_to_libtorch, share_across_worlds=share_across_worlds)
    for op in selected:  # fail early (before anything is written) if a version tag cannot be computed
        plan.shim_since(op)
    return plan
