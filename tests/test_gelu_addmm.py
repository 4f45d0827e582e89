"""gelu(x) below target 2.14 in the default build (kernel `gelu_addmm`): on a running libtorch before 2.14, a dense
CPU tensor of a floating dtype with approximate "none" is computed by aten's own CPU gelu kernel through libtorch's
CPU C shim aoti_torch_cpu__addmm_activation (an empty product, then gelu_ on the copy), so no str crosses the ABI;
every other call is the dispatcher's guarded form (aten's op from 2.14, a `shimgen:` error naming the leak before).

One extension, built at target 2.10 without SHIMGEN_LEAKY_STR against the installed headers and linked with
libtorch alone, is run on the installed torch and on each runtime venv: values bit for bit (NaN where NaN is),
dtype, shape and strides against aten::gelu, in the vectorized body and the scalar tail, with the thread pool's
split; the refusals where the call is not one the shim computes; on 2.14+ a dispatch mode sees aten::gelu called
with the string."""

from __future__ import annotations

import os
import subprocess

import pytest
import torch

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

Tensor plain(Tensor x) { return ts::gelu(x); }
Tensor named(Tensor x, std::string approximate) { return ts::gelu(x, approximate); }
Tensor inplace(Tensor x, std::string approximate) { return ts::gelu_(x, approximate); }
Tensor into(Tensor x, std::string approximate, Tensor out) {
  ts::gelu_out(out, x, approximate);
  return out;
}

STABLE_TORCH_LIBRARY(gelu_addmm, m) {
  m.def("plain(Tensor x) -> Tensor");
  m.def("named(Tensor x, str approximate) -> Tensor");
  m.def("inplace(Tensor(a!) x, str approximate) -> Tensor(a!)");
  m.def("into(Tensor x, str approximate, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(gelu_addmm, CompositeImplicitAutograd, m) {
  m.impl("plain", TORCH_BOX(&plain));
  m.impl("named", TORCH_BOX(&named));
  m.impl("inplace", TORCH_BOX(&inplace));
  m.impl("into", TORCH_BOX(&into));
}
"""

# Run by each runtime's interpreter: every case's outcome against aten's, one line per difference; then, on 2.14+,
# what a dispatch mode sees of the extension's call.
CHECK = r"""
import sys, torch
from torch.utils._python_dispatch import TorchDispatchMode
torch.ops.load_library(sys.argv[1])
ops = torch.ops.gelu_addmm
F = torch.nn.functional
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
bad, done, raised = [], 0, 0

def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())

def cases():
    g = torch.Generator().manual_seed(5)
    for numel in (0, 1, 7, 31, 33, 64, 65, 100, 1000, 16383, 16385, 20000, 32768, 40001, 100003):
        x = torch.randn(numel, generator=g, dtype=torch.float64) * 4
        if numel > 8:
            x[:6] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30])
            x[-1] = float("nan")
        yield f"[{numel}]", x
    base = torch.randn(6, 5, 4, generator=g, dtype=torch.float64) * 3
    yield "0-dim", torch.tensor(-0.75, dtype=torch.float64)
    yield "offset", torch.randn(50, generator=g, dtype=torch.float64)[7:37].view(5, 6)
    yield "size-1 strides", base.reshape(120, 1).as_strided((120, 1), (1, 9))
    yield "transposed (strided)", base.transpose(0, 2)
    yield "permuted (strided)", base.permute(1, 2, 0)
    yield "sliced (strided)", base[:, :3]
    yield "stepped (strided)", base[::2]

for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for label, x64 in cases():
        x = x64 if dtype == x64.dtype else torch.empty_strided(x64.shape, x64.stride(), dtype=dtype).copy_(x64)
        if "offset" in label and dtype != x64.dtype:
            x = torch.empty(50, dtype=dtype)[7:37].view(5, 6).copy_(x64)
        want = F.gelu(x)
        try:
            got = ops.plain(x)
        except RuntimeError as e:
            gaps = "strided" in label
            if release >= (2, 14) or not gaps or "shimgen: gelu.default" not in str(e):
                bad.append(f"{dtype} {label}: raised {str(e).splitlines()[0]}")
            raised += 1
            continue
        done += 1
        if "strided" in label and release < (2, 14):
            bad.append(f"{dtype} {label}: computed, the guarded form should raise")
        if not same(got, want):
            bad.append(f"{dtype} {label}: {got.stride()} vs {want.stride()}")
        # gelu_ and gelu.out (rows `form: inplace`, `form: out`): the same values written into self, or into a
        # contiguous out (of the result's sizes, or empty and resized); their strided forms take the dispatcher
        a, b = x.clone(memory_format=torch.preserve_format), x.clone(memory_format=torch.preserve_format)
        if not same(ops.inplace(b, "none"), torch.ops.aten.gelu_(a)) or not same(a, b):
            bad.append(f"{dtype} {label}: gelu_ differs")
        for kind, make in (("exact", lambda: torch.empty(x.shape, dtype=dtype)), ("empty", lambda: torch.empty(0, dtype=dtype))):
            oa, ob = make(), make()
            torch.ops.aten.gelu.out(x, out=oa)
            if ops.into(x, "none", ob) is None or not same(oa, ob):
                bad.append(f"{dtype} {label}: gelu.out into {kind} out differs")

