"""The factories' out= forms and scalar_tensor with libtorch alone (kernels `range_out`, `full_out`, `scalar_full`,
and `item_numbers` over linspace.Tensor_Tensor_out / logspace.Tensor_Tensor_out:
shimgen/generate/routes/composition.py).

aten computes a factory's out= in out's dtype (arange(0, 1, 0.25, out=<int64>) is arange(..., dtype=int64), not a
float range cast), resizes out only where its number of elements differs (arange warning on a non-empty out, range
and full quietly), and otherwise writes into out's own shape. Each call below is compared bit for bit (values,
dtype, shape, strides) with aten given what the caller wrote; refusals are asserted with their messages."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_arange_i(int64_t end, Tensor out) { ts::arange_out(out, end); return out; }
Tensor k_arange_f(double start, double end, double step, Tensor out) {
  ts::arange_out(out, start, end, step);
  return out;
}
Tensor k_arange_ii(int64_t start, int64_t end, int64_t step, Tensor out) {
  ts::arange_out(out, start, end, step);
  return out;
}
Tensor k_range_f(double start, double end, double step, Tensor out) {
  ts::range_out(out, start, end, step);
  return out;
}
Tensor k_range_i(int64_t start, int64_t end, Tensor out) { ts::range_out(out, start, end); return out; }
Tensor k_linspace(double start, double end, int64_t steps, Tensor out) {
  ts::linspace_out(out, start, end, steps);
  return out;
}
Tensor k_linspace_i(int64_t start, int64_t end, int64_t steps, Tensor out) {
  ts::linspace_out(out, start, end, steps);
  return out;
}
Tensor k_logspace(double start, double end, int64_t steps, double base, Tensor out) {
  ts::logspace_out(out, start, end, steps, base);
  return out;
}
Tensor k_full_f(int64_t a, int64_t b, double v, Tensor out) {
  std::vector<int64_t> size{a, b};
  ts::full_out(out, size, v);
  return out;
}
Tensor k_full_i(int64_t a, int64_t v, Tensor out) {
  std::vector<int64_t> size{a};
  ts::full_out(out, size, v);
  return out;
}
Tensor k_scalar_tensor_f(double s) { return ts::scalar_tensor(s); }
Tensor k_scalar_tensor_i(int64_t s) { return ts::scalar_tensor(s); }
Tensor k_scalar_tensor_b(bool s) { return ts::scalar_tensor(s); }
Tensor k_scalar_tensor_like(double s, Tensor like) { return ts::scalar_tensor(s, like.scalar_type()); }
Tensor k_scalar_tensor_like_i(int64_t s, Tensor like) { return ts::scalar_tensor(s, like.scalar_type()); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("arange_i(int end, Tensor(a!) out) -> Tensor(a!)");
  m.def("arange_f(float start, float end, float step, Tensor(a!) out) -> Tensor(a!)");
  m.def("arange_ii(int start, int end, int step, Tensor(a!) out) -> Tensor(a!)");
  m.def("range_f(float start, float end, float step, Tensor(a!) out) -> Tensor(a!)");
  m.def("range_i(int start, int end, Tensor(a!) out) -> Tensor(a!)");
  m.def("linspace(float start, float end, int steps, Tensor(a!) out) -> Tensor(a!)");
  m.def("linspace_i(int start, int end, int steps, Tensor(a!) out) -> Tensor(a!)");
  m.def("logspace(float start, float end, int steps, float base, Tensor(a!) out) -> Tensor(a!)");
  m.def("full_f(int a, int b, float v, Tensor(a!) out) -> Tensor(a!)");
  m.def("full_i(int a, int v, Tensor(a!) out) -> Tensor(a!)");
  m.def("scalar_tensor_f(float s) -> Tensor");
  m.def("scalar_tensor_i(int s) -> Tensor");
  m.def("scalar_tensor_b(bool s) -> Tensor");
  m.def("scalar_tensor_like(float s, Tensor like) -> Tensor");
  m.def("scalar_tensor_like_i(int s, Tensor like) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("arange_i", TORCH_BOX(&k_arange_i));
  m.impl("arange_f", TORCH_BOX(&k_arange_f));
  m.impl("arange_ii", TORCH_BOX(&k_arange_ii));
  m.impl("range_f", TORCH_BOX(&k_range_f));
  m.impl("range_i", TORCH_BOX(&k_range_i));
  m.impl("linspace", TORCH_BOX(&k_linspace));
  m.impl("linspace_i", TORCH_BOX(&k_linspace_i));
  m.impl("logspace", TORCH_BOX(&k_logspace));
  m.impl("full_f", TORCH_BOX(&k_full_f));
  m.impl("full_i", TORCH_BOX(&k_full_i));
  m.impl("scalar_tensor_f", TORCH_BOX(&k_scalar_tensor_f));
  m.impl("scalar_tensor_i", TORCH_BOX(&k_scalar_tensor_i));
  m.impl("scalar_tensor_b", TORCH_BOX(&k_scalar_tensor_b));
  m.impl("scalar_tensor_like", TORCH_BOX(&k_scalar_tensor_like));
  m.impl("scalar_tensor_like_i", TORCH_BOX(&k_scalar_tensor_like_i));
}
"""

