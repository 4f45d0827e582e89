"""The worked extension (examples/stable_ops) built the way users build theirs: once, with shimgen.setuptools at
target 2.10 on the installed torch, into one abi3 wheel; that same wheel installed (`pip install --no-deps`) beside
the torch 2.10.0 and 2.14.1 runtimes and the installed torch, its own tests passing on each; its library needing
only what libtorch 2.10.0 exports; abi3audit clean. And the same sources built with CMake (shimgen_generate).
Where a CUDA toolkit is found (always in CI: .ci/run installs one), the wheel carries the CUDA kernels too, with the
CUDA runtime linked statically: the same library loads on the CPU build of torch installed here.

In CI (CI=true) a missing runtime fails; elsewhere it is skipped with the venv named."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from shimgen.proofs.verify import runtimes
from tests.children import quick_exit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "stable_ops")
TARGET_HEX = "0x020a000000000000"  # [tool.shimgen] target = "2.10"


def _runtime(name: str) -> runtimes.Runtime:
    r = runtimes.find(name)
    if r is None:
        reason = runtimes.missing_reason([name])
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return r


def _copy_example(dest: str) -> str:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    return dest


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """(the wheel, pip's verbose build log): built once per session from a copy of the example."""
    src = _copy_example(str(tmp_path_factory.mktemp("example") / "stable_ops"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps",
                           "--no-index", "-w", "dist", "."], cwd=src, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = glob.glob(os.path.join(src, "dist", "*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], proc.stdout + proc.stderr


def _library(wheel_path: str, dest: str) -> str:
    with zipfile.ZipFile(wheel_path) as z:
        names = [n for n in z.namelist() if n.endswith(".so")]
        assert names == ["stable_ops/_C.abi3.so"], names
        z.extract(names[0], dest)
    return os.path.join(dest, names[0])


def test_one_abi3_wheel(wheel, tmp_path):
    path, log = wheel
    assert os.path.basename(path) == "shimgen_example_stable_ops-0.1.0-cp39-abi3-linux_x86_64.whl"
    with zipfile.ZipFile(path) as z:
        meta = z.read("shimgen_example_stable_ops-0.1.0.dist-info/WHEEL").decode()
    assert "Tag: cp39-abi3-linux_x86_64" in meta.splitlines()
    audit = shutil.which("abi3audit", path=os.path.dirname(sys.executable)) or shutil.which("abi3audit")
    if audit is None:
        pytest.fail("abi3audit is not installed (it is in the test extras: pip install -e '.[test]')")
    proc = subprocess.run([audit, "--strict", "--verbose", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 ABI version mismatches and 0 ABI violations" in " ".join((proc.stdout + proc.stderr).split())
    # The library's Python references: the limited API's module creation, nothing else.
    so = _library(path, str(tmp_path))
    undefined = _undefined(so)
    assert sorted(s for s in undefined if s.startswith(("Py", "_Py"))) == ["PyModule_Create2"]


def test_built_with_the_stable_flags(wheel):
    """The compile line: the generated headers first (before torch's), stable-only, target 2.10, limited API."""
    _, log = wheel
    compiles = [line for line in log.splitlines() if "stable_ops.cpp" in line and " -c " in line]
    assert compiles, log[-3000:]
    line = compiles[0]
    for flag in ("-DTORCH_STABLE_ONLY", f"-DTORCH_TARGET_VERSION={TARGET_HEX}", "-DPy_LIMITED_API="):
        assert flag in line, flag
    includes = re.findall(r"-I(\S+)", line)
    generated = next(i for i, d in enumerate(includes) if d.endswith(os.sep + "shimgen"))  # <build_temp>/shimgen
    torch_include = next(i for i, d in enumerate(includes) if d.endswith(os.path.join("torch", "include")))
    assert generated < torch_include
    assert "-ltorch_python" not in log


def _undefined(so: str) -> dict[str, str]:
    """Undefined dynamic symbols -> their version ('' when unversioned), as `nm -D --undefined-only` lists them."""
    out = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        parts = line.split()
        name = parts[-1]
        sym, _, version = name.partition("@")
        result[sym] = version.lstrip("@")
    return result


def test_links_only_what_libtorch_2_10_exports(wheel, tmp_path):
    """Every symbol the library needs is exported by libtorch 2.10.0 (libtorch, libtorch_cpu, libc10), or is the C
    or C++ runtime's (versioned GLIBC/GLIBCXX/CXXABI/GCC), or Python's limited API (checked above)."""
    r = _runtime("2.10.0")
    exported = set()
    for lib in ("libtorch.so", "libtorch_cpu.so", "libc10.so"):
        out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(r.torch.lib_dir, lib)],
                             capture_output=True, text=True, check=True).stdout
        exported |= {line.split()[-1].partition("@")[0] for line in out.splitlines() if line.strip()}
    needed = _undefined(_library(wheel[0], str(tmp_path)))
    torch_side = sorted(s for s in needed if s.startswith(("aoti_torch_", "torch_")))
    assert len(torch_side) > 20 and "torch_call_dispatcher" in torch_side
    runtime = ("GLIBC_", "GLIBCXX_", "CXXABI_", "GCC_")
    weak = {"__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "__cxa_finalize"}
    unexplained = sorted(s for s, v in needed.items()
                         if s not in exported and not v.startswith(runtime) and s not in weak
                         and not s.startswith("Py"))
    assert unexplained == [], unexplained
    assert [s for s in torch_side if s not in exported] == []


def _run_module():
    spec = importlib.util.spec_from_file_location("run_on_runtimes", os.path.join(EXAMPLE, "run_on_runtimes.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1"])
def test_same_wheel_runs_its_tests(wheel, tmp_path, name):
    python = sys.executable if name == "installed" else _runtime(name).python
    version, outcome, detail = _run_module().run(python, wheel[0], str(tmp_path))
    assert outcome == "ok", (version, detail)
    assert re.match(r"Ran 9 tests", detail), detail
    if name != "installed":
        assert version.startswith(name)


def _toolkit_or_skip() -> str:
    from shimgen.tools import cuda_toolkit

    root = cuda_toolkit.find()
    if root is None:
        reason = "no CUDA toolkit (nvcc): the wheel was built with its CPU kernels only"
        pytest.fail(reason) if os.environ.get("CI") == "true" else pytest.skip(reason)
    return root


def test_cuda_kernels_in_the_same_library(wheel, tmp_path):
    """nvcc compiled the .cu for sm_80 and sm_90 (+ PTX) into the one library; it links no CUDA library (the
    runtime is static: CPU builds of torch ship no libcudart, CUDA builds each their own) and needs no CUDA symbol
    from outside; torch_cuda's stream getter is looked up at run time, never linked."""
    _toolkit_or_skip()
    path, log = wheel
    nvcc = [line for line in log.splitlines() if "rms_norm_cuda.cu" in line and "nvcc" in line]
    assert nvcc, log[-3000:]
    for flag in ("-DSTABLE_OPS_WITH_CUDA", "code=sm_90", "code=compute_90", f"-DTORCH_TARGET_VERSION={TARGET_HEX}"):
        assert flag in nvcc[0], flag
    so = _library(path, str(tmp_path))
    dynamic = subprocess.run(["readelf", "-d", so], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    assert "libtorch_cpu.so" in needed
    assert [n for n in needed if "cuda" in n or "cudart" in n] == [], needed
    sections = subprocess.run(["readelf", "-S", "-W", so], capture_output=True, text=True, check=True).stdout
    assert ".nv_fatbin" in sections
    undefined = _undefined(so)
    assert [s for s in undefined if s.startswith(("cuda", "__cuda", "aoti_torch_get_current_cuda"))] == []


def test_kernels_registered_per_device_key(wheel, tmp_path):
    """rms_norm_act reads its data: its CPU kernel on the CPU key, its CUDA kernel on the CUDA key, nothing for
    every backend (a CUDA tensor must never reach the CPU loop); the ops made of aten calls serve every device."""
    _toolkit_or_skip()
    with zipfile.ZipFile(wheel[0]) as z:
        z.extractall(tmp_path)
    probe = (
        "import torch, stable_ops\n"
        "has = torch._C._dispatch_has_kernel_for_dispatch_key\n"
        "for op in ('rms_norm_act', 'masked_softmax', 'quantize_int8', 'requantize_int8'):\n"
        "    print(op, *[k for k in ('CPU', 'CUDA', 'CompositeExplicitAutograd') if has('stable_ops::' + op, k)])\n")
    proc = subprocess.run([sys.executable, "-c", quick_exit(probe)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["rms_norm_act CPU CUDA", "masked_softmax CompositeExplicitAutograd",
                                        "quantize_int8 CompositeExplicitAutograd",
                                        "requantize_int8 CompositeExplicitAutograd"]


def test_cmake_build(tmp_path):
    """The CMake build of the example (its CMakeLists.txt's commands) on a copy: configure, build, load the library
    into torch and call an op; a second build does nothing, a changed op list regenerates."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("cmake is not installed") if os.environ.get("CI") == "true" else pytest.skip("no cmake")
    src = _copy_example(str(tmp_path / "stable_ops"))
    build = str(tmp_path / "build")
    shimgen = shutil.which("shimgen", path=os.path.dirname(sys.executable)) or shutil.which("shimgen")
    assert shimgen, "the shimgen command is not installed"
    cmake_dir = subprocess.run([shimgen, "--cmake-dir"], capture_output=True, text=True, check=True).stdout.strip()
    env = {**os.environ, "PATH": os.path.dirname(shimgen) + os.pathsep + os.environ.get("PATH", "")}
    configure = subprocess.run([cmake, "-S", src, "-B", build, f"-DShimgen_DIR={cmake_dir}"], capture_output=True,
                               text=True, env=env)
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    first = subprocess.run([cmake, "--build", build], capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "shimgen: generating" in first.stdout
    flags = open(os.path.join(build, "CMakeFiles", "stable_ops.dir", "flags.make")).read()
    assert f"-DTORCH_TARGET_VERSION={TARGET_HEX}" in flags and "-DTORCH_STABLE_ONLY" in flags
    assert flags.index(os.path.join(build, "shimgen-stable_ops")) < flags.index(os.path.join("torch", "include"))
    lib = os.path.join(build, "libstable_ops.so")
    probe = subprocess.run([sys.executable, "-c", (
        "import torch; torch.ops.load_library(%r); x = torch.tensor([[1.0, 2.0, 3.0]]); "
        "m = torch.tensor([[True, False, True]]); y = torch.ops.stable_ops.masked_softmax(x, m, -1); "
        "assert torch.equal(y, torch.softmax(x.masked_fill(~m, float('-inf')), -1)), y; print('ok')") % lib],
        capture_output=True, text=True)
    assert probe.stdout.strip() == "ok", probe.stderr[-2000:]
    again = subprocess.run([cmake, "--build", build], capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "shimgen: generating" not in again.stdout
    pyproject = os.path.join(src, "pyproject.toml")
    text = open(pyproject).read()
    with open(pyproject, "w") as f:
        f.write(text.replace('"abs", ', '"abs", "exp", '))
    third = subprocess.run([cmake, "--build", build], capture_output=True, text=True, env=env)
    assert third.returncode == 0 and "shimgen: generating" in third.stdout, third.stdout[-2000:]
    assert os.path.isfile(os.path.join(build, "shimgen-stable_ops", "torch", "csrc", "stable", "ops", "exp.h"))


SMALL = """
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

torch::stable::Tensor plus(const torch::stable::Tensor& a, const torch::stable::Tensor& b) {
  // softplus_backward: only shimgen's overlay carries its Scalar beta at 2.13
  return torch::stable::softplus_backward(a, b, b.dim(), 20);
}

STABLE_TORCH_LIBRARY(small_ext, m) {
  m.def("plus(Tensor a, Tensor b) -> Tensor");
}
STABLE_TORCH_LIBRARY_IMPL(small_ext, CompositeExplicitAutograd, m) {
  m.impl("plus", TORCH_BOX(&plus));
}
"""


@pytest.mark.parametrize("overlay", [False, True])
def test_overlay_is_opt_in(tmp_path, overlay):
    """A wrapper with no libtorch route at the target (softplus_backward at 2.13: its Scalar beta) needs the overlay:
    without `overlay = true` the build stops at compile time with the message naming the op, the reason and the
    remedy (never a library that fails to load); with it (-DSHIMGEN_OVERLAY), the build goes through and the
    library references the overlay's C shim (the author links the overlay)."""
    (tmp_path / "small.cpp").write_text(SMALL)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "small-ext"\nversion = "0"\n\n[tool.shimgen]\nops = ["softplus_backward"]\ntarget = "2.13"\n'
        f"overlay = {str(overlay).lower()}\n")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
        "setup(ext_modules=[StableExtension('small_ext', ['small.cpp'])], cmdclass={'build_ext': BuildExtension})\n")
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, capture_output=True,
                          text=True)
    if overlay:
        assert proc.returncode == 0, proc.stderr[-3000:]
        built = [p for p in os.listdir(tmp_path) if p.startswith("small_ext") and p.endswith(".so")]
        nm = subprocess.run(["nm", "-D", "--undefined-only", str(tmp_path / built[0])], capture_output=True,
                            text=True, check=True).stdout
        assert "aoti_torch_aten_softplus_backward" in nm
    else:
        assert proc.returncode != 0
        said = proc.stdout + proc.stderr  # the compiler's message reaches stdout through ninja
        assert ("torch::stable::softplus_backward: aten::softplus_backward.default has no libtorch route"
                in said), said[-3000:]
        assert "Define SHIMGEN_OVERLAY" in said  # (torch's ninja runner then prints its own traceback)
