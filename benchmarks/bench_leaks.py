"""Memory per call of shimgen's generated torch::stable wrappers, per route and argument type, with a direct at::
call side by side: does any call leak?

    python benchmarks/bench_leaks.py [--calls 200000] [--warmup 20000] [--only gelu_str,...]

Builds (once, in a temporary folder): the generated headers for the ops below, shimgen's overlay library (the C
shims libtorch lacks), benchmarks/bench_leaks.cpp twice (stable-ABI only against the generated headers; ATen
directly), and the round-trip kernels `--verify` registers (TORCH_BOX) for the string-taking ops. Each case
warms up, then makes --calls calls in one C++ loop (the round-trip rows: from Python) while the process's
resident set size (RSS, /proc/self/statm) is read before and after. A leak of b bytes per call shows as about
b * calls bytes of growth (200,000 calls: 32 B/call is 6.4 MB); the `ok` column says whether the generated
wrapper's growth stays within one allocator granule (64 KB) of none. Failing calls (the wrapper throws; the
loop catches) are measured the same way, with their time per call.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--warmup", type=int, default=20_000)
    ap.add_argument("--fail-calls", type=int, help="calls for the failing cases (default: --calls)")
    ap.add_argument("--fast-backtraces", action="store_true",
                    help="set TORCH_SHOW_CPP_STACKTRACES=1 (libtorch's fast backtrace symbolizer) so that 200,000 "
                         "failing calls take seconds, not hours; the wrappers' code paths are the same")
    ap.add_argument("--only", help="comma-separated case labels (with --default-build: label prefixes)")
    ap.add_argument("--build-dir", help="build here and keep the libraries (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="with --build-dir: reuse libraries built before")
    ap.add_argument("--default-build", action="store_true",
                    help="only the default build's str calls (DEFAULT_CALLS): each compiled without any macro at "
                         "target 2.10 and at the headers' own release (a refusal: its compile error's reason), "
                         "then with -DSHIMGEN_LEAKY_STR for contrast, RSS growth measured over --calls")
    ap.add_argument("--runtime", help="with --default-build: build against and run on the runtime venv X.Y.Z "
                                      "($SHIMGEN_RUNTIMES/torch-X.Y.Z) instead of the installed torch")
    return ap.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.fast_backtraces:  # read by libtorch_python when torch is imported
    os.environ["TORCH_SHOW_CPP_STACKTRACES"] = "1"

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shimgen.generate import pipeline  # noqa: E402
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate import plan as plan_mod  # noqa: E402
from shimgen.proofs.verify import build as vbuild  # noqa: E402
from shimgen.proofs.verify import overlay, roundtrip  # noqa: E402
from shimgen.facts.versions import Version  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (label, aten overload, argument types exercised) in bench_leaks.cpp's order.
CASES = [
    ("gelu_str", "gelu.default", "str"),
    ("div_mode_str", "div.Tensor_mode", "str?"),
    ("div_mode_none", "div.Tensor_mode", "str? None"),
    ("pad_str", "pad.default", "str, int[], float? None"),
    ("pad_value", "pad.default", "str, float?"),
    ("amax", "amax.default", "int[], bool"),
    ("sum_dtype", "sum.dim_IntList", "int[]?, bool, ScalarType?"),
    ("transpose", "transpose.int", "int"),
    ("new_zeros", "new_zeros.default", "int[], ScalarType?, Layout?, Device?, bool?"),
    ("cat", "cat.default", "Tensor[]"),
    ("index", "index.Tensor", "Tensor?[]"),
    ("add_scalar", "add.Tensor", "Scalar"),
    ("clamp", "clamp.default", "Scalar?"),
    ("sort", "sort.default", "two returns"),
    ("FAIL gelu", "gelu.default", "bad str"),
    ("FAIL div", "div.Tensor_mode", "bad str?"),
    ("FAIL pad", "pad.default", "bad str"),
    ("FAIL narrow", "narrow.default", "bad dim"),
    ("FAIL add", "add.Tensor", "shape mismatch"),
]
OPS = sorted({op for _, op, _ in CASES} | {"div.Tensor", "new_zeros.default"})
# Round-trip kernels (what `shimgen --verify` registers with TORCH_BOX) for the ops taking a string.
ROUNDTRIP = [("rt gelu", "gelu.default", lambda x: ((x,), {"approximate": "tanh"})),
             ("rt pad", "pad.default", lambda x: ((x, [1, 1]), {"mode": "reflect"})),
             ("rt div", "div.Tensor_mode", lambda x: ((x, x), {"rounding_mode": "floor"}))]
GRANULE = 64 * 1024
TORCH = vbuild.find_torch()


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


REUSE = False  # --reuse: keep libraries already built in --build-dir (for iterating on this benchmark)


def compile_so(src: str, out: str, flags: list[str], libs: list[str] = ()) -> None:
    if REUSE and os.path.isfile(out):
        return
    cmd = [vbuild.compiler(), "-O2", "-shared", "-fPIC", *flags, src, "-o", out, "-Wl,--no-as-needed", *libs]
    subprocess.run([*cmd, *TORCH.link_flags()], check=True)


def build(tmp: str) -> tuple[dict[str, str], plan_mod.Plan]:
    gen = os.path.join(tmp, "generated")
    files, p = pipeline.generate(OPS, None, None, gen)
    pipeline.write(gen, files)
    ov_plan, _ = overlay.missing_ops(p, TORCH)
    ov_src = os.path.join(tmp, "overlay")
    pipeline.write(ov_src, overlay.sources(ov_plan))
    lib_overlay = os.path.join(tmp, overlay.LIBRARY)
    compile_so(os.path.join(ov_src, "torch/csrc/inductor/aoti_torch/generated/c_shim_aten.cpp"), lib_overlay,
               TORCH.aten_flags(ov_src))
    src = os.path.join(HERE, "bench_leaks.cpp")
    libs = {}
    for name, flags, extra in [("aten", [*TORCH.aten_flags(), "-DLEAKS_NS=leaks_aten", "-DLEAKS_ATEN"], []),
                               ("shimgen", [*TORCH.stable_flags(gen, overlay=True), "-DLEAKS_NS=leaks_shimgen"], [lib_overlay])]:
        libs[name] = os.path.join(tmp, f"libleaks_{name}.so")
        compile_so(src, libs[name], flags, extra)
    # the round-trip kernels of the string-taking ops, exactly as --verify generates them
    installed = Version.parse_release(TORCH.version, "installed torch version")
    kernels, _ = roundtrip.kernels(p, installed)
    wanted = {op for _, op, _ in ROUNDTRIP}
    kernels = [k for k in kernels if k.op.name in wanted]
    assert {k.op.name for k in kernels} == wanted, kernels
    rt_src = os.path.join(tmp, "roundtrip.cpp")
    with open(rt_src, "w", encoding="utf-8") as f:
        f.write(roundtrip.source(p, kernels))
    libs["roundtrip"] = os.path.join(tmp, "libleaks_roundtrip.so")
    compile_so(rt_src, libs["roundtrip"], TORCH.stable_flags(gen, overlay=True), [lib_overlay])
    return libs, p


def measure(call, calls: int, warmup: int) -> tuple[int, float]:
    """(RSS growth in bytes over `calls` calls after `warmup` calls, seconds per call)."""
    call(warmup)
    before = rss()
    t0 = time.perf_counter()
    call(calls)
    seconds = time.perf_counter() - t0
    return rss() - before, seconds / calls


@contextlib.contextmanager
def quiet_stderr(on: bool):
    """fd 2 to /dev/null (with --fast-backtraces libtorch prints a line for each backtrace it symbolizes)."""
    if not on:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# The str calls that cross libtorch 2.10-2.13's leaking dispatcher conversion with -DSHIMGEN_LEAKY_STR; the default
# build computes gelu(x), gelu_(x) and gelu_out(out, x) on a contiguous CPU tensor (kernel gelu_addmm), einsum
# (kernel einsum), quantile and nanquantile (kernel quantile), matrix norms with an ord string (kernel
# matrix_norm_str), searchsorted_out with a side (kernel cpu_kernel), fft_rfft, fft_rfft2 and fft_ihfftn with a norm
# (kernel fft_norm), gelu_(x, "tanh") (kernel cpu_activation), div's "floor" and "trunc" and scatter's "add" (kernel
# str_value) without a str crossing, and raises
# for the other str calls on 2.10-2.13: ~0 B. elu and softplus (kernel cpu_activation: aten's CPU kernel replicated, no number crossing)
# computed, in place, into out, and refused (alpha=1e300 is out of float's range): ~0 B. The rows after the str
# calls are a number's compositions of this release (kernels cpu_kernel, foreach, cpu_number and vector_norm_cpu;
# the out= and in-place forms and bfloat16 tensors last), measured the same way.
DEFAULT_CALLS = [("gelu(x)", "ts::gelu(x);"), ('gelu(x, "tanh")', 'ts::gelu(x, "tanh");'),
                 ("gelu_(x)", "ts::gelu_(ts::clone(x));"), ("gelu_out(o, x)", "Tensor o = ts::empty_like(x); "
                                                                          "ts::gelu_out(o, x);"),
                 ("elu(x)", "ts::elu(x);"), ("softplus(x)", "ts::softplus(x);"),
                 ("elu_(x)", "ts::elu_(ts::clone(x));"),
                 ("elu_out(o, x)", "Tensor o = ts::empty_like(x); ts::elu_out(o, x);"),
                 ("softplus_out(o, x)", "Tensor o = ts::empty_like(x); ts::softplus_out(o, x);"),
                 ("elu(x, 1e300) refused", "ts::elu(x, 1e300);"),
                 ('div(a, b, "floor")', 'ts::div(x, x, std::string_view("floor"));'),
                 ('div(a, b, "trunc")', 'ts::div(x, x, std::string_view("trunc"));'),
                 ('scatter_(.., "add")', 'ts::scatter_(ts::clone(x), 0, ts::new_zeros(x, {4, 4}, '
                                         'torch::headeronly::ScalarType::Long), x, "add");'),
                 ('einsum("ij,jk", ..)', 'ts::einsum("ij,jk->ik", {x, x});'),
                 ("quantile(x, 0.5)", "ts::quantile(x, 0.5);"),
                 ('nanquantile(x, q, 1, .., "midpoint")', 'ts::nanquantile(x, ts::new_zeros(x, {2}), 1, false, '
                                                          '"midpoint");'),
                 ('linalg_norm(x, "nuc")', 'ts::linalg_norm(x, "nuc");'),
                 ('linalg_matrix_norm(x, "fro")', 'ts::linalg_matrix_norm(x, "fro");'),
                 ('searchsorted_out(.., side="right")', 'Tensor o = ts::new_zeros(x, {4, 4}, '
                                                       'torch::headeronly::ScalarType::Long); '
                                                       'ts::searchsorted_out(o, x, x, false, false, "right");'),
                 ('fft_rfft(x, .., "ortho")', 'ts::fft_rfft(x, std::nullopt, -1, "ortho");'),
                 ('fft_rfft2(x, .., "ortho")', 'ts::fft_rfft2(x, std::nullopt, {-2, -1}, "ortho");'),
                 ('fft_ihfftn(x, .., "forward")', 'ts::fft_ihfftn(x, std::nullopt, std::nullopt, "forward");'),
                 ('gelu_tanh_(x)', 'ts::gelu_(ts::clone(x), "tanh");'),
                 ("pow(x, 2.5)", "ts::pow(x, 2.5);"), ("pow_(x, -2)", "ts::pow_(ts::clone(x), -2);"),
                 ("norm(x, 3)", "ts::norm(x, 3);"), ("dist(x, x, 1)", "ts::dist(x, x, 1);"),
                 ('conv2d(.., "same")', 'ts::conv2d(ts::view(x, {1, 1, 4, 4}), ts::view(x, {1, 1, 4, 4}), '
                                        'std::nullopt, {1, 1}, "same");'),
                 ('scatter_reduce_(.., "amax")', 'ts::scatter_reduce_(ts::clone(x), 0, ts::new_zeros(x, {4, 4}, '
                                                 'torch::headeronly::ScalarType::Long), x, "amax", false);'),
                 ('index_reduce(.., "mean")', 'ts::index_reduce(x, 0, ts::new_zeros(x, {4}, '
                                              'torch::headeronly::ScalarType::Long), x, "mean");'),
                 ('searchsorted(.., side="right")', 'ts::searchsorted(x, x, false, false, "right");'),
                 ("baddbmm(s, a, b, 1, 0.5)", "ts::baddbmm(ts::view(x, {1, 4, 4}), ts::view(x, {1, 4, 4}), "
                                              "ts::view(x, {1, 4, 4}), 1, 0.5);"),
                 ("_addmm_activation(.., true)", "ts::_addmm_activation(x, x, x, 1, 0.5, true);"),
                 ("_foreach_add({x, x}, 1.5)", "ts::_foreach_add(std::vector<Tensor>{x, x}, 1.5);"),
                 ("_foreach_norm({x, x})", "ts::_foreach_norm(std::vector<Tensor>{x, x});"),
                 ("pow_out(o, x, 2.5)", "Tensor o = ts::empty_like(x); ts::pow_out(o, x, 2.5);"),
                 ("lerp_out(o, x, x, 0.3)", "Tensor o = ts::empty_like(x); ts::lerp_out(o, x, x, 0.3);"),
                 ("lerp_(h, h, 0.1) bfloat16", "Tensor h = ts::to(x, torch::headeronly::ScalarType::BFloat16); "
                                               "ts::lerp_(ts::clone(h), h, 0.1);"),
                 ("norm(h, 3) bfloat16", "ts::norm(ts::to(x, torch::headeronly::ScalarType::BFloat16), 3);"),
                 ("mul_(h, 0.1) bfloat16", "ts::mul_(ts::to(x, torch::headeronly::ScalarType::BFloat16), 0.1);"),
                 ('div(h, 3.0, "trunc") bfloat16', 'ts::div(ts::to(x, torch::headeronly::ScalarType::BFloat16), 3.0, '
                                                   'std::string_view("trunc"));')]
_LOOP = """#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
namespace ts = torch::stable;
using torch::stable::Tensor;
// the calls that raised (a guarded str on a libtorch that would leak): measured the same way
int64_t run(Tensor x, int64_t n) {
  int64_t raised = 0;
  for (int64_t i = 0; i < n; ++i) { try { CALL } catch (const std::exception&) { ++raised; } }
  return raised;
}
#define LIB(ns, m) STABLE_TORCH_LIBRARY(ns, m)
#define IMPL(ns, k, m) STABLE_TORCH_LIBRARY_IMPL(ns, k, m)
LIB(NS, m) { m.def("run(Tensor x, int n) -> int"); }
IMPL(NS, CompositeExplicitAutograd, m) { m.impl("run", TORCH_BOX(&run)); }
"""
_MEASURE = """
import os, sys, torch
torch.set_num_threads(1)
torch.ops.load_library(sys.argv[1])
fn = getattr(torch.ops, sys.argv[2]).run
x = torch.randn(4, 4)
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
fn(x, int(sys.argv[4]))
before = rss()
raised = fn(x, int(sys.argv[3]))
print(rss() - before, raised)
"""


def default_build(args) -> int:
    """The default build's str calls, as DEFAULT_CALLS: refused at compile time (the reason printed) or measured."""
    from shimgen.proofs.verify import runtimes  # noqa: PLC0415

    rt = runtimes.find(args.runtime) if args.runtime else None
    if args.runtime and rt is None:
        print(runtimes.missing_reason([args.runtime]), file=sys.stderr)
        return 2
    torch_ = rt.torch if rt else TORCH
    python = rt.python if rt else sys.executable
    print(f"torch {torch_.version} ({python}); default build (no macro) vs -DSHIMGEN_LEAKY_STR; {args.calls} calls "
          f"after {args.warmup} warm-up calls; RSS growth in bytes")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(tmp, "generated")
        files, _ = pipeline.generate(["gelu.default", "gelu_.default", "gelu.out", "clone.default",
                                      "empty_like.default", "div.Tensor_mode", "einsum.default", "conv2d.padding",
                                      "view.default", "elu.default", "softplus.default", "elu_.default", "elu.out",
                                      "softplus.out", "scatter_.reduce", "new_zeros.default",
                                      "scatter_reduce_.two", "index_reduce.default", "searchsorted.Tensor",
                                      "baddbmm.default", "_addmm_activation.default", "_foreach_add.Scalar",
                                      "_foreach_norm.Scalar", "quantile.scalar", "nanquantile.default",
                                      "linalg_norm.ord_str", "linalg_matrix_norm.str_ord",
                                      "searchsorted.Tensor_out", "fft_rfft.default", "fft_rfft2.default",
                                      "fft_ihfftn.default", "pow.Tensor_Scalar", "pow_.Scalar", "norm.Scalar",
                                      "dist.default", "pow.Tensor_Scalar_out", "lerp.Scalar", "lerp.Scalar_out",
                                      "lerp_.Scalar", "mul_.Scalar", "to.dtype", "div.Scalar_mode"], None,
                                     None, gen)
        pipeline.write(gen, files)
        for k, (label, call) in enumerate(DEFAULT_CALLS):
            if args.only and not any(label.startswith(o) for o in args.only.split(",")):
                continue  # --only: the labels starting with one of its comma-separated prefixes
            for target in ("0x020a000000000000", None):
                for macros in ([], ["-DSHIMGEN_LEAKY_STR"]):
                    ns = f"leak_default_{k}_{'t' if target else 'h'}_{len(macros)}"
                    src = os.path.join(tmp, f"{ns}.cpp")
                    with open(src, "w", encoding="utf-8") as f:
                        f.write(_LOOP.replace("CALL", call))
                    so = os.path.join(tmp, f"lib{ns}.so")
                    cmd = [vbuild.compiler(), "-O2", "-shared", "-fPIC", *vbuild.STABLE_FLAGS, f"-DNS={ns}", *macros,
                           *([f"-DTORCH_TARGET_VERSION={target}"] if target else []), f"-I{gen}",
                           f"-I{torch_.include_dirs[0]}", src, "-o", so, *torch_.link_flags()]
                    proc = subprocess.run(cmd, capture_output=True, text=True)
                    where = f"{label:<20} target {'2.10' if target else 'headers':<8} {' '.join(macros) or 'default':<20}"
                    if proc.returncode != 0:
                        reason = next((ln.split("error: static assertion failed: ", 1)[1] for ln in
                                       proc.stderr.splitlines() if "static assertion failed" in ln), None)
                        print(f"{where} refused at compile time: {reason or proc.stderr.strip().splitlines()[-1]}")
                        bad += reason is None or bool(macros)  # a refusal must say why; the opt-in must build
                        continue
                    out = subprocess.run([python, "-c", _MEASURE, so, ns, str(args.calls), str(args.warmup)],
                                         capture_output=True, text=True)
                    growth, raised = (map(int, out.stdout.split()[-2:]) if out.returncode == 0 else (None, None))
                    ok = growth is not None and (growth <= GRANULE or bool(macros))  # the opt-in may leak
                    bad += not ok
                    per = f" ({growth / args.calls:.1f}/call)" if growth is not None else out.stderr[-300:]
                    why = "a refusal" if "refused" in label else "a libtorch that would leak"
                    what = f", every call raised ({why})" if raised == args.calls else \
                        (f", {raised} calls raised" if raised else "")
                    print(f"{where} {growth} B{per}{what}{'' if ok else '  NOT OK'}")
    return 1 if bad else 0


