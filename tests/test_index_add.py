"""index_add with its default alpha with libtorch alone (kernel `index_add_one`, shimgen/generate/routes/composition.py):
aten's index_add adds source's slice i into self's slice index[i] along dim, in order; aten::scatter_add with index
unsqueezed around dim, expanded to source's shape and laid out contiguously makes the same additions in the same
order. Duplicate indices below would catch another order in float32 sums; half, bfloat16 and complex self (aten
rounds or multiplies by alpha its own way) and any other alpha are refused, naming the remedy."""

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

Tensor k_index_add(Tensor self, int64_t dim, Tensor index, Tensor source) {
  return ts::index_add(self, dim, index, source);
}
Tensor k_index_add_alpha(Tensor self, int64_t dim, Tensor index, Tensor source, double alpha) {
  return ts::index_add(self, dim, index, source, alpha);
}
Tensor k_index_add_(Tensor self, int64_t dim, Tensor index, Tensor source) {
  return ts::index_add_(self, dim, index, source);
}
Tensor k_index_add_out(Tensor self, int64_t dim, Tensor index, Tensor source, Tensor out) {
  ts::index_add_out(out, self, dim, index, source);
  return out;
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("index_add(Tensor self, int dim, Tensor index, Tensor source) -> Tensor");
  m.def("index_add_alpha(Tensor self, int dim, Tensor index, Tensor source, float alpha) -> Tensor");
  m.def("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)");
  m.def("index_add_out(Tensor self, int dim, Tensor index, Tensor source, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("index_add", TORCH_BOX(&k_index_add));
  m.impl("index_add_alpha", TORCH_BOX(&k_index_add_alpha));
  m.impl("index_add_", TORCH_BOX(&k_index_add_));
  m.impl("index_add_out", TORCH_BOX(&k_index_add_out));
}
"""

A = torch.ops.aten


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("index_add")
    files, _ = pipeline.generate(["index_add", "index_add_"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "index_add.cpp"
    src.write_text(CALLS.replace("NS", "index_add_ext"))
    lib = str(root / "index_add.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone: no SHIMGEN_OVERLAY
    torch.ops.load_library(lib)
    return torch.ops.index_add_ext, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    if a.is_floating_point():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    return torch.equal(a, b)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "aoti_torch_aten_index_add" not in out


CASES = [((5, 7), 0, (9, 7)), ((5, 7), 1, (5, 300)), ((4, 3, 5), 1, (4, 8, 5)), ((6,), 0, (20,)), ((64, 40), 0, (500, 40))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int8, torch.bool])
def test_index_add_is_atens(ext, dtype) -> None:
    ops, _ = ext
    g = torch.Generator().manual_seed(0)
    for xs, dim, ss in CASES:
        self = (torch.randn(xs, generator=g) * 3).to(dtype)
        source = (torch.randn(ss, generator=g) * 3).to(dtype)
        for it in (torch.int64, torch.int32):
            index = torch.randint(0, xs[dim], (ss[dim],), generator=g).to(it)  # with duplicates
            assert _same(ops.index_add(self, dim, index, source), A.index_add(self, dim, index, source)), (xs, dim)
            a, b = self.clone(), self.clone()
            A.index_add_(a, dim, index, source)
            assert _same(ops.index_add_(b, dim, index, source), a)
            oa, ob = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            A.index_add.out(self, dim, index, source, out=oa)
            assert ops.index_add_out(self, dim, index, source, ob) is ob and _same(oa, ob)
        assert _same(ops.index_add_alpha(self, dim, index, source, 1.0), A.index_add(self, dim, index, source))


def test_index_add_gradients_are_atens(ext) -> None:
    ops, _ = ext
    g = torch.Generator().manual_seed(1)
    index = torch.randint(0, 5, (9,), generator=g)
    grads = []
    for fn in (A.index_add, ops.index_add):
        x = torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(2)).requires_grad_()
        s = torch.randn(9, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).requires_grad_()
        r = fn(x, 0, index, s)
        (r * torch.arange(35.0, dtype=torch.float64).view(5, 7)).sum().backward()
        grads.append((x.grad, s.grad))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


def test_index_add_refusals_and_errors(ext) -> None:
    ops, _ = ext
    x, s, i = torch.zeros(5, 7), torch.ones(9, 7), torch.zeros(9, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"shimgen: index_add.default: alpha=2.*only alpha=1.*SHIMGEN_OVERLAY"):
        ops.index_add_alpha(x, 0, i, s, 2.0)
    with pytest.raises(RuntimeError, match="shimgen: index_add.default: a half, bfloat16 or complex self"):
        ops.index_add(x.half(), 0, i, s.half())
    for bad in ((x, 0, i.float(), s), (x, 0, i[:3], s), (x, 0, i, s[:, :3]), (x, 2, i, s), (x, 0, i, s.double())):
        with pytest.raises((RuntimeError, IndexError)):
            A.index_add(*bad)
        with pytest.raises(RuntimeError, match=r"shimgen: index_add.default: .*\(aten raises\)"):
            ops.index_add(*bad)
    with pytest.raises(RuntimeError):  # an index out of range: aten raises, so does scatter_add
        ops.index_add(x, 0, i + 5, s)
