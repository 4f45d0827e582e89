"""Emit the C shim surface: c_shim_aten.h (declarations with version gates) and c_shim_aten.cpp (definitions),
for the plan's C shim set (shimgen.signatures.c_shims)."""

from __future__ import annotations

from dataclasses import dataclass

from shimgen.plan import Plan
from shimgen.signatures import c_shims
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


def emit(plan: Plan) -> dict[str, str]:
    built, skipped = c_shims(plan)
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
