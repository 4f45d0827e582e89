"""linalg_vector_norm, norm(x, p) and norm(x, p, dim, keepdim) (aten's linalg_vector_norm, impl_func_norm) with a
real ord other than 2 (0, 1, inf, -inf, 3, 0.5, -1.5), in float, double, bfloat16 and float16, at target 2.10 in the default build (the rows' `otherwise`, kernel section `vector_norm_cpu`): no
libtorch route carries an ord other than 2, so aten's CPU norm kernel is replicated (binary_kernel_reduce: each output
accumulated one element at a time in memory order; a single output of 32768 elements or more split into libtorch's
own parallel_for chunks, combined in order) on a contiguous floating CPU tensor outside autograd; every other
call a `shimgen:` error naming why. norm(x, 2, dim, keepdim) is aten's own op with p pushed as None (kernel
`none_value`).

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv with one and two threads: values bit for bit (NaN payloads and each zero's
sign included), dtype, shape and strides against aten's op, over shapes, dims, keepdim and values with zeros, infs
and NaNs; the refusals by name."""

from __future__ import annotations

import os

import pytest

from shimgen.generate import pipeline
from tests.children import run_on
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_norm(Tensor x, double ord, std::vector<int64_t> dim, bool all, bool keepdim) {
  if (all) {
    return ts::linalg_vector_norm(x, ord, std::nullopt, keepdim);
  }
  return ts::linalg_vector_norm(x, ord, dim, keepdim);
}
Tensor k_norm_int(Tensor x, int64_t ord) { return ts::linalg_vector_norm(x, ord, {1}); }
Tensor k_norm_p(Tensor x, double p) { return ts::norm(x, p); }
Tensor k_norm_dim(Tensor x, double p, bool none, int64_t dim, bool keepdim) {
  return ts::norm(x, none ? std::nullopt : std::optional<shimgen::Scalar>(p), {dim}, keepdim);
}
Tensor k_norm_dtype(Tensor x, double ord, bool wide) {
  using torch::headeronly::ScalarType;
  return ts::linalg_vector_norm(x, ord, {1}, false, wide ? ScalarType::Double : ScalarType::Float);
}

