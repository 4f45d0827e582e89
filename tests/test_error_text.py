"""A failing wrapper's error carries libtorch's own text wherever the runtime exports the getter
(torch_exception_get_what_without_backtrace, 2.13 on: data/releases.yaml error_text_since), even in an extension
built for an older release: scalar.h libtorch_error_text looks it up at run time (dlsym), so the same library still
loads on a runtime without it (2.10), where the message says the call failed and that libtorch logged why."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shimgen.generate import pipeline
from shimgen.facts import releases
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so

EXT = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

// aten raises on mismatched shapes: mm and clamp.Tensor, both through the dispatcher route (SHIMGEN_CHECK)
Tensor k_mm(Tensor a, Tensor b) { return ts::mm(a, b); }
Tensor k_clamp(Tensor a, Tensor b) { return ts::clamp(a, b, b); }

STABLE_TORCH_LIBRARY(shimgen_error_text, m) {
  m.def("mm(Tensor a, Tensor b) -> Tensor");
  m.def("clamp(Tensor a, Tensor b) -> Tensor");
}
STABLE_TORCH_LIBRARY_IMPL(shimgen_error_text, CompositeExplicitAutograd, m) {
  m.impl("mm", TORCH_BOX(&k_mm));
  m.impl("clamp", TORCH_BOX(&k_clamp));
}
"""

RUN = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
for name in ("mm", "clamp"):
    try:
        getattr(torch.ops.shimgen_error_text, name)(torch.ones(2, 3), torch.ones(4, 5))
        print("no error")
    except RuntimeError as e:
        print(str(e).splitlines()[0])
"""

TARGET_2_10 = "0x020a000000000000"


@pytest.fixture(scope="module")
def lib_2_10(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("error_text")
    files, _ = pipeline.generate(["mm", "clamp"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "ext.cpp"
    src.write_text(EXT)
    lib = str(root / "ext.so")
    build_so(str(src), lib, str(root / "gen"), [f"TORCH_TARGET_VERSION={TARGET_2_10}"])
    return lib


def _run(python: str, lib: str) -> list[str]:
    proc = subprocess.run([python, "-c", quick_exit(RUN), lib], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def test_target_2_10_carries_atens_text_on_the_installed_runtime(lib_2_10) -> None:
    import torch

    assert releases.load().error_text_since <= releases.Version.parse(torch.__version__.split("+")[0])
    mm, clamp = _run(sys.executable, lib_2_10)
    with pytest.raises(RuntimeError) as want_mm:
        torch.mm(torch.ones(2, 3), torch.ones(4, 5))
    assert mm == str(want_mm.value).splitlines()[0]
    assert clamp == "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1", clamp


def test_target_2_10_still_loads_on_2_10(lib_2_10) -> None:
    rt = runtimes.find("2.10.0")
    if rt is None or rt.installed:
        pytest.skip("needs the torch 2.10.0 runtime venv (SHIMGEN_RUNTIMES/torch-2.10.0)")
    mm, clamp = _run(rt.python, lib_2_10)
    assert mm.startswith("shimgen: libtorch call failed: ") and mm.endswith("(libtorch logged the reason on stderr)")
    assert clamp.startswith("shimgen: libtorch call failed: ") and "aten::clamp" in clamp, clamp
