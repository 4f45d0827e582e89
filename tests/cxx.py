"""Compiler helpers shared by the tests that build C++ against the installed torch (the flags are --verify's)."""

from __future__ import annotations

import shutil
import subprocess

from shimgen.verify import build

TORCH = build.find_torch()
CXX = build.compiler()


# What an extension built with -Werror asks of every generated header. torch's own headers come in as system
# headers (-isystem, as CMake's imported targets pass them): some of them warn under -Wextra themselves.
WARNINGS = ("-Wall", "-Wextra", "-Werror")
CLANG = shutil.which("clang++")


def syntax_check(source: str, generated: str | None, target: str | None = None,
                 defines: tuple[str, ...] = (), cxx: str | None = None,
                 strict: bool = False) -> subprocess.CompletedProcess:
    """g++ (or `cxx`) -fsyntax-only over `source`, stable headers only; `generated` (a shimgen output) shadows
    torch's. `strict`: with WARNINGS, torch's include directory a system one."""
    define = [f"-DTORCH_TARGET_VERSION={target}"] if target else []
    define += [f"-D{d}" for d in defines]
    flags = TORCH.stable_flags(generated)
    if strict:
        flags = [f"-isystem{f[2:]}" if f == f"-I{TORCH.include_dirs[0]}" else f for f in flags] + list(WARNINGS)
    return subprocess.run(
        [cxx or CXX, *flags, *define, "-fsyntax-only", "-x", "c++", "-"],
        input=source,
        capture_output=True,
        text=True,
    )


def build_so(src: str, out: str, generated: str | None, defines: list[str] = (), libs: list[str] = ()) -> None:
    """A stable-ABI extension library from one source file."""
    cmd = [CXX, *build.CXX_FLAGS, *TORCH.stable_flags(generated), *[f"-D{d}" for d in defines], src, "-o", out]
    proc = subprocess.run([*cmd, *libs, *TORCH.link_flags()], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]


def load_extension(root, name: str, ops: list[str], source: str) -> str:
    """Generate `ops` (only) into root/gen, build `source` against them as root/<name>.so with libtorch alone,
    load it into torch.ops; the library's path."""
    import torch  # noqa: PLC0415 - only the tests that load an extension need it here

    from shimgen import pipeline  # noqa: PLC0415

    out = str(root / "gen")
    files, _ = pipeline.generate(ops, None, None, out, only=True)
    pipeline.write(out, files)
    src = root / f"{name}.cpp"
    src.write_text(source)
    lib = str(root / f"{name}.so")
    build_so(str(src), lib, out)
    torch.ops.load_library(lib)
    return lib

