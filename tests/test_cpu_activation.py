"""elu(x), softplus(x) and gelu(x, "tanh") (below 2.14) at target 2.10 in the default build (kernel `cpu_activation`):
aten's CPU kernel of each, its loop replicated in the wrapper (libtorch's parallel_for chunks, Sleef's vector functions
looked up in libtorch_cpu, libm's scalar tail), on a contiguous float, double, bfloat16 or float16 CPU tensor (the
last two in float, as aten's reduced-float kernel); elu_, elu.out and softplus.out (self, a contiguous out) likewise;
every other call a `shimgen:` error.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv, once per CPU capability aten may choose (ATEN_CPU_CAPABILITY avx512, avx2,
default) and with one and two threads: values bit for bit (NaN payloads and the sign of zero included), dtype, shape
and strides against aten's op, around each capability's vector steps and the thread pool's split; the refusals
(strided, int64, a call autograd records, a strided out, an out requiring grad) by name."""

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

Tensor elu(Tensor x, double alpha, double scale, double input_scale) {
  return ts::elu(x, alpha, scale, input_scale);
}
Tensor softplus(Tensor x, double beta, double threshold) { return ts::softplus(x, beta, threshold); }
Tensor elu_plain(Tensor x) { return ts::elu(x); }
Tensor gelu_tanh(Tensor x) { return ts::gelu(x, "tanh"); }
Tensor elu_inplace(Tensor x, double alpha, double scale, double input_scale) {
  return ts::elu_(x, alpha, scale, input_scale);
}
Tensor elu_out(Tensor out, Tensor x, double alpha, double scale, double input_scale) {
  return ts::elu_out(out, x, alpha, scale, input_scale);
}
Tensor softplus_out(Tensor out, Tensor x, double beta, double threshold) {
  return ts::softplus_out(out, x, beta, threshold);
}

STABLE_TORCH_LIBRARY(cpu_activation, m) {
  m.def("elu(Tensor x, float alpha, float scale, float input_scale) -> Tensor");
  m.def("softplus(Tensor x, float beta, float threshold) -> Tensor");
  m.def("elu_plain(Tensor x) -> Tensor");
  m.def("gelu_tanh(Tensor x) -> Tensor");
  m.def("elu_inplace(Tensor(a!) x, float alpha, float scale, float input_scale) -> Tensor(a!)");
  m.def("elu_out(Tensor(a!) out, Tensor x, float alpha, float scale, float input_scale) -> Tensor(a!)");
  m.def("softplus_out(Tensor(a!) out, Tensor x, float beta, float threshold) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(cpu_activation, CompositeImplicitAutograd, m) {
  m.impl("elu", TORCH_BOX(&elu));
  m.impl("softplus", TORCH_BOX(&softplus));
  m.impl("elu_plain", TORCH_BOX(&elu_plain));
  m.impl("gelu_tanh", TORCH_BOX(&gelu_tanh));
  m.impl("elu_inplace", TORCH_BOX(&elu_inplace));
  m.impl("elu_out", TORCH_BOX(&elu_out));
  m.impl("softplus_out", TORCH_BOX(&softplus_out));
}
"""

# Run by each runtime's interpreter (ATEN_CPU_CAPABILITY and SHIMGEN_THREADS set): one line per difference.
CHECK = r"""
import os, sys, torch
torch.ops.load_library(sys.argv[1])
torch.set_num_threads(int(os.environ["SHIMGEN_THREADS"]))
ops = torch.ops.cpu_activation
aten = torch.ops.aten
bad, done, n_refused = [], 0, 0

def bits(t):
    return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(bits(a), bits(b))

SPECIALS = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30, 1e-310, -1e-310, 88.7, -88.7, 20.0,
            20.000001, 19.99999, -100.0, 1e30, -1e30, 709.0, -745.0, 1e-8, -1e-8, 5e-45, -1e-45, 3.4e38, -3.4e38]

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
    for numel in sorted(sizes | {0, 1, 1000, 32767, 32768, 32769, 65537, 100003}):
        yield f"[{numel}]", values(numel, g, dtype)
    base = values(120, g, torch.float64).view(6, 5, 4).to(dtype)
    yield "0-dim", torch.tensor(-0.75, dtype=dtype)
    yield "[6, 5, 4]", base
    yield "offset", torch.empty(50, dtype=dtype)[7:37].view(5, 6).copy_(base.flatten()[:30].view(5, 6))
    yield "size-1 strides", base.reshape(120, 1).as_strided((120, 1), (1, 9))
    yield "negative view", torch._neg_view(base)

CALLS = [("elu", ops.elu, aten.elu, (1.0, 1.0, 1.0)), ("elu", ops.elu, aten.elu, (1.6732632423543772, 1.0507009873554805, 1.0)),
         ("elu", ops.elu, aten.elu, (2.0, 0.3, -1.7)), ("softplus", ops.softplus, aten.softplus, (1.0, 20.0)),
         ("softplus", ops.softplus, aten.softplus, (2.0, 5.0)), ("softplus", ops.softplus, aten.softplus, (-0.5, 1.0)),
         ("gelu", ops.gelu_tanh, lambda x: aten.gelu(x, approximate="tanh"), ())]
