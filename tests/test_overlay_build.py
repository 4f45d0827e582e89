"""The overlay is a build product: `python -m shimgen.dev overlay-build` builds libshimgen_overlay.so
for the installed torch, records the torch version it was built against, and an extension that opts in
(-DSHIMGEN_OVERLAY) gets its routes: `softplus_backward(a, b, 0.5, 20)`, whose `beta` no libtorch route carries
(libtorch ships no shim for it; addcmul, softplus and celu, the examples before, have libtorch routes now), is exact. On another torch each
overlay shim refuses with an error naming both versions (or, across minor releases whose internal C++ API differs,
the loader refuses the library first: it is not ABI-stable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shimgen.generate import pipeline
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so

EXT = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;

Tensor plus_half(Tensor a, Tensor b) { return torch::stable::softplus_backward(a, b, 0.5, 20); }

STABLE_TORCH_LIBRARY(overlay_calls, m) { m.def("plus_half(Tensor a, Tensor b) -> Tensor"); }
STABLE_TORCH_LIBRARY_IMPL(overlay_calls, CompositeExplicitAutograd, m) {
  m.impl("plus_half", TORCH_BOX(&plus_half));
}
"""

RUN = """
import sys, torch
torch.ops.load_library(sys.argv[1])
a = torch.randn(40, generator=torch.Generator().manual_seed(0)); b = torch.randn(40)
try:
    r = torch.ops.overlay_calls.plus_half(a, b)
    want = torch.ops.aten.softplus_backward(a, b, 0.5, 20)
    print("exact" if torch.equal(r, want) and r.dtype == a.dtype else "wrong")
except RuntimeError as e:
    print("error:", str(e).splitlines()[0])
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("overlay_build")
    gen, lib_dir = str(root / "gen"), str(root / "lib")
    files, _ = pipeline.generate(["softplus_backward"], None, None)
    pipeline.write(gen, files)
    proc = subprocess.run([sys.executable, "-m", "shimgen.dev", "overlay-build", "--ops", "softplus_backward", "--out",
                           lib_dir],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    src = root / "ext.cpp"
    src.write_text(EXT)
    ext = str(root / "ext.so")
    build_so(str(src), ext, gen, defines=["SHIMGEN_OVERLAY"],
             libs=[f"-L{lib_dir}", "-lshimgen_overlay", f"-Wl,-rpath,{lib_dir}"])
    return {"lib_dir": lib_dir, "ext": ext}


def test_records_the_torch_it_was_built_for(built: dict[str, str]) -> None:
    import torch

    with open(os.path.join(built["lib_dir"], "libshimgen_overlay.json")) as f:
        record = json.load(f)
    assert record["torch"] == torch.__version__ and "softplus_backward.default" in record["ops"]
    out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(built["lib_dir"], "libshimgen_overlay.so")],
                         capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay_torch_version" in out and "aoti_torch_aten_softplus_backward" in out


def test_opted_in_extension_is_exact_on_its_torch(built: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-c", quick_exit(RUN), built["ext"]], capture_output=True, text=True)
    assert proc.stdout.strip() == "exact", proc.stdout + proc.stderr[-2000:]


def test_refuses_another_torch(built: dict[str, str]) -> None:
    rts, missing = runtimes.resolve(["2.14.1"])
    if not rts:
        pytest.skip(runtimes.missing_reason(missing))
    proc = subprocess.run([rts[0].python, "-c", quick_exit(RUN), built["ext"]], capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    print(text[-600:])
    assert "exact" not in proc.stdout and "wrong" not in proc.stdout
    assert ("built for torch 2.13.0 and is running on torch 2.14.1" in text) or ("undefined symbol" in text), text[-2000:]
