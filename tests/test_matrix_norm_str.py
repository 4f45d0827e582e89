"""linalg_matrix_norm and linalg_norm with an ord string ("fro", "nuc") at target 2.10 in the default build (kernel
`matrix_norm_str`): on libtorch 2.10-2.13, whose boxed dispatcher leaks converting a str, the wrapper makes aten's own
calls (linalg_vector_norm with ord 2 for "fro"; linalg_svdvals, then a sum, for "nuc"), after aten's checks; from 2.14
it is aten's own op through the dispatcher.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv: values bit for bit, dtype, shape and strides against aten's op, over
dtypes (float32, float64, complex64, and float16 and bfloat16 for "fro"), shapes, dims, keepdim and dtype=; the out=
forms, float64 gradients, and aten's errors."""

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

Tensor k_matrix(Tensor x, std::string ord, std::vector<int64_t> dim, bool keepdim, bool wide) {
  std::optional<torch::headeronly::ScalarType> dtype;
  if (wide) {
    dtype = x.scalar_type() == torch::headeronly::ScalarType::ComplexFloat
        ? torch::headeronly::ScalarType::ComplexDouble
        : torch::headeronly::ScalarType::Double;
  }
  return ts::linalg_matrix_norm(x, ord, dim, keepdim, dtype);
}
Tensor k_fro(Tensor x) { return ts::linalg_matrix_norm(x); }
Tensor k_norm(Tensor x, std::string ord, std::vector<int64_t> dim, bool none, bool keepdim) {
  if (none) {
    return ts::linalg_norm(x, ord, std::nullopt, keepdim);
  }
  return ts::linalg_norm(x, ord, dim, keepdim);
}
Tensor k_out(Tensor x, std::string ord, Tensor out) {
  ts::linalg_matrix_norm_out(out, x, ord);
  return out;
}

