"""The device route (shimgen/generate/routes/device_shim.py, routes `cpu` and `cuda`): torch::stable::cpu:: wrappers over libtorch's device C shims.

1. Common calls through torch::stable::cpu:: in an extension linked with libtorch alone are exact against ATen
   given what the caller wrote (float tensors), and a number the shim's double would change is refused with a
   `shimgen:` error (int tensors), never computed differently.
2. The extension references only aoti_torch_cpu_* shims the installed libtorch exports; nothing from
   libtorch_cuda, nothing from the overlay. A TU using the default wrappers (ops.h) references no device shim:
   the default surface never takes this route. The cuda:: header compiles but only an extension that includes
   it can reference aoti_torch_cuda_*.
3. Why the default wrappers never take it: in a kernel that runs above autograd and autocast
   (CompositeImplicitAutograd), the device shim drops the gradient and ignores autocast, and no function
   libtorch exports tells a wrapper where it runs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from shimgen.facts import libtorch_device_shims as device_shims
from shimgen.generate import pipeline, routes
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.facts.versions import Version
from tests.cxx import TORCH, build_so, syntax_check

OPS = ["add", "pow", "mul", "addmm", "cumsum"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/cpu/ops.h>

using torch::stable::Tensor;
namespace tc = torch::stable::cpu;

Tensor k_add(Tensor a, Tensor b) { return tc::add(a, b); }
Tensor k_add_alpha(Tensor a, Tensor b, double alpha) { return tc::add(a, b, alpha); }
Tensor k_pow2(Tensor x) { return tc::pow(x, 2); }
Tensor k_pow_half(Tensor x) { return tc::pow(x, 0.5); }
Tensor k_mul(Tensor x, double n) { return tc::mul(x, n); }
Tensor k_mul_int(Tensor x, int64_t n) { return tc::mul(x, n); }
Tensor k_addmm_out(Tensor out, Tensor s, Tensor m1, Tensor m2) { tc::addmm_out(out, s, m1, m2); return out; }
Tensor k_cumsum(Tensor x) { return tc::cumsum(x, 1); }

STABLE_TORCH_LIBRARY(device_calls, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor");
  m.def("add_alpha(Tensor a, Tensor b, float alpha) -> Tensor");
  m.def("pow2(Tensor x) -> Tensor");
  m.def("pow_half(Tensor x) -> Tensor");
  m.def("mul(Tensor x, float n) -> Tensor");
  m.def("mul_int(Tensor x, int n) -> Tensor");
  m.def("addmm_out(Tensor(a!) out, Tensor s, Tensor m1, Tensor m2) -> Tensor(a!)");
  m.def("cumsum(Tensor x) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(device_calls, CPU, m) {
  m.impl("add", TORCH_BOX(&k_add));
  m.impl("add_alpha", TORCH_BOX(&k_add_alpha));
  m.impl("pow2", TORCH_BOX(&k_pow2));
  m.impl("pow_half", TORCH_BOX(&k_pow_half));
  m.impl("mul", TORCH_BOX(&k_mul));
  m.impl("mul_int", TORCH_BOX(&k_mul_int));
  m.impl("addmm_out", TORCH_BOX(&k_addmm_out));
  m.impl("cumsum", TORCH_BOX(&k_cumsum));
}
"""

DEFAULT_ONLY = r"""
#include <torch/csrc/stable/ops.h>
torch::stable::Tensor f(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  return torch::stable::cumsum(torch::stable::mul(a, b), 0);
}
"""


def _undefined(lib: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("device") / "gen")
    files, _ = pipeline.generate(OPS, None, None, out, only=True)
    pipeline.write(out, files)
    return out


@pytest.fixture(scope="module")
def ext(gen, tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("device_ext")
    src = root / "calls.cpp"
    src.write_text(CALLS)
    lib = str(root / "calls.so")
    build_so(str(src), lib, gen)  # libtorch alone: no overlay, no libtorch_cuda
    torch.ops.load_library(lib)
    return lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_common_calls_are_exact(ext, dtype) -> None:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 5, generator=g).to(dtype), torch.randn(4, 5, generator=g).to(dtype)
    ops = torch.ops.device_calls
    assert _same(ops.add(a, b), torch.add(a, b))
    assert _same(ops.add_alpha(a, b, 0.5), torch.add(a, b, alpha=0.5))
    assert _same(ops.pow2(a), a.pow(2))
    assert _same(ops.pow_half(a.abs()), a.abs().pow(0.5))
    assert _same(ops.mul(a, 2.5), a * 2.5)
    assert _same(ops.mul_int(a, 3), a * 3)
    assert _same(ops.cumsum(a), torch.cumsum(a, 1))
    m1, m2 = torch.randn(4, 3, generator=g).to(dtype), torch.randn(3, 5, generator=g).to(dtype)
    out = torch.empty(0, dtype=dtype)
    assert _same(ops.addmm_out(out, a, m1, m2), torch.addmm(a, m1, m2))


