"""mul_(x, n) on a bfloat16 or float16 tensor at target 2.10 (kernel `self_dtype_number`): aten's in-place Scalar
kernel (what ATen's C++ `x.mul_(0.1)` calls, mul_.Scalar) multiplies by the number rounded to x's dtype, where the
functional and Python's `x.mul_(0.1)` (mul_.Tensor with a wrapped number) keep it in float; the wrapper calls
mul_.Tensor with the number as a 0-dim tensor of x's dtype. One extension, built at target 2.10 against the installed
headers and linked with libtorch alone, is run on the installed torch and on each runtime venv: values bit for bit
(NaN where aten has NaN), the result is self; a call autograd records and a complex number are the sibling's (its
`shimgen:` refusal), as before."""

from __future__ import annotations

import pytest

from shimgen.generate import pipeline
from tests.children import run_on
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_mul_(Tensor x, double n) { return ts::mul_(x, n); }
Tensor k_mul_int_(Tensor x, int64_t n) { return ts::mul_(x, n); }

STABLE_TORCH_LIBRARY(self_dtype_number, m) {
  m.def("mul_(Tensor(a!) x, float n) -> Tensor(a!)");
  m.def("mul_int_(Tensor(a!) x, int n) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(self_dtype_number, CompositeExplicitAutograd, m) {
  m.impl("mul_", TORCH_BOX(&k_mul_));
  m.impl("mul_int_", TORCH_BOX(&k_mul_int_));
}
"""

CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.self_dtype_number
bad, done = [], 0

def check(label, x, n, fn):
    global done
    done += 1
    want = torch.ops.aten.mul_.Scalar(x.clone(), n)
    a = x.clone()
    got = fn(a, n)
    ok = got.dtype == want.dtype and torch.equal(got.isnan(), want.isnan()) and torch.equal(
        got.nan_to_num(), want.nan_to_num()) and got.data_ptr() == a.data_ptr()
    if not ok:
        bad.append(f"BAD {label}")

g = torch.Generator().manual_seed(5)
NUMBERS = [0.1, -0.3, 1 / 3, 7.7, 1e-3, 0.5, 1 + 2**-8 + 2**-30, 70000.0, float("inf"), float("nan")]
for dtype in (torch.bfloat16, torch.float16):
    for shape in ((2, 3), (), (7, 19), (1000,)):
        x = (torch.randn(shape, generator=g, dtype=torch.float64) * 3).to(dtype)
        if x.numel() > 8:
            x.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -0.0])
        for n in NUMBERS:
            check(f"{dtype} {shape} {n}", x, n, ops.mul_)
        for n in (3, -2, 2**40 + 1):
            check(f"{dtype} {shape} int {n}", x, n, ops.mul_int_)
        check(f"{dtype} transposed", x.t() if x.dim() == 2 else x, 0.1, ops.mul_)
# where this kernel differs from the functional: aten's in-place kernel rounds the number (2.9.1-2.15.0)
x = torch.tensor([-2.09375, 2.21875], dtype=torch.bfloat16)
assert not torch.equal(torch.ops.aten.mul_.Scalar(x.clone(), 0.1), torch.mul(x, 0.1))
refused = 0
try:
    ops.mul_(torch.randn(3, dtype=torch.bfloat16, requires_grad=True) * 1, 0.1)
except RuntimeError as e:
    refused += "shimgen: mul_.Scalar" in str(e)
print("COMPARED", done, "REFUSED", refused)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("self_dtype_number")
    files, _ = pipeline.generate(["mul", "mul_"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "k.cpp").write_text(CALLS)
    out = str(root / "k.so")
    build_so(str(root / "k.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_mul_in_place_is_atens_in_place_kernel(lib, name) -> None:
    proc = run_on(name, CHECK, lib)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    head = next(line for line in lines if line.startswith("COMPARED")).split()
    assert int(head[1]) == 2 * 4 * (10 + 3 + 1) and int(head[3]) == 1, proc.stdout
