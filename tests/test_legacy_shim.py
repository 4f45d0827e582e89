"""The legacy-shim route (shimgen/generate/routes/legacy_shim.py, facts data/legacy_shims.yaml): torch::stable::addmm and
addmm_out through libtorch's aoti_torch_addmm_out (shim.h), with libtorch alone.

1. The facts: every row's shim is declared by the installed torch's shim headers and exported by its
   libtorch_cpu.so, and is proven on every runtime the data names.
2. Without SHIMGEN_OVERLAY the default wrappers take the route (at targets 2.9 and 2.13); with it, shimgen's own
   shim (which carries every number exactly) keeps the call.
3. In an extension linked with libtorch alone, built from the generated headers: calls are exact against ATen given
   what the caller wrote (registered for CPU and as CompositeImplicitAutograd), under autocast too (the operands
   cast as autocast's policy casts them); a number the float would change, an integer tensor and an input that
   requires grad in grad mode each give a `shimgen:` error or ATen's own error with shimgen's remedy appended,
   never a value ATen would not give.
"""

from __future__ import annotations

import glob
import os
import subprocess

import pytest
import torch

from shimgen.facts import libtorch_device_shims as device_shims
from shimgen.generate import pipeline
from shimgen.generate.routes import legacy_shim
from tests.cxx import CXX, TORCH, build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_addmm(Tensor s, Tensor m1, Tensor m2) { return ts::addmm(s, m1, m2); }
Tensor k_addmm_ba(Tensor s, Tensor m1, Tensor m2, double beta, double alpha) { return ts::addmm(s, m1, m2, beta, alpha); }
Tensor k_addmm_int(Tensor s, Tensor m1, Tensor m2, int64_t beta) { return ts::addmm(s, m1, m2, beta); }
Tensor k_addmm_out(Tensor out, Tensor s, Tensor m1, Tensor m2, double beta) { ts::addmm_out(out, s, m1, m2, beta); return out; }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("addmm(Tensor s, Tensor m1, Tensor m2) -> Tensor");
  m.def("addmm_ba(Tensor s, Tensor m1, Tensor m2, float beta, float alpha) -> Tensor");
  m.def("addmm_int(Tensor s, Tensor m1, Tensor m2, int beta) -> Tensor");
  m.def("addmm_out(Tensor(a!) out, Tensor s, Tensor m1, Tensor m2, float beta) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, KEY, m) {
  m.impl("addmm", TORCH_BOX(&k_addmm));
  m.impl("addmm_ba", TORCH_BOX(&k_addmm_ba));
  m.impl("addmm_int", TORCH_BOX(&k_addmm_int));
  m.impl("addmm_out", TORCH_BOX(&k_addmm_out));
}
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("legacy") / "gen")
    files, _ = pipeline.generate(["addmm"], None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build(gen: str, root, ns: str, key: str) -> str:
    src = root / f"{ns}.cpp"
    src.write_text(CALLS.replace("NS", ns).replace("KEY", key))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen)  # libtorch alone: no overlay
    torch.ops.load_library(lib)
    return lib


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("legacy_ext"), "legacy_cpu", "CPU")


@pytest.fixture(scope="module")
def ext_implicit(gen, tmp_path_factory) -> str:
    return _build(gen, tmp_path_factory.mktemp("legacy_implicit"), "legacy_implicit", "CompositeImplicitAutograd")


def test_the_facts_are_the_installed_torchs() -> None:
    include = os.path.join(TORCH.include_dirs[0], "torch/csrc/inductor/aoti_torch/c")
    declared = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(include, "*.h")))
    exported = device_shims.exported_symbols(os.path.join(TORCH.lib_dir, "libtorch_cpu.so"))
    rows = legacy_shim.rules()
    assert {"addmm.default", "addmm.out"} <= set(rows)
    for op, r in rows.items():
        assert f"{r['function']}(" in declared, op
        assert r["function"] in exported, op
        assert torch.__version__.split("+")[0] in r["proven"], op
    assert legacy_shim.cells_mask(rows["addmm.default"]) == (1 << 9) | (1 << 10) | (1 << 13) | (1 << 14)


