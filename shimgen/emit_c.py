"""Emit the C shim surface: c_shim_aten.h (declarations with version gates) and c_shim_aten.cpp (definitions)."""

from __future__ import annotations

from dataclasses import dataclass

from shimgen import sig_c
from shimgen.errors import Refusal
from shimgen.plan import Plan
from shimgen.templates import render
from shimgen.versions import gate_close, gate_open, macro_definitions

HEADER = "torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h"
SOURCE = "torch/csrc/inductor/aoti_torch/generated/c_shim_aten.cpp"


@dataclass(frozen=True)
class _Decl:
    schema: str
    since: str
    upstream: bool
    declaration: str
    gate_open: str | None
    gate_close: str | None
    call: str
    args: str
    assignments: tuple[str, ...]


def shims(plan: Plan) -> tuple[list[sig_c.ShimVersion], list[str]]:
    """The C shims of the plan's ops in the order torchgen writes them (by shim name; an op's `_vN` versions
    newest first, then its original), and the refusals."""
    built: list[list[sig_c.ShimVersion]] = []
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


def _calls_a_shim(op, plan: Plan) -> bool:
    from shimgen.sig_cpp import wrappers  # the C++ rules decide which C shims the wrappers call

    w = next((w for w in wrappers(plan)[0] if w.op.name == op.name), None)
    return w is not None and any(v.route in ("shim", "generated_shim") for v in w.variants)


def emit(plan: Plan) -> dict[str, str]:
    built, skipped = shims(plan)
    decls = []
    for sv in built:
        s = sv.shim
        decls.append(
            _Decl(
                schema=f"aten::{s.op.schema}",
                since=str(sv.since),
                upstream=sv.upstream,
                declaration=s.declaration,
                gate_open=gate_open(sv.since),
                gate_close=gate_close(sv.since),
                call=s.backend_call,
                args=", ".join(s.aten_args),
                assignments=s.ret_assignments,
            )
        )
    macros = macro_definitions({sv.since for sv in built})
    header = render(
        "c_shim_aten.h.j2", banner=plan.banner, macros=macros, decls=decls, skipped=[*sorted(plan.notes), *skipped]
    )
    includes = sorted({sv.shim.op.f.root_name for sv in built})
    source = render("c_shim_aten.cpp.j2", banner=plan.banner, includes=includes, defs=decls)
    return {HEADER: header, SOURCE: source}
