"""Generation and compile time side by side, in one run (not a test).

    python benchmarks/bench_generate.py [--runs 3] [--op add] [--identical] [--instructions]
    python benchmarks/bench_generate.py --against REV [--runs 7] [--instructions]

Prints:
- wall time of `shimgen --ops <every op name of the installed yaml>` (a fresh process, imports included, output
  into a fresh folder; best of --runs), and of `shimgen --ops add,pad,amax` (best of --runs + 2), with shimgen's
  cache (derived package data, compiled templates, clang-format's output for the chunks shimgen.generate.emit.cpp_layout
  leaves to it) warm, and the first run with it empty; then the same runs into the folder the previous run
  left (every file already holds its bytes: generation without the cost of creating ~2,070 files, which on a
  busy shared disk is 0.5-2 s of the fresh-folder figure); the number of those chunks;
- wall time (and the compiler's CPU time) of `g++ -fsyntax-only` on a translation unit that includes (a) upstream's torch/csrc/stable/ops.h
  (the installed torch's), (b) the generated aggregate ops.h of every op, (c) one generated per-op header
  (torch/csrc/stable/ops/<--op>.h of that same output), and, for reference, torch/csrc/stable/tensor.h alone;
  interleaved so that each sees the same machine load; median of --runs, and ratios to (a).
--instructions also counts the instructions the compiler executes for (a), (b) and (c) under valgrind (cachegrind,
about a minute): unlike time, the count does not depend on the machine's load (the same input gives the same count
within 0.1%), so it can tell a 2% change apart on a busy machine.
--identical also generates the whole yaml through the formatters (black over the whole module, clang-format over
each C++ file alone) and compares every file byte for byte with the fast path (about two minutes here).
--against REV instead times this tree's generation side by side with commit REV's (a `git worktree` of it in a
temporary folder, removed after): the whole yaml and `--ops add,pad,amax`, each tree with its own warm cache, a
fresh output folder each run, the two trees' runs alternating (--runs pairs, after one untimed warm-up run each),
the same op list for both; it prints each tree's best and median wall and CPU seconds and the ratios this/REV
(best and median; <= 1.0: no slower than REV); with --instructions also the instructions of one run of each
tree under valgrind (a few minutes for the whole yaml) and their ratio, which the machine's load does not move.
Goals (docs/performance.md): whole yaml <= 3 s, add,pad,amax <= 0.3 s, (c) <= 1.1x (a), (b) <= 2x (a).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def all_op_names() -> list[str]:
    sys.path.insert(0, ROOT)
    from shimgen.generate.parse import NativeYaml

    return list(dict.fromkeys(op.split(".")[0] for op in NativeYaml(None).all_op_names()))


def shimgen_wall(ops: list[str], out: str, cache_dir: str, fresh: bool = True, root: str = ROOT,
                 cwd: str | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one `shimgen --ops ...` into a fresh out
    (fresh=False: into out as the previous run left it, every file already holding its bytes); `root`: the tree
    whose shimgen runs, `cwd` the folder it runs in (`python -m` imports from there first: not a tree's root when
    comparing trees)."""
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=root, SHIMGEN_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on CI and a user's machine (see main)
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", ",".join(ops), "--out", out],
                          capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        sys.exit(f"shimgen failed: {proc.stderr[-2000:]}")
    return elapsed, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def fallback_chunks(ops: list[str]) -> int:
    """How many chunks of the generated C++ the layout rules leave to clang-format (shimgen.generate.emit.cpp_layout)."""
    sys.path.insert(0, ROOT)
    from shimgen.generate.emit import fmt
    from shimgen.generate import pipeline

    seen = []
    real = fmt.start_formatting

    def spy(files, per_file=False):
        seen.append(real(files, per_file))
        return seen[-1]

    fmt.start_formatting = spy
    try:
        pipeline.generate(ops, None, None, None)
    finally:
        fmt.start_formatting = real
    return seen[-1].fallback


