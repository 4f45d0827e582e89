"""Per-call time of shimgen's generated torch::stable wrappers vs a direct at:: call vs upstream's hand-written
wrapper, for the same ops on small CPU tensors, measured side by side in one run.

    python benchmarks/bench_calls.py [--iters 20000] [--rounds 7]

Builds (once, in a temporary folder): the generated headers for the manifest's default set plus the backward
ops below, shimgen's overlay library (the C shims libtorch lacks: add.Tensor, and the backward ops' for the
overlay build), and benchmarks/bench_calls.cpp five times. The rounds interleave the builds; the tables show
medians and the ratios of medians. The `noise` column compares two builds of the same upstream code: ratios
within that spread are equal.

The second table: the backward ops whose bool[3] output_mask the boxed dispatcher carries from 2.10
(data/probe.yaml), on the dispatcher route they now take, against at:: and against the overlay C shim they
took before (an ops.h generated as if bool[N] had no dispatcher conversion).

The third table: the device route (torch::stable::cpu::, libtorch's cpu C shims, opt-in like at::cpu::) against
at:: and against the default wrapper of the same call (the route it replaces: shimgen's overlay shim, the Tensor
sibling, or a refusal, shown as `-`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shimgen.generate.signatures.stage import resolve
from shimgen.generate import plan as plan_mod  # noqa: E402
from shimgen.generate.signatures import cpp as sig_cpp  # noqa: E402
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp  # noqa: E402
from shimgen.generate import routes
from shimgen.generate.pipeline import write as write_atomically  # noqa: E402
from shimgen.proofs.verify import build as vbuild  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = [  # (label, aten op) in the order bench_calls.cpp measures them
    ("amax", "amax.default"),
    ("narrow", "narrow.default"),
    ("fill_", "fill_.Scalar"),
    ("pad", "pad.default"),
    ("subtract", "subtract.Tensor"),
    ("new_zeros", "new_zeros.default"),
    ("transpose", "transpose.int"),
    ("flatten", "flatten.using_ints"),
    ("sum", "sum.dim_IntList"),
    ("add", "add.Tensor"),
]
UPSTREAM_ROUTE = {  # how upstream's 2.13 ops.h calls each op (stable_surface.json)
    "amax.default": "shim", "narrow.default": "shim", "fill_.Scalar": "shim", "pad.default": "shim",
    "subtract.Tensor": "shim", "new_zeros.default": "dispatcher", "transpose.int": "dispatcher",
    "flatten.using_ints": "dispatcher", "sum.dim_IntList": "dispatcher", "add.Tensor": "-",
}
BACKWARD = [  # (label, aten op) in the order bench_backward measures them
    ("layer_norm_bw", "native_layer_norm_backward.default"),
    ("batch_norm_bw", "native_batch_norm_backward.default"),
    ("group_norm_bw", "native_group_norm_backward.default"),
    ("conv_bw", "convolution_backward.default"),
]
DEVICE = [  # (label, aten op) in the order bench_device measures them
    ("add(a,b)", "add.Tensor"),
    ("add(a,b,.5)", "add.Tensor"),
    ("pow(x,2.)", "pow.Tensor_Scalar"),
    ("mul(x,2.5)", "mul.Scalar"),
    ("addmm_out", "addmm.out"),
    ("cumsum", "cumsum.default"),
]
TORCH = vbuild.find_torch()


def compile_so(src: str, out: str, flags: list[str], libs: list[str] = ()) -> float:
    """flags: TORCH.stable_flags(...) or TORCH.aten_flags(...) plus defines; -O2 as extensions ship."""
    t0 = time.perf_counter()
    cmd = [vbuild.compiler(), "-O2", "-shared", "-fPIC", *flags, src, "-o", out, "-Wl,--no-as-needed", *libs]
    subprocess.run([*cmd, *TORCH.link_flags()], check=True)
    return time.perf_counter() - t0


def without_bool_list_dispatch(p: plan_mod.Plan) -> plan_mod.Plan:
    """The plan as if the boxed dispatcher could not carry bool[N] (the table before the probe)."""
    args = dict(p.table.arguments)
    args["bool[N]"] = replace(args["bool[N]"], ivalue=None)
    return replace(p, table=replace(p.table, arguments=args))  # a copy gets its own derived cache


def generate_cxx(ops: list[str] | None, out: str, old_bool_list: bool = False) -> None:
    """Only the C and C++ surfaces: what the benchmark compiles."""
    p = plan_mod.make(ops)
    if old_bool_list:
        p = without_bool_list_dispatch(p)
    write_atomically(out, {**emit_c.emit(r := resolve(p)), **emit_cpp.emit(r), **routes.get("cpu").files(p, r.wrappers)})


def build(tmp: str) -> dict[str, str]:
    backward = [op for _, op in BACKWARD]
    device_ops = sorted({op for _, op in DEVICE})
    ops = [*plan_mod.make(None).manifest.default_ops, *backward, *device_ops]
    gen = os.path.join(tmp, "generated")
    generate_cxx(ops, gen)
    gen_old = os.path.join(tmp, "generated_overlay_route")
    generate_cxx(ops, gen_old, old_bool_list=True)
    overlay_src = os.path.join(tmp, "overlay")
    generate_cxx(["add.Tensor", *backward, *device_ops], overlay_src)
    overlay = os.path.join(tmp, "libshimgen_overlay.so")
    cpp = os.path.join(overlay_src, "torch/csrc/inductor/aoti_torch/generated/c_shim_aten.cpp")
    secs = compile_so(cpp, overlay, TORCH.aten_flags(overlay_src))
    print(f"built overlay library in {secs:.1f}s", file=sys.stderr)
    src = os.path.join(HERE, "bench_calls.cpp")
    libs = {
        "aten": ([*TORCH.aten_flags(), "-DBENCH_NS=bench_aten", "-DBENCH_ATEN", "-DBENCH_BACKWARD",
                  "-DBENCH_DEVICE_CALLS"], []),
        "upstream": ([*TORCH.stable_flags(), "-DBENCH_NS=bench_upstream"], []),
        # the same source built again: the spread between two builds of identical code is the noise floor
        "upstream2": ([*TORCH.stable_flags(), "-DBENCH_NS=bench_upstream2"], []),
        "generated": ([*TORCH.stable_flags(gen, overlay=True), "-DBENCH_NS=bench_generated", "-DBENCH_BACKWARD",
                       "-DBENCH_DEVICE_CALLS"], [overlay]),
        # the device route (its calls need libtorch alone; this file's bench() also calls the overlay's add)
        "device": ([*TORCH.stable_flags(gen, overlay=True), "-DBENCH_NS=bench_device", "-DBENCH_DEVICE",
                    "-DBENCH_DEVICE_CALLS"], [overlay]),
        "overlay_route": ([*TORCH.stable_flags(gen_old, overlay=True), "-DBENCH_NS=bench_overlay_route",
                           "-DBENCH_BACKWARD"],
                          [overlay]),
    }
    out = {}
    for name, (flags, extra) in libs.items():
        so = os.path.join(tmp, f"libbench_{name}.so")
        secs = compile_so(src, so, flags, extra)
        print(f"built {name} in {secs:.1f}s", file=sys.stderr)
        out[name] = so
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        libs = build(tmp)
        for so in libs.values():
            torch.ops.load_library(so)
        x = torch.randn(4, 4)
        runs: dict[str, list[list[float]]] = {k: [] for k in libs if k != "device"}
        dev_builds = ["aten", "generated", "device"]
        dev_runs: dict[str, list[list[float]]] = {k: [] for k in dev_builds}
        bw_builds = ["aten", "generated", "overlay_route"]
        bw_runs: dict[str, list[list[float]]] = {k: [] for k in bw_builds}
        bw_iters = max(args.iters // 10, 10)  # these ops do real work: microseconds per call
        for _ in range(args.rounds):
            for name in runs:  # interleaved: every round measures all the builds
                runs[name].append(getattr(torch.ops, f"bench_{name}").bench(x, args.iters))
            for name in dev_builds:
                dev_runs[name].append(getattr(torch.ops, f"bench_{name}").bench_device(x, args.iters))
            for name in bw_builds:
                bw_runs[name].append(getattr(torch.ops, f"bench_{name}").bench_backward(x, bw_iters))
    med = {k: [statistics.median(r[i] for r in v) for i in range(len(OPS))] for k, v in runs.items()}
    bw_med = {k: [statistics.median(r[i] for r in v) for i in range(len(BACKWARD))] for k, v in bw_runs.items()}
    plan = plan_mod.make(None)
    routes = {w.op.name: w.variants[-1].route.name for w in sig_cpp.wrappers(plan)[0]}
    print(f"torch {torch.__version__}, 4x4 float32, {args.iters} calls x {args.rounds} rounds, medians (ns/call)")
    head = (f"{'op':<10} {'route (ours/upstream)':<27} {'at::':>8} {'upstream':>9} {'shimgen':>8} {'ours/at::':>9} "
            f"{'ours/upstream':>13} {'noise':>7}")
    print(head)
    print("-" * len(head))
    for i, (label, op) in enumerate(OPS):
        a, u, g, u2 = med["aten"][i], med["upstream"][i], med["generated"][i], med["upstream2"][i]
        route = f"{routes.get(op, '?')}/{UPSTREAM_ROUTE[op]}"
        ratio_u = f"{g / u:.2f}x" if u == u else "-"
        ups = f"{u:.0f}" if u == u else "-"
        noise = f"{u2 / u:.2f}x" if u == u else "-"
        print(f"{label:<10} {route:<27} {a:>8.0f} {ups:>9} {g:>8.0f} {g / a:>8.2f}x {ratio_u:>13} {noise:>7}")
    print("noise: upstream built twice from the same source, second/first (the spread to expect between builds)")
    print()
    bw_plan = plan_mod.make([op for _, op in BACKWARD])
    new_routes = {w.op.name: w.variants[-1].route.name for w in sig_cpp.wrappers(bw_plan)[0]}
    old_routes = {w.op.name: w.variants[-1].route.name for w in sig_cpp.wrappers(without_bool_list_dispatch(bw_plan))[0]}
    print(f"bool[3] output_mask ops, {bw_iters} calls x {args.rounds} rounds, medians (ns/call)")
    head = (f"{'op':<14} {'route (new/old)':<27} {'at::':>9} {'dispatcher':>11} {'overlay':>9} {'new/at::':>9} "
            f"{'old/at::':>9} {'new/old':>8}")
    print(head)
    print("-" * len(head))
    for i, (label, op) in enumerate(BACKWARD):
        a, d, o = bw_med["aten"][i], bw_med["generated"][i], bw_med["overlay_route"][i]
        route = f"{new_routes.get(op, '?')}/{old_routes.get(op, '?')}"
        print(f"{label:<14} {route:<27} {a:>9.0f} {d:>11.0f} {o:>9.0f} {d / a:>8.2f}x {o / a:>8.2f}x {d / o:>7.2f}x")
    print("dispatcher: the wrappers as generated now; overlay: generated as if bool[N] had no dispatcher "
          "conversion (shimgen's C shim, linked from the overlay library)")
    print()
    dev_med = {k: [statistics.median(r[i] for r in v) for i in range(len(DEVICE))] for k, v in dev_runs.items()}
    dev_plan = plan_mod.make(sorted({op for _, op in DEVICE}))
    default_routes = {w.op.name: w.variants[-1].route for w in sig_cpp.wrappers(dev_plan)[0]}
    print(f"device route (torch::stable::cpu::), {args.iters} calls x {args.rounds} rounds, medians (ns/call); "
          "`-`: the default wrapper refuses the call (a shimgen: error)")
    head = (f"{'call':<12} {'replaces':<15} {'at::':>8} {'cpu::':>8} {'default':>8} {'cpu::/at::':>10} "
            f"{'default/at::':>12} {'cpu::/default':>13}")
    print(head)
    print("-" * len(head))
    for i, (label, op) in enumerate(DEVICE):
        a, d, g = dev_med["aten"][i], dev_med["device"][i], dev_med["generated"][i]
        gs, ga, dg = (f"{g:.0f}", f"{g / a:.2f}x", f"{d / g:.2f}x") if g == g else ("-", "-", "-")
        print(f"{label:<12} {default_routes.get(op, '?'):<15} {a:>8.0f} {d:>8.0f} {gs:>8} {d / a:>9.2f}x {ga:>12} "
              f"{dg:>13}")
    print("cpu::: libtorch's cpu C shim (no dispatcher: a backend kernel, like at::cpu::); default: the "
          "torch::stable wrapper of the same call (generated_shim: shimgen's overlay shim; sibling: the Tensor "
          "overload with a 0-dim tensor)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
