"""celu(x, alpha) and celu_ at target 2.10 in the default build (kernel `celu`): aten's own body, elu with alpha, scale
1.0 and input_scale 1 / alpha after its zero check, by elu's wrapper (kernel cpu_activation: aten's CPU kernel
replicated). One extension built at target 2.10 is compared with aten bit for bit on the installed torch and on
2.10.0, 2.14.1 and 2.15.0 where their venvs are found; alpha 0 raises aten's error, and a call autograd records is
refused by elu's wrapper, by name."""

from __future__ import annotations

import pytest

from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_celu(Tensor x, double alpha) { return ts::celu(x, alpha); }
Tensor k_celu_int(Tensor x, int64_t alpha) { return ts::celu(x, alpha); }
Tensor k_celu_plain(Tensor x) { return ts::celu(x); }
Tensor k_celu_(Tensor x, double alpha) { return ts::celu_(x, alpha); }

STABLE_TORCH_LIBRARY(celu_ext, m) {
  m.def("celu(Tensor x, float alpha) -> Tensor");
  m.def("celu_int(Tensor x, int alpha) -> Tensor");
  m.def("celu_plain(Tensor x) -> Tensor");
  m.def("celu_(Tensor(a!) x, float alpha) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(celu_ext, CompositeImplicitAutograd, m) {
  m.impl("celu", TORCH_BOX(&k_celu));
  m.impl("celu_int", TORCH_BOX(&k_celu_int));
  m.impl("celu_plain", TORCH_BOX(&k_celu_plain));
  m.impl("celu_", TORCH_BOX(&k_celu_));
}
"""

ON_RUNTIME = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.celu_ext

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(
        a.view(-1).view(torch.uint8) if a.numel() else a, b.view(-1).view(torch.uint8) if b.numel() else b)

def raises(call, text):
    try:
        call()
    except RuntimeError as e:
        assert text in str(e), e
        return
    raise AssertionError("no error")

g = torch.Generator().manual_seed(0)
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for n in (1, 7, 40, 1000):
        x = (torch.randn(n, generator=g, dtype=torch.float64) * 4).to(dtype)
        x[0] = float("-inf")
        for alpha in (1.0, 0.3, 2.5, -1.5, 1e-3):
            assert same(ops.celu(x, alpha), torch.celu(x, alpha)), (dtype, n, alpha)
            y, z = x.clone(), x.clone()
            assert same(ops.celu_(y, alpha), torch.celu_(z, alpha)) and same(y, z), (dtype, n, alpha)
        assert same(ops.celu_int(x, 2), torch.celu(x, 2)) and same(ops.celu_plain(x), torch.celu(x))
x = torch.randn(5)
raises(lambda: torch.celu(x, 0.0), "ZeroDivisionError: alpha cannot be 0 for CELU")
raises(lambda: ops.celu(x, 0.0), "ZeroDivisionError: alpha cannot be 0 for CELU")
raises(lambda: ops.celu(x.requires_grad_(), 0.5), "shimgen: elu.default: autograd would record the call")
print("ok")
"""


def test_the_rows_name_the_kernel_and_are_proven() -> None:
    for op in ("celu.default", "celu_.default"):
        row = scalars.load().kernel_compositions.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op).name == "celu"
        assert {"2.10.0", "2.13.0", "2.14.1", "2.15.0"} <= set(row["proven"])


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("celu")
    files, _ = pipeline.generate(["celu.default", "celu_.default"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "celu.cpp"
    src.write_text(CALLS)
    lib = str(root / "celu.so")
    build_so(str(src), lib, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return lib


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_equal_to_aten_on_every_runtime(ext, name) -> None:
    from tests.children import run_on

    proc = run_on(name, ON_RUNTIME, ext)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