def compile_wall(include: str, generated: str | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the compiler) of g++ -fsyntax-only on a TU including `include`."""
    sys.path.insert(0, ROOT)
    from shimgen.proofs.verify import build

    torch = build.find_torch()
    flags = torch.stable_flags(generated) if generated else [f for f in torch.stable_flags(ROOT) if f != f"-I{ROOT}"]
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run([build.compiler(), *flags, "-fsyntax-only", "-x", "c++", "-"],
                          input=f"#include <{include}>\n", capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        sys.exit(f"compiling #include <{include}> failed: {proc.stderr[-2000:]}")
    return elapsed, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def compile_instructions(include: str, generated: str | None) -> int:
    """Instructions g++ -fsyntax-only executes (driver and compiler) on a TU including `include`, by valgrind."""
    sys.path.insert(0, ROOT)
    from shimgen.proofs.verify import build

    torch = build.find_torch()
    flags = torch.stable_flags(generated) if generated else [f for f in torch.stable_flags(ROOT) if f != f"-I{ROOT}"]
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                           "--cachegrind-out-file=/dev/null", build.compiler(), *flags, "-fsyntax-only", "-x", "c++",
                           "-"], input=f"#include <{include}>\n", capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"valgrind g++ on #include <{include}> failed: {proc.stderr[-2000:]}")
    return sum(int(n.replace(",", "")) for n in re.findall(r"I\s+refs:\s+([\d,]+)", proc.stderr))


def identical(ops: list[str]) -> None:
    sys.path.insert(0, ROOT)
    from shimgen.generate import pipeline

    start = time.perf_counter()
    fast, _ = pipeline.generate(ops, None, None, None)
    mid = time.perf_counter()
    ref, _ = pipeline.generate(ops, None, None, None, formatter=True)
    end = time.perf_counter()
    differ = sorted(p for p in set(fast) | set(ref) if fast.get(p) != ref.get(p))
    print(f"\nwhole yaml, fast path vs formatters: {len(ref)} files, {len(differ)} differ "
          f"(fast {mid - start:.1f} s in process, formatters {end - mid:.1f} s)")
    for p in differ[:20]:
        print(f"  differs: {p}")


def shimgen_instructions(ops: list[str], out: str, cache_dir: str, root: str, cwd: str) -> int:
    """Instructions one `shimgen --ops ...` (the Python process) executes into a fresh out, by valgrind: unlike
    time, the count does not follow the machine's load. `root` and `cwd` as for shimgen_wall."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=root, SHIMGEN_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, "-m", "shimgen", "--ops", ",".join(ops), "--out", out],
                          capture_output=True, text=True, env=env, cwd=cwd)
    if proc.returncode != 0:
        sys.exit(f"valgrind shimgen failed: {proc.stderr[-2000:]}")
    return sum(int(n.replace(",", "")) for n in re.findall(r"I\s+refs:\s+([\d,]+)", proc.stderr))


