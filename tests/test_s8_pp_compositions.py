"""Session 8's compositions of aten's CompositeImplicitAutograd functions, in an extension linked with libtorch
alone (no overlay), compared with aten given what the caller wrote: _test_serialization_subcmul (kernel `subcmul`:
`self - (other * alpha)` by mul.Scalar's and sub.Tensor's wrappers)."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_subcmul(Tensor s, Tensor o, double alpha) { return ts::_test_serialization_subcmul(s, o, alpha); }
Tensor k_subcmul_int(Tensor s, Tensor o, int64_t alpha) { return ts::_test_serialization_subcmul(s, o, alpha); }
Tensor k_subcmul_default(Tensor s, Tensor o) { return ts::_test_serialization_subcmul(s, o); }

STABLE_TORCH_LIBRARY(s8pp_ext, m) {
  m.def("subcmul(Tensor s, Tensor o, float alpha) -> Tensor");
  m.def("subcmul_int(Tensor s, Tensor o, int alpha) -> Tensor");
  m.def("subcmul_default(Tensor s, Tensor o) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(s8pp_ext, CompositeExplicitAutograd, m) {
  m.impl("subcmul", TORCH_BOX(&k_subcmul));
  m.impl("subcmul_int", TORCH_BOX(&k_subcmul_int));
  m.impl("subcmul_default", TORCH_BOX(&k_subcmul_default));
}
"""

OPS = ["_test_serialization_subcmul"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> None:
    load_extension(tmp_path_factory.mktemp("s8pp"), "s8pp_ext", OPS, CALLS)


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    assert torch.equal(got.isnan(), want.isnan()) if got.is_floating_point() else True
    assert torch.equal(got.nan_to_num(), want.nan_to_num()) if got.is_floating_point() else torch.equal(got, want)


def _pair(dtype_a, dtype_b, seed=0):
    g = torch.Generator().manual_seed(seed)
    a, b = (torch.randn(s, generator=g, dtype=torch.float64) * 5 for s in ((3, 4), (4,)))
    return tuple(t.to(d) if d.is_floating_point else t.round().to(d) for t, d in ((a, dtype_a), (b, dtype_b)))


@pytest.mark.parametrize("da,db", [(torch.float32, torch.float32), (torch.float64, torch.float32),
                                   (torch.int64, torch.int64), (torch.int32, torch.float16),
                                   (torch.bfloat16, torch.bfloat16)])
def test_subcmul_is_atens(ext, da, db) -> None:
    a, b = _pair(da, db)
    calls = [(torch.ops.s8pp_ext.subcmul, (alpha,)) for alpha in (1.0, 0.5, -2.5, 3.0)]
    calls += [(torch.ops.s8pp_ext.subcmul_int, (alpha,)) for alpha in (1, -3, 7)]
    calls.append((torch.ops.s8pp_ext.subcmul_default, ()))
    for call, alpha in calls:
        want = torch.ops.aten._test_serialization_subcmul(a, b, *alpha)
        if not da.is_floating_point and want.is_floating_point():
            # an integer self minus a floating product: sub.Tensor's wrapper refuses its alpha 1 there (its
            # route carries alpha as a double where both tensors are floating or both integral)
            with pytest.raises(RuntimeError, match="shimgen: sub.Tensor: alpha=1: .*SHIMGEN_OVERLAY"):
                call(a, b, *alpha)
            continue
        _same(call(a, b, *alpha), want)


def test_subcmul_errors_are_atens(ext) -> None:
    a, b = torch.ones(3, 4), torch.ones(5)
    with pytest.raises(RuntimeError) as want:
        torch.ops.aten._test_serialization_subcmul(a, b, 2.0)
    with pytest.raises(RuntimeError) as got:
        torch.ops.s8pp_ext.subcmul(a, b, 2.0)
    assert str(want.value).splitlines()[0] in str(got.value)
