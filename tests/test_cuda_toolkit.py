"""shimgen.tools.cuda_toolkit: the toolkit a stable CUDA extension compiles with (no GPU needed), its static runtime,
and nvcc's -gencode flags."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from shimgen.base.errors import ShimgenError
from shimgen.tools import cuda_toolkit


def _toolkit(root, lib="lib64") -> str:
    for rel in ("bin/nvcc", "include/cuda_runtime.h", f"{lib}/libcudart_static.a"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return str(root)


def test_cuda_home_wins_when_it_is_a_toolkit(tmp_path, monkeypatch) -> None:
    home = _toolkit(tmp_path / "cuda", lib="lib")  # the PyPI layout (nvidia/cu13) has lib/, not lib64/
    monkeypatch.setenv("CUDA_HOME", home)
    assert cuda_toolkit.find() == home
    assert cuda_toolkit.static_cudart(home) == os.path.join(home, "lib", "libcudart_static.a")


def test_a_folder_without_the_static_runtime_is_not_a_toolkit(tmp_path, monkeypatch) -> None:
    home = tmp_path / "partial"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "nvcc").write_text("")
    (home / "include").mkdir()
    (home / "include" / "cuda_runtime.h").write_text("")
    assert not cuda_toolkit.is_toolkit(str(home))
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert cuda_toolkit.find() != str(home)


def test_an_nvcc_wrapper_script_names_the_real_toolkit(tmp_path, monkeypatch) -> None:
    real = _toolkit(tmp_path / "cuda-13.0")
    bindir = tmp_path / "wrappers"
    bindir.mkdir()
    (bindir / "nvcc").write_text(f'#!/bin/sh\nexec {real}/bin/nvcc "$@"\n')
    (bindir / "nvcc").chmod(0o755)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(bindir))
    assert real in [os.path.abspath(p) for p in cuda_toolkit._candidates()][:3]
    assert cuda_toolkit.find() == real


@pytest.mark.parametrize("spec, flags", [
    ("9.0", ["-gencode=arch=compute_90,code=sm_90"]),
    ("8.0;9.0+PTX", ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                     "-gencode=arch=compute_90,code=compute_90"]),
])
def test_arch_flags(spec, flags, monkeypatch) -> None:
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    assert cuda_toolkit.arch_flags(spec) == flags
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", spec)
    assert cuda_toolkit.arch_flags() == flags


def test_default_archs_are_ampere_and_hopper_with_ptx(monkeypatch) -> None:
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    assert cuda_toolkit.arch_flags()[-1] == "-gencode=arch=compute_90,code=compute_90"
    assert "-gencode=arch=compute_80,code=sm_80" in cuda_toolkit.arch_flags()


@pytest.mark.parametrize("spec, bad", [("garbage", "garbage"), ("8.0;Ampere", "Ampere"), ("9", "9"),
                                       ("9.0+ptx", "9.0+ptx"), ("8.0,9.0", "8.0,9.0")])
def test_an_arch_list_entry_that_is_no_architecture_is_an_error(spec, bad, monkeypatch) -> None:
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", spec)
    with pytest.raises(ShimgenError, match=re.escape(f"TORCH_CUDA_ARCH_LIST={spec}: {bad!r} is not")):
        cuda_toolkit.arch_flags()
    assert cuda_toolkit.arch_flags("9.0a;10.0f") == ["-gencode=arch=compute_90a,code=sm_90a",
                                                     "-gencode=arch=compute_100f,code=sm_100f"]


SETUP = ("from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
         "setup(name='small', version='0', ext_modules=[StableExtension('small_ext', ['small.cu'], cuda=True)],\n"
         "      cmdclass={'build_ext': BuildExtension})\n")
NVCC_WORKS = 'echo "$@" >> "$0.log"\necho "Cuda compilation tools, release 12.8, V12.8.93"\n'


@pytest.mark.parametrize("case", ["nvcc fails", "CUDA_HOME missing", "arch list garbage"])
def test_a_broken_cuda_setup_is_setuptools_one_error_line(tmp_path, case: str) -> None:
    """StableExtension(cuda=True) built with a toolkit whose nvcc fails, a CUDA_HOME that names no folder, or a
    TORCH_CUDA_ARCH_LIST nvcc would not take: setuptools' one `error: shimgen: ...` line naming the culprit, no
    traceback, and nvcc never given the bad entry."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'small'\nversion = '0'\n\n"
                                            "[tool.shimgen]\nops = ['add']\ntarget = '2.10'\n")
    (project / "setup.py").write_text(SETUP)
    (project / "small.cu").write_text("int f() { return 1; }\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST")}
    home = tmp_path / "cuda"
    _toolkit(home)
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + NVCC_WORKS)
    nvcc.chmod(0o755)
    env["CUDA_HOME"] = str(home)
    if case == "nvcc fails":
        nvcc.write_text("#!/bin/sh\necho 'nvcc fatal   : cannot open libnvvm.so' >&2\nexit 1\n")
        needles = [str(nvcc), "exit status 1", "cannot open libnvvm.so"]
    elif case == "CUDA_HOME missing":
        env["CUDA_HOME"] = str(tmp_path / "no-such-cuda")
        needles = [f"CUDA_HOME={tmp_path / 'no-such-cuda'}", "no such folder"]
    else:
        env["TORCH_CUDA_ARCH_LIST"] = "8.0;garbage"
        needles = ["TORCH_CUDA_ARCH_LIST=8.0;garbage", "'garbage'"]
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_ext"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: shimgen: "), proc.stderr[-3000:]
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    log = home / "bin" / "nvcc.log"
    assert not log.exists() or "garbage" not in log.read_text()
