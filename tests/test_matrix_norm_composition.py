"""linalg_matrix_norm (Scalar ord) in an extension linked with libtorch alone (kernel `matrix_norm_two`): aten's
CompositeImplicitAutograd linalg_matrix_norm computes ord = 2 / -2 as amax / amin of linalg_svdvals of the input with
the two dims moved last (LinearAlgebra.cpp), after its own checks; the wrapper makes the same calls in the same order.
Compared with torch.linalg.matrix_norm given what the caller wrote: values, dtype, shape, strides, errors and
gradients; its out= (aten's CompositeImplicit out=: the functional, a dtype check, resize_output, copy_, which
autograd records); ord 1 / inf (aten's linalg_vector_norm with ord 1, which no libtorch route carries) and ord 2 on an empty
matrix (aten's answer changed in 2.10) are refused naming the remedy."""

from __future__ import annotations

import subprocess
import warnings

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

#include <vector>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_norm(Tensor a, double ord, int64_t d0, int64_t d1, bool keepdim) {
  std::vector<int64_t> dim{d0, d1};
  return ts::linalg_matrix_norm(a, ord, dim, keepdim);
}
Tensor k_norm_int(Tensor a, int64_t ord) { return ts::linalg_matrix_norm(a, ord); }
Tensor k_norm_out(Tensor o, Tensor a, double ord, int64_t d0, int64_t d1, bool keepdim) {
  std::vector<int64_t> dim{d0, d1};
  return ts::linalg_matrix_norm_out(o, a, ord, dim, keepdim);
}
Tensor k_norm_double(Tensor a, int64_t ord) {
  return ts::linalg_matrix_norm(a, ord, {-2, -1}, false, torch::headeronly::ScalarType::Double);
}

STABLE_TORCH_LIBRARY(matrix_norm_ext, m) {
  m.def("norm(Tensor a, float ord, int d0, int d1, bool keepdim) -> Tensor");
  m.def("norm_int(Tensor a, int ord) -> Tensor");
  m.def("norm_out(Tensor(a!) o, Tensor a, float ord, int d0, int d1, bool keepdim) -> Tensor(a!)");
  m.def("norm_double(Tensor a, int ord) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(matrix_norm_ext, CompositeImplicitAutograd, m) {
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("norm_int", TORCH_BOX(&k_norm_int));
  m.impl("norm_out", TORCH_BOX(&k_norm_out));
  m.impl("norm_double", TORCH_BOX(&k_norm_double));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    lib = load_extension(tmp_path_factory.mktemp("matrix_norm"), "matrix_norm_ext", ["linalg_matrix_norm"], CALLS)
    return torch.ops.matrix_norm_ext, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)


def _sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * 3).to(dtype)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext[1]], capture_output=True, text=True, check=True).stdout
    for shim in ("aoti_torch_aten_linalg", "shimgen_overlay"):
        assert shim not in out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape,dims", [((4, 6), (-2, -1)), ((5, 3), (1, 0)), ((2, 3, 4), (0, 2)),
                                        ((2, 3, 4, 5), (3, 1)), ((0, 3, 4), (-2, -1))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_ord_2_and_minus_2_are_atens(ext, dtype, shape, dims, keepdim) -> None:
    ops, _ = ext
    a = _sample(shape, dtype)
    for ord in (2.0, -2.0):
        want = torch.linalg.matrix_norm(a, ord, dims, keepdim)
        assert _same(ops.norm(a, ord, *dims, keepdim), want), ord
    t = a.transpose(0, -1)  # not contiguous
    if a.numel():  # (the empty batch transposed is an empty matrix: refused)
        assert _same(ops.norm(t, 2.0, *dims, keepdim), torch.linalg.matrix_norm(t, 2.0, dims, keepdim))


