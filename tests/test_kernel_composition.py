"""The composition route (shimgen/generate/routes/composition.py, facts `kernel_compositions` of data/scalar_facts.yaml):
threshold_backward and threshold as aten's threshold kernel composed of dispatching aten calls
(shimgen::detail::threshold_select), and add_/sub_ as add/sub then copy_ under aten's in-place rules
(shimgen::detail::assign_inplace), and _foreach_add_/_foreach_mul_ as the per-tensor op in a loop (aten's CPU
kernel), and add.out/threshold_backward.grad_input/leaky_relu.out as their functional then aten's out= rules
(shimgen::detail::assign_out), and threshold_ computing from a clone of self in grad mode, in an extension linked
with libtorch alone.

Each call is compared with ATen given what the caller wrote: dtype pairs (mixed ones promote), broadcasting and
0-dim shapes, nan/inf among the values, a threshold that is no float32 (compared in the common dtype as aten
does); a number out of range is a `shimgen:` error; registered as CompositeImplicitAutograd the result's
gradient is ATen's."""

from __future__ import annotations

import itertools
import subprocess

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_tb(Tensor g, Tensor s, double t) { return ts::threshold_backward(g, s, t); }
Tensor k_tb_int(Tensor g, Tensor s, int64_t t) { return ts::threshold_backward(g, s, t); }
Tensor k_th(Tensor s, double t, double v) { return ts::threshold(s, t, v); }
Tensor k_lrelu(Tensor x, double n) { return ts::leaky_relu(x, n); }
Tensor k_lrelu_bw(Tensor g, Tensor x, double n) { return ts::leaky_relu_backward(g, x, n, false); }
Tensor k_add_(Tensor s, Tensor o, double a) { return ts::add_(s, o, a); }
Tensor k_add_default(Tensor s, Tensor o) { return ts::add_(s, o); }
Tensor k_sub_(Tensor s, Tensor o) { return ts::sub_(s, o); }
void k_fe_list(Tensor a, Tensor b, Tensor o1, Tensor o2, double alpha) {
  std::vector<Tensor> s{a, b};
  std::vector<Tensor> o{o1, o2};
  ts::_foreach_add_(s, o, alpha);
}
void k_fe_scalar(Tensor a, Tensor b, double n) {
  std::vector<Tensor> s{a, b};
  ts::_foreach_mul_(s, shimgen::Scalar(n));
}
void k_fe_scalars(Tensor a, Tensor b, double n) {
  std::vector<Tensor> s{a, b};
  std::vector<double> v{n, -n};
  ts::_foreach_add_(s, v);
}
Tensor k_where(Tensor c, double a, double b) { return ts::where(c, a, b); }
Tensor k_where_int(Tensor c, int64_t a, int64_t b) { return ts::where(c, a, b); }
Tensor k_where_mixed(Tensor c, int64_t a, double b) { return ts::where(c, a, b); }
Tensor k_hardtanh(Tensor x, double lo, double hi) { return ts::hardtanh(x, lo, hi); }
Tensor k_hardtanh_default(Tensor x) { return ts::hardtanh(x); }
Tensor k_hardshrink(Tensor x, double l) { return ts::hardshrink(x, l); }
Tensor k_searchsorted(Tensor s, double v, bool right) { return ts::searchsorted(s, shimgen::Scalar(v), false, right); }
Tensor k_searchsorted_int(Tensor s, int64_t v) { return ts::searchsorted(s, shimgen::Scalar(v)); }
Tensor k_bucketize(double v, Tensor b) { return ts::bucketize(shimgen::Scalar(v), b); }
Tensor k_pad(Tensor x, double v) { return ts::constant_pad_nd(x, {1, 2, 0, 1}, v); }
Tensor k_pad_int(Tensor x, int64_t v) { return ts::constant_pad_nd(x, {1, -1}, v); }
Tensor k_pad_default(Tensor x) { return ts::constant_pad_nd(x, {2, 2}); }
Tensor k_pad_list(Tensor x, std::vector<int64_t> pad) { return ts::constant_pad_nd(x, pad, 0.5); }
Tensor k_scatter(Tensor x, int64_t dim, Tensor index, double v) { return ts::scatter(x, dim, index, v); }
Tensor k_scatter_int(Tensor x, int64_t dim, Tensor index, int64_t v) { return ts::scatter(x, dim, index, v); }
// a tensor argument (unused) so that the CPU kernel is dispatched to
Tensor k_linspace(Tensor, double a, double b, int64_t n) { return ts::linspace(a, b, n); }
Tensor k_linspace_int(Tensor, int64_t a, int64_t b, int64_t n) { return ts::linspace(a, b, n); }
Tensor k_logspace(Tensor, double a, double b, int64_t n, double base) { return ts::logspace(a, b, n, base); }
Tensor k_add_out(Tensor s, Tensor o, double a, Tensor out) {
  ts::add_out(out, s, o, a);
  return out;
}
Tensor k_tb_out(Tensor g, Tensor s, double t, Tensor out) {
  ts::threshold_backward_out(out, g, s, t);
  return out;
}
Tensor k_lrelu_out(Tensor x, double n, Tensor out) {
  ts::leaky_relu_out(out, x, n);
  return out;
}
Tensor k_th_(Tensor s, double t, double v) { return ts::threshold_(s, t, v); }
void k_fe_tensor(Tensor a, Tensor b, Tensor o) {
  std::vector<Tensor> s{a, b};
  ts::_foreach_add_(s, o, 1.0);
}
void k_fe_empty(Tensor dummy) {
  (void)dummy;
  std::vector<Tensor> s;
  ts::_foreach_mul_(s, shimgen::Scalar(2.0));
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("tb(Tensor g, Tensor s, float t) -> Tensor");
  m.def("tb_int(Tensor g, Tensor s, int t) -> Tensor");
  m.def("th(Tensor s, float t, float v) -> Tensor");
  m.def("lrelu(Tensor x, float n) -> Tensor");
  m.def("lrelu_bw(Tensor g, Tensor x, float n) -> Tensor");
  m.def("add_(Tensor(a!) s, Tensor o, float a) -> Tensor(a!)");
  m.def("add_default(Tensor(a!) s, Tensor o) -> Tensor(a!)");
  m.def("sub_(Tensor(a!) s, Tensor o) -> Tensor(a!)");
  m.def("fe_list(Tensor(a!) a, Tensor(b!) b, Tensor o1, Tensor o2, float alpha) -> ()");
  m.def("fe_scalar(Tensor(a!) a, Tensor(b!) b, float n) -> ()");
  m.def("fe_scalars(Tensor(a!) a, Tensor(b!) b, float n) -> ()");
  m.def("fe_empty(Tensor dummy) -> ()");
  m.def("where_s(Tensor c, float a, float b) -> Tensor");
  m.def("where_int(Tensor c, int a, int b) -> Tensor");
  m.def("where_mixed(Tensor c, int a, float b) -> Tensor");
  m.def("hardtanh(Tensor x, float lo, float hi) -> Tensor");
  m.def("hardtanh_default(Tensor x) -> Tensor");
  m.def("hardshrink(Tensor x, float l) -> Tensor");
  m.def("searchsorted(Tensor s, float v, bool right) -> Tensor");
  m.def("searchsorted_int(Tensor s, int v) -> Tensor");
  m.def("bucketize(float v, Tensor b) -> Tensor");
  m.def("scatter(Tensor x, int dim, Tensor index, float v) -> Tensor");
  m.def("scatter_int(Tensor x, int dim, Tensor index, int v) -> Tensor");
  m.def("pad(Tensor x, float v) -> Tensor");
  m.def("pad_int(Tensor x, int v) -> Tensor");
  m.def("pad_default(Tensor x) -> Tensor");
  m.def("pad_list(Tensor x, int[] pad) -> Tensor");
  m.def("linspace(Tensor d, float a, float b, int n) -> Tensor");
  m.def("linspace_int(Tensor d, int a, int b, int n) -> Tensor");
  m.def("logspace(Tensor d, float a, float b, int n, float base) -> Tensor");
  m.def("add_out(Tensor s, Tensor o, float a, Tensor(a!) out) -> Tensor(a!)");
  m.def("tb_out(Tensor g, Tensor s, float t, Tensor(a!) out) -> Tensor(a!)");
  m.def("lrelu_out(Tensor x, float n, Tensor(a!) out) -> Tensor(a!)");
  m.def("th_(Tensor(a!) s, float t, float v) -> Tensor(a!)");
  m.def("fe_tensor(Tensor(a!) a, Tensor(b!) b, Tensor o) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("tb", TORCH_BOX(&k_tb));
  m.impl("tb_int", TORCH_BOX(&k_tb_int));
  m.impl("th", TORCH_BOX(&k_th));
  m.impl("lrelu", TORCH_BOX(&k_lrelu));
  m.impl("lrelu_bw", TORCH_BOX(&k_lrelu_bw));
  m.impl("add_", TORCH_BOX(&k_add_));
  m.impl("add_default", TORCH_BOX(&k_add_default));
  m.impl("sub_", TORCH_BOX(&k_sub_));
  m.impl("fe_list", TORCH_BOX(&k_fe_list));
  m.impl("fe_scalar", TORCH_BOX(&k_fe_scalar));
  m.impl("fe_scalars", TORCH_BOX(&k_fe_scalars));
  m.impl("fe_empty", TORCH_BOX(&k_fe_empty));
  m.impl("where_s", TORCH_BOX(&k_where));
  m.impl("where_int", TORCH_BOX(&k_where_int));
  m.impl("where_mixed", TORCH_BOX(&k_where_mixed));
  m.impl("hardtanh", TORCH_BOX(&k_hardtanh));
  m.impl("hardtanh_default", TORCH_BOX(&k_hardtanh_default));
  m.impl("hardshrink", TORCH_BOX(&k_hardshrink));
  m.impl("searchsorted", TORCH_BOX(&k_searchsorted));
  m.impl("searchsorted_int", TORCH_BOX(&k_searchsorted_int));
  m.impl("bucketize", TORCH_BOX(&k_bucketize));
  m.impl("scatter", TORCH_BOX(&k_scatter));
  m.impl("scatter_int", TORCH_BOX(&k_scatter_int));
  m.impl("pad", TORCH_BOX(&k_pad));
  m.impl("pad_int", TORCH_BOX(&k_pad_int));
  m.impl("pad_default", TORCH_BOX(&k_pad_default));
  m.impl("pad_list", TORCH_BOX(&k_pad_list));
  m.impl("linspace", TORCH_BOX(&k_linspace));
  m.impl("linspace_int", TORCH_BOX(&k_linspace_int));
  m.impl("logspace", TORCH_BOX(&k_logspace));
  m.impl("add_out", TORCH_BOX(&k_add_out));
  m.impl("tb_out", TORCH_BOX(&k_tb_out));
  m.impl("lrelu_out", TORCH_BOX(&k_lrelu_out));
  m.impl("th_", TORCH_BOX(&k_th_));
  m.impl("fe_tensor", TORCH_BOX(&k_fe_tensor));
}
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("composition") / "gen")
    files, _ = pipeline.generate(["threshold_backward", "threshold", "leaky_relu", "leaky_relu_backward", "add_", "sub_",
                                     "_foreach_add_", "_foreach_mul_", "where", "hardtanh", "hardshrink",
                                     "searchsorted", "bucketize", "linspace", "logspace",
                                     "constant_pad_nd", "scatter", "add", "threshold_"], None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build(gen: str, root, ns: str, key: str) -> str:
    src = root / f"{ns}.cpp"
    src.write_text(CALLS.replace("NS", ns).replace("KEY", key))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)
    return lib


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("comp_cpu"), "comp_cpu", "CPU")