def against(rev: str, runs: int, names: list[str], instructions: bool = False) -> None:
    """This tree's generation time side by side with commit `rev`'s, alternating, in one run (see --against)."""
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "--quiet", ref, rev], check=True)
        try:
            head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            this = f"this tree ({head}{', modified' if dirty else ''})"
            print(f"{this} against {rev}: --runs {runs} alternating pairs after one warm-up run each; "
                  "best and median wall seconds (CPU seconds of the process)")
            trees = (("this", ROOT), ("ref", ref))
            for name, root in trees:  # each tree's runs import its own shimgen (not the working folder's)
                where = subprocess.run([sys.executable, "-c", "import shimgen; print(shimgen.__file__)"], cwd=tmp,
                                       env=dict(os.environ, PYTHONPATH=root), capture_output=True, text=True)
                if not where.stdout.strip().startswith(os.path.join(root, "shimgen")):
                    sys.exit(f"{name}: shimgen imports from {where.stdout.strip() or where.stderr[-500:]}, not {root}")
            small = ["add", "pad", "amax"]
            for label, ops in ((f"--ops <all {len(names)} op names>", names), ("--ops add,pad,amax", small)):
                times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
                for name, root in trees:  # warm-up: each tree's cache filled, its bytecode written
                    shimgen_wall(ops, os.path.join(tmp, "out"), os.path.join(tmp, f"cache-{name}"), root=root, cwd=tmp)
                for k in range(runs):
                    for name, root in trees if k % 2 == 0 else trees[::-1]:
                        times[name].append(shimgen_wall(ops, os.path.join(tmp, "out"),
                                                        os.path.join(tmp, f"cache-{name}"), root=root, cwd=tmp))
                stats = {}
                for name, _ in trees:
                    walls, cpus = [w for w, _ in times[name]], [c for _, c in times[name]]
                    stats[name] = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
                a, b = stats["this"], stats["ref"]
                print(f"shimgen {label}:")
                print(f"    this tree: wall {a[0]:.3f} s best, {a[1]:.3f} s median; CPU {a[2]:.3f} s best, "
                      f"{a[3]:.3f} s median")
                print(f"    {rev}: wall {b[0]:.3f} s best, {b[1]:.3f} s median; CPU {b[2]:.3f} s best, "
                      f"{b[3]:.3f} s median")
                print(f"    ratio this/{rev}: wall {a[0] / b[0]:.3f} best, {a[1] / b[1]:.3f} median; "
                      f"CPU {a[2] / b[2]:.3f} best, {a[3] / b[3]:.3f} median")
                if instructions:
                    counts = {name: shimgen_instructions(ops, os.path.join(tmp, "out"),
                                                         os.path.join(tmp, f"cache-{name}"), root, tmp)
                              for name, root in trees}
                    print(f"    instructions (valgrind): this tree {counts['this'] / 1e6:.0f} M, {rev} "
                          f"{counts['ref'] / 1e6:.0f} M; ratio this/{rev} {counts['this'] / counts['ref']:.3f}")
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", ref], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--op", default="add", help="the per-op header compiled in (c)")
    parser.add_argument("--identical", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the compiler's instructions for (a)-(c) under valgrind (load-independent); "
                        "with --against, shimgen's own")
    parser.add_argument("--against", metavar="REV", help="time this tree's generation side by side with commit "
                        "REV's instead (see above)")
    args = parser.parse_args()
    names = all_op_names()
    if args.against:
        print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        against(args.against, args.runs, names, args.instructions)
        print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        return 0
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # Set in some development environments: with it, every run would compile shimgen's modules from source (0.1 s of a
        # small run), which no user's run does (pip compiles a regular install's bytecode when it installs it;
        # an editable install's first run writes it, as CI's does). shimgen's runs are timed without it.
        print("note: PYTHONDONTWRITEBYTECODE is set here; shimgen's runs are timed without it (the first one writes "
              "shimgen's bytecode if it is missing, as on CI and a user's machine)")
    print("note: wall time includes making the output durable (shimgen.base.output: one syncfs, else an fsync of each "
          "file) and this machine's load; CPU time is the process's own")
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        whole, small = os.path.join(tmp, "whole"), os.path.join(tmp, "small")
        cache_dir = os.path.join(tmp, "cache")  # shimgen's cache (shimgen.base.cache): empty for the first run of each
        rows = []
        for label, ops, runs, out in ((f"--ops <all {len(names)} op names>", names, args.runs, whole),
                                      ("--ops add,pad,amax", ["add", "pad", "amax"], args.runs + 2, small)):
            shutil.rmtree(cache_dir, ignore_errors=True)
            cold = shimgen_wall(ops, out, cache_dir)
            warm = [shimgen_wall(ops, out, cache_dir) for _ in range(runs)]
            again = [shimgen_wall(ops, out, cache_dir, fresh=False) for _ in range(runs)]
            rows.append((label, cold, warm, again))
        goals = {0: "3 s", 1: "0.3 s"}
        for k, (label, cold, warm, again) in enumerate(rows):
            walls = [w for w, _ in warm]
            print(f"shimgen {label}: {min(walls):.3f} s best, {statistics.median(walls):.3f} s median of {len(walls)}"
                  f" (CPU {min(c for _, c in warm):.3f} s); first run, empty cache: {cold[0]:.3f} s "
                  f"(goal <= {goals[k]})")
            print(f"    into the folder the last run wrote (nothing to write): {min(w for w, _ in again):.3f} s best "
                  f"(CPU {min(c for _, c in again):.3f} s)")
        print(f"chunks left to clang-format: whole yaml {fallback_chunks(names)}, add,pad,amax "
              f"{fallback_chunks(['add', 'pad', 'amax'])} (cached after a machine's first run)")
        n_headers = len(os.listdir(os.path.join(whole, "torch/csrc/stable/ops")))
        lines = sum(1 for _ in open(os.path.join(whole, "torch/csrc/stable/ops.h")))
        print(f"whole-yaml output: ops.h includes {n_headers} per-op headers ({lines} lines itself)")

        cases = [
            ("(a) upstream ops.h", "torch/csrc/stable/ops.h", None),
            ("(b) generated ops.h, every op", "torch/csrc/stable/ops.h", whole),
            (f"(c) generated ops/{args.op}.h", f"torch/csrc/stable/ops/{args.op}.h", whole),
            ("    stable/tensor.h alone", "torch/csrc/stable/tensor.h", None),
        ]
        times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in cases}
        for _ in range(args.runs):
            for label, include, generated in cases:
                times[label].append(compile_wall(include, generated))
        base = statistics.median(w for w, _ in times[cases[0][0]])
        base_cpu = min(c for _, c in times[cases[0][0]])
        print("\ng++ -fsyntax-only of a TU including the header (wall: median of "
              f"{args.runs}, interleaved; CPU: the compiler's own, min of {args.runs}; goals: (c) <= 1.1x (a), "
              "(b) <= 2x (a)):")
        for label, _, _ in cases:
            t = statistics.median(w for w, _ in times[label])
            c = min(c for _, c in times[label])
            print(f"  {label:34s} {t:6.2f} s  {t / base:5.2f}x (a)   CPU {c:5.2f} s  {c / base_cpu:5.2f}x (a)")
        if args.instructions:
            counts = {label: compile_instructions(include, generated) for label, include, generated in cases[:3]}
            ref = counts[cases[0][0]]
            print("\ninstructions of g++ -fsyntax-only (valgrind; independent of the machine's load):")
            for label, n in counts.items():
                print(f"  {label:34s} {n / 1e6:8.0f} M  {n / ref:5.2f}x (a)")
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.identical:
        identical(names)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
