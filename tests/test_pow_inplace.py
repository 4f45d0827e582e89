"""`pow_(y, e)` carries `pow(y, e)`'s proofs: kernel `inplace` (data/scalar_facts.yaml pow_.Scalar, via
pow.Tensor_Scalar) computes it out of place through pow's own wrapper (its number rules: 2 as mul, 0.5 as sqrt, ...)
and copies the result into self under aten's in-place rules, on a clone of self where autograd records the call.
Before, pow_.Scalar went to its Tensor sibling, which refused every common exponent ("has not proven this op's
Tensor overload equal to it for this number"). The extension is built at target 2.10 in the default build (libtorch
alone) and compared with aten given what the caller wrote, values, dtype, in-place identity and gradients."""

from __future__ import annotations

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_pow_(Tensor x, double e) { return ts::pow_(x, e); }
Tensor k_pow_int_(Tensor x, int64_t e) { return ts::pow_(x, e); }

STABLE_TORCH_LIBRARY(pow_inplace, m) {
  m.def("pow_(Tensor(a!) x, float e) -> Tensor(a!)");
  m.def("pow_int_(Tensor(a!) x, int e) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(pow_inplace, CompositeImplicitAutograd, m) {
  m.impl("pow_", TORCH_BOX(&k_pow_));
  m.impl("pow_int_", TORCH_BOX(&k_pow_int_));
}
"""


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    root = tmp_path_factory.mktemp("pow_inplace")
    files, _ = pipeline.generate(["pow_.Scalar", "pow.Tensor_Scalar"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "pow_inplace.cpp").write_text(CALLS)
    lib = str(root / "pow_inplace.so")
    build_so(str(root / "pow_inplace.cpp"), lib, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    torch.ops.load_library(lib)
    return torch.ops.pow_inplace


def _sample(dtype) -> torch.Tensor:
    t = torch.randn(5, 7, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 3
    t.view(-1)[:5] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")])
    return t.to(dtype) if dtype.is_floating_point else t.nan_to_num(0, 0, 0).round().clamp(-9, 9).to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", [2, 2.0, 0.5, 3, -1, 1.5])
def test_pow_inplace_is_atens_wherever_pow_computes(ops, dtype, e) -> None:
    x = _sample(dtype)
    call = ops.pow_int_ if isinstance(e, int) else ops.pow_
    try:
        want = x.clone().pow_(e)
        functional = torch.ops.aten.pow.Tensor_Scalar(x, e)  # aten's own, for the cells shimgen refuses below
    except RuntimeError as err:
        with pytest.raises(RuntimeError, match=str(err).splitlines()[0][:40]):
            call(x.clone(), e)
        return
    y = x.clone()
    try:
        got = call(y, e)
    except RuntimeError as err:  # only where pow(x, e) itself is refused (a cell no rule or sibling proves)
        assert str(err).startswith("shimgen: pow"), str(err)
        assert _same(functional, want)
        return
    assert got.data_ptr() == y.data_ptr() and _same(y, want), (dtype, e)


@pytest.mark.parametrize("e", [2, 2.0])
def test_pow_inplace_of_two_is_exact_with_gradients(ops, e) -> None:
    """The issue's call, pow_(y, 2), on a non-leaf requiring grad: aten's values and aten's gradient."""
    x = _sample(torch.float64).nan_to_num(0.0, 0.0, 0.0)
    w = torch.linspace(-2, 2, 35, dtype=torch.float64).view(5, 7)
    grads = []
    for fn in (ops.pow_int_ if isinstance(e, int) else ops.pow_, torch.Tensor.pow_):
        leaf = x.clone().requires_grad_()
        y = leaf * 1.0
        fn(y, e)
        (y * w).sum().backward()
        grads.append((y.detach(), leaf.grad))
    assert _same(grads[0][0], grads[1][0]) and _same(grads[0][1], grads[1][1])


def test_integer_tensor_to_a_float_power_raises_and_an_integer_power_is_atens(ops) -> None:
    """aten refuses int64 ** 2.0 in place (the float result cannot be cast to Long); the composition raises too, never
    a result: pow(x, 2.0)'s own refusal of that number on integer tensors (the exactness rules), else aten's error."""
    x = _sample(torch.int64)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        x.clone().pow_(2.0)
    with pytest.raises(RuntimeError, match=r"can't be cast to the desired output type Long|shimgen: pow\.Tensor_"):
        ops.pow_(x.clone(), 2.0)
    assert _same(ops.pow_int_(x.clone(), 2), x.clone().pow_(2))
