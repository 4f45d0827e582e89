"""The signature stage of the pipeline: what a plan generates, before any emitter renders it.

- `wrappers(plan)`: the torch::stable wrappers (sig_cpp), with the overloads skipped as notes;
- `c_shims(plan)`: the C shim set, a product of the plan: every selected op's C shim versions (sig_c), except
  those of an op generated only as another op's lowering target whose wrapper calls no C shim;
- `resolve(plan)`: everything the emitters need, decided once (cpp_model.Resolved): per build world its wrappers,
  each variant's route text and number rules (`Form`), the releases where an op is hidden and why, the
  hand-written overloads; the C shim set. The emitters only lay it out: none asks this stage or a route again.
All are computed once per plan (Plan.derived)."""

from __future__ import annotations

import re

from shimgen.facts import scalar_facts as scalars
from shimgen.facts.versions import FIRST_STABLE, Version
from shimgen.generate import routes
from shimgen.generate.cpp_model import Form, Resolved, ShimVersion, Surface, Variant, Wrapper
from shimgen.generate.signatures import c as sig_c
from shimgen.base.errors import Refusal
from shimgen.generate.parse import Op
from shimgen.generate.plan import WORLDS, Plan, World
from shimgen.generate.signatures.cpp import extras, gone, target_wrapper, wrappers

__all__ = ["active_in", "c_shims", "hidden_ranges", "resolve", "why_hidden", "wrappers"]


def c_shims(plan: Plan) -> tuple[list[ShimVersion], list[str]]:
    """The C shims of the plan's ops in the order torchgen writes them (by shim name; an op's `_vN` versions
    newest first, then its original), and the refusals."""
    cached = plan.derived.get("c_shims")
    if cached is None:
        cached = plan.derived["c_shims"] = _c_shims(plan)
    return cached  # type: ignore[return-value]


def _c_shims(plan: Plan) -> tuple[list[ShimVersion], list[str]]:
    built: list[list[ShimVersion]] = []
    skipped: list[str] = []
    for op in plan.ops:
        if op.added and not _calls_a_shim(op, plan):
            continue  # generated only as a lowering target of another op, and its wrapper calls no C shim
        try:
            built.append(sig_c.versions(op, plan))
        except Refusal as e:
            skipped.append(e.line())
    built.sort(key=lambda vs: vs[0].shim.function)
    return [sv for vs in built for sv in reversed(vs)], skipped


def _calls_a_shim(op: Op, plan: Plan) -> bool:
    """Does the op's wrapper call a C shim through any of its forms? (the wrappers' routes decide.) An op with a
    `str` argument may, in the builds that refuse the leaky `str` route (the default: SHIMGEN_LEAKY_STR undefined),
    whose wrappers the headers carry too: searchsorted.Tensor, generated for searchsorted.Scalar's composition."""
    if any(str(a.type).rstrip("?") == "str" for a in op.schema.arguments.flat_all):
        return True
    w = next((w for w in wrappers(plan)[0] if w.op.name == op.name), None)
    return w is not None and any(v.route.calls_c_shim for v in w.variants)


# ---- everything the emitters need, decided once -------------------------------------------------------------


def resolve(plan: Plan) -> Resolved:
    """What every emitter lays out (cpp_model.Resolved), once per plan: the plan's wrappers and C shim set, and
    per build world (plan.WORLDS) its Surface. Refusing leaky strings changes only the names with a str
    parameter: the worlds refusing them are decided for those names alone."""
    cached = plan.derived.get("resolved")
    if cached is not None:
        return cached  # type: ignore[return-value]
    ws, notes = wrappers(plan)
    wide = {w.op.name: w for w in wrappers(plan.in_world(WORLDS[0]))[0]}
    leaky = {w.name for w in wide.values() if any(p.row.leaks_before for p in w.params)}
    subsets = {world: plan.in_world(world, [op for op in plan.ops if op.name in wide and wide[op.name].name in leaky])
               for world in WORLDS if not world.leaky_str}
    worlds = {world: _surface(subsets.get(world) or plan.in_world(world), wide) for world in WORLDS}
    shims, skipped = c_shims(plan)
    resolved = Resolved(plan, ws, notes, _gone(ws, plan), wide, leaky, worlds, shims, skipped)
    plan.derived["resolved"] = resolved
    return resolved


def _gone(ws: list[Wrapper], plan: Plan) -> dict[str, tuple[Version, str]]:
    return {w.op.name: end for w in ws if (end := gone(w, plan)) is not None}


