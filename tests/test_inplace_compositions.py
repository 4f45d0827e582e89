"""In-place kernel compositions whose autograd aten handles in its own way (data/scalar_facts.yaml
`kernel_compositions`, shimgen/generate/routes/composition.py), in an extension linked with libtorch alone:

- `backward_raises`: leaky_relu_ with a negative slope and _foreach_maximum_/_minimum_ (no derivative) record a
  backward aten raises for; the composition refuses the call where autograd records it, computes it otherwise.
- rrelu, rrelu_, rrelu_with_noise (.default/.out/_) and rrelu_with_noise_backward in eval mode: leaky_relu (and its
  in-place, out= and backward) with the slope (lower + upper) / 2; training=true refused (random slopes).
- linalg_vector_norm.out: the served functional overload, then aten's out= rules.
- addmm_ over addmm.default (`refuse_aliased`, `refuse_strides`, `autograd: refused`): aten's values for a
  contiguous self not sharing memory with mat1/mat2; aten's in-place error on a leaf requiring grad; a `shimgen:`
  refusal where self aliases an input (aten reads the overwritten self), is laid out otherwise (aten rounds in
  self's layout), or autograd records the call (addmm.default's legacy out= shim).

Registered as CompositeImplicitAutograd, autograd sees the composition's own aten calls, as a real extension's
caller does."""

from __future__ import annotations

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

