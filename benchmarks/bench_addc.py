"""Per-call cost of the `scalars_tensor` routes (addcmul, addcdiv, addcmul_, addcdiv_, _foreach_addcmul_) beside
at:: and beside the overlay shims they replace, measured side by side in one run (medians of interleaved rounds,
4x4 float32, one thread).

    python benchmarks/bench_addc.py [--iters 20000] [--rounds 7] [--no-grad]

The new route checks for a call autograd records (libtorch exports no requires_grad getter: `alias` + `is_leaf`
per tensor in grad mode), packs the number in a 1-D tensor and calls `_foreach_X.Tensor` on one-element lists
through the dispatcher; `--no-grad` calls with grad mode off, as optimizers do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.bench_new_routes import TORCH, compile_so  # noqa: E402
from shimgen.generate import pipeline  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = ["addcmul(x,x,x,.5)", "addcdiv(x,x,d,.5)", "addcmul_(u,x,x,1e-3)", "addcdiv_(u,x,d,-1e-3)",
         "_foreach_addcmul_ x2"]
OPS = ["addcmul", "addcdiv", "addcmul_", "addcdiv_", "_foreach_addcmul_", "add", "abs", "clone"]


def build(tmp: str) -> dict[str, str]:
    import subprocess

    gen = os.path.join(tmp, "gen")
    files, _ = pipeline.generate(OPS, None, None)
    pipeline.write(gen, files)
    lib_dir = os.path.join(tmp, "overlay")
    subprocess.run([sys.executable, "-m", "shimgen.dev", "overlay-build", "--ops", ",".join(OPS), "--out", lib_dir],
                   check=True, stdout=subprocess.DEVNULL)
    src = os.path.join(HERE, "bench_addc.cpp")
    builds = {
        "aten": ([*TORCH.aten_flags(), "-DBENCH_NS=bench_addc_aten", "-DBENCH_ATEN"], []),
        "libtorch": ([*TORCH.stable_flags(gen), "-DBENCH_NS=bench_addc_libtorch"], []),
        "overlay": ([*TORCH.stable_flags(gen, overlay=True), "-DBENCH_NS=bench_addc_overlay"],
                    [f"-L{lib_dir}", "-lshimgen_overlay", f"-Wl,-rpath,{lib_dir}"]),
    }
    out = {}
    for name, (flags, libs) in builds.items():
        so = os.path.join(tmp, f"libbench_addc_{name}.so")
        print(f"built {name} in {compile_so(src, so, flags, libs):.1f}s", file=sys.stderr)
        out[name] = so
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-grad", action="store_true", help="call with grad mode off")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        libs = build(tmp)
        for so in libs.values():
            torch.ops.load_library(so)
        x = torch.randn(4, 4)
        runs: dict[str, list[list[float]]] = {k: [] for k in libs}
        for _ in range(args.rounds):
            for name in libs:  # interleaved: every round measures all the builds
                with torch.set_grad_enabled(not args.no_grad):
                    runs[name].append(getattr(torch.ops, f"bench_addc_{name}").bench(x, args.iters))
    med = {k: [statistics.median(r[i] for r in v) for i in range(len(CALLS))] for k, v in runs.items()}
    print(f"torch {torch.__version__}, 4x4 float32, {args.iters} calls x {args.rounds} rounds, medians (ns/call), "
          f"grad mode {'off' if args.no_grad else 'on'}")
    head = f"{'call':<22} {'at::':>8} {'new':>8} {'overlay':>8} {'new/at::':>9} {'overlay/at::':>13} {'new/overlay':>12}"
    print(head)
    print("-" * len(head))
    for i, call in enumerate(CALLS):
        a, n, o = med["aten"][i], med["libtorch"][i], med["overlay"][i]
        print(f"{call:<22} {a:>8.0f} {n:>8.0f} {o:>8.0f} {n / a:>8.2f}x {o / a:>12.2f}x {n / o:>11.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
