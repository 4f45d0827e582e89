"""Which release a running libtorch is, from the C functions it exports (data/releases.yaml `libtorch_markers`).

Each release of the stable ABI opens a block of torch/csrc/stable/c/shim.h (`#if TORCH_FEATURE_VERSION >=
TORCH_VERSION_X_Y_0`): that release's libtorch is the first to export the functions in it, and every later one
exports them too. The first function of each block (outside any `#ifdef USE_*`, which not every build compiles) is
the release's marker; a wrapper that must know the running release asks for the markers once per process (dlsym:
shimgen::detail::running_release in the generated ops_prelude.h).

    python -m shimgen.dev markers            # derive them from the newest runtime's headers, check every runtime
    python -m shimgen.dev markers --write    # and record them in data/releases.yaml
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from shimgen.base.errors import ShimgenError
from shimgen.facts import libtorch_exports, releases
from shimgen.facts.versions import Version
from shimgen.proofs.verify import runtimes

SHIM_H = os.path.join("include", "torch", "csrc", "stable", "c", "shim.h")
_BLOCK_RE = re.compile(r"^#if TORCH_FEATURE_VERSION >= TORCH_VERSION_(\d+)_(\d+)_0\s*$")
_FUNCTION_RE = re.compile(r"\b((?:torch|aoti_torch)_\w+)\s*\(")


def derive(shim_h: str) -> list[tuple[Version, str]]:
    """(release, its first exported C function) for every release block of a shim.h's text, in order."""
    found: list[tuple[Version, str]] = []
    depth = 0  # nesting of preprocessor conditionals inside the current release block
    current: Version | None = None
    guarded = 0  # how many of those are `#ifdef USE_*` (a build option: not every libtorch compiles it)
    pending = ""
    for line in shim_h.splitlines():
        stripped = line.strip()
        m = _BLOCK_RE.match(stripped)
        if m and depth == 0:
            current, depth, guarded, pending = Version(int(m.group(1)), int(m.group(2))), 1, 0, ""
            continue
        if current is None:
            continue
        if stripped.startswith("#if"):
            depth += 1
            guarded += stripped.startswith(("#ifdef USE_", "#if defined(USE_"))
            continue
        if stripped.startswith("#endif"):
            depth -= 1
            guarded = min(guarded, depth - 1) if depth > 1 else 0
            if depth == 0:
                current = None
            continue
        if guarded or (found and found[-1][0] == current):
            continue
        pending = f"{pending} {stripped}" if "AOTI_TORCH_EXPORT" in pending or "AOTI_TORCH_EXPORT" in stripped \
            else ""
        fm = _FUNCTION_RE.search(pending) if pending else None
        if fm is not None:
            found.append((current, fm.group(1)))
            pending = ""
    return found


def exports(torch_root: str) -> set[str]:
    """The stable C functions a torch install's libtorch (libtorch_cpu and libtorch) exports, as
    `python -m shimgen.dev exports` measures them."""
    return libtorch_exports.measure(os.path.join(torch_root, "lib")).get("libtorch", set())


def check(markers: list[tuple[Version, str]], release: Version, exported: set[str]) -> list[str]:
    """What is wrong with the markers on a libtorch of `release` exporting `exported`: each marker of a release up
    to it must be exported, each later one must not."""
    problems = []
    for r, fn in markers:
        if r <= release and fn not in exported:
            problems.append(f"libtorch {release} does not export {fn}, the marker of {r}")
        if r > release and fn in exported:
            problems.append(f"libtorch {release} exports {fn}, the marker of the later {r}")
    return problems


def _write(markers: list[tuple[Version, str]]) -> str:
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "releases.yaml")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    block = "libtorch_markers:\n" + "".join(f'  "{r}": {fn}\n' for r, fn in markers)
    new, n = re.subn(r"^libtorch_markers:\n(?:  .*\n)*", block, text, flags=re.M)
    if n != 1:
        raise ShimgenError(f"{path}: no libtorch_markers mapping to replace")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev markers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record the derived markers in data/releases.yaml")
    args = ap.parse_args(argv)
    rts, missing = runtimes.resolve(list(releases.load().runtimes))
    if not rts:
        sys.stderr.write(f"shimgen: error: {runtimes.missing_reason(missing)}\n")
        return 2
    newest = rts[-1]
    with open(os.path.join(newest.torch.root, SHIM_H), encoding="utf-8") as f:
        markers = derive(f.read())
    print(f"from torch {newest.name}'s {SHIM_H}:")
    for r, fn in markers:
        print(f"  {r}: {fn}")
    problems = [p for rt in rts for p in check(markers, rt.release, exports(rt.torch.root))]
    for p in problems:
        print(f"  wrong: {p}")
    print(f"checked against the exports of {', '.join(rt.name for rt in rts)}"
          + (f" ({', '.join(missing)} not found)" if missing else ""))
    if problems:
        return 1
    if args.write:
        print(f"wrote {_write(markers)}")
    elif markers != list(releases.load().libtorch_markers):
        print("data/releases.yaml records other markers: run with --write")
        return 1
    return 0
