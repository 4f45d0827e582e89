"""Half types on the sibling routes: a number float16 / bfloat16 holds exactly crosses as a 0-dim tensor in the
cells data/scalar_facts.yaml proves for such numbers (`cells_exact`), so `lerp(a, b, 0.25)` and `mul_(x, 2.0)` on
bfloat16 compute what aten computes; a number they do not hold (0.1: aten computes with the float 0.1f, a 0-dim
bfloat16 tensor would round it first) is computed by `lerp` from target 2.10 on contiguous CPU tensors (kernel
cpu_number: aten's loop with the weight in float) and by `mul_` as aten's in-place kernel computes it, which does
round it first (kernel self_dtype_number); where autograd records the mul_ call, the sibling refuses it. The Python
model (scalar_model) and the header agree."""

from __future__ import annotations

import pytest
import torch

from shimgen.facts import scalar_facts as scalars
from shimgen.proofs.provers.scalar_model import Model
from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_lerp(Tensor a, Tensor b, double w) { return ts::lerp(a, b, w); }
Tensor k_mul_(Tensor x, double v) { Tensor y = ts::clone(x); ts::mul_(y, v); return y; }

STABLE_TORCH_LIBRARY(half_cells, m) {
  m.def("lerp(Tensor a, Tensor b, float w) -> Tensor");
  m.def("mul_(Tensor x, float v) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(half_cells, CompositeExplicitAutograd, m) {
  m.impl("lerp", TORCH_BOX(&k_lerp));
  m.impl("mul_", TORCH_BOX(&k_mul_));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    load_extension(tmp_path_factory.mktemp("half_cells"), "half_cells", ["lerp", "mul_", "clone"], CALLS)
    return torch.ops.half_cells


def test_the_data_proves_exact_half_cells() -> None:
    facts = scalars.load()
    for op in ("lerp.Scalar", "mul_.Scalar"):
        bit = scalars.cell(scalars.class_of("BFloat16"), "double")
        assert facts.cells_exact.get(op, 0) & bit, op


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("w", [0.25, 2.0, -0.5, 1.5])
def test_exact_numbers_compute(ext, dtype, w) -> None:
    g = torch.Generator().manual_seed(2)
    a, b = (torch.randn(4, 5, generator=g).to(dtype) for _ in range(2))
    got, want = ext.lerp(a, b, w), torch.lerp(a, b, w)
    assert got.dtype == want.dtype and torch.equal(got, want)
    got, want = ext.mul_(a, w), a.clone().mul_(w)
    assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_inexact_numbers_computed_by_the_kernel_or_refused(ext, dtype) -> None:
    a, b = torch.randn(4, 5).to(dtype), torch.randn(4, 5).to(dtype)
    got, want = ext.lerp(a, b, 0.1), torch.lerp(a, b, 0.1)
    assert got.dtype == want.dtype and torch.equal(got, want)
    with pytest.raises(RuntimeError, match=r"shimgen: lerp\.Scalar: weight=0\.1"):  # strided: the sibling's
        ext.lerp(a.t(), b.t(), 0.1)
    # mul_: aten's in-place kernel rounds 0.1 to the dtype (kernel self_dtype_number); where autograd records the
    # call it is the sibling's, which holds no cell for 0.1
    got, want = ext.mul_(a.clone(), 0.1), torch.ops.aten.mul_.Scalar(a.clone(), 0.1)
    assert got.dtype == want.dtype and torch.equal(got, want)
    with pytest.raises(RuntimeError, match=r"shimgen: mul_\.Scalar: other=0\.1"):
        ext.mul_(a.clone().requires_grad_() * 1, 0.1)


def test_model_takes_the_exact_cell() -> None:
    facts = scalars.load()
    model = Model(facts, "Float")
    op = "mul_.Scalar"
    args = ([("BFloat16", False)], [2.0], facts.cells[op], facts.cells_fit[op], facts.cells_exact[op])
    assert isinstance(model.stand_in_dtypes(*args), list)
    args = ([("BFloat16", False)], [0.1], facts.cells[op], facts.cells_fit[op], facts.cells_exact[op])
    assert isinstance(model.stand_in_dtypes(*args), str)
