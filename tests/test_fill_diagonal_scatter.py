"""fill_diagonal_ and scatter's number with reduce="add"/"multiply" with libtorch alone (kernels `fill_diagonal` and
`scatter_value_reduce`, shimgen/generate/routes/composition.py).

fill_diagonal_ is a composite in aten: as_strided views of self's diagonal (and, with wrap, of its wrapped part)
filled by fill_; the wrapper makes the very same dispatcher calls, so values, errors and gradients are aten's.
scatter.value_reduce is scatter.reduce with the number as src, a 0-dim tensor of self's dtype expanded to index's
shape: aten's kernel runs the same reductions in the same order (duplicate indices below would catch another
order in float32 sums). Each call is compared bit for bit with aten given what the caller wrote."""

from __future__ import annotations

import re
import subprocess

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so, syntax_check

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_fill_diagonal_f(Tensor self, double v, bool wrap) { return ts::fill_diagonal_(self, v, wrap); }
Tensor k_fill_diagonal_i(Tensor self, int64_t v) { return ts::fill_diagonal_(self, v); }
Tensor k_scatter_f(Tensor self, int64_t dim, Tensor index, double v, std::string reduce) {
  return ts::scatter(self, dim, index, v, reduce);
}
Tensor k_scatter_i(Tensor self, int64_t dim, Tensor index, int64_t v, std::string reduce) {
  return ts::scatter(self, dim, index, v, reduce);
}
Tensor k_scatter_inplace(Tensor self, int64_t dim, Tensor index, double v, std::string reduce) {
  return ts::scatter_(self, dim, index, v, reduce);
}
Tensor k_scatter_out(Tensor self, int64_t dim, Tensor index, double v, std::string reduce, Tensor out) {
  ts::scatter_out(out, self, dim, index, v, reduce);
  return out;
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("fill_diagonal_f(Tensor(a!) self, float v, bool wrap) -> Tensor(a!)");
  m.def("fill_diagonal_i(Tensor(a!) self, int v) -> Tensor(a!)");
  m.def("scatter_f(Tensor self, int dim, Tensor index, float v, str reduce) -> Tensor");
  m.def("scatter_i(Tensor self, int dim, Tensor index, int v, str reduce) -> Tensor");
  m.def("scatter_inplace(Tensor(a!) self, int dim, Tensor index, float v, str reduce) -> Tensor(a!)");
  m.def("scatter_out(Tensor self, int dim, Tensor index, float v, str reduce, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("fill_diagonal_f", TORCH_BOX(&k_fill_diagonal_f));
  m.impl("fill_diagonal_i", TORCH_BOX(&k_fill_diagonal_i));
  m.impl("scatter_f", TORCH_BOX(&k_scatter_f));
  m.impl("scatter_i", TORCH_BOX(&k_scatter_i));
  m.impl("scatter_inplace", TORCH_BOX(&k_scatter_inplace));
  m.impl("scatter_out", TORCH_BOX(&k_scatter_out));
}
"""

OPS = ["fill_diagonal_", "scatter", "scatter_"]
A = torch.ops.aten


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("fill_diagonal_scatter")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "fds.cpp"
    src.write_text(CALLS.replace("NS", "fds_ext"))
    lib = str(root / "fds.so")
    # libtorch alone: no SHIMGEN_OVERLAY. scatter's `reduce` is a str, which libtorch 2.10-2.13's dispatcher takes
    # only with the leak the default build refuses (test_default_build_refuses_the_reduce_str below): the
    # composition's exactness is what this file proves, so the build accepts that leak.
    build_so(str(src), lib, str(root / "gen"), defines=["SHIMGEN_LEAKY_STR"])
    torch.ops.load_library(lib)
    return torch.ops.fds_ext, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit for bit: dtype, shape, strides and every value (NaN where NaN is)."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    return torch.equal(a, b)


def test_default_build_guards_the_reduce_str(tmp_path) -> None:
    """Without SHIMGEN_LEAKY_STR, scatter with a number and a reduce compiles: its form asks the running libtorch for
    its release and raises on 2.10-2.13, whose dispatcher leaks converting the str (nothing leaks per call by
    default; tests/test_leak_free_default.py runs such a form on each runtime); fill_diagonal_ takes no str."""
    gen = tmp_path / "gen"
    files, _ = pipeline.generate(OPS, None, None, str(gen), only=True)
    pipeline.write(str(gen), files)
    head = CALLS.split("STABLE_TORCH_LIBRARY(")[0]
    fill_only = re.sub(r"Tensor k_scatter.*?\n}\n", "", head, flags=re.S)
    assert "k_scatter" not in fill_only and "k_fill_diagonal_f" in fill_only
    assert syntax_check(fill_only, str(gen)).returncode == 0
    res = syntax_check(head, str(gen))
    assert res.returncode == 0, res.stderr[-2000:]
    text = (gen / "torch/csrc/stable/ops/scatter.h").read_text()
    default = text[text.rindex("#else"):]  # the default build's forms: no SHIMGEN_OVERLAY, no SHIMGEN_LEAKY_STR
    # scatter.value_reduce's composition calls scatter.reduce's wrapper, whose "multiply" (and an "add" autograd
    # records) takes the guarded form; "add" is scatter_add (kernel str_value)
    flat = " ".join(default.split()).replace("( ", "(")
    assert 'require_leak_free_str("scatter.reduce", "reduce", 214, true);' in flat, default[:3000]
    assert "return torch::stable::scatter_add(self, dim, index, src);" in flat, default[:3000]


def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_aten_fill_diagonal" not in out and "aoti_torch_aten_scatter" not in out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64])
def test_fill_diagonal_is_atens(ext, dtype) -> None:
    """Every shape aten treats apart, transposed and offset views, wrap on and off."""
    ops, _ = ext
    makes = [lambda s: torch.zeros(s, dtype=dtype), lambda s: torch.zeros(s[::-1], dtype=dtype).t(),
             lambda s: torch.zeros((s[0] + 2, *s[1:]), dtype=dtype)[2:]]
    v = 1.5 if dtype.is_floating_point or dtype.is_complex else 1.0
    for shape in ((3, 3), (5, 3), (3, 5), (7, 2), (9, 3), (4, 4, 4), (0, 3)):
        for make in makes[: 3 if len(shape) == 2 else 1]:
            for wrap in (False, True):
                a, b = make(shape), make(shape)
                try:
                    A.fill_diagonal_(a, v, wrap)
                except RuntimeError as e:  # aten's wrapped view of a transposed tall self can leave its storage
                    with pytest.raises(RuntimeError, match=re.escape(str(e).splitlines()[0])):
                        ops.fill_diagonal_f(b, v, wrap)
                    continue
                r = ops.fill_diagonal_f(b, v, wrap)
                assert r is b and _same(a, b), (shape, wrap)
    if dtype != torch.bool:
        a, b = torch.zeros(4, 4, dtype=dtype), torch.zeros(4, 4, dtype=dtype)
        assert _same(A.fill_diagonal_(a, 7), ops.fill_diagonal_i(b, 7))
    for bad in (torch.zeros(3, dtype=dtype), torch.zeros(4, 4, 3, dtype=dtype)):  # aten's checks, its messages
        with pytest.raises(RuntimeError) as want:
            A.fill_diagonal_(bad.clone(), 1.0)
        with pytest.raises(RuntimeError, match="shimgen: fill_diagonal_.default: " + re.escape(
                str(want.value).splitlines()[0])):
            ops.fill_diagonal_f(bad.clone(), 1.0, False)


def test_fill_diagonal_gradients_are_atens(ext) -> None:
    ops, _ = ext
    grads = []
    for fn in (A.fill_diagonal_, ops.fill_diagonal_f):
        leaf = torch.randn(7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).requires_grad_()
        r = fn(leaf * 1, 2.5, True)
        (r * torch.arange(14.0, dtype=torch.float64).view(7, 2)).sum().backward()
        grads.append(leaf.grad)
    assert torch.equal(grads[0], grads[1]) and grads[0][0, 0] == 0  # the filled elements get no gradient
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        ops.fill_diagonal_f(torch.zeros(3, 3, requires_grad=True), 1.0, False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int8])
def test_scatter_number_reduce_is_atens(ext, dtype) -> None:
    """Duplicate indices (float sums depend on the order), dims 0 and 1, a transposed index; the functional,
    in-place and out= forms."""
    ops, _ = ext
    g = torch.Generator().manual_seed(1)
    base = (torch.randn(5, 7, generator=g) * 4).to(dtype)
    cases = [(0, torch.randint(0, 5, (9, 7), generator=g)), (1, torch.randint(0, 7, (5, 30), generator=g)),
             (0, torch.randint(0, 5, (7, 9), generator=g).t())]
    v = 0.1 if dtype.is_floating_point else 3.0
    for dim, index in cases:
        for reduce in ("add", "multiply"):
            want = A.scatter.value_reduce(base, dim, index, v, reduce=reduce)
            assert _same(ops.scatter_f(base, dim, index, v, reduce), want), (dim, reduce)
            a, b = base.clone(), base.clone()
            A.scatter_.value_reduce(a, dim, index, v, reduce=reduce)
            assert _same(ops.scatter_inplace(b, dim, index, v, reduce), a)
            oa, ob = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            A.scatter.value_reduce_out(base, dim, index, v, reduce=reduce, out=oa)
            assert ops.scatter_out(base, dim, index, v, reduce, ob) is ob and _same(oa, ob)
    if dtype == torch.int64:
        i = torch.randint(0, 5, (9, 7), generator=g)
        want = A.scatter.value_reduce(base, 0, i, 2**40 + 1, reduce="add")
        assert _same(ops.scatter_i(base, 0, i, 2**40 + 1, "add"), want)  # exact: not through a double


def test_scatter_refusals_and_errors(ext) -> None:
    ops, _ = ext
    x, i = torch.zeros(3, 4, dtype=torch.int64), torch.zeros(2, 3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"shimgen: scatter.value_reduce: value=2.5.*does not convert exactly"):
        ops.scatter_f(x, 0, i, 2.5, "add")  # aten truncates it to 2 in its kernel: refused, never computed
    for reduce in ("mean", "sum"):  # aten's own check and message
        with pytest.raises(RuntimeError) as want:
            A.scatter.value_reduce(x.float(), 0, i, 1.0, reduce=reduce)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value).splitlines()[0])):
            ops.scatter_f(x.float(), 0, i, 1.0, reduce)
    leaf = torch.zeros(3, 4, requires_grad=True)  # both record a backward that raises
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        A.scatter.value_reduce(leaf, 0, i, 1.0, reduce="add").sum().backward()
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        ops.scatter_f(leaf, 0, i, 1.0, "add").sum().backward()