@pytest.fixture(scope="module")
def ext_implicit(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("comp_implicit"), "comp_implicit", "CompositeImplicitAutograd")


def _sample(shape, dtype, seed):
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
    if t.numel() > 4:
        t.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -0.0, 0.1])
    return t.to(dtype) if dtype.is_floating_point else t.nan_to_num(0, 0, 0).round().to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64]


@pytest.mark.parametrize("dg,ds", list(itertools.product(DTYPES, DTYPES)))
def test_threshold_backward_is_exact(ext, dg, ds) -> None:
    for shapes in (((4, 5), (4, 5)), ((4, 5), ()), ((1, 5), (4, 1))):
        g, s = _sample(shapes[0], dg, 1), _sample(shapes[1], ds, 2)
        for t in (0.0, 0.1, -1.5):
            want = torch.ops.aten.threshold_backward(g, s, t)
            if ds.is_floating_point or dg.is_floating_point or t == int(t):
                assert _same(torch.ops.comp_cpu.tb(g, s, t), want), (dg, ds, shapes, t)
        assert _same(torch.ops.comp_cpu.tb_int(g, s, 0), torch.ops.aten.threshold_backward(g, s, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threshold_is_exact(ext, dtype) -> None:
    x = _sample((6, 5), dtype, 3)
    for t, v in ((0.0, 0.0), (0.5, -2.0), (1.0, 20.0)) if dtype.is_floating_point else ((0.0, 0.0), (1.0, 20.0)):
        assert _same(torch.ops.comp_cpu.th(x, t, v), torch.ops.aten.threshold(x, t, v)), (dtype, t, v)


def test_numbers_out_of_range_are_refused(ext) -> None:
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match=r"shimgen: threshold_backward.default: threshold=.*range"):
        torch.ops.comp_cpu.tb(x, x, 1e300)
    with pytest.raises(RuntimeError, match=r"shimgen: threshold.default: value=.*range"):
        torch.ops.comp_cpu.th(x.half(), 0.0, 1e10)


def test_gradients_are_atens(ext_implicit) -> None:
    g, s = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    grads = []
    for fn in (torch.ops.aten.threshold_backward, torch.ops.comp_implicit.tb):
        gl = g.clone().requires_grad_()
        r = fn(gl, s, 0.0)
        assert r.grad_fn is not None
        (r * torch.arange(20, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append(gl.grad)
    assert torch.equal(*grads)
    x = torch.randn(6, dtype=torch.float64)
    grads = []
    for fn in (torch.ops.aten.threshold, torch.ops.comp_implicit.th):
        xl = x.clone().requires_grad_()
        fn(xl, 0.0, -1.0).sum().backward()
        grads.append(xl.grad)
    assert torch.equal(*grads)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    assert "threshold" not in out  # no aoti_torch_aten_threshold* (no libtorch exports one)


@pytest.mark.parametrize("ds,do", [(torch.float32, torch.float32), (torch.float32, torch.float64),
                                   (torch.float64, torch.float32), (torch.bfloat16, torch.float32)])
def test_add_inplace_is_exact(ext, ds, do) -> None:
    for so, alpha in (((4, 5), 1.0), ((5,), 0.5), ((), -2.0)):
        x, o = _sample((4, 5), ds, 1), _sample(so, do, 2)
        want = x.clone().add_(o, alpha=alpha)
        got = torch.ops.comp_cpu.add_(x.clone(), o, alpha)
        assert _same(got, want), (ds, do, so, alpha)
        assert _same(torch.ops.comp_cpu.add_default(x.clone(), o), x.clone().add_(o))
        assert _same(torch.ops.comp_cpu.sub_(x.clone(), o), x.clone().sub_(o))
    x = torch.randn(4, 5)
    y = x.clone()
    r = torch.ops.comp_cpu.add_(x, x, 1.0)  # the very same view: aten allows it
    assert r.data_ptr() == x.data_ptr() and torch.equal(x, y + y)


def test_add_inplace_refuses_what_aten_refuses_or_computes_in_place(ext) -> None:
    base = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"shimgen: add_.Tensor: self shares memory"):
        torch.ops.comp_cpu.add_(base[:, :3], base[:, 1:], 1.0)  # aten: partial overlap error
    with pytest.raises(RuntimeError, match=r"shimgen: add_.Tensor: the result's dtype cannot be cast"):
        torch.ops.comp_cpu.add_(torch.zeros(3, dtype=torch.float32), torch.ones(3, dtype=torch.complex64), 1.0)
    with pytest.raises(RuntimeError):  # aten: output with shape [5] doesn't match the broadcast shape
        torch.ops.comp_cpu.add_(torch.zeros(5), torch.ones(4, 5), 1.0)
    # integral tensors with the default alpha: add.Tensor's number rule (integral_add), then copy_
    s, o = torch.arange(3, dtype=torch.int64), torch.full((3,), 2**62, dtype=torch.int64)
    assert torch.equal(torch.ops.comp_cpu.add_default(s.clone(), o), s.clone().add_(o))


def test_add_inplace_gradients_are_atens(ext_implicit) -> None:
    grads = []
    for fn in (lambda s, o: s.add_(o, alpha=0.5), lambda s, o: torch.ops.comp_implicit.add_(s, o, 0.5)):
        a, o = torch.randn(4, 5, dtype=torch.float64, requires_grad=True), torch.randn(5, dtype=torch.float64,
                                                                                       requires_grad=True)
        torch.manual_seed(0)
        a.grad = None
        s = a * 2
        (fn(s, o) * torch.arange(20, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append((a.grad.clone(), o.grad.clone()))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])
    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.ops.comp_implicit.add_(leaf, torch.ones(3), 1.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_foreach_is_exact(ext, dtype) -> None:
    def pair():
        return [_sample((4, 5), dtype, 1), _sample((3,), dtype, 2)]
    o = [_sample((4, 5), torch.float32, 3), _sample((3,), dtype, 4)]
    mine, want = pair(), pair()
    torch.ops.comp_cpu.fe_list(*mine, *o, 0.5)
    torch._foreach_add_(want, o, alpha=0.5)
    assert all(_same(a, b) for a, b in zip(mine, want))
    mine, want = pair(), pair()
    torch.ops.comp_cpu.fe_scalar(*mine, 2.5)  # on bfloat16 too: mul_.Scalar's cell is proven for numbers it holds
    torch._foreach_mul_(want, 2.5)
    assert all(_same(a, b) for a, b in zip(mine, want))
    if dtype == torch.bfloat16:  # 0.1 is not a bfloat16: aten's in-place kernel rounds it (kernel self_dtype_number)
        mine, want = pair(), pair()
        torch.ops.comp_cpu.fe_scalar(*mine, 0.1)
        torch._foreach_mul_(want, 0.1)
        assert all(_same(a, b) for a, b in zip(mine, want))
    mine, want = pair(), pair()
    torch.ops.comp_cpu.fe_scalars(*mine, 1.5)
    torch._foreach_add_(want, [1.5, -1.5])
    assert all(_same(a, b) for a, b in zip(mine, want))
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch.ops.comp_cpu.fe_empty(torch.zeros(1))


@pytest.mark.parametrize("dg,ds", list(itertools.product(DTYPES[:4], DTYPES[:4])))
def test_leaky_relu_is_exact(ext, dg, ds) -> None:
    for shapes in (((4, 5), (4, 5)), ((), (4, 5)), ((4, 5), ())):
        g, x = _sample(shapes[0], dg, 1), _sample(shapes[1], ds, 2)
        for n in (0.01, 0.2, -1.5):
            assert _same(torch.ops.comp_cpu.lrelu(x, n), torch.ops.aten.leaky_relu(x, n)), (ds, n)
            assert _same(torch.ops.comp_cpu.lrelu_bw(g, x, n), torch.ops.aten.leaky_relu_backward(g, x, n, False))
    with pytest.raises(RuntimeError, match="shimgen: leaky_relu.default: aten has no kernel for this dtype"):
        torch.ops.comp_cpu.lrelu(torch.ones(3, dtype=torch.int64), 0.1)


def test_where_scalars_are_exact(ext) -> None:
    c = torch.randn(4, 5) > 0
    for a, b in ((1.0, 0.0), (0.1, -2.5), (1e10, float("-0.0"))):
        assert _same(torch.ops.comp_cpu.where_s(c, a, b), torch.where(c, a, b)), (a, b)  # float32: the default dtype
    assert _same(torch.ops.comp_cpu.where_int(c, 1, 0), torch.where(c, 1, 0))  # int64
    assert _same(torch.ops.comp_cpu.where_mixed(c, 16777217, 0.5), torch.where(c, 16777217, 0.5))  # float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert _same(torch.ops.comp_cpu.where_s(c, 0.1, 0.0), torch.where(c, 0.1, 0.0))  # float64
    finally:
        torch.set_default_dtype(old)
    with pytest.raises(RuntimeError, match=r"shimgen: where.Scalar: self=.*range"):
        torch.ops.comp_cpu.where_s(c, 1e300, 0.0)  # no float32 holds it


@pytest.mark.parametrize("dtype", DTYPES + [torch.int8, torch.uint8])
def test_hardtanh_is_exact(ext, dtype) -> None:
    x = _sample((6, 7), dtype, 3)
    x.view(-1)[5:9] = torch.tensor([1, -1, 6, 0]).to(dtype)  # on the bounds
    for lo, hi in ((-1.0, 1.0), (0.0, 6.0), (-0.5, 2.7), (2.0, -2.0)):
        if dtype == torch.uint8 and int(min(lo, hi)) < 0:  # the bounds as integers: aten raises or wraps a negative
            with pytest.raises(RuntimeError, match="shimgen: hardtanh.default: m.._val="):
                torch.ops.comp_cpu.hardtanh(x, lo, hi)
            continue
        assert _same(torch.ops.comp_cpu.hardtanh(x, lo, hi), torch.ops.aten.hardtanh(x, lo, hi)), (dtype, lo, hi)
    if dtype != torch.uint8:
        assert _same(torch.ops.comp_cpu.hardtanh_default(x), torch.ops.aten.hardtanh(x))
    with pytest.raises(RuntimeError, match="shimgen: hardtanh.default: aten has no kernel"):
        torch.ops.comp_cpu.hardtanh(torch.ones(3, dtype=torch.bool), 0.0, 1.0)


@pytest.mark.parametrize("dtype", DTYPES[:4])
def test_hardshrink_is_exact(ext, dtype) -> None:
    x = _sample((6, 7), dtype, 4)
    x.view(-1)[5:9] = torch.tensor([0.5, -0.5, 0.3, -0.3]).to(dtype)  # on +-lambd (0.3: half rounds it up)
    for lambd in (0.5, 0.3, 0.0, -1.0):
        assert _same(torch.ops.comp_cpu.hardshrink(x, lambd), torch.ops.aten.hardshrink(x, lambd)), (dtype, lambd)


def test_hardtanh_hardshrink_gradients_are_atens(ext_implicit) -> None:
    x = torch.randn(6, 7, dtype=torch.float64)
    x.view(-1)[:6] = torch.tensor([1.0, -1.0, 0.5, -0.5, 0.0, -0.0], dtype=torch.float64)  # on the bounds
    w = torch.arange(42, dtype=torch.float64).view(6, 7)
    for mine, want in ((lambda t: torch.ops.comp_implicit.hardtanh(t, -1.0, 1.0), torch.nn.functional.hardtanh),
                       (lambda t: torch.ops.comp_implicit.hardshrink(t, 0.5), lambda t: torch.ops.aten.hardshrink(t, 0.5))):
        grads = []
        for fn in (mine, want):
            xl = x.clone().requires_grad_()
            (fn(xl) * w).sum().backward()
            grads.append(xl.grad)
        assert torch.equal(*grads)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8])
def test_searchsorted_bucketize_numbers_are_atens(ext, dtype) -> None:
    seq = torch.tensor([1, 3, 5, 16777216, 16777217, 16777218]).to(dtype)  # float32 rounds the large ones
    for v in (0.5, 3.0, 16777216.5, -1.0, 2.5):
        if dtype == torch.float16 and v > 65504:  # aten compares it as half's infinity
            with pytest.raises(RuntimeError, match=r"shimgen: searchsorted.Scalar: self=.*range"):
                torch.ops.comp_cpu.searchsorted(seq, v, False)
            continue
        for right in (False, True):
            want = torch.searchsorted(seq, v, right=right)
            assert _same(torch.ops.comp_cpu.searchsorted(seq, v, right), want), (dtype, v, right)
        assert _same(torch.ops.comp_cpu.bucketize(v, seq), torch.bucketize(v, seq)), (dtype, v)
    assert _same(torch.ops.comp_cpu.searchsorted_int(seq, 5), torch.searchsorted(seq, 5))


def test_linspace_logspace_numbers_are_atens(ext) -> None:
    d = torch.zeros(1)
    for a, b, n in ((0.0, 1.0, 5), (0.1, -2.5, 7), (1e10, 1e10 + 1, 3), (0.0, 1.0, 1), (0.0, 1.0, 0)):
        assert _same(torch.ops.comp_cpu.linspace(d, a, b, n), torch.linspace(a, b, n)), (a, b, n)
        assert _same(torch.ops.comp_cpu.logspace(d, a, b, n, 2.0), torch.logspace(a, b, n, 2.0)), (a, b, n)
    big = 2**53 + 1  # an int64 a double does not hold: .item() gives it back as an integer
    assert _same(torch.ops.comp_cpu.linspace_int(d, big, big + 4, 5), torch.linspace(big, big + 4, 5))
    assert _same(torch.ops.comp_cpu.linspace_int(d, 0, 10, 6), torch.linspace(0, 10, 6))
    with pytest.raises(RuntimeError):  # aten: number of steps must be non-negative
        torch.ops.comp_cpu.linspace(d, 0.0, 1.0, -1)


@pytest.mark.parametrize("dtype", DTYPES + [torch.uint8, torch.int8, torch.bool])
def test_constant_pad_nd_is_exact(ext, dtype) -> None:
    x = _sample((3, 4), dtype, 5) if dtype != torch.bool else torch.randn(3, 4) > 0
    for v in (0.0, 1.5, -2.0, 0.1):
        if dtype == torch.uint8 and v < 0:  # aten raises converting -2.0 to uint8
            with pytest.raises(RuntimeError):
                torch.ops.comp_cpu.pad(x, v)
            continue
        assert _same(torch.ops.comp_cpu.pad(x, v), torch.constant_pad_nd(x, [1, 2, 0, 1], v)), (dtype, v)
    assert _same(torch.ops.comp_cpu.pad_int(x, 3), torch.constant_pad_nd(x, [1, -1], 3))
    assert _same(torch.ops.comp_cpu.pad_default(x), torch.constant_pad_nd(x, [2, 2]))
    if dtype == torch.uint8:  # aten wraps -1 to 255; a double -1.0 would raise: refused
        with pytest.raises(RuntimeError, match=r"shimgen: constant_pad_nd.default: value=-1: aten wraps"):
            torch.ops.comp_cpu.pad_int(x, -1)
    if dtype == torch.int64:
        with pytest.raises(RuntimeError, match=r"shimgen: constant_pad_nd.default: value=.*no double holds it"):
            torch.ops.comp_cpu.pad_int(x, 2**53 + 1)


@pytest.mark.parametrize("shape,pad", [((3, 4), [1, 2, 3]), ((3, 4), [1] * 6), ((), [1, 1]), ((2, 3), [-3, -1])])
def test_constant_pad_nd_raises_atens_errors(ext, shape, pad) -> None:
    """The pad's errors are constant_pad_nd's own (aten::pad words them differently: the release matrix found it)."""
    x = torch.randn(shape)
    with pytest.raises(RuntimeError) as want:
        torch.constant_pad_nd(x, pad, 0.5)
    with pytest.raises(RuntimeError) as got:
        torch.ops.comp_cpu.pad_list(x, pad)
    assert str(want.value).splitlines()[0] in str(got.value)


def test_constant_pad_nd_gradient_is_atens(ext_implicit) -> None:
    grads = []
    base = torch.randn(3, 4, dtype=torch.float64)
    for fn in (lambda t: torch.constant_pad_nd(t, [1, 2, 0, 1], 0.5), lambda t: torch.ops.comp_implicit.pad(t, 0.5)):
        x = base.clone().requires_grad_()
        r = fn(x)
        (r * torch.arange(r.numel(), dtype=torch.float64).view(r.shape)).sum().backward()
        grads.append(x.grad)
    assert torch.equal(*grads)


def test_a_via_with_a_str_argument_is_declared_for_every_build(tmp_path) -> None:
    """searchsorted.Scalar alone: its composition's via, searchsorted.Tensor (added, `str? side`), goes through
    shimgen's overlay shim in the builds that refuse the leaky str route, so its C shim is declared and defined."""
    files, _ = pipeline.generate(["searchsorted.Scalar"], None, None, str(tmp_path / "g"), only=True)
    header = next(text for path, text in files.items() if path.endswith("ops/searchsorted.h"))
    assert "aoti_torch_aten_searchsorted_Tensor(" in header
    assert "shimgen::detail::wrapped_numbers_dtype" in header


@pytest.mark.parametrize("dtype", DTYPES + [torch.int8, torch.bool, torch.complex64])
def test_scatter_value_is_exact(ext, dtype) -> None:
    x = _sample((3, 4), dtype, 6) if dtype not in (torch.bool, torch.complex64) else torch.ones(3, 4, dtype=dtype)
    index = torch.tensor([[0, 2, 1], [1, 0, 2]])
    for dim, v in ((1, 0.0), (0, 1.0), (-1, -2.0), (1, 0.1)):
        if dtype == torch.bool and v not in (0.0, 1.0) or not (dtype.is_floating_point or dtype.is_complex) and v != int(v):
            with pytest.raises(RuntimeError, match=r"shimgen: scatter.value: value="):  # aten converts it
                torch.ops.comp_cpu.scatter(x, dim, index, v)
            continue
        assert _same(torch.ops.comp_cpu.scatter(x, dim, index, v), torch.scatter(x, dim, index, v)), (dtype, dim, v)
    if dtype != torch.bool:
        assert _same(torch.ops.comp_cpu.scatter_int(x, 1, index, 3), torch.scatter(x, 1, index, 3))
    with pytest.raises(RuntimeError):  # aten: index out of range
        torch.ops.comp_cpu.scatter(x, 1, torch.tensor([[7]]), 0.0)


def test_scatter_value_gradient_is_atens(ext_implicit) -> None:
    grads = []
    base = torch.randn(3, 4, dtype=torch.float64)
    index = torch.tensor([[0, 2, 1], [1, 0, 2]])
    for fn in (lambda t: torch.scatter(t, 1, index, 0.5), lambda t: torch.ops.comp_implicit.scatter(t, 1, index, 0.5)):
        x = base.clone().requires_grad_()
        (fn(x) * torch.arange(12, dtype=torch.float64).view(3, 4)).sum().backward()
        grads.append(x.grad)
    assert torch.equal(*grads)
def test_out_routes_need_libtorch_alone(gen, ext) -> None:
    """add.out, threshold.out, threshold_backward.grad_input, leaky_relu.out and threshold_ take the composition
    in the default build: the built extension references no aten C shim of theirs."""
    import pathlib
    ops = pathlib.Path(gen, "torch/csrc/stable/ops")
    for name in ("add_out", "threshold_backward_out", "leaky_relu_out", "threshold_out"):
        assert "shimgen::detail::assign_out(" in ops.joinpath(f"{name}.h").read_text(), name
    assert "shimgen::detail::saved_self(self, {})" in ops.joinpath("threshold_.h").read_text()
    assert "saved_self" not in ops.joinpath("add_.h").read_text()  # add_'s backward reads no self: no clone
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_aten_add_out" not in out and "_out" not in out.replace("aoti_torch_empty_strided", "")


def _out_call(fn, out, *args):
    """fn's outcome on out (values, dtype, shape, strides) and whether it returned out itself."""
    r = fn(*args, out)
    return r.data_ptr() == out.data_ptr(), out


@pytest.mark.parametrize("shape,other", [((4, 5), (4, 5)), ((4, 5), (5,)), ((2, 3, 4, 5), (5,))])
def test_add_out_is_exact_with_atens_resize_and_strides(ext, shape, other) -> None:
    x, o = _sample(shape, torch.float32, 1), _sample(other, torch.float32, 2)
    for layout in ("contiguous", "channels_last"):
        if layout == "channels_last":
            if len(shape) != 4:
                continue
            x = x.to(memory_format=torch.channels_last)
        for make_out in (lambda: torch.empty(shape), lambda: torch.empty(0), lambda: torch.zeros(7),
                         lambda: torch.empty(0, dtype=torch.float64),
                         lambda: torch.zeros(shape[::-1]).transpose(0, -1)):
            want, mine = make_out(), make_out()
            torch.add(x, o, alpha=0.5, out=want)
            same_tensor, _ = _out_call(torch.ops.comp_cpu.add_out, mine, x, o, 0.5)
            assert same_tensor and _same(mine, want) and mine.stride() == want.stride(), (layout, want.shape)
    if len(shape) == 4:  # a resized out gets the channels_last strides of the result, as aten's structured kernel
        out = torch.empty(0)
        torch.ops.comp_cpu.add_out(x, o, 1.0, out)
        assert out.is_contiguous(memory_format=torch.channels_last) and not out.is_contiguous()


def test_out_refuses_what_aten_refuses(ext) -> None:
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match=r"shimgen: add.out: the result's dtype cannot be cast to out's"):
        torch.ops.comp_cpu.add_out(x, x, 1.0, torch.zeros(3, dtype=torch.int64))
    with pytest.raises(RuntimeError):  # aten: result type Float can't be cast to the desired output type Long
        torch.add(x, x, out=torch.zeros(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"shimgen: leaky_relu.out: out's dtype differs from the result's"):
        torch.ops.comp_cpu.lrelu_out(x, 0.1, torch.zeros(3, dtype=torch.float64))
    base = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"shimgen: add.out: out shares memory with an input"):
        torch.ops.comp_cpu.add_out(base[:, :3], base[:, :3], 1.0, base[:, 1:])
    a = torch.randn(4, 5)
    want = a.clone()
    torch.add(want, want, alpha=2.0, out=want)  # out is self: aten computes in place, as the composition does
    assert torch.equal(torch.ops.comp_cpu.add_out(a, a, 2.0, a), want)
    g, s = torch.randn(4, 5), torch.randn(4, 5)
    want = torch.empty(0)
    torch.ops.aten.threshold_backward.grad_input(g, s, 0.1, grad_input=want)
    assert _same(torch.ops.comp_cpu.tb_out(g, s, 0.1, torch.empty(0)), want)


