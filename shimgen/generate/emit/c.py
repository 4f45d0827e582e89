"""Emit the C shim surface for the plan's C shim set (shimgen.generate.signatures.stage.c_shims), each declaration with its version
gate: c_shim_aten.h declares the shims libtorch exports (what upstream's c_shim_aten.h declares for these ops);
c_shim_aten_overlay.h the shims only shimgen's overlay library defines, which c_shim_aten.h includes only where the
author opted in (SHIMGEN_OVERLAY); c_shim_aten.cpp defines them all."""

from __future__ import annotations

import os
from dataclasses import dataclass

from shimgen.generate.cpp_model import Resolved
from shimgen.generate.templates import render
from shimgen.facts.versions import gate_close, gate_open, macro_definitions

FOLDER = "torch/csrc/inductor/aoti_torch/generated/"
HEADER = f"{FOLDER}c_shim_aten.h"
OVERLAY_HEADER = f"{FOLDER}c_shim_aten_overlay.h"
SOURCE = f"{FOLDER}c_shim_aten.cpp"
# Every header declaring C shims: libtorch's, then the overlay's (always written, so the include is always valid).
HEADERS = (HEADER, OVERLAY_HEADER)


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


def emit(r: Resolved) -> dict[str, str]:
    """The C shim headers and source of the plan's C shim set (Resolved.shims)."""
    plan, built, skipped = r.plan, r.shims, r.shim_notes
    decls = []
    for sv in built:
        s = sv.shim
        decls.append(
            _Decl(
                schema=f"aten::{s.op.schema_text}",
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
    libtorch = [d for d in decls if d.upstream]
    mine = [d for d in decls if not d.upstream]
    header = render(
        "c_shim_aten.h.j2",
        banner=plan.banner,
        macros=macro_definitions({sv.since for sv in built if sv.upstream}),
        decls=libtorch,
        overlay=OVERLAY_HEADER,
        skipped=[*sorted(plan.notes), *skipped],
    )
    overlay = render(
        "c_shim_aten_overlay.h.j2",
        banner=plan.banner,
        macros=macro_definitions({sv.since for sv in built if not sv.upstream}),
        decls=mine,
    )
    includes = sorted({sv.shim.op.f.root_name for sv in built})
    source = render("c_shim_aten.cpp.j2", banner=plan.banner, headers=HEADERS, includes=includes, defs=decls)
    return {HEADER: header, OVERLAY_HEADER: overlay, SOURCE: source}


def declarations(files: dict[str, str]) -> str:
    """The text of every C shim header among `files` (an output folder's or a generation's), libtorch's first."""
    return "".join(files.get(rel, "") for rel in HEADERS)


def read_declarations(folder: str) -> str:
    """The text of an output folder's C shim headers (those it has), libtorch's first."""
    texts = {}
    for rel in HEADERS:
        path = os.path.join(folder, rel)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                texts[rel] = f.read()
    return declarations(texts)
