"""The composition route (shimgen/routes/composition.py, facts `kernel_compositions` of data/scalar_facts.yaml):
threshold_backward and threshold as aten's threshold kernel composed of dispatching aten calls
(shimgen::detail::threshold_select), in an extension linked with libtorch alone.

Each call is compared with ATen given what the caller wrote: dtype pairs (mixed ones promote), broadcasting and
0-dim shapes, nan/inf among the values, a threshold that is no float32 (compared in the common dtype as aten
does); a number out of range is a `shimgen:` error; registered as CompositeImplicitAutograd the result's
gradient is ATen's."""

from __future__ import annotations

import itertools
import subprocess

import pytest
import torch

from shimgen import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_tb(Tensor g, Tensor s, double t) { return ts::threshold_backward(g, s, t); }
Tensor k_tb_int(Tensor g, Tensor s, int64_t t) { return ts::threshold_backward(g, s, t); }
Tensor k_th(Tensor s, double t, double v) { return ts::threshold(s, t, v); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("tb(Tensor g, Tensor s, float t) -> Tensor");
  m.def("tb_int(Tensor g, Tensor s, int t) -> Tensor");
  m.def("th(Tensor s, float t, float v) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("tb", TORCH_BOX(&k_tb));
  m.impl("tb_int", TORCH_BOX(&k_tb_int));
  m.impl("th", TORCH_BOX(&k_th));
}
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("composition") / "gen")
    files, _ = pipeline.generate(["threshold_backward", "threshold"], None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build(gen: str, root, ns: str, key: str) -> str:
    src = root / f"{ns}.cpp"
    src.write_text(CALLS.replace("NS", ns).replace("KEY", key))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)
    return lib


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("comp_cpu"), "comp_cpu", "CPU")


@pytest.fixture(scope="module")
def ext_implicit(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("comp_implicit"), "comp_implicit", "CompositeImplicitAutograd")


def _sample(shape, dtype, seed):
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
    if t.numel() > 4:
        t.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -0.0, 0.1])
    return t.to(dtype) if dtype.is_floating_point else t.nan_to_num(0, 0, 0).round().to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64]


@pytest.mark.parametrize("dg,ds", list(itertools.product(DTYPES, DTYPES)))
def test_threshold_backward_is_exact(ext, dg, ds) -> None:
    for shapes in (((4, 5), (4, 5)), ((4, 5), ()), ((1, 5), (4, 1))):
        g, s = _sample(shapes[0], dg, 1), _sample(shapes[1], ds, 2)
        for t in (0.0, 0.1, -1.5):
            want = torch.ops.aten.threshold_backward(g, s, t)
            if ds.is_floating_point or dg.is_floating_point or t == int(t):
                assert _same(torch.ops.comp_cpu.tb(g, s, t), want), (dg, ds, shapes, t)
        assert _same(torch.ops.comp_cpu.tb_int(g, s, 0), torch.ops.aten.threshold_backward(g, s, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threshold_is_exact(ext, dtype) -> None:
    x = _sample((6, 5), dtype, 3)
    for t, v in ((0.0, 0.0), (0.5, -2.0), (1.0, 20.0)) if dtype.is_floating_point else ((0.0, 0.0), (1.0, 20.0)):
        assert _same(torch.ops.comp_cpu.th(x, t, v), torch.ops.aten.threshold(x, t, v)), (dtype, t, v)


def test_numbers_out_of_range_are_refused(ext) -> None:
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match=r"shimgen: threshold_backward.default: threshold=.*range"):
        torch.ops.comp_cpu.tb(x, x, 1e300)
    with pytest.raises(RuntimeError, match=r"shimgen: threshold.default: value=.*range"):
        torch.ops.comp_cpu.th(x.half(), 0.0, 1e10)


def test_gradients_are_atens(ext_implicit) -> None:
    g, s = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    grads = []
    for fn in (torch.ops.aten.threshold_backward, torch.ops.comp_implicit.tb):
        gl = g.clone().requires_grad_()
        r = fn(gl, s, 0.0)
        assert r.grad_fn is not None
        (r * torch.arange(20, dtype=torch.float64).view(4, 5)).sum().backward()
        grads.append(gl.grad)
    assert torch.equal(*grads)
    x = torch.randn(6, dtype=torch.float64)
    grads = []
    for fn in (torch.ops.aten.threshold, torch.ops.comp_implicit.th):
        xl = x.clone().requires_grad_()
        fn(xl, 0.0, -1.0).sum().backward()
        grads.append(xl.grad)
    assert torch.equal(*grads)


def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    assert "threshold" not in out  # no aoti_torch_aten_threshold* (no libtorch exports one)
