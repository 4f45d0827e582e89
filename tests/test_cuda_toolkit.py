"""shimgen.tools.cuda_toolkit: the toolkit a stable CUDA extension compiles with (no GPU needed), its static runtime,
and nvcc's -gencode flags."""

from __future__ import annotations

import os

import pytest

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
