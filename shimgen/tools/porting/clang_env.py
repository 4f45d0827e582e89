"""Where libclang and the compiler's headers are: one place for the analysis and the members' derivation."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sysconfig
from importlib import metadata


def cindex():
    """clang.cindex, or None where the `libclang` package is not installed."""
    try:
        from clang import cindex
    except ImportError:
        return None
    return cindex


@functools.lru_cache(maxsize=None)
def builtin_includes() -> tuple[str, ...]:
    """The compiler's own headers (stddef.h, ...): the libclang wheel ships none, the C++ compiler's serve."""
    out = []
    for cxx in (os.environ.get("CXX") or "c++", "g++", "clang++"):
        try:
            got = subprocess.run([cxx, "-print-file-name=include"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        path = got.stdout.strip()
        if got.returncode == 0 and os.path.isabs(path) and os.path.isdir(path):
            out.append(path)
            break
    return tuple(out)


@functools.lru_cache(maxsize=None)
def installed_torch() -> tuple[str, str]:
    """The installed torch's package folder and version, found without importing it (3 s of CPU that a scan, which
    only reads its headers, does not need); read once a process (its metadata's parse is tens of milliseconds, and
    a scan asks for each file)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("torch is not installed")
    return list(spec.submodule_search_locations)[0], metadata.version("torch")


def torch_includes(root: str | None = None) -> list[str]:
    """Include folders of a torch (the installed one, or the one whose include folder is `root`)."""
    if root is None:
        root = os.path.join(installed_torch()[0], "include")
    return [root, os.path.join(root, "torch", "csrc", "api", "include")]


def args(includes: list[str], header: bool = False, extra: tuple[str, ...] = ()) -> list[str]:
    out = ["-x", "c++-header" if header else "c++", "-std=c++17", "-w", *extra]
    for inc in builtin_includes():
        out += ["-isystem", inc]
    py = sysconfig.get_paths().get("include")
    if py:
        out += ["-isystem", py]
    for inc in includes:
        out.append(f"-I{inc}")
    return out
