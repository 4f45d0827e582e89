"""Compositions of aten's CompositeImplicitAutograd functions, in an extension linked with libtorch
alone (no overlay), compared with aten given what the caller wrote: _test_serialization_subcmul (kernel `subcmul`:
`self - (other * alpha)` by mul.Scalar's and sub.Tensor's wrappers) and _pad_packed_sequence (kernel `pad_packed`:
aten's PackedSequence.cpp as the same calls by their wrappers), as torch.nn.utils.rnn.pad_packed_sequence calls it) and isin.Scalar_Tensor (kernel `wrapped_numbers` with
`unwrapped_at`: aten's two paths promote the number differently) and its out= (kernel `out` with `empty_first`)."""

from __future__ import annotations

import warnings

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
Tensor k_pad(Tensor d, Tensor bs, bool bf, double pv, int64_t tl) {
  return std::get<0>(ts::_pad_packed_sequence(d, bs, bf, pv, tl));
}
Tensor k_pad_int(Tensor d, Tensor bs, bool bf, int64_t pv, int64_t tl) {
  return std::get<0>(ts::_pad_packed_sequence(d, bs, bf, pv, tl));
}
Tensor k_pad_lengths(Tensor d, Tensor bs, bool bf, double pv, int64_t tl) {
  return std::get<1>(ts::_pad_packed_sequence(d, bs, bf, pv, tl));
}

Tensor k_isin(double e, Tensor t, bool invert) { return ts::isin(e, t, false, invert); }
Tensor k_isin_int(int64_t e, Tensor t) { return ts::isin(e, t); }
Tensor k_isin_out(Tensor o, double e, Tensor t) { return ts::isin_out(o, e, t); }

