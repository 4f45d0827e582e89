"""Per-call time of the generated wrappers that take a schema Scalar (shimgen::Scalar) vs a direct at:: call,
on small tensors (CPU by default), measured side by side in one run.

    python benchmarks/bench_scalars.py [--iters 20000] [--rounds 7] [--device cuda]

With --device cuda the inputs live on the GPU: a call's cost is the host's (launches are asynchronous; each round
ends with a synchronize, so a queue that fills up shows in the times). `full` makes its tensor on the CPU there too.

Each case is one call as an extension author writes it; the route column says how the generated wrapper lowers
that call (docs/design.md, "Exact Scalars"): libtorch's C shim with the number as a double, shimgen's own C shim from the
overlay library, the Tensor sibling through the boxed dispatcher with the number as a 0-dim tensor, or a
composition (`full` -> `empty` + `fill_`). Builds (once, in a temporary folder) the generated headers for the
manifest's default set plus the cases' ops, the overlay library (add.Tensor's C shim, which libtorch 2.13 lacks),
and benchmarks/bench_scalars.cpp four times: at::, the generated ops.h twice (the `noise` column: the second
build of identical code over the first) and upstream's ops.h (only `fill_` and `full` take a Scalar there, as a
double). Before timing, every case's result is compared with at::'s (values and dtype): a generated wrapper
that differs stops the benchmark; an upstream one that differs is marked `!=`. The rounds interleave the
builds; the table shows medians and ratios of medians. The at:: build also times at:: taking each wrapper's route
(the 0-dim tensor, the sibling, the composition; checked equal too), which splits the wrapper's cost into what the
route costs inside ATen and what the stable ABI adds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_calls import TORCH, compile_so, generate_cxx  # noqa: E402
from shimgen.generate import plan as plan_mod  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (call, the route the generated wrapper takes for it), in the order bench_scalars.cpp runs them. f: float32 4x4,
# i: int64 4x4. The routes are read from the wrapper bodies (generated ops.h) for these values and dtypes.
CASES = [
    ("mul(f, 2.5)", "sibling mul.Tensor"),  # libtorch has no mul.Scalar shim
    ("mul(i, 2)", "sibling mul.Tensor"),
    ("mul_(i, 2)", "sibling mul_.Tensor"),
    ("add(f, f, alpha=2)", "overlay shim add.Tensor"),  # an integer alpha on floating tensors travels as 2.0
    ("bitwise_and(i, 6)", "sibling bitwise_and.Tensor"),
    ("clamp(i, 0, 5)", "sibling clamp.Tensor"),
    ("clamp(f, 0.0, 1.0)", "sibling clamp.Tensor"),
    ("full({4,4}, 7)", "empty + fill_.Tensor"),  # int64, as at::full infers it
    ("full({4,4}, 7.5)", "libtorch shim full"),
    ("fill_(f, 3)", "libtorch shim fill_.Scalar"),  # an integer on a floating tensor: the exact double
    ("fill_(i, 3)", "sibling fill_.Tensor"),
]
OPS = ["mul.Scalar", "mul_.Scalar", "add.Tensor", "bitwise_and.Scalar", "clamp", "full", "fill_.Scalar"]


def build(tmp: str) -> dict[str, str]:
    gen = os.path.join(tmp, "generated")
    generate_cxx([*plan_mod.make(None).manifest.default_ops, *OPS], gen)
    overlay_src = os.path.join(tmp, "overlay")
    generate_cxx(["add.Tensor"], overlay_src)
    overlay = os.path.join(tmp, "libshimgen_overlay.so")
    cpp = os.path.join(overlay_src, "torch/csrc/inductor/aoti_torch/generated/c_shim_aten.cpp")
    secs = compile_so(cpp, overlay, TORCH.aten_flags(overlay_src))
    print(f"built overlay library in {secs:.1f}s", file=sys.stderr)
    src = os.path.join(HERE, "bench_scalars.cpp")
    libs = {
        "aten": ([*TORCH.aten_flags(), "-DBENCH_NS=bench_scalars_aten", "-DBENCH_ATEN"], []),
        "generated": ([*TORCH.stable_flags(gen, overlay=True), "-DBENCH_NS=bench_scalars_generated"], [overlay]),
        # the same source built again: the spread between two builds of identical code is the noise floor
        "generated2": ([*TORCH.stable_flags(gen, overlay=True), "-DBENCH_NS=bench_scalars_generated2"], [overlay]),
        "upstream": ([*TORCH.stable_flags(), "-DBENCH_NS=bench_scalars_upstream"], []),
    }
    out = {}
    for name, (flags, extra) in libs.items():
        so = os.path.join(tmp, f"libbench_scalars_{name}.so")
        secs = compile_so(src, so, flags, extra)
        print(f"built {name} in {secs:.1f}s", file=sys.stderr)
        out[name] = so
    return out


DEVICE = "cpu"  # --device


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 4, generator=g).to(DEVICE), torch.randint(-8, 9, (4, 4), generator=g).to(DEVICE)


def synchronize() -> None:
    if DEVICE != "cpu":
        torch.cuda.synchronize()


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def check(builds: list[str]) -> dict[str, list[bool]]:
    """Each build's result of each case vs at::'s; stops for a generated wrapper that differs (the generated
    builds have every case; upstream's cases it lacks return f and are not shown)."""
    got = {}
    for name in builds:
        f, i = inputs()
        got[name] = getattr(torch.ops, f"bench_scalars_{name}").results(f, i, f.clone(), i.clone(), i.clone())
    f, i = inputs()
    got["route"] = torch.ops.bench_scalars_aten.route_results(f, i, f.clone(), i.clone(), i.clone())
    builds = [*builds, "route"]
    ok = {}
    for name in builds:
        ok[name] = [same(r, a) for r, a in zip(got[name], got["aten"])]
        for (label, _), good, r, a in zip(CASES, ok[name], got[name], got["aten"]):
            if not good and name != "upstream":
                raise SystemExit(f"{name}: {label} differs from at::: {r.dtype} {r.tolist()} vs {a.dtype} {a.tolist()}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--device", default="cpu", help="where the inputs live: cpu (default) or cuda[:N]")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    if DEVICE != "cpu" and not torch.cuda.is_available():
        print(f"bench_scalars: --device {DEVICE}: torch {torch.__version__} sees no CUDA device", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        libs = build(tmp)
        for so in libs.values():
            torch.ops.load_library(so)
        ok = check(list(libs))  # before timing: the benchmark cannot time a wrong call
        f, i = inputs()
        runs: dict[str, list[list[float]]] = {k: [] for k in [*libs, "route"]}
        for _ in range(args.rounds):
            for name in libs:  # interleaved: every round measures all the builds
                op = getattr(torch.ops, f"bench_scalars_{name}").bench
                runs[name].append(op(f, i, f.clone(), i.clone(), args.iters))
                synchronize()
            runs["route"].append(torch.ops.bench_scalars_aten.bench_route(f, i, f.clone(), i.clone(), args.iters))
            synchronize()
        missing = {k: [t != t for t in v[0]] for k, v in runs.items()}
    med = {k: [statistics.median(r[n] for r in v) for n in range(len(CASES))] for k, v in runs.items()}
    print(f"torch {torch.__version__}, {DEVICE}, 4x4 float32 f / int64 i, {args.iters} calls x {args.rounds} rounds, "
          f"medians (ns/call); every shimgen result equals at::'s (values, dtype)")
    head = (f"{'case':<19} {'shimgen route':<27} {'at::':>6} {'shimgen':>8} {'ours/at::':>9} {'noise':>6} "
            f"{'at::route':>9} {'route/at::':>10} {'ours/route':>10} {'upstream':>9} {'up/at::':>8}")
    print(head)
    print("-" * len(head))
    for n, (label, route) in enumerate(CASES):
        a, g, g2, u, r = (med[k][n] for k in ("aten", "generated", "generated2", "upstream", "route"))
        if missing["upstream"][n]:
            ups, up_ratio = "-", "-"
        else:
            ups = f"{u:.0f}" + ("" if ok["upstream"][n] else " !=")
            up_ratio = f"{u / a:.2f}x"
        print(f"{label:<19} {route:<27} {a:>6.0f} {g:>8.0f} {g / a:>8.2f}x {g2 / g:>5.2f}x {r:>9.0f} "
              f"{r / a:>9.2f}x {g / r:>9.2f}x {ups:>9} {up_ratio:>8}")
    print("noise: the generated build compiled twice, second/first (the spread to expect between builds)")
    print("at::route: at:: taking the wrapper's route (0-dim tensor, sibling, composition): route/at:: is what the "
          "route costs inside ATen, ours/route what the stable ABI adds to it")
    print("upstream: torch's own ops.h (fill_, full take a double: 3.0, 7.0); != its result differs from at::'s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
