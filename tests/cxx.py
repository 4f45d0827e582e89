"""Compiler helpers shared by the tests that build C++ against the installed torch (the flags are --verify's).

build_so keeps each library it links in a cache keyed by its content: the source, every file of the generated
folder it compiles against (by path within the folder and bytes), the flags, the torch release and the compiler.
A later build with the same content copies the library instead of compiling it. Libraries linked against other
libraries (`libs`: an overlay in a temporary folder, found through its rpath) are always compiled. syntax_check
records each check the same way (its key adds the command line: target, defines, compiler, warnings), and a
later check of the same content gives the same exit status and diagnostics without compiling, naming the generated
folder at hand; a missing header (a fatal error) is never recorded. Below both, every compile of the run (any
process) goes through the compiler cache (use_compiler_cache, tests/compile_cache.py). The cache is
`$SHIMGEN_TEST_BUILD_CACHE`, else `~/.cache/shimgen/test-builds`; `SHIMGEN_TEST_BUILD_CACHE=` (empty) turns all of it
off."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys

from shimgen.proofs.verify import build

CACHE_ENTRIES = 400
_CACHE_DEFAULT = os.path.join(os.path.expanduser("~"), ".cache", "shimgen", "test-builds")
COMPILERS = ("g++", "c++", "gcc", "cc", "clang++", "clang", "x86_64-linux-gnu-g++", "x86_64-linux-gnu-gcc")


def cache_root() -> str | None:
    """The test build cache's folder; None when it is turned off (SHIMGEN_TEST_BUILD_CACHE empty)."""
    return os.environ.get("SHIMGEN_TEST_BUILD_CACHE", _CACHE_DEFAULT) or None


