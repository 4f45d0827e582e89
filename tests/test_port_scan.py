"""`shimgen port`'s scan machinery. The precompiled preludes (shimgen.tools.porting.clang_scan): the torch headers
a file's precompiled prelude may take (`shared_headers`), and the same constructs whichever prelude a file was
parsed against (the prelude with its torch headers, the prelude alone, none). The progress on stderr
(shimgen.tools.porting.progress): a status line rewritten in place on a terminal and erased before the report,
lines every few seconds elsewhere only with `--progress`, nothing on stdout, and a stderr that cannot be written
costs the progress only; the report is the same bytes with and without it."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time

import pytest

from shimgen.tools.porting import clang_scan, progress as progress_mod
from shimgen.tools.porting.progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = (b"#include <torch/extension.h>\n"
          b"at::Tensor f(const at::Tensor& a, const at::Tensor& b) {\n"
          b"  return at::add(a, b);\n"
          b"}\n")


# ---- the precompiled preludes -------------------------------------------------------------------------------------


def test_the_torch_headers_a_prelude_may_take() -> None:
    pytest.importorskip("torch")
    text = ("// #include <ATen/Parallel.h>\n"  # a comment
            "#include <Python.h>\n"  # not torch's
            "#include <torch/extension.h>\n"  # a stand-in: already in the prelude
            "#include <torch/script.h>\n"
            "#include \"local.h\"\n"
            "#ifdef WITH_CUDA\n#include <ATen/cuda/CUDAContext.h>\n#endif\n"  # conditional: not always included
            "#include <ATen/Parallel.h>\n"
            "#define TORCH_ASSERT_ONLY_METHOD_OPERATORS\n"  # what follows may depend on it
            "#include <ATen/OpMathType.h>\n")
    assert clang_scan.shared_headers("a.cpp", text) == ("ATen/Parallel.h", "torch/script.h")
    assert clang_scan.shared_headers("a.cu", text) == ()  # CUDA: its prelude's declarations come first
    assert clang_scan.shared_headers("a.cpp", "#include <torch/no_such_header.h>\n") == ()


@pytest.mark.slow
def test_the_same_constructs_whichever_prelude(monkeypatch) -> None:
    """grid.cpp of the torch_cluster corpus (it includes <torch/script.h>) scanned against the prelude precompiled
    with torch/script.h, against the prelude alone (torch/script.h parsed in the file) and with no precompiled
    prelude (a cache that cannot be written): the same sites, field by field."""
    pytest.importorskip("clang.cindex", reason="needs libclang (the `port` extra)")
    path = os.path.join(ROOT, "tests", "port_ext", "torch_cluster", "csrc", "grid.cpp")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    headers = clang_scan.shared_headers(path, text)
    assert headers == ("torch/script.h",)
    shared = clang_scan.scan(path, text, (), headers, True)
    alone = clang_scan.scan(path, text, (), (), False)
    real = clang_scan._overlay_dir
    monkeypatch.setattr(clang_scan, "_overlay_dir", lambda ci: (real(ci)[0], False))  # as if nothing could be written
    none = clang_scan.scan(path, text, (), headers, True)
    assert shared == alone == none
    kinds = {s.kind for s in shared}
    assert {"include", "macro", "type", "member"} <= kinds, kinds


# ---- the progress --------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True

    def screen(self) -> str:
        """What the terminal's last line shows: each carriage return goes back to its start."""
        line = ""
        for part in self.getvalue().split("\n")[-1].split("\r"):
            line = part + line[len(part):]
        return line


def test_a_header_of_the_cache_is_written_once(tmp_path) -> None:
    """A precompiled prelude records each header's time and size, and libclang refuses it once one changes: a scan
    that rewrote a cached header with the same text (two test workers filling an empty cache at once) broke the PCH
    the other had just made ("Error parsing translation unit"). A header that holds its text is left as it is; one
    that is missing is made whole, by one writer."""
    path = str(tmp_path / "prelude.h")
    clang_scan._write_once(path, "#pragma once\n")
    before = os.stat(path)
    clang_scan._write_once(path, "#pragma once\n")
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert os.listdir(tmp_path) == ["prelude.h"]  # no temporary left behind
    clang_scan._write_once(path, "#pragma once\nint x;\n")  # another text under the name: replaced
    with open(path, encoding="utf-8") as f:
        assert f.read() == "#pragma once\nint x;\n"


_SCAN_GRID = """
import sys
from shimgen.tools.porting import clang_scan
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
clang_scan.scan(path, text, (), clang_scan.shared_headers(path, text), True)
print("scanned")
"""