@pytest.mark.parametrize("who", ["self", "other", "out"])
def test_out_with_an_argument_requiring_grad_raises_in_grad_mode(ext, who) -> None:
    def args():
        return {k: torch.randn(3, dtype=torch.float64) for k in ("self", "other", "out")}

    v = args()
    v[who].requires_grad_()
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        torch.add(v["self"], v["other"], out=v["out"])
    with pytest.raises(RuntimeError, match=r"shimgen: add.out: functions with out=\.\.\. arguments don't support"):
        torch.ops.comp_cpu.add_out(v["self"], v["other"], 1.0, v["out"])
    with torch.no_grad():  # without grad mode aten computes, and so does the composition
        want = args()["out"]
        torch.add(v["self"], v["other"], out=want)
        got = args()["out"]
        torch.ops.comp_cpu.add_out(v["self"], v["other"], 1.0, got)
    assert torch.equal(want, got)


def test_threshold_inplace_gradients_need_the_saved_self(ext, ext_implicit) -> None:
    """threshold_'s backward reads the original self: the composition computes from a clone of it in grad mode
    (value 20 turns the masked elements positive, so a backward reading the overwritten self would differ)."""
    grads = []
    for fn in (lambda s: torch.ops.aten.threshold_(s, 0.0, 20.0), lambda s: torch.ops.comp_implicit.th_(s, 0.0, 20.0)):
        a = torch.randn(4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3), requires_grad=True)
        r = fn(a * 1)
        (r * torch.arange(20, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append((r.detach().clone(), a.grad.clone()))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])
    x = torch.randn(6)
    assert torch.equal(torch.ops.comp_cpu.th_(x.clone(), 0.1, -2.0), torch.ops.aten.threshold_(x.clone(), 0.1, -2.0))