def _surface(plan: Plan, wide: dict[str, Wrapper]) -> Surface:
    """plan.world's Surface: its wrappers, each variant's Form, and where the widest world's ops are hidden."""
    ws, _ = wrappers(plan)
    here = {w.op.name: w for w in ws}
    planned = {op.name for op in plan.ops}
    wide = {name: w for name, w in wide.items() if name in planned}
    forms = {w.op.name: tuple(_form(w, v, plan) for v in w.variants) for w in ws}
    hidden = {name: hidden_ranges(here.get(name), full, plan) for name, full in wide.items()}
    return Surface(plan, ws, forms, _gone(ws, plan), hidden, extras(ws), extras(list(wide.values())))


def _form(w: Wrapper, v: Variant, plan: Plan) -> Form:
    """The variant's route text (its comment lines, its C++ statements), its number rules and the names it calls."""
    rules = _number_rules(w, v, plan)
    lines, later = tuple(v.route.describe(w, v)), tuple(v.route.later_notes(w, v))
    body = v.route.body(w, v, plan)
    calls = [*_lowered_calls(w, v, plan), *(t.name for _, t, _ in rules if t is not None)]
    return Form(lines, later, body, tuple(rules), tuple(dict.fromkeys(calls)))


def _number_rules(w: Wrapper, v: Variant, plan: Plan) -> list[tuple[dict, Wrapper | None, Variant | None]]:
    """The number rules (scalar facts' number_rules) the form can use, each with the wrapper it goes to and that
    wrapper's form: the number is among the form's parameters and the rule's target wrapper serves the form's
    releases in this build (a rule naming a scalar.h kernel has no target)."""
    result: list[tuple[dict, Wrapper | None, Variant | None]] = []
    rules = scalars.load().number_rules.get(w.op.name)
    if not rules:  # most ops have none
        return result
    kept = {p.name for p in w.kept(v)}
    operands = [p.name for p in w.kept(v) if p.type_text == "Tensor" and not p.is_out]
    for rule in rules:
        if rule["argument"] not in kept or not operands:
            continue
        if "kernel" in rule:
            result.append((rule, None, None))
            continue
        target = target_wrapper(rule["via"], plan)
        tv = target.active(v.start) if target is not None else None
        if tv is None or (tv.end and (v.end is None or tv.end < v.end)):
            continue
        result.append((rule, target, tv))
    return result


def _lowered_calls(w: Wrapper, v: Variant, plan: Plan) -> tuple[str, ...]:
    """The wrapper names a form's body calls: the Tensor sibling its numbers lower to, or a composition's."""
    if not v.lowering:
        return ()
    comp = scalars.load().compositions.get(w.op.name)
    targets = ([target_wrapper(comp[k], plan) for k in ("create", "fill")] if comp else
               [target_wrapper(t, plan) for t in v.lowering])  # a composition may call several (dist: sub, norm)
    return tuple(t.name for t in targets if t is not None)


# ---- what a build cannot call: hidden forms (docs/routes.md "Stable means libtorch alone") ------------------


def _blocker(w: Wrapper, v: Variant, level: Version, plan: Plan) -> str:
    """Why libtorch's own routes cannot carry form `v` of `w` at `level` (for a message)."""
    leaky = plan.world.leaky_str
    for p in w.kept(v):
        need = routes.boxed().carries(p.row, leaky)
        if need is None:
            return f"its `{p.name}` is a {p.arg.type}, which no released boxed dispatcher carries"
        if need > level:
            return f"its boxed dispatcher carries its `{p.name}` ({p.arg.type}) only from {need}"
    return "its boxed dispatcher cannot call it"


