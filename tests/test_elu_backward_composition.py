"""Kernel `elu_backward` (data/scalar_facts.yaml kernel_compositions): aten::elu_backward with is_result=true, and
its out= (kernel `out`), as the dispatching calls of scalar.h's elu_grad_select, built against the generated
headers and linked with libtorch alone; compared bit for bit (values, dtype, strides) with aten's kernel, in its
vectorized body and its scalar tail; what the route refuses raises a `shimgen:` error naming the remedy."""

from __future__ import annotations

import itertools

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

ELU_CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_eb(Tensor g, double alpha, double scale, double input_scale, bool is_result, Tensor x) {
  return ts::elu_backward(g, alpha, scale, input_scale, is_result, x);
}
Tensor k_eb_int(Tensor g, int64_t alpha, Tensor x) { return ts::elu_backward(g, alpha, 1, 1, true, x); }
Tensor k_eb_out(Tensor g, double alpha, double scale, double input_scale, Tensor x, Tensor out) {
  ts::elu_backward_out(out, g, alpha, scale, input_scale, true, x);
  return out;
}

Tensor k_ar(Tensor a, Tensor b) { return ts::_add_relu(a, b); }
Tensor k_ar_alpha(Tensor a, Tensor b, double alpha) { return ts::_add_relu(a, b, alpha); }
Tensor k_ar_scalar(Tensor a, double n) { return ts::_add_relu(a, n); }
Tensor k_ar_int_scalar(Tensor a, int64_t n) { return ts::_add_relu(a, n); }
Tensor k_ar_(Tensor a, Tensor b) { return ts::_add_relu_(a, b); }
Tensor k_ar_scalar_(Tensor a, double n) { return ts::_add_relu_(a, n); }

