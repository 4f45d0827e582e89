"""torch::stable::item(t) in an extension linked with libtorch alone (kernel `item_scalar`): no dispatcher returns a
Scalar, so the wrapper calls libtorch's shim.h function aoti_torch_item_<dtype> of t's dtype and returns a
shimgen::Scalar of the kind aten's Scalar has. Compared with what torch's own `t.item()` gives: the value (NaN,
-0.0, each dtype's extremes, uint64 beyond int64's range) and its kind; aten's errors raise; complex128, which has
no item shim, is refused naming the remedy."""

from __future__ import annotations

import math
import subprocess

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

// The Scalar's kind (0 bool, 1 integer, 2 unsigned beyond int64, 3 double, 4 complex) and its parts.
int64_t k_kind(Tensor x) { return static_cast<int64_t>(ts::item(x).kind()); }
double k_real(Tensor x) { return ts::item(x).to_complex().real(); }
double k_imag(Tensor x) { return ts::item(x).to_complex().imag(); }
int64_t k_int(Tensor x) { return ts::item(x).to_int64(); }
bool k_bool(Tensor x) { return ts::item(x).to_bool(); }
// the bits of a uint64 (an int carries them back to Python)
int64_t k_bits(Tensor x) { return static_cast<int64_t>(ts::item(x).to_uint64()); }
// aten::_local_scalar_dense: the element at (0, ..., 0) of a tensor of any size
double k_first(Tensor x) { return ts::_local_scalar_dense(x).to_double(); }

STABLE_TORCH_LIBRARY(item_ext, m) {
  m.def("kind(Tensor x) -> int");
  m.def("real(Tensor x) -> float");
  m.def("imag(Tensor x) -> float");
  m.def("int_(Tensor x) -> int");
  m.def("bool_(Tensor x) -> bool");
  m.def("bits(Tensor x) -> int");
  m.def("first(Tensor x) -> float");
}

STABLE_TORCH_LIBRARY_IMPL(item_ext, CompositeExplicitAutograd, m) {
  m.impl("kind", TORCH_BOX(&k_kind));
  m.impl("real", TORCH_BOX(&k_real));
  m.impl("imag", TORCH_BOX(&k_imag));
  m.impl("int_", TORCH_BOX(&k_int));
  m.impl("bool_", TORCH_BOX(&k_bool));
  m.impl("bits", TORCH_BOX(&k_bits));
  m.impl("first", TORCH_BOX(&k_first));
}
"""

BOOL, INT, UINT, DOUBLE, COMPLEX = range(5)


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> str:
    # libtorch alone: no overlay
    return load_extension(tmp_path_factory.mktemp("item"), "item_ext", ["item", "_local_scalar_dense"], CALLS)


def test_the_extension_needs_no_symbol_beyond_libtorch(ext) -> None:
    undefined = subprocess.run(["nm", "-u", "-C", ext], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_item_float32" in undefined  # the route's own call
    assert "shimgen_overlay" not in undefined and "aoti_torch_aten_item" not in undefined


def _same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", [0.0, -0.0, 0.1, -2.25, float("inf"), float("nan"), "max", "tiny"])
def test_floating_items_are_atens(ext, dtype, value) -> None:
    if isinstance(value, str):
        value = getattr(torch.finfo(dtype), value)
    t = torch.tensor(value, dtype=dtype)
    want = t.item()
    assert isinstance(want, float)
    assert torch.ops.item_ext.kind(t) == DOUBLE
    assert _same_float(torch.ops.item_ext.real(t), want)
    assert _same_float(torch.ops.item_ext.real(t.reshape(1, 1)), want)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
                                   torch.uint32])
def test_integral_items_are_atens(ext, dtype) -> None:
    info = torch.iinfo(dtype)
    for v in (0, 1, info.max, info.min):
        t = torch.stack([torch.tensor(v, dtype=dtype)] * 3)[1:2]  # one element at an offset
        want = t.item()
        assert torch.ops.item_ext.kind(t) == INT
        assert torch.ops.item_ext.int_(t) == want


def test_uint64_beyond_int64_stays_unsigned(ext) -> None:
    big = torch.tensor(2**64 - 1, dtype=torch.uint64)
    assert big.item() == 2**64 - 1
    assert torch.ops.item_ext.kind(big) == UINT
    assert torch.ops.item_ext.bits(big) % 2**64 == 2**64 - 1
    assert torch.ops.item_ext.kind(torch.tensor(7, dtype=torch.uint64)) == INT


def test_bool_and_complex64(ext) -> None:
    for b in (True, False):
        assert torch.ops.item_ext.kind(torch.tensor(b)) == BOOL
        assert torch.ops.item_ext.bool_(torch.tensor(b)) is b
    z = torch.tensor(complex(1.5, -0.1), dtype=torch.complex64)
    want = z.item()
    assert torch.ops.item_ext.kind(z) == COMPLEX
    assert torch.ops.item_ext.real(z) == want.real and torch.ops.item_ext.imag(z) == want.imag


@pytest.mark.parametrize("shape", [(0,), (2,), (2, 3)])
def test_atens_errors_raise(ext, shape) -> None:
    t = torch.zeros(shape)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):  # libtorch's own text (2.13 on)
        torch.ops.item_ext.real(t)


def test_complex128_is_refused_naming_the_remedy(ext) -> None:
    t = torch.tensor(1 + 2j, dtype=torch.complex128)
    with pytest.raises(RuntimeError, match=r"shimgen: item.default: libtorch has no item C shim .*SHIMGEN_OVERLAY"):
        torch.ops.item_ext.real(t)


@pytest.mark.parametrize("view", ["contiguous", "transposed", "offset", "0-dim"])
def test_local_scalar_dense_reads_the_first_element_of_any_size(ext, view) -> None:
    """aten's _local_scalar_dense reads the element at self's data pointer, index (0, ..., 0), where item raises
    for more than one element (the prover found the difference: kernel `first_scalar`, not `item_scalar`)."""
    base = torch.arange(12, dtype=torch.float64).view(3, 4) / 7
    t = {"contiguous": base, "transposed": base.t(), "offset": base[1:, 2:], "0-dim": base[2, 3]}[view]
    want = torch.ops.aten._local_scalar_dense(t)
    assert torch.ops.item_ext.first(t) == want
    if t.numel() > 1:
        with pytest.raises(RuntimeError):
            t.item()


def test_local_scalar_dense_of_an_empty_tensor_raises(ext) -> None:
    with pytest.raises(RuntimeError, match="Empty tensor not supported"):
        torch.ops.aten._local_scalar_dense(torch.zeros(0))
    with pytest.raises(RuntimeError, match="Empty tensor not supported"):  # aten's check, mirrored first
        torch.ops.item_ext.first(torch.zeros(0))