def use_compiler_cache() -> bool:
    """Every compile of the run goes through tests/compile_cache.py (objects and syntax checks, passed or failed,
    kept by content, in the build cache's `objects` folder): launchers named as the compilers, first on PATH, which
    every subprocess inherits (--verify, the matrix, the probe, setuptools, CMake, torch.utils.cpp_extension). Returns
    whether it is on."""
    root = cache_root()
    if root is None:
        return False
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile_cache.py")
    run = f'exec "{sys.executable}" -S "{script}"'
    # one folder per interpreter and checkout, written whole before it is used
    bin_dir = os.path.join(root, "bin-" + hashlib.sha256(run.encode()).hexdigest()[:16])
    if not os.path.isdir(bin_dir):
        stage = f"{bin_dir}.{os.getpid()}"
        os.makedirs(stage, exist_ok=True)
        for name in COMPILERS:
            path = os.path.join(stage, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(f'#!/bin/sh\n{run} {name} "$@"\n')
            os.chmod(path, 0o755)
        try:
            os.rename(stage, bin_dir)
        except OSError:
            shutil.rmtree(stage, ignore_errors=True)  # another process made it first
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    os.environ["SHIMGEN_COMPILE_CACHE_BIN"] = bin_dir
    os.environ["SHIMGEN_COMPILE_CACHE"] = os.path.join(root, "objects")
    return True


use_compiler_cache()
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
    cmd = [cxx or CXX, *flags, *define, "-fsyntax-only", "-x", "c++", "-"]
    # the key holds the generated folder's content, not its (temporary) path, and the compiler's name and identity
    # (_cache_path), not the path of its launcher (in a folder named for the checkout: use_compiler_cache)
    key = [part.replace(generated, "<generated>") if generated else part for part in cmd[1:]]
    # a failing check is kept too, with its exit status: the key names every input (the compiler, torch, the flags,
    # the source and the generated folder's bytes), so the same diagnostics come back, naming this folder
    checked = _cache_path(generated, cmd[0], [*key, source], ".checked")
    stored = _read_entry(checked)
    if stored is not None:
        stored = json.loads(stored)
        stderr = stored["stderr"].replace("<generated>", generated) if generated else stored["stderr"]
        return subprocess.CompletedProcess(cmd, stored["returncode"], "", stderr)
    proc = subprocess.run(cmd, input=source, capture_output=True, text=True)
    if checked is not None and "fatal error" not in proc.stderr:  # a missing header: not kept
        stderr = proc.stderr.replace(generated, "<generated>") if generated else proc.stderr
        _store(checked, json.dumps({"returncode": proc.returncode, "stderr": stderr}).encode())
    return proc


def build_so(src: str, out: str, generated: str | None, defines: list[str] = (), libs: list[str] = ()) -> None:
    """A stable-ABI extension library from one source file (reused from the cache when its content was built)."""
    with open(src, "rb") as f:
        source = f.read().decode()
    cached = None if libs else _cache_path(generated, CXX, [*build.CXX_FLAGS, *defines, source], ".so")
    data = _read_entry(cached)
    if data is not None:
        stage = f"{out}.{os.getpid()}"
        with open(stage, "wb") as f:
            f.write(data)
        os.replace(stage, out)
        return
    proc = library([*TORCH.stable_flags(generated), *[f"-D{d}" for d in defines]], src, out,
                   [*libs, *TORCH.link_flags()])
    assert proc.returncode == 0, proc.stderr[-4000:]
    if cached is not None:
        with open(out, "rb") as f:
            _store(cached, f.read())


def library(flags: list[str], source: str, out: str, link: list[str], cxx: str | None = None
            ) -> subprocess.CompletedProcess:
    """`source` built into the shared library `out` in build.library's two commands (compile, then link: the
    compile is what a compiler cache reuses); the process of the command that failed, else of the link."""
    for cmd in build.library(cxx or CXX, flags, source, out, link):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            break
    return proc


def kept_text(kind: str, parts: list[str], make, keep: int) -> str:
    """make(), a text that depends only on `parts` (every input, by content), kept in the build cache's `kind`
    folder (its `keep` most recently used entries): a later call with the same parts reads it back."""
    root = cache_root()
    if root is None:
        return make()
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    folder = os.path.join(root, kind)
    path = os.path.join(folder, h.hexdigest() + ".kept")
    kept = _read_entry(path)
    if kept is not None:
        return kept.decode("utf-8")
    text = make()
    _store(path, text.encode())
    _prune_kind(folder, ".kept", keep)
    return text


def _read_entry(path: str | None) -> bytes | None:
    """A cache entry's bytes, marked recently used (kept by the pruning); None where there is none. Another process
    (an xdist worker, a concurrent run) may prune it between any two steps: then it is a miss, never an error."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
        os.utime(path)
    except FileNotFoundError:
        return None
    return data


def _store(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    stage = f"{path}.{os.getpid()}"
    with open(stage, "wb") as f:
        f.write(data)
    os.replace(stage, path)  # atomic: concurrent test runs never see half an entry
    _prune(os.path.dirname(path))


def _prune(folder: str, keep: int = CACHE_ENTRIES) -> None:
    """Remove all but the `keep` most recently used entries of each kind (libraries, syntax checks)."""
    for kind in (".so", ".checked"):
        _prune_kind(folder, kind, keep)


def _prune_kind(folder: str, kind: str, keep: int) -> None:
    entries = [e for e in os.scandir(folder) if e.name.endswith(kind)]
    for entry in sorted(entries, key=lambda e: e.stat().st_mtime, reverse=True)[keep:]:
        try:
            os.remove(entry.path)
        except OSError:
            pass  # another run removed it first


@functools.lru_cache(maxsize=None)
def _compiler_id(cxx: str) -> str:
    return build.compiler_id(cxx)


def _cache_path(generated: str | None, cxx: str, parts, kind: str) -> str | None:
    """The cache entry of a compile (None: caching is off): keyed by the compiler, the torch release, `parts` (the
    flags and the source) and every file of the generated folder, by its path within the folder and its bytes."""
    root = cache_root()
    if root is None:
        return None
    h = hashlib.sha256()
    for part in (os.path.basename(cxx), _compiler_id(cxx), TORCH.version, TORCH.root, *parts):
        h.update(str(part).encode() + b"\0")
    if generated:
        for dirpath, dirs, files in os.walk(generated):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, generated).encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(f.read())
    return os.path.join(root, h.hexdigest() + kind)


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