# the in-place and out= forms: self, and an empty out aten resizes
FORMS = [("elu_", lambda x, o: ops.elu_inplace(x, 2.0, 0.3, -1.7), lambda x, o: aten.elu_(x, 2.0, 0.3, -1.7), True),
         ("elu.out", lambda x, o: ops.elu_out(o, x, 1.0, 1.0, 1.0), lambda x, o: aten.elu.out(x, out=o), False),
         ("softplus.out", lambda x, o: ops.softplus_out(o, x, 2.0, 5.0),
          lambda x, o: aten.softplus.out(x, 2.0, 5.0, out=o), False)]
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for label, x in cases(dtype):
        for name, mine, theirs, numbers in CALLS:
            want = theirs(x, *numbers)
            try:
                got = mine(x, *numbers)
            except RuntimeError as e:
                bad.append(f"{name}{numbers} {dtype} {label}: raised {str(e).splitlines()[0]}")
                continue
            done += 1
            if not same(got, want):
                n = int((bits(got) != bits(want)).sum()) if got.shape == want.shape else -1
                bad.append(f"{name}{numbers} {dtype} {label}: {n} elements differ")
        if x.is_neg():
            continue
        for name, mine, theirs, inplace in FORMS:
            a, b = x.clone(), x.clone()
            oa, ob = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            want = theirs(a, oa)
            try:
                got = mine(b, ob)
            except RuntimeError as e:
                bad.append(f"{name} {dtype} {label}: raised {str(e).splitlines()[0]}")
                continue
            done += 1
            if (got is not b if inplace else got is not ob) or not same(a, b) or not same(oa, ob):
                bad.append(f"{name} {dtype} {label}: differs")
x = torch.randn(6, 5, dtype=torch.float64)
assert same(ops.elu_plain(x), aten.elu(x)), "defaults"

def refused(fn, why):
    global n_refused
    try:
        fn()
    except RuntimeError as e:
        if not str(e).startswith(("shimgen: elu.default", "shimgen: softplus.default", "shimgen: gelu.default",
                                  "shimgen: elu_.default", "shimgen: elu.out", "shimgen: softplus.out")):
            bad.append(f"{why}: {str(e).splitlines()[0]}")
        n_refused += 1
        return
    bad.append(f"{why}: computed")

refused(lambda: ops.elu(x.t(), 1.0, 1.0, 1.0), "strided")
refused(lambda: ops.softplus(x[:, ::2], 1.0, 20.0), "strided")
refused(lambda: ops.elu(torch.arange(6), 1.0, 1.0, 1.0), "int64")
refused(lambda: ops.elu(x.float(), 1e300, 1.0, 1.0), "alpha out of float's range")
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
if release < (2, 14):  # from 2.14 aten's own gelu through the dispatcher
    refused(lambda: ops.gelu_tanh(x.t()), "gelu strided")
leaf = x.clone().requires_grad_()
refused(lambda: ops.elu(leaf, 1.0, 1.0, 1.0), "autograd records")
refused(lambda: ops.softplus(leaf * 1, 1.0, 20.0), "autograd records (a non-leaf)")
refused(lambda: ops.elu_out(torch.empty(5, 6, dtype=x.dtype).t(), x, 1.0, 1.0, 1.0), "strided out")
refused(lambda: ops.softplus_out(torch.empty(6, 5, dtype=x.dtype).requires_grad_(), x, 1.0, 20.0), "out requires grad")
with torch.no_grad():
    assert same(ops.elu(leaf, 1.0, 1.0, 1.0), aten.elu(leaf)), "no_grad"
print("CAPABILITY", torch.backends.cpu.get_cpu_capability(), "DONE", done, "REFUSED", n_refused)
for b in bad:
    print("BAD", b)
"""


def test_the_rows_name_the_kernel_and_are_proven_on_the_runtimes() -> None:
    for op in ("elu.default", "softplus.default", "elu_.default", "elu.out", "softplus.out"):
        row = scalars.load().kernel_compositions.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op).name == "cpu_activation"
        assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}
    row = scalars.load().kernel_compositions["gelu.default"]  # "tanh": a value kernel of gelu_addmm's row
    assert row["value_kernels"] == {"tanh": "gelu_tanh"}
    assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("cpu_activation")
    ops = ["elu.default", "softplus.default", "gelu.default", "elu_.default", "elu.out", "softplus.out"]
    files, _ = pipeline.generate(ops, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "act.cpp").write_text(CALLS)
    out = str(root / "act.so")
    build_so(str(root / "act.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
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
        refusals = 9 if rt.release.minor < 14 else 8
        assert head[1] == (capability or head[1]).upper() and int(head[3]) >= 2 * 36 * 7, proc.stdout
        assert int(head[5]) == refusals, proc.stdout