OPS = ["arange", "range", "linspace", "logspace", "full", "scalar_tensor"]
A = torch.ops.aten


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("factory_outs")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "factory_outs.cpp"
    src.write_text(CALLS.replace("NS", "factory_outs_ext"))
    lib = str(root / "factory_outs.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone: no SHIMGEN_OVERLAY
    torch.ops.load_library(lib)
    return torch.ops.factory_outs_ext, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit for bit: dtype, shape, strides and every value (NaN where NaN is, each zero's sign)."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num()) and torch.equal(
            a.signbit(), b.signbit())
    return torch.equal(a, b)


def _outs(dtype):
    """Out tensors of every kind aten treats apart: new, of the result's length or not, another shape, strided."""
    return [lambda: torch.empty(0, dtype=dtype), lambda: torch.zeros(7, dtype=dtype),
            lambda: torch.zeros(2, 4, dtype=dtype), lambda: torch.zeros(4, 2, dtype=dtype).t(),
            lambda: torch.zeros(16, dtype=dtype)[::2]]


def _warned(fn):
    """fn()'s result, and whether it warned: c10's warnings from inside an op reach stderr (fd 2), from 2.15 also
    Python's warnings."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os.dup2(err.fileno(), 2)
        try:
            result = fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return result, "Warning" in err.read().decode(errors="replace") or bool(caught)


def _check(mine, theirs, make):
    a, b = make(), make()
    want, warned = _warned(lambda: theirs(a))
    got, mine_warned = _warned(lambda: mine(b))
    assert got is not None and _same(a, b) and _same(want, got), (a, b)
    assert warned == mine_warned  # aten's resize warning where aten gives one (its text may differ)
    return b


def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    for name in ("arange", "range", "linspace", "logspace", "full_out", "scalar_tensor"):
        assert f"aoti_torch_aten_{name}" not in out  # no overlay shim (libtorch exports none of them)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int32, torch.uint8])
def test_arange_and_range_compute_in_outs_dtype(ext, dtype) -> None:
    ops, _ = ext
    for make in _outs(dtype):
        _check(lambda o: ops.arange_i(8, o), lambda o: A.arange.out(8, out=o), make)
        _check(lambda o: ops.arange_ii(-3, 13, 2, o), lambda o: A.arange.start_out(-3, 13, 2, out=o), make)
        if dtype.is_floating_point:
            _check(lambda o: ops.arange_f(0.0, 2.0, 0.25, o), lambda o: A.arange.start_out(0.0, 2.0, 0.25, out=o),
                   make)
            _check(lambda o: ops.range_f(-1.0, 0.75, 0.25, o), lambda o: A.range.out(-1.0, 0.75, 0.25, out=o), make)
        else:
            _check(lambda o: ops.range_f(-1.0, 6.75, 2.0, o), lambda o: A.range.out(-1.0, 6.75, 2.0, out=o), make)
        _check(lambda o: ops.range_i(2, 9, o), lambda o: A.range.out_(2, 9, out=o), make)
    # in an int64 out, aten truncates the numbers first: [0, 1) with step 0.25 is step 0 there, not a cast; a
    # range whose bounds releases check apart (in double or in int64) is refused
    if dtype == torch.int64:
        with pytest.raises((RuntimeError, ValueError), match="step must be nonzero"):
            A.arange.start_out(0.0, 1.0, 0.25, out=torch.empty(0, dtype=dtype))
        with pytest.raises(RuntimeError, match="shimgen: arange.start_out: step=0.25.*disagree here"):
            ops.arange_f(0.0, 1.0, 0.25, torch.empty(0, dtype=dtype))
        out = _check(lambda o: ops.arange_f(0.5, 7.0, 2.0, o), lambda o: A.arange.start_out(0.5, 7.0, 2.0, out=o),
                     lambda: torch.empty(0, dtype=dtype))
        assert out.tolist() == [0, 2, 4, 6]  # arange(0, 7, 2): the numbers truncated in out's dtype


def test_out_keeps_its_shape_where_its_length_is_the_ranges(ext) -> None:
    ops, _ = ext
    out = _check(lambda o: ops.arange_i(8, o), lambda o: A.arange.out(8, out=o), lambda: torch.zeros(2, 4))
    assert out.shape == (2, 4) and out[1].tolist() == [4, 5, 6, 7]
    assert _warned(lambda: ops.arange_i(3, torch.zeros(5)))[1]  # a non-empty out of another length: resized with
    assert not _warned(lambda: ops.range_i(0, 2, torch.zeros(5)))[1]  # a warning as aten's arange warns; range: quiet


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.complex64])
def test_linspace_and_logspace_are_atens(ext, dtype) -> None:
    ops, _ = ext
    for make in _outs(dtype):
        _check(lambda o: ops.linspace(-1.5, 3.1, 8, o), lambda o: A.linspace.out(-1.5, 3.1, 8, out=o), make)
        _check(lambda o: ops.linspace_i(-7, 100, 8, o), lambda o: A.linspace.out(-7, 100, 8, out=o), make)
        _check(lambda o: ops.logspace(0.1, 2.0, 8, 2.0, o), lambda o: A.logspace.out(0.1, 2.0, 8, 2.0, out=o), make)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ops.linspace(0.0, 1.0, -1, torch.empty(0, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool,
                                   torch.complex64])
def test_full_out_fills_in_outs_dtype(ext, dtype) -> None:
    ops, _ = ext
    for make in [*_outs(dtype), lambda: torch.zeros(2, 4, dtype=dtype)]:
        _check(lambda o: ops.full_f(2, 4, 2.5, o), lambda o: A.full.out([2, 4], 2.5, out=o), make)
        _check(lambda o: ops.full_i(3, 1, o), lambda o: A.full.out([3], 1, out=o), make)
    if dtype == torch.uint8:  # aten raises; so does the fill_ wrapper, which carries no 300 into uint8 exactly
        with pytest.raises(RuntimeError, match="value cannot be converted"):
            A.full.out([3], 300, out=torch.empty(0, dtype=dtype))
        with pytest.raises(RuntimeError, match="shimgen: fill_.Scalar: value=300"):
            ops.full_i(3, 300, torch.empty(0, dtype=dtype))


@pytest.mark.parametrize("default", [torch.float32, torch.float64])
def test_scalar_tensor_is_atens(ext, default) -> None:
    ops, _ = ext
    old = torch.get_default_dtype()
    torch.set_default_dtype(default)
    try:
        for v in (0.5, -0.0, float("inf"), 0.1):
            assert _same(ops.scalar_tensor_f(v), torch.scalar_tensor(v))
        if default == torch.float32:
            with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
                ops.scalar_tensor_f(1e300)  # as aten raises
        for v in (3, -(2**40)):  # dtype None: the default float dtype, not full's int64
            assert _same(ops.scalar_tensor_i(v), torch.scalar_tensor(v))
        assert _same(ops.scalar_tensor_b(True), torch.scalar_tensor(True))
        for like in (torch.int64, torch.uint8, torch.bool, torch.float16, torch.complex64):
            assert _same(ops.scalar_tensor_like(2.75, torch.empty(0, dtype=like)),
                         torch.scalar_tensor(2.75, dtype=like))
        assert _same(ops.scalar_tensor_like_i(2**40 + 1, torch.empty(0, dtype=torch.int64)),
                     torch.scalar_tensor(2**40 + 1, dtype=torch.int64))  # exact: not through a double
    finally:
        torch.set_default_dtype(old)


def test_refusals_name_the_reason(ext) -> None:
    ops, _ = ext
    with pytest.raises(RuntimeError, match=r"shimgen: arange\.start_out: step=0\.1.*not exact in the dtype"):
        ops.arange_f(0.0, 1.0, 0.1, torch.empty(0, dtype=torch.float16))  # float16's vector rounding: refused
    leaf = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        ops.arange_i(3, leaf)  # aten raises too
    with pytest.raises(RuntimeError, match="shimgen: range.out_: out requires grad and has a grad_fn"):
        ops.range_i(0, 2, leaf * 1)  # aten records a backward that raises: refused
    with torch.no_grad():
        with pytest.raises(RuntimeError, match="shimgen: full.out: out requires grad and must be resized"):
            ops.full_i(4, 1, leaf)
        assert _same(ops.full_i(3, 1, leaf), A.full.out([3], 1, out=torch.zeros(3)))  # no resize: aten's answer
    with pytest.raises(RuntimeError, match="shimgen: linspace.out: out is on the meta device"):
        ops.linspace(0.0, 1.0, 3, torch.empty(0, device="meta"))

