"""result_type with a number first (kernel `result_type_numbers`) in an extension linked with libtorch alone:
ATen's result_type with the numbers as wrapped numbers, computed from shimgen's promotion table. Compared with
torch.result_type given what the caller wrote, under both default dtypes; a complex number with a bfloat16 tensor
(aten's answer changed in 2.14) is refused naming the remedy."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

// the ScalarType as a 0-dim tensor of it (the boxed convention returns no ScalarType before 2.10)
Tensor as_tensor(torch::headeronly::ScalarType t, const Tensor& like) { return ts::empty_like(like, t); }
Tensor k_int_tensor(int64_t n, Tensor t) { return as_tensor(ts::result_type(n, t), t); }
Tensor k_double_tensor(double n, Tensor t) { return as_tensor(ts::result_type(n, t), t); }
Tensor k_bool_tensor(bool n, Tensor t) { return as_tensor(ts::result_type(n, t), t); }
Tensor k_complex_tensor(double re, Tensor t) {
  return as_tensor(ts::result_type(shimgen::Scalar(std::complex<double>(re, 1.0)), t), t);
}
Tensor k_int_double(int64_t a, double b, Tensor like) { return as_tensor(ts::result_type(a, b), like); }
Tensor k_bool_int(bool a, int64_t b, Tensor like) { return as_tensor(ts::result_type(a, b), like); }

STABLE_TORCH_LIBRARY(rt_ext, m) {
  m.def("int_tensor(int n, Tensor t) -> Tensor");
  m.def("double_tensor(float n, Tensor t) -> Tensor");
  m.def("bool_tensor(bool n, Tensor t) -> Tensor");
  m.def("complex_tensor(float re, Tensor t) -> Tensor");
  m.def("int_double(int a, float b, Tensor like) -> Tensor");
  m.def("bool_int(bool a, int b, Tensor like) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(rt_ext, CompositeExplicitAutograd, m) {
  m.impl("int_tensor", TORCH_BOX(&k_int_tensor));
  m.impl("double_tensor", TORCH_BOX(&k_double_tensor));
  m.impl("bool_tensor", TORCH_BOX(&k_bool_tensor));
  m.impl("complex_tensor", TORCH_BOX(&k_complex_tensor));
  m.impl("int_double", TORCH_BOX(&k_int_double));
  m.impl("bool_int", TORCH_BOX(&k_bool_int));
}
"""

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
          torch.float64, torch.complex64, torch.complex128]


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> None:
    # libtorch alone: no overlay
    load_extension(tmp_path_factory.mktemp("result_type"), "rt_ext", ["result_type", "empty_like"], CALLS)


@pytest.fixture(params=[torch.float32, torch.float64], ids=["default_float32", "default_float64"])
def default(request):
    old = torch.get_default_dtype()
    torch.set_default_dtype(request.param)
    yield request.param
    torch.set_default_dtype(old)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_number_and_tensor(ext, default, dtype, shape) -> None:
    t = torch.zeros(shape, dtype=dtype)
    ops = torch.ops.rt_ext
    assert ops.int_tensor(3, t).dtype == torch.result_type(3, t)
    assert ops.double_tensor(0.5, t).dtype == torch.result_type(0.5, t)
    assert ops.bool_tensor(True, t).dtype == torch.result_type(True, t)
    if dtype == torch.bfloat16:
        with pytest.raises(RuntimeError, match=r"shimgen: result_type.Scalar_Tensor: .*changed in 2.14.*SHIMGEN_OVERLAY"):
            ops.complex_tensor(1.5, t)
    else:
        assert ops.complex_tensor(1.5, t).dtype == torch.result_type(1.5 + 1j, t)


def test_two_numbers(ext, default) -> None:
    like = torch.zeros(2)
    assert torch.ops.rt_ext.int_double(2, 0.5, like).dtype == torch.result_type(2, 0.5) == default
    assert torch.ops.rt_ext.bool_int(True, 3, like).dtype == torch.result_type(True, 3) == torch.int64
