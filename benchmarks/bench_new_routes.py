"""Per-call cost of the libtorch-only routes beside at:: and beside the overlay route each replaces,
measured side by side in one run (medians of interleaved rounds, 4x4 float32, one thread). The overlay column is
the overlay build as it was before the overlay only added forms (overlay_ties_to_libtorch=False): its shims.

    python benchmarks/bench_new_routes.py [--iters 20000] [--rounds 7]

| call | new route (default build, libtorch alone) | replaced (with SHIMGEN_OVERLAY) |
|---|---|---|
| add(x, y) | equivalent: libtorch's aoti_torch_aten_subtract_Tensor with -alpha | shimgen's add.Tensor shim |
| pow(x, 2) | number rule: mul(x, x) through its wrapper | shimgen's pow.Tensor_Scalar shim |
| std(x, {1}) | dispatcher, correction pushed as None | shimgen's std.correction shim |
| gelu(x, "tanh") | dispatcher with a str (leaks 48 B/call on 2.10-2.13) | shimgen's gelu shim |
| addmm(x, x, x) | legacy shim: libtorch's aoti_torch_addmm_out (+ a dispatch probe for the dtype) | shimgen's addmm shim |
| threshold_backward(x, x, 0) | composition: le.Tensor + where.self (dispatcher) | shimgen's threshold_backward shim |
| add_(u, x) | composition: add (libtorch's subtract shim) then copy_ | shimgen's add_.Tensor shim |
| add_out(o, x, x) | composition: add, then aten's out= rules and copy_ | shimgen's add.out shim |
| where(c, 1.0, 0.0) | composition `wrapped_numbers`: where.self with 0-dim tensors | shimgen's where.Scalar shim |
| hardtanh(x, -.5, .5) | composition `clamp`: clamp.Tensor with 0-dim bounds | shimgen's hardtanh shim |
| hardshrink(x, 0.5) | composition `hardshrink`: abs, le, where | shimgen's hardshrink shim |
| searchsorted(s, 0.5) | composition `wrapped_numbers`: searchsorted.Tensor | shimgen's searchsorted.Scalar shim |
| linspace(0, 1, 16) | composition `item_numbers`: linspace.Tensor_Tensor | shimgen's linspace shim |
| constant_pad_nd(x, {1, 1}, 0.5) | composition `as_double`: pad.default, mode constant | shimgen's shim |
| scatter(x, 0, i, 1.0) | composition `scatter_fill`: expand_as, scatter.src | shimgen's scatter.value shim |
| threshold_(v, 0, 0) | composition `inplace`: threshold, then copy_ (a clone of self in grad mode) | shimgen's shim |
| add(i, i) on int64 | number rule `integral_add`: mul, expand_as, type_as, neg, unsqueeze, diff, squeeze, copy_ | shimgen's add.Tensor shim |
| arange(0.0, 16.0, 1.0) | composition: empty_strided shim, fill_, narrow, fill_, cumsum (float64), _to_copy | shimgen's arange.start_step shim |
| linalg_vector_norm(x) | number_as_none: linalg_norm with ord None (dispatcher) | shimgen's linalg_vector_norm shim |
| pow(x, 0.5), pow(x, -1.) | number rules (no_grad): sqrt, reciprocal (+ records_grad in grad mode) | shimgen's pow.Tensor_Scalar shim |
| pow(x, 3.) | number rule `kernel: cube` (no_grad): mul, mul (+ records_grad in grad mode) | shimgen's pow.Tensor_Scalar shim |
| elu_backward(x, 1, 1, 1, true, x) | composition `elu_grad`: isnan/any, mul, neg, sub, mul x3, le, where.self_out (+ records_grad in grad mode) | shimgen's elu_backward shim |
| _add_relu(x, x) | composition `add_relu`: add (subtract shim), isnan/eq/signbit/logical_and/logical_or/any, clamp.Tensor (+ records_grad) | shimgen's _add_relu.Tensor shim |
| norm(x), dist(x, x) | number_as_none: norm.ScalarOpt_dim with p None (dispatcher); dist: sub first | shimgen's norm.Scalar / dist shims |
| trapezoid(x, 0.5), cumulative_trapezoid(x, 0.5) | kernels trapezoid_dx: aten's calls (select, add, sum, mul, sub / slice, add, mul, cumsum) | shimgen's shims |
| special_legendre_polynomial_p(x, 3) | composition `wrapped_numbers`: the Tensor overload with a 0-dim n | shimgen's n_scalar shim |
| _test_serialization_subcmul(x, x, 0.5) | kernel subcmul: mul.Scalar's wrapper (mul.Tensor, a 0-dim alpha), sub.Tensor's (subtract shim) | shimgen's shim |
| _pad_packed_sequence(x, bs, false, 0.0, 0) | kernel pad_packed: contiguous, full, new_empty, slice, view, copy_ per run (dispatcher) | shimgen's shim |
| isin(0.5, x) | composition `wrapped_numbers` (unwrapped_at): isin.Tensor_Tensor with a 0-dim number | shimgen's isin.Scalar_Tensor shim |
| linalg_matrix_norm(x, 2) | kernel matrix_norm_two: aten's calls (permute, linalg_svdvals, amax) | shimgen's linalg_matrix_norm shim |
| renorm(x, 2, 0, 1.0) | kernel renorm_two: linalg_vector_norm (linalg_norm, ord None), gt, add, div, where, mul (refused where autograd records it) | shimgen's renorm shim |
| linalg_matrix_norm_out(n, x, 2) | kernel out, composite: matrix_norm_two, a dtype check, copy_ | shimgen's linalg_matrix_norm.out shim |
| _add_relu_out(o, x, x) | kernel out: _add_relu's composition, then aten's out= rules (refuse_cast, no_derivative) | shimgen's _add_relu.out shim |
| searchsorted_out(o, s, 0.5) | wrapped_numbers via searchsorted.Tensor_out (dispatcher) | shimgen's searchsorted.Scalar_out shim |
| add(i64, x) | equivalent: the subtract shim, alpha as a double where any operand is floating (refused before) | shimgen's add.Tensor shim |
| baddbmm(x3, x3, x3, 1, 0.125) | kernel cpu_kernel: autocast probe, records_grad, resolve_neg/conj, new_empty, libtorch's CPU C shim | shimgen's baddbmm shim |
| scatter_reduce_(r, 0, i, x, "amax", false) | kernel cpu_kernel (a str on 2.10-2.13): records_grad, resolve_neg/conj, clone, the CPU C shim, copy_ | shimgen's scatter_reduce_.two shim |
| _addmm_activation(x, x, x, 1, 1, true) | kernel cpu_kernel: autocast probe, records_grad, resolve_neg/conj, libtorch's CPU C shim | shimgen's _addmm_activation shim |
| _foreach_add({x, x, x, x}, 1.5) | kernel foreach: add.Scalar's wrapper on each tensor, results collected | the same kernel over shimgen's add.Scalar shim (no shim returns a Tensor[]) |

`--no-grad` runs the calls with grad mode off (the out= and in-place compositions skip their autograd checks).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shimgen.generate import pipeline  # noqa: E402
from shimgen.proofs.verify import build as vbuild, overlay  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = ["add(x, y)", "pow(x, 2)", "std(x, {1})", 'gelu(x, "tanh")', "addmm(x, x, x)", "threshold_bw(x,x,0)",
         "add_(u, x)", "add_out(o, x, x)", "where(c, 1.0, 0.0)", "hardtanh(x,-.5,.5)", "hardshrink(x, 0.5)",
         "searchsorted(s,0.5)", "linspace(0,1,16)", "constant_pad_nd", "scatter(x,0,i,1.0)", "threshold_(v,0,0)",
         "add(i, i) int64", "arange(0., 16., 1.)", "vector_norm(x)", "pow(x, 0.5)", "pow(x, -1.)",
         "pow(x, 3.)", "elu_backward(x..x)", "_add_relu(x, x)", "norm(x)", "dist(x, x)", "trapezoid(x, 0.5)",
         "cumul_trapezoid", "legendre_p(x, 3)", "subcmul(x, x, 0.5)",
         "_pad_packed_seq", "isin(0.5, x)", "matrix_norm(x, 2)", "renorm(x,2,0,1.0)", "matrix_norm_out",
         "_add_relu_out(o,x,x)", "searchsorted_out", "add(i64, x)", "baddbmm(x,x,x,1,.125)",
         "scatter_reduce_ amax", "_addmm_act(gelu)", "_foreach_add(4x,1.5)"]
OPS = ["add", "pow", "std", "gelu", "mul", "addmm", "threshold_backward", "add_", "clone", "gt", "where", "hardtanh",
       "hardshrink", "sort", "flatten", "searchsorted", "linspace", "constant_pad_nd", "zeros_like", "scatter",
       "threshold_", "ones_like", "arange", "linalg_vector_norm", "linalg_norm", "sqrt", "reciprocal", "rsqrt",
       "elu_backward", "sub", "_add_relu", "clamp", "norm", "dist", "trapezoid", "cumulative_trapezoid",
       "special_legendre_polynomial_p", "_test_serialization_subcmul", "_pad_packed_sequence", "isin", "full",
       "contiguous", "new_empty", "slice", "view", "copy_", "transpose", "linalg_matrix_norm", "renorm", "select",
       "baddbmm", "scatter_reduce_", "_addmm_activation", "_foreach_add"]
TORCH = vbuild.find_torch()


def compile_so(src: str, out: str, flags: list[str], libs: list[str] = ()) -> float:
    t0 = time.perf_counter()
    cmd = [vbuild.compiler(), "-O2", "-shared", "-fPIC", *flags, src, "-o", out, "-Wl,--no-as-needed", *libs]
    subprocess.run([*cmd, *TORCH.link_flags()], check=True)
    return time.perf_counter() - t0


def build(tmp: str) -> dict[str, str]:
    gen = os.path.join(tmp, "gen")
    files, _ = pipeline.generate(OPS, None, None)
    pipeline.write(gen, files)
    # The overlay build as it was: its shim won ties with libtorch's routes (now the overlay only adds forms)
    old = os.path.join(tmp, "gen_overlay")
    files, _ = pipeline.generate(OPS, None, None, overlay_ties_to_libtorch=False)
    pipeline.write(old, files)
    lib_dir = os.path.join(tmp, "overlay")
    with contextlib.redirect_stdout(io.StringIO()):  # its shims, as that build calls them
        if overlay.main(["--ops", ",".join(OPS), "--out", lib_dir], overlay_ties_to_libtorch=False) != 0:
            raise SystemExit("the overlay library did not build")
    src = os.path.join(HERE, "bench_new_routes.cpp")
    builds = {
        "aten": ([*TORCH.aten_flags(), "-DBENCH_NS=bench_new_aten", "-DBENCH_ATEN"], []),
        "libtorch": ([*TORCH.stable_flags(gen), "-DBENCH_NS=bench_new_libtorch"], []),
        # the routes before the libtorch-only ones: the overlay (str through the dispatcher only with SHIMGEN_LEAKY_STR)
        "overlay": ([*TORCH.stable_flags(old, overlay=True), "-DBENCH_NS=bench_new_overlay"],
                    [f"-L{lib_dir}", "-lshimgen_overlay", f"-Wl,-rpath,{lib_dir}"]),
    }
    out = {}
    for name, (flags, libs) in builds.items():
        so = os.path.join(tmp, f"libbench_new_{name}.so")
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
                    runs[name].append(getattr(torch.ops, f"bench_new_{name}").bench(x, args.iters))
    med = {k: [statistics.median(r[i] for r in v) for i in range(len(CALLS))] for k, v in runs.items()}
    print(f"torch {torch.__version__}, 4x4 float32, {args.iters} calls x {args.rounds} rounds, medians (ns/call), "
          f"grad mode {'off' if args.no_grad else 'on'}")
    head = f"{'call':<20} {'at::':>8} {'new':>8} {'overlay':>8} {'new/at::':>9} {'overlay/at::':>13} {'new/overlay':>12}"
    print(head)
    print("-" * len(head))
    for i, call in enumerate(CALLS):
        a, n, o = med["aten"][i], med["libtorch"][i], med["overlay"][i]
        print(f"{call:<20} {a:>8.0f} {n:>8.0f} {o:>8.0f} {n / a:>8.2f}x {o / a:>12.2f}x {n / o:>11.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
