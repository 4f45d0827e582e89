"""The overlay library: the generated C shim definitions that the installed libtorch lacks, compiled by the same
emitter (emit_c) over the filtered op list, so it is the code libtorch would carry."""

from __future__ import annotations

import ctypes
import os
from dataclasses import replace

from shimgen import emit_c, sig_c
from shimgen.errors import Refusal
from shimgen.fmt import format_cpp
from shimgen.plan import Plan
from shimgen.verify.build import Torch
from shimgen.versions import Version

LIBRARY = "libshimgen_overlay.so"


def exported_symbols(torch: Torch, names: list[str]) -> set[str]:
    """Which of `names` libtorch already exports (looked up in libtorch_cpu with dlsym, nothing is run)."""
    path = os.path.join(torch.lib_dir, "libtorch_cpu.so")
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0))
    except OSError:
        return set()
    return {n for n in names if hasattr(lib, n)}


def missing_ops(plan: Plan, torch: Torch) -> tuple[Plan, list[str]]:
    """A plan of the ops whose C shim the installed libtorch does not ship, and notes on those left out."""
    installed = Version.parse_release(torch.version, "installed torch version")
    candidates = []
    for op in plan.ops:
        if plan.manifest.upstream_shim(op.name, installed):
            continue
        try:
            sig_c.build(op, plan.table)
        except Refusal:  # no C shim representation: nothing to compile
            continue
        candidates.append(op)
    shipped = exported_symbols(torch, [sig_c.shim_name(op) for op in candidates])
    notes = [
        f"{op.name}: libtorch {torch.version} already exports {sig_c.shim_name(op)}; not redefined in the overlay"
        for op in candidates
        if sig_c.shim_name(op) in shipped
    ]
    kept = [op for op in candidates if sig_c.shim_name(op) not in shipped]
    return replace(plan, ops=kept, notes=[]), notes


def sources(plan: Plan) -> dict[str, str]:
    """The overlay's header and definitions (paths relative to the overlay source folder)."""
    files = emit_c.emit(plan)
    return {emit_c.HEADER: files[emit_c.HEADER], emit_c.SOURCE: format_cpp(files[emit_c.SOURCE])}
