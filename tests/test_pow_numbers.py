"""pow(x, e) for the exponents aten's Scalar kernel computes as another op (pow_tensor_scalar: 0.5 is sqrt, -0.5
rsqrt, -1 reciprocal, 2 x * x), in an extension linked with libtorch alone: the number rules of
data/scalar_facts.yaml send them to that op's wrapper. For 0.5, -0.5 and -1 aten's gradient formula differs from
the target's (pow's backward is e * x^(e-1)), so those rules are `no_grad`: taken only where autograd records nothing,
and otherwise the call is refused as before, never given a different gradient. Compared with ATen given what the
caller wrote: values (NaN where NaN), dtype, shape; registered as CompositeImplicitAutograd, refusals where autograd
records the call."""

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

Tensor k_pow(Tensor x, double e) { return ts::pow(x, e); }
Tensor k_pow_int(Tensor x, int64_t e) { return ts::pow(x, e); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("pow(Tensor x, float e) -> Tensor");
  m.def("pow_int(Tensor x, int e) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("pow", TORCH_BOX(&k_pow));
  m.impl("pow_int", TORCH_BOX(&k_pow_int));
}
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("pow") / "gen")
    files, _ = pipeline.generate(["pow"], None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build(gen: str, root, ns: str, key: str) -> None:
    src = root / f"{ns}.cpp"
    src.write_text(CALLS.replace("NS", ns).replace("KEY", key))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> None:
    _build(gen, tmp_path_factory.mktemp("pow_cpu"), "pow_cpu", "CPU")


@pytest.fixture(scope="module")
def ext_implicit(gen, tmp_path_factory) -> None:
    _build(gen, tmp_path_factory.mktemp("pow_implicit"), "pow_implicit", "CompositeImplicitAutograd")


def _sample(dtype) -> torch.Tensor:
    t = torch.randn(5, 7, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 4
    t.view(-1)[:6] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-300])
    return t.to(dtype) if dtype.is_floating_point else t.nan_to_num(0, 0, 0).round().clamp(-100, 100).to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


FLOATS = [torch.float32, torch.float64, torch.bfloat16]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


# (2.0 on an integer tensor is no rule's: pow(i, 2.0) is float and aten computes it with std::pow)
@pytest.mark.parametrize("dtype,e", [(d, e) for e in (0.5, -0.5, -1.0, 2.0, 3.0) for d in FLOATS + INTS
                                     if e not in (2.0, 3.0) or d.is_floating_point])
def test_double_exponents_are_exact(ext, dtype, e) -> None:
    # (bfloat16's -0.5 is no rule's: aten's rsqrt kernel there rounds the sqrt in its scalar tail, which kernel
    # cpu_number replicates; the rsqrt op's does not)
    x = _sample(dtype)
    assert _same(torch.ops.pow_cpu.pow(x, e), torch.pow(x, e)), (dtype, e)


@pytest.mark.parametrize("dtype", FLOATS)
def test_integer_minus_one_is_reciprocal(ext, dtype) -> None:
    x = _sample(dtype)
    assert _same(torch.ops.pow_cpu.pow_int(x, -1), torch.pow(x, -1))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_integer_three_is_x_times_x_times_x(ext, dtype) -> None:
    """pow_tensor_scalar computes an exponent of 3 as (x * x) * x (integers wrapping on overflow: int8's
    100 ** 3 included); the rule `kernel: cube` as two aten::mul calls."""
    x = _sample(dtype)
    got = torch.ops.pow_cpu.pow_int(x, 3)
    assert _same(got, torch.pow(x, 3))
    if dtype == torch.int8:
        assert not torch.equal(got.to(torch.int64), torch.pow(x.to(torch.int64), 3))  # wrapped, as aten


@pytest.mark.parametrize("e", [3, 3.0])
def test_half_cube_is_atens_std_pow(ext, e) -> None:
    """float16's kernel is std::pow in float, rounded once: (x * x) * x rounds twice and differs (the prover
    found it), so the rule leaves float16 out, and kernel cpu_number computes aten's std::pow loop instead."""
    x = _sample(torch.float16)
    assert not _same((x * x) * x, torch.pow(x, e))
    call = torch.ops.pow_cpu.pow_int if isinstance(e, int) else torch.ops.pow_cpu.pow
    assert _same(call(x, e), torch.pow(x, e))


def test_integer_tensor_to_minus_one_keeps_atens_error(ext) -> None:
    """aten refuses an integer tensor to a negative integer power; reciprocal would return floats: no rule."""
    x = _sample(torch.int64)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        torch.pow(x, -1)
    with pytest.raises(RuntimeError):
        torch.ops.pow_cpu.pow_int(x, -1)


def test_why_the_rules_are_no_grad() -> None:
    """The data's reason: under a non-unit upstream gradient aten's pow backward and sqrt's differ in the last bit
    (a gradient of ones agrees, which is why the provers weight it)."""
    x = _sample(torch.float64).abs() + 0.5
    w = torch.arange(1, 36, dtype=torch.float64).view(5, 7) / 3
    grads = []
    for fn in (lambda t: torch.pow(t, 0.5), torch.sqrt):
        xl = x.clone().requires_grad_()
        (fn(xl) * w).sum().backward()
        grads.append(xl.grad)
    assert not _same(*grads)


@pytest.mark.parametrize("e", [0.5, -0.5, -1.0, 3.0])
def test_no_grad_rules_refuse_where_autograd_records(ext_implicit, e) -> None:
    """aten's gradient (e * x^(e-1)) differs from sqrt's, rsqrt's or reciprocal's: where autograd would record the call,
    the rule is not taken and the route refuses the number, as it did before the rule."""
    x = _sample(torch.float64).abs() + 0.5
    with pytest.raises(RuntimeError, match=r"shimgen: pow.Tensor_Scalar: exponent="):
        torch.ops.pow_implicit.pow(x.clone().requires_grad_(), e)
    with torch.no_grad():
        assert _same(torch.ops.pow_implicit.pow(x.clone().requires_grad_(), e), torch.pow(x, e))
    assert _same(torch.ops.pow_implicit.pow(x, e), torch.pow(x, e))  # nothing requires grad
