"""quantile and nanquantile with an interpolation string at target 2.10 in the default build (kernel `quantile`): on
libtorch 2.10-2.13, whose boxed dispatcher leaks converting a str, the wrapper makes aten's own calls of those
releases (a sort, ranks in the input's dtype, gathers and a lerp); from 2.14, which changed the computation, it is
aten's own op through the dispatcher. Either way the result is aten's, on every runtime.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv: values bit for bit (NaN and each zero's sign included), dtype, shape and
strides against aten's op, over inputs with ties, NaNs and infinities, each dim and None, keepdim, q a number, a
0-dim or a 1-D tensor, every interpolation; the out= forms, gradients with respect to the input and to q, and
aten's errors (each raised by the wrapper on 2.10-2.13 with aten's words)."""

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

std::optional<int64_t> dim_of(bool all, int64_t dim) {
  if (all) {
    return std::nullopt;
  }
  return dim;
}

Tensor k_q(Tensor x, Tensor q, bool all, int64_t dim, bool keepdim, std::string mode, bool nan) {
  if (nan) {
    return ts::nanquantile(x, q, dim_of(all, dim), keepdim, mode);
  }
  return ts::quantile(x, q, dim_of(all, dim), keepdim, mode);
}
Tensor k_qs(Tensor x, double q, bool all, int64_t dim, bool keepdim, std::string mode, bool nan) {
  if (nan) {
    return ts::nanquantile(x, q, dim_of(all, dim), keepdim, mode);
  }
  return ts::quantile(x, q, dim_of(all, dim), keepdim, mode);
}
Tensor k_default(Tensor x, double q) { return ts::quantile(x, q); }
Tensor k_out(Tensor x, Tensor q, int64_t dim, std::string mode, Tensor out) {
  ts::quantile_out(out, x, q, dim, false, mode);
  return out;
}

