"""Seconds per file of `shimgen port` on a tree, two checkouts side by side: cold (an empty cache: the precompiled
preludes are made in the run) and warm (the cache an earlier run left).

Not a test. Each measurement is a fresh process (`python -m shimgen port --target 2.10 TREE`, imports included),
as a user sees it; the two checkouts' runs alternate so that both see the same machine load (other jobs share the
CPU). Cold runs get a new `XDG_CACHE_HOME` and `SHIMGEN_CACHE_DIR` each; warm runs share one per checkout, made by
a first run that is not timed. The report each run prints (stdout) must be the same bytes for both checkouts: the
script says so, or prints the first difference. Goal: <= 0.5 s a file, warm, on two cores.

    python benchmarks/bench_port.py --before /path/to/other/checkout TREE [--runs 3] [--cold-runs 1] [-- ARGS]

--before: a checkout of shimgen to compare with (e.g. `git archive main | tar -x -C /tmp/before`); without it only
this checkout is timed (--after: another one than this). ARGS after `--` replace the default `--target 2.10`
(e.g. `-- --target 2.10 --fix --diff`: a rewrite as a diff, which leaves the files as they are).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp", ".hh", ".inl")


def count_files(tree: str) -> int:
    return sum(1 for _, _, names in os.walk(tree) for n in names if n.endswith(SUFFIXES))


def run(checkout: str, tree: str, args: list[str], cache: str) -> tuple[float, bytes]:
    env = {**os.environ, "PYTHONPATH": checkout, "XDG_CACHE_HOME": cache,
           "SHIMGEN_CACHE_DIR": os.path.join(cache, "derived")}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "shimgen", "port", *args, tree], cwd=checkout, env=env,
                          capture_output=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed in {checkout}:\n{proc.stderr.decode(errors='replace')}")
    return elapsed, proc.stdout


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n  before: {x}\n  after:  {y}"
    return f"lengths differ: {len(la)} and {len(lb)} lines"


def main() -> None:
    argv = sys.argv[1:]
    extra = ["--target", "2.10"]
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="a folder of C++/CUDA sources (an extension's csrc/)")
    ap.add_argument("--before", help="another shimgen checkout, timed alternately with this one")
    ap.add_argument("--after", default=HERE, help="the checkout to time against it (default: this one)")
    ap.add_argument("--runs", type=int, default=3, help="warm runs per checkout (default 3)")
    ap.add_argument("--cold-runs", type=int, default=1, help="cold runs per checkout (default 1)")
    args = ap.parse_args(argv)
    tree = os.path.abspath(args.tree)
    n = count_files(tree)
    checkouts = [("before", os.path.abspath(args.before))] if args.before else []
    checkouts.append(("after", os.path.abspath(args.after)))
    scratch = tempfile.mkdtemp(prefix="bench-port-")
    try:
        times: dict[tuple[str, str], list[float]] = {}
        outputs: dict[str, bytes] = {}
        for i in range(args.cold_runs):
            for label, checkout in checkouts if i % 2 == 0 else checkouts[::-1]:
                cache = tempfile.mkdtemp(dir=scratch)
                t, out = run(checkout, tree, extra, cache)
                shutil.rmtree(cache, ignore_errors=True)
                times.setdefault((label, "cold"), []).append(t)
                outputs.setdefault(label, out)
                print(f"{label:6s} cold  {t:7.2f} s  {t / n:6.3f} s/file", flush=True)
        warm = {label: tempfile.mkdtemp(dir=scratch) for label, _ in checkouts}
        for label, checkout in checkouts:  # fills the cache: not timed
            outputs.setdefault(label, run(checkout, tree, extra, warm[label])[1])
        for i in range(args.runs):
            for label, checkout in checkouts if i % 2 == 0 else checkouts[::-1]:
                t, out = run(checkout, tree, extra, warm[label])
                times.setdefault((label, "warm"), []).append(t)
                print(f"{label:6s} warm  {t:7.2f} s  {t / n:6.3f} s/file", flush=True)
        print(f"\n{n} files in {tree}; `shimgen port {' '.join(extra)} TREE`; median seconds (s/file)")
        for kind in ("cold", "warm"):
            row = []
            for label, _ in checkouts:
                got = times.get((label, kind))
                if got:
                    med = statistics.median(got)
                    row.append(f"{label} {med:7.2f} s ({med / n:.3f} s/file, {len(got)} runs)")
            if not row:
                continue
            ratio = ""
            if len(row) == 2:
                b, a = (statistics.median(times[(lbl, kind)]) for lbl, _ in checkouts)
                ratio = f"  before/after {b / a:.1f}x"
            print(f"  {kind}: " + " | ".join(row) + ratio)
        if len(outputs) == 2:
            same = outputs["before"] == outputs["after"]
            print("  reports: " + ("byte-identical" if same else
                                   "DIFFER, " + first_difference(outputs["before"], outputs["after"])))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
