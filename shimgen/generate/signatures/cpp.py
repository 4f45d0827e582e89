"""torch::stable C++ wrapper signatures: names, parameters, defaults, routes and version ranges.

One aten overload becomes one C++ function (`Wrapper`) with one or more `Variant`s, each serving a range of
targeted releases. The rules (docs/design.md "How versions are tagged"):

* Parameters follow the schema (out= arguments first, as upstream's `sum_out`); types come from the table.
* Route, per targeted release L: every route of shimgen.generate.routes (data/routes.yaml, in order of preference:
  libtorch's C shim, the boxed dispatcher, the Tensor sibling or composition, shimgen's overlay shim) says
  which form it offers at L. A route may drop trailing parameters that L cannot carry when their default is None (they
  are passed as None): that is how upstream keeps `clone(self)` and `empty_like(self)` at 2.9. A route that carries
  every parameter at L still wins over a preferred one that drops some (clamp's Scalar? min/max at 2.13).
* The variant chosen at each release from 2.9 on is computed; equal neighbours merge into one range. The
  wrapper's version tag is the start of its first range: the newest thing the first variant needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from torchgen.model import Argument, OptionalType

from shimgen.facts import history, scalar_facts as scalars
from shimgen.generate import overloads, routes
from shimgen.generate.signatures import c as sig_c
from shimgen.generate.cpp_model import Extra, Param, Query, ShimVersion, Variant, Wrapper
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.table import Row, Table, render_default
from shimgen.facts.versions import FIRST_STABLE, Version

_CPP_KEYWORDS = {"and", "or", "not", "xor", "new", "delete", "bitand", "bitor", "compl", "default", "register"}


def cpp_name(op: Op) -> str:
    """`add` for add.Tensor, `add_` for add_.Tensor, `sum_out` for sum.IntList_out."""
    name = op.schema.name.name
    base = str(name)
    if op.schema.is_out_fn():
        base = f"{name.base}_out"
    return base + "_" if base in _CPP_KEYWORDS else base


def cpp_order(op: Op) -> list[Argument]:
    args = op.schema.arguments
    return [*args.out, *args.flat_non_out] if op.schema.is_out_fn() else list(args.flat_all)


# ---- parameters and returns --------------------------------------------------------------------------------


def params(op: Op, table: Table) -> list[Param]:
    """The wrapper's parameters, with ATen's C++ defaults: the schema's, except those native_functions.yaml
    lists in `cpp_no_default_args` (torchgen leaves them out of at:: signatures so that overloads do not
    compete for the same call: clamp's `min`, std's `unbiased`, arange.start_step's `step`)."""
    out_names = {a.name for a in op.schema.arguments.out}
    no_default = op.f.cpp_no_default_args
    result: list[Param] = []
    for a in cpp_order(op):
        row = table.argument(a.type, op.name, a.name)
        is_out = a.name in out_names
        cpp_type = row.cpp_out if (is_out and row.cpp_out) else row.cpp
        if not cpp_type:
            raise Refusal(f"type {a.type} has no C++ representation", op.name, a.name)
        try:
            default = None
            if a.default is not None and not is_out:
                default = render_default(a.default, row, table)  # rendered (validated) even if not used
                default = None if a.name in no_default else default
        except Refusal as e:
            raise Refusal(e.reason, op.name, a.name) from None
        result.append(Param(a, row, row.fill(cpp_type, a.name), default, False, is_out))
    # An optional with no schema default gets `= std::nullopt` when everything after it has a default
    # (upstream's `sum(self, dim = std::nullopt, ...)`): callers may omit it like in Python. One whose schema
    # default ATen drops (cpp_no_default_args) stays required.
    for i in range(len(result) - 1, -1, -1):
        p = result[i]
        if p.default is not None:
            continue
        if isinstance(p.arg.type, OptionalType) and not p.is_out and p.arg.default is None:
            result[i] = replace(p, default="std::nullopt", synthesized=True)
        else:
            break
    return result


def return_type(op: Op, table: Table) -> str:
    s = op.schema
    if s.is_out_fn():
        outs = s.arguments.out
        if any(not a.type.is_tensor_like() or str(a.type) != "Tensor" for a in outs):
            return "void"  # list outs (split_copy.Tensor_out): the caller already holds what was written
        if len(outs) == 1:
            return "torch::stable::Tensor&"
        return "std::tuple<" + ", ".join("torch::stable::Tensor" for _ in outs) + ">"
    if s.name.name.inplace and s.returns:  # in-place ops return self (some, like _foreach_add_, return nothing)
        return "torch::stable::Tensor"
    types = [table.ret(r.type, op.name, f"return {i}").cpp for i, r in enumerate(s.returns)]
    if not types:
        return "void"
    return types[0] if len(types) == 1 else "std::tuple<" + ", ".join(types) + ">"


# ---- routes and variants -----------------------------------------------------------------------------------


def variant_at(op: Op, ps: list[Param], plan: Plan, level: Version, shims: list[ShimVersion]) -> Variant | None:
    """What an extension targeting release `level` calls for `op`, or None if it can call nothing (hidden there).

    The op must exist in `level` with a schema compatible with the yaml's (plan.schema_at); the wrapper then
    takes the yaml's parameters that `level`'s schema (or the C shim version shipped by then) has, dropping later
    ones, which get their schema defaults. Each route takes the parameters it can carry at `level`; the route
    that takes the most wins, ties going to a route needing libtorch alone over the overlay, then to the preferred
    route (libtorch's shim, the dispatcher, shimgen's shim; `_better`): dropping is how older releases get a narrower
    form, never a reason to narrow a release that can do better.
    """
    at = plan.timeline(op)[level]
    if at.schema is None:
        return None
    lowering = _lowering_at(op, ps, plan, level)
    # A world differs from another only in what sig_cpp and the routes read of it: whether overlay routes are asked
    # (World.overlay) and what a leaking conversion carries (World.leaky_str, passed to every route), with the
    # lowering targets' own forms (`lowering`). So where the overlay world's answer for the same leaky_str and
    # lowering takes no overlay route (or none at all), the world without the overlay has that answer too: the
    # routes it drops did not win. tests/test_model_memo.py compares both ways for every op of the yaml.
    key = ("variant_at", op.name, level, plan.world.leaky_str, lowering)
    memo = plan.per_op(("variant_memo",), dict)
    if plan.share_across_worlds:
        if (True, *key) in memo:
            wide = memo[(True, *key)]
            if wide is None or not wide.route.overlay:
                return wide
        if (plan.world.overlay, *key) in memo:
            return memo[(plan.world.overlay, *key)]
    best = memo[(plan.world.overlay, *key)] = _variant_at(op, ps, plan, level, shims, at, lowering)
    return best


def _variant_at(op: Op, ps: list[Param], plan: Plan, level: Version, shims: list[ShimVersion], at,
                lowering: tuple[tuple[str, ...], int] | None) -> Variant | None:
    query = Query(op, ps, plan, level, shims, at, lowering)
    best: Variant | None = None
    for route in routes.ordered():
        if route.overlay and not plan.world.overlay:
            continue  # shimgen's own shims need the overlay library: only where the author opts in
        v = route.variant_at(query)
        if v is not None and (best is None or _better(v, best, plan.overlay_ties_to_libtorch)):
            best = v
    # Where no route takes every parameter, the dispatcher may still take an optional one it cannot carry, as
    # None: the call works whenever the caller leaves it None (std(t, {1}) is std.correction, correction=None).
    if best is None or best.kept < len(ps):
        v = routes.boxed().variant_at(query, none_only=True)  # type: ignore[call-arg]
        if v is not None and v.none_only and (best is None or v.kept > best.kept):
            best = v
    return best


def _better(v: Variant, best: Variant, overlay_ties_to_libtorch: bool) -> bool:
    """Whether v beats best: it takes more parameters, or as many without the overlay where best needs it. So the
    overlay only adds forms: defining SHIMGEN_OVERLAY never moves a call libtorch alone serves to another route
    (whose refusals differ: the overlay's shim carries a Scalar as a double and refuses arange(10), which libtorch's
    composition serves). With `overlay_ties_to_libtorch` False (Plan's field) the overlay's shim, earlier in
    routes.yaml than the compositions, wins ties. Before both, a form that raises on some runtimes it targets (a
    guarded `str` on the dispatcher, Variant.guard) loses a tie to one that computes on all of them: div's str
    composition, or the overlay's C shim in a build that links it."""
    if v.kept != best.kept:
        return v.kept > best.kept
    if bool(v.guard) != bool(best.guard):
        return not v.guard
    return overlay_ties_to_libtorch and best.route.overlay and not v.route.overlay


# ---- Scalars: lowering to a Tensor sibling or a composition (shimgen/facts/scalar_facts.py) -----------------


def target_wrapper(name: str, plan: Plan) -> Wrapper | None:
    """The (uncollided) wrapper of a lowering target, built once per plan (Plan.wrapper_of)."""
    plan.index_wrappers(_build_named)
    return plan.wrapper_of(name)


def _build_named(name: str, plan: Plan) -> Wrapper | None:
    """The wrapper of op `name` as build makes it: the plan's op, or the yaml's (None: neither has a wrapper)."""
    op = plan.op_named(name)
    try:
        return build(op, plan) if op is not None else None
    except ShimgenError:
        return None


def _lowering_at(op: Op, ps: list[Param], plan: Plan, level: Version) -> tuple[tuple[str, ...], int] | None:
    """(targets, how many parameters the lowered call takes) at `level`, or None where the targets cannot serve.
    A sibling takes the parameters it has at `level` (in the same places); a composition takes them all."""
    targets = scalars.targets(op.name)
    if not targets or not any(p.row.stand_in for p in ps):
        return None
    variants = []
    for t in targets:
        w = target_wrapper(t, plan)
        v = w.active(level) if w is not None else None
        if v is None:
            return None
        variants.append((w, v))
    if len(targets) == 1:
        kept = variants[0][1].kept
        if any(p.default is None for p in ps[kept:]):
            return None
        return targets, kept
    if any(v.kept < len(w.params) for w, v in variants):
        return None
    return targets, len(ps)


def variants(op: Op, ps: list[Param], plan: Plan) -> list[Variant]:
    """The variants of the wrapper over the releases, each serving [start, end): consecutive releases that call
    the op the same way share one; a release with no way to call it (absent, incompatible) ends the range."""
    plan.index_wrappers(_build_named)  # what the routes ask of the wrappers they call (Plan.wrapper_of)
    try:
        shims = sig_c.versions(op, plan)
    except Refusal:
        shims = []
    levels = set(plan.releases()) | {plan.shim_since(op)} | {sv.since for sv in shims}
    for p in ps:
        levels |= {v for v in (p.row.since, p.row.dispatcher_since, p.row.ivalue) if v is not None}
    for r in op.schema.returns:
        row = plan.table.ret(r.type, op.name, "return")
        levels |= {v for v in (row.since, row.dispatcher_since) if v is not None}
    for t in scalars.targets(op.name):
        tw = target_wrapper(t, plan)
        levels |= {x for v in (tw.variants if tw else ()) for x in (v.start, v.end) if x is not None}
    result: list[Variant] = []
    for level in sorted(x for x in levels if x >= FIRST_STABLE):
        v = variant_at(op, ps, plan, level, shims)
        is_open = bool(result) and result[-1].end is None
        if v is None:
            if is_open:
                result[-1] = replace(result[-1], end=level)
            continue
        if is_open and result[-1].same_call(v):
            continue
        if is_open:
            result[-1] = replace(result[-1], end=level)
        result.append(v)
    return result


def gone(w: Wrapper, plan: Plan) -> tuple[Version, str] | None:
    """(release, what happened) when a release after the wrapper's last variant cannot call the op: aten removed
    it, or changed it incompatibly. An extension using the wrapper then fails on that libtorch and later."""
    last = w.variants[-1]
    if last.end is None:
        return None
    schema = plan.schema_at(w.op, last.end)
    if schema is None:
        return last.end, "removed"
    change = history.compare(schema, w.op.schema)
    return last.end, f"changed incompatibly ({change.detail or change.kind.value})"


def gone_notes(plan: Plan) -> list[str]:
    """A note per wrapper whose op a later release removes or breaks (the CLI prints them)."""
    notes = []
    for w in wrappers(plan)[0]:
        end = gone(w, plan)
        if end is not None:
            notes.append(f"{w.op.name}: {end[1]} in {end[0]}: an extension using it fails on libtorch >= {end[0]}")
    return notes


def build(op: Op, plan: Plan) -> Wrapper:
    # The world without the overlay takes the overlay world's wrapper (same leaky_str) where none of its forms takes
    # an overlay route, the op lowers its numbers nowhere and calls no other wrapper by a fact (whose route may be
    # the overlay's there: _foreach_norm's linalg_vector_norm at 2.13): variant_at then answers every release of it
    # as the overlay world did (the routes it drops won nowhere), so its variants would be the same, rebuilt.
    built = plan.per_op(("built",), dict)
    key = (op.name, plan.world.leaky_str)
    if (plan.share_across_worlds and not plan.world.overlay and not scalars.targets(op.name)
            and not scalars.vias(op.name)):
        wide = built.get((True, *key))
        if wide is not None and wide.op is op and not any(v.route.overlay for v in wide.variants):
            return wide
    ps = plan.per_op(("params", op.name), lambda: params(op, plan.table))
    vs = variants(op, ps, plan)
    if not vs:
        raise Refusal("no route can call this op from an extension (no C shim, no dispatcher conversion)", op.name)
    w = built[(plan.world.overlay, *key)] = Wrapper(op, cpp_name(op), tuple(ps), return_type(op, plan.table), tuple(vs))
    return w


# ---- overload sets -----------------------------------------------------------------------------------------


def _overlap(va: Variant, vb: Variant) -> bool:
    """Do two variants serve some release in common?"""
    inf = Version(10**6, 0)
    return max(va.start, vb.start) < min(va.end or inf, vb.end or inf)


def _collide(a: Wrapper, b: Wrapper, va: Variant | None = None, vb: Variant | None = None) -> bool:
    """Could one call resolve to both? (same parameter types for some argument count both accept, at a release
    both variants serve). Without variants: any pair of variants."""
    if va is None or vb is None:
        return any(_collide(a, b, x, y) for x in a.variants for y in b.variants)
    if not _overlap(va, vb):
        return False
    pa, pb = a.kept(va), b.kept(vb)
    lo = max(sum(1 for p in pa if p.default is None), sum(1 for p in pb if p.default is None))
    for n in range(lo, min(len(pa), len(pb)) + 1):
        if [p.cpp_type for p in pa[:n]] == [p.cpp_type for p in pb[:n]]:
            return True
    return False


def _required(ps: tuple[Param, ...]) -> int:
    """How many leading parameters a call must pass (C++ defaults are trailing)."""
    return max((i + 1 for i, p in enumerate(ps) if p.default is None), default=0)


def _competes(a: Wrapper, b: Wrapper) -> bool:
    """Could a call an author writes reach both, ambiguously, at some release both serve? (the overload model:
    same argument count, and every argument converting as well to both, or better to each somewhere)"""
    for va in a.variants:
        for vb in b.variants:
            if not _overlap(va, vb):
                continue
            pa, pb = a.kept(va), b.kept(vb)
            for n in range(max(_required(pa), _required(pb)), min(len(pa), len(pb)) + 1):
                if overloads.may_tie([p.cpp_type for p in pa[:n]], [p.cpp_type for p in pb[:n]]):
                    return True
    return False


def _without_synthesized(w: Wrapper) -> Wrapper:
    ps = tuple(replace(p, default=None, synthesized=False) if p.synthesized else p for p in w.params)
    return replace(w, params=ps)


def _full(w: Wrapper) -> Wrapper:
    """`w` with only the variants that take every parameter (all of them if none does)."""
    full = tuple(v for v in w.variants if v.kept == len(w.params))
    return replace(w, variants=full) if full else w


def _without_narrowed_dupes(w: Wrapper, others: list[Wrapper]) -> Wrapper:
    """`w` without its narrowed older forms that read like one of `others` (div.Tensor_mode without
    rounding_mode is div.Tensor): such a form adds nothing, and the wrapper starts at its next form."""
    dupes = [
        v for v in w.variants
        if v.kept < len(w.params) and any(_collide(o, w, ov, v) for o in others for ov in o.variants)
    ]
    if dupes and len(dupes) < len(w.variants):
        w = replace(w, variants=tuple(v for v in w.variants if v not in dupes))
    return w


def _redefines(a: Wrapper, b: Wrapper) -> bool:
    """Would two forms be one C++ function (the same parameter types) at a release both serve?"""
    return any(
        _overlap(x, y) and [p.cpp_type for p in a.kept(x)] == [p.cpp_type for p in b.kept(y)]
        for x in a.variants
        for y in b.variants
    )


def wrappers(plan: Plan) -> tuple[list[Wrapper], list[str]]:
    """All wrappers of the plan, C++ overload collisions resolved, and refusals as notes.

    Every overload of a schema name is a C++ overload of ATen's name for it (docs/design.md "C++ naming rules"), with
    ATen's C++ defaults (`params`). Where two overloads of a name could take the same call at some release,
    the defaults only shimgen adds yield: a narrowed older form of either that duplicates the other's full
    form is dropped; then, if a call an author writes could reach both (`_competes`, the overload model), the
    synthesized `= std::nullopt` defaults of the later one (by aten overload name order), and if that is not
    enough the earlier one's, are removed; a narrowed form of the later one that still duplicates the other is
    dropped. What then still competes for a call competes in ATen too (range,
    stft: the call is ambiguous there as well). Only two forms with the same parameter types (one C++
    function) cannot coexist: the later overload is then named `<name>_<overload>` (none in 2.9-2.15).
    The result does not depend on which overload sorts first (randn.out stays `randn_out(out, size)`).
    """
    cached = plan.derived.get("wrappers")
    if cached is not None:
        return cached  # type: ignore[return-value]
    built: list[Wrapper] = []
    notes: list[str] = []
    for op in plan.ops:
        try:
            built.append(build(op, plan))
        except Refusal as e:
            notes.append(e.line())
    final: list[Wrapper] = []
    named: dict[str, list[int]] = {}  # name -> indices into final (a scan per wrapper would be quadratic)
    for w in built:
        same = list(named.get(w.name, []))
        # The rules hold whichever of two overloads comes first (randn.generator_out sorts before randn.out):
        # an earlier overload's narrowed forms and synthesized defaults yield to a later overload's full form
        # as the later one's yield to the earlier one's.
        for i in same:
            final[i] = _without_narrowed_dupes(final[i], [_full(w)])
        if any(_competes(final[i], _full(w)) for i in same):
            w = _without_synthesized(w)
            for i in same:
                if _competes(final[i], _full(w)):
                    final[i] = _without_synthesized(final[i])
        w = _without_narrowed_dupes(w, [final[i] for i in same])
        if any(_redefines(final[i], w) for i in same):
            w = replace(w, name=f"{w.name}_{w.op.overload or 'default'}")
        named.setdefault(w.name, []).append(len(final))
        final.append(w)
    same_name: dict[str, list[Wrapper]] = {}
    for w in final:
        same_name.setdefault(w.name, []).append(w)
    final = [_with_nullopt_forwarding(w, same_name[w.name], plan) for w in final]
    plan.derived["wrappers"] = (final, notes)
    return final, notes


def _nullopt_ties(w: Wrapper, o: Wrapper, k: int) -> bool:
    """Does `name(<w's first k parameters>, std::nullopt)` reach `o` as well as `w` at some release?"""
    conv = overloads.load()
    for vw in w.variants:
        for vo in o.variants:
            pw, po = w.kept(vw), o.kept(vo)
            if not _overlap(vw, vo) or len(pw) <= k or len(po) <= k:
                continue
            if [p.cpp_type for p in pw[:k]] != [p.cpp_type for p in po[:k]]:
                continue
            if conv.rank(po[k].cpp_type, "nullopt") is None:
                continue
            if all(p.default is not None for p in (*pw[k + 1 :], *po[k + 1 :])):
                return True
    return False


def _with_nullopt_forwarding(w: Wrapper, ws: list[Wrapper], plan: Plan) -> Wrapper:
    """Upstream's ops.h resolves `sum(t, std::nullopt)` (its only `sum` is sum.dim_IntList); ATen's at::sum
    does not (sum.default's `dtype` takes the std::nullopt as well). A wrapper of upstream's surface (the
    manifest) whose optional parameter ties that way with another overload gets an overload taking
    `std::nullopt_t` there, an exact match, so code written against upstream's header keeps compiling and
    keeps its meaning whatever else is selected. `ws`: the wrappers named as `w` (itself among them)."""
    if w.op.name not in plan.manifest.entries:
        return w
    conv = overloads.load()
    at = []
    for k, p in enumerate(w.params):
        if p.is_out or conv.rank(p.cpp_type, "nullopt") is None:
            continue
        if any(o is not w and o.name == w.name and _nullopt_ties(w, o, k) for o in ws):
            at.append(k)
    return replace(w, nullopt_at=tuple(at)) if at else w


# ---- hand-written overloads (ATen's C++-only ones, upstream's helpers) -------------------------------------


def _declaration(text: str) -> tuple[str, str, str | None]:
    """`bool copy = false` -> ("bool", "copy", "false")."""
    decl, _, default = text.partition("=")
    typ, _, name = decl.strip().rpartition(" ")
    return typ, name, default.strip() or None


def extras(ws: list[Wrapper]) -> list[Extra]:
    """The hand-written overloads of the names the plan generates, in the order of the data file."""
    by_op = {w.op.name: w for w in ws}
    result = []
    for spec in overloads.extra_overloads():
        target = by_op.get(spec["target"])
        name = target.name if target else spec["target"].partition(".")[0]
        same = [w for w in ws if w.name == name]
        if target is None and (spec["missing"] == "omit" or not same):
            continue
        own = {p.name: p for w in ([target] if target else same) for p in w.params}
        params = tuple((own[t].cpp_type, t, None) if t in own else _declaration(t) for t in spec["params"])
        result.append(Extra(name, target, params, tuple(spec["call"]), spec["target"], spec["source"],
                            spec["missing"] == "delete"))
    return result


# ---- overload sets as the model sees them ---------------------------------------------------------------------


def overload_set(
    ws: list[Wrapper], name: str, level: Version, typer: Callable[[Param], str] | None = None
) -> list[overloads.Candidate]:
    """Every C++ function named `name` an extension targeting release `level` sees, for overloads.resolve: the
    wrappers (their form at that release), their std::nullopt_t overloads and ATen's C++-only overloads; each
    labelled with the aten overload it calls; for `<name>_outf`, the faithful forms of the `<name>_out` wrappers.
    `typer` gives a parameter's C++ type (default: its own), to ask how another representation would resolve."""
    result = []
    typer = typer or (lambda p: p.cpp_type)
    faithful = [w for w in ws if w.name + "f" == name and w.op.schema.is_out_fn()]  # `sum_outf`
    ws = [w for w in ws if w.name == name]  # an extra overload's target has the extra's name

    def add(label: str, types: list[str], defaults: list[bool]) -> None:
        required = len(defaults) - next((i for i, d in enumerate(reversed(defaults)) if not d), len(defaults))
        result.append(overloads.Candidate(label, tuple(types), required))

    for w in ws:
        v = next((v for v in w.variants if v.start <= level and (v.end is None or level < v.end)), None)
        if v is None:
            continue
        ps = w.kept(v)
        add(w.op.name, [typer(p) for p in ps], [p.default is not None for p in ps])
        for k in w.nullopt_at:
            if k < len(ps):
                types = [("std::nullopt_t" if i == k else typer(p)) for i, p in enumerate(ps)]
                add(w.op.name, types, [i > k and p.default is not None for i, p in enumerate(ps)])
    for w in faithful:
        v = next((v for v in w.variants if v.start <= level and (v.end is None or level < v.end)), None)
        if v is not None:
            ps = [p for p in w.kept(v) if not p.is_out] + [p for p in w.kept(v) if p.is_out]
            add(w.op.name, [typer(p) for p in ps], [False] * len(ps))
    for e in extras(ws):
        if e.name != name:
            continue
        types, defaults = [t for t, _, _ in e.params], [d is not None for _, _, d in e.params]
        if e.target is not None and e.target.since <= level:
            add(e.target_op, types, defaults)
        elif e.delete:
            add(f"deleted {name}({', '.join(types)})", types, defaults)
    return result
