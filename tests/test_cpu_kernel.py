"""baddbmm, addmv and histc (and their in-place and out= forms) at target 2.10 in the default build (kernel
`cpu_kernel`): libtorch ships no C shim for them and no released boxed dispatcher carries their Scalar, so on CPU
tensors the wrapper calls aten's own CPU kernel through libtorch's CPU C shim (aoti_torch_cpu_*, exported by
libtorch_cpu on every release), after resolving negative and conjugate views and, for baddbmm, autocast's cast; a call
autograd would record, a tensor on another device and integer tensors are refused by name. One extension built at
target 2.10 is compared with aten bit for bit on the installed torch and on 2.10.0, 2.14.1 and 2.15.0 where their
venvs are found."""

from __future__ import annotations

import subprocess

import pytest

from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from tests.cxx import build_so

TARGET_2_10 = "0x020a000000000000"
ROWS = ["baddbmm.default", "baddbmm_.default", "baddbmm.out", "addmv.default", "addmv_.default", "addmv.out",
        "histc.default", "histc.out", "scatter_reduce.two", "scatter_reduce_.two", "scatter_reduce.two_out",
        "index_reduce.default", "index_reduce_.default", "index_reduce.out", "searchsorted.Tensor",
        "searchsorted.Tensor_out", "_addmm_activation.default", "_addmm_activation.out"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_baddbmm(Tensor s, Tensor a, Tensor b, double beta, double alpha) { return ts::baddbmm(s, a, b, beta, alpha); }
Tensor k_baddbmm_(Tensor s, Tensor a, Tensor b, double beta, double alpha) {
  return ts::baddbmm_(s, a, b, beta, alpha);
}
Tensor k_baddbmm_out(Tensor s, Tensor a, Tensor b, double beta, double alpha, Tensor o) {
  return ts::baddbmm_out(o, s, a, b, beta, alpha);
}
Tensor k_attention(Tensor mask, Tensor q, Tensor k) { return ts::baddbmm(mask, q, k, 1, 0.125); }
Tensor k_addmv(Tensor s, Tensor m, Tensor v, double beta, double alpha) { return ts::addmv(s, m, v, beta, alpha); }
Tensor k_addmv_(Tensor s, Tensor m, Tensor v, double beta, double alpha) { return ts::addmv_(s, m, v, beta, alpha); }
Tensor k_addmv_out(Tensor s, Tensor m, Tensor v, double beta, double alpha, Tensor o) {
  return ts::addmv_out(o, s, m, v, beta, alpha);
}
Tensor k_histc(Tensor s, int64_t bins, double lo, double hi) { return ts::histc(s, bins, lo, hi); }
Tensor k_histc_out(Tensor s, int64_t bins, double lo, double hi, Tensor o) { return ts::histc_out(o, s, bins, lo, hi); }
Tensor k_scatter_reduce(Tensor s, int64_t d, Tensor i, Tensor src, std::string r, bool self) {
  return ts::scatter_reduce(s, d, i, src, r, self);
}
Tensor k_scatter_reduce_(Tensor s, int64_t d, Tensor i, Tensor src, std::string r, bool self) {
  return ts::scatter_reduce_(s, d, i, src, r, self);
}
Tensor k_scatter_reduce_out(Tensor s, int64_t d, Tensor i, Tensor src, std::string r, bool self, Tensor o) {
  return ts::scatter_reduce_out(o, s, d, i, src, r, self);
}
Tensor k_index_reduce_(Tensor s, int64_t d, Tensor i, Tensor src, std::string r, bool self) {
  return ts::index_reduce_(s, d, i, src, r, self);
}
Tensor k_searchsorted(Tensor seq, Tensor v, bool right, std::string side) {
  return side.empty() ? ts::searchsorted(seq, v, false, right) : ts::searchsorted(seq, v, false, right, side);
}
Tensor k_searchsorted_out(Tensor seq, Tensor v, bool out_int32, std::string side, Tensor o) {
  return ts::searchsorted_out(o, seq, v, out_int32, false, side);
}

Tensor k_addmm_act(Tensor s, Tensor a, Tensor b, double beta, double alpha, bool gelu) {
  return ts::_addmm_activation(s, a, b, beta, alpha, gelu);
}
Tensor k_addmm_act_out(Tensor s, Tensor a, Tensor b, double beta, double alpha, bool gelu, Tensor o) {
  return ts::_addmm_activation_out(o, s, a, b, beta, alpha, gelu);
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("addmm_act(Tensor s, Tensor a, Tensor b, float beta, float alpha, bool gelu) -> Tensor");
  m.def("addmm_act_out(Tensor s, Tensor a, Tensor b, float beta, float alpha, bool gelu, Tensor(a!) o) -> Tensor(a!)");
  m.def("baddbmm(Tensor s, Tensor a, Tensor b, float beta, float alpha) -> Tensor");
  m.def("baddbmm_(Tensor(a!) s, Tensor a, Tensor b, float beta, float alpha) -> Tensor(a!)");
  m.def("baddbmm_out(Tensor s, Tensor a, Tensor b, float beta, float alpha, Tensor(a!) o) -> Tensor(a!)");
  m.def("attention(Tensor mask, Tensor q, Tensor k) -> Tensor");
  m.def("addmv(Tensor s, Tensor m, Tensor v, float beta, float alpha) -> Tensor");
  m.def("addmv_(Tensor(a!) s, Tensor m, Tensor v, float beta, float alpha) -> Tensor(a!)");
  m.def("addmv_out(Tensor s, Tensor m, Tensor v, float beta, float alpha, Tensor(a!) o) -> Tensor(a!)");
  m.def("histc(Tensor s, int bins, float lo, float hi) -> Tensor");
  m.def("histc_out(Tensor s, int bins, float lo, float hi, Tensor(a!) o) -> Tensor(a!)");
  m.def("scatter_reduce(Tensor s, int d, Tensor i, Tensor src, str r, bool self) -> Tensor");
  m.def("scatter_reduce_(Tensor(a!) s, int d, Tensor i, Tensor src, str r, bool self) -> Tensor(a!)");
  m.def("scatter_reduce_out(Tensor s, int d, Tensor i, Tensor src, str r, bool self, Tensor(a!) o) -> Tensor(a!)");
  m.def("index_reduce_(Tensor(a!) s, int d, Tensor i, Tensor src, str r, bool self) -> Tensor(a!)");
  m.def("searchsorted(Tensor seq, Tensor v, bool right, str side) -> Tensor");
  m.def("searchsorted_out(Tensor seq, Tensor v, bool out_int32, str side, Tensor(a!) o) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("addmm_act", TORCH_BOX(&k_addmm_act));
  m.impl("addmm_act_out", TORCH_BOX(&k_addmm_act_out));
  m.impl("baddbmm", TORCH_BOX(&k_baddbmm));
  m.impl("baddbmm_", TORCH_BOX(&k_baddbmm_));
  m.impl("baddbmm_out", TORCH_BOX(&k_baddbmm_out));
  m.impl("attention", TORCH_BOX(&k_attention));
  m.impl("addmv", TORCH_BOX(&k_addmv));
  m.impl("addmv_", TORCH_BOX(&k_addmv_));
  m.impl("addmv_out", TORCH_BOX(&k_addmv_out));
  m.impl("histc", TORCH_BOX(&k_histc));
  m.impl("histc_out", TORCH_BOX(&k_histc_out));
  m.impl("scatter_reduce", TORCH_BOX(&k_scatter_reduce));
  m.impl("scatter_reduce_", TORCH_BOX(&k_scatter_reduce_));
  m.impl("scatter_reduce_out", TORCH_BOX(&k_scatter_reduce_out));
  m.impl("index_reduce_", TORCH_BOX(&k_index_reduce_));
  m.impl("searchsorted", TORCH_BOX(&k_searchsorted));
  m.impl("searchsorted_out", TORCH_BOX(&k_searchsorted_out));
}
"""


def test_the_rows_name_the_cpu_kernel_and_are_proven() -> None:
    facts = scalars.load().kernel_compositions
    entry = kernels.get("cpu_kernel")
    for op in ROWS:
        row = facts.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op) is entry
        assert {"2.10.0", "2.13.0", "2.14.1", "2.15.0"} <= set(row["proven"])


def test_each_rows_shim_is_declared_as_libtorch_declares_it() -> None:
    """kernels/cpu_kernel.h declares the CPU C shims its rows call (C linkage, in shimgen::detail; one another
    section declares already is that section's): each with the parameters libtorch's c_shim_cpu.h gives it
    (data/device_shims.json), so a new row names its shim there too."""
    import json
    import re
    from importlib import resources

    kernels_dir = resources.files("shimgen").joinpath("cxx/kernels")  # a name has one home: any section's
    text = " ".join(" ".join(f.read_text() for f in kernels_dir.iterdir() if f.name.endswith(".h")).split())
    shims = json.loads(resources.files("shimgen").joinpath("data/device_shims.json").read_text())["shims"]
    rows = {op: r for op, r in scalars.load().kernel_compositions.items() if r["kernel"] == "cpu_kernel"}
    assert set(ROWS) <= set(rows)
    for op, row in rows.items():
        name = next(f for f, d in shims.items() if f.startswith("aoti_torch_cpu_") and d["op"] == row["via"])
        params = ", ".join(p.strip() for p in shims[name]["params"].split(","))
        assert re.search(rf"AOTITorchError {name}\( ?{re.escape(params)}\);", text), (op, name)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("cpu_kernel")
    files, _ = pipeline.generate(ROWS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "cpu_kernel.cpp"
    src.write_text(CALLS.replace("NS", "cpu_kernel"))
    lib = str(root / "cpu_kernel.so")
    build_so(str(src), lib, str(root / "gen"), [f"TORCH_TARGET_VERSION={TARGET_2_10}"])
    return lib


# Run by each runtime's interpreter: every form bit-equal to aten on the kernel's paths (the small-product loop,
# gemm, mkldnn's bfloat16), 1 and 2 threads, transposed operands and a strided self, a negative view; baddbmm under
# CPU autocast; the refusals named.
ON_RUNTIME = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.cpu_kernel
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(
        a.contiguous().view(-1).view(torch.uint8) if a.numel() else a,
        b.contiguous().view(-1).view(torch.uint8) if b.numel() else b)

def raises(call, text):
    try:
        call()
    except RuntimeError as e:
        assert text in str(e), e
        return
    raise AssertionError("no error")

g = torch.Generator().manual_seed(0)
def r(*shape, dtype=torch.float32):
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * 3).to(dtype)

# _addmm_activation (a linear layer's bias, matmul and relu or gelu in one kernel): every form, and under autocast
for dtype in (torch.float32, torch.float64, torch.bfloat16):
    for (ss, s1, s2) in [((3, 5), (3, 4), (4, 5)), ((48,), (64, 32), (32, 48))]:
        s, a, b = r(*ss, dtype=dtype), r(*s1, dtype=dtype), r(*s2, dtype=dtype)
        for beta, alpha, gelu in ((1.0, 1.0, False), (0.5, 0.125, True), (0.0, 2.0, True)):
            want = torch._addmm_activation(s, a, b, beta=beta, alpha=alpha, use_gelu=gelu)
            assert same(ops.addmm_act(s, a, b, beta, alpha, gelu), want), (dtype, ss, beta, alpha, gelu)
            o, p = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            torch._addmm_activation(s, a, b, beta=beta, alpha=alpha, use_gelu=gelu, out=o)
            assert same(ops.addmm_act_out(s, a, b, beta, alpha, gelu, p), o)
with torch.autocast("cpu", dtype=torch.bfloat16):
    s, a, b = r(5), r(3, 4), r(4, 5)
    assert same(ops.addmm_act(s, a, b, 1.0, 1.0, True), torch._addmm_activation(s, a, b, use_gelu=True))
w = r(4, 5, dtype=torch.float64).requires_grad_()
raises(lambda: ops.addmm_act(r(5, dtype=torch.float64), r(3, 4, dtype=torch.float64), w, 1.0, 1.0, False),
       "autograd would record the call")
raises(lambda: ops.addmm_act_out(r(5, dtype=torch.float64), r(3, 4, dtype=torch.float64), w, 1.0, 1.0, False,
                                 torch.empty(0, dtype=torch.float64)), "autograd would record the call")

for threads in (1, 2):
    torch.set_num_threads(threads)
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        for (ss, s1, s2) in [((4, 3, 5), (4, 3, 2), (4, 2, 5)), ((3, 5), (4, 3, 2), (4, 2, 5)),
                             ((8, 64, 48), (8, 64, 96), (8, 96, 48)), ((2, 128, 128), (2, 128, 64), (2, 64, 128))]:
            s, a, b = r(*ss, dtype=dtype), r(*s1, dtype=dtype), r(*s2, dtype=dtype)
            for beta, alpha in ((1.0, 1.0), (0.5, 0.125), (0.0, 2.0)):
                want = torch.baddbmm(s, a, b, beta=beta, alpha=alpha)
                assert same(ops.baddbmm(s, a, b, beta, alpha), want), (dtype, ss, beta, alpha)
                at = a.transpose(1, 2).contiguous().transpose(1, 2)
                assert same(ops.baddbmm(s, at, b, beta, alpha), torch.baddbmm(s, at, b, beta=beta, alpha=alpha))
                if s.dim() == 3:
                    x, y = s.clone(), s.clone()
                    x.baddbmm_(a, b, beta=beta, alpha=alpha)
                    assert same(ops.baddbmm_(y, a, b, beta, alpha), x)
                    xt = s.transpose(1, 2).contiguous().transpose(1, 2)
                    yt = xt.clone().transpose(1, 2).contiguous().transpose(1, 2)
                    xt.baddbmm_(a, b, beta=beta, alpha=alpha)
                    ops.baddbmm_(yt, a, b, beta, alpha)
                    assert same(yt, xt)
                for o1, o2 in ((torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)),
                               (torch.empty(want.shape, dtype=dtype).transpose(1, 2).contiguous().transpose(1, 2),
                                torch.empty(want.shape, dtype=dtype).transpose(1, 2).contiguous().transpose(1, 2))):
                    torch.baddbmm(s, a, b, beta=beta, alpha=alpha, out=o1)
                    assert ops.baddbmm_out(s, a, b, beta, alpha, o2) is not None and same(o2, o1)
        m, v, s = r(64, 48, dtype=dtype), r(48, dtype=dtype), r(64, dtype=dtype)
        want = torch.addmv(s, m, v, beta=0.5, alpha=2.0)
        assert same(ops.addmv(s, m, v, 0.5, 2.0), want)
        assert same(ops.addmv(s, m.t().contiguous().t(), v, 0.5, 2.0), torch.addmv(s, m.t().contiguous().t(), v,
                                                                                   beta=0.5, alpha=2.0))
        x = s.clone()
        assert same(ops.addmv_(x, m, v, 0.5, 2.0), want) and same(x, want)
        o = torch.empty(0, dtype=dtype)
        assert same(ops.addmv_out(s, m, v, 0.5, 2.0, o), want) and same(o, want)
        if dtype in (torch.float32, torch.float64):
            h = r(5000, dtype=dtype)
            for bins, lo, hi in ((100, 0.0, 0.0), (7, -1.5, 3.25), (16, 2.0, 2.0)):
                assert same(ops.histc(h, bins, lo, hi), torch.histc(h, bins, lo, hi))
                o = torch.empty(0, dtype=dtype)
                assert same(ops.histc_out(h, bins, lo, hi, o), torch.histc(h, bins, lo, hi))

# attention scores at target 2.10: mask + q @ k * scale
q, k, mask = r(4, 16, 32), r(4, 32, 16), r(4, 16, 16)
assert same(ops.attention(mask, q, k), torch.baddbmm(mask, q, k, beta=1, alpha=0.125))
# a negative view: the dispatcher's fallback resolves it
n = torch._neg_view(r(4, 2, 5))
s, a = r(4, 3, 5), r(4, 3, 2)
assert same(ops.baddbmm(s, a, n, 1.0, 1.0), torch.baddbmm(s, a, n))
# CPU autocast: baddbmm is on its lower-precision list
with torch.autocast("cpu", dtype=torch.bfloat16):
    b = r(4, 2, 5)
    got, want = ops.baddbmm(s, a, b, 1.0, 1.0), torch.baddbmm(s, a, b)
    assert got.dtype == torch.bfloat16 and same(got, want)
# named refusals: autograd, integer tensors
sg = s.clone().requires_grad_()
raises(lambda: ops.baddbmm(sg, a, r(4, 2, 5), 1.0, 1.0), "autograd would record the call")
with torch.no_grad():
    b = r(4, 2, 5)
    assert same(ops.baddbmm(sg, a, b, 1.0, 1.0), torch.baddbmm(s, a, b))
hg = r(100).requires_grad_()
assert same(ops.histc(hg, 10, 0.0, 0.0), torch.histc(hg, 10, 0, 0))  # histc has no gradient: computed
i = torch.ones(2, 3, 4, dtype=torch.int64)
raises(lambda: ops.baddbmm(torch.ones(2, 3, 5, dtype=torch.int64), i, torch.ones(2, 4, 5, dtype=torch.int64), 1.0, 1.0),
       "integer tensors")
# the str ops: computed on CPU below 2.14 (no str crosses the dispatcher), aten's own op from 2.14
for threads in (1, 2):
    torch.set_num_threads(threads)
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64):
        for shape, ishape, dim in [((5, 7), (9, 7), 0), ((5, 7), (5, 30), 1), ((64, 33), (2000, 33), 0)]:
            s, src = r(*shape, dtype=dtype), r(*ishape, dtype=dtype)
            index = torch.randint(0, shape[dim], ishape, generator=g)
            for reduce in ("sum", "prod", "mean", "amax", "amin"):
                for include_self in (True, False):
                    want = torch.scatter_reduce(s, dim, index, src, reduce, include_self=include_self)
                    assert same(ops.scatter_reduce(s, dim, index, src, reduce, include_self), want), (dtype, reduce)
                    x = s.clone()
                    assert same(ops.scatter_reduce_(x, dim, index, src, reduce, include_self), want)
                    o = torch.empty(0, dtype=dtype)
                    assert same(ops.scatter_reduce_out(s, dim, index, src, reduce, include_self, o), want)
                    if dim == 0 and ishape[0] < 100:
                        i1 = index[:, 0].contiguous()
                        y, z = s.clone(), s.clone()
                        y.index_reduce_(dim, i1, src, reduce if reduce != "sum" else "prod", include_self=include_self)
                        ops.index_reduce_(z, dim, i1, src, reduce if reduce != "sum" else "prod", include_self)
                        assert same(z, y)
        seq = r(4, 50, dtype=dtype).sort(-1).values
        v = r(4, 9, dtype=dtype)
        for right, side in ((False, ""), (True, ""), (False, "left"), (False, "right")):
            want = torch.searchsorted(seq, v, right=right, side=side or None)
            assert same(ops.searchsorted(seq, v, right, side), want)
        for out_int32, side in ((False, "left"), (True, "right")):
            want = torch.searchsorted(seq, v, out_int32=out_int32, side=side)
            o = torch.empty(0, dtype=torch.int32 if out_int32 else torch.int64)
            assert same(ops.searchsorted_out(seq, v, out_int32, side, o), want), (dtype, out_int32, side)
            assert same(o, want)
assert same(ops.scatter_reduce(s, 0, index, src, "max", True), torch.scatter_reduce(s, 0, index, src, "max"))
# aten's error (libtorch hands a C shim's reason over from 2.13; before, it logs it on stderr)
raises(lambda: ops.scatter_reduce(s, 0, index, src, "bogus", True),
       "got bogus" if release >= (2, 13) else "libtorch logged the reason on stderr")
sg = r(5, 7, dtype=torch.float64).requires_grad_()
srcg = r(9, 7, dtype=torch.float64)
ig = torch.randint(0, 5, (9, 7), generator=g)
if release < (2, 14):  # autograd would record it: the dispatcher's form, whose str leaks before 2.14
    raises(lambda: ops.scatter_reduce(sg, 0, ig, srcg, "sum", True), "leaks 48 bytes per call")
else:
    got = ops.scatter_reduce(sg, 0, ig, srcg, "sum", True)
    assert got.grad_fn is not None and same(got.detach(), torch.scatter_reduce(sg.detach(), 0, ig, srcg, "sum"))
print("ok")
"""


@pytest.mark.slow
def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_baddbmm" not in out
    assert "aoti_torch_cpu_baddbmm_out" in out and "aoti_torch_cuda" not in out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_equal_to_aten_on_every_runtime_and_the_rest_is_named(ext, name) -> None:
    """One target-2.10 binary: every form equal to aten's bit for bit on each runtime; the refusals named."""
    from tests.children import run_on

    proc = run_on(name, ON_RUNTIME, ext)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
