"""renorm, renorm_ and renorm.out in an extension linked with libtorch alone (kernel `renorm_two`; in place and out=
as kernels `inplace` and `out` over it): aten's renorm kernel computes the norm over every dim but `dim` with
linalg_vector_norm (float for half / bfloat16), the factor `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` in the
norm's dtype, then self * factor into a new contiguous tensor; the wrapper makes the same computation with aten calls,
for p = 2. Compared with torch.renorm given what the caller wrote: values, dtype, strides, errors; another p, more
than 3 dims and a call autograd records (renorm's derivative is its own) are refused naming the remedy."""

from __future__ import annotations

import subprocess

import pytest
import torch

from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_renorm(Tensor x, double p, int64_t dim, double maxnorm) { return ts::renorm(x, p, dim, maxnorm); }
Tensor k_renorm_int(Tensor x, int64_t p, int64_t dim, int64_t maxnorm) { return ts::renorm(x, p, dim, maxnorm); }
Tensor k_renorm_(Tensor x, double p, int64_t dim, double maxnorm) { return ts::renorm_(x, p, dim, maxnorm); }
Tensor k_renorm_out(Tensor o, Tensor x, double p, int64_t dim, double maxnorm) {
  return ts::renorm_out(o, x, p, dim, maxnorm);
}

STABLE_TORCH_LIBRARY(renorm_ext, m) {
  m.def("renorm(Tensor x, float p, int dim, float maxnorm) -> Tensor");
  m.def("renorm_int(Tensor x, int p, int dim, int maxnorm) -> Tensor");
  m.def("renorm_(Tensor(a!) x, float p, int dim, float maxnorm) -> Tensor(a!)");
  m.def("renorm_out(Tensor(a!) o, Tensor x, float p, int dim, float maxnorm) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(renorm_ext, CompositeExplicitAutograd, m) {
  m.impl("renorm", TORCH_BOX(&k_renorm));
  m.impl("renorm_int", TORCH_BOX(&k_renorm_int));
  m.impl("renorm_", TORCH_BOX(&k_renorm_));
  m.impl("renorm_out", TORCH_BOX(&k_renorm_out));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    lib = load_extension(tmp_path_factory.mktemp("renorm"), "renorm_ext", ["renorm", "renorm_"], CALLS)
    return torch.ops.renorm_ext, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)


def _sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * 3).to(dtype)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext[1]], capture_output=True, text=True, check=True).stdout
    for shim in ("aoti_torch_aten_renorm", "aoti_torch_aten_linalg", "shimgen_overlay"):
        assert shim not in out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64])
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5), (0, 3), (1, 4)])
def test_functional_in_place_and_out_are_atens(ext, dtype, shape) -> None:
    ops, _ = ext
    x = _sample(shape, dtype)
    for dim in range(-len(shape), len(shape)):
        for maxnorm in (0.0, 0.5, 4.0, 1e10):  # below and above the norms
            want = torch.renorm(x, 2, dim, maxnorm)
            assert _same(ops.renorm(x, 2.0, dim, maxnorm), want), (dim, maxnorm)
            mine, atens = x.clone(), x.clone()
            ops.renorm_(mine, 2.0, dim, maxnorm)
            atens.renorm_(2, dim, maxnorm)
            assert _same(mine, atens)
            o_mine, o_aten = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            ops.renorm_out(o_mine, x, 2.0, dim, maxnorm)
            torch.renorm(x, 2, dim, maxnorm, out=o_aten)
            assert _same(o_mine, o_aten)
    t = x.transpose(0, -1)  # not contiguous: aten's result is a new contiguous tensor
    assert _same(ops.renorm(t, 2.0, 0, 1.0), torch.renorm(t, 2, 0, 1.0))
    assert _same(ops.renorm_int(x, 2, 0, 3), torch.renorm(x, 2, 0, 3))


def test_atens_errors_and_the_refusals(ext) -> None:
    ops, _ = ext
    x = _sample((3, 4), torch.float32)
    for p in (1.0, 3.0, float("inf")):  # aten computes them with linalg_vector_norm of that p
        torch.renorm(x, p, 0, 1.0)
        with pytest.raises(RuntimeError, match=r"shimgen: renorm.default: p=.*only p = 2.*SHIMGEN_OVERLAY"):
            ops.renorm(x, p, 0, 1.0)
    with pytest.raises(RuntimeError, match=r"shimgen: renorm.default: a tensor of more than 3 dimensions"):
        ops.renorm(_sample((2, 2, 2, 2), torch.float32), 2.0, 0, 1.0)
    for bad, args in ((x, (0.0, 0, 1.0)), (x, (2.0, 0, -1.0)), (x[0], (2.0, 0, 1.0)), (x, (2.0, 2, 1.0))):
        with pytest.raises((RuntimeError, IndexError)):  # aten raises for each: p 0, maxnorm < 0, 1-D, dim 2
            torch.renorm(bad, *args)
        with pytest.raises(RuntimeError, match="aten raises"):
            ops.renorm(bad, *args)
    with pytest.raises(RuntimeError):  # aten: linalg_vector_norm refuses an integer tensor; so does the route
        ops.renorm(torch.ones(3, 4, dtype=torch.int64), 2.0, 0, 1.0)


def test_autograd_is_refused_where_it_records(ext) -> None:
    ops, _ = ext
    leaf = _sample((3, 4), torch.float64).requires_grad_()
    with pytest.raises(RuntimeError, match=r"shimgen: renorm.default: autograd records this call"):
        ops.renorm(leaf, 2.0, 0, 1.0)
    with torch.no_grad():  # aten records nothing: computed
        assert _same(ops.renorm(leaf, 2.0, 0, 1.0), torch.renorm(leaf, 2, 0, 1.0))
    with pytest.raises(RuntimeError, match="out="):  # aten's out= autograd error
        ops.renorm_out(torch.empty(0, dtype=torch.float64), leaf, 2.0, 0, 1.0)
