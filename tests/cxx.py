"""Compiler helpers shared by the tests that build C++ against the installed torch (the flags are --verify's)."""

from __future__ import annotations

import subprocess

from shimgen.verify import build

TORCH = build.find_torch()
CXX = build.compiler()


def syntax_check(source: str, generated: str | None, target: str | None = None,
                 defines: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """g++ -fsyntax-only over `source`, stable headers only; `generated` (a shimgen output) shadows torch's."""
    define = [f"-DTORCH_TARGET_VERSION={target}"] if target else []
    define += [f"-D{d}" for d in defines]
    return subprocess.run(
        [CXX, *TORCH.stable_flags(generated), *define, "-fsyntax-only", "-x", "c++", "-"],
        input=source,
        capture_output=True,
        text=True,
    )


def build_so(src: str, out: str, generated: str | None, defines: list[str] = (), libs: list[str] = ()) -> None:
    """A stable-ABI extension library from one source file."""
    cmd = [CXX, *build.CXX_FLAGS, *TORCH.stable_flags(generated), *[f"-D{d}" for d in defines], src, "-o", out]
    proc = subprocess.run([*cmd, *libs, *TORCH.link_flags()], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
