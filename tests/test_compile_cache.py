"""tests/compile_cache.py, the run's compiler cache: the same content compiled in another run's temporary folder is
restored without the compiler (object, warnings, dependency file; a failed compile's status and errors); a changed
header compiles again; a missing header is never stored; what it cannot cache runs the compiler untouched."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "compile_cache.py")
REAL = shutil.which("g++", path=os.pathsep.join(
    p for p in os.environ.get("PATH", "").split(os.pathsep) if p != os.environ.get("SHIMGEN_COMPILE_CACHE_BIN")))

pytestmark = pytest.mark.skipif(REAL is None, reason="no g++ on PATH")


@pytest.fixture
def env(tmp_path):
    """A launcher folder, then a folder whose g++ logs each run of the real compiler, then the rest of PATH."""
    launchers, real = tmp_path / "launchers", tmp_path / "real"
    launchers.mkdir()
    real.mkdir()
    log = tmp_path / "compiler.log"
    (launchers / "g++").write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{SCRIPT}" g++ "$@"\n')
    (real / "g++").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{REAL}" "$@"\n')
    for f in (launchers / "g++", real / "g++"):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    path = os.pathsep.join([str(launchers), str(real), os.environ.get("PATH", "")])
    return {"env": {**os.environ, "PATH": path, "SHIMGEN_COMPILE_CACHE_BIN": str(launchers),
                    "SHIMGEN_COMPILE_CACHE": str(tmp_path / "objects")},
            "log": log}


@pytest.fixture
def runs(tmp_path):
    """Two folders named as two pytest runs' temporary folders (pytest-of-USER/pytest-N): the paths that differ
    between runs."""
    base = next((p for p in tmp_path.parents if p.name.startswith("pytest-of-")), None)  # /tmp/pytest-of-USER
    if base is None:
        pytest.skip(f"the temporary folder {tmp_path} is not pytest's default one")
    roots = [base / f"pytest-{n}" for n in (9_000_000 + os.getpid(), 9_500_000 + os.getpid())]
    folders = []
    for i, root in enumerate(roots):
        folder = root / f"popen-gw{i}" / "build0"
        (folder / "include").mkdir(parents=True)
        (folder / "include" / "value.h").write_text("#pragma once\ninline int value() { return 41; }\n")
        (folder / "unit.cpp").write_text('#include "value.h"\nint answer() { int unused; return value() + 1; }\n')
        folders.append(folder)
    yield folders
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


def compile_in(folder, env, *extra: str) -> subprocess.CompletedProcess:
    cmd = ["g++", "-O1", "-Wall", f"-I{folder / 'include'}", "-c", str(folder / "unit.cpp"), "-o",
           str(folder / "unit.o"), *extra]
    return subprocess.run(cmd, env=env["env"], capture_output=True, text=True)


def compiles(env) -> int:
    return len(env["log"].read_text().splitlines()) if env["log"].exists() else 0


def test_the_same_content_in_another_runs_folder_is_restored(runs, env) -> None:
    first = compile_in(runs[0], env)
    assert first.returncode == 0 and compiles(env) == 1
    assert "unused variable" in first.stderr
    second = compile_in(runs[1], env)
    assert second.returncode == 0 and compiles(env) == 1, "the compiler ran again"
    assert (runs[1] / "unit.o").read_bytes() == (runs[0] / "unit.o").read_bytes()
    # the warning replayed, naming this run's file
    assert str(runs[1] / "unit.cpp") in second.stderr and str(runs[0]) not in second.stderr


def test_a_changed_header_compiles_again(runs, env) -> None:
    assert compile_in(runs[0], env).returncode == 0
    (runs[1] / "include" / "value.h").write_text("#pragma once\ninline int value() { return 1; }\n")
    assert compile_in(runs[1], env).returncode == 0 and compiles(env) == 2
    # and each content is restored from then on
    assert compile_in(runs[0], env).returncode == 0 and compile_in(runs[1], env).returncode == 0
    assert compiles(env) == 2


def test_a_failed_compile_fails_again_without_the_compiler(runs, env) -> None:
    for folder in runs:
        (folder / "unit.cpp").write_text('#include "value.h"\nint answer() { return missing + value(); }\n')
    first = compile_in(runs[0], env)
    assert first.returncode != 0 and "was not declared" in first.stderr and compiles(env) == 1
    second = compile_in(runs[1], env)
    assert compiles(env) == 1, "the compiler ran again"
    assert second.returncode == first.returncode and not (runs[1] / "unit.o").exists()
    assert second.stderr == first.stderr.replace(str(runs[0]), str(runs[1]))  # naming this run's file
    # the header it read changed: compiled again (it now compiles)
    header = "#pragma once\nconstexpr int missing = 1;\ninline int value() { return 1; }\n"
    (runs[1] / "include" / "value.h").write_text(header)
    assert compile_in(runs[1], env).returncode == 0 and compiles(env) == 2


def test_a_missing_header_is_never_stored(runs, env) -> None:
    (runs[0] / "unit.cpp").write_text('#include "absent.h"\nint answer() { return 1; }\n')
    for n in (1, 2):
        proc = compile_in(runs[0], env)
        assert proc.returncode != 0 and "absent.h" in proc.stderr
        assert compiles(env) == n


def test_the_dependency_file_is_restored_for_this_folder(runs, env) -> None:
    for i, folder in enumerate(runs):
        proc = compile_in(folder, env, "-MD", "-MF", str(folder / "unit.d"))
        assert proc.returncode == 0 and compiles(env) == 1
        deps = (folder / "unit.d").read_text()
        assert str(folder / "include" / "value.h") in deps and str(runs[1 - i]) not in deps, deps


def test_a_link_runs_the_compiler(runs, env) -> None:
    assert compile_in(runs[0], env).returncode == 0
    obj = runs[0] / "unit.o"
    proc = subprocess.run(["g++", "-shared", str(obj), "-o", str(runs[0] / "libunit.so")], env=env["env"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and compiles(env) == 2 and (runs[0] / "libunit.so").exists()
