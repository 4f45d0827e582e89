"""Out= forms with a libtorch-only route, in an extension linked with libtorch alone: `_add_relu.out` (kernel `out`:
the functional, then aten's out= rules; row keys `refuse_cast`, `no_derivative`), and the out= forms aten computes
as their Tensor out= overload with the number wrapped (kernel `wrapped_numbers` via an out= overload:
`searchsorted.Scalar_out`, the polynomials' `n_scalar_out`). Compared with aten given what the caller wrote: out's
values, dtype and strides, the tensor returned, aten's errors; where aten leaves what no composition can make (a
temporary of another dtype returned instead of out, an out requiring grad without a derivative) the call is refused
with the remedy."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_add_relu_out(Tensor o, Tensor a, Tensor b) { return ts::_add_relu_out(o, a, b); }
Tensor k_searchsorted_out(Tensor o, Tensor seq, double v, bool out_int32, bool right) {
  return ts::searchsorted_out(o, seq, v, out_int32, right);
}
Tensor k_searchsorted_int_out(Tensor o, Tensor seq, int64_t v) { return ts::searchsorted_out(o, seq, v); }
Tensor k_legendre_out(Tensor o, Tensor x, int64_t n) { return ts::special_legendre_polynomial_p_out(o, x, n); }
Tensor k_laguerre_out(Tensor o, Tensor x, double n) { return ts::special_laguerre_polynomial_l_out(o, x, n); }

STABLE_TORCH_LIBRARY(outc_ext, m) {
  m.def("add_relu_out(Tensor(a!) o, Tensor a, Tensor b) -> Tensor(a!)");
  m.def("searchsorted_out(Tensor(a!) o, Tensor seq, float v, bool out_int32, bool right) -> Tensor(a!)");
  m.def("searchsorted_int_out(Tensor(a!) o, Tensor seq, int v) -> Tensor(a!)");
  m.def("legendre_out(Tensor(a!) o, Tensor x, int n) -> Tensor(a!)");
  m.def("laguerre_out(Tensor(a!) o, Tensor x, float n) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(outc_ext, CompositeExplicitAutograd, m) {
  m.impl("add_relu_out", TORCH_BOX(&k_add_relu_out));
  m.impl("searchsorted_out", TORCH_BOX(&k_searchsorted_out));
  m.impl("searchsorted_int_out", TORCH_BOX(&k_searchsorted_int_out));
  m.impl("legendre_out", TORCH_BOX(&k_legendre_out));
  m.impl("laguerre_out", TORCH_BOX(&k_laguerre_out));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> None:
    # libtorch alone: no overlay
    load_extension(tmp_path_factory.mktemp("outc"), "outc_ext", ["_add_relu", "searchsorted",
                                                                  "special_legendre_polynomial_p",
                                                                  "special_laguerre_polynomial_l"], CALLS)


def _same(got: torch.Tensor, want: torch.Tensor) -> bool:
    return got.dtype == want.dtype and got.stride() == want.stride() and torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.parametrize("out_shape", [(2, 3), (0,), (7,)])
def test_add_relu_out_is_atens(ext, dtype, out_shape) -> None:
    g = torch.Generator().manual_seed(1)
    a, b = (torch.randn(2, 3, generator=g) * 5).to(dtype), (torch.randn(3, generator=g) * 5).to(dtype)
    o_want, o_got = torch.zeros(out_shape, dtype=dtype), torch.zeros(out_shape, dtype=dtype)
    want = torch.ops.aten._add_relu.out(a, b, out=o_want)
    got = torch.ops.outc_ext.add_relu_out(o_got, a, b)
    assert got is o_got and want is o_want and _same(o_got, o_want)


def test_add_relu_out_refuses_what_aten_returns_as_a_temporary(ext) -> None:
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    want = torch.ops.aten._add_relu.out(a, b, out=torch.zeros(2, 3, dtype=torch.float64))
    assert want.dtype == torch.float32  # aten writes out, but returns a float32 temporary
    with pytest.raises(RuntimeError, match=r"shimgen: _add_relu\.out: the result's dtype is not the output's"):
        torch.ops.outc_ext.add_relu_out(torch.zeros(2, 3, dtype=torch.float64), a, b)


def test_add_relu_out_refuses_a_call_autograd_records(ext) -> None:
    a, b = torch.randn(3, requires_grad=True), torch.randn(3)
    o = torch.empty(3)
    torch.ops.aten._add_relu.out(a, b, out=o)
    assert o.requires_grad  # aten computes it and leaves out requiring grad (no derivative)
    with pytest.raises(RuntimeError, match=r"shimgen: _add_relu\.out: autograd would record this out= call"):
        torch.ops.outc_ext.add_relu_out(torch.empty(3), a, b)
    with torch.no_grad():
        o_got = torch.empty(3)
        torch.ops.outc_ext.add_relu_out(o_got, a, b)
        assert torch.equal(o_got, torch.ops.aten._add_relu.out(a, b, out=torch.empty(3)))


@pytest.mark.parametrize("seq_dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("value", [0.25, -3.0, 2.5, 1e10])
@pytest.mark.parametrize("out_int32,right", [(False, False), (True, False), (False, True)])
def test_searchsorted_scalar_out_is_atens(ext, seq_dtype, value, out_int32, right) -> None:
    seq = (torch.arange(-4, 5) * 0.5).to(seq_dtype).sort().values
    odt = torch.int32 if out_int32 else torch.int64
    o_want, o_got = torch.full((3,), 9, dtype=odt), torch.full((3,), 9, dtype=odt)
    torch.searchsorted(seq, value, out_int32=out_int32, right=right, out=o_want)
    got = torch.ops.outc_ext.searchsorted_out(o_got, seq, value, out_int32, right)
    assert got is o_got and _same(o_got, o_want)


def test_searchsorted_scalar_out_errors_where_aten_does(ext) -> None:
    seq = torch.arange(5.0)
    with pytest.raises(RuntimeError):
        torch.searchsorted(seq, 2.0, out=torch.empty((), dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"output tensor's dtype is wrong"):  # aten's own check, in its order
        torch.ops.outc_ext.searchsorted_out(torch.empty((), dtype=torch.int32), seq, 2.0, False, False)
    with pytest.raises(RuntimeError, match=r"output tensor's dtype is wrong"):  # before the kernel's dtype error
        torch.searchsorted(torch.tensor([False, True]), True, out=torch.empty(0, dtype=torch.bool))
    with pytest.raises(RuntimeError, match=r"output tensor's dtype is wrong"):
        torch.ops.outc_ext.searchsorted_out(torch.empty(0, dtype=torch.bool), torch.tensor([False, True]), 1.0,
                                            False, False)
    o_want, o_got = torch.empty((), dtype=torch.int64), torch.empty((), dtype=torch.int64)
    torch.searchsorted(torch.arange(5), 3, out=o_want)
    torch.ops.outc_ext.searchsorted_int_out(o_got, torch.arange(5), 3)
    assert _same(o_got, o_want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("n", [0, 1, 2, 5, -1])
@pytest.mark.parametrize("out_shape", [(3, 4), (0,), (7,)])
def test_polynomial_n_scalar_out_is_atens(ext, dtype, n, out_shape) -> None:
    x = (torch.linspace(-1.5, 1.5, 12).view(3, 4) * 2).to(dtype)
    odt = torch.float32 if dtype == torch.int64 else dtype
    for name, call, number in (("legendre", torch.special.legendre_polynomial_p, n),
                               ("laguerre", torch.special.laguerre_polynomial_l, float(n))):
        o_want, o_got = torch.zeros(out_shape, dtype=odt), torch.zeros(out_shape, dtype=odt)
        want = call(x, number, out=o_want)
        got = getattr(torch.ops.outc_ext, f"{name}_out")(o_got, x, number)
        assert want is o_want and got is o_got and _same(o_got, o_want), name