STABLE_TORCH_LIBRARY(vnorm_cpu, m) {
  m.def("norm(Tensor x, float ord, int[] dim, bool all, bool keepdim) -> Tensor");
  m.def("norm_int(Tensor x, int ord) -> Tensor");
  m.def("norm_p(Tensor x, float p) -> Tensor");
  m.def("norm_dim(Tensor x, float p, bool none, int dim, bool keepdim) -> Tensor");
  m.def("norm_dtype(Tensor x, float ord, bool wide) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(vnorm_cpu, CompositeExplicitAutograd, m) {
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("norm_int", TORCH_BOX(&k_norm_int));
  m.impl("norm_p", TORCH_BOX(&k_norm_p));
  m.impl("norm_dim", TORCH_BOX(&k_norm_dim));
  m.impl("norm_dtype", TORCH_BOX(&k_norm_dtype));
}
"""

# Run by each runtime's interpreter (SHIMGEN_THREADS set): one line per difference.
CHECK = r"""
import os, sys, torch
torch.ops.load_library(sys.argv[1])
torch.set_num_threads(int(os.environ["SHIMGEN_THREADS"]))
ops = torch.ops.vnorm_cpu
bad, done, refused = [], 0, 0

def bits(t):
    return t.view({torch.float64: torch.int64, torch.float32: torch.int32}.get(t.dtype, torch.int16))

def check(label, got, want):
    global done
    done += 1
    meta = (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
    if not (meta and torch.equal(bits(got), bits(want))):
        bad.append(f"BAD {label}: {got.dtype} {tuple(got.shape)} {got.flatten()[:4].tolist()} vs "
                   f"{want.dtype} {tuple(want.shape)} {want.flatten()[:4].tolist()}")

def refuses(label, fn, text):
    global refused
    try:
        fn()
        bad.append(f"BAD {label}: computed")
    except RuntimeError as e:
        if text in str(e) and ("shimgen: linalg_vector_norm.default: ord=" in str(e) or
                               "shimgen: norm.Scalar: p=" in str(e) or "shimgen: norm.ScalarOpt_dim: p=" in str(e)):
            refused += 1
        else:
            bad.append(f"BAD {label}: {e}")

g = torch.Generator().manual_seed(3)
def sample(shape, dtype, specials):
    x = torch.randn(shape, generator=g, dtype=torch.float64).mul_(10).to(dtype)
    if specials and x.numel() >= 8:
        flat = x.view(-1)
        flat[1] = 0.0
        flat[2] = -0.0
        flat[3] = float("inf")
        flat[5] = float("-inf")
        flat[6] = float("nan")
        flat[7] = -float("nan")
    return x

# the ords of binary_kernel_reduce's ops: NormZeroOps, NormOneOps, AbsMaxOps, AbsMinOps, and NormOps (the rest)
ORDS = (1.0, 0.0, float("inf"), float("-inf"), 3.0, 0.5, -1.5)
shapes = [((5, 7), [[1], [0], [-1], [0, 1], []]), ((3, 4, 5), [[0, 2], [1], [2, 0], [-2, -1]]), ((6,), [[0]]),
          ((2, 1, 3), [[1], [0, 1]]), ((1, 70001), [[1], [0, 1]]), ((3, 40000), [[1], [0]]), ((100003,), [[0]]),
          ((), [[]])]
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for shape, dims in shapes:
        for specials in (False, True):
            x = sample(shape, dtype, specials)
            for ordv in ORDS:
                for dim in dims + [None]:
                    for keepdim in (False, True):
                        got = ops.norm(x, ordv, dim or [], dim is None, keepdim)
                        want = torch.linalg.vector_norm(x, ordv, dim, keepdim)
                        check(f"{dtype} {shape} {specials} {ordv} {dim} {keepdim}", got, want)
    for ordv in ORDS:  # norm(x, p): aten's linalg_vector_norm over every dim
        x = sample((300, 7), dtype, True)
        check(f"{dtype} norm.Scalar {ordv}", ops.norm_p(x, ordv), torch.ops.aten.norm.Scalar(x, ordv))
    x = sample((30, 7), dtype, True)
    for ordv, none in ((2.0, False), (2.0, True), (1.0, False), (float("inf"), False), (3.0, False)):  # norm(x, p, dim)
        for dim, keepdim in ((1, True), (0, False), (-1, False)):
            want = torch.ops.aten.norm.ScalarOpt_dim(x, None if none else ordv, [dim], keepdim)
            check(f"{dtype} norm.ScalarOpt_dim {ordv} {none} {dim}", ops.norm_dim(x, ordv, none, dim, keepdim), want)
    x = sample((4, 6), dtype, True)
    check(f"{dtype} int ord", ops.norm_int(x, 1), torch.linalg.vector_norm(x, 1, [1]))
    check(f"{dtype} negative view", ops.norm(x.neg().conj(), 1.0, [1], False, False),
          torch.linalg.vector_norm(-x, 1.0, [1]))
x = sample((4, 6), torch.float32, False)
refuses("strided ord 3", lambda: ops.norm(x.t(), 3.0, [1], False, False), "not contiguous")
refuses("strided", lambda: ops.norm(x.t(), 1.0, [1], False, False), "not contiguous")
refuses("empty", lambda: ops.norm(torch.empty(0, 3), 1.0, [1], False, False), "or empty")
refuses("int64", lambda: ops.norm(torch.ones(3, 4, dtype=torch.int64), 1.0, [1], False, False), "not a floating")
refuses("complex", lambda: ops.norm(x.to(torch.complex64), 1.0, [1], False, False), "not a floating")
refuses("narrower dtype", lambda: ops.norm_dtype(x.double(), 3.0, False), "not the tensor's or a wider one")
# a wider dtype: aten reads the tensor as that dtype first
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    for ordv in (1.0, 3.0, float("inf")):
        for wide in (False, True) if dtype != torch.float32 else (True,):
            into = torch.float64 if wide else torch.float32
            y = sample((30, 7), dtype, True)
            check(f"{dtype} dtype={into} {ordv}", ops.norm_dtype(y, ordv, wide),
                  torch.linalg.vector_norm(y, ordv, [1], dtype=into))
refuses("dim", lambda: ops.norm(x, 1.0, [1, 1], False, False), "twice")
refuses("autograd", lambda: ops.norm(x.clone().requires_grad_(), 1.0, [1], False, False), "autograd would record")
with torch.no_grad():
    check("no_grad", ops.norm(x.clone().requires_grad_(), 1.0, [1], False, False), torch.linalg.vector_norm(x, 1, [1]))
print("COMPARED", done, "REFUSED", refused)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("vector_norm_cpu")
    ops = ["linalg_vector_norm", "norm.Scalar", "norm.ScalarOpt_dim"]
    files, _ = pipeline.generate(ops, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "vnorm.cpp").write_text(CALLS)
    out = str(root / "vnorm.so")
    build_so(str(root / "vnorm.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit(lib, name) -> None:
    for threads in (1, 2):
        env = dict(os.environ, SHIMGEN_THREADS=str(threads))
        proc = run_on(name, CHECK, lib, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = proc.stdout.splitlines()
        assert [line for line in lines if line.startswith("BAD")] == [], (threads, proc.stdout[-3000:])
        head = next(line for line in lines if line.startswith("COMPARED")).split()
        assert int(head[1]) == 4 * 2 * 7 * 26 * 2 + 4 * 7 + 4 * 15 + 4 * 2 + 3 * 5 + 1 and int(head[3]) == 8, proc.stdout