STABLE_TORCH_LIBRARY(qtl, m) {
  m.def("q(Tensor x, Tensor q, bool all, int dim, bool keepdim, str mode, bool nan) -> Tensor");
  m.def("qs(Tensor x, float q, bool all, int dim, bool keepdim, str mode, bool nan) -> Tensor");
  m.def("default(Tensor x, float q) -> Tensor");
  m.def("out(Tensor x, Tensor q, int dim, str mode, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(qtl, CompositeImplicitAutograd, m) {
  m.impl("q", TORCH_BOX(&k_q));
  m.impl("qs", TORCH_BOX(&k_qs));
  m.impl("default", TORCH_BOX(&k_default));
  m.impl("out", TORCH_BOX(&k_out));
}
"""

# Run by each runtime's interpreter: one line per difference.
CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.qtl
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
bad, done, errors = [], 0, 0

def bits(t):
    return t.view(torch.int64 if t.dtype == torch.float64 else torch.int32)

def check(label, got, want):
    global done
    done += 1
    meta = (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
    if not (meta and torch.equal(bits(got), bits(want))):
        bad.append(f"BAD {label}: {got.dtype} {tuple(got.shape)} {got.stride()} {got.flatten()[:4].tolist()} vs "
                   f"{want.dtype} {tuple(want.shape)} {want.stride()} {want.flatten()[:4].tolist()}")

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
    except RuntimeError as e:
        if text in str(e) or "(aten raises)" in str(e):
            errors += 1
        else:
            bad.append(f"BAD {label}: {str(e)[:200]} vs {text}")

g = torch.Generator().manual_seed(7)
samples = [("0-dim", torch.tensor(1.5, dtype=torch.float64)),
           ("ties", torch.tensor([2.0, 1.0, 2.0, 2.0, 0.5, 1.0, 2.0, -0.0, 0.0], dtype=torch.float64)),
           ("[10]", torch.randn(10, generator=g, dtype=torch.float64)),
           ("[4, 6]", torch.randn(4, 6, generator=g, dtype=torch.float64)),
           ("[3, 4, 5]", torch.randn(3, 4, 5, generator=g, dtype=torch.float64)),
           ("transposed", torch.randn(7, 3, generator=g, dtype=torch.float64).t())]
nan = torch.randn(4, 6, generator=g, dtype=torch.float64)
nan[1, 2] = float("nan")
nan[3, :] = float("nan")
nan[0, 0] = float("inf")
samples.append(("nan", nan))
modes = ("linear", "lower", "higher", "midpoint", "nearest")
numbers = (0.0, 1.0, 0.5, 0.3, 1 / 3, 0.9)
for dtype in (torch.float32, torch.float64):
    for label, base in samples:
        x = base.to(dtype)
        dims = [None, *range(-x.dim(), x.dim())] if x.dim() else [None, 0]
        for nan_ in (False, True):
            f = torch.nanquantile if nan_ else torch.quantile
            for dim in dims:
                for keepdim in (False, True):
                    for mode in modes:
                        for qv in numbers:
                            got = ops.qs(x, qv, dim is None, dim or 0, keepdim, mode, nan_)
                            check(f"{dtype} {label} {nan_} q={qv} {dim} {keepdim} {mode}", got,
                                  f(x, qv, dim, keepdim, interpolation=mode))
                        for q in (torch.tensor(0.3, dtype=dtype), torch.tensor(numbers, dtype=dtype)):
                            got = ops.q(x, q, dim is None, dim or 0, keepdim, mode, nan_)
                            check(f"{dtype} {label} {nan_} q={q.tolist()} {dim} {keepdim} {mode}", got,
                                  f(x, q, dim, keepdim, interpolation=mode))
x = torch.randn(5, 8, generator=g)
check("defaults", ops.default(x, 0.25), torch.quantile(x, 0.25))
q = torch.tensor([0.1, 0.5, 0.8])
for kind, out in (("exact", torch.empty(3, 5)), ("empty", torch.empty(0)), ("transposed", torch.empty(5, 3).t())):
    want = torch.quantile(x, q, 1, interpolation="midpoint", out=torch.empty_like(out) if out.numel() else torch.empty(0))
    check(f"out {kind}", ops.out(x, q, 1, "midpoint", out), want)
for mode in modes:
    grads = []
    for fn in (lambda v, w: torch.quantile(v, w, 1, interpolation=mode), lambda v, w: ops.q(v, w, False, 1, False, mode, False)):
        leaf = torch.tensor([[3.0, 1.0, 2.0, 2.0, 5.0], [0.5, -1.0, 4.0, 4.0, 4.0]], dtype=torch.float64).requires_grad_()
        qleaf = torch.tensor([0.25, 0.6], dtype=torch.float64).requires_grad_()
        r = fn(leaf, qleaf)
        (r * torch.arange(1, r.numel() + 1, dtype=r.dtype).view(r.shape)).sum().backward()
        grads.append(torch.cat([r.detach().flatten(), leaf.grad.flatten(),
                                qleaf.grad if qleaf.grad is not None else torch.zeros(2, dtype=torch.float64)]))
    check(f"gradient {mode}", grads[1], grads[0])
x = torch.randn(3, 4, generator=g)
raises("mode", lambda: ops.qs(x, 0.5, True, 0, False, "Linear", False), lambda: torch.quantile(x, 0.5, interpolation="Linear"))
raises("q above 1", lambda: ops.qs(x, 1.5, True, 0, False, "linear", False), lambda: torch.quantile(x, 1.5))
raises("q tensor above 1", lambda: ops.q(x, torch.tensor([0.5, 1.5]), True, 0, False, "linear", True),
       lambda: torch.nanquantile(x, torch.tensor([0.5, 1.5])))
raises("empty", lambda: ops.qs(torch.empty(0, 3), 0.5, True, 0, False, "linear", False),
       lambda: torch.quantile(torch.empty(0, 3), 0.5))
raises("integer", lambda: ops.qs(torch.arange(6), 0.5, True, 0, False, "linear", False),
       lambda: torch.quantile(torch.arange(6), 0.5))
raises("q dtype", lambda: ops.q(x, torch.tensor(0.5, dtype=torch.float64), True, 0, False, "linear", False),
       lambda: torch.quantile(x, torch.tensor(0.5, dtype=torch.float64)))
raises("dim", lambda: ops.qs(x, 0.5, False, 2, False, "linear", False), lambda: torch.quantile(x, 0.5, 2))
print("COMPARED", done, "ERRORS", errors, "RELEASE", RELEASE)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("quantile")
    files, _ = pipeline.generate(["quantile", "nanquantile"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "qtl.cpp").write_text(CALLS)
    out = str(root / "qtl.so")
    build_so(str(root / "qtl.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit(lib, name) -> None:
    proc = run_on(name, CHECK, lib)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    head = next(line for line in lines if line.startswith("COMPARED")).split()
    # 2 dtypes x 30 (sample, dim) pairs x nan x keepdim x 5 modes x 8 q's, the defaults, 3 outs, 5 gradients
    assert int(head[1]) == 2 * 30 * 2 * 2 * 5 * 8 + 1 + 3 + 5 and int(head[3]) == 7, proc.stdout[-3000:]
