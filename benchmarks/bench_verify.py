"""Whole-yaml `shimgen --verify`: the documented command, timed (not part of the default test suite).

    python benchmarks/bench_verify.py [--dir D] [--jobs N] [--compare-jobs] [--cold] [--world W]

Runs `shimgen --ops <every op of the installed native_functions.yaml> --out D/out --verify --build-dir D/build
--report D/coverage.md` and prints its wall time, the peak RSS of any one process (shimgen, a compiler, a runner),
the load average before and after (the machine may be shared), the phases (generation, build, samples) and the
coverage summary. The acceptance bar is 10 minutes on 2 cores with the OpInfo recording cached.

--compare-jobs then runs the samples phase again with --jobs 1 (the build is reused) and prints the ratio of the
two samples times, measured side by side. --cold records OpInfo's samples afresh (into D/cache) instead of using
the cache. --world W verifies that build world (`shimgen --verify --world`: `default` is an extension's default
build, libtorch alone; the report then goes to D/coverage-W.md).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def all_ops() -> list[str]:
    from shimgen.generate.parse import NativeYaml

    return sorted(NativeYaml().by_name)


def report_path(d: str, world: str | None) -> str:
    return os.path.join(d, f"coverage-{world}.md" if world else "coverage.md")


def run(d: str, jobs: int, env: dict[str, str], world: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
    cmd = [sys.executable, "-m", "shimgen", "--ops", ",".join(all_ops()), "--out", os.path.join(d, "out"),
           "--verify", "--build-dir", os.path.join(d, "build"), "--report", report_path(d, world),
           "--jobs", str(jobs), *(["--world", world] if world else [])]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT)
    return time.perf_counter() - t0, proc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.path.join(ROOT, ".bench-verify"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--compare-jobs", action="store_true")
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--world", help="the build world to verify (default: shimgen's, the overlay build)")
    args = ap.parse_args()
    env = {"SHIMGEN_CACHE_DIR": os.path.join(args.dir, "cache")} if args.cold else {}
    if args.cold and os.path.isdir(env["SHIMGEN_CACHE_DIR"]):
        for f in os.listdir(env["SHIMGEN_CACHE_DIR"]):
            os.unlink(os.path.join(env["SHIMGEN_CACHE_DIR"], f))
    load_before = os.getloadavg()
    seconds, proc = run(args.dir, args.jobs, env, args.world)
    load_after = os.getloadavg()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    summary = [line for line in proc.stdout.splitlines() if re.match(r"(\d+/\d+ overloads proven|build |note: |"
                                                                      r"OpInfo samples:|waited )", line)]
    world = f" --world {args.world}" if args.world else ""
    print(f"command: shimgen --ops <all {len(all_ops())} names> --verify --jobs {args.jobs}{world} "
          f"(exit {proc.returncode})")
    print(f"wall: {seconds:.0f} s; peak RSS of one process: {peak:.0f} MiB; load average before "
          f"{load_before[0]:.1f}, after {load_after[0]:.1f} ({os.cpu_count()} cores)")
    for line in summary:
        print(line)
    print(f"report: {report_path(args.dir, args.world)}")
    if args.compare_jobs:
        m = re.search(r"samples ([\d.]+)s", proc.stdout)
        one_s, one = run(args.dir, 1, env, args.world)
        m1 = re.search(r"samples ([\d.]+)s", one.stdout)
        if m and m1:
            print(f"samples phase: jobs={args.jobs} {float(m[1]):.0f} s, jobs=1 {float(m1[1]):.0f} s, ratio "
                  f"{float(m1[1]) / float(m[1]):.2f}x (wall {seconds:.0f} s vs {one_s:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
