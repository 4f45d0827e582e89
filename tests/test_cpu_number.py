"""pow(x, exponent) and pow_(x, exponent) with an exponent no libtorch route carries (2.5, -2, 4, 0 ...) and lerp(a, b,
weight) of bfloat16 and float16 tensors with a weight they do not hold (0.3) at target 2.10 in the default build
(kernel `cpu_number`): aten's CPU kernel, its loop replicated in the wrapper (pow's 0 and 1, its specialized products,
libtorch's parallel_for chunks, Sleef's vector pow looked up in libtorch_cpu, libm's scalar tail with the exponent as a
double; lerp's weight in float and its fused multiply-add), on contiguous float, double, bfloat16 or float16 CPU
tensors (the last two in float, pow's exponent rounded to the dtype first, as aten's kernel takes it); pow's number
rules (2 as mul, 0.5 as sqrt ...) first, and every other call the Tensor sibling's proven cells or a `shimgen:` error.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on each
runtime venv, once per CPU capability aten may choose (ATEN_CPU_CAPABILITY avx512, avx2, default) and with one and two
threads: values bit for bit (NaN payloads and the sign of zero included), dtype, shape and strides against aten's op,
around each capability's vector steps and the thread pool's split; the refusals (strided, int64, a call autograd
records) by name."""

from __future__ import annotations

import os
import subprocess

import pytest

from shimgen.facts import releases
from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor pow_double(Tensor x, double e) { return ts::pow(x, e); }
Tensor pow_int(Tensor x, int64_t e) { return ts::pow(x, e); }
Tensor pow_inplace(Tensor x, double e) { return ts::pow_(x, e); }
Tensor lerp_weight(Tensor a, Tensor b, double w) { return ts::lerp(a, b, w); }

STABLE_TORCH_LIBRARY(cpu_number, m) {
  m.def("pow_double(Tensor x, float e) -> Tensor");
  m.def("pow_int(Tensor x, int e) -> Tensor");
  m.def("pow_inplace(Tensor(a!) x, float e) -> Tensor(a!)");
  m.def("lerp_weight(Tensor a, Tensor b, float w) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(cpu_number, CompositeImplicitAutograd, m) {
  m.impl("pow_double", TORCH_BOX(&pow_double));
  m.impl("pow_int", TORCH_BOX(&pow_int));
  m.impl("pow_inplace", TORCH_BOX(&pow_inplace));
  m.impl("lerp_weight", TORCH_BOX(&lerp_weight));
}
"""

# Run by each runtime's interpreter (ATEN_CPU_CAPABILITY and SHIMGEN_THREADS set): one line per difference.
CHECK = r"""
import os, sys, torch
torch.ops.load_library(sys.argv[1])
torch.set_num_threads(int(os.environ["SHIMGEN_THREADS"]))
ops = torch.ops.cpu_number
bad, done, n_refused = [], 0, 0

def bits(t):
    return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(bits(a), bits(b))

SPECIALS = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30, 1e-310, -1e-310, 1.0, -1.0, 0.5, 2.0, -2.0,
            1e30, -1e30, 1e-8, 5e-45, -1e-45, 3.4e38, -3.4e38, 65504.0, 1e-5]

def values(numel, g, dtype):
    x = torch.randn(numel, generator=g, dtype=torch.float64) * 4
    if numel > 4:
        for k, v in enumerate(SPECIALS):
            x[(k * 7919) % numel] = v
        x[-1] = float("nan")
        x[-2] = -0.0
    return x.to(dtype)

def cases(dtype):
    g = torch.Generator().manual_seed(5)
    sizes = {2 * v * k + d for v in (4, 8, 16, 32) for k in (1, 3) for d in (-1, 0, 1)}
    for numel in sorted(sizes | {0, 1, 1000, 32767, 32768, 32769, 100003}):
        yield f"[{numel}]", values(numel, g, dtype)
    base = values(120, g, torch.float64).view(6, 5, 4).to(dtype)
    yield "0-dim", torch.tensor(-0.75, dtype=dtype)
    yield "[6, 5, 4]", base
    yield "negative view", torch._neg_view(base)