Tensor k_lrelu_(Tensor x, double n) { return ts::leaky_relu_(x, n); }
void k_fmax_(Tensor a, Tensor b, double n) {
  std::vector<Tensor> s{a, b};
  ts::_foreach_maximum_(s, shimgen::Scalar(n));
}
void k_fmin_list_(Tensor a, Tensor b, double n) {
  std::vector<Tensor> s{a, b};
  std::vector<double> v{n, -n};
  ts::_foreach_minimum_(s, v);
}
Tensor k_addmm_(Tensor s, Tensor m1, Tensor m2, double beta, double alpha) {
  return ts::addmm_(s, m1, m2, beta, alpha);
}
Tensor k_rrelu(Tensor x, double l, double u, bool training) { return ts::rrelu(x, l, u, training); }
Tensor k_rrelu_default(Tensor x) { return ts::rrelu(x); }
Tensor k_rrelu_int(Tensor x, int64_t l, int64_t u) { return ts::rrelu(x, l, u); }
Tensor k_rrelu_(Tensor x, double l, double u) { return ts::rrelu_(x, l, u); }
Tensor k_rwn(Tensor x, Tensor noise, double l, double u) { return ts::rrelu_with_noise(x, noise, l, u); }
Tensor k_rwn_(Tensor x, Tensor noise, double l, double u) { return ts::rrelu_with_noise_(x, noise, l, u); }
Tensor k_rwn_out(Tensor x, Tensor noise, double l, double u, Tensor out) {
  ts::rrelu_with_noise_out(out, x, noise, l, u);
  return out;
}
Tensor k_vn_out(Tensor x, Tensor out) {
  ts::linalg_vector_norm_out(out, x);
  return out;
}
Tensor k_vn_out_dim(Tensor x, int64_t d, bool keepdim, Tensor out) {
  std::vector<int64_t> dims{d};
  ts::linalg_vector_norm_out(out, x, 2, dims, keepdim);
  return out;
}
Tensor k_vn_out_ord(Tensor x, double ord, Tensor out) {
  ts::linalg_vector_norm_out(out, x, ord);
  return out;
}
Tensor k_rwn_bw(Tensor g, Tensor x, Tensor noise, double l, double u, bool training, bool is_result) {
  return ts::rrelu_with_noise_backward(g, x, noise, l, u, training, is_result);
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("lrelu_(Tensor(a!) x, float n) -> Tensor(a!)");
  m.def("fmax_(Tensor(a!) a, Tensor(b!) b, float n) -> ()");
  m.def("fmin_list_(Tensor(a!) a, Tensor(b!) b, float n) -> ()");
  m.def("addmm_(Tensor(a!) s, Tensor m1, Tensor m2, float beta, float alpha) -> Tensor(a!)");
  m.def("rrelu(Tensor x, float l, float u, bool training) -> Tensor");
  m.def("rrelu_default(Tensor x) -> Tensor");
  m.def("rrelu_int(Tensor x, int l, int u) -> Tensor");
  m.def("rrelu_(Tensor(a!) x, float l, float u) -> Tensor(a!)");
  m.def("rwn(Tensor x, Tensor noise, float l, float u) -> Tensor");
  m.def("rwn_(Tensor(a!) x, Tensor noise, float l, float u) -> Tensor(a!)");
  m.def("rwn_out(Tensor x, Tensor noise, float l, float u, Tensor(a!) out) -> Tensor(a!)");
  m.def("vn_out(Tensor x, Tensor(a!) out) -> Tensor(a!)");
  m.def("vn_out_dim(Tensor x, int d, bool keepdim, Tensor(a!) out) -> Tensor(a!)");
  m.def("vn_out_ord(Tensor x, float ord, Tensor(a!) out) -> Tensor(a!)");
  m.def("rwn_bw(Tensor g, Tensor x, Tensor noise, float l, float u, bool training, bool is_result) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("lrelu_", TORCH_BOX(&k_lrelu_));
  m.impl("fmax_", TORCH_BOX(&k_fmax_));
  m.impl("fmin_list_", TORCH_BOX(&k_fmin_list_));
  m.impl("addmm_", TORCH_BOX(&k_addmm_));
  m.impl("rrelu", TORCH_BOX(&k_rrelu));
  m.impl("rrelu_default", TORCH_BOX(&k_rrelu_default));
  m.impl("rrelu_int", TORCH_BOX(&k_rrelu_int));
  m.impl("rrelu_", TORCH_BOX(&k_rrelu_));
  m.impl("rwn", TORCH_BOX(&k_rwn));
  m.impl("rwn_", TORCH_BOX(&k_rwn_));
  m.impl("rwn_out", TORCH_BOX(&k_rwn_out));
  m.impl("vn_out", TORCH_BOX(&k_vn_out));
  m.impl("vn_out_dim", TORCH_BOX(&k_vn_out_dim));
  m.impl("vn_out_ord", TORCH_BOX(&k_vn_out_ord));
  m.impl("rwn_bw", TORCH_BOX(&k_rwn_bw));
}
"""

OPS = ["leaky_relu_", "leaky_relu", "_foreach_maximum_", "_foreach_minimum_", "clamp_min_", "clamp_max_", "addmm_",
       "addmm", "rrelu", "rrelu_", "rrelu_with_noise", "rrelu_with_noise_", "rrelu_with_noise_backward",
       "leaky_relu_backward", "linalg_vector_norm", "linalg_norm"]


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("inplace") / "gen")
    files, _ = pipeline.generate(OPS, None, None, out, only=True)
    pipeline.write(out, files)
    return out


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("inplace_ext")
    src = root / "inplace_implicit.cpp"
    src.write_text(CALLS.replace("NS", "inplace_implicit").replace("KEY", "CompositeImplicitAutograd"))
    lib = str(root / "inplace_implicit.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)
    return lib


OPS_NS = lambda: torch.ops.inplace_implicit  # noqa: E731


def _x(shape=(4, 5), dtype=torch.float64, seed=0) -> torch.Tensor:
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
    t.view(-1)[:3] = torch.tensor([float("nan"), -0.0, float("-inf")])
    return t.to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


def test_extension_needs_libtorch_alone(ext) -> None:
    undefined = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True,
                               check=True).stdout
    assert "aoti_torch_aten_" not in undefined and "shimgen_overlay" not in undefined


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("slope", [0.01, -0.5, 0.0])
def test_leaky_relu_inplace_values_are_atens(ext, dtype, slope) -> None:
    want, mine = _x(dtype=dtype), _x(dtype=dtype)
    torch.ops.aten.leaky_relu_(want, slope)
    OPS_NS().lrelu_(mine, slope)
    assert _same(mine, want)


def test_leaky_relu_inplace_negative_slope_refused_where_autograd_records_it(ext) -> None:
    """aten's forward records a backward that raises (from the result, with a negative slope); the composition
    would differentiate it, so it refuses, naming the remedy. A non-negative slope: aten's gradient."""
    leaf = _x().requires_grad_()
    r = torch.ops.aten.leaky_relu_(leaf * 1, -0.5)
    with pytest.raises(RuntimeError, match="negative slope"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match="shimgen: leaky_relu_.default: with negative_slope < 0 .*SHIMGEN_OVERLAY"):
        OPS_NS().lrelu_(leaf * 1, -0.5)
    grads = []
    for fn in (torch.ops.aten.leaky_relu_, OPS_NS().lrelu_):
        a = _x().nan_to_num(0.5).requires_grad_()
        (fn(a * 1, 0.25) * torch.arange(20.0, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append(a.grad)
    assert torch.equal(grads[0], grads[1])
    with torch.no_grad():  # not recorded: computed
        want, mine = _x(), _x()
        torch.ops.aten.leaky_relu_(want, -0.5)
        OPS_NS().lrelu_(mine.requires_grad_(), -0.5)
        assert _same(mine, want)
    leaf = _x().requires_grad_()  # aten's in-place error on a leaf
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        OPS_NS().lrelu_(leaf, -0.5)


@pytest.mark.parametrize("n", [0.5, -1.5, 0.0])
def test_foreach_maximum_minimum_values_are_atens(ext, n) -> None:
    a, b = _x((3, 4), torch.float32, 1), _x((5,), torch.float64, 2)
    want = [a.clone(), b.clone()]
    torch._foreach_maximum_(want, n)
    mine = [a.clone(), b.clone()]
    OPS_NS().fmax_(*mine, n)
    assert all(_same(p, q) for p, q in zip(mine, want))
    want = [a.clone(), b.clone()]
    torch._foreach_minimum_(want, [n, -n])
    mine = [a.clone(), b.clone()]
    OPS_NS().fmin_list_(*mine, n)
    assert all(_same(p, q) for p, q in zip(mine, want))


def test_foreach_maximum_refused_where_autograd_records_it(ext) -> None:
    """aten records no derivative for _foreach_maximum_ (its backward raises); the composition (clamp_min_ on each)
    would give one, so it refuses where autograd records the call."""
    leaf = torch.randn(3, dtype=torch.float64, requires_grad=True)
    s = [leaf * 1, leaf * 2]
    torch._foreach_maximum_(s, 0.5)
    with pytest.raises(RuntimeError, match="derivative for _foreach_maximum_ is not implemented"):
        sum(t.sum() for t in s).backward()
    with pytest.raises(RuntimeError, match="shimgen: _foreach_maximum_.Scalar: aten has no derivative"):
        OPS_NS().fmax_(leaf * 1, leaf * 2, 0.5)
    with pytest.raises(RuntimeError, match="shimgen: _foreach_minimum_.ScalarList: aten has no derivative"):
        OPS_NS().fmin_list_(leaf * 1, torch.zeros(2), 0.5)


def _mats(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in ((2, 3), (2, 4), (4, 3))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, -1.5)])
def test_addmm_inplace_values_are_atens(ext, dtype, beta, alpha) -> None:
    s, m1, m2 = _mats(dtype)
    s.view(-1)[0] = float("nan")  # beta 0: aten ignores self, NaN included
    want, mine = s.clone(), s.clone()
    torch.ops.aten.addmm_(want, m1, m2, beta=beta, alpha=alpha)
    OPS_NS().addmm_(mine, m1, m2, beta, alpha)
    assert _same(mine, want)
    if dtype == torch.float64:  # grad mode with nothing requiring grad: computed
        mine2 = s.clone()
        with torch.enable_grad():
            OPS_NS().addmm_(mine2, m1, m2, beta, alpha)
        assert _same(mine2, want)


def test_addmm_inplace_refuses_what_it_cannot_compute_as_aten_does(ext) -> None:
    sq, m = torch.randn(3, 3), torch.randn(3, 3)
    want, mine = sq.clone(), sq.clone()
    # where self is mat1, aten's value depends on its BLAS path (one reads the self it overwrites, another copies it
    # first): the composition, which cannot tell which, refuses the call
    torch.ops.aten.addmm_(want, want, m)
    with pytest.raises(RuntimeError, match="shimgen: addmm_.default: self shares memory with an input"):
        OPS_NS().addmm_(mine, mine, m, 1.0, 1.0)
    t = torch.randn(3, 2).t()  # aten runs the transposed product in self's layout
    with pytest.raises(RuntimeError, match="shimgen: addmm_.default: self is not laid out as a new contiguous"):
        OPS_NS().addmm_(t, torch.randn(2, 4), torch.randn(4, 3), 1.0, 1.0)
    with pytest.raises(RuntimeError):  # aten: Bad in-place call (self of another shape than the product)
        torch.ops.aten.addmm_(torch.randn(3), torch.randn(2, 4), torch.randn(4, 3))
    with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size \[3\] and output tensor size \[2, 3\]"):
        OPS_NS().addmm_(torch.randn(3), torch.randn(2, 4), torch.randn(4, 3), 1.0, 1.0)


def test_addmm_inplace_autograd(ext) -> None:
    """A leaf requiring grad: aten's own in-place error. Recorded (a non-leaf self, or a mat requiring grad): aten
    differentiates; the composition's addmm.default route (a legacy out= shim) refuses, naming the remedy."""
    s, m1, m2 = _mats(torch.float64)
    leaf = s.clone().requires_grad_()
    with pytest.raises(RuntimeError) as want:
        torch.ops.aten.addmm_(leaf, m1, m2)
    with pytest.raises(RuntimeError) as mine:
        OPS_NS().addmm_(leaf, m1, m2, 1.0, 1.0)
    assert str(want.value).splitlines()[0] in str(mine.value)
    for self_, mat1 in ((leaf * 1, m1), (s.clone(), m1.clone().requires_grad_())):
        with pytest.raises(RuntimeError, match="shimgen: .*SHIMGEN_OVERLAY"):
            OPS_NS().addmm_(self_, mat1, m2, 1.0, 1.0)
    with torch.no_grad():
        want, mine = s.clone(), s.clone()
        torch.ops.aten.addmm_(want, m1.requires_grad_(), m2)
        OPS_NS().addmm_(mine, m1, m2, 1.0, 1.0)
        assert _same(mine, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("bounds", [(0.125, 1 / 3), (-0.5, -0.25), (0.1, 0.3)])
def test_rrelu_eval_is_atens_values_and_layout(ext, dtype, bounds) -> None:
    lo, hi = bounds
    x = _x((4, 5), dtype).t()  # aten's kernel gives a contiguous result, leaky_relu keeps the input's layout
    want = torch.ops.aten.rrelu(x, lo, hi)
    mine = OPS_NS().rrelu(x, lo, hi, False)
    assert _same(mine, want) and mine.stride() == want.stride()
    noise = torch.zeros(x.shape, dtype=dtype)
    assert _same(OPS_NS().rwn(x, noise, lo, hi), torch.ops.aten.rrelu_with_noise(x, noise, lo, hi))
    assert torch.equal(noise, torch.zeros(x.shape, dtype=dtype))  # eval mode leaves noise alone
    w, m = x.clone(), x.clone()
    torch.ops.aten.rrelu_(w, lo, hi)
    OPS_NS().rrelu_(m, lo, hi)
    assert _same(m, w)
    w, m = x.clone(), x.clone()
    torch.ops.aten.rrelu_with_noise_(w, noise, lo, hi)
    OPS_NS().rwn_(m, noise, lo, hi)
    assert _same(m, w)
    ow, om = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
    torch.ops.aten.rrelu_with_noise.out(x, noise, lo, hi, out=ow)
    OPS_NS().rwn_out(x, noise, lo, hi, om)
    assert _same(om, ow) and om.stride() == ow.stride()
    g = _x((5, 4), dtype, 3)
    for is_result in (False, True):
        if is_result and lo + hi < 0:
            continue
        assert _same(OPS_NS().rwn_bw(g, x, noise, lo, hi, False, is_result),
                     torch.ops.aten.rrelu_with_noise_backward(g, x, noise, lo, hi, False, is_result))
    assert _same(OPS_NS().rrelu_default(x), torch.ops.aten.rrelu(x))


def test_rrelu_refuses_training_and_raises_atens_errors(ext) -> None:
    x = _x()
    with pytest.raises(RuntimeError, match="shimgen: rrelu.default: training=true draws random slopes.*SHIMGEN_OVERLAY"):
        OPS_NS().rrelu(x, 0.1, 0.3, True)
    with pytest.raises(RuntimeError, match="shimgen: rrelu_with_noise_backward.default: training=true"):
        OPS_NS().rwn_bw(x, x, torch.zeros_like(x), 0.1, 0.3, True, False)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        torch.ops.aten.rrelu(x, 0.3, 0.1)
    with pytest.raises(RuntimeError, match="shimgen: rrelu.default: Lower bound should be less than or equal"):
        OPS_NS().rrelu(x, 0.3, 0.1, False)
    with pytest.raises(RuntimeError, match="noise tensor shape must match"):
        torch.ops.aten.rrelu_with_noise(x, torch.zeros(3), 0.1, 0.3)
    with pytest.raises(RuntimeError, match="shimgen: rrelu_with_noise.default: noise tensor shape must match"):
        OPS_NS().rwn(x, torch.zeros(3), 0.1, 0.3)
    # two integer bounds: aten divides them in the default dtype, which the double would not follow
    with pytest.raises(RuntimeError, match="shimgen: rrelu.default: lower=0: .*integer lower and upper"):
        OPS_NS().rrelu_int(x, 0, 1)
    with pytest.raises(RuntimeError, match="shimgen: rrelu.default: lower=inf: .*not finite"):
        OPS_NS().rrelu(x, float("inf"), float("inf"), False)


def test_rrelu_gradients_are_atens(ext) -> None:
    weights = torch.arange(20, dtype=torch.float64).view(4, 5)
    grads = []
    for fn in (lambda t: torch.ops.aten.rrelu(t, 0.1, 0.3), lambda t: OPS_NS().rrelu(t, 0.1, 0.3, False),
               lambda t: torch.ops.aten.rrelu_(t * 1, 0.1, 0.3), lambda t: OPS_NS().rrelu_(t * 1, 0.1, 0.3)):
        a = _x().nan_to_num(0.5).t().contiguous().t().requires_grad_()
        (fn(a) * weights).sum().backward()
        grads.append(a.grad)
    assert torch.equal(grads[0], grads[1]) and torch.equal(grads[2], grads[3])
    # rrelu_ with a negative slope: aten's backward (from the result) raises; the composition refuses the call
    leaf = _x().requires_grad_()
    r = torch.ops.aten.rrelu_(leaf * 1, -0.5, -0.25)
    with pytest.raises(RuntimeError, match="negative slope"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match=r"shimgen: rrelu_.default: with \(lower \+ upper\) / 2 < 0 .*SHIMGEN_OVERLAY"):
        OPS_NS().rrelu_(leaf * 1, -0.5, -0.25)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_vector_norm_out_is_atens(ext, dtype) -> None:
    x = _x((3, 4), dtype).nan_to_num(0.5, 2.0, -2.0)
    real = torch.float64 if dtype == torch.float64 else torch.float32
    for make in (lambda: torch.empty(0, dtype=real), lambda: torch.zeros(5, dtype=real)):
        w, m = make(), make()
        torch.ops.aten.linalg_vector_norm.out(x, out=w)
        OPS_NS().vn_out(x, m)
        assert _same(m, w) and m.stride() == w.stride()
        for keepdim in (False, True):
            w, m = make(), make()
            torch.ops.aten.linalg_vector_norm.out(x, 2, [1], keepdim, out=w)
            OPS_NS().vn_out_dim(x, 1, keepdim, m)
            assert _same(m, w) and m.stride() == w.stride()
    with pytest.raises(RuntimeError):  # out's dtype must be the result's (aten raises)
        torch.ops.aten.linalg_vector_norm.out(x, out=torch.empty(0, dtype=torch.float16))
    with pytest.raises(RuntimeError, match="shimgen: linalg_vector_norm.out: out's dtype differs"):
        OPS_NS().vn_out(x, torch.empty(0, dtype=torch.float16))
    if dtype.is_complex:  # ord 1 is aten's CPU kernel replicated for float and double alone
        with pytest.raises(RuntimeError, match="shimgen: linalg_vector_norm.default: ord=1"):
            OPS_NS().vn_out_ord(x, 1.0, torch.empty(0, dtype=real))
    else:
        w = torch.ops.aten.linalg_vector_norm.out(x, 1.0, out=torch.empty(0, dtype=real))
        assert _same(OPS_NS().vn_out_ord(x, 1.0, torch.empty(0, dtype=real)), w)
    if dtype.is_complex:  # another ord: the same kernel, float and double alone
        with pytest.raises(RuntimeError, match="shimgen: linalg_vector_norm.default: ord=3"):
            OPS_NS().vn_out_ord(x, 3.0, torch.empty(0, dtype=real))
    else:
        w = torch.ops.aten.linalg_vector_norm.out(x, 3.0, out=torch.empty(0, dtype=real))
        assert _same(OPS_NS().vn_out_ord(x, 3.0, torch.empty(0, dtype=real)), w)
    with pytest.raises(RuntimeError, match="shimgen: linalg_vector_norm.default: ord=3"):  # a strided tensor
        OPS_NS().vn_out_ord(x.t(), 3.0, torch.empty(0, dtype=real))

