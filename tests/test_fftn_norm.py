"""The n-dimensional fft ops with a `norm` string at target 2.10 in the default build (kernel `fft_norm`, its rows with
`multi_dim`): on libtorch 2.10-2.13, whose boxed dispatcher leaks converting a str, the wrapper makes aten's own calls
(s and dim read as aten reads them, the input promoted and resized, then aten::_fft_c2c, _fft_r2c or _fft_c2r with
the normalization as a number; hfftn and ihfftn as their two transforms); a norm left None and every call from 2.14
are aten's own op through the dispatcher.

One extension, built at target 2.10 against the installed headers and linked with libtorch alone, is run on the
installed torch and on each runtime venv: values bit for bit, dtype, shape and whether the result is a conjugate
view, against aten's op, over the twelve ops, real, complex and integer inputs, s, dim and every norm; float64
gradients; aten's errors; a half input with a norm raises the leak error on 2.10-2.13 and computes from 2.14."""

from __future__ import annotations

import pytest

from shimgen.generate import pipeline
from tests.children import run_on
from tests.cxx import build_so

# the n-dimensional ops, and the 2-D ones (whose dim is a list that is never None)
NDIM = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
TWO = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

std::optional<std::vector<int64_t>> list_of(const std::vector<int64_t>& v, bool none) {
  if (none) {
    return std::nullopt;
  }
  return v;
}
std::optional<std::string_view> norm_of(const std::string& norm) {
  if (norm.empty()) {
    return std::nullopt;
  }
  return norm;
}
""" + "".join(f"""
Tensor k_{op}(Tensor x, std::vector<int64_t> s, bool s_none, std::vector<int64_t> dim, bool dim_none,
              std::string norm) {{
  return ts::fft_{op}(x, list_of(s, s_none), list_of(dim, dim_none), norm_of(norm));
}}""" for op in NDIM) + "".join(f"""
Tensor k_{op}(Tensor x, std::vector<int64_t> s, bool s_none, std::vector<int64_t> dim, bool dim_none,
              std::string norm) {{
  (void)dim_none;
  return ts::fft_{op}(x, list_of(s, s_none), dim, norm_of(norm));
}}""" for op in TWO) + """

STABLE_TORCH_LIBRARY(fftnd_ext, m) {
""" + "".join(f'  m.def("{op}(Tensor x, int[] s, bool s_none, int[] dim, bool dim_none, str norm) -> Tensor");\n'
              for op in NDIM + TWO) + """}

