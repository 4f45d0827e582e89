"""torch.compile's runtime checks called eagerly (kernels assert_scalar, constrain_range, constrain_range_for_size and
their functional_ forms) in an extension linked with libtorch alone: aten's checks, in its order and words, on the
concrete number; compared with what torch.ops.aten gives for the same call."""

from __future__ import annotations

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_assert(Tensor token, int64_t n) {
  ts::_assert_scalar(n, "the check failed");
  return ts::_functional_assert_scalar(n, "the check failed", token);
}
Tensor k_assert_double(Tensor token, double n) { return ts::_functional_assert_scalar(n, "nope", token); }
Tensor k_range(Tensor token, int64_t size, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  ts::sym_constrain_range(size, lo, hi);
  return ts::_functional_sym_constrain_range(size, lo, hi, token);
}
Tensor k_range_for_size(Tensor token, int64_t size, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  ts::sym_constrain_range_for_size(size, lo, hi);
  return ts::_functional_sym_constrain_range_for_size(size, lo, hi, token);
}
Tensor k_range_double(Tensor token, double size) { return ts::_functional_sym_constrain_range(size, 0, 10, token); }

STABLE_TORCH_LIBRARY(checks_ext, m) {
  m.def("assert_(Tensor token, int n) -> Tensor");
  m.def("assert_double(Tensor token, float n) -> Tensor");
  m.def("range(Tensor token, int size, int? lo, int? hi) -> Tensor");
  m.def("range_for_size(Tensor token, int size, int? lo, int? hi) -> Tensor");
  m.def("range_double(Tensor token, float size) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(checks_ext, CompositeExplicitAutograd, m) {
  m.impl("assert_", TORCH_BOX(&k_assert));
  m.impl("assert_double", TORCH_BOX(&k_assert_double));
  m.impl("range", TORCH_BOX(&k_range));
  m.impl("range_for_size", TORCH_BOX(&k_range_for_size));
  m.impl("range_double", TORCH_BOX(&k_range_double));
}
"""

OPS = ["_assert_scalar", "_functional_assert_scalar", "sym_constrain_range", "sym_constrain_range_for_size",
       "_functional_sym_constrain_range", "_functional_sym_constrain_range_for_size"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> None:
    # libtorch alone: no overlay
    load_extension(tmp_path_factory.mktemp("checks"), "checks_ext", OPS, CALLS)


def _outcome(fn):
    try:
        return "ok", fn()
    except RuntimeError as e:
        return "error", str(e).split("\n")[0]


def _same(want, got) -> bool:
    if want[0] != got[0]:
        return False
    if want[0] == "error":
        return want[1] in got[1]  # aten's words
    return torch.equal(want[1], got[1]) and want[1].data_ptr() != got[1].data_ptr()  # a clone


TOKEN = torch.arange(3.0)


@pytest.mark.parametrize("n", [1, 0, -1, 2**62])
def test_assert_scalar(ext, n) -> None:
    def aten():
        torch.ops.aten._assert_scalar(n, "the check failed")
        return torch.ops.aten._functional_assert_scalar(n, "the check failed", TOKEN)
    assert _same(_outcome(aten), _outcome(lambda: torch.ops.checks_ext.assert_(TOKEN, n)))


@pytest.mark.parametrize("n", [0.0, 2.5, float("nan")])
def test_assert_scalar_of_a_double(ext, n) -> None:
    want = _outcome(lambda: torch.ops.aten._functional_assert_scalar(n, "nope", TOKEN))
    assert _same(want, _outcome(lambda: torch.ops.checks_ext.assert_double(TOKEN, n)))


BOUNDS = [None, -3, 0, 2, 3, 6, 10]


@pytest.mark.parametrize("size", [5, -1, 0, 10, 11])
def test_constrain_range(ext, size) -> None:
    for lo in BOUNDS:
        for hi in BOUNDS:
            def aten():
                torch.ops.aten.sym_constrain_range(size, min=lo, max=hi)
                return torch.ops.aten._functional_sym_constrain_range(size, lo, hi, TOKEN)

            def aten_for_size():
                torch.ops.aten.sym_constrain_range_for_size(size, min=lo, max=hi)
                return torch.ops.aten._functional_sym_constrain_range_for_size(size, lo, hi, TOKEN)
            assert _same(_outcome(aten), _outcome(lambda: torch.ops.checks_ext.range(TOKEN, size, lo, hi))), (lo, hi)
            assert _same(_outcome(aten_for_size),
                         _outcome(lambda: torch.ops.checks_ext.range_for_size(TOKEN, size, lo, hi))), (lo, hi)


def test_a_floating_point_size_is_refused(ext) -> None:
    """aten converts a floating-point size with checks of its own (5.5 passes as 5, 1e300 overflows): refused."""
    torch.ops.aten._functional_sym_constrain_range(5.5, 0, 10, TOKEN)
    with pytest.raises(RuntimeError, match=r"shimgen: _functional_sym_constrain_range.default: a size that is not"):
        torch.ops.checks_ext.range_double(TOKEN, 5.5)