def test_foreach_tensor_other_must_be_0_dim(ext) -> None:
    a, b = torch.randn(3), torch.randn(2)
    want = [a.clone(), b.clone()]
    torch._foreach_add_(want, torch.tensor(0.5))
    mine = [a.clone(), b.clone()]
    torch.ops.comp_cpu.fe_tensor(*mine, torch.tensor(0.5))
    assert all(torch.equal(p, q) for p, q in zip(mine, want))
    with pytest.raises(RuntimeError):  # aten: scalar tensor expected to be 0 dim
        torch._foreach_add_([a.clone(), b.clone()], torch.ones(3))
    with pytest.raises(RuntimeError, match="shimgen: _foreach_add_.Tensor: `other` must be a 0-dim tensor"):
        torch.ops.comp_cpu.fe_tensor(a.clone(), b.clone(), torch.ones(3))


# ---- kernels `arange_factory` / `range_factory`: aten's range factories as cumsum of [start, step, ...], decided per number ----

RANGE_CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;
using Dtype = std::optional<torch::headeronly::ScalarType>;

// a tensor argument (unused) so that the CPU kernel is dispatched to
Tensor k_arange_end(Tensor, int64_t e, Dtype d) { return ts::arange(e, d); }
Tensor k_arange_fend(Tensor, double e) { return ts::arange(e); }
Tensor k_arange_int(Tensor, int64_t s, int64_t e, int64_t st, Dtype d) { return ts::arange(s, e, st, d); }
Tensor k_arange_float(Tensor, double s, double e, double st, Dtype d) { return ts::arange(s, e, st, d); }
Tensor k_arange_mixed(Tensor, int64_t s, double e, int64_t st) { return ts::arange(s, e, st); }
Tensor k_arange_start(Tensor, double s, double e) { return ts::arange(s, e); }
Tensor k_range_float(Tensor, double s, double e, double st, Dtype d) { return ts::range(s, e, st, d); }
// range(s, e) alone is ambiguous between range.default and range.step (step=1), as in ATen's C++ API
Tensor k_range_int(Tensor, int64_t s, int64_t e) { return ts::range(s, e, Dtype()); }
Tensor k_arange_sparse(Tensor, int64_t e) { return ts::arange(e, std::nullopt, torch::headeronly::Layout::Sparse); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("arange_end(Tensor d, int e, ScalarType? dtype) -> Tensor");
  m.def("arange_fend(Tensor d, float e) -> Tensor");
  m.def("arange_int(Tensor d, int s, int e, int st, ScalarType? dtype) -> Tensor");
  m.def("arange_float(Tensor d, float s, float e, float st, ScalarType? dtype) -> Tensor");
  m.def("arange_mixed(Tensor d, int s, float e, int st) -> Tensor");
  m.def("arange_start(Tensor d, float s, float e) -> Tensor");
  m.def("range_float(Tensor d, float s, float e, float st, ScalarType? dtype) -> Tensor");
  m.def("range_int(Tensor d, int s, int e) -> Tensor");
  m.def("arange_sparse(Tensor d, int e) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CPU, m) {
  m.impl("arange_end", TORCH_BOX(&k_arange_end));
  m.impl("arange_fend", TORCH_BOX(&k_arange_fend));
  m.impl("arange_int", TORCH_BOX(&k_arange_int));
  m.impl("arange_float", TORCH_BOX(&k_arange_float));
  m.impl("arange_mixed", TORCH_BOX(&k_arange_mixed));
  m.impl("arange_start", TORCH_BOX(&k_arange_start));
  m.impl("range_float", TORCH_BOX(&k_range_float));
  m.impl("range_int", TORCH_BOX(&k_range_int));
  m.impl("arange_sparse", TORCH_BOX(&k_arange_sparse));
}
"""


@pytest.fixture(scope="module")
def ranges(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranges")
    files, _ = pipeline.generate(["arange", "range"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "ranges.cpp"
    src.write_text(RANGE_CALLS.replace("NS", "comp_ranges"))
    lib = str(root / "ranges.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone
    torch.ops.load_library(lib)
    return torch.ops.comp_ranges, lib


def _bit_same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal dtype, shape, strides and values, each zero's sign included."""
    return (a.dtype, a.shape, a.stride(), a.device) == (b.dtype, b.shape, b.stride(), b.device) and torch.equal(
        a, b) and (not a.is_floating_point() or torch.equal(a.signbit(), b.signbit()))


def test_arange_needs_libtorch_alone(ranges) -> None:
    _, lib = ranges
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_aten_arange" not in out and "aoti_torch_aten_range" not in out


@pytest.mark.parametrize("default", [torch.float32, torch.float64])
def test_arange_and_range_are_exact(ranges, default) -> None:
    ops, _ = ranges
    d = torch.zeros(1)
    old = torch.get_default_dtype()
    torch.set_default_dtype(default)
    try:
        assert _bit_same(ops.arange_end(d, 10, None), torch.arange(10))
        assert _bit_same(ops.arange_fend(d, 10.0), torch.arange(10.0))
        assert _bit_same(ops.arange_fend(d, 2.5), torch.arange(2.5))
        assert _bit_same(ops.arange_start(d, -3.0, 4.5), torch.arange(-3.0, 4.5))
        assert _bit_same(ops.arange_mixed(d, 1, 9.5, 2), torch.arange(1, 9.5, 2))
        for s, e, st in ((0, 10, 1), (5, -7, -3), (0, 300, 7), (-40000, 40001, 1), (0, 0, 1), (3, 4, 100)):
            for dtype in (None, torch.int64, torch.int32, torch.int8, torch.uint8, torch.float32, torch.float16,
                          torch.bfloat16, torch.float64):
                want = torch.arange(s, e, st, dtype=dtype)
                bits = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24}.get(dtype, 53)
                inexact = want.numel() and want.to(torch.float64).abs().max() >= 2**bits
                if inexact and dtype in (torch.float16, torch.bfloat16):  # float and double compute on the CPU
                    with pytest.raises(RuntimeError, match="not exact in the dtype"):
                        ops.arange_int(d, s, e, st, dtype)
                    continue
                assert _bit_same(ops.arange_int(d, s, e, st, dtype), want), (s, e, st, dtype)
        for s, e, st in ((0.0, 1.0, 0.25), (-2.0, 2.0, 0.5), (1.5, -700.5, -1.0), (0.0, 0.5, 0.75), (0.5, 5.5, 1.5)):
            # (int64 from fractions is refused: releases size it in integers or in double)
            for dtype in (None, torch.float32, torch.float64, torch.float16, torch.int32):
                if dtype == torch.int32 and abs(st) < 1:  # int64 accumulates a step of 0
                    with pytest.raises(RuntimeError, match="which disagree here"):
                        ops.arange_float(d, s, e, st, dtype)
                    continue
                want = torch.arange(s, e, st, dtype=dtype)
                assert _bit_same(ops.arange_float(d, s, e, st, dtype), want), (s, e, st, dtype)
                if dtype is None or dtype.is_floating_point:  # an int range of fractions: releases size it apart
                    want = torch.ops.aten.range.step(s, e, st, dtype=dtype)
                    assert _bit_same(ops.range_float(d, s, e, st, dtype), want), (s, e, st, dtype)
        assert _bit_same(ops.range_int(d, -2, 5), torch.ops.aten.range.default(-2, 5))
    finally:
        torch.set_default_dtype(old)