def refused(fn, why, atens=None):
    global raised
    try:
        fn()
    except RuntimeError as e:
        if release >= (2, 14) and atens is not None and str(e).splitlines()[0] == atens:
            return
        if release >= (2, 14) or "shimgen: gelu.default" not in str(e) or "leaks" not in str(e):
            bad.append(f"{why}: {str(e).splitlines()[0]}")
        raised += 1
        return
    if release < (2, 14):
        bad.append(f"{why}: computed before 2.14")

x = torch.randn(9, 4)
# "tanh" on a contiguous float CPU tensor: aten's kernel replicated below 2.14 (cpu_activation.h); strided: refused
assert same(ops.named(x, "tanh"), F.gelu(x, approximate="tanh")), "tanh"
refused(lambda: ops.named(x.t(), "tanh"), "tanh strided")
try:
    ops.into(x, "none", torch.empty(4, 9).t())  # a strided out: aten computes in its layout
    if release < (2, 14):
        bad.append("gelu.out into a transposed out: computed before 2.14")
except RuntimeError as e:
    if release >= (2, 14) or "shimgen: gelu.out" not in str(e):
        bad.append(f"gelu.out into a transposed out: {str(e).splitlines()[0]}")
try:
    ops.inplace(torch.randn(4, 9).t(), "none")
    if release < (2, 14):
        bad.append("gelu_ on a transposed self: computed before 2.14")
except RuntimeError as e:
    if release >= (2, 14) or "shimgen: gelu_.default" not in str(e):
        bad.append(f"gelu_ on a transposed self: {str(e).splitlines()[0]}")
try:
    F.gelu(torch.arange(6))
except RuntimeError as e:
    refused(lambda: ops.plain(torch.arange(6)), "int64", str(e).splitlines()[0])
leaf = x.clone().requires_grad_()
refused(lambda: ops.plain(leaf), "autograd records")
with torch.no_grad():
    assert same(ops.plain(leaf), F.gelu(leaf)), "no_grad"
if release >= (2, 14):
    for a in ("none", "tanh"):
        assert same(ops.named(x, a), F.gelu(x, approximate=a)), a
    seen = []
    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), args[1:], dict(kwargs or {})))
            return func(*args, **(kwargs or {}))
    with Seen():
        ops.named(x, "tanh")
        ops.plain(x)
    calls = [s for s in seen if s[0].startswith("aten.gelu")]
    print("SEEN", calls)
    if len(calls) != 2 or (calls[0][1:] != ((), {"approximate": "tanh"}) and calls[0][1] != ("tanh",)):
        bad.append(f"dispatch mode saw {seen}")
print("DONE", done, "RAISED", raised)
for b in bad:
    print("BAD", b)
"""


@pytest.mark.parametrize("op", ["gelu.default", "gelu_.default", "gelu.out"])
def test_the_row_names_the_kernel_and_is_proven_on_every_runtime(op) -> None:
    row = scalars.load().kernel_compositions.get(op)
    assert row is not None, f"{op}: no proven kernel_compositions row"
    assert kernels.get(row["kernel"], op).name == "gelu_addmm"
    assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("gelu_addmm")
    files, _ = pipeline.generate(["gelu.default", "gelu_.default", "gelu.out"], None, None, str(root / "gen"),
                                 only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "gelu.cpp").write_text(CALLS)
    out = str(root / "gelu.so")
    build_so(str(root / "gelu.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


def test_the_extension_needs_libtorch_alone_and_no_str_is_converted_below_2_14(lib) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_gelu" not in out  # neither gelu, gelu_ nor gelu_out
    assert "aoti_torch_cpu__addmm_activation" in out  # every release 2.9-2.15 exports it (data/libtorch_exports.json)


def _runtimes() -> list[runtimes.Runtime]:
    names = list(releases.load().runtimes)
    rts, missing = runtimes.resolve(names)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    return [r for r in rts if r.release.minor >= 10]


@pytest.mark.parametrize("name", ["2.10.0", "2.13.0", "2.14.1", "2.15.0"])
def test_values_are_atens_on_each_runtime(lib, name) -> None:
    rt = next((r for r in _runtimes() if r.name == name), None)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    proc = subprocess.run([rt.python, "-c", quick_exit(CHECK), lib], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    done = next(line for line in lines if line.startswith("DONE")).split()
    assert int(done[1]) >= 4 * 18, proc.stdout  # every dense case of every dtype computed


def test_the_kernel_serves_only_builds_without_a_route_computing_every_call() -> None:
    """The default build: the kernel below 2.14 (it computes some calls and gives the rest to the guarded
    dispatcher form). SHIMGEN_LEAKY_STR: the dispatcher from 2.10. The overlay: its C shim at 2.13, which computes
    every call ("tanh", any layout), never the kernel there."""
    from shimgen.generate import plan as plan_mod
    from shimgen.generate.plan import WORLDS
    from shimgen.generate.signatures import cpp as sig_cpp

    p = plan_mod.make(["gelu.default"])
    routes = {}
    for world in WORLDS:
        w = next(x for x in sig_cpp.wrappers(p.in_world(world))[0] if x.op.name == "gelu.default")
        routes[world.label] = [(str(v.start), v.route.name) for v in w.variants]
    assert routes["default"] == [("2.10", "composition"), ("2.14", "dispatcher")]
    assert routes["leaky-str"] == routes["overlay-leaky-str"] == [("2.10", "dispatcher")]
    assert routes["overlay"] == [("2.10", "composition"), ("2.13", "generated_shim"), ("2.14", "dispatcher")]
