"""addmm's route through libtorch's legacy out= shim (aoti_torch_addmm_out) under autocast: aten's addmm is in
autocast's lower-precision list (CUDA's and CPU's alike), which casts self, mat1 and mat2 (floating, not float64)
to the autocast dtype before the call; an out= call is not in that list. The wrapper probes the dtype aten's
dispatch gives aten::mm for its operands (scalar.h dispatch_probe) and, where it differs, casts the operands as
autocast's policy does (scalar.h autocast_like), then calls the shim: what autocast computes, instead of a refusal.
Checked with CPU's autocast (bfloat16 and float16), whose policy for addmm is CUDA's: dtype and values equal to
aten's under the same autocast, and outside autocast the call unchanged."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_addmm(Tensor self, Tensor a, Tensor b, double beta, double alpha) {
  return ts::addmm(self, a, b, beta, alpha);
}

STABLE_TORCH_LIBRARY(autocast_addmm, m) {
  m.def("addmm(Tensor self, Tensor a, Tensor b, float beta, float alpha) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(autocast_addmm, CompositeExplicitAutograd, m) {
  m.impl("addmm", TORCH_BOX(&k_addmm));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    load_extension(tmp_path_factory.mktemp("autocast_addmm"), "autocast_addmm", ["addmm"], CALLS)
    return torch.ops.autocast_addmm


def _operands(dtype):
    g = torch.Generator().manual_seed(5)
    return (torch.randn(3, 5, generator=g, dtype=dtype), torch.randn(3, 4, generator=g, dtype=dtype),
            torch.randn(4, 5, generator=g, dtype=dtype))


@pytest.mark.parametrize("autocast_dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_addmm_under_autocast_is_atens(ext, autocast_dtype, dtype) -> None:
    self, a, b = _operands(dtype)
    with torch.autocast("cpu", dtype=autocast_dtype):
        want = torch.addmm(self, a, b, beta=0.5, alpha=2.0)
        got = ext.addmm(self, a, b, 0.5, 2.0)
    assert got.dtype == want.dtype
    assert torch.equal(got, want)
    if dtype == torch.float32:
        assert got.dtype == autocast_dtype  # the case that was refused: aten computes it in the autocast dtype


def test_addmm_mixed_operands_under_autocast(ext) -> None:
    # a float64 bias is left alone by autocast, float32 matrices are cast: aten then raises, and so does the wrapper
    self, a, b = _operands(torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(RuntimeError, match="same dtype"):
            torch.addmm(self.double(), a, b)
        with pytest.raises(RuntimeError, match="same dtype"):
            ext.addmm(self.double(), a, b, 1.0, 1.0)


def test_addmm_without_autocast_unchanged(ext) -> None:
    self, a, b = _operands(torch.float32)
    want = torch.addmm(self, a, b, beta=0.5, alpha=2.0)
    got = ext.addmm(self, a, b, 0.5, 2.0)
    assert got.dtype == torch.float32 and torch.equal(got, want)