def test_arange_raises_where_aten_raises_and_refuses_what_it_cannot_give_exactly(ranges) -> None:
    ops, _ = ranges
    d = torch.zeros(1)
    for s, e, st in ((0.0, 1.0, 0.0), (0.0, 1.0, -1.0), (0.0, float("nan"), 1.0), (0.0, float("inf"), 1.0)):
        with pytest.raises(RuntimeError):
            torch.arange(s, e, st)
        with pytest.raises(RuntimeError, match="aten raises"):
            ops.arange_float(d, s, e, st, None)
    with pytest.raises(RuntimeError):
        torch.arange(0, 1, 0.25, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="shimgen: arange.start_step"):
        ops.arange_float(d, 0.0, 1.0, 0.25, torch.bool)
    # aten's vectorized kernel rounds a 0.1 range its own way: on the CPU, float and double compute as that kernel
    # (tests/test_arange_cpu.py); float16 and bfloat16, whose vector rounding differs between releases, are refused
    assert _bit_same(ops.arange_float(d, 0.0, 1.0, 0.1, None), torch.arange(0.0, 1.0, 0.1))
    assert _bit_same(ops.arange_float(d, 16777216.0 + 8, 16777216.0 - 100, -1.0, torch.float32),
                     torch.arange(16777216.0 + 8, 16777216.0 - 100, -1.0, dtype=torch.float32))  # beyond 2^24
    with pytest.raises(RuntimeError, match=r"shimgen: arange.start_step: step=0.1.*SHIMGEN_OVERLAY"):
        ops.arange_float(d, 0.0, 1.0, 0.1, torch.bfloat16)
    with pytest.raises(RuntimeError, match="shimgen: arange.start_step: step="):  # beyond float16's 2^11
        ops.arange_float(d, 2048.0 + 8, 2048.0 - 100, -1.0, torch.float16)
    with pytest.raises(RuntimeError, match="shimgen: arange.start_step: step=.*in integers or in double"):
        ops.arange_float(d, 0.5, 5.5, 1.5, torch.int64)
    with pytest.raises(RuntimeError, match="shimgen: range.step: step="):  # aten's first element is -0.0
        ops.range_float(d, -0.0, -3.0, -1.0, None)
    with pytest.raises(RuntimeError, match="shimgen: arange.default: .*strided"):
        ops.arange_sparse(d, 5)


