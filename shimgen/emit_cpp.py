"""Emit torch/csrc/stable/ops.h: one inline torch::stable wrapper per selected overload, plus upstream's helpers.

The wrappers of each C++ name live in torch/csrc/stable/ops/<name>.h (as ATen's ATen/ops/<op>.h), which
includes the shared prelude (torch/csrc/stable/shimgen/ops_prelude.h) and the headers of the names its bodies
call; ops.h includes them all."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from shimgen import releases, scalars
from shimgen.plan import Plan
from shimgen.sig_cpp import Extra, Variant, Wrapper, extras, gone, target_wrapper, wrappers
from shimgen.templates import render
from shimgen.versions import FIRST_STABLE, VERSIONED_DISPATCHER, Version, macro_definitions

HEADER = "torch/csrc/stable/ops.h"
SCALAR_HEADER = "torch/csrc/stable/shimgen/scalar.h"
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
        try:
            with open(os.path.join(out, rel), encoding="utf-8", errors="replace") as f:
                texts.append(f"{rel}\n{f.read()}")
        except OSError:
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
    name: str = ""  # the C++ name: which torch/csrc/stable/ops/<name>.h holds it
    calls: tuple[str, ...] = ()  # the other wrapper names its body calls (their headers come first)


def gate(v: Variant) -> tuple[str | None, str | None]:
    conds = []
    if v.start > FIRST_STABLE:
        conds.append(f"TORCH_FEATURE_VERSION >= {v.start.macro}")
    if v.end is not None:
        conds.append(f"TORCH_FEATURE_VERSION < {v.end.macro}")
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


def doc(w: Wrapper, v: Variant, plan: Plan) -> list[str]:
    lines = [f"Stable wrapper of aten::{w.op.schema}", ""]
    lines.append(f"Minimum compatible version: PyTorch {w.since}.")
    lines.append(f"Build time minimum version: PyTorch {build_time_minimum(w, v)}.")
    if v.start != w.since:
        every = ", with every argument," if v.kept == len(w.params) else ""
        lines.append(f"This form{every} needs PyTorch {v.start}.")
    lines += v.route.describe(w, v)
    dropped = w.params[v.kept :]
    if dropped and v.end is not None:
        names = ", ".join(p.name for p in dropped)
        defaults = ", ".join(p.arg.default or "None" for p in dropped)
        lines.append(f"This form, for releases before {v.end}, does not take {names}: aten gets their defaults "
                     f"({defaults}).")
    lines += v.route.later_notes(w, v)
    end = gone(w, plan)
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


def render_wrapper(w: Wrapper, v: Variant, plan: Plan) -> _Rendered:
    body = v.route.body(w, v, plan)
    g_open, g_close = gate(v)
    return _Rendered(doc(w, v, plan), g_open, g_close, signature(w, v), body, name=w.name,
                     calls=_calls(w, v, plan))


def _calls(w: Wrapper, v: Variant, plan: Plan) -> tuple[str, ...]:
    """The wrapper names a form's body calls: the Tensor sibling its numbers lower to, or a composition's."""
    if not v.lowering:
        return ()
    comp = scalars.load().compositions.get(w.op.name)
    targets = [target_wrapper(comp[k], plan) for k in ("create", "fill")] if comp else [target_wrapper(v.lowering[0], plan)]
    return tuple(t.name for t in targets if t is not None)


def _value_type(cpp_type: str) -> str:
    """`const std::optional<T>&` -> `std::optional<T>`: the type a forwarding overload constructs."""
    return cpp_type.removeprefix("const ").removesuffix("&")


def render_nullopt_overload(w: Wrapper, v: Variant, k: int) -> _Rendered:
    """The `std::nullopt_t` overload of a wrapper form (sig_cpp._with_nullopt_forwarding)."""
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


def render_extra(e: Extra) -> list[_Rendered]:
    """A hand-written overload (data/extra_overloads.yaml): forwarding to its target wrapper from the release
    that has it; before that, and where the target is not generated, deleted or left out."""
    params = ", ".join(f"{t} {n}" + (f" = {d}" if d is not None else "") for t, n, d in e.params)
    w = e.target
    what = "ATen's C++-only overload" if e.source.startswith("ATen") else "Upstream's convenience overload"
    intro = f"{what} of {e.name} ({e.source}), for aten::{e.target_op}"
    returns = w.returns if w is not None else "void"
    deleted = _Rendered(
        [f"{intro}, which is not available here: deleted, so that such a call does not reach another",
         f"overload of {e.name}."],
        None, None, f"{returns} {e.name}({params}) = delete;", "", deleted=True, name=e.name,
    )
    if w is None:
        return [deleted]
    doc = [f"{intro}, its other arguments defaulted.", "", f"Minimum compatible version: PyTorch {w.since}."]
    g_open, g_close = gate(Variant(w.variants[0].route, 0, w.since))
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


def emit(plan: Plan) -> dict[str, str]:
    ws, notes = wrappers(plan)
    ws = _in_dependency_order(ws)
    rendered = []
    for w in ws:
        for v in w.variants:
            rendered.append(render_wrapper(w, v, plan))
            rendered += [render_nullopt_overload(w, v, k) for k in w.nullopt_at if k < v.kept]
            if w.op.schema.is_out_fn():
                rendered.append(render_outf(w, v))
    rendered += [r for e in extras(ws) for r in render_extra(e)]
    versions: set[Version] = {VERSIONED_DISPATCHER, Version(2, 11)}
    for w in ws:
        for v in w.variants:
            versions |= {x for x in (v.start, v.end) if x is not None}
    by_name: dict[str, list[_Rendered]] = {}
    for r in rendered:
        by_name.setdefault(r.name, []).append(r)
    files = {HEADER: render("ops.h.j2", banner=plan.banner, names=sorted(by_name),
                            skipped=[*sorted(plan.notes), *notes], helper_names=set(by_name))}
    files[PRELUDE_HEADER] = render("ops_prelude.h.j2", banner=plan.banner, macros=macro_definitions(versions))
    for name, units in sorted(by_name.items()):
        deps = sorted({c for r in units for c in r.calls if c != name})
        files[op_header(name)] = render("ops_op.h.j2", banner=plan.banner, op_name=name, deps=deps, wrappers=units)
    facts = scalars.load()
    index = {d: k for k, d in enumerate(facts.dtypes)}
    table = [[index[facts.promote[a, b]] if facts.promote[a, b] else -2 for b in facts.dtypes] for a in facts.dtypes]
    scalar_h = render("scalar.h.j2", banner=plan.banner, dtypes=facts.dtypes,
                      categories=[facts.category[d] for d in facts.dtypes], table=table)
    files[SCALAR_HEADER] = scalar_h
    return files