# the exponents the kernel computes for each dtype (the op's number rules take 2, 3, 0.5, -1 and -0.5 of float and
# double, and all but -0.5 of bfloat16, first: aten's own ops)
DOUBLES = [2.5, -2.0, 1.5, 0.25, 7.0, -1.5, 1e-3, 100.0, 0.0, 1.0, -0.7, float("inf"), float("nan")]
INTS = [4, -2, 0, 1, 5, -3]
EXTRA = {torch.bfloat16: [-0.5, 2.001, 3.0078125, -2.0004], torch.float16: [0.5, 3.0, -1.0, -0.5, 2.0001]}
WEIGHTS = [0.3, 0.7, -0.4, 1.3, 0.0, 1.0]  # lerp's two formulas (|weight| below 0.5 and not)
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for label, x in cases(dtype):
        calls = [(f"pow({e!r})", lambda x, e=e: ops.pow_double(x, e), lambda x, e=e: torch.pow(x, e))
                 for e in DOUBLES + EXTRA.get(dtype, [])]
        calls += [(f"pow({e})", lambda x, e=e: ops.pow_int(x, e), lambda x, e=e: torch.pow(x, e)) for e in INTS]
        calls += [(f"lerp({w})", lambda x, w=w: ops.lerp_weight(x, x * 0.75 + 1.5, w),
                   lambda x, w=w: torch.lerp(x, x * 0.75 + 1.5, w)) for w in WEIGHTS]
        for name, mine, theirs in calls:
            want = theirs(x)
            try:
                got = mine(x)
            except RuntimeError as e:
                bad.append(f"{name} {dtype} {label}: raised {str(e).splitlines()[0]}")
                continue
            done += 1
            if not same(got, want):
                n = int((bits(got) != bits(want)).sum()) if got.shape == want.shape else -1
                bad.append(f"{name} {dtype} {label}: {n} elements differ")
        if x.is_neg():
            continue
        for e in (1.5, -2.0):  # in place: the functional, then aten's in-place rules
            a, b = x.clone(), x.clone()
            a.pow_(e)
            got = ops.pow_inplace(b, e)
            done += 1
            if got is not b or not same(a, b):
                bad.append(f"pow_({e}) {dtype} {label}: differs")
x = torch.randn(6, 5, dtype=torch.float64)

def refused(fn, why):
    global n_refused
    try:
        fn()
    except RuntimeError as e:
        if not str(e).startswith(("shimgen: pow.Tensor_Scalar: exponent=", "shimgen: lerp.Scalar: weight=")):
            bad.append(f"{why}: {str(e).splitlines()[0]}")
        n_refused += 1
        return
    bad.append(f"{why}: computed")

refused(lambda: ops.pow_double(x.t(), 2.5), "strided")
refused(lambda: ops.pow_double(torch.arange(6), 2.5), "int64")
refused(lambda: ops.pow_double(x.half(), 1e39), "an exponent float16 does not hold (aten raises)")
leaf = x.clone().requires_grad_()
refused(lambda: ops.pow_double(leaf, 2.5), "autograd records")
refused(lambda: ops.pow_double(leaf * 1, 1.5), "autograd records (a non-leaf)")
h = x.to(torch.bfloat16)
refused(lambda: ops.lerp_weight(h.t(), h.t(), 0.3), "lerp strided")
refused(lambda: ops.lerp_weight(h, h, float("nan")), "lerp a NaN weight (aten's fused NaN is its compiler's)")
with torch.no_grad():
    assert same(ops.pow_double(leaf, 2.5), torch.pow(leaf, 2.5)), "no_grad"
print("CAPABILITY", torch.backends.cpu.get_cpu_capability(), "DONE", done, "REFUSED", n_refused)
for b in bad:
    print("BAD", b)
"""


def test_the_rows_name_the_kernel_and_are_proven_on_the_runtimes() -> None:
    for op in ("pow.Tensor_Scalar", "lerp.Scalar"):
        row = scalars.load().kernel_compositions.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op).name == "cpu_number"
        assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("cpu_number")
    files, _ = pipeline.generate(["pow", "pow_", "lerp"], None, None, str(root / "gen"))
    pipeline.write(str(root / "gen"), files)
    (root / "pow.cpp").write_text(CALLS)
    out = str(root / "pow.so")
    build_so(str(root / "pow.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


def test_the_extension_needs_libtorch_alone_and_looks_sleef_up_at_run_time(lib) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "Sleef_" not in out
    assert "torch_parallel_for" in out  # libtorch's own parallel_for (the stable C ABI from 2.10)


def _runtimes() -> list[runtimes.Runtime]:
    names = list(releases.load().runtimes)
    rts, missing = runtimes.resolve(names)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    return [r for r in rts if r.release.minor >= 10]


@pytest.mark.parametrize("name", ["2.10.0", "2.13.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit_at_each_capability(lib, name) -> None:
    rt = next((r for r in _runtimes() if r.name == name), None)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    # each capability by ATEN_CPU_CAPABILITY, and the CPU's own (None: the variable unset)
    for capability, threads in (("avx512", 2), ("avx2", 1), ("default", 2), (None, 2)):
        env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
        env["SHIMGEN_THREADS"] = str(threads)
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        proc = subprocess.run([rt.python, "-c", quick_exit(CHECK), lib], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = proc.stdout.splitlines()
        assert [line for line in lines if line.startswith("BAD")] == [], (capability, proc.stdout[-3000:])
        head = next(line for line in lines if line.startswith("CAPABILITY")).split()
        assert head[1] == (capability or head[1]).upper() and int(head[3]) == DONE, proc.stdout
        assert int(head[5]) == 7, proc.stdout


# the calls compared in each process: 4 dtypes x 34 inputs (31 lengths, a 0-dim, a 3-D and a negative view) x (13
# doubles + 6 ints + 6 lerp weights), the dtypes' extra exponents (4 for bfloat16, 5 for float16) x 34, and 2
# in-place calls on each of the 33 inputs that are not a negative view
DONE = 4 * 34 * 25 + 9 * 34 + 4 * 33 * 2