def test_numbers_the_double_would_change_are_refused(ext) -> None:
    i, j = torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])
    ops = torch.ops.device_calls
    assert _same(torch.add(i, j), torch.tensor([5, 7, 9]))  # what ATen does: the refusal is a cost, counted
    for call in (lambda: ops.add(i, j), lambda: ops.pow2(i), lambda: ops.mul_int(i, 3)):
        with pytest.raises(RuntimeError, match="shimgen: "):
            call()
    big = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="shimgen: "):
        ops.mul_int(big, 2**53 + 1)  # an integer a double cannot hold


def test_the_extension_needs_libtorch_alone(ext) -> None:
    undefined = _undefined(ext)
    device = {s for s in undefined if s.startswith("aoti_torch_cpu_")}
    assert {"aoti_torch_cpu_add_Tensor", "aoti_torch_cpu_pow_Tensor_Scalar", "aoti_torch_cpu_addmm_out"} <= device
    assert not {s for s in undefined if s.startswith("aoti_torch_cuda_")}
    assert not {s for s in undefined if s.startswith("aoti_torch_aten_")} - {
        "aoti_torch_aten_fill__Scalar", "aoti_torch_aten_new_empty", "aoti_torch_aten_new_zeros"}
    exported = device_shims.exported_symbols(os.path.join(TORCH.lib_dir, "libtorch_cpu.so"))
    assert device <= exported


def test_default_wrappers_never_take_the_device_route(gen, tmp_path) -> None:
    src = tmp_path / "default.cpp"
    src.write_text(DEFAULT_ONLY)
    lib = str(tmp_path / "default.so")
    build_so(str(src), lib, gen)
    assert not {s for s in _undefined(lib) if s.startswith(("aoti_torch_cpu_", "aoti_torch_cuda_"))}
    ops_h = open(os.path.join(gen, "torch/csrc/stable/ops.h"), encoding="utf-8").read()
    assert "stable/cpu/ops.h" not in ops_h and "stable/cuda/ops.h" not in ops_h


@pytest.mark.parametrize("target", [Version(2, 10), Version(2, 13)])
def test_the_cuda_header_compiles_and_is_gated(gen, target) -> None:
    text = open(os.path.join(gen, routes.get("cuda").header), encoding="utf-8").read()
    assert "aoti_torch_cuda_add_Tensor" in text and "aoti_torch_cpu_" not in text
    src = "#include <torch/csrc/stable/cuda/ops.h>\n" \
          "torch::stable::Tensor f(const torch::stable::Tensor& a) { return torch::stable::cuda::pow(a, 2.0); }\n"
    r = syntax_check(src, gen, target.hex)
    assert r.returncode == 0, r.stderr[-3000:]


def test_a_shim_declared_later_is_hidden_at_older_targets(tmp_path) -> None:
    out = str(tmp_path / "gen")
    files, plan = pipeline.generate(["_grouped_mm"], None, None, out, only=True)
    (w,) = routes.get("cpu").wrappers(plan, sig_cpp.wrappers(plan)[0])
    assert w.since == Version(2, 12)  # aoti_torch_cpu__grouped_mm: first declared by 2.12's header
    pipeline.write(out, files)
    src = "#include <torch/csrc/stable/cpu/ops.h>\n" \
          "auto p = &torch::stable::cpu::_grouped_mm;\n"
    assert syntax_check(src, out, Version(2, 12).hex).returncode == 0
    assert syntax_check(src, out, Version(2, 11).hex).returncode != 0