def test_an_int_ord_and_dtype_are_atens(ext) -> None:
    ops, _ = ext
    a = _sample((3, 4, 5), torch.float32, 1)
    assert _same(ops.norm_int(a, 2), torch.linalg.matrix_norm(a, 2))
    assert _same(ops.norm_int(a, -2), torch.linalg.matrix_norm(a, -2))
    assert _same(ops.norm_double(a, 2), torch.linalg.matrix_norm(a, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="dtype should be"):  # aten: a narrowing dtype
        ops.norm_double(a.to(torch.complex64), 2)
    with pytest.raises(RuntimeError):
        torch.linalg.matrix_norm(a.to(torch.complex64), 2, dtype=torch.float64)


def test_gradients_are_atens(ext) -> None:
    ops, _ = ext
    a0 = _sample((3, 4, 5), torch.float64, 2)
    for ord, dims, keepdim in ((2.0, (-2, -1), False), (-2.0, (0, 2), True)):
        grads = []
        for fn in (lambda t: ops.norm(t, ord, *dims, keepdim), lambda t: torch.linalg.matrix_norm(t, ord, dims, keepdim)):
            t = a0.clone().requires_grad_()
            r = fn(t)
            (r * (torch.arange(r.numel(), dtype=r.dtype).view(r.shape) + 1) / 3).sum().backward()
            grads.append(t.grad)
        assert _same(*grads)


def test_atens_errors_and_the_refusals(ext) -> None:
    ops, _ = ext
    a = _sample((3, 4), torch.float32)
    for ord in (1.0, -1.0, float("inf"), -float("inf")):  # aten: linalg_vector_norm with ord 1
        torch.linalg.matrix_norm(a, ord)
        with pytest.raises(RuntimeError, match=r"shimgen: linalg_matrix_norm.default: ord=.*SHIMGEN_OVERLAY"):
            ops.norm(a, ord, -2, -1, False)
    with pytest.raises(RuntimeError, match=r"shimgen: .*empty matrix.*SHIMGEN_OVERLAY"):
        ops.norm(torch.empty(0, 3), 2.0, -2, -1, False)
    for bad, args in ((a, (3.0, -2, -1, False)), (a[0], (2.0, -2, -1, False)), (a.half(), (2.0, -2, -1, False)),
                      (a, (2.0, 0, -2, False)), (a, (2.0, 0, 2, False))):
        with pytest.raises((RuntimeError, IndexError)):  # aten raises for each: ord 3, 1-D, half, equal dims, dim 2
            torch.linalg.matrix_norm(bad, args[0], args[1:3], args[3])
        with pytest.raises(RuntimeError, match="aten raises"):
            ops.norm(bad, *args)
    with pytest.raises(RuntimeError, match="amin"):  # ord -2 on an empty matrix: aten's amin raises, on every release
        ops.norm(torch.empty(0, 3), -2.0, -2, -1, False)


@pytest.mark.parametrize("shape,dims", [((4, 6), (-2, -1)), ((2, 3, 4), (0, 2)), ((2, 3, 4, 5), (3, 1))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_out_is_atens(ext, shape, dims, keepdim) -> None:
    ops, _ = ext
    a = _sample(shape, torch.float32, 3)
    want = torch.linalg.matrix_norm(a, 2.0, dims, keepdim)
    for make in (lambda: torch.empty(0), lambda: torch.zeros(want.shape), lambda: torch.zeros(want.shape).t()
                 if want.dim() == 2 else torch.zeros(want.shape), lambda: torch.zeros(3, 7)):
        mine, atens = make(), make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # aten's resize warning for the non-empty out of another shape
            torch.linalg.matrix_norm(a, 2.0, dims, keepdim, out=atens)
        r = ops.norm_out(mine, a, 2.0, *dims, keepdim)
        assert r.data_ptr() == mine.data_ptr() and _same(mine, atens)
    with pytest.raises(RuntimeError):  # aten: out's dtype must be the result's
        torch.linalg.matrix_norm(a, 2.0, dims, keepdim, out=torch.empty(0, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="aten raises"):
        ops.norm_out(torch.empty(0, dtype=torch.float64), a, 2.0, *dims, keepdim)


def test_out_in_grad_mode_is_recorded_as_atens(ext) -> None:
    # aten's linalg_matrix_norm.out is CompositeImplicit: in grad mode it computes and out gets CopyBackwards
    ops, _ = ext
    a0 = _sample((3, 4, 5), torch.float64, 4)
    grads, outs = [], []
    for fn in (lambda t, o: ops.norm_out(o, t, 2.0, -2, -1, False),
               lambda t, o: torch.linalg.matrix_norm(t, 2.0, (-2, -1), False, out=o)):
        t, o = a0.clone().requires_grad_(), torch.zeros(3, dtype=torch.float64)
        fn(t, o)
        assert o.requires_grad and type(o.grad_fn).__name__.startswith("CopyBackwards")
        (o * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
        grads.append(t.grad)
        outs.append(o.detach())
    assert _same(*outs) and _same(*grads)
    with pytest.raises(RuntimeError, match="requires grad in grad mode"):  # resizing such an out: refused
        ops.norm_out(torch.zeros(0, dtype=torch.float64, requires_grad=True) * 1, a0, 2.0, -2, -1, False)
