"""The one-dimensional fft ops with a `norm` string at target 2.10 in the default build (kernel `fft_norm`): on libtorch
2.10-2.13, whose boxed dispatcher leaks converting a str, the wrapper makes aten's own calls (the input promoted and
resized, then aten::_fft_c2c, _fft_r2c or _fft_c2r with the normalization as a number); a norm left None and every
call from 2.14 are aten's own op through the dispatcher.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv: values bit for bit, dtype, shape and whether the result is a conjugate
view, against aten's op, over the six ops, real, complex and integer inputs, n, dim and every norm; float64
gradients; aten's errors; a half input with a norm raises the leak error on 2.10-2.13 and computes from 2.14."""

from __future__ import annotations

import pytest

from shimgen.generate import pipeline
from tests.children import run_on
from tests.cxx import build_so

OPS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

std::optional<int64_t> n_of(int64_t n) {
  if (n < 0) {
    return std::nullopt;
  }
  return n;
}
std::optional<std::string_view> norm_of(const std::string& norm) {
  if (norm.empty()) {
    return std::nullopt;
  }
  return norm;
}
""" + "".join(f"""
Tensor k_{op}(Tensor x, int64_t n, int64_t dim, std::string norm) {{
  return ts::fft_{op}(x, n_of(n), dim, norm_of(norm));
}}""" for op in OPS) + """

STABLE_TORCH_LIBRARY(fftn_ext, m) {
""" + "".join(f'  m.def("{op}(Tensor x, int n, int dim, str norm) -> Tensor");\n' for op in OPS) + """}

STABLE_TORCH_LIBRARY_IMPL(fftn_ext, CompositeImplicitAutograd, m) {
""" + "".join(f'  m.impl("{op}", TORCH_BOX(&k_{op}));\n' for op in OPS) + "}\n"

# Run by each runtime's interpreter: one line per difference.
CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.fftn_ext
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
bad, done, errors = [], 0, 0

def check(label, got, want):
    global done
    done += 1
    meta = (got.dtype, got.shape, got.is_conj()) == (want.dtype, want.shape, want.is_conj())
    g, w = got.resolve_conj(), want.resolve_conj()
    if g.is_complex():
        g, w = torch.view_as_real(g), torch.view_as_real(w)
    if not (meta and torch.equal(g.isnan(), w.isnan()) and torch.equal(g.nan_to_num(), w.nan_to_num())):
        bad.append(f"BAD {label}: {got.dtype} {tuple(got.shape)} {got.is_conj()} vs {want.dtype} {tuple(want.shape)}")

def raises(label, fn, want_fn, text=None):
    global errors
    try:
        want_fn()
        bad.append(f"BAD {label}: aten computes")
        return
    except Exception as e:
        aten_text = str(e).split("\n")[0]
    try:
        fn()
        bad.append(f"BAD {label}: computed where aten raises {aten_text}")
    except Exception as e:
        if aten_text in str(e) or "(aten raises)" in str(e):
            errors += 1
        else:
            bad.append(f"BAD {label}: {str(e)[:200]} vs {aten_text}")

g = torch.Generator().manual_seed(4)
OPS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
inputs = [("f32", torch.randn(3, 8, generator=g)), ("f64", torch.randn(2, 7, generator=g, dtype=torch.float64)),
          ("c64", torch.randn(3, 6, generator=g, dtype=torch.complex64)),
          ("c128", torch.randn(5, generator=g, dtype=torch.complex128)),
          ("i64", torch.randint(-5, 5, (4, 6), generator=g))]
for op in OPS:
    f = getattr(torch.fft, op)
    for label, x in inputs:
        for n in (-1, 4, 11):
            for dim in (-1, 0):
                for norm in ("", "backward", "forward", "ortho"):
                    args = (None if n < 0 else n, dim, norm or None)
                    try:
                        want = f(x, *args)
                    except Exception:
                        continue  # aten's errors are compared below
                    check(f"{op} {label} n={n} dim={dim} norm={norm!r}", getattr(ops, op)(x, n, dim, norm), want)
    for norm in ("forward", "ortho"):
        grads = []
        for fn in (lambda v: f(v, 5, -1, norm), lambda v: getattr(ops, op)(v, 5, -1, norm)):
            leaf = torch.randn(3, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
            if op in ("irfft", "hfft"):
                leaf = leaf.to(torch.complex128)
            leaf.requires_grad_()
            r = fn(leaf).resolve_conj()
            r = torch.view_as_real(r) if r.is_complex() else r
            (r * torch.arange(1, r.numel() + 1, dtype=r.dtype).view(r.shape)).sum().backward()
            grads.append(leaf.grad.resolve_conj())
        check(f"gradient {op} {norm}", grads[1], grads[0])
x = torch.randn(4, 6, generator=g)
raises("norm", lambda: ops.rfft(x, -1, -1, "Ortho"), lambda: torch.fft.rfft(x, norm="Ortho"))
raises("n 0", lambda: ops.fft(x, 0, -1, "ortho"), lambda: torch.fft.fft(x, 0, norm="ortho"))
raises("dim", lambda: ops.ihfft(x, -1, 2, "ortho"), lambda: torch.fft.ihfft(x, dim=2, norm="ortho"))
raises("complex rfft", lambda: ops.rfft(x.to(torch.complex64), -1, -1, "ortho"),
       lambda: torch.fft.rfft(x.to(torch.complex64), norm="ortho"))
raises("0-dim", lambda: ops.fft(torch.tensor(1.0), -1, 0, "ortho"),
       lambda: torch.fft.fft(torch.tensor(1.0), dim=0, norm="ortho"))
half = x.half()
try:
    got = ops.rfft(half, -1, -1, "ortho")
    outcome = "computed"
except RuntimeError as e:
    outcome = "leak" if "leaks 48 bytes per call" in str(e) else str(e)[:200]
try:
    torch.fft.rfft(half, norm="ortho")
    aten_outcome = "computed"
except RuntimeError:
    aten_outcome = "raises"
want = "leak" if RELEASE < (2, 14) else ("computed" if aten_outcome == "computed" else "raises")
if outcome != want and not (want == "raises" and outcome not in ("computed", "leak")):
    bad.append(f"BAD half: {outcome} (aten: {aten_outcome})")
print("COMPARED", done, "ERRORS", errors)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("fft_norm")
    files, _ = pipeline.generate([f"fft_{op}.default" for op in OPS], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "fftn.cpp").write_text(CALLS)
    out = str(root / "fftn.so")
    build_so(str(root / "fftn.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit(lib, name) -> None:
    proc = run_on(name, CHECK, lib)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    head = next(line for line in lines if line.startswith("COMPARED")).split()
    assert int(head[1]) == COMPARED and int(head[3]) == 5, proc.stdout[-3000:]


# 6 ops x 5 inputs x 3 n x 2 dims x 4 norms, less the 96 aten raises for (rfft and ihfft of the two complex
# inputs), and 12 gradients
COMPARED = 636