STABLE_TORCH_LIBRARY(mnstr, m) {
  m.def("matrix(Tensor x, str ord, int[] dim, bool keepdim, bool wide) -> Tensor");
  m.def("fro(Tensor x) -> Tensor");
  m.def("norm(Tensor x, str ord, int[] dim, bool none, bool keepdim) -> Tensor");
  m.def("out(Tensor x, str ord, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(mnstr, CompositeImplicitAutograd, m) {
  m.impl("matrix", TORCH_BOX(&k_matrix));
  m.impl("fro", TORCH_BOX(&k_fro));
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("out", TORCH_BOX(&k_out));
}
"""

# Run by each runtime's interpreter: one line per difference.
CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.mnstr
bad, done, errors = [], 0, 0

def check(label, got, want):
    global done
    done += 1
    meta = (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
    if want.is_complex():
        got, want = torch.view_as_real(got), torch.view_as_real(want)
    if not (meta and torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(), want.nan_to_num())):
        bad.append(f"BAD {label}: {got.dtype} {tuple(got.shape)} {got.flatten()[:4].tolist()} vs "
                   f"{want.dtype} {tuple(want.shape)} {want.flatten()[:4].tolist()}")

def raises(label, fn, want_fn):
    global errors
    try:
        want_fn()
        bad.append(f"BAD {label}: aten computes")
        return
    except Exception as e:  # IndexError for a dim: any error of aten's
        text = str(e).split("\n")[0]
    try:
        fn()
        bad.append(f"BAD {label}: computed where aten raises {text}")
    except Exception as e:
        if text in str(e) or "(aten raises)" in str(e):
            errors += 1
        else:
            bad.append(f"BAD {label}: {str(e)[:200]} vs {text}")

g = torch.Generator().manual_seed(2)
cases = [((3, 4), [-2, -1]), ((4, 3), [1, 0]), ((2, 3, 4), [0, 2]), ((2, 3, 4), [2, 1]), ((2, 2, 3, 2), [1, 3]),
         ((1, 1), [0, 1]), ((0, 3), [0, 1])]
for dtype in (torch.float32, torch.float64, torch.complex64, torch.float16, torch.bfloat16):
    for shape, dim in cases:
        x = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        for ord in ("fro", "nuc"):
            if ord == "nuc" and dtype in (torch.float16, torch.bfloat16):
                continue
            for keepdim in (False, True):
                for wide in (False, True) if dtype in (torch.float32, torch.complex64) else (False,):
                    w = (torch.complex128 if dtype.is_complex else torch.float64) if wide else None
                    check(f"{dtype} {shape} {ord} {dim} {keepdim} {wide}", ops.matrix(x, ord, dim, keepdim, wide),
                          torch.linalg.matrix_norm(x, ord, dim, keepdim, dtype=w))
                check(f"norm {dtype} {shape} {ord} {dim} {keepdim}", ops.norm(x, ord, dim, False, keepdim),
                      torch.linalg.norm(x, ord, dim, keepdim))
x = torch.randn(5, 6, generator=g)
check("fro default", ops.fro(x), torch.linalg.matrix_norm(x))
check("norm dim None", ops.norm(x, "nuc", [], True, False), torch.linalg.norm(x, "nuc"))
check("transposed", ops.matrix(x.t(), "nuc", [0, 1], False, False), torch.linalg.matrix_norm(x.t(), "nuc"))
for ord in ("fro", "nuc"):
    for kind, out in (("exact", torch.empty(())), ("empty", torch.empty(0))):
        check(f"out {ord} {kind}", ops.out(x, ord, out), torch.linalg.matrix_norm(x, ord))
    grads = []
    for fn in (lambda v: torch.linalg.matrix_norm(v, ord, [0, 2]), lambda v: ops.matrix(v, ord, [0, 2], False, False)):
        leaf = torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(9), dtype=torch.float64).requires_grad_()
        r = fn(leaf)
        (r * torch.arange(1, r.numel() + 1, dtype=r.dtype)).sum().backward()
        grads.append(torch.cat([r.detach().flatten(), leaf.grad.flatten()]))
    check(f"gradient {ord}", grads[1], grads[0])
raises("ord", lambda: ops.matrix(x, "inf", [0, 1], False, False), lambda: torch.linalg.matrix_norm(x, "inf"))
raises("1-D", lambda: ops.matrix(x[0], "fro", [0, 1], False, False), lambda: torch.linalg.matrix_norm(x[0], "fro"))
raises("int", lambda: ops.matrix(torch.ones(2, 2, dtype=torch.int64), "fro", [0, 1], False, False),
       lambda: torch.linalg.matrix_norm(torch.ones(2, 2, dtype=torch.int64), "fro"))
raises("half nuc", lambda: ops.matrix(x.half(), "nuc", [0, 1], False, False), lambda: torch.linalg.matrix_norm(x.half(), "nuc"))
raises("same dims", lambda: ops.matrix(x, "fro", [1, -1], False, False), lambda: torch.linalg.matrix_norm(x, "fro", [1, -1]))
raises("norm 3 dims", lambda: ops.norm(x, "fro", [0, 1, 1], False, False), lambda: torch.linalg.norm(x, "fro", [0, 1, 1]))
raises("norm 3-D", lambda: ops.norm(torch.ones(2, 2, 2), "fro", [], True, False), lambda: torch.linalg.norm(torch.ones(2, 2, 2), "fro"))
print("COMPARED", done, "ERRORS", errors)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("matrix_norm_str")
    files, _ = pipeline.generate(["linalg_matrix_norm", "linalg_norm"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "mnstr.cpp").write_text(CALLS)
    out = str(root / "mnstr.so")
    build_so(str(root / "mnstr.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit(lib, name) -> None:
    proc = run_on(name, CHECK, lib)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    head = next(line for line in lines if line.startswith("COMPARED")).split()
    assert int(head[1]) == COMPARED and int(head[3]) == 7, proc.stdout[-3000:]


# 7 cases x (float32 and complex64: 2 ords x 2 keepdim x (2 + 1); float64: 2 x 2 x (1 + 1); float16 and bfloat16:
# "fro" only, 2 x (1 + 1)), then the default, dim None, transposed, 2 x 2 outs and 2 gradients
COMPARED = 7 * (2 * 2 * 2 * 3 + 2 * 2 * 2 + 2 * 2 * 2) + 3 + 4 + 2
