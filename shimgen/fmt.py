"""Formatting of generated files: clang-format with PyTorch's style for C++, black for Python."""

from __future__ import annotations

import functools
import shutil
import subprocess
from importlib import resources

from shimgen.errors import ShimgenError


@functools.cache
def _clang_format() -> str:
    exe = shutil.which("clang-format")
    if exe is None:
        raise ShimgenError("clang-format not found: install shimgen's dependencies (pip install clang-format)")
    return exe


def clang_format(text: str) -> str:
    style = resources.files("shimgen").joinpath("data/.clang-format")
    proc = subprocess.run(
        [_clang_format(), f"--style=file:{style}", "--assume-filename=generated.cpp"],
        input=text,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ShimgenError(f"clang-format failed: {proc.stderr.strip()}")
    return proc.stdout


def black_format(text: str, pyi: bool = False) -> str:
    import black  # imported lazily: it is the slowest import shimgen has

    return black.format_str(text, mode=black.Mode(is_pyi=pyi))
