"""Compiler helpers shared by the tests that build C++ against the installed torch (the flags are --verify's).

build_so keeps each library it links in a cache keyed by its content: the source, every file of the generated
folder it compiles against (by path within the folder and bytes), the flags, the torch release and the compiler.
A later build with the same content copies the library instead of compiling it. Libraries linked against other
libraries (`libs`: an overlay in a temporary folder, found through its rpath) are always compiled. The cache is
`$SHIMGEN_TEST_BUILD_CACHE`, else `~/.cache/shimgen/test-builds`; `SHIMGEN_TEST_BUILD_CACHE=` (empty) turns it
off."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess

from shimgen.proofs.verify import build

TORCH = build.find_torch()
CXX = build.compiler()
CACHE_ENTRIES = 400
_CACHE_DEFAULT = os.path.join(os.path.expanduser("~"), ".cache", "shimgen", "test-builds")


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
    """A stable-ABI extension library from one source file (reused from the cache when its content was built)."""
    cached = None if libs else _cached(src, generated, defines)
    if cached is not None and os.path.isfile(cached):
        shutil.copyfile(cached, out)
        os.utime(cached)  # recently used: kept by the pruning below
        return
    cmd = [CXX, *build.CXX_FLAGS, *TORCH.stable_flags(generated), *[f"-D{d}" for d in defines], src, "-o", out]
    proc = subprocess.run([*cmd, *libs, *TORCH.link_flags()], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    if cached is not None:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        stage = f"{cached}.{os.getpid()}"
        shutil.copyfile(out, stage)
        os.replace(stage, cached)  # atomic: concurrent test runs never see half a library
        _prune(os.path.dirname(cached))


def _prune(folder: str, keep: int = CACHE_ENTRIES) -> None:
    """Remove all but the `keep` most recently used libraries."""
    entries = [e for e in os.scandir(folder) if e.name.endswith(".so")]
    for entry in sorted(entries, key=lambda e: e.stat().st_mtime, reverse=True)[keep:]:
        try:
            os.remove(entry.path)
        except OSError:
            pass  # another run removed it first


@functools.lru_cache(maxsize=1)
def _compiler_id() -> str:
    return build.compiler_id(CXX)


def _cached(src: str, generated: str | None, defines) -> str | None:
    """The cache path of a build's library (None: caching is off)."""
    root = os.environ.get("SHIMGEN_TEST_BUILD_CACHE", _CACHE_DEFAULT)
    if not root:
        return None
    h = hashlib.sha256()
    for part in (CXX, _compiler_id(), TORCH.version, TORCH.root, *build.CXX_FLAGS, *defines):
        h.update(str(part).encode() + b"\0")
    with open(src, "rb") as f:
        h.update(f.read())
    if generated:
        for dirpath, dirs, files in os.walk(generated):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, generated).encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(f.read())
    return os.path.join(root, h.hexdigest() + ".so")


def load_extension(root, name: str, ops: list[str], source: str) -> str:
    """Generate `ops` (only) into root/gen, build `source` against them as root/<name>.so with libtorch alone,
    load it into torch.ops; the library's path."""
    import torch  # noqa: PLC0415 - only the tests that load an extension need it here

    from shimgen.generate import pipeline  # noqa: PLC0415

    out = str(root / "gen")
    files, _ = pipeline.generate(ops, None, None, out, only=True)
    pipeline.write(out, files)
    src = root / f"{name}.cpp"
    src.write_text(source)
    lib = str(root / f"{name}.so")
    build_so(str(src), lib, out)
    torch.ops.load_library(lib)
    return lib

