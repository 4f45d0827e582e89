"""addbmm, addbmm_ and addbmm.out in an extension linked with libtorch alone (kernel `addbmm_loop`): aten's CPU addbmm
is a loop of addmm_ (LinearAlgebra.cpp addbmm_impl_), which the wrapper makes with the same calls in the same order,
each addmm_ as libtorch's legacy aoti_torch_addmm_out shim. Compared with torch.addbmm given what the caller wrote:
values, dtype, strides; refusals (autograd recording the call, integer tensors, numbers no float carries) name the
remedy."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_addbmm(Tensor s, Tensor b1, Tensor b2, double beta, double alpha) { return ts::addbmm(s, b1, b2, beta, alpha); }
Tensor k_addbmm_default(Tensor s, Tensor b1, Tensor b2) { return ts::addbmm(s, b1, b2); }
Tensor k_addbmm_(Tensor s, Tensor b1, Tensor b2, double beta, double alpha) { return ts::addbmm_(s, b1, b2, beta, alpha); }
Tensor k_addbmm_out(Tensor o, Tensor s, Tensor b1, Tensor b2, double beta, double alpha) {
  return ts::addbmm_out(o, s, b1, b2, beta, alpha);
}

STABLE_TORCH_LIBRARY(addbmm_ext, m) {
  m.def("addbmm(Tensor s, Tensor b1, Tensor b2, float beta, float alpha) -> Tensor");
  m.def("addbmm_default(Tensor s, Tensor b1, Tensor b2) -> Tensor");
  m.def("addbmm_(Tensor(a!) s, Tensor b1, Tensor b2, float beta, float alpha) -> Tensor(a!)");
  m.def("addbmm_out(Tensor(a!) o, Tensor s, Tensor b1, Tensor b2, float beta, float alpha) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(addbmm_ext, CompositeExplicitAutograd, m) {
  m.impl("addbmm", TORCH_BOX(&k_addbmm));
  m.impl("addbmm_default", TORCH_BOX(&k_addbmm_default));
  m.impl("addbmm_", TORCH_BOX(&k_addbmm_));
  m.impl("addbmm_out", TORCH_BOX(&k_addbmm_out));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> None:
    # libtorch alone: no overlay
    load_extension(tmp_path_factory.mktemp("addbmm"), "addbmm_ext", ["addbmm", "addbmm_"], CALLS)


def _sample(shapes, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]


SHAPES = [((3, 5), (4, 3, 2), (4, 2, 5)), ((5,), (7, 3, 9), (7, 9, 5)), ((20, 30), (6, 20, 40), (6, 40, 30)),
          ((3, 5), (0, 3, 2), (0, 2, 5))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, -1.5)])
def test_functional_and_out_are_atens(ext, dtype, shapes, beta, alpha) -> None:
    s, b1, b2 = _sample(shapes, dtype)
    want = torch.addbmm(s, b1, b2, beta=beta, alpha=alpha)
    if b1.size(0) == 0 and beta not in (0.0, 1.0):  # aten: self * beta as a wrapped number; refused
        with pytest.raises(RuntimeError, match="shimgen: addbmm.default: no batch and a beta other than 0 or 1"):
            torch.ops.addbmm_ext.addbmm(s, b1, b2, beta, alpha)
        return
    got = torch.ops.addbmm_ext.addbmm(s, b1, b2, beta, alpha)
    assert got.dtype == want.dtype and got.stride() == want.stride() and torch.equal(got, want)
    o_want, o_got = torch.empty(5, 3, dtype=dtype).t(), torch.empty(5, 3, dtype=dtype).t()
    if want.shape == (3, 5):
        torch.addbmm(s, b1, b2, beta=beta, alpha=alpha, out=o_want)
        torch.ops.addbmm_ext.addbmm_out(o_got, s, b1, b2, beta, alpha)
        assert o_got.stride() == o_want.stride() and torch.equal(o_got, o_want)


def test_defaults_and_in_place(ext) -> None:
    s, b1, b2 = _sample(((3, 5), (4, 3, 2), (4, 2, 5)), torch.float32, 1)
    assert torch.equal(torch.ops.addbmm_ext.addbmm_default(s, b1, b2), torch.addbmm(s, b1, b2))
    x, y = s.clone(), s.clone()
    x.addbmm_(b1, b2, beta=0.5, alpha=3.0)
    torch.ops.addbmm_ext.addbmm_(y, b1, b2, 0.5, 3.0)
    assert torch.equal(x, y)


def test_atens_errors(ext) -> None:
    s, b1, b2 = _sample(((3, 5), (4, 3, 2), (3, 2, 5)), torch.float32)
    with pytest.raises(RuntimeError, match="batch1 and batch2 must have same number of batches, got 4 and 3"):
        torch.addbmm(s, b1, b2)
    with pytest.raises(RuntimeError, match="batch1 and batch2 must have same number of batches, got 4 and 3"):
        torch.ops.addbmm_ext.addbmm(s, b1, b2, 1.0, 1.0)


def test_refusals_name_the_remedy(ext) -> None:
    s, b1, b2 = _sample(((3, 5), (4, 3, 2), (4, 2, 5)), torch.float64)
    with pytest.raises(RuntimeError, match=r"shimgen: addbmm.default: autograd would record the call.*SHIMGEN_OVERLAY"):
        torch.ops.addbmm_ext.addbmm(s.requires_grad_(), b1, b2, 1.0, 1.0)
    with torch.no_grad():  # nothing recorded: served
        assert torch.equal(torch.ops.addbmm_ext.addbmm(s, b1, b2, 1.0, 1.0), torch.addbmm(s, b1, b2))
    i = [t.detach().mul(3).round().long() for t in (s, b1, b2)]
    torch.addbmm(*i)  # aten computes integer addbmm; the legacy shim's float cells do not carry it
    with pytest.raises(RuntimeError, match="shimgen: addmm.out"):
        torch.ops.addbmm_ext.addbmm(*i, 1.0, 1.0)
    with pytest.raises(RuntimeError, match="shimgen: addmm.out"):  # 0.1 is no float
        torch.ops.addbmm_ext.addbmm(s.detach(), b1, b2, 0.1, 1.0)


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
def test_autocast_casts_where_aten_would_cast(ext, low) -> None:
    """CPU autocast computes aten's addbmm in bfloat16 (its lower-precision list, as CUDA's); the legacy addmm_out
    shim, an out= call, would not: the functional form casts its operands as autocast casts them first (measured:
    float32 where aten gave bfloat16 without it), out= is left alone."""
    for shapes in SHAPES[:3]:
        s, b1, b2 = _sample(shapes, torch.float32)
        with torch.no_grad(), torch.autocast("cpu", dtype=low):
            want = torch.addbmm(s, b1, b2, beta=0.5, alpha=2.0)
            assert want.dtype == low
            got = torch.ops.addbmm_ext.addbmm(s, b1, b2, 0.5, 2.0)
            assert got.dtype == want.dtype and torch.equal(got, want), shapes
    s, b1, b2 = _sample(SHAPES[0], torch.float32)
    with torch.no_grad(), torch.autocast("cpu", dtype=low):
        o_want, o_got = torch.empty(3, 5), torch.empty(3, 5)
        torch.addbmm(s, b1, b2, out=o_want)
        torch.ops.addbmm_ext.addbmm_out(o_got, s, b1, b2, 1.0, 1.0)
        assert o_got.dtype == o_want.dtype and torch.equal(o_got, o_want)
