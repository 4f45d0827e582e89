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


def shims(plan: Plan) -> tuple[list[sig_c.CShim], list[str]]:
    """The C shims of the plan's ops, in the order torchgen writes them (by shim name), and the refusals."""
    built, skipped = [], []
    for op in plan.ops:
        try:
            built.append(sig_c.build(op, plan.table))
        except Refusal as e:
            skipped.append(e.line())
    return sorted(built, key=lambda s: s.function), skipped


def emit(plan: Plan) -> dict[str, str]:
    built, skipped = shims(plan)
    decls = []
    for s in built:
        since = plan.shim_since(s.op)
        decls.append(
            _Decl(
                schema=f"aten::{s.op.schema}",
                since=str(since),
                upstream=plan.manifest.upstream_shim(s.op.name, since),
                declaration=s.declaration,
                gate_open=gate_open(since),
                gate_close=gate_close(since),
                call=s.backend_call,
                args=", ".join(s.aten_args),
                assignments=s.ret_assignments,
            )
        )
    macros = macro_definitions({plan.shim_since(s.op) for s in built})
    header = render(
        "c_shim_aten.h.j2", banner=plan.banner, macros=macros, decls=decls, skipped=[*sorted(plan.notes), *skipped]
    )
    includes = sorted({s.op.f.root_name for s in built})
    source = render("c_shim_aten.cpp.j2", banner=plan.banner, includes=includes, defs=decls)
    return {HEADER: header, SOURCE: source}
