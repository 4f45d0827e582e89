"""Measure which stable C functions each torch runtime's libtorch exports, into data/libtorch_exports.json
(shimgen.facts.libtorch_exports: the data `shimgen audit` judges binaries by).

    python -m shimgen.dev exports            # measure the runtimes found; exit 1 if the data records otherwise
    python -m shimgen.dev exports --write    # and record them (a runtime not found keeps its recorded exports)
    python -m shimgen.dev exports --lib 2.13.0=DIR --write
                                             # a release's torch/lib folder measured instead of its runtime's: the
                                             # libraries a CUDA wheel unpacked holds where the runtime is a CPU wheel
"""

from __future__ import annotations

import argparse
import os
import sys

from shimgen.base.errors import ShimgenError
from shimgen.facts import libtorch_exports, releases
from shimgen.facts.versions import Version
from shimgen.proofs.verify import runtimes


def measure_runtime(rt: runtimes.Runtime) -> dict[str, set[str]]:
    """group -> the stable C functions the runtime's libraries export."""
    return libtorch_exports.measure(os.path.join(rt.torch.root, "lib"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev exports", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record the measured exports in data/libtorch_exports.json")
    ap.add_argument("--lib", action="append", default=[], metavar="X.Y.Z=DIR",
                    help="measure release X.Y.Z's libraries in DIR (a torch/lib folder, e.g. of its CUDA wheel "
                         "unpacked) instead of its runtime's")
    args = ap.parse_args(argv)
    try:
        folders = {}
        for item in args.lib:
            name, sep, folder = item.partition("=")
            if not sep or not os.path.isfile(os.path.join(folder, "libtorch_cpu.so")):
                raise ShimgenError(f"--lib {item}: expected X.Y.Z=DIR, DIR a torch/lib folder holding libtorch_cpu.so")
            folders[Version.parse(name, "--lib")] = (name, folder)
        rts, missing = runtimes.resolve(list(releases.load().runtimes))
        if not rts and not folders:
            raise ShimgenError(runtimes.missing_reason(missing))
        measured = {r: (name, libtorch_exports.measure(folder)) for r, (name, folder) in folders.items()}
        for name, groups in [(name, m) for name, m in measured.values()]:
            print(f"torch {name} (--lib): " + ", ".join(f"{len(n)} in {g}" for g, n in groups.items()))
        for rt in rts:
            if Version.parse(rt.name) in measured:
                continue
            groups = measure_runtime(rt)
            measured[Version.parse(rt.name)] = (rt.name, groups)
            per = ", ".join(f"{len(names)} in {g} ({' + '.join(libtorch_exports.GROUPS[g])})"
                            for g, names in groups.items())
            print(f"torch {rt.name}: {per}")
        new = libtorch_exports.build(measured)
        path = libtorch_exports.data_path()
        old = libtorch_exports.loads(open(path, encoding="utf-8").read()) if os.path.isfile(path) else None
        data = libtorch_exports.merge(old, new) if old is not None else new
    except ShimgenError as e:
        sys.stderr.write(f"shimgen: error: {e.line()}\n")
        return 2
    if missing:
        print(f"not found: {', '.join(missing)} ({'recorded exports kept' if old else 'not recorded'})")
    text = libtorch_exports.dumps(data)
    same = old is not None and libtorch_exports.dumps(old) == text
    if args.write:
        if not same:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        print(f"{'wrote' if not same else 'unchanged:'} {path}")
        return 0
    if not same:
        print(f"{path} records other exports: run with --write")
        return 1
    print(f"{path} is up to date")
    return 0