@pytest.mark.slow
@pytest.mark.parametrize("stagger", [0.2, 0.35, 0.5, 0.65])
def test_two_scans_filling_an_empty_cache_at_once(tmp_path, stagger: float) -> None:
    """Two processes scan grid.cpp (its shared header: torch/script.h) at once with an empty cache, the second
    `stagger` seconds after the first: both build or wait for the precompiled preludes and parse. Before the lock
    and the write-once headers one of the two failed "Error parsing translation unit" in about one pair in six
    (by hand at eded357, staggers of 0.1 to 0.9 s), and the same race failed a parallel CI run."""
    pytest.importorskip("clang.cindex", reason="needs libclang (the `port` extra)")
    path = os.path.join(ROOT, "tests", "port_ext", "torch_cluster", "csrc", "grid.cpp")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = subprocess.Popen([sys.executable, "-c", _SCAN_GRID, path], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(stagger)
    second = subprocess.run([sys.executable, "-c", _SCAN_GRID, path], env=env, capture_output=True, text=True)
    out, err = first.communicate()
    for proc_out, proc_err in ((out, err), (second.stdout, second.stderr)):
        assert proc_out.strip() == "scanned", proc_err[-2000:]


def test_a_terminal_gets_one_line_rewritten_then_erased() -> None:
    clock, term = Clock(), Terminal()
    p = Progress(3, "auto", term, clock)
    p.note("precompiling the prelude (once per torch)")
    assert term.screen() == "shimgen port: 0/3 files, 0 s: precompiling the prelude (once per torch)"
    for i, name in enumerate(["a.cpp", "b.cpp", "c.cpp"]):
        clock.now += 2
        p.file(name)
        assert term.screen().rstrip() == f"shimgen port: {i}/3 files, {2 * (i + 1)} s: {name}"
        p.file_done()
    p.finish()
    assert "\n" not in term.getvalue()  # never a new line on the terminal
    assert term.screen().strip() == ""  # erased: the report starts on a clean line


def test_a_long_path_keeps_its_end_on_a_narrow_terminal(monkeypatch) -> None:
    term = Terminal()
    p = Progress(1, "auto", term, Clock())
    monkeypatch.setattr(p, "_columns", lambda: 60)
    p.file("csrc/" + "deep/" * 20 + "kernel_name.cpp")
    shown = term.screen()
    assert len(shown) <= 59 and shown.endswith("kernel_name.cpp") and shown.startswith("shimgen port: 0/1 files")


def test_a_pipe_gets_nothing_unless_asked() -> None:
    pipe = io.StringIO()
    p = Progress(2, "auto", pipe, Clock())
    p.file("a.cpp")
    p.file_done()
    p.finish()
    assert pipe.getvalue() == ""


def test_progress_on_a_pipe_is_a_line_every_few_seconds() -> None:
    clock, pipe = Clock(), io.StringIO()
    p = Progress(4, "always", pipe, clock)
    for name in ["a.cpp", "b.cpp", "c.cpp", "d.cpp"]:
        p.file(name)
        clock.now += progress_mod.EVERY * 0.6
        p.file_done()
    p.finish()
    lines = pipe.getvalue().splitlines()
    every = progress_mod.EVERY * 0.6
    assert lines == ["shimgen port: 0/4 files, 0 s: a.cpp", f"shimgen port: 2/4 files, {2 * every:.0f} s: c.cpp",
                     f"shimgen port: 4/4 files, {4 * every:.0f} s"]


class Broken(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("tty", [True, False])
def test_a_stderr_that_cannot_be_written_stops_the_progress_only(tty: bool) -> None:
    p = Progress(2, "always", Broken(tty), Clock())
    p.file("a.cpp")
    p.file_done()
    p.finish()  # no exception


# ---- the command ---------------------------------------------------------------------------------------------------


def port(cwd, *args: str, stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "shimgen", "port", "--target", "2.10", *args], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=stderr, timeout=600)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    pytest.importorskip("clang.cindex", reason="needs libclang (the `port` extra)")
    folder = tmp_path_factory.mktemp("progress")
    for name in ("a.cpp", "b.cpp"):
        (folder / name).write_bytes(SOURCE)
    return folder


def test_the_command_on_a_pipe(sources) -> None:
    plain = port(sources, "a.cpp", "b.cpp")
    assert plain.returncode == 0 and plain.stderr == b"", plain.stderr
    asked = port(sources, "a.cpp", "b.cpp", "--progress")
    assert asked.returncode == 0
    assert asked.stdout == plain.stdout  # the report alone on stdout
    lines = asked.stderr.decode().splitlines()
    assert lines[0].startswith("shimgen port: 0/2 files, ") and lines[-1].startswith("shimgen port: 2/2 files, ")
    assert all(line.startswith("shimgen port: ") for line in lines)


def test_the_command_on_a_terminal(sources) -> None:
    plain = port(sources, "a.cpp", "b.cpp")
    main, side = pty.openpty()
    try:
        proc = port(sources, "a.cpp", "b.cpp", stderr=side)
    finally:
        os.close(side)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert proc.returncode == 0 and proc.stdout == plain.stdout
    term = Terminal()
    term.write(seen.decode())
    assert b"\n" not in seen and b"shimgen port: 0/2 files" in seen and b"a.cpp" in seen
    assert term.screen().strip() == ""  # erased before the report