@pytest.fixture(scope="module")
def ext_implicit(gen, tmp_path_factory) -> str:
    """The same calls in kernels registered as CompositeImplicitAutograd: the kernel runs above autograd and
    autocast, where a wrapper inside it must dispatch for the caller to get what ATen gives."""
    root = tmp_path_factory.mktemp("device_implicit")
    src = root / "calls.cpp"
    src.write_text(CALLS.replace("device_calls", "device_implicit").replace(
        "STABLE_TORCH_LIBRARY_IMPL(device_implicit, CPU, m)",
        "STABLE_TORCH_LIBRARY_IMPL(device_implicit, CompositeImplicitAutograd, m)"))
    lib = str(root / "calls.so")
    build_so(str(src), lib, gen)
    torch.ops.load_library(lib)
    return lib


def test_why_default_wrappers_do_not_bypass_the_dispatcher(ext, ext_implicit) -> None:
    """What the caller gets from a device shim depends on where the wrapper runs, which no function libtorch
    exports reveals (no getter for requires_grad, autocast or dispatch modes in any release 2.9-2.15)."""
    ops, implicit = torch.ops.device_calls, torch.ops.device_implicit
    # Above autograd: ATen records the gradient, the device shim does not.
    a = torch.randn(3, requires_grad=True)
    assert torch.add(a, a).grad_fn is not None
    assert implicit.add(a, a).grad_fn is None and not implicit.add(a, a).requires_grad
    # Under autocast: ATen's addmm computes in bfloat16, the device shim in float32.
    s, m1, m2 = torch.randn(2, 2), torch.randn(2, 3), torch.randn(3, 2)
    with torch.autocast("cpu"):
        assert torch.addmm(s, m1, m2).dtype == torch.bfloat16
        assert implicit.addmm_out(torch.empty(0), s, m1, m2).dtype == torch.float32
    # A float tensor with the neg bit (`x.conj().imag`) is resolved by the dispatcher before any kernel runs,
    # so from a dispatched kernel the device shim sees the right values.
    x = torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -4.0])).conj().imag
    assert x.is_neg()
    assert torch.equal(ops.add(x, torch.zeros(2)), torch.tensor([-3.0, 4.0]))
    assert torch.equal(implicit.add(x, torch.zeros(2)), torch.tensor([-3.0, 4.0]))


def test_verify_proves_the_device_wrappers(tmp_path) -> None:
    """`shimgen --verify` runs the cpu:: wrappers against aten too (a second table): every one proven, wrong 0."""
    env = {**os.environ, "SHIMGEN_VERIFY_OPINFO": "off"}
    ops = "add.Tensor,add.Scalar,mul.Tensor,mul.Scalar,pow.Tensor_Scalar,pow.Tensor_Tensor,cumsum.default,addmm.out"
    r = subprocess.run([sys.executable, "-m", "shimgen", "--ops", ops, "--only", "--out", str(tmp_path / "gen"),
                        "--verify", "--build-dir", str(tmp_path / "b"), "--jobs", "2"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    head, _, device = r.stdout.partition("torch::stable::cpu:: wrappers")
    rows = [line.split() for line in device.splitlines() if line.split()[1:2] == ["cpu"]]
    assert sorted(row[0] for row in rows) == sorted(ops.split(","))
    assert all(row[-1] == "proven" and row[-4] == "0" for row in rows), device  # wrong column is 0
    assert "8/8 overloads proven" in device


def test_the_route_is_a_route_with_a_surface_of_its_own() -> None:
    """Through the routes interface: rows `cpu` and `cuda` of data/routes.yaml, libtorch alone, never a form of a
    default wrapper, and their own namespaced wrappers whose forms are theirs."""
    from shimgen.generate import plan as plan_mod

    cpu, cuda = routes.get("cpu"), routes.get("cuda")
    assert not cpu.overlay and not cuda.overlay and not cpu.calls_c_shim
    p = plan_mod.make(["add", "pow", "mul", "cumsum", "addmm"], additive=False)
    assert all(v.route not in (cpu, cuda) for w in sig_cpp.wrappers(p)[0] for v in w.variants)
    ws = sig_cpp.wrappers(p)[0]
    names = {w.op.name for w in cpu.wrappers(p, ws)}
    assert {"add.Tensor", "pow.Tensor_Scalar", "mul.Scalar", "cumsum.default", "addmm.out"} <= names
    assert "addmm.default" not in names  # libtorch has no device shim for the functional addmm
    assert all(v.route is cpu and v.shim.startswith("aoti_torch_cpu_") for w in cpu.wrappers(p, ws) for v in w.variants)
    assert set(cpu.files(p, ws)) == {"torch/csrc/stable/cpu/ops.h"} and cpu.owned == ("torch/csrc/stable/cpu/",)
