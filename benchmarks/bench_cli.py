"""Wall time of `shimgen --ops add,pad,amax` next to torchgen's `parse_native_yaml` on the same yaml.

Not a test. Each measurement is a fresh process (imports included), as a user sees it; the two are interleaved
so that both see the same machine load. Goal: shimgen <= 0.5 s.

    python benchmarks/bench_cli.py [--runs 7] [--ops add,pad,amax] [--profile]

--profile also prints the slowest imports (python -X importtime) and a cProfile of one in-process run.
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

TORCHGEN_CHILD = r"""
import os, sys, time
start = time.perf_counter()
import torchgen
from torchgen.gen import parse_native_yaml
imported = time.perf_counter()
folder = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
parsed = parse_native_yaml(os.path.join(folder, "native_functions.yaml"), os.path.join(folder, "tags.yaml"))
done = time.perf_counter()
print(f"{imported - start:.6f} {done - imported:.6f} {len(parsed.native_functions)}")
"""


def wall(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return elapsed, proc.stdout


def profile(ops: str, out: str) -> None:
    print("\n== slowest imports (python -X importtime -m shimgen), cumulative microseconds ==")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "shimgen", "--ops", ops, "--out", out],
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
    for cumulative, depth, name in sorted(rows, reverse=True)[:15]:
        print(f"  {cumulative / 1e6:7.3f} s  {'  ' * depth}{name}")

    print("\n== cProfile of one in-process run (imports already done), top 15 by cumulative time ==")
    import contextlib
    import cProfile
    import io
    import pstats

    from shimgen.tools import cli

    with contextlib.redirect_stdout(io.StringIO()):  # the CLI lists the files it writes
        cli.main(["--ops", ops, "--out", out])  # warm: imports
        prof = cProfile.Profile()
        prof.enable()
        cli.main(["--ops", ops, "--out", out])
        prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(15)
    print("\n".join(buf.getvalue().splitlines()[:45]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ops", default="add,pad,amax")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    out = tempfile.mkdtemp(prefix="shimgen-bench-")
    try:
        module_cmd = [sys.executable, "-m", "shimgen", "--ops", args.ops, "--out", out]
        script = shutil.which("shimgen")
        script_cmd = [script, "--ops", args.ops, "--out", out] if script else None
        torchgen_cmd = [sys.executable, "-c", TORCHGEN_CHILD]

        wall(module_cmd)  # warm the file cache and __pycache__
        wall(torchgen_cmd)
        shim_m, shim_s, tg_wall, tg_import, tg_parse = [], [], [], [], []
        count = 0
        for _ in range(args.runs):
            shim_m.append(wall(module_cmd)[0])
            if script_cmd:
                shim_s.append(wall(script_cmd)[0])
            elapsed, stdout = wall(torchgen_cmd)
            imp, parse, count = stdout.split()
            tg_wall.append(elapsed)
            tg_import.append(float(imp))
            tg_parse.append(float(parse))

        med = statistics.median
        rows = [(f"shimgen --ops {args.ops}  (python -m shimgen)", shim_m)]
        if script_cmd:
            rows.append((f"shimgen --ops {args.ops}  ({script})", shim_s))
        rows.append((f"torchgen parse_native_yaml, {count} functions (process)", tg_wall))
        width = max(len(label) for label, _ in rows)
        print(f"median of {args.runs} fresh processes, interleaved; {os.cpu_count()} CPUs, "
              f"python {sys.version.split()[0]}")  # fmt: skip
        for label, times in rows:
            print(f"  {label:<{width}} : {med(times):6.3f} s   [min {min(times):.3f}, max {max(times):.3f}]")
        print(f"  {'  of which: import torchgen.gen':<{width}} : {med(tg_import):6.3f} s")
        print(f"  {'  of which: parse_native_yaml() call':<{width}} : {med(tg_parse):6.3f} s")
        print(f"  {'ratio shimgen / torchgen process':<{width}} : {med(shim_m) / med(tg_wall):6.3f}")
        print(f"  {'ratio shimgen / parse_native_yaml() call alone':<{width}} : {med(shim_m) / med(tg_parse):6.3f}")
        print(f"  goal shimgen <= 0.5 s: {'met' if med(shim_m) <= 0.5 else 'NOT met'}")
        if args.profile:
            profile(args.ops, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