# ---- kernel `number_as_none`: linalg_vector_norm with ord=2 as linalg_norm with ord None ----

NORM_CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_norm(Tensor x) { return ts::linalg_vector_norm(x); }
Tensor k_norm_int(Tensor x, int64_t ord, int64_t dim, bool keepdim) { return ts::linalg_vector_norm(x, ord, {dim}, keepdim); }
Tensor k_norm_float(Tensor x, double ord) { return ts::linalg_vector_norm(x, ord, {0, 1}); }
Tensor k_norm_dtype(Tensor x) { return ts::linalg_vector_norm(x, 2, std::nullopt, false, torch::headeronly::ScalarType::Double); }
Tensor k_norm_3d(Tensor x) { return ts::linalg_vector_norm(x, 2, {0, 1, 2}); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("norm(Tensor x) -> Tensor");
  m.def("norm_int(Tensor x, int ord, int dim, bool keepdim) -> Tensor");
  m.def("norm_float(Tensor x, float ord) -> Tensor");
  m.def("norm_dtype(Tensor x) -> Tensor");
  m.def("norm_3d(Tensor x) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("norm_int", TORCH_BOX(&k_norm_int));
  m.impl("norm_float", TORCH_BOX(&k_norm_float));
  m.impl("norm_dtype", TORCH_BOX(&k_norm_dtype));
  m.impl("norm_3d", TORCH_BOX(&k_norm_3d));
}
"""


@pytest.fixture(scope="module")
def norms(tmp_path_factory):
    root = tmp_path_factory.mktemp("norms")
    files, _ = pipeline.generate(["linalg_vector_norm"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "norms.cpp"
    src.write_text(NORM_CALLS.replace("NS", "comp_norms"))
    lib = str(root / "norms.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone
    torch.ops.load_library(lib)
    return torch.ops.comp_norms, lib


def test_vector_norm_needs_libtorch_alone(norms) -> None:
    _, lib = norms
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_aten_linalg" not in out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64])
def test_vector_norm_ord_2_is_exact_with_its_gradient(norms, dtype) -> None:
    ops, _ = norms
    x = _sample((6, 9), torch.float64, 3).nan_to_num(0.0, 4.0, -4.0).to(dtype)
    x[1] = 0  # a zero row: the 2-norm's gradient there
    assert _same(ops.norm(x), torch.linalg.vector_norm(x))
    for dim, keepdim in ((0, False), (1, True), (-1, False)):
        assert _same(ops.norm_int(x, 2, dim, keepdim), torch.linalg.vector_norm(x, 2, [dim], keepdim))
    assert _same(ops.norm_float(x, 2.0), torch.linalg.vector_norm(x, 2.0, [0, 1]))
    if not dtype.is_complex:
        y = x.to(torch.float32)
        assert _same(ops.norm_dtype(y), torch.linalg.vector_norm(y, dtype=torch.float64))
    if dtype in (torch.float64, torch.complex64):
        grads = []
        for fn in (lambda t: ops.norm_int(t, 2, 1, False), lambda t: torch.linalg.vector_norm(t, 2, [1])):
            leaf = x.clone().requires_grad_()
            (fn(leaf) * torch.arange(6)).sum().backward()
            grads.append(leaf.grad)
        assert _same(*grads)


def test_vector_norm_computes_other_ords_on_the_cpu_and_refuses_the_rest_naming_the_remedy(norms) -> None:
    ops, _ = norms
    x = torch.randn(3, 4)
    # aten's CPU kernel replicated (kernel section vector_norm_cpu; tests/test_vector_norm_cpu.py on each runtime)
    assert _same(ops.norm_int(x, 1, 1, False), torch.linalg.vector_norm(x, 1, [1]))
    assert _same(ops.norm_float(x, float("inf")), torch.linalg.vector_norm(x, float("inf"), [0, 1]))
    assert _same(ops.norm_float(x, 3.0), torch.linalg.vector_norm(x, 3.0, [0, 1]))
    assert _same(ops.norm_float(x.half(), 3.0), torch.linalg.vector_norm(x.half(), 3.0, [0, 1]))
    with pytest.raises(RuntimeError, match=r"shimgen: linalg_vector_norm.default: ord=3.*: no libtorch route .*"
                                           r"not a floating CPU one.*SHIMGEN_OVERLAY"):
        ops.norm_float(x.to(torch.complex64), 3.0)
    with pytest.raises(RuntimeError, match=r"shimgen: linalg_vector_norm.default: ord=1: .*autograd would record"):
        ops.norm_int(x.clone().requires_grad_(), 1, 1, False)
    with pytest.raises(RuntimeError, match="`dim` of 1 or 2 dims only"):
        ops.norm_3d(torch.randn(2, 3, 4))


# ---- softshrink, the shrink / hardtanh backward kernels, and the out= / in-place rows over hardtanh and
# hardshrink (kernels `softshrink`, `shrink_grad`, `hardtanh_backward`; rows of kernels `out`, `inplace`) ----

SHRINK_CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_ss(Tensor x, double l) { return ts::softshrink(x, l); }
Tensor k_ss_default(Tensor x) { return ts::softshrink(x); }
Tensor k_ss_out(Tensor x, double l, Tensor out) {
  ts::softshrink_out(out, x, l);
  return out;
}
Tensor k_ssb(Tensor g, Tensor x, double l) { return ts::softshrink_backward(g, x, l); }
Tensor k_hsb(Tensor g, Tensor x, double l) { return ts::hardshrink_backward(g, x, l); }
Tensor k_hsb_out(Tensor g, Tensor x, double l, Tensor out) {
  ts::hardshrink_backward_out(out, g, x, l);
  return out;
}
Tensor k_htb(Tensor g, Tensor x, double lo, double hi) { return ts::hardtanh_backward(g, x, lo, hi); }
Tensor k_ht_(Tensor x, double lo, double hi) { return ts::hardtanh_(x, lo, hi); }
Tensor k_ht_out(Tensor x, double lo, double hi, Tensor out) {
  ts::hardtanh_out(out, x, lo, hi);
  return out;
}
Tensor k_hs_out(Tensor x, double l, Tensor out) {
  ts::hardshrink_out(out, x, l);
  return out;
}
Tensor k_scatter_(Tensor x, int64_t dim, Tensor index, double v) { return ts::scatter_(x, dim, index, v); }
Tensor k_scatter_out(Tensor x, int64_t dim, Tensor index, double v, Tensor out) {
  ts::scatter_out(out, x, dim, index, v);
  return out;
}
Tensor k_isin(Tensor e, double n, bool invert) { return ts::isin(e, shimgen::Scalar(n), false, invert); }
Tensor k_isin_int(Tensor e, int64_t n) { return ts::isin(e, shimgen::Scalar(n)); }
Tensor k_isin_bool(Tensor e, bool n) { return ts::isin(e, shimgen::Scalar(n)); }
Tensor k_isin_out(Tensor e, double n, Tensor out) {
  ts::isin_out(out, e, shimgen::Scalar(n));
  return out;
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("ss(Tensor x, float l) -> Tensor");
  m.def("ss_default(Tensor x) -> Tensor");
  m.def("ss_out(Tensor x, float l, Tensor(a!) out) -> Tensor(a!)");
  m.def("ssb(Tensor g, Tensor x, float l) -> Tensor");
  m.def("hsb(Tensor g, Tensor x, float l) -> Tensor");
  m.def("hsb_out(Tensor g, Tensor x, float l, Tensor(a!) out) -> Tensor(a!)");
  m.def("htb(Tensor g, Tensor x, float lo, float hi) -> Tensor");
  m.def("ht_(Tensor(a!) x, float lo, float hi) -> Tensor(a!)");
  m.def("ht_out(Tensor x, float lo, float hi, Tensor(a!) out) -> Tensor(a!)");
  m.def("hs_out(Tensor x, float l, Tensor(a!) out) -> Tensor(a!)");
  m.def("scatter_(Tensor(a!) x, int dim, Tensor index, float v) -> Tensor(a!)");
  m.def("scatter_out(Tensor x, int dim, Tensor index, float v, Tensor(a!) out) -> Tensor(a!)");
  m.def("isin(Tensor e, float n, bool invert) -> Tensor");
  m.def("isin_int(Tensor e, int n) -> Tensor");
  m.def("isin_bool(Tensor e, bool n) -> Tensor");
  m.def("isin_out(Tensor e, float n, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("ss", TORCH_BOX(&k_ss));
  m.impl("ss_default", TORCH_BOX(&k_ss_default));
  m.impl("ss_out", TORCH_BOX(&k_ss_out));
  m.impl("ssb", TORCH_BOX(&k_ssb));
  m.impl("hsb", TORCH_BOX(&k_hsb));
  m.impl("hsb_out", TORCH_BOX(&k_hsb_out));
  m.impl("htb", TORCH_BOX(&k_htb));
  m.impl("ht_", TORCH_BOX(&k_ht_));
  m.impl("ht_out", TORCH_BOX(&k_ht_out));
  m.impl("hs_out", TORCH_BOX(&k_hs_out));
  m.impl("scatter_", TORCH_BOX(&k_scatter_));
  m.impl("scatter_out", TORCH_BOX(&k_scatter_out));
  m.impl("isin", TORCH_BOX(&k_isin));
  m.impl("isin_int", TORCH_BOX(&k_isin_int));
  m.impl("isin_bool", TORCH_BOX(&k_isin_bool));
  m.impl("isin_out", TORCH_BOX(&k_isin_out));
}
"""


@pytest.fixture(scope="module")
def shrink_gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("shrink") / "gen")
    files, _ = pipeline.generate(["softshrink", "softshrink_backward", "hardshrink_backward", "hardtanh_backward",
                                     "hardtanh", "hardtanh_", "hardshrink", "sub", "isin", "scatter", "scatter_"],
                                    None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build_shrink(gen: str, root, ns: str, key: str) -> str:
    src = root / f"{ns}.cpp"
    src.write_text(SHRINK_CALLS.replace("NS", ns).replace("KEY", key))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)
    return lib


