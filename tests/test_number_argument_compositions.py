"""Compositions where ATen itself computes the op as other aten ops in an extension linked
with libtorch alone, compared with ATen given what the caller wrote:

- `special_laguerre_polynomial_l.n_scalar`, `special_legendre_polynomial_p.n_scalar` (kernel `wrapped_numbers`):
  aten wraps `n` and calls the Tensor overload; the wrapper makes `n` a 0-dim tensor of the dtype aten promotes it
  to (an integer `n` on an int64 `x` stays int64; a double on an integer `x` is the default dtype).
- `norm.Scalar`, `dist.default` (kernel `number_as_none`): for p = 2 only, aten's `norm(self, p)` is
  `norm.ScalarOpt_dim(self, p, [], false)`, which with p None computes p = 2; aten's `dist(a, b, p)` is
  `norm(a - b, p)`: `sub.Tensor`, then the same. Another p is refused naming the remedy.
- `trapezoid.dx`, `cumulative_trapezoid.dx` (kernels `trapezoid_dx`, `cumulative_trapezoid_dx`): aten's
  CompositeImplicitAutograd functions as the same calls in the same order, `dx` as the double aten takes."""

from __future__ import annotations

import subprocess

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_laguerre(Tensor x, double n) { return ts::special_laguerre_polynomial_l(x, n); }
Tensor k_laguerre_int(Tensor x, int64_t n) { return ts::special_laguerre_polynomial_l(x, n); }
Tensor k_legendre(Tensor x, double n) { return ts::special_legendre_polynomial_p(x, n); }
Tensor k_legendre_int(Tensor x, int64_t n) { return ts::special_legendre_polynomial_p(x, n); }
Tensor k_norm(Tensor x) { return ts::norm(x); }
Tensor k_norm_p(Tensor x, double p) { return ts::norm(x, p); }
Tensor k_dist(Tensor a, Tensor b) { return ts::dist(a, b); }
Tensor k_dist_p(Tensor a, Tensor b, int64_t p) { return ts::dist(a, b, p); }
Tensor k_trapz(Tensor y, double dx, int64_t dim) { return ts::trapezoid(y, dx, dim); }
Tensor k_trapz_int(Tensor y, int64_t dx, int64_t dim) { return ts::trapezoid(y, dx, dim); }
Tensor k_trapz_default(Tensor y) { return ts::trapezoid(y); }
Tensor k_ctrapz(Tensor y, double dx, int64_t dim) { return ts::cumulative_trapezoid(y, dx, dim); }
Tensor k_ctrapz_bool(Tensor y, bool dx) { return ts::cumulative_trapezoid(y, dx); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("laguerre(Tensor x, float n) -> Tensor");
  m.def("laguerre_int(Tensor x, int n) -> Tensor");
  m.def("legendre(Tensor x, float n) -> Tensor");
  m.def("legendre_int(Tensor x, int n) -> Tensor");
  m.def("norm(Tensor x) -> Tensor");
  m.def("norm_p(Tensor x, float p) -> Tensor");
  m.def("dist(Tensor a, Tensor b) -> Tensor");
  m.def("dist_p(Tensor a, Tensor b, int p) -> Tensor");
  m.def("trapz(Tensor y, float dx, int dim) -> Tensor");
  m.def("trapz_int(Tensor y, int dx, int dim) -> Tensor");
  m.def("trapz_default(Tensor y) -> Tensor");
  m.def("ctrapz(Tensor y, float dx, int dim) -> Tensor");
  m.def("ctrapz_bool(Tensor y, bool dx) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("laguerre", TORCH_BOX(&k_laguerre));
  m.impl("laguerre_int", TORCH_BOX(&k_laguerre_int));
  m.impl("legendre", TORCH_BOX(&k_legendre));
  m.impl("legendre_int", TORCH_BOX(&k_legendre_int));
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("norm_p", TORCH_BOX(&k_norm_p));
  m.impl("dist", TORCH_BOX(&k_dist));
  m.impl("dist_p", TORCH_BOX(&k_dist_p));
  m.impl("trapz", TORCH_BOX(&k_trapz));
  m.impl("trapz_int", TORCH_BOX(&k_trapz_int));
  m.impl("trapz_default", TORCH_BOX(&k_trapz_default));
  m.impl("ctrapz", TORCH_BOX(&k_ctrapz));
  m.impl("ctrapz_bool", TORCH_BOX(&k_ctrapz_bool));
}
"""

OPS = ["special_laguerre_polynomial_l.n_scalar", "special_legendre_polynomial_p.n_scalar", "norm.Scalar",
       "dist.default", "trapezoid.dx", "cumulative_trapezoid.dx"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("s7comp")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "s7comp.cpp"
    src.write_text(CALLS.replace("NS", "s7comp"))
    lib = str(root / "s7comp.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone
    torch.ops.load_library(lib)
    return torch.ops.s7comp, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


def _agree(mine, atens) -> bool:
    """The same result, or both raise (aten's error passes through the composition's calls)."""
    try:
        want = atens()
    except RuntimeError:
        with pytest.raises(RuntimeError):
            mine()
        return True
    return _same(mine(), want)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    for shim in ("aoti_torch_aten_special", "aoti_torch_aten_norm", "aoti_torch_aten_dist", "aoti_torch_aten_trapezoid",
                 "aoti_torch_aten_cumulative", "shimgen_overlay"):
        assert shim not in out  # shimgen's overlay shims (libtorch exports aoti_torch_aten_subtract_Tensor)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("name", ["laguerre", "legendre"])
def test_polynomials_with_a_number_n_are_atens(ext, dtype, name) -> None:
    ops, _ = ext
    aten = {"laguerre": torch.special.laguerre_polynomial_l, "legendre": torch.special.legendre_polynomial_p}[name]
    x = (torch.linspace(-1.5, 1.5, 31, dtype=torch.float64) * (4 if not dtype.is_floating_point else 1)).to(dtype)
    # 16777217 rounds to 2^24 in float32, which aten's wrapped int64 does too; 5.7 truncates in the kernel
    for n in (0, 1, 3, 7, -2, 16777217):
        assert _agree(lambda: getattr(ops, f"{name}_int")(x, n), lambda: aten(x, n)), n
    for n in (0.0, 2.0, 5.7, -1.0):
        assert _agree(lambda: getattr(ops, name)(x, n), lambda: aten(x, n)), n


def test_a_number_the_dtype_cannot_hold_is_refused(ext) -> None:
    ops, _ = ext
    x = torch.linspace(-1, 1, 5)
    for n in (float("nan"), 1e300):  # no float32 holds them: refused, never computed from another number
        with pytest.raises(RuntimeError, match=r"shimgen: special_laguerre_polynomial_l.n_scalar: n=.*out of the"):
            ops.laguerre(x, n)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64])
def test_norm_and_dist_with_p_2_are_atens_with_their_gradients(ext, dtype) -> None:
    ops, _ = ext
    g = torch.Generator().manual_seed(7)
    a = (torch.randn(6, 9, generator=g, dtype=torch.float64) * 3).to(dtype)
    b = (torch.randn(9, generator=g, dtype=torch.float64) * 3).to(dtype)  # broadcast against a
    a[1] = 0
    assert _same(ops.norm(a), torch.norm(a))
    assert _same(ops.norm_p(a, 2.0), torch.norm(a, 2.0))
    assert _same(ops.dist(a, b), torch.dist(a, b))
    c = (a * 0.5).to(torch.complex128 if dtype.is_complex else torch.float64)
    assert _same(ops.dist_p(a, c, 2), torch.dist(a, c))  # promotes
    if dtype in (torch.float64, torch.complex64):
        grads = []
        for fn in ((lambda x, y: ops.dist(x, y) * 3), (lambda x, y: torch.dist(x, y) * 3)):
            x, y = a.clone().requires_grad_(), b.clone().requires_grad_()
            fn(x, y).backward()
            grads.append((x.grad, y.grad))
        assert _same(grads[0][0], grads[1][0]) and _same(grads[0][1], grads[1][1])


def test_norm_and_dist_compute_another_p_on_the_cpu_or_refuse_naming_the_remedy(ext) -> None:
    ops, _ = ext
    x = torch.randn(3, 4)
    # another p on a contiguous float CPU tensor is linalg_vector_norm's CPU kernel (tests/test_vector_norm_cpu.py),
    # dist's over a - b, in float, double, bfloat16 and half; on a complex tensor it is refused naming why and the
    # remedy
    y = torch.randn(3, 4)
    for dtype in (torch.float32, torch.bfloat16, torch.half):
        a, b = x.to(dtype), y.to(dtype)
        assert torch.equal(ops.norm_p(a, 1.0), torch.ops.aten.norm.Scalar(a, 1.0)), dtype
        assert torch.equal(ops.norm_p(a, 3.0), torch.ops.aten.norm.Scalar(a, 3.0)), dtype
        for p in (1, 3, 0, 4):
            assert torch.equal(ops.dist_p(a, b, p), torch.dist(a, b, p)), (dtype, p)
    z, w = x.to(torch.complex64), y.to(torch.complex64)
    with pytest.raises(RuntimeError, match=r"shimgen: norm.Scalar: p=3.*not a floating CPU one.*SHIMGEN_OVERLAY"):
        ops.norm_p(z, 3.0)
    with pytest.raises(RuntimeError, match=r"shimgen: dist.default: p=3.*not a floating CPU one.*SHIMGEN_OVERLAY"):
        ops.dist_p(z, w, 3)
    with pytest.raises(RuntimeError):  # aten's norm raises for an integer tensor, after the subtraction
        ops.dist(torch.ones(3, dtype=torch.int64), torch.zeros(3, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_trapezoid_with_a_number_dx_is_atens(ext, dtype) -> None:
    ops, _ = ext
    g = torch.Generator().manual_seed(3)
    y = (torch.randn(6, 9, generator=g, dtype=torch.float64) * 3)
    y = y.to(dtype) if dtype.is_floating_point else y.round().to(dtype)
    for dim in (-1, 0, 1):
        for dx in (0.1, 0.5, -2.5, 3.0):  # 0.1 is no binary fraction: where aten multiplies decides the last bit
            assert _agree(lambda: ops.trapz(y, dx, dim), lambda: torch.trapezoid(y, dx=dx, dim=dim)), (dim, dx)
            assert _agree(lambda: ops.ctrapz(y, dx, dim), lambda: torch.cumulative_trapezoid(y, dx=dx, dim=dim))
        assert _agree(lambda: ops.trapz_int(y, 3, dim), lambda: torch.trapezoid(y, dx=3, dim=dim))
    assert _same(ops.trapz_default(y), torch.trapezoid(y))
    assert _same(ops.trapz(y.t(), 0.1, 0), torch.trapezoid(y.t(), dx=0.1, dim=0))  # not contiguous


def test_trapezoid_of_an_integer_tensor_is_atens(ext) -> None:
    # aten subtracts a float tensor from the int64 sum: sub.Tensor's wrapper carries alpha as a double where the
    # common dtype is floating (not only where every operand is floating);
    # cumulative_trapezoid adds two int64 slices first (integral_add) and then multiplies, which mul's wrapper serves
    i = torch.arange(12).view(3, 4)
    assert _agree(lambda: ext[0].trapz(i, 0.5, 1), lambda: torch.trapezoid(i, dx=0.5, dim=1))
    assert _agree(lambda: ext[0].ctrapz(i, 0.5, 1), lambda: torch.cumulative_trapezoid(i, dx=0.5, dim=1))


def test_trapezoid_empty_dim_bool_and_bad_dim_are_atens(ext) -> None:
    ops, _ = ext
    empty = torch.empty(0, 3, dtype=torch.bool)  # aten: zeros of y's options before its bool check
    assert _same(ops.trapz(empty, 0.5, 0), torch.trapezoid(empty, dx=0.5, dim=0))
    with pytest.raises(RuntimeError, match="bool is not supported"):
        ops.trapz(torch.ones(2, 3, dtype=torch.bool), 0.5, 1)
    with pytest.raises(RuntimeError, match="only support dx as a real number"):
        ops.ctrapz_bool(torch.ones(2, 3), True)
    with pytest.raises(RuntimeError):  # a dim out of range: aten raises too
        ops.trapz(torch.ones(2, 3), 0.5, 2)


def test_trapezoid_gradients_are_atens(ext) -> None:
    ops, _ = ext
    y0 = torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    for mine, atens in ((lambda t: ops.trapz(t, 0.1, 1), lambda t: torch.trapezoid(t, dx=0.1, dim=1)),
                        (lambda t: ops.ctrapz(t, 0.1, 0), lambda t: torch.cumulative_trapezoid(t, dx=0.1, dim=0))):
        grads = []
        for fn in (mine, atens):
            t = y0.clone().requires_grad_()
            r = fn(t)
            (r * (torch.arange(r.numel(), dtype=r.dtype).view(r.shape) + 1) / 3).sum().backward()
            grads.append(t.grad)
        assert _same(*grads)
