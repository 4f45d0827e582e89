"""Compiler helpers shared by the tests that build C++ against the installed torch."""

from __future__ import annotations

import os
import subprocess

import torch
import torch.utils.cpp_extension as cpp_ext

TORCH_LIB = os.path.join(os.path.dirname(torch.__file__), "lib")
TORCH_INCLUDES = [f"-I{p}" for p in cpp_ext.include_paths()]
LINK = [f"-L{TORCH_LIB}", "-ltorch", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{TORCH_LIB}"]


def stable_flags(generated: str | None, target: str | None = None) -> list[str]:
    """Flags for a stable-ABI-only TU; `generated` (a shimgen output folder) shadows torch's headers."""
    flags = ["g++", "-std=c++17", "-DTORCH_STABLE_ONLY"]
    if target:
        flags.append(f"-DTORCH_TARGET_VERSION={target}")
    if generated:
        flags.append(f"-I{generated}")
    return flags + TORCH_INCLUDES


def syntax_check(source: str, generated: str | None, target: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*stable_flags(generated, target), "-fsyntax-only", "-x", "c++", "-"],
        input=source,
        capture_output=True,
        text=True,
    )


def build_so(src: str, out: str, generated: str | None, defines: list[str] = (), libs: list[str] = ()) -> None:
    cmd = [*stable_flags(generated), "-O1", "-shared", "-fPIC", *[f"-D{d}" for d in defines], src, "-o", out]
    proc = subprocess.run(cmd + list(libs) + LINK, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
