"""The overlay library: the generated C shim definitions that the installed libtorch lacks, compiled by the same
emitter (emit_c) over the filtered op list, so it is the code libtorch would carry.

It is compiled against one libtorch's internal C++ API, so it is not ABI-stable: an extension opts in to it
(-DSHIMGEN_OVERLAY, docs/routes.md "Stable means libtorch alone") and must rebuild it for each torch release. It is a
build product of its own:

    python -m shimgen.dev overlay-build --ops LIST --out DIR [--jobs N]

builds DIR/libshimgen_overlay.so for the installed torch (the shims the wrappers of LIST call through shimgen's
overlay routes, plus upstream's surface), records the torch version it was built against (DIR/libshimgen_overlay.json
and the library's `shimgen_overlay_torch_version()`), and each of its shims refuses, with an error naming both
versions, to run on another libtorch (checked at the first call; loading it never fails for that reason)."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
from dataclasses import replace

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c
from shimgen.generate import pipeline
from shimgen.generate.signatures import c as sig_c, cpp as sig_cpp
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.generate.plan import WORLDS
from shimgen.proofs.verify import build
from shimgen.generate.emit.fmt import format_cpp
from shimgen.generate.plan import Plan
from shimgen.proofs.verify.build import Torch
from shimgen.facts.versions import Version

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


def sources(plan: Plan, built_for: str | None = None) -> dict[str, str]:
    """The overlay's headers and definitions (paths relative to the overlay source folder). `built_for`: the torch
    version being built against; each shim then first checks that the running libtorch is that release."""
    files = emit_c.emit(resolve(plan))
    source = files[emit_c.SOURCE]
    if built_for is not None:
        source = guarded(source, built_for)
    return {**{h: files[h] for h in emit_c.HEADERS}, emit_c.SOURCE: format_cpp(source)}


_MARK = "AOTI_TORCH_CONVERT_EXCEPTION_TO_ERROR_CODE({"
_GUARD = """
#include <ATen/Version.h>

#include <stdexcept>
#include <string>

// The torch release this overlay was built against: its shims call libtorch's
// internal C++ API, which changes between releases.
extern "C" __attribute__((weak)) const char* shimgen_overlay_torch_version() {
  return "@VERSION@";
}

namespace {
// Throws (the shim returns an error code with this message) unless the running
// libtorch is the release this overlay was built against.
void shimgen_overlay_check() {
  static const std::string running = [] {
    const std::string config = at::show_config();
    const std::string key = "TORCH_VERSION=";
    const auto at = config.find(key);
    if (at == std::string::npos) {
      return std::string("unknown");
    }
    const auto end = config.find_first_of(", \\n", at + key.size());
    return config.substr(at + key.size(), end - at - key.size());
  }();
  if (running != "@VERSION@") {
    throw std::runtime_error(
        "shimgen: libshimgen_overlay was built for torch @VERSION@ and is running "
        "on torch " + running + ": rebuild it for this torch (python -m "
        "shimgen.proofs.verify.overlay_build), or build the extension without SHIMGEN_OVERLAY");
  }
}
} // namespace
"""


def guarded(source: str, built_for: str) -> str:
    """The definitions with the version check first in every shim (the release, without a local suffix)."""
    version = built_for.split("+")[0]
    head, sep, rest = source.partition("#endif // AT_PER_OPERATOR_HEADERS\n")
    if not sep:
        raise ValueError("overlay source without its include block")
    body = rest.replace(_MARK, _MARK + "\n    shimgen_overlay_check();")
    return head + sep + _GUARD.replace("@VERSION@", version) + body


def main(argv: list[str] | None = None, overlay_ties_to_libtorch: bool = True) -> int:
    """The command; `overlay_ties_to_libtorch` (see Plan) False only for a benchmark of the old overlay build."""
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev overlay-build", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", help="the ops shimgen generated for (as `shimgen --ops`); default: the manifest's")
    ap.add_argument("--out", required=True, help="folder for libshimgen_overlay.so and its record")
    ap.add_argument("--yaml")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        torch = build.find_torch()
        _, plan = pipeline.generate(args.ops.split(",") if args.ops else None, args.yaml, None,
                                    overlay_ties_to_libtorch=overlay_ties_to_libtorch)
        # every build that links the overlay: with or without SHIMGEN_LEAKY_STR
        on_overlay = {w.op.name for world in WORLDS if world.overlay
                      for w in sig_cpp.wrappers(plan.in_world(world))[0] if any(v.route.overlay for v in w.variants)}
        ov_plan, notes = missing_ops(replace(plan, ops=[op for op in plan.ops if op.name in on_overlay]), torch)
        os.makedirs(args.out, exist_ok=True)
        cxx = build.compiler()
        lib = os.path.join(os.path.abspath(args.out), LIBRARY)
        src_root = os.path.join(os.path.abspath(args.out), "overlay-src")
        files = sources(ov_plan, torch.version)
        for rel, text in files.items():
            path = os.path.join(src_root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        cmd, link = build.library(cxx, torch.aten_flags(src_root), os.path.join(src_root, emit_c.SOURCE), lib,
                                  torch.link_flags())
        build.run_steps([build.Step("overlay", lib, cmd, [*files.values(), torch.version, build.compiler_id(cxx)],
                                    link)], args.jobs)
    except ShimgenError as e:
        print(f"shimgen: {e.line()}", file=sys.stderr)
        return 2
    with open(os.path.join(args.out, "libshimgen_overlay.json"), "w", encoding="utf-8") as f:
        json.dump({"torch": torch.version, "ops": sorted(op.name for op in ov_plan.ops)}, f, indent=1)
        f.write("\n")
    for note in notes:
        print(f"shimgen: note: {note}", file=sys.stderr)
    print(lib)
    return 0

