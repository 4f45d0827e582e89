"""conv1d/conv2d/conv3d with a padding string below target 2.14 in the default build (kernel `conv_padding`): aten's
CompositeImplicitAutograd conv<N>d.padding as the same dispatching calls (unsqueeze an unbatched input, pad the
input's end with zeros where "same" is not symmetric, aten::convolution, squeeze), the string compared in C++, so
no str crosses the ABI and nothing leaks on libtorch 2.10-2.13. Built at target 2.10 without SHIMGEN_LEAKY_STR,
linked with libtorch alone, and compared with aten on the installed torch: values bit for bit, dtype, strides,
errors, and gradients (registered as CompositeImplicitAutograd, autograd sees the composition's calls)."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k1(Tensor x, Tensor w, std::optional<Tensor> b, std::vector<int64_t> s, std::string p,
          std::vector<int64_t> d, int64_t g) { return ts::conv1d(x, w, b, s, p, d, g); }
Tensor k2(Tensor x, Tensor w, std::optional<Tensor> b, std::vector<int64_t> s, std::string p,
          std::vector<int64_t> d, int64_t g) { return ts::conv2d(x, w, b, s, p, d, g); }
Tensor k3(Tensor x, Tensor w, std::optional<Tensor> b, std::vector<int64_t> s, std::string p,
          std::vector<int64_t> d, int64_t g) { return ts::conv3d(x, w, b, s, p, d, g); }
Tensor same2d(Tensor x, Tensor w) { return ts::conv2d(x, w, std::nullopt, {1, 1}, "same"); }

STABLE_TORCH_LIBRARY(conv_padding, m) {
  m.def("conv1d(Tensor x, Tensor w, Tensor? b, int[] s, str p, int[] d, int g) -> Tensor");
  m.def("conv2d(Tensor x, Tensor w, Tensor? b, int[] s, str p, int[] d, int g) -> Tensor");
  m.def("conv3d(Tensor x, Tensor w, Tensor? b, int[] s, str p, int[] d, int g) -> Tensor");
  m.def("same2d(Tensor x, Tensor w) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(conv_padding, CompositeImplicitAutograd, m) {
  m.impl("conv1d", TORCH_BOX(&k1));
  m.impl("conv2d", TORCH_BOX(&k2));
  m.impl("conv3d", TORCH_BOX(&k3));
  m.impl("same2d", TORCH_BOX(&same2d));
}
"""

OPS = ["conv1d.padding", "conv2d.padding", "conv3d.padding"]


def test_the_rows_name_the_kernel_and_are_proven() -> None:
    facts = scalars.load().kernel_compositions
    for n, op in enumerate(OPS, 1):
        row = facts.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op).name == "conv_padding" and row["spatial"] == n
        assert row["calls"]["conv"] == "convolution.default" and len(row["proven"]) >= 3


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("conv_padding")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "conv_padding.cpp").write_text(CALLS)
    lib = str(root / "conv_padding.so")
    build_so(str(root / "conv_padding.cpp"), lib, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    torch.ops.load_library(lib)
    return torch.ops.conv_padding, lib


def test_the_extension_needs_libtorch_alone_and_no_str_crosses(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_conv" not in out
    assert "torch_new_string_handle" not in out  # the string is compared in C++, never converted


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)


def _agree(mine, atens) -> None:
    try:
        want = atens()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            mine()
        first = str(e).splitlines()[0]
        assert first in str(got.value) or str(got.value).endswith("(aten raises)"), (first, str(got.value))
        return
    got = mine()
    assert _same(got, want), (got.shape, want.shape)


FUNCS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_values_are_atens(ext, n, dtype, padding) -> None:
    ops, _ = ext
    mine = getattr(ops, f"conv{n}d")
    g = torch.Generator().manual_seed(n)
    for kernel in (1, 2, 3, 4):
        for dilation in (1, 2):
            for batched in (True, False):
                x = torch.randn(*([2] if batched else []), 4, *[7] * n, generator=g).to(dtype)
                w = torch.randn(6, 2, *[kernel] * n, generator=g).to(dtype)
                b = torch.randn(6, generator=g).to(dtype)
                _agree(lambda: mine(x, w, b, [1], padding, [dilation], 2),
                       lambda: FUNCS[n](x, w, b, 1, padding, dilation, 2))
                _agree(lambda: mine(x, w, None, [1] * n, padding, [dilation] * n, 2),
                       lambda: FUNCS[n](x, w, None, [1] * n, padding, [dilation] * n, 2))


def test_aten_errors_are_raised(ext) -> None:
    ops, _ = ext
    x, w = torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3)
    for args in ([1, 1], "same", [1, 1], 1), ([2, 2], "same", [1, 1], 1), ([1, 1], "Same", [1, 1], 1), \
            ([1, 1], "same", [1, 1], 0), ([1, 1, 1], "same", [1, 1], 1):
        _agree(lambda: ops.conv2d(x, w, None, *args), lambda: F.conv2d(x, w, None, *args))
    _agree(lambda: ops.conv2d(torch.randn(8, 8), w, None, [1, 1], "same", [1, 1], 1),
           lambda: F.conv2d(torch.randn(8, 8), w, None, 1, "same"))
    with pytest.raises(RuntimeError, match=r"shimgen: conv2d.padding: a complex input"):
        ops.conv2d(x.to(torch.complex64), w.to(torch.complex64), None, [1, 1], "same", [1, 1], 1)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("kernel", [2, 3])
def test_gradients_are_atens(ext, padding, kernel) -> None:
    ops, _ = ext
    g = torch.Generator().manual_seed(7)
    x0 = torch.randn(2, 3, 9, 8, generator=g, dtype=torch.float64)
    w0 = torch.randn(4, 3, kernel, kernel, generator=g, dtype=torch.float64)
    b0 = torch.randn(4, generator=g, dtype=torch.float64)
    grads = []
    for fn in (lambda x, w, b: ops.conv2d(x, w, b, [1, 1], padding, [1, 2], 1),
               lambda x, w, b: F.conv2d(x, w, b, 1, padding, [1, 2], 1)):
        x, w, b = (t.clone().requires_grad_() for t in (x0, w0, b0))
        r = fn(x, w, b)
        (r * torch.linspace(-1, 2, r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
        grads.append((r.detach(), x.grad, w.grad, b.grad))
    for mine, want in zip(*grads):
        assert _same(mine, want)


def test_the_issues_call(ext) -> None:
    """conv2d(x, w, nullopt, {1, 1}, "same"), as a user writes it."""
    ops, _ = ext
    x, w = torch.randn(1, 3, 10, 10), torch.randn(5, 3, 4, 4)
    assert _same(ops.same2d(x, w), F.conv2d(x, w, None, [1, 1], "same"))