STABLE_TORCH_LIBRARY(s8pp_ext, m) {
  m.def("subcmul(Tensor s, Tensor o, float alpha) -> Tensor");
  m.def("subcmul_int(Tensor s, Tensor o, int alpha) -> Tensor");
  m.def("subcmul_default(Tensor s, Tensor o) -> Tensor");
  m.def("pad(Tensor d, Tensor bs, bool bf, float pv, int tl) -> Tensor");
  m.def("pad_int(Tensor d, Tensor bs, bool bf, int pv, int tl) -> Tensor");
  m.def("pad_lengths(Tensor d, Tensor bs, bool bf, float pv, int tl) -> Tensor");
  m.def("isin(float e, Tensor t, bool invert) -> Tensor");
  m.def("isin_int(int e, Tensor t) -> Tensor");
  m.def("isin_out(Tensor(a!) o, float e, Tensor t) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(s8pp_ext, CompositeExplicitAutograd, m) {
  m.impl("subcmul", TORCH_BOX(&k_subcmul));
  m.impl("subcmul_int", TORCH_BOX(&k_subcmul_int));
  m.impl("subcmul_default", TORCH_BOX(&k_subcmul_default));
  m.impl("pad", TORCH_BOX(&k_pad));
  m.impl("pad_int", TORCH_BOX(&k_pad_int));
  m.impl("pad_lengths", TORCH_BOX(&k_pad_lengths));
  m.impl("isin", TORCH_BOX(&k_isin));
  m.impl("isin_int", TORCH_BOX(&k_isin_int));
  m.impl("isin_out", TORCH_BOX(&k_isin_out));
}
"""

OPS = ["_test_serialization_subcmul", "_pad_packed_sequence", "isin"]


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
        # an integer self minus a floating product too: sub.Tensor's route carries its alpha 1 as a double where
        # the common dtype is floating
        _same(call(a, b, *alpha), want)


def test_subcmul_errors_are_atens(ext) -> None:
    a, b = torch.ones(3, 4), torch.ones(5)
    with pytest.raises(RuntimeError) as want:
        torch.ops.aten._test_serialization_subcmul(a, b, 2.0)
    with pytest.raises(RuntimeError) as got:
        torch.ops.s8pp_ext.subcmul(a, b, 2.0)
    assert str(want.value).splitlines()[0] in str(got.value)


def _packed(dtype, lengths, features=(3,)):
    """A PackedSequence as torch.nn.utils.rnn packs it: data and batch_sizes (CPU int64)."""
    g = torch.Generator().manual_seed(len(lengths))
    seqs = [torch.randn(n, *features, generator=g, dtype=torch.float64).mul(4).round().to(dtype) for n in lengths]
    return torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.float16])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2], [4, 4, 4], [6, 1]])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_packed_sequence_is_atens(ext, dtype, lengths, batch_first) -> None:
    p = _packed(dtype, lengths)
    for padding, total in ((0.0, 0), (-1.5, 0), (0.0, max(lengths) + 2)):
        want, want_lengths = torch.ops.aten._pad_packed_sequence(p.data, p.batch_sizes, batch_first, padding, total)
        got = torch.ops.s8pp_ext.pad(p.data, p.batch_sizes, batch_first, padding, total)
        _same(got, want)
        lengths_got = torch.ops.s8pp_ext.pad_lengths(p.data, p.batch_sizes, batch_first, padding, total)
        assert lengths_got.dtype == torch.int64 and torch.equal(lengths_got, want_lengths)
    want = torch.ops.aten._pad_packed_sequence(p.data, p.batch_sizes, batch_first, 7, 0)[0]
    _same(torch.ops.s8pp_ext.pad_int(p.data, p.batch_sizes, batch_first, 7, 0), want)


def test_pad_packed_sequence_errors_and_refusals(ext) -> None:
    p = _packed(torch.float32, [3, 2])
    for bs, total in ((p.batch_sizes.int(), 0), (p.batch_sizes, 1), (torch.tensor([], dtype=torch.int64), 0)):
        with pytest.raises(RuntimeError) as want:
            torch.ops.aten._pad_packed_sequence(p.data, bs, False, 0.0, total)
        with pytest.raises(RuntimeError, match="shimgen: _pad_packed_sequence.default: .*aten raises") as got:
            torch.ops.s8pp_ext.pad(p.data, bs, False, 0.0, total)
        first = str(want.value).splitlines()[0]
        assert first.split(",")[0] in str(got.value)
    # batch sizes that grow: aten writes out of its lengths' bounds there
    with pytest.raises(RuntimeError, match="shimgen: _pad_packed_sequence.default: batch_sizes that grow"):
        torch.ops.s8pp_ext.pad(torch.ones(3, 2), torch.tensor([1, 2]), False, 0.0, 0)


@pytest.mark.parametrize("n", [3, 9, 10, 40])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32])
def test_isin_of_a_number_is_atens_on_both_of_its_paths(ext, n, dtype) -> None:
    """Below 10 test elements aten promotes the wrapped number (0.1 in float32 matches float32's 0.1); from 10 on it
    sorts the number's own float64 tensor with them (it does not): the wrapper follows both."""
    base = torch.tensor([0.1, 0.5, 16777216, 16777217, 3, -2.5, 1e10] * 6, dtype=torch.float64)[:n]
    t = base.to(dtype)
    for e in (0.1, 0.5, 3.0, 16777217.0, 1e10, -2.5, 7.0):
        for invert in (False, True):
            want = torch.isin(e, t, invert=invert)
            try:
                got = torch.ops.s8pp_ext.isin(e, t, invert)
            except RuntimeError as err:  # a number out of the range of the dtype aten computes it in
                assert "shimgen: isin.Scalar_Tensor: element=" in str(err) and "out of the range" in str(err)
                continue
            assert got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want), (e, invert)
    for e in (3, 16777217, 2**40, -1):
        try:
            got = torch.ops.s8pp_ext.isin_int(e, t)
        except RuntimeError as err:
            assert "out of the range" in str(err)
            continue
        assert torch.equal(got, torch.isin(e, t)), e


@pytest.mark.parametrize("make_out", [lambda: torch.empty((), dtype=torch.bool), lambda: torch.empty(0, dtype=torch.bool),
                                      lambda: torch.zeros(5, dtype=torch.bool)], ids=["exact", "empty", "five"])
@pytest.mark.parametrize("n", [3, 12])
def test_isin_out_is_atens_warning_included(ext, make_out, n, capfd) -> None:
    """aten's meta sizes out [0] first: it warns even for an out of the exact shape (0-dim), as the wrapper does
    (a call inside an extension warns through c10's handler, on stderr; aten's Python call through warnings)."""
    t = torch.tensor([0.1, 0.5, 3.0] * 4, dtype=torch.float32)[:n]
    resized = "was resized since it had shape"
    counts = []
    for call in (lambda: torch.isin(0.1, t, out=make_out()), lambda: torch.ops.s8pp_ext.isin_out(make_out(), 0.1, t)):
        capfd.readouterr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        text = capfd.readouterr().err + "".join(str(w.message) for w in caught)
        counts.append((text.count(resized), result))
    (want_n, want), (got_n, got) = counts
    assert got.shape == want.shape and got.stride() == want.stride() and torch.equal(got, want)
    assert got_n == want_n
    with pytest.raises(RuntimeError, match="shimgen: isin.Scalar_Tensor_out: out's dtype differs .*aten raises"):
        torch.ops.s8pp_ext.isin_out(torch.empty((), dtype=torch.float32), 0.1, t)