STABLE_TORCH_LIBRARY(elu_grad, m) {
  m.def("eb(Tensor g, float alpha, float scale, float input_scale, bool is_result, Tensor x) -> Tensor");
  m.def("eb_int(Tensor g, int alpha, Tensor x) -> Tensor");
  m.def("eb_out(Tensor g, float alpha, float scale, float input_scale, Tensor x, Tensor(a!) out) -> Tensor(a!)");
  m.def("ar(Tensor a, Tensor b) -> Tensor");
  m.def("ar_alpha(Tensor a, Tensor b, float alpha) -> Tensor");
  m.def("ar_scalar(Tensor a, float n) -> Tensor");
  m.def("ar_int_scalar(Tensor a, int n) -> Tensor");
  m.def("ar_(Tensor(a!) a, Tensor b) -> Tensor(a!)");
  m.def("ar_scalar_(Tensor(a!) a, float n) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(elu_grad, CompositeExplicitAutograd, m) {
  m.impl("eb", TORCH_BOX(&k_eb));
  m.impl("eb_int", TORCH_BOX(&k_eb_int));
  m.impl("eb_out", TORCH_BOX(&k_eb_out));
  m.impl("ar", TORCH_BOX(&k_ar));
  m.impl("ar_alpha", TORCH_BOX(&k_ar_alpha));
  m.impl("ar_scalar", TORCH_BOX(&k_ar_scalar));
  m.impl("ar_int_scalar", TORCH_BOX(&k_ar_int_scalar));
  m.impl("ar_", TORCH_BOX(&k_ar_));
  m.impl("ar_scalar_", TORCH_BOX(&k_ar_scalar_));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("elu_grad")
    out = str(root / "gen")
    files, _ = pipeline.generate(["elu_backward", "sub", "_add_relu", "_add_relu_", "add"], None, None, out, only=True)
    pipeline.write(out, files)
    src = root / "elu_grad.cpp"
    src.write_text(ELU_CALLS)
    lib = str(root / "elu_grad.so")
    build_so(str(src), lib, out)  # libtorch alone
    torch.ops.load_library(lib)
    return lib


def _sample(shape, dtype, seed) -> torch.Tensor:
    """Values of both signs, -0.0, +-inf; no NaN (a NaN self is refused, below)."""
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
    if t.numel() > 4:
        t.view(-1)[:4] = torch.tensor([float("inf"), -0.0, 0.0, float("-inf")])
    return t.to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape, strides and bits (NaN where NaN is; the sign of zero included)."""
    return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
            and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
            and torch.equal(a.signbit(), b.signbit()))


FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
# (alpha, scale, input_scale): elu's default, selu's constants, celu's (alpha, 1, 1 / alpha), others that round
NUMBERS = [(1.0, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1.0), (2.5, 1.0, 0.4), (0.1, 0.3, 0.7),
           (0.0, 1.0, 1.0)]


@pytest.mark.parametrize("dg,dx", list(itertools.product(FLOATS, FLOATS)))
def test_elu_backward_is_exact(ext, dg, dx) -> None:
    """1001 and 37 columns: aten's vectorized body and its scalar tail; broadcasting; mixed dtypes promote."""
    for sg, sx in (((3, 1001), (3, 1001)), ((4, 37), (37,)), ((37,), (4, 37)), ((), (5,)), ((0, 3), (3,))):
        g, x = _sample(sg, dg, 1), _sample(sx, dx, 2)
        for n in NUMBERS:
            want = torch.ops.aten.elu_backward(g, *n, True, x)
            assert _same(torch.ops.elu_grad.eb(g, *n, True, x), want), (dg, dx, sg, sx, n)


def test_elu_backward_layouts_and_out(ext) -> None:
    """The result's strides are aten's (its TensorIterator orders dimensions by grad_output's, then
    self_or_result's); a strided input takes aten's scalar loop, equal too; the out= overload writes the same."""
    g, x = _sample((40, 33), torch.float32, 3), _sample((33, 40), torch.float32, 4).t()
    cases = [(g, x), (g.t().contiguous().t(), x), (g[:, :32:2], x[:, 1::2]),
             (g.view(2, 4, 5, 33).to(memory_format=torch.channels_last), x.contiguous().view(2, 4, 5, 33))]
    for a, b in cases:
        want = torch.ops.aten.elu_backward(a, 1.25, 0.75, 0.5, True, b)
        assert _same(torch.ops.elu_grad.eb(a, 1.25, 0.75, 0.5, True, b), want), (a.stride(), b.stride())
        out, ref = torch.empty(0), torch.empty(0)
        torch.ops.elu_grad.eb_out(a, 1.25, 0.75, 0.5, b, out)
        torch.ops.aten.elu_backward.grad_input(a, 1.25, 0.75, 0.5, True, b, grad_input=ref)
        assert _same(out, ref)
    want = torch.ops.aten.elu_backward(g, 3, 1, 1, True, g)
    assert _same(torch.ops.elu_grad.eb_int(g, 3, g), want)  # an integer alpha


def test_elu_backward_refusals_and_atens_errors(ext) -> None:
    g, x = _sample((6, 40), torch.float32, 5), _sample((6, 40), torch.float32, 6)
    remedy = "define SHIMGEN_OVERLAY and link libshimgen_overlay"
    with pytest.raises(RuntimeError, match=f"shimgen: elu_backward.default: is_result=false: .*{remedy}"):
        torch.ops.elu_grad.eb(g, 1.0, 1.0, 1.0, False, x)
    x.view(-1)[-1] = float("nan")  # aten: grad * scale in its scalar tail, NaN in its vectorized body
    with pytest.raises(RuntimeError, match=f"shimgen: elu_backward.default: self holds a NaN.*{remedy}"):
        torch.ops.elu_grad.eb(g, 1.0, 1.0, 1.0, True, x)
    with pytest.raises(RuntimeError, match="negative slope"):
        torch.ops.aten.elu_backward(g, -1.0, 1.0, 1.0, True, g)
    with pytest.raises(RuntimeError, match=r"shimgen: elu_backward.default: In-place elu backward .*\(aten raises\)"):
        torch.ops.elu_grad.eb(g, -1.0, 1.0, 1.0, True, g)
    with pytest.raises(RuntimeError, match="shimgen: elu_backward.default: aten has no kernel for this dtype"):
        torch.ops.elu_grad.eb(g.long(), 1.0, 1.0, 1.0, True, g.long())
    with pytest.raises(RuntimeError, match=r"shimgen: elu_backward.default: scale=\d+\.\d+: out of the range"):
        torch.ops.elu_grad.eb(g, 1.0, 1e39, 1.0, True, g)
    leaf = g.clone().requires_grad_()
    with pytest.raises(RuntimeError, match=f"shimgen: elu_backward.default: an input requires grad.*{remedy}"):
        torch.ops.elu_grad.eb(leaf, 1.0, 1.0, 1.0, True, g)
    with torch.no_grad():  # autograd records nothing: computed
        assert _same(torch.ops.elu_grad.eb(leaf, 1.0, 1.0, 1.0, True, g),
                     torch.ops.aten.elu_backward(leaf, 1.0, 1.0, 1.0, True, g))


ADD_RELU_DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.int8]


@pytest.mark.parametrize("da,db", list(itertools.product(ADD_RELU_DTYPES, ADD_RELU_DTYPES)))
def test_add_relu_is_exact(ext, da, db) -> None:
    """clamp(self + other, 0, the largest value of SELF's dtype) over the common dtype: an int32 self with a float
    other saturates at 2**31, a float one at float's largest value (+inf too); integers wrap, then clamp; 1001 and
    37 elements: the vectorized body and the scalar tail."""
    for sa, sb in (((3, 1001), (3, 1001)), ((4, 37), (37,)), ((), (5,)), ((0, 3), (3,))):
        a = _sample(sa, torch.float64, 7) * (1e9 if da == torch.int32 else 40)
        b = _sample(sb, torch.float64, 8) * 40
        a, b = (t.nan_to_num(0.5, 1e300, -1e300) if not d.is_floating_point else t for t, d in ((a, da), (b, db)))
        a = a.clamp(-1e18, 1e18).to(da) if not da.is_floating_point else a.to(da)
        b = b.clamp(-1e18, 1e18).to(db) if not db.is_floating_point else b.to(db)
        if a.dtype.is_floating_point and b.dtype.is_floating_point and a.numel() > 4 and b.numel() > 4:
            a.view(-1)[1:3] = 0.0  # -0.0 + 0.0 and 0.0 + 0.0 (no -0.0 sum: refused, below)
        ct = torch.result_type(a, b)
        info = torch.finfo if da.is_floating_point else torch.iinfo
        if ct.is_floating_point == da.is_floating_point and info(da).max > info(ct).max:  # a 0-dim self
            with pytest.raises(RuntimeError, match="without overflow"):
                torch.ops.aten._add_relu(a, b)
            with pytest.raises(RuntimeError, match=r"without overflow \(aten raises\)"):
                torch.ops.elu_grad.ar(a, b)
            continue
        want = torch.ops.aten._add_relu(a, b)
        assert _same(torch.ops.elu_grad.ar(a, b), want), (da, db, sa, sb)
        assert _same(torch.ops.elu_grad.ar_alpha(a, b, 1.0), want), (da, db, sa, sb)
    x = _sample((6, 40), da, 9) if da.is_floating_point else torch.arange(-120, 120, dtype=da).view(6, 40)
    for n in (0.5, -3.0, 2.0):
        assert _same(torch.ops.elu_grad.ar_scalar(x, n), torch.ops.aten._add_relu(x, n)), (da, n)
    assert _same(torch.ops.elu_grad.ar_int_scalar(x, 7), torch.ops.aten._add_relu(x, 7)), da


def test_add_relu_refusals_and_atens_errors(ext) -> None:
    remedy = "define SHIMGEN_OVERLAY and link libshimgen_overlay"
    g = torch.Generator().manual_seed(10)
    a, b = torch.randn(6, 40, generator=g), torch.randn(6, 40, generator=g)  # no NaN, no -0.0 sum
    with pytest.raises(RuntimeError, match=f"shimgen: _add_relu.Tensor: alpha=2.0+: only alpha=1 .*{remedy}"):
        torch.ops.elu_grad.ar_alpha(a, b, 2.0)
    nan = a.clone()
    nan.view(-1)[-1] = float("nan")  # aten: 0 in its scalar tail, NaN in its vectorized body
    with pytest.raises(RuntimeError, match=f"shimgen: _add_relu.Tensor: self \\+ other holds a NaN or -0.0.*{remedy}"):
        torch.ops.elu_grad.ar(nan, b)
    z = torch.full((3,), -0.0)
    with pytest.raises(RuntimeError, match="holds a NaN or -0.0"):
        torch.ops.elu_grad.ar(z, z)
    with pytest.raises(RuntimeError, match="Unsupported datatype for add_relu"):
        torch.ops.aten._add_relu(a.half(), b.half())
    with pytest.raises(RuntimeError, match=r"shimgen: _add_relu.Tensor: Unsupported datatype for add_relu \(aten raises\)"):
        torch.ops.elu_grad.ar(a.half(), b.half())
    with pytest.raises(RuntimeError, match="shimgen: _add_relu.Tensor: aten has no kernel for this dtype"):
        torch.ops.elu_grad.ar(a, b.half().to(torch.complex64))
    leaf = a.clone().requires_grad_()
    with pytest.raises(RuntimeError, match=f"shimgen: _add_relu.Tensor: an input requires grad.*{remedy}"):
        torch.ops.elu_grad.ar(leaf, b)
    with torch.no_grad():
        assert _same(torch.ops.elu_grad.ar(leaf, b), torch.ops.aten._add_relu(leaf, b))


def test_add_relu_in_place(ext) -> None:
    """_add_relu_ (kernel `inplace` over _add_relu.Tensor, `refuse_cast: true`) and _add_relu_.Scalar (its
    sibling): self written as aten writes it; where the result's dtype is not self's, aten returns a temporary of
    the result's dtype instead of self (measured), which is refused."""
    g = torch.Generator().manual_seed(12)
    for da, db in ((torch.float32, torch.float32), (torch.float64, torch.float32), (torch.int64, torch.int32),
                   (torch.int32, torch.int8)):
        a = (torch.randn(5, 37, generator=g, dtype=torch.float64) * 50).to(da)
        b = (torch.randn(37, generator=g, dtype=torch.float64) * 50).to(db)
        want, mine = a.clone(), a.clone()
        r_want, r_mine = torch.ops.aten._add_relu_(want, b), torch.ops.elu_grad.ar_(mine, b)
        assert _same(mine, want) and _same(r_mine, r_want) and r_mine.data_ptr() == mine.data_ptr(), (da, db)
        if da.is_floating_point:  # a double number into an integer self: aten raises, as the result is float
            want, mine = a.clone(), a.clone()
            assert _same(torch.ops.elu_grad.ar_scalar_(mine, 3.0), torch.ops.aten._add_relu_(want, 3.0)), da
    self = torch.randn(4, 3, generator=g)
    assert torch.ops.aten._add_relu_(self.clone(), self.double()).dtype == torch.float64  # aten: not self
    with pytest.raises(RuntimeError, match="shimgen: _add_relu_.Tensor: the result's dtype is not the output's"):
        torch.ops.elu_grad.ar_(self.clone(), self.double())
    with pytest.raises(RuntimeError, match="can't be cast"):  # aten's own error: float into int
        torch.ops.aten._add_relu_(self.long(), self)
    with pytest.raises(RuntimeError, match="cannot be cast"):
        torch.ops.elu_grad.ar_(self.long(), self)