@pytest.mark.parametrize("target", ["2.9", "2.13"])
def test_the_default_wrappers_take_the_route_without_the_overlay(target, tmp_path) -> None:
    files, _ = pipeline.generate(["addmm"], None, target, str(tmp_path), only=True)
    text = files["torch/csrc/stable/ops/addmm.h"] + files["torch/csrc/stable/ops/addmm_out.h"]
    assert text.count("aoti_torch_addmm_out(") >= 2
    assert '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"' in text


def test_the_deprecated_shim_builds_with_werror(gen) -> None:
    """shim.h declares the legacy shims deprecated: the wrapper's call must not warn (-Werror builds)."""
    proc = subprocess.run([CXX, *TORCH.stable_flags(gen), "-Werror=deprecated-declarations", "-fsyntax-only",
                           "-x", "c++", "-"], input=CALLS.replace("NS", "w").replace("KEY", "CPU"),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert "aoti_torch_addmm_out" in undefined
    assert not {s for s in undefined if s.startswith("aoti_torch_aten_addmm")}
    assert {s for s in undefined if s.startswith("aoti_torch")} <= device_shims.exported_symbols(
        os.path.join(TORCH.lib_dir, "libtorch_cpu.so"))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


@pytest.mark.parametrize("ns", ["legacy_cpu", "legacy_implicit"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64])
def test_calls_are_exact(ext, ext_implicit, ns, dtype) -> None:
    ops = getattr(torch.ops, ns)
    s, m1, m2 = (torch.randn(*shape).to(dtype) for shape in ((3,), (2, 4), (4, 3)))
    assert _same(ops.addmm(s, m1, m2), torch.addmm(s, m1, m2))
    assert _same(ops.addmm_ba(s, m1, m2, 0.5, -2.0), torch.addmm(s, m1, m2, beta=0.5, alpha=-2.0))
    assert _same(ops.addmm_int(s, m1, m2, 3), torch.addmm(s, m1, m2, beta=3))
    out, want = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
    torch.addmm(s, m1, m2, beta=0.25, out=want)
    assert _same(ops.addmm_out(out, s, m1, m2, 0.25), want)


def test_what_the_float_cannot_carry_is_refused(ext) -> None:
    s, m1, m2 = torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)
    with pytest.raises(RuntimeError, match=r"shimgen: addmm.default: beta=0\.1.*float.*SHIMGEN_OVERLAY"):
        torch.ops.legacy_cpu.addmm_ba(s, m1, m2, 0.1, 1.0)  # 0.1 is no float
    with pytest.raises(RuntimeError, match=r"shimgen: addmm.default: beta=16777217.*SHIMGEN_OVERLAY"):
        torch.ops.legacy_cpu.addmm_int(s, m1, m2, 2**24 + 1)
    i = (torch.randint(-5, 5, shape) for shape in ((3,), (2, 4), (4, 3)))
    with pytest.raises(RuntimeError, match=r"shimgen: addmm.default: beta=1.*SHIMGEN_OVERLAY"):
        torch.ops.legacy_cpu.addmm(*i)  # integer tensors: the float beta is not proven there


@pytest.mark.parametrize("ns", ["legacy_cpu", "legacy_implicit"])
def test_autocast_computes_what_autocast_computes(ext, ext_implicit, ns) -> None:
    s, m1, m2 = torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = torch.addmm(s, m1, m2)
        assert want.dtype == torch.bfloat16
        assert _same(getattr(torch.ops, ns).addmm(s, m1, m2), want)


@pytest.mark.parametrize("ns", ["legacy_cpu", "legacy_implicit"])
def test_an_input_requiring_grad_in_grad_mode_is_an_error_naming_the_remedy(ext, ext_implicit, ns) -> None:
    """Measured: also in a kernel registered for CPU (an op with no autograd kernel of its own), autograd sees the
    out= call; with grad mode off (a custom op's forward under torch.library.register_autograd) it is exact."""
    s, m1, m2 = torch.randn(3, requires_grad=True), torch.randn(2, 4), torch.randn(4, 3)
    with pytest.raises(RuntimeError, match=r"out=.*grad mode off.*SHIMGEN_OVERLAY"):
        getattr(torch.ops, ns).addmm(s, m1, m2)
    with torch.no_grad():
        assert _same(getattr(torch.ops, ns).addmm(s, m1, m2), torch.addmm(s, m1, m2))