def why_hidden(op_name: str, level: Version, here: Wrapper | None, wide: Wrapper | None, plan: Plan) -> str:
    """Why an extension built in plan.world at `level` cannot call the op, and what to do (a compile error's
    message: the op, the reason, the remedy)."""
    op = (here or wide).op  # type: ignore[union-attr]
    later = next((v.start for v in (here.variants if here else ()) if v.start > level), None)
    at = plan.timeline(op)[level]
    if at.schema is None:
        timeline = sorted(plan.timeline(op).items())
        arrived = next((r for r, x in timeline if r > level and x.schema is not None), None)
        if arrived is not None:
            return (f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later or arrived} (aten::{op_name} arrived in "
                    f"{arrived})")
        gone_in = next((r for r, x in reversed(timeline) if r <= level and x.schema is not None), None)
        return f"aten::{op_name} is not in libtorch {level} (removed after {gone_in})"
    wv = (wide.active(level) or next((v for v in wide.variants if v.start > level), None)) if wide else None
    or_later = f", or target TORCH_TARGET_VERSION >= {later}" if later else ""
    # a parameter whose C++ type the stable headers declare only from a later release (torch::stable::Generator)
    params = (wide or here).params  # type: ignore[union-attr]
    typed = next((p for p in params if p.row.header and p.row.header > level), None)
    if typed is not None:
        declared = re.search(r"torch::stable::\w+", typed.row.cpp or "")
        return (f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later or typed.row.header}: the stable headers "
                f"first declare its `{typed.name}` ({typed.arg.type}"
                f"{': ' + declared.group(0) if declared else ''}) in {typed.row.header}, so an extension built for an "
                "older release can neither make nor receive one")
    if wv is None:
        return f"aten::{op_name}: no route carries it at this TORCH_TARGET_VERSION"
    if later is not None and later <= wv.start:
        return f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later} (no libtorch route carries it before)"
    at_level = max(level, wv.start)
    leaks = next((p for p in wide.kept(wv) if p.row.leaks_before and p.row.leaks_before > at_level), None)  # type: ignore[union-attr]
    with_overlay = plan.in_world(World(overlay=True, leaky_str=plan.world.leaky_str))
    if not plan.world.overlay and active_in(op_name, with_overlay, at_level):
        from_ = f" with TORCH_TARGET_VERSION >= {wv.start}" if wv.start > level else ""
        leaky = (", or define SHIMGEN_LEAKY_STR to accept the dispatcher's leak of 48 bytes per call on libtorch "
                 "2.10-2.13" if leaks is not None and not plan.world.leaky_str else "")
        return (f"aten::{op_name} has no libtorch route at this TORCH_TARGET_VERSION: libtorch ships no C shim for "
                f"it and {_blocker(wide, wv, at_level, plan)}. Define SHIMGEN_OVERLAY{from_} and link "  # type: ignore[arg-type]
                f"libshimgen_overlay (rebuilt for each torch release){or_later}{leaky}")
    if plan.world.leaky_str or leaks is None:
        return f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later or wv.start} (no libtorch route carries it before)"
    return (f"aten::{op_name} reaches libtorch before 2.14 only through its boxed dispatcher, which leaks 48 bytes "
            f"per call converting its `{leaks.name}` ({leaks.arg.type}) on libtorch 2.10-2.13: define "
            f"SHIMGEN_LEAKY_STR to accept that leak{or_later}")


def active_in(op_name: str, plan: Plan, level: Version) -> Variant | None:
    """The variant of op `op_name` serving `level` in plan's world (None: hidden there)."""
    by_op = plan.derived.get("wrappers_by_op")
    if by_op is None:
        by_op = plan.derived["wrappers_by_op"] = {x.op.name: x for x in wrappers(plan)[0]}
    w = by_op.get(op_name)  # type: ignore[union-attr]
    return w.active(level) if w is not None else None


def hidden_ranges(here: Wrapper | None, wide: Wrapper, plan: Plan) -> list[tuple[Version, Version | None, str]]:
    """[start, end) ranges of targeted releases where this world cannot call the op although it exists in some
    release, each with its message: before its first form (an op added later, a route that arrives later), in
    builds without an opt-in route (SHIMGEN_OVERLAY, leaky strings), after aten removed it."""
    levels = sorted({*plan.releases(), *(x for v in wide.variants for x in (v.start, v.end) if x),
                     *(x for v in (here.variants if here else ()) for x in (v.start, v.end) if x)})
    levels = [lv for lv in levels if lv >= FIRST_STABLE]
    ranges: list[tuple[Version, Version | None, str]] = []
    for lv in levels:
        if here is not None and here.active(lv) is not None:
            if ranges and ranges[-1][1] is None:
                ranges[-1] = (ranges[-1][0], lv, ranges[-1][2])
            continue
        if plan.timeline(wide.op)[lv].schema is None and not any(v.start > lv for v in wide.variants):
            msg = why_hidden(wide.op.name, lv, here, wide, plan)  # removed: say so
        else:
            msg = why_hidden(wide.op.name, lv, here, wide, plan)
        if ranges and ranges[-1][1] is None and ranges[-1][2] == msg:
            continue
        if ranges and ranges[-1][1] is None:
            ranges[-1] = (ranges[-1][0], lv, ranges[-1][2])
        ranges.append((lv, None, msg))
    return ranges
