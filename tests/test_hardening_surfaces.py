"""The CLI's promises kept by the surfaces around it: `[tool.shimgen]`, `shimgen port`, shimgen.setuptools, the
CMake package and `--check`. Bad input gets one line naming the file, key or argument and the reason, exit 2, no
traceback, no hang (a FIFO is refused, never opened blocking), and existing output is left as it was; release
numbers pass one check (shimgen.facts.releases.parse); `--check` compares bytes and file types; CMake regenerates only
when an input changes, with Unix Makefiles as with Ninja.

Each test reproduces a hostile but fair input in a subprocess, as a user would, under a timeout: a hang fails the
test instead of stalling the suite."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys

import pytest

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.base import output
from shimgen.facts import releases
from shimgen.generate import stamp
from shimgen.base.errors import ShimgenError
from shimgen.setuptools import stable_flags
from tests.test_cli_errors import assert_one_line_error, snapshot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(ROOT, "tests", "port")
TIMEOUT = 60  # seconds: every run here takes a few; a hang fails instead of stalling the suite
SMALL_CPP = "#include <ATen/ATen.h>\nat::Tensor f(const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }\n"


def shimgen(*args: str, cwd=None, preexec_fn=None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    # Under a file size limit (preexec_fn) the interpreter writes no bytecode: importlib does not check that a .pyc
    # was written whole, and one cut at the limit would break every later import of that module. Nor does the
    # run's compiler cache store anything there (tests/compile_cache.py): its files, cut at the limit, would fail
    # the compiler probe that `port` runs.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "SHIMGEN_COMPILE_CACHE": ""} if preexec_fn else None
    return subprocess.run([sys.executable, "-m", "shimgen", *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, timeout=TIMEOUT, preexec_fn=preexec_fn, env=env)


def port(*args: str, **kw) -> subprocess.CompletedProcess:
    """`shimgen port ARGS`; skipped where the C++ parser it needs (the `port` extra) is not installed."""
    proc = shimgen("port", *args, **kw)
    if "shimgen port needs a C++ parser" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    return proc


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> str:
    """`shimgen --ops add --only` written once; tests take a copy (`folder`)."""
    out = str(tmp_path_factory.mktemp("generated") / "out")
    proc = shimgen("--ops", "add", "--only", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def folder(generated, tmp_path) -> str:
    out = str(tmp_path / "out")
    shutil.copytree(generated, out, symlinks=True)
    return out


@pytest.fixture
def sources(tmp_path) -> str:
    src = tmp_path / "src"
    src.mkdir()
    (src / "small.cpp").write_text(SMALL_CPP)
    return str(src)


# ---- 1. reports: staged, then renamed; errors name the argument -------------------------------------------------


def test_report_into_a_missing_folder_names_the_argument(sources, tmp_path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text("old\n")
    proc = port(sources, "--target", "2.10", "--toml", str(toml), "--json", "/nonexistent/r.json")
    line = assert_one_line_error(proc, "--json /nonexistent/r.json", "No such file or directory")
    assert "standard output" not in line
    assert toml.read_text() == "old\n"  # --toml is not written when --json then fails
    assert sorted(os.listdir(tmp_path)) == ["src", "t.toml"]  # no staging file left


def test_report_on_a_full_file_system_leaves_the_previous_one(sources, tmp_path) -> None:
    """A write that fails midway (the file size limit stands in for a full disk: EFBIG where ENOSPC would be)
    leaves the previous report whole, valid JSON, and no staging file."""
    old = tmp_path / "r.json"
    old.write_text('{"old": true}\n')

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    proc = port(sources, "--target", "2.10", "--json", str(old), preexec_fn=limited)
    assert_one_line_error(proc, f"--json {old}", "File too large")
    assert old.read_text() == '{"old": true}\n'
    assert sorted(os.listdir(tmp_path)) == ["r.json", "src"]


def test_reports_are_written_whole(sources, tmp_path) -> None:
    proc = port(sources, "--target", "2.10", "--toml", str(tmp_path / "t.toml"), "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    assert "at::add" in proc.stdout
    assert '"add"' in (tmp_path / "t.toml").read_text() and '"2.10"' in (tmp_path / "r.json").read_text()


@pytest.mark.parametrize("case", ["same file", "folder", "fifo", "closed stdout"])
def test_report_destinations_refused(sources, tmp_path, case: str) -> None:
    report = tmp_path / "r.json"
    report.write_text("old\n")
    args = [sources, "--target", "2.10", "--json", str(report)]
    if case == "same file":
        args += ["--toml", str(report)]
        needle = "names the same file"
    elif case == "folder":
        args[-1] = str(tmp_path)
        needle = "it is a directory, not a regular file"
    elif case == "fifo":
        os.mkfifo(tmp_path / "fifo")
        args[-1] = str(tmp_path / "fifo")
        needle = "it is a FIFO, not a regular file"
    else:
        needle = "standard output"
    if case == "closed stdout":  # the report cannot be printed (a read-only stdout): nothing is written either
        with open(os.devnull) as read_only:
            proc = port(*args, stdout=read_only)
        assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
        no_traceback(proc)
    else:
        assert_one_line_error(port(*args), needle)
    assert report.read_text() == "old\n"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(output.STAGE_PREFIX)]


@pytest.mark.parametrize("case", ["missing folder", "folder", "same file"])
def test_report_destinations_are_refused_before_the_scan(sources, tmp_path, monkeypatch, case: str) -> None:
    """A report port could not write is refused before libclang reads a source (seconds a file)."""
    from shimgen.tools import port
    from shimgen.tools.porting import analyze

    def scan_file(*args, **kwargs):
        raise AssertionError("the sources were scanned before the destinations were checked")

    monkeypatch.setattr(analyze, "scan_file", scan_file)
    report = str(tmp_path / "r.json")
    args = {"missing folder": ["--json", str(tmp_path / "none" / "r.json")], "folder": ["--json", str(tmp_path)],
            "same file": ["--json", report, "--toml", report]}[case]
    needle = {"missing folder": "No such file or directory", "folder": "it is a directory, not a regular file",
              "same file": "names the same file"}[case]
    with pytest.raises(ShimgenError, match=needle):
        port.main([sources, "--target", "2.10", "--parser", "libclang", *args])


# ---- 2. FIFOs are refused, never waited on ---------------------------------------------------------------------


def test_fifo_in_place_of_a_generated_header_is_a_difference(folder) -> None:
    header = os.path.join(folder, emit_cpp.HEADER)
    os.remove(header)
    os.mkfifo(header)
    proc = shimgen("--check", "--out", folder)
    assert proc.returncode == 1 and f"changed: {header} (a FIFO)" in proc.stderr, proc.stderr
    no_traceback(proc)
    proc = shimgen("--ops", "add", "--only", "--out", folder)  # the run replaces it with the header
    assert proc.returncode == 0, proc.stderr
    assert shimgen("--check", "--out", folder).returncode == 0


def test_fifo_stamp_and_journal(folder) -> None:
    before = snapshot(folder)
    path = os.path.join(folder, stamp.STAMP)
    os.rename(path, path + ".saved")
    os.mkfifo(path)
    assert_one_line_error(shimgen("--check", "--out", folder), f"stamp {path}", "FIFO")
    os.remove(path)
    os.rename(path + ".saved", path)
    journal = os.path.join(folder, output.JOURNAL)
    os.mkfifo(journal)
    run = assert_one_line_error(shimgen("--ops", "add", "--only", "--out", folder), journal, "FIFO",
                                "remove it and rerun")
    check = shimgen("--check", "--out", folder)
    assert check.returncode == 1 and run.removeprefix("shimgen: error: ") in check.stderr, check.stderr
    os.remove(journal)
    assert snapshot(folder) == before


def test_fifo_inputs(tmp_path, sources) -> None:
    os.mkfifo(os.path.join(sources, "x.cpp"))
    assert_one_line_error(port(sources, "--target", "2.10"), "x.cpp", "it is a FIFO, not a regular file")
    assert_one_line_error(port(os.path.join(sources, "x.cpp"), "--target", "2.10"), "x.cpp", "FIFO")
    os.mkfifo(tmp_path / "native_functions.yaml")
    proc = shimgen("--yaml", str(tmp_path / "native_functions.yaml"), "--ops", "add", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "native_functions.yaml", "FIFO")
    assert not (tmp_path / "o").exists()


# ---- 3. a malformed project is one line, from every command that reads it --------------------------------------


@pytest.mark.parametrize("toml, needle", [
    ("tool = 5\n", "`tool` must be a table"),
    ('tool = "x"\n', "`tool` must be a table"),
    ("tool = [1]\n", "`tool` must be a table"),
    ("[tool]\nshimgen = 5\n", "[tool.shimgen]: expected a table"),
])  # fmt: skip
def test_tool_that_is_not_a_table(tmp_path, toml: str, needle: str) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    for args in (["--check"], [], ["--ops", "add"]):
        assert_one_line_error(shimgen(*args, cwd=tmp_path), "pyproject.toml", needle)
    assert_one_line_error(port(PORT, cwd=tmp_path), "pyproject.toml", needle)  # its default target is the table's
    assert sorted(os.listdir(tmp_path)) == ["pyproject.toml"]


SETUP = ("from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
         "setup(name='small', version='0', ext_modules=[StableExtension('small_ext', ['small.cpp'])],\n"
         "      cmdclass={'build_ext': BuildExtension})\n")


@pytest.mark.parametrize("table, needle", [
    ("", "no [tool.shimgen] table"),
    ("[tool.shimgen]\nops = 5\n", "`ops` must be a list"),
    ('[tool.shimgen]\nops = ["add"]\ntarget = "3.0"\n', "not a torch release shimgen knows"),
])  # fmt: skip
def test_setuptools_reports_one_line(tmp_path, table: str, needle: str) -> None:
    """setup.py reads the table when build_ext runs, not when it is imported: pip's metadata step (any setup.py
    command) goes through, and the build stops with setuptools' one `error:` line, no traceback."""
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'small'\nversion = '0'\n\n{table}")
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "small.cpp").write_text("int f() { return 1; }\n")
    meta = subprocess.run([sys.executable, "setup.py", "--name"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert meta.returncode == 0 and meta.stdout.strip() == "small", meta.stderr
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_ext"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode != 0
    no_traceback(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: shimgen: ") and needle in errors[0], proc.stderr


def test_setup_py_imports_torch_only_to_build(tmp_path) -> None:
    """pip's metadata step and `setup.py --name` run setup.py without building: shimgen.setuptools imports no torch
    for them (seconds of CPU each); build_ext's command is torch's BuildExtension (below it, shimgen's)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'small'\nversion = '0'\n")
    (tmp_path / "setup.py").write_text(SETUP)
    code = ("import runpy, sys\nsys.argv = ['setup.py', '--name']\nrunpy.run_path('setup.py')\n"
            "print('torch' in sys.modules)\nfrom setuptools import Distribution\n"
            "from shimgen.setuptools import BuildExtension\n"
            "from torch.utils.cpp_extension import BuildExtension as Torch\n"
            "print(isinstance(BuildExtension(Distribution()), Torch))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["small", "False", "True"], proc.stdout


# ---- 4. release numbers: one check, only releases the data knows ------------------------------------------------


def test_known_releases_are_the_data() -> None:
    known = releases.known()
    assert [str(v) for v in known] == [".".join(r.split(".")[:2]) for r in releases.load().runtimes]
    for v in known:
        assert releases.parse(str(v), "--target") == v
        assert stable_flags(str(v))[-1] == f"-DTORCH_TARGET_VERSION={v.hex}"
    for bad in ("2.8", "9.9", "3.0", "", "2.10 ", "x"):
        with pytest.raises(ShimgenError, match=r"bad (--target|target) "):
            releases.parse(bad, "--target")
        with pytest.raises(ShimgenError, match="bad target"):
            stable_flags(bad or " ")


@pytest.mark.parametrize("target, needle", [
    ("2.8", "the stable ABI starts at 2.9"),
    ("9.9", "not a torch release shimgen knows"),
    ("", "--target is empty"),
    ("2.10,", "has an empty item"),
    ("2.10,2.x", "bad --target '2.x'"),
])  # fmt: skip
def test_port_target_checked(sources, tmp_path, target: str, needle: str) -> None:
    proc = port(sources, "--target", target, "--toml", str(tmp_path / "t.toml"))
    assert_one_line_error(proc, needle)
    assert not (tmp_path / "t.toml").exists()


def test_port_toml_is_a_table_shimgen_accepts(sources, tmp_path) -> None:
    proc = port(sources, "--target", "2.10,2.13", "--toml", str(tmp_path / "pyproject.toml"))
    assert proc.returncode == 0, proc.stderr
    assert 'target = "2.10"' in (tmp_path / "pyproject.toml").read_text()
    check = shimgen("--check", cwd=tmp_path)  # the table it wrote is read back without complaint
    assert check.returncode == 1 and "missing:" in check.stderr, check.stderr


@pytest.mark.parametrize("table, needle", [
    ('target = "3.0"', "`target` in"),
    ('target = "2.8"', "the stable ABI starts at 2.9"),
    ('since = "9.9"', "`since` in"),
])  # fmt: skip
def test_project_releases_checked(tmp_path, table: str, needle: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.shimgen]\nops = ["add"]\n{table}\n')
    assert_one_line_error(shimgen(cwd=tmp_path), "pyproject.toml", needle)
    # what CMake's configure step reads: the same check, so no build gets an unknown TORCH_TARGET_VERSION
    assert_one_line_error(shimgen("--cmake-info", "--project", str(tmp_path)), needle)
    assert sorted(os.listdir(tmp_path)) == ["pyproject.toml"]


def test_cmake_target_version_checked(tmp_path) -> None:
    """shimgen_generate's TARGET_VERSION goes through the same check (`--cmake-info --cmake-target`, run at
    configure time): CMake stops with shimgen's line instead of building for a release that does not exist."""
    assert_one_line_error(shimgen("--cmake-info", "--cmake-target", "3.0"), "TARGET_VERSION '3.0'",
                          "not a torch release shimgen knows")
    ok = shimgen("--cmake-info", "--cmake-target", "2.10.1")
    assert ok.returncode == 0 and "target=2.10" in ok.stdout.splitlines(), ok.stderr
    cmake = shutil.which("cmake")
    if cmake is None:
        return
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CMAKE_LISTS.replace(
        "PROJECT ${CMAKE_CURRENT_SOURCE_DIR}/pyproject.toml", "OPS add TARGET_VERSION 3.0"))
    (src / "t.cpp").write_text("int f() { return 1; }\n")
    proc = subprocess.run([cmake, "-S", str(src), "-B", str(tmp_path / "build"), *_cmake_args(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    said = " ".join(proc.stderr.split())  # CMake wraps its messages
    assert proc.returncode != 0 and "bad TARGET_VERSION '3.0': not a torch release shimgen knows" in said, said


def test_since_checked(tmp_path) -> None:
    assert_one_line_error(shimgen("--ops", "add", "--since", "9.9", "--out", str(tmp_path / "o")),
                          "bad --since '9.9'", "not a torch release shimgen knows")
    assert not (tmp_path / "o").exists()


# ---- 5. --check compares bytes and file types -------------------------------------------------------------------


def test_check_sees_a_byte_order_mark(folder) -> None:
    header = os.path.join(folder, emit_cpp.HEADER)
    with open(header, "rb") as f:
        data = f.read()
    with open(header, "wb") as f:
        f.write(b"\xef\xbb\xbf" + data)
    proc = shimgen("--check", "--out", folder)
    assert proc.returncode == 1 and f"changed: {header} (the same text behind a UTF-8 byte-order mark" in proc.stderr
    assert shimgen("--ops", "add", "--only", "--out", folder).returncode == 0
    with open(header, "rb") as f:
        assert f.read() == data


def test_check_sees_a_symlink_to_an_identical_copy(folder, tmp_path) -> None:
    header = os.path.join(folder, emit_cpp.HEADER)
    copy = tmp_path / "copy.h"
    shutil.copy(header, copy)
    os.remove(header)
    os.symlink(copy, header)
    proc = shimgen("--check", "--out", folder)
    assert proc.returncode == 1 and f"changed: {header} (a symbolic link)" in proc.stderr, proc.stderr
    assert shimgen("--ops", "add", "--only", "--out", folder).returncode == 0
    assert not os.path.islink(header) and shimgen("--check", "--out", folder).returncode == 0


def test_check_sees_a_file_shimgen_does_not_write(folder) -> None:
    extra = os.path.join(folder, "torch", "csrc", "stable", "extra.h")  # a folder shimgen writes into, not owns
    with open(extra, "w") as f:
        f.write("// stale\n")
    proc = shimgen("--check", "--out", folder)
    assert proc.returncode == 1 and f"not written by shimgen: {extra}" in proc.stderr, proc.stderr
    os.remove(extra)
    assert shimgen("--check", "--out", folder).returncode == 0


def test_check_without_the_stamp_says_what_to_run(folder) -> None:
    os.remove(os.path.join(folder, stamp.STAMP))
    proc = shimgen("--check", "--out", folder)
    assert proc.returncode == 1, proc.stderr
    no_traceback(proc)
    assert f"missing: {os.path.join(folder, stamp.STAMP)}" in proc.stderr
    assert "not generated any more" not in proc.stderr and "removed" not in proc.stderr  # nothing compared
    hint = proc.stderr.splitlines()[-1]
    assert hint.startswith("To update:") and "--ops OPS" in hint and f"--out {folder}" in hint, hint
    assert proc.stdout == ""


def test_check_of_a_file_is_one_line(tmp_path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    assert_one_line_error(shimgen("--check", "--out", str(path)), f"--out {path}", "not a directory")
    assert path.read_text() == "x"


# ---- 6. CMake regenerates only when an input changes -----------------------------------------------------------

CMAKE_LISTS = """cmake_minimum_required(VERSION 3.18)
project(t CXX)
find_package(Shimgen REQUIRED)
add_library(t SHARED t.cpp)
shimgen_generate(t PROJECT ${CMAKE_CURRENT_SOURCE_DIR}/pyproject.toml)
"""


def _cmake_args(tmp_path) -> list[str]:
    """-D options using this checkout's CMake package and shimgen (a script in tmp_path) as the command it runs."""
    exe = tmp_path / "shimgen"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} -m shimgen \"$@\"\n")
    exe.chmod(0o755)
    return [f"-DShimgen_DIR={os.path.join(ROOT, 'shimgen', 'cmake')}", f"-DSHIMGEN_EXECUTABLE={exe}"]


@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_cmake_regenerates_only_on_a_change(tmp_path, generator: str) -> None:
    cmake = shutil.which("cmake")
    tool = shutil.which("ninja" if generator == "Ninja" else "make")
    if cmake is None or tool is None:
        pytest.skip(f"the {generator} build needs cmake and {'ninja' if generator == 'Ninja' else 'make'}")
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CMAKE_LISTS)
    (src / "t.cpp").write_text("int f() { return 1; }\n")
    (src / "pyproject.toml").write_text('[tool.shimgen]\nops = ["softmax"]\nonly = true\ntarget = "2.10"\n')
    configure = subprocess.run([cmake, "-S", str(src), "-B", str(build), "-G", generator, *_cmake_args(tmp_path)],
                               capture_output=True, text=True, timeout=120)
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]

    def generates() -> bool:
        proc = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return "shimgen: generating" in proc.stdout

    ops_h = build / "shimgen-t" / "torch" / "csrc" / "stable" / "ops.h"
    assert generates() and ops_h.is_file()
    assert not generates()
    with open(src / "pyproject.toml", "a") as f:
        f.write("# an edit that changes no output\n")
    assert generates()  # an input changed: shimgen runs (and rewrites nothing)
    assert not generates() and not generates()  # and then not again
    ops_h.unlink()
    assert generates() and ops_h.is_file()  # a deleted output comes back
    assert not generates()


# ---- 7. messages ----------------------------------------------------------------------------------------------


def test_out_under_a_file_says_not_a_directory(tmp_path) -> None:
    (tmp_path / "f").write_text("x")
    for out in ("f", "f/sub"):
        line = assert_one_line_error(shimgen("--ops", "add", "--only", "--out", out, cwd=tmp_path),
                                     f"cannot write {out}", "not a directory")
        assert "File exists" not in line
    assert sorted(os.listdir(tmp_path)) == ["f"]


def test_huge_op_name_is_not_echoed_whole(tmp_path) -> None:
    name = "x" * 100_000
    proc = shimgen("--ops", name, "--out", str(tmp_path / "o"))
    line = assert_one_line_error(proc, "more characters")
    assert len(line) < 1000


def test_corrupt_journal_advice_agrees(folder) -> None:
    journal = os.path.join(folder, output.JOURNAL)
    with open(journal, "w") as f:
        f.write("{bad")
    run = assert_one_line_error(shimgen("--ops", "add", "--only", "--out", folder), journal, "remove it and rerun")
    check = shimgen("--check", "--out", folder)
    assert check.returncode == 1 and "the next run completes it" not in check.stderr
    assert run.removeprefix("shimgen: error: ") in check.stderr, check.stderr


def test_an_op_named_twice_is_one_op(tmp_path) -> None:
    out = str(tmp_path / "o")
    assert shimgen("--ops", "add,add", "--only", "--out", out).returncode == 0
    assert "ops: [add]" in open(os.path.join(out, stamp.STAMP)).read()
    assert shimgen("--check", "--ops", "add", "--only", "--out", out).returncode == 0
    assert shimgen("--check", "--out", out).returncode == 0
