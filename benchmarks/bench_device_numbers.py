"""Per-call time (ns, timed in C++ over a loop of calls) of the wrappers whose number routes docs/cuda.md changed, in
this checkout's generated headers and in another checkout's (the base), side by side on small CPU tensors.

    python benchmarks/bench_device_numbers.py --base /path/to/other/checkout [--rounds 21] [--iters 3000]

Each checkout generates the cases' ops (--only) with its own shimgen, builds benchmarks/bench_device_numbers.cpp
against them (libtorch alone) and loads it; the rounds interleave the two builds (alternating which goes first);
the table shows medians and the ratio this/base. On a CPU operand the device rule costs one device query per
number (scalar.h on_device_of): the ratios should stay within noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.cxx import build_so  # noqa: E402

OPS = "clamp,clamp_min,hardtanh,scatter,mul,addmm"
CASES = ["clamp(x, 0.0, 0.5)", "clamp_min(x, 0.1)", "clamp(i, 0, 5)", "hardtanh(x, -0.25, 0.25)",
         "scatter(x, 1, i, 2.0)", "mul(x, 2.5)", "addmm(x, a, b, 0.5, 2.0)"]  # bench_device_numbers.cpp's `which`


def build(name: str, repo: str, work: str):
    gen = os.path.join(work, f"gen_{name}")
    subprocess.run([sys.executable, "-m", "shimgen", "--ops", OPS, "--only", "--out", gen], check=True,
                   env=dict(os.environ, PYTHONPATH=repo), capture_output=True)
    src = os.path.join(work, f"{name}.cpp")
    with open(os.path.join(ROOT, "benchmarks", "bench_device_numbers.cpp")) as f:
        text = f.read().replace("NS", f"bdn_{name}")
    with open(src, "w") as f:
        f.write(text)
    lib = os.path.join(work, f"{name}.so")
    build_so(src, lib, gen)
    torch.ops.load_library(lib)
    return getattr(torch.ops, f"bdn_{name}").bench


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other checkout (its shimgen generates the base build)")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--iters", type=int, default=3000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        libs = {"base": build("base", os.path.abspath(args.base), work), "this": build("this", ROOT, work)}
        x = torch.linspace(-1, 1, 16).reshape(4, 4)
        i = torch.tensor([[0, 1, 2, 3]] * 4)
        a, b = torch.randn(4, 4), torch.randn(4, 4)
        res = {c: {"base": [], "this": []} for c in CASES}
        for r in range(args.rounds):
            for w, c in enumerate(CASES):
                for k in ("base", "this") if r % 2 == 0 else ("this", "base"):
                    res[c][k].append(libs[k](x, i, a, b, w, args.iters))
    print("| call | base ns | this ns | this/base |\n|---|---|---|---|")
    for c in CASES:
        m, t = statistics.median(res[c]["base"]), statistics.median(res[c]["this"])
        print(f"| {c} | {m:.0f} | {t:.0f} | {t / m:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