def main() -> int:
    args = ARGS
    if args.default_build:
        return default_build(args)
    global REUSE
    REUSE = args.reuse
    torch.set_num_threads(1)
    only = set(args.only.split(",")) if args.only else None
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.build_dir or scratch
        os.makedirs(tmp, exist_ok=True)
        libs, p = build(tmp)
        for so in libs.values():
            torch.ops.load_library(so)
        installed = Version.parse_release(TORCH.version, "installed torch version")
        routes = {w.op.name: (roundtrip.active_variant(w, installed) or w.variants[-1]).route.name
                  for w in sig_cpp.wrappers(p)[0]}
        x = torch.randn(4, 4)
        fail_calls = args.fail_calls or args.calls
        print(f"torch {torch.__version__}, 4x4 float32, {args.calls} calls ({fail_calls} for the failing cases) after "
              f"{args.warmup} warm-up calls; RSS growth in bytes (per call); libtorch backtraces: "
              f"{'fast (TORCH_SHOW_CPP_STACKTRACES=1)' if args.fast_backtraces else 'default'}")
        head = f"{'case':<14} {'route':<15} {'arguments':<30} {'at:: growth':>16} {'shimgen growth':>18} " \
               f"{'at:: us':>8} {'shimgen us':>10} {'ok':>3}"
        print(head)
        print("-" * len(head))
        bad = 0
        for i, (label, op, what) in enumerate(CASES):
            if only and label not in only:
                continue
            row = []
            for lib in ("leaks_aten", "leaks_shimgen"):
                fn = getattr(torch.ops, lib).run
                expect_fail = label.startswith("FAIL")
                calls = args.fail_calls or args.calls if expect_fail else args.calls
                with quiet_stderr(expect_fail and args.fast_backtraces):
                    failed = fn(i, x, 1)
                    row.append(measure(lambda n: fn(i, x, n), calls, min(args.warmup, calls)))
                assert failed == (1 if expect_fail else 0), (label, lib, failed)
            (ga, ta), (gs, tg) = row
            ok = gs <= GRANULE
            bad += not ok
            print(f"{label:<14} {routes.get(op, '?'):<15} {what:<30} {ga:>9} ({ga / calls:>4.1f}) "
                  f"{gs:>11} ({gs / calls:>4.1f}) {ta * 1e6:>8.2f} {tg * 1e6:>10.2f} {'yes' if ok else 'NO':>3}",
                  flush=True)
        rt = torch.ops.shimgen_roundtrip
        for label, op, make in ROUNDTRIP:
            if only and label not in only:
                continue
            name, overload = op.split(".")
            fn = getattr(getattr(rt, name), overload)
            ref = getattr(getattr(torch.ops.aten, name), overload)
            a, kw = make(x)

            def loop(n: int, f=fn) -> None:
                for _ in range(n):
                    f(*a, **kw)

            def loop_ref(n: int, f=ref) -> None:
                for _ in range(n):
                    f(*a, **kw)

            (ga, ta), (gs, tg) = measure(loop_ref, args.calls, args.warmup), measure(loop, args.calls, args.warmup)
            ok = gs <= GRANULE
            bad += not ok
            print(f"{label:<14} {'TORCH_BOX':<15} {'str (kernel unboxing)':<30} {ga:>9} ({ga / args.calls:>4.1f}) "
                  f"{gs:>11} ({gs / args.calls:>4.1f}) {ta * 1e6:>8.2f} {tg * 1e6:>10.2f} {'yes' if ok else 'NO':>3}")
        print("at::/shimgen us: microseconds per call; the round-trip rows are Python calls of torch.ops.aten vs the "
              "round-trip op")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