STABLE_TORCH_LIBRARY_IMPL(fftnd_ext, CompositeImplicitAutograd, m) {
""" + "".join(f'  m.impl("{op}", TORCH_BOX(&k_{op}));\n' for op in NDIM + TWO) + "}\n"

# Run by each runtime's interpreter: one line per difference.
CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.fftnd_ext
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
bad, done, errors, raised = [], 0, 0, 0

def check(label, got, want):
    global done
    done += 1
    meta = (got.dtype, got.shape, got.is_conj()) == (want.dtype, want.shape, want.is_conj())
    g, w = got.resolve_conj(), want.resolve_conj()
    if g.is_complex():
        g, w = torch.view_as_real(g), torch.view_as_real(w)
    if not (meta and torch.equal(g.isnan(), w.isnan()) and torch.equal(g.nan_to_num(), w.nan_to_num())):
        bad.append(f"BAD {label}: {got.dtype} {tuple(got.shape)} {got.is_conj()} vs {want.dtype} {tuple(want.shape)}")

def call(op, x, s, dim, norm):
    return getattr(ops, op)(x, s or [], s is None, dim or [], dim is None, norm or "")

def raises(label, op, x, s, dim, norm):
    global errors
    try:
        getattr(torch.fft, op)(x, s, dim, norm)
        bad.append(f"BAD {label}: aten computes")
        return
    except Exception as e:
        aten_text = str(e).split("\n")[0]
    try:
        call(op, x, s, dim, norm)
        bad.append(f"BAD {label}: computed where aten raises {aten_text}")
    except Exception as e:
        if aten_text in str(e) or "(aten raises)" in str(e):
            errors += 1
        else:
            bad.append(f"BAD {label}: {str(e)[:200]} vs {aten_text}")

g = torch.Generator().manual_seed(4)
inputs = [("f32", torch.randn(3, 4, 6, generator=g)), ("f64", torch.randn(4, 5, generator=g, dtype=torch.float64)),
          ("c64", torch.randn(2, 3, 4, generator=g, dtype=torch.complex64)),
          ("c128", torch.randn(5, 6, generator=g, dtype=torch.complex128)),
          ("i64", torch.randint(-5, 5, (4, 6), generator=g))]
TWO = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
for op in ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"] + TWO:
    f = getattr(torch.fft, op)
    dims = [[-2, -1], [0, -1], [-1, 0]] if op in TWO else [None, [-2, -1], [-1], [0, -1]]
    for label, x in inputs:
        for s in (None, [3, 4], [6, 7], [-1, 5]):
            for dim in dims:
                for norm in (None, "backward", "forward", "ortho"):
                    try:
                        want = f(x, s, dim, norm)
                    except Exception:
                        raised += 1
                        continue  # aten's errors are compared below
                    check(f"{op} {label} s={s} dim={dim} norm={norm!r}", call(op, x, s, dim, norm), want)
    for norm in ("forward", "ortho"):
        grads = []
        for fn in (lambda v: f(v, [3, 5], [-2, -1], norm), lambda v: call(op, v, [3, 5], [-2, -1], norm)):
            leaf = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
            if op.startswith(("irfft", "hfft")):
                leaf = leaf.to(torch.complex128)
            leaf.requires_grad_()
            r = fn(leaf).resolve_conj()
            r = torch.view_as_real(r) if r.is_complex() else r
            (r * torch.arange(1, r.numel() + 1, dtype=r.dtype).view(r.shape)).sum().backward()
            grads.append(leaf.grad.resolve_conj())
        check(f"gradient {op} {norm}", grads[1], grads[0])
x = torch.randn(4, 6, generator=g)
raises("norm", "rfftn", x, None, None, "Ortho")
raises("s 0", "fftn", x, [0, 3], None, "ortho")
raises("dims twice", "ihfftn", x, None, [0, 0], "ortho")
raises("dim out of range", "fft2", x, None, [0, 2], "ortho")
raises("s and dim lengths", "irfftn", x, [3], [0, 1], "forward")
raises("s longer than rank", "hfftn", x, [2, 3, 4], None, "ortho")
raises("complex rfftn", "rfftn", x.to(torch.complex64), None, None, "ortho")
raises("no axis", "rfftn", x, None, [], "ortho")
half = x.half()
try:
    got = call("rfft2", half, None, [-2, -1], "ortho")
    outcome = "computed"
except RuntimeError as e:
    outcome = "leak" if "leaks 48 bytes per call" in str(e) else str(e)[:200]
try:
    torch.fft.rfft2(half, norm="ortho")
    aten_outcome = "computed"
except RuntimeError:
    aten_outcome = "raises"
want = "leak" if RELEASE < (2, 14) else ("computed" if aten_outcome == "computed" else "raises")
if outcome != want and not (want == "raises" and outcome not in ("computed", "leak")):
    bad.append(f"BAD half: {outcome} (aten: {aten_outcome})")
print("COMPARED", done, "ERRORS", errors, "RAISED", raised)
print("\n".join(bad))
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("fftn_norm")
    files, _ = pipeline.generate([f"fft_{op}.default" for op in NDIM + TWO], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "fftnd.cpp").write_text(CALLS)
    out = str(root / "fftnd.so")
    build_so(str(root / "fftnd.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_values_are_atens_bit_for_bit(lib, name) -> None:
    proc = run_on(name, CHECK, lib)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    head = next(line for line in lines if line.startswith("COMPARED")).split()
    assert (int(head[1]), int(head[3]), int(head[5])) == (COMPARED, 8, RAISED), proc.stdout[-3000:]


# 6 n-D ops x 5 inputs x 4 s x 4 dims x 4 norms and 6 2-D ops x 5 inputs x 4 s x 3 dims x 4 norms: 3,360 calls, of
# which aten raises for 760 (336 a dim of one value with an s of two, 224 a complex input to rfftn or rfft2, 200 a
# complex one to ihfftn or ihfft2) and computes 2,600; and 24 gradients
COMPARED = 2624
RAISED = 760
