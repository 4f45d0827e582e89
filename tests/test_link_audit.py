"""The audit the build integrations run after linking (shimgen.tools.link_audit): a small stable extension at
target 2.10 that calls a function first exported by libtorch 2.13 (declared by hand: the 2.10 headers hide it)
builds into a library libtorch 2.10 refuses. shimgen.setuptools and the CMake package stop that build with one line
naming the function and the release; each opt-out lets it through; a library within its target builds with the
verdict in the log. The audit itself imports no torch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from shimgen.base.errors import ShimgenError
from shimgen.facts import releases
from shimgen.facts.versions import Version
from shimgen.proofs.verify import build
from shimgen.tools import link_audit, project
from tests.test_cli_errors import assert_one_line_error

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEWER = dict(releases.load().libtorch_markers)[Version(2, 13)]  # torch_library_set_python_module
TIMEOUT = 600
TABLE = '[project]\nname = "small"\nversion = "0"\n\n[tool.shimgen]\nops = ["relu"]\nonly = true\ntarget = "2.10"\n'
SETUP = ("from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
         "setup(name='small', version='0', ext_modules=[StableExtension('small_ext', ['small.cpp'])],\n"
         "      cmdclass={'build_ext': BuildExtension})\n")
SOURCE = ("#include <torch/csrc/stable/library.h>\n#include <torch/csrc/stable/ops.h>\n"
          "torch::stable::Tensor r(const torch::stable::Tensor& x) { return torch::stable::relu(x); }\n")
BREAKS = SOURCE + f'extern "C" int {NEWER}(void);  // libtorch 2.13\'s\nint f() {{ return {NEWER}(); }}\n'


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != link_audit.ENV}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, **extra}


def _project(folder, source: str, table: str = TABLE) -> None:
    (folder / "pyproject.toml").write_text(table)
    (folder / "setup.py").write_text(SETUP)
    (folder / "small.cpp").write_text(source)


def _build_ext(folder, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "setup.py", "build_ext", "--force"], cwd=folder, capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env(**env))


def _the_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-3000:]
    return errors[0]


def test_setuptools_stops_a_library_that_breaks_its_target(tmp_path) -> None:
    _project(tmp_path, BREAKS)
    line = _the_line(_build_ext(tmp_path))
    assert line.startswith("error: shimgen: ") and "small_ext" in line, line
    assert f"needs torch >= 2.13 (target 2.10): {NEWER}" in line, line
    assert "audit = false" in line and f"{link_audit.ENV}=0" in line, line
    # the opt-outs: the environment, then the table
    off = _build_ext(tmp_path, **{link_audit.ENV: "0"})
    assert off.returncode == 0 and "shimgen audit:" not in off.stdout + off.stderr, off.stderr[-3000:]
    _project(tmp_path, BREAKS, TABLE + "audit = false\n")
    off = _build_ext(tmp_path)
    assert off.returncode == 0 and "shimgen audit:" not in off.stdout + off.stderr, off.stderr[-3000:]
    # SHIMGEN_AUDIT=1 leaves the table's setting in force; a value it does not know is one line
    assert _build_ext(tmp_path, **{link_audit.ENV: "1"}).returncode == 0
    bad = _the_line(_build_ext(tmp_path, **{link_audit.ENV: "maybe"}))
    assert bad == f"error: shimgen: {link_audit.ENV}='maybe': expected 0 or 1", bad


def test_setuptools_logs_the_verdict_of_a_library_within_its_target(tmp_path) -> None:
    _project(tmp_path, SOURCE)
    proc = _build_ext(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    newest = releases.load().runtimes[-1].rsplit(".", 1)[0]
    assert f"small_ext.abi3.so: loads on torch 2.10-{newest} (target 2.10)" in proc.stdout + proc.stderr, proc.stdout


def test_the_table_key_is_checked(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE + 'audit = "no"\n')
    with pytest.raises(ShimgenError, match="`audit` is true or false, not 'no'"):
        project.load(str(tmp_path / "pyproject.toml"))
    (tmp_path / "pyproject.toml").write_text(TABLE + "audit = false\n")
    assert project.load(str(tmp_path / "pyproject.toml")).audit is False


CMAKE_LISTS = """cmake_minimum_required(VERSION 3.18)
project(t CXX)
find_package(Shimgen REQUIRED)
add_library(t SHARED small.cpp)
shimgen_generate(t PROJECT ${CMAKE_CURRENT_SOURCE_DIR}/pyproject.toml)
"""


def test_cmake_stops_a_library_that_breaks_its_target(tmp_path) -> None:
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if cmake is None or ninja is None:
        pytest.skip("the CMake build needs cmake and ninja")
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    _project(src, BREAKS)
    (src / "CMakeLists.txt").write_text(CMAKE_LISTS)
    exe = tmp_path / "shimgen"  # this checkout's shimgen as the command the package runs
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT}${{PYTHONPATH:+:$PYTHONPATH}} "
                   f"exec {sys.executable} -m shimgen \"$@\"\n")
    exe.chmod(0o755)

    def configure(*args: str) -> None:
        proc = subprocess.run([cmake, "-S", str(src), "-B", str(build), "-G", "Ninja",
                               f"-DShimgen_DIR={os.path.join(ROOT, 'shimgen', 'cmake')}", f"-DSHIMGEN_EXECUTABLE={exe}",
                               *args], capture_output=True, text=True, timeout=TIMEOUT, env=_env())
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    def build_it(**env: str) -> subprocess.CompletedProcess:
        return subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=TIMEOUT,
                              env=_env(**env))

    configure()
    for _ in range(2):  # the failed step runs again on the next build: the failure is not forgotten
        proc = build_it()
        assert proc.returncode != 0, proc.stdout[-3000:]
        lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("shimgen: ")]
        assert lines == [f"shimgen: {build / 'libt.so'}: needs torch >= 2.13 (target 2.10): {NEWER} (the audit "
                         f"after linking; -D{link_audit.ENV}=OFF or {link_audit.ENV}=0 skips this check)"], lines
    assert build_it(**{link_audit.ENV: "0"}).returncode == 0
    configure(f"-D{link_audit.ENV}=OFF")
    (src / "small.cpp").write_text(BREAKS + "// edited\n")
    proc = build_it()
    assert proc.returncode == 0 and "shimgen audit" not in proc.stdout, proc.stdout[-3000:]
    configure(f"-D{link_audit.ENV}=ON")
    (src / "small.cpp").write_text(SOURCE)
    proc = build_it()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"shimgen audit: {build / 'libt.so'}: loads on torch 2.10-" in proc.stdout, proc.stdout[-3000:]


def test_after_link_is_one_line_and_imports_no_torch(tmp_path) -> None:
    """The step CMake runs: its verdict line, and no torch module imported (it must stay fast)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build the library audited")
    src = tmp_path / "lib.c"
    src.write_text(f"int {NEWER}(void);\nint f(void) {{ return {NEWER}(); }}\n")
    so = str(tmp_path / "lib.so")
    lib = build.find_torch().lib_dir  # linked as an extension links: libtorch named as needed
    subprocess.run([cc, "-shared", "-fPIC", "-o", so, str(src), f"-L{lib}", "-Wl,--no-as-needed", "-ltorch",
                    "-ltorch_cpu"], check=True)
    code = ("import sys\nfrom shimgen.tools import audit_command\nstatus = audit_command.main(sys.argv[1:])\n"
            "print('torch imported' if any(m == 'torch' or m.startswith('torch.') for m in sys.modules) else "
            "'no torch', status)\n")
    proc = subprocess.run([sys.executable, "-c", code, "--after-link", "--target", "2.13", so], capture_output=True,
                          text=True, env=_env())
    assert proc.stdout.splitlines()[-1] == "no torch 0", proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0].startswith(f"shimgen audit: {so}: loads on torch 2.13-")
    proc = subprocess.run([sys.executable, "-m", "shimgen", "audit", "--after-link", "--target", "2.10", so],
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert proc.stderr.splitlines() == [f"shimgen: {so}: needs torch >= 2.13 (target 2.10): {NEWER} (the audit "
                                        f"after linking; -D{link_audit.ENV}=OFF or {link_audit.ENV}=0 skips this "
                                        "check)"], proc.stderr
    off = subprocess.run([sys.executable, "-m", "shimgen", "audit", "--after-link", "--target", "2.10", so],
                         capture_output=True, text=True, env=_env(**{link_audit.ENV: "0"}))
    assert off.returncode == 0 and off.stdout == off.stderr == "", off
    assert_one_line_error(subprocess.run([sys.executable, "-m", "shimgen", "audit", "--after-link", "--json", so],
                                         capture_output=True, text=True, env=_env()), "--after-link")
    assert_one_line_error(subprocess.run([sys.executable, "-m", "shimgen", "audit", "--after-link", so],
                                         capture_output=True, text=True, env=_env(**{link_audit.ENV: "maybe"})),
                          f"{link_audit.ENV}='maybe': expected 0 or 1")