@pytest.fixture(scope="module")
def shrink_ext(shrink_gen, tmp_path_factory) -> str:
    return _build_shrink(shrink_gen, tmp_path_factory.mktemp("shrink_cpu"), "shrink_cpu", "CPU")


@pytest.fixture(scope="module")
def shrink_implicit(shrink_gen, tmp_path_factory) -> str:
    return _build_shrink(shrink_gen, tmp_path_factory.mktemp("shrink_implicit"), "shrink_implicit",
                         "CompositeImplicitAutograd")


FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _no_nan(t: torch.Tensor) -> torch.Tensor:
    return t.nan_to_num(0.25, float("inf"), float("-inf"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_softshrink_is_exact(shrink_ext, dtype) -> None:
    """(6, 40): aten's vectorized body and scalar tail, NaN in both; on and next to +-lambd."""
    x = _sample((6, 40), dtype, 7)
    x.view(-1)[5:11] = torch.tensor([0.5, -0.5, 0.25, -0.25, 0.5000001, -0.4999999], dtype=torch.float64).to(dtype)
    x.view(-1)[-1] = float("nan")
    for lambd in (0.5, 0.25, 0.0, 3.0) + ((0.1, 1e-3) if dtype in (torch.float32, torch.float64) else ()):
        assert _same(torch.ops.shrink_cpu.ss(x, lambd), torch.ops.aten.softshrink(x, lambd)), (dtype, lambd)
    assert _same(torch.ops.shrink_cpu.ss_default(x), torch.ops.aten.softshrink(x))


def test_softshrink_refuses_what_no_one_composition_computes(shrink_ext) -> None:
    """half/bfloat16 with a lambd they do not hold: aten's kernel rounds it to self's dtype from 2.14 and used it as a
    float before (measured: softshrink(bfloat16 0.1182, 0.1) is 0.018188 on 2.9-2.13, 0.018066 from 2.14)."""
    for dtype in (torch.bfloat16, torch.float16):
        with pytest.raises(RuntimeError, match=r"shimgen: softshrink.default: lambd=0.1\d*: half and bfloat16 do not"):
            torch.ops.shrink_cpu.ss(torch.ones(3, dtype=dtype), 0.1)
    with pytest.raises(RuntimeError):
        torch.ops.aten.softshrink(torch.ones(3), -1.0)  # aten: lambda must be greater or equal to 0
    with pytest.raises(RuntimeError, match=r"shimgen: softshrink.default: lambda must be greater or equal to 0"):
        torch.ops.shrink_cpu.ss(torch.ones(3), -1.0)
    with pytest.raises(RuntimeError, match=r"shimgen: softshrink.default: aten has no kernel for this dtype"):
        torch.ops.shrink_cpu.ss(torch.ones(3, dtype=torch.int64), 0.5)
    with pytest.raises(RuntimeError, match=r"shimgen: softshrink.default: lambd=1\S*: out of the range"):
        torch.ops.shrink_cpu.ss(torch.ones(3, dtype=torch.float16), 1e10)  # aten (2.10+): lambda must be in range


@pytest.mark.parametrize("dg,ds", list(itertools.product(FLOATS, FLOATS)))
def test_shrink_and_hardtanh_backward_are_exact(shrink_ext, dg, ds) -> None:
    """No NaN in self (refused, below); mixed dtypes promote; (6, 40) reaches the vectorized body."""
    for shapes in (((6, 40), (6, 40)), ((6, 40), ()), ((), (3,))):
        g, x = _sample(shapes[0], dg, 1), _no_nan(_sample(shapes[1], ds, 2))
        if x.dim() == 2:
            x.view(-1)[5:9] = torch.tensor([0.5, -0.5, 1.0, -1.0]).to(ds)  # on the bounds
        for lambd in (0.5, 0.0, 1.0, 0.1):
            want = torch.ops.aten.softshrink_backward(g, x, lambd)
            assert _same(torch.ops.shrink_cpu.ssb(g, x, lambd), want), (dg, ds, shapes, lambd)
            want = torch.ops.aten.hardshrink_backward(g, x, lambd)
            assert _same(torch.ops.shrink_cpu.hsb(g, x, lambd), want), (dg, ds, shapes, lambd)
        for lo, hi in ((-1.0, 1.0), (0.0, 6.0), (-0.1, 0.3)):
            want = torch.ops.aten.hardtanh_backward(g, x, lo, hi)
            assert _same(torch.ops.shrink_cpu.htb(g, x, lo, hi), want), (dg, ds, shapes, lo, hi)


def test_backward_kernels_refuse_a_nan_self(shrink_ext) -> None:
    """aten's answer at a NaN self depends on the element's position (0 in the vectorized body, grad_output in the
    scalar tail): measured here, then refused by the composition."""
    g, x = torch.ones(37), torch.full((37,), float("nan"))
    got = torch.ops.aten.hardshrink_backward(g, x, 0.5)
    assert got[0] == 0 and got[-1] == 1  # the body and the tail of one call differ
    for call in (lambda: torch.ops.shrink_cpu.ssb(g, x, 0.5), lambda: torch.ops.shrink_cpu.hsb(g, x, 0.5),
                 lambda: torch.ops.shrink_cpu.htb(g, x, -1.0, 1.0)):
        with pytest.raises(RuntimeError, match=r"shimgen: \w+_backward.default: self holds a NaN"):
            call()


def test_softshrink_gradients_are_atens(shrink_implicit) -> None:
    """float64, on the bounds and beyond (at a NaN aten's own backward answers by position: not compared)."""
    x = torch.randn(6, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(5)) * 2
    x.view(-1)[:6] = torch.tensor([0.5, -0.5, 0.0, -0.0, float("inf"), float("-inf")], dtype=torch.float64)
    w = torch.arange(240, dtype=torch.float64).view(6, 40)
    grads = []
    for fn in (lambda t: torch.ops.aten.softshrink(t, 0.5), lambda t: torch.ops.shrink_implicit.ss(t, 0.5)):
        xl = x.clone().requires_grad_()
        (fn(xl) * w).sum().backward()
        grads.append(xl.grad)
    assert torch.equal(*grads)
    g = torch.randn(6, 40, dtype=torch.float64)
    grads = []  # the backward ops' own gradients: grad_output's is the op again, self's is zeros
    for fn in (torch.ops.aten.hardshrink_backward, torch.ops.shrink_implicit.hsb):
        gl, xl = g.clone().requires_grad_(), x.clone().requires_grad_()
        (fn(gl, xl, 0.5) * w).sum().backward()
        grads.append((gl.grad, xl.grad if xl.grad is not None else torch.zeros_like(xl)))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


def test_shrink_hardtanh_out_and_inplace_are_atens(shrink_ext, shrink_implicit) -> None:
    x = _sample((6, 40), torch.float32, 9)
    for make_out in (lambda: torch.empty(6, 40), lambda: torch.empty(0),
                     lambda: torch.zeros(6, 40).t().contiguous().t()):
        for mine_fn, want_fn in (
                (lambda o: torch.ops.shrink_cpu.ss_out(x, 0.5, o),
                 lambda o: torch.ops.aten.softshrink.out(x, 0.5, out=o)),
                (lambda o: torch.ops.shrink_cpu.ht_out(x, -1.0, 2.0, o),
                 lambda o: torch.ops.aten.hardtanh.out(x, -1.0, 2.0, out=o)),
                (lambda o: torch.ops.shrink_cpu.hs_out(x, 0.5, o),
                 lambda o: torch.ops.aten.hardshrink.out(x, 0.5, out=o))):
            mine, want = make_out(), make_out()
            assert mine_fn(mine).data_ptr() == mine.data_ptr()
            want_fn(want)
            assert _same(mine, want) and mine.stride() == want.stride()
    g, xs = torch.randn(6, 40), _no_nan(x)
    mine, want = torch.empty(0), torch.empty(0)
    torch.ops.shrink_cpu.hsb_out(g, xs, 0.5, mine)
    torch.ops.aten.hardshrink_backward.grad_input(g, xs, 0.5, grad_input=want)
    assert _same(mine, want)
    for op in (lambda o: torch.ops.shrink_cpu.ss_out(x, 0.5, o), lambda o: torch.ops.shrink_cpu.ht_out(x, -1.0, 1.0, o),
               lambda o: torch.ops.shrink_cpu.hs_out(x, 0.5, o)):  # unary ops: out's dtype must be the result's
        with pytest.raises(RuntimeError, match=r"shimgen: \w+.out: out's dtype differs from the result's"):
            op(torch.zeros(6, 40, dtype=torch.float64))
    assert _same(torch.ops.shrink_cpu.ht_(x.clone(), -1.0, 2.0), torch.ops.aten.hardtanh_(x.clone(), -1.0, 2.0))
    grads = []  # hardtanh_ on a non-leaf: the composition's backward is hardtanh's
    for fn in (lambda s: torch.ops.aten.hardtanh_(s, -1.0, 1.0), lambda s: torch.ops.shrink_implicit.ht_(s, -1.0, 1.0)):
        a = torch.randn(4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3), requires_grad=True)
        (fn(a * 2) * torch.arange(20, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append(a.grad)
    assert torch.equal(*grads)


def test_shrink_extension_needs_libtorch_alone(shrink_gen, shrink_ext) -> None:
    import pathlib
    ops = pathlib.Path(shrink_gen, "torch/csrc/stable/ops")
    assert "shimgen::detail::softshrink_select(" in ops.joinpath("softshrink.h").read_text()
    assert "shimgen::detail::shrink_grad_select(" in ops.joinpath("hardshrink_backward.h").read_text()
    assert "shimgen::detail::hardtanh_backward_select(" in ops.joinpath("hardtanh_backward.h").read_text()
    out = subprocess.run(["nm", "-D", "--undefined-only", shrink_ext], capture_output=True, text=True,
                         check=True).stdout
    for name in ("softshrink", "shrink_backward", "hardtanh", "hardshrink", "aoti_torch_aten_sub_Tensor"):
        assert name not in out, name


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32,
                                   torch.uint8, torch.int8])
def test_isin_number_is_atens(shrink_ext, dtype) -> None:
    """aten computes isin(elements, number) as eq/ne with the number wrapped: the composition is isin.Tensor_Tensor
    with the number as a 0-dim tensor of that wrapped dtype (an int64 tensor and 2.5 compare in float32; 16777217
    rounds there)."""
    e = torch.tensor([0, 1, 3, 16777216, 16777217, -2]).to(dtype) if dtype != torch.uint8 else torch.arange(6,
                                                                                                          dtype=dtype)
    for n in (1.0, 2.5, -2.0) + ((16777217.0,) if dtype != torch.float16 else ()):  # no half holds it: refused
        for invert in (False, True):
            assert _same(torch.ops.shrink_cpu.isin(e, n, invert), torch.isin(e, n, invert=invert)), (dtype, n, invert)
    assert _same(torch.ops.shrink_cpu.isin_int(e, 3), torch.isin(e, 3))
    mine, want = torch.empty(0, dtype=torch.bool), torch.empty(0, dtype=torch.bool)
    torch.ops.shrink_cpu.isin_out(e, 3.0, mine)
    torch.isin(e, 3.0, out=want)
    assert _same(mine, want)


def test_isin_number_refuses_what_aten_refuses(shrink_ext) -> None:
    e = torch.tensor([0, 1, 2])
    with pytest.raises(RuntimeError):  # aten: Unsupported input type encountered for isin(): Bool
        torch.isin(e, True)
    with pytest.raises(RuntimeError, match=r"shimgen: isin.Tensor_Scalar: test_element=.*bool or complex"):
        torch.ops.shrink_cpu.isin_bool(e, True)
    with pytest.raises(RuntimeError, match=r"shimgen: isin.Tensor_Scalar: test_element=nan: out of the range"):
        torch.ops.shrink_cpu.isin(e.float(), float("nan"), False)  # a wrapped NaN: the in_range rule of the kind
    e16 = e.to(torch.uint16)  # aten computes it (eq); isin.Tensor_Tensor's kernel has no uint16: refused
    assert torch.isin(e16, 1).tolist() == [False, True, False]
    with pytest.raises(RuntimeError, match=r"shimgen: isin.Tensor_Scalar: aten::isin.Tensor_Tensor has no kernel"):
        torch.ops.shrink_cpu.isin_int(e16, 1)
    with pytest.raises(RuntimeError, match=r"shimgen: isin.Tensor_Scalar_out: out's dtype differs"):
        torch.ops.shrink_cpu.isin_out(e, 1.0, torch.empty(3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_scatter_value_out_and_inplace_are_atens(shrink_ext, shrink_implicit, dtype) -> None:
    x = _sample((3, 4), dtype, 6)
    index = torch.tensor([[0, 2, 1], [1, 0, 2]])
    for dim, v in ((1, 0.0), (0, 1.0), (-1, -2.0)):
        assert _same(torch.ops.shrink_cpu.scatter_(x.clone(), dim, index, v), x.clone().scatter_(dim, index, v))
        for make_out in (lambda: torch.empty(3, 4, dtype=dtype), lambda: torch.empty(0, dtype=dtype)):
            mine, want = make_out(), make_out()
            assert torch.ops.shrink_cpu.scatter_out(x, dim, index, v, mine).data_ptr() == mine.data_ptr()
            torch.scatter(x, dim, index, v, out=want)
            assert _same(mine, want) and mine.stride() == want.stride(), (dtype, dim, v)
    with pytest.raises(RuntimeError, match=r"shimgen: scatter.value_out: out's dtype differs from the result's"):
        torch.ops.shrink_cpu.scatter_out(x, 1, index, 0.0, torch.empty(3, 4, dtype=torch.complex64))
    with pytest.raises(RuntimeError):  # aten: index out of range
        torch.ops.shrink_cpu.scatter_(x.clone(), 1, torch.tensor([[7]]), 0.0)
    if dtype == torch.float64:  # scatter_ on a non-leaf: the gradient of self is aten's (zero where written)
        grads = []
        for fn in (lambda s: s.scatter_(1, index, 0.5), lambda s: torch.ops.shrink_implicit.scatter_(s, 1, index, 0.5)):
            a = x.clone().requires_grad_()
            (fn(a * 1) * torch.arange(12, dtype=torch.float64).view(3, 4)).sum().backward()
            grads.append(a.grad)
        assert torch.equal(*grads)


def test_backward_kernels_raise_atens_broadcast_error(shrink_ext) -> None:
    """Mismatched shapes: aten's TensorIterator names grad_output `a` and self `b`; the kernels check the shapes in
    that order first (scalar.h check_broadcast), since their own calls meet the operands the other way round (the
    release matrix found the swapped message)."""
    g, x = torch.randn(7), torch.randn(2, 3)
    ops, aten = torch.ops.shrink_cpu, torch.ops.aten
    for mine, theirs in ((lambda: ops.hsb(g, x, 0.5), lambda: aten.hardshrink_backward(g, x, 0.5)),
                         (lambda: ops.ssb(g, x, 0.5), lambda: aten.softshrink_backward(g, x, 0.5)),
                         (lambda: ops.htb(g, x, -1.0, 1.0), lambda: aten.hardtanh_backward(g, x, -1.0, 1.0))):
        with pytest.raises(RuntimeError) as want:
            theirs()
        with pytest.raises(RuntimeError) as got:
            mine()
        assert str(want.value).splitlines()[0] in str(got.value)
