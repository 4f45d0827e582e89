"""Emit torch/csrc/stable/ops.h: one inline torch::stable wrapper per selected overload, plus upstream's helpers.

The wrappers of each C++ name live in torch/csrc/stable/ops/<name>.h (as ATen's ATen/ops/<op>.h), which
includes the shared prelude (torch/csrc/stable/shimgen/ops_prelude.h) and the headers of the names its bodies
call; ops.h includes them all."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from shimgen.generate import kernel_sections
from shimgen.facts import releases, scalar_facts as scalars
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_text, read_bytes
from shimgen.generate.cpp_model import Extra, Form, Resolved, Surface, Variant, Wrapper
from shimgen.generate.plan import WORLDS, Plan, World
from shimgen.generate.templates import render
from shimgen.facts.versions import FIRST_STABLE, VERSIONED_DISPATCHER, Version, macro_definitions

HEADER = "torch/csrc/stable/ops.h"
SCALAR_HEADER = "torch/csrc/stable/shimgen/scalar.h"
DISPATCH_HEADER = "torch/csrc/stable/shimgen/dispatch.h"  # cxx/dispatch.h, kept as written (fmt.UNFORMATTED)
# cxx/operators.h, kept as written: the opt-in helpers of a port (Tensor operators, item<T>, accessors)
OPERATORS_HEADER = "torch/csrc/stable/shimgen/operators.h"
# cxx/autograd.h, kept as written: a port's stand-in for torch::autograd::Function (its forward and backward as ops)
AUTOGRAD_HEADER = "torch/csrc/stable/shimgen/autograd.h"
# cxx/cuda.h, kept as written: a port's stand-ins for ATen's CUDA stream and device helpers
CUDA_HEADER = "torch/csrc/stable/shimgen/cuda.h"
PRELUDE_HEADER = "torch/csrc/stable/shimgen/ops_prelude.h"
OP_HEADERS = "torch/csrc/stable/ops/"


def op_header(name: str) -> str:
    """The header holding the wrappers named `name`."""
    return f"{OP_HEADERS}{name}.h"


def read_wrapper_headers(out: str) -> str:
    """ops.h, its prelude and every per-name header in the output folder out, as one text (a build's digest)."""
    paths = [HEADER, PRELUDE_HEADER]
    ops_dir = os.path.join(out, OP_HEADERS)
    paths += [OP_HEADERS + n for n in sorted(os.listdir(ops_dir))] if os.path.isdir(ops_dir) else []
    texts = []
    for rel in paths:
        try:  # read without blocking: a FIFO in its place is refused like a missing file
            texts.append(f"{rel}\n{read_bytes(os.path.join(out, rel), rel).decode('utf-8', errors='replace')}")
        except ShimgenError:
            texts.append(f"{rel} missing\n")
    return "".join(texts)


def wrapper_texts(files: dict[str, str]) -> str:
    """ops.h and every per-name header of an output, as one text (for readers of the wrappers' comments)."""
    return "".join(text for path, text in sorted(files.items())
                   if path == HEADER or (path.startswith(OP_HEADERS) and path.endswith(".h")))


@dataclass(frozen=True)
class _Rendered:
    doc: list[str]
    gate_open: str | None
    gate_close: str | None
    signature: str
    body: str
    deleted: bool = False  # `signature = delete;`, no body
    hidden: str | None = None  # a form this build cannot call: a template whose static_assert says why
    unused: tuple[str, ...] = ()  # a hidden form's parameter names, which its body marks used (-Wunused-parameter)
    name: str = ""  # the C++ name: which torch/csrc/stable/ops/<name>.h holds it
    calls: tuple[str, ...] = ()  # the other wrapper names its body calls (their headers come first)


def gate(v: Variant) -> tuple[str | None, str | None]:
    conds = []
    if v.start > FIRST_STABLE:
        conds.append(f"TORCH_FEATURE_VERSION >= {v.start.macro}")
    if v.end is not None:
        conds.append(f"TORCH_FEATURE_VERSION < {v.end.macro}")
    return _gate_lines(conds)


def _gate_lines(conds: list[str]) -> tuple[str | None, str | None]:
    """The `#if` and `#endif` lines of all of `conds` (None, None: no condition)."""
    if not conds:
        return None, None
    text = " && ".join(conds)
    return f"#if {text}", f"#endif // {text}"


def signature(w: Wrapper, v: Variant) -> str:
    parts = []
    for p in w.kept(v):
        default = f" = {p.default}" if p.default is not None else ""
        parts.append(f"{p.cpp_type} {p.name}{default}")
    return f"inline {w.returns} {w.name}({', '.join(parts)})"


def doc(w: Wrapper, v: Variant, form: Form, end: tuple[Version, str] | None) -> list[str]:
    """The wrapper form's comment; `end`: (release, what happened) where a later release cannot call it."""
    lines = [f"Stable wrapper of aten::{w.op.schema_text}", ""]
    lines.append(f"Minimum compatible version: PyTorch {w.since}.")
    lines.append(f"Build time minimum version: PyTorch {build_time_minimum(w, v)}.")
    before = next((u for u in w.variants if u.end == v.start), None)
    if before is not None and before.guard_from is not None and before.kept == v.kept and v.guard_from is None:
        lines.append(f"From target {v.start} no runtime leaks its str: this form never raises for it.")
    elif v.start != w.since:
        every = ", with every argument," if v.kept == len(w.params) else ""
        lines.append(f"This form{every} needs PyTorch {v.start}.")
    lines += form.route_lines
    dropped = w.params[v.kept :]
    if dropped and v.end is not None:
        names = ", ".join(p.name for p in dropped)
        defaults = ", ".join(p.arg.default or "None" for p in dropped)
        lines.append(f"This form, for releases before {v.end}, does not take {names}: aten gets their defaults "
                     f"({defaults}).")
    lines += form.later_notes
    if end is not None and v is w.variants[-1]:
        lines.append(f"{end[1].capitalize()} in PyTorch {end[0]}: an extension using it fails on libtorch >= "
                     f"{end[0]}.")
    return lines


# The oldest torch whose stable headers compile the generated ops.h at all (data/releases.yaml).
HEADERS_FLOOR = releases.load().headers_floor


def build_time_minimum(w: Wrapper, v: Variant) -> Version:
    """The oldest torch whose headers compile this form: its start (the TORCH_FEATURE_VERSION it needs) and the
    headers the generated ops.h needs at all. Extensions build with a recent torch and set TORCH_TARGET_VERSION
    for older runtimes, as PyTorch recommends."""
    return max(v.start, HEADERS_FLOOR)


def render_wrapper(w: Wrapper, v: Variant, form: Form, end: tuple[Version, str] | None) -> _Rendered:
    rules = _number_rules(w, v, form)
    body = "\n".join([*autocast_first(w, v, _autocast_probe(rules)), *(text for _, text in rules), form.body])
    g_open, g_close = gate(v)
    lines = doc(w, v, form, end)
    for rule, _ in rules:
        lines.append(_rule_note(rule))
    lines += _autocast_note(rules)
    return _Rendered(lines, g_open, g_close, signature(w, v), body, name=w.name, calls=form.calls)


def _number_rules(w: Wrapper, v: Variant, form: Form) -> list[tuple[dict, str]]:
    """(rule, the statement taking it) for each number rule the form takes (Form.rules)."""
    result: list[tuple[dict, str]] = []
    if not form.rules:  # most forms take none
        return result
    operands = [p.name for p in w.kept(v) if p.type_text == "Tensor" and not p.is_out]
    for rule, target, tv in form.rules:
        a, value = rule["argument"], rule["value"]
        tensors = ", ".join(f"&{t}" for t in operands)
        checks = []  # one short statement per number kind: the layout rules (cpp_layout) write them directly
        # no_grad: aten's gradient formula differs from via's (pow(x, 0.5)'s backward is 0.5 * x^-0.5, sqrt's
        # grad / (2 * sqrt(x))): taken only where autograd records nothing
        untracked = f"!shimgen::detail::records_grad({{{tensors}}})"  # asked last: two dispatcher calls
        for kind, cats in sorted(rule["cells"].items()):
            if value == "integer":  # any integer (an integral alpha the kernel converts as aten does)
                flag, test = f"{a}_is_int", f"is_integer({a})"
            else:
                number = int(value) if kind == "int" else float(value)
                flag = f"{a}_is_{_identifier(number)}"
                test = f"is_int({a}, {number})" if kind == "int" else f"is_double({a}, {number!r})"
            mask = sum(1 << SCALAR_TYPE_VALUES[c] for c in cats)
            checks.append((f"const bool {flag} = shimgen::detail::{test};",
                           f"// {', '.join(cats)}",
                           f"{flag} && shimgen::detail::dtypes_in<{len(operands)}>({mask:#x}, {{{tensors}}})"))
        if "kernel" in rule:  # scalar.h's shimgen::detail::<kernel>_select: its arguments in order, C++ literals
            args = ", ".join(("true" if a else "false") if isinstance(a, bool) else str(a) for a in rule["args"])
            call = f"shimgen::detail::{rule['kernel']}_select({args})"
        else:
            args = ", ".join(rule["args"][p.name] for p in target.kept(tv))  # type: ignore[union-attr]
            call = f"{target.name}({args})"  # type: ignore[union-attr]
        take = f"if ({untracked}) {{\nreturn {call};\n}}" if rule.get("no_grad") else f"return {call};"
        result.append((rule, "\n".join(f"{decl}\n{comment}\nif ({cond}) {{\n{take}\n}}"
                                       for decl, comment, cond in checks)))
    return result


def _identifier(number: int | float) -> str:
    """A number as part of a C++ name: 2 -> 2, 0.5 -> 0_5, -1.0 -> minus_1_0."""
    return repr(number).replace("-", "minus_").replace(".", "_")


# torch::headeronly::ScalarType's enumerator values (c10/core/ScalarType.h), the bits of a number rule's dtype mask
# (scalar.h dtypes_in)
SCALAR_TYPE_VALUES = {"Byte": 0, "Char": 1, "Short": 2, "Int": 3, "Long": 4, "Half": 5, "Float": 6, "Double": 7,
                      "ComplexHalf": 8, "ComplexFloat": 9, "ComplexDouble": 10, "Bool": 11, "BFloat16": 15,
                      "UInt16": 27, "UInt32": 28, "UInt64": 29}


def _autocast_probe(rules: list[tuple[dict, str]]) -> str | None:
    """The overload whose autocast policy the number rules follow (rule key `autocast`: the op's own, probed by a
    Tensor overload of the same autocast list), if any."""
    probes = sorted({rule["autocast"] for rule, _ in rules if rule.get("autocast")})
    assert len(probes) <= 1, probes
    return probes[0] if probes else None


def autocast_first(w: Wrapper, v: Variant, probe: str | None) -> list[str]:
    """Where autocast would compute the op in another dtype (the policy of `probe`, an overload of the op's autocast
    list, probed on empty tensors of the first operand's dtype and device: scalar.h autocast_dtype), the wrapper
    again on the operands as autocast casts them (autocast_cast): aten's kernel, and the number rules or the
    composition proven in that dtype, then run in it."""
    if probe is None:
        return []
    op, _, overload = probe.partition(".")
    operands = [p.name for p in w.kept(v) if p.type_text == "Tensor" and not p.is_out]
    args = ", ".join(f"shimgen::detail::autocast_cast({p.name}, autocast)" if p.name in operands else p.name
                     for p in w.kept(v))
    return [f'const auto autocast = shimgen::detail::autocast_dtype("aten::{op}", "{overload}", {operands[0]});',
            f"if (autocast != {operands[0]}.scalar_type()) {{", f"return torch::stable::{w.name}({args});", "}"]


def _autocast_note(rules: list[tuple[dict, str]]) -> list[str]:
    """The doc comment's line for the number rules' autocast rule."""
    probe = _autocast_probe(rules)
    if probe is None:
        return []
    return [f"Where autocast would compute aten::{probe} in another dtype (float16 and bfloat16 tensors under "
            "CUDA's autocast, which computes pow in float32), the operands are first cast as autocast casts them "
            "(shimgen::detail::autocast_cast), so that aten's kernel and these rules run in that dtype."]


def _rule_note(rule: dict) -> str:
    """The doc comment's line for a number rule."""
    proven = ", ".join(rule["proven"])
    if "kernel" in rule:
        cells = ", ".join(c for cats in rule["cells"].values() for c in cats)
        where = " where autograd records nothing (aten's gradient formula differs)" if rule.get("no_grad") else ""
        number = "an integer" if rule["value"] == "integer" else rule["value"]
        return (f"{rule['argument']} = {number} on {cells} tensors goes to "
                f"shimgen::detail::{rule['kernel']}_select{where}, which computes what aten's kernel computes with "
                f"dispatching aten calls (proven equal on torch {proven}).")
    if rule.get("no_grad"):
        return (f"{rule['argument']} = {rule['value']} goes to aten::{rule['via']}, as aten's Scalar kernel "
                f"computes it, where autograd records nothing (aten's gradient formula differs; proven equal on "
                f"torch {proven}).")
    return (f"{rule['argument']} = {rule['value']} goes to aten::{rule['via']}, as aten's Scalar kernel "
            f"computes it (proven equal, gradients included, on torch {proven}).")


def _value_type(cpp_type: str) -> str:
    """`const std::optional<T>&` -> `std::optional<T>`: the type a forwarding overload constructs."""
    return cpp_type.removeprefix("const ").removesuffix("&")


def render_nullopt_overload(w: Wrapper, v: Variant, k: int) -> _Rendered:
    """The `std::nullopt_t` overload of a wrapper form (made by sig_cpp.wrappers)."""
    ps = w.kept(v)
    parts, args = [], []
    for i, p in enumerate(ps):
        if i == k:
            parts.append(f"std::nullopt_t {p.name}")
            args.append(f"{_value_type(p.cpp_type)}({p.name})")
            continue
        default = f" = {p.default}" if (i > k and p.default is not None) else ""
        parts.append(f"{p.cpp_type} {p.name}{default}")
        args.append(p.name)
    doc = [
        f"{w.name}() with std::nullopt for {ps[k].name}: aten::{w.op.name}, as with upstream's ops.h. Another",
        f"overload of {w.name} takes a std::nullopt there too (ATen's at::{w.name} is ambiguous for this call).",
    ]
    g_open, g_close = gate(v)
    body = f"return {w.name}({', '.join(args)});"
    return _Rendered(doc, g_open, g_close, f"inline {w.returns} {w.name}({', '.join(parts)})", body, name=w.name)


def render_outf(w: Wrapper, v: Variant) -> _Rendered:
    """ATen's faithful form of an out= overload, `<name>_outf` (at::sum_outf): every argument, in the schema's
    order, the out tensors last. It calls the `_out` form with the very types it takes (an exact match)."""
    ps = w.kept(v)
    faithful = [p for p in ps if not p.is_out] + [p for p in ps if p.is_out]
    params = ", ".join(f"{p.cpp_type} {p.name}" for p in faithful)
    doc = [f"{w.name} with every argument and the out tensors last, as ATen's at::{w.name}f: aten::{w.op.name}."]
    g_open, g_close = gate(v)
    body = f"return {w.name}({', '.join(p.name for p in ps)});"
    return _Rendered(doc, g_open, g_close, f"inline {w.returns} {w.name}f({params})", body, name=w.name)


def render_extra(e: Extra, reason: str | None = None, returns: str | None = None) -> list[_Rendered]:
    """A hand-written overload (data/extra_overloads.yaml): forwarding to its target wrapper from the release
    that has it; before that, and where the target is not generated, deleted or left out."""
    params = ", ".join(f"{t} {n}" + (f" = {d}" if d is not None else "") for t, n, d in e.params)
    w = e.target
    what = "ATen's C++-only overload" if e.source.startswith("ATen") else "Upstream's convenience overload"
    intro = f"{what} of {e.name} ({e.source}), for aten::{e.target_op}"
    returns = w.returns if w is not None else (returns or "void")
    why = (f"torch::stable::{e.name}({', '.join(t for t, _, _ in e.params)}) calls aten::{e.target_op}, which "
           f"this build cannot call: {reason}" if reason else
           f"torch::stable::{e.name}({', '.join(t for t, _, _ in e.params)}) calls aten::{e.target_op}, which is "
           "not generated (add it to --ops)")
    deleted = _Rendered(
        [f"{intro}, which is not available here: a compile error saying why, so that such a call does not",
         f"reach another overload of {e.name}."],
        None, None, f"inline {returns} {e.name}({params})", "", name=e.name, hidden=why,
        unused=tuple(n for _, n, _ in e.params),
    )
    if w is None:
        return [deleted]
    doc = [f"{intro}, its other arguments defaulted.", "", f"Minimum compatible version: PyTorch {w.since}."]
    g_open, g_close = gate(Variant(w.variants[0].route, 0, w.since, w.variants[-1].end))
    body = f"return {w.name}({', '.join(e.call)});"
    result = [_Rendered(doc, g_open, g_close, f"inline {returns} {e.name}({params})", body, name=e.name,
                        calls=(w.name,))]
    if e.delete and w.since > FIRST_STABLE:
        d_open, d_close = gate(Variant(w.variants[0].route, 0, FIRST_STABLE, w.since))
        result.append(replace(deleted, gate_open=d_open, gate_close=d_close))
    return result


def _in_dependency_order(ws: list[Wrapper]) -> list[Wrapper]:
    """The wrappers in their order, except that a wrapper another one lowers its numbers to comes before it."""
    by_op = {w.op.name: w for w in ws}
    done: set[str] = set()
    ordered: list[Wrapper] = []

    def visit(w: Wrapper) -> None:
        if w.op.name in done:
            return
        done.add(w.op.name)
        for v in w.variants:
            for t in v.lowering:
                if t in by_op:
                    visit(by_op[t])
        ordered.append(w)

    for w in ws:
        visit(w)
    return ordered


def _leak_dropped_forms(mine: Wrapper, full: Wrapper, plan: Plan) -> list[tuple[_Rendered, tuple]]:
    """Where this build's form drops trailing parameters the wide build carries only through the leaking `str`
    conversion (gelu(x, "tanh") below 2.14 without SHIMGEN_LEAKY_STR), a hidden form taking them (no defaults
    up to the first dropped one, so a call leaving them out never reaches it): such a call is a compile error
    naming the leak and the remedies, not a bare "no matching function"."""
    if plan.world.leaky_str:
        return []
    out = []
    for v, wv in ((v, wv) for v in mine.variants for wv in full.variants):
        start = max(v.start, wv.start)
        end = min((x for x in (v.end, wv.end) if x is not None), default=None)
        if (end is not None and end <= start) or wv.kept <= v.kept:
            continue
        dropped = full.kept(wv)[v.kept :]
        leaks = next((p for p in dropped if p.row.leaks_before and p.row.leaks_before > start), None)
        if leaks is None:
            continue
        end = min((x for x in (end, leaks.row.leaks_before) if x is not None), default=None)
        later = f"target TORCH_TARGET_VERSION >= {leaks.row.leaks_before}"
        message = (f"aten::{full.op.name} takes `{leaks.name}` ({leaks.arg.type}) before {leaks.row.leaks_before} "
                   f"only through libtorch's boxed dispatcher, which leaks 48 bytes per call converting it on "
                   f"libtorch 2.10-2.13: define SHIMGEN_LEAKY_STR to accept that leak, or {later}, or leave "
                   f"`{leaks.name}` out")
        params = full.kept(wv)
        strip = {p.name for p in params[: v.kept + 1]}
        sig_params = [_param(p.cpp_type, p.name, None if p.name in strip else p.default) for p in params]
        g_open, g_close = gate(Variant(wv.route, 0, start, end))
        out.append((_Rendered([f"Not available in this build: {message}."], g_open, g_close,
                              f"inline {full.returns} {mine.name}({', '.join(sig_params)})", "", name=mine.name,
                              hidden=_cpp_message(f"torch::stable::{mine.name}: {message}"),
                              unused=tuple(p.name for p in params)), (start, end)))
    return out


def _param(cpp_type: str, name: str, default: str | None) -> str:
    return f"{cpp_type} {name}" + (f" = {default}" if default is not None else "")


def render_hidden(w: Wrapper, v: Variant, start: Version, end: Version | None, message: str) -> _Rendered:
    """A form this build cannot call, as the caller would write it: a template whose static_assert fires only
    when a call reaches it (overload resolution among the forms that do exist is unchanged: a call they serve
    as well or better never instantiates it), printing the op, the reason and the remedy at the call site."""
    g_open, g_close = gate(Variant(v.route, 0, start, end))
    doc = [f"Not available in this build: {message}."]
    return _Rendered(doc, g_open, g_close, signature(w, v), "", name=w.name,
                     hidden=f"torch::stable::{w.name}: {message}", unused=tuple(p.name for p in w.kept(v)))


def _render_world(s: Surface, wide: dict[str, Wrapper]) -> tuple[dict[str, list[_Rendered]], set[Version]]:
    """Every form of every name as an extension built in s.plan.world sees it (hidden forms included)."""
    plan = s.plan
    ws = _in_dependency_order(s.wrappers)
    here = {w.op.name: w for w in ws}
    planned = {op.name for op in plan.ops}
    wide = {name: w for name, w in wide.items() if name in planned}
    rendered: list[_Rendered] = []
    versions: set[Version] = set()
    hidden = s.hidden
    order = [*ws, *(w for name, w in wide.items() if name not in here)]
    for w in order:
        mine = here.get(w.op.name)
        for v, decided in zip(mine.variants, s.forms[w.op.name]) if mine else ():
            rendered.append(render_wrapper(mine, v, decided, s.gone.get(w.op.name)))  # type: ignore[arg-type]
            rendered += [render_nullopt_overload(mine, v, k) for k in mine.nullopt_at if k < v.kept]  # type: ignore[union-attr]
            if w.op.schema.is_out_fn():
                rendered.append(render_outf(mine, v))  # type: ignore[arg-type]
            versions |= {x for x in (v.start, v.end) if x is not None}
        full = wide.get(w.op.name)
        if full is None:
            continue
        ranges = hidden[w.op.name]
        declared = max((p.row.header for p in full.params if p.row.header), default=FIRST_STABLE)
        for start, end, message in ranges:
            if end is not None and end <= declared:
                continue  # its parameter types do not exist in headers of those releases (table `header`)
            start = max(start, declared)
            form = mine or full
            v = full.active(start) or next((x for x in form.variants if x.start > start), form.variants[0])
            rendered.append(render_hidden(replace(full, name=form.name), v, start, end, _cpp_message(message)))
            versions |= {x for x in (start, end) if x is not None}
        if mine is not None:
            for r, bounds in _leak_dropped_forms(mine, full, plan):
                rendered.append(r)
                versions |= {x for x in bounds if x is not None}
    mine = list(s.extras)
    seen = {(e.target_op, e.params) for e in mine}
    mine += [e for e in s.wide_extras if (e.target_op, e.params) not in seen]
    for e in mine:
        reason = next((m for a, b, m in hidden.get(e.target_op, []) if a <= FIRST_STABLE), None)
        known = e.target or wide.get(e.target_op)
        returns = known.returns if known else None
        if e.target is not None and e.target.op.name not in here:
            e = replace(e, target=None)
        rendered += render_extra(e, _cpp_message(reason) if reason else None, returns)
    by_name: dict[str, list[_Rendered]] = {}
    for r in rendered:
        by_name.setdefault(r.name, []).append(r)
    return by_name, versions


def _cpp_message(text: str) -> str:
    """A message for a static_assert's string literal (quotes and backslashes escaped)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _world_condition(group: list[World]) -> str:
    """The preprocessor condition selecting exactly the worlds of `group` (among WORLDS)."""
    for attr, macro, positive in (("overlay", "SHIMGEN_OVERLAY", True), ("leaky_str", "SHIMGEN_LEAKY_STR", True)):
        for value in (True, False):
            if set(group) == {w for w in WORLDS if getattr(w, attr) == value}:
                return f"defined({macro})" if value == positive else f"!defined({macro})"
    return " || ".join(f"({w.condition})" for w in group)


def emit(r: Resolved) -> dict[str, str]:
    """ops.h, its prelude, the per-name headers and the Scalar and kernel headers of what the signature stage
    decided (signatures.stage.resolve)."""
    plan, notes, wide, leaky = r.plan, r.notes, r.wide, r.leaky
    # Refusing leaky strings changes only the names with a str parameter: the other names are rendered once.
    worlds = {world: _render_world(r.worlds[world], wide) for world in WORLDS}
    for world in WORLDS:
        if not world.leaky_str:
            same = worlds[World(world.overlay, True)][0]
            worlds[world][0].update({n: units for n, units in same.items() if n not in leaky})
    versions: set[Version] = {VERSIONED_DISPATCHER, Version(2, 11)}
    for _, vs in worlds.values():
        versions |= vs
    names = sorted({n for by_name, _ in worlds.values() for n in by_name})
    plain = plain_names(plan, wide)
    declared = _shim_declarations(r)
    versions |= {sv.since for sv in r.shims}  # the per-op headers' C shim declarations are gated too
    files = {HEADER: render("ops.h.j2", banner=plan.banner, names=names,
                            skipped=[*sorted(plan.notes), *notes], helper_names=set(names))}
    markers = [(r.major * 100 + r.minor, fn) for r, fn in releases.load().libtorch_markers]
    floor = releases.load().headers_floor
    known = [r for r in releases.known() if r >= floor]
    # per headers' release, the targets a build may not pair with them (newer ones)
    newer_targets = [(h, [t for t in known if t > h]) for h in known if any(t > h for t in known)]
    files[PRELUDE_HEADER] = render("ops_prelude.h.j2", banner=plan.banner, macros=macro_definitions(versions),
                                   markers=markers, newer_targets=newer_targets)
    sections = kernel_sections.load()
    used: set[str] = set()  # the kernel sections the per-op headers include
    for name in names:
        groups: list[tuple[list[World], list[_Rendered]]] = []
        for world, (by_name, _) in worlds.items():
            units = by_name.get(name, [])
            same = next((g for g in groups if g[1] == units), None)
            if same is None:
                groups.append(([world], units))
            else:
                same[0].append(world)
        if name not in plain:
            groups = [(group, [defer(r) for r in units]) for group, units in groups]
        blocks = []
        for k, (group, units) in enumerate(groups):
            if len(groups) == 1:
                blocks.append({"open": None, "close": None, "wrappers": units})
                continue
            cond = _world_condition(group)
            head = "#if" if k == 0 else "#elif"
            opener = "#else" if k == len(groups) - 1 else f"{head} {cond}"
            closer = "#endif" if k == len(groups) - 1 else None
            blocks.append({"open": opener, "close": closer, "wrappers": units})
        deps = sorted({c for _, units in groups for r in units for c in r.calls if c != name})
        called = sorted({f for _, units in groups for r in units for f in _SHIM_CALL_RE.findall(r.body)})
        kernels = sections.used_by([t for _, units in groups for r in units for t in (r.signature, r.body)])
        used.update(kernels)
        files[op_header(name)] = render("ops_op.h.j2", banner=plan.banner, op_name=name, deps=deps, blocks=blocks,
                                        shims=[declared[f] for f in called], kernels=kernels,
                                        deferred=name not in plain)
    files[SCALAR_HEADER] = scalar_header(plan.banner)
    files.update(kernel_headers(plan.banner, sections.closure(used)))
    files[DISPATCH_HEADER] = f"// {plan.banner}\n{package_text('cxx/dispatch.h')}"
    files[OPERATORS_HEADER] = f"// {plan.banner}\n{package_text('cxx/operators.h')}"
    files[AUTOGRAD_HEADER] = f"// {plan.banner}\n{package_text('cxx/autograd.h')}"
    files[CUDA_HEADER] = f"// {plan.banner}\n{package_text('cxx/cuda.h')}"
    return files


# A dispatcher-route body's call, and the same call deferred to the wrapper's template parameter (dispatch.h).
_DISPATCH_CALL = "shimgen::detail::dispatch<"
_DEFERRED_DISPATCH_CALL = "shimgen::detail::dispatch<Lazy, "


def defer(r: _Rendered) -> _Rendered:
    """A form of a template wrapper (`template <typename Lazy = void>`, plain_names): its dispatch calls name
    the wrapper's parameter first, so each is a dependent call the compiler resolves only where a file calls the
    wrapper (cxx/dispatch.h)."""
    if r.hidden or _DISPATCH_CALL not in r.body:
        return r
    return replace(r, body=r.body.replace(_DISPATCH_CALL, _DEFERRED_DISPATCH_CALL))


def plain_names(plan: Plan, wide: dict[str, Wrapper]) -> set[str]:
    """The C++ names whose wrappers are plain inline functions: those of the manifest's default set (upstream's
    ops.h names, whose code may take a wrapper's address as it would upstream's). Every other name's wrappers are
    function templates with one defaulted parameter (`template <typename Lazy = void>`), which a call uses as a
    function: a translation unit parses their bodies but checks and instantiates only those it calls, so the
    aggregate ops.h of every op costs a fraction of what ~3,000 plain inline functions cost (docs/performance.md)."""
    return {wide[op].name for op in plan.manifest.entries if op in wide}


# A C shim a wrapper body calls (c_shim_aten.h declares libtorch's, c_shim_aten_overlay.h the overlay's; each per-op
# header declares those its bodies call).
_SHIM_CALL_RE = re.compile(r"\b(aoti_torch_aten_\w+)\(")


def _shim_declarations(r: Resolved) -> dict[str, dict[str, str | None]]:
    """Every C shim of the plan by function name: its declaration as c_shim_aten.h (libtorch's) or
    c_shim_aten_overlay.h (the overlay's) has it, and its gate: the release that carries it, and for an overlay
    shim the opt-in too (only the overlay world's bodies call one), so that a build without SHIMGEN_OVERLAY never
    sees a declaration of a symbol no libtorch exports."""
    result = {}
    for sv in r.shims:
        conds = [] if sv.upstream else ["defined(SHIMGEN_OVERLAY)"]
        if sv.since > FIRST_STABLE:
            conds.append(f"TORCH_FEATURE_VERSION >= {sv.since.macro}")
        opener, closer = _gate_lines(conds)
        result[sv.shim.function] = {"declaration": sv.shim.declaration, "open": opener, "close": closer}
    return result


_TABLE_MARKER = "// @shimgen: promotion table (templates/scalar_table.h.j2, from data/scalar_facts.yaml)\n"


def scalar_header(banner: str) -> str:
    """torch/csrc/stable/shimgen/scalar.h: the core of the plain C++ header cxx/scalar.h (without its kernel
    sections, shimgen.generate.kernel_sections), with the banner on top and the promotion table of the Scalar facts (a
    small template) where its marker line is."""
    head, marker, tail = kernel_sections.load().core.partition(_TABLE_MARKER)
    assert marker, "cxx/scalar.h lost its promotion table marker"
    facts = scalars.load()
    index = {d: k for k, d in enumerate(facts.dtypes)}
    table = [[index[facts.promote[a, b]] if facts.promote[a, b] else -2 for b in facts.dtypes] for a in facts.dtypes]
    rows = render("scalar_table.h.j2", dtypes=facts.dtypes, categories=[facts.category[d] for d in facts.dtypes],
                  table=table)
    return f"// {banner}\n{head}{rows}{tail}"


def kernel_headers(banner: str, names: list[str]) -> dict[str, str]:
    """torch/csrc/stable/shimgen/kernels/<name>.h of each kernel section named: its text of cxx/scalar.h
    after core and the sections it needs."""
    split = kernel_sections.load()
    files = {}
    for name in names:
        s = split.section(name)
        files[kernel_sections.header(name)] = render("kernel_section.h.j2", banner=banner, section=name, needs=s.needs,
                                                     core=SCALAR_HEADER, text=s.text, close=kernel_sections.CLOSE)
    return files
