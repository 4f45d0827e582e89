"""`shimgen port --fix` treats the user's files as a careful text editor does: bytes it does not mean to change stay
(a byte-order mark, CRLF line endings, the file's mode, a symbolic link), the sources are rewritten as one
transaction (all or none), a source edited since the scan read it is refused by name, an interrupt (even one that
lands inside libclang) ends the run with one line and nothing half-done, nothing is left behind, every error
names the file it is about, and a header cache that cannot be written costs speed only.

Each case runs `shimgen port --fix` in a subprocess, as a user would. Where a case needs something to happen at a
precise moment (an edit after the scan read the file, a signal inside a libclang callback, a signal during the
writes), the child runs a few lines before shimgen's own `main` that wrap the function at that moment
(`run_port(..., hook=...)`); the code under test is unchanged."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 300  # a scan without the cached precompiled prelude takes tens of seconds on a busy machine
BOM = b"\xef\xbb\xbf"
# One ATen include (rewritten into two stable ones: a line added) and one call.
SOURCE = (b"#include <ATen/ATen.h>\n"
          b"at::Tensor f(const at::Tensor& a, const at::Tensor& b) {\n"
          b"  return at::add(a, b);\n"
          b"}\n")


def run_port(*args: str, cwd, hook: str = "", preexec_fn=None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`shimgen port ARGS` as the command (shimgen.tools.cli.main owning the signals), after `hook`'s lines. The
    shimgen imported is this checkout's."""
    code = (f"import sys\nsys.path.insert(0, {ROOT!r})\n{hook}\n"
            f"sys.argv = ['shimgen', 'port', *{list(args)!r}]\n"
            "from shimgen.tools.cli import main\nmain()\n")
    full_env = {**os.environ, **(env or {}), "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if preexec_fn is not None:  # a file size limit: no bytecode, no compiler cache (as test_hardening_surfaces)
        full_env.update(PYTHONDONTWRITEBYTECODE="1", SHIMGEN_COMPILE_CACHE="")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=preexec_fn, env=full_env)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


def one_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    no_traceback(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("shimgen: error: "), proc.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def leftovers(folder) -> list[str]:
    """Anything in `folder` (recursively) a run may have left: staging files, temporaries."""
    return sorted(os.path.relpath(os.path.join(r, n), folder) for r, _, ns in os.walk(folder) for n in ns
                  if "shimgen" in n)


def interrupted(proc: subprocess.CompletedProcess) -> None:
    """Ended by SIGINT (or 130), one line `shimgen: interrupted ...`, no traceback."""
    assert proc.returncode in (-signal.SIGINT, 128 + signal.SIGINT), (proc.returncode, proc.stderr)
    no_traceback(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("shimgen: interrupted"), proc.stderr


def two_sources(folder, big: bool = False) -> dict[str, bytes]:
    """a.cpp and b.cpp (b.cpp padded to 8 KB with `big`): the files and their bytes."""
    os.makedirs(folder, exist_ok=True)
    files = {"a.cpp": SOURCE, "b.cpp": SOURCE.replace(b"f(", b"g(") + (b"// pad\n" * 1200 if big else b"")}
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return {os.path.join(folder, n): d for n, d in files.items()}


def contents(paths) -> dict[str, bytes]:
    out = {}
    for p in paths:
        with open(p, "rb") as f:
            out[p] = f.read()
    return out


# ---- 1-4: bytes and file attributes the rewrite does not mean to change ---------------------------------------


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    """One --fix over a file with a byte-order mark, one with CRLF line endings, files of mode 0755 and 0600 and a
    symbolic link to a source in another folder."""
    src = tmp_path_factory.mktemp("fixfiles")
    (src / "real").mkdir()
    (src / "bom.cpp").write_bytes(BOM + SOURCE)
    (src / "crlf.cpp").write_bytes(SOURCE.replace(b"\n", b"\r\n"))
    for mode in (0o755, 0o600):
        path = src / f"mode{mode:o}.cpp"
        path.write_bytes(SOURCE)
        os.chmod(path, mode)
    (src / "real" / "target.cpp").write_bytes(SOURCE)
    os.symlink(os.path.join("real", "target.cpp"), src / "link.cpp")
    names = ["bom.cpp", "crlf.cpp", "mode755.cpp", "mode600.cpp", "link.cpp"]
    proc = run_port(*names, "--target", "2.10", "--fix", cwd=src)
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    return src, proc


def test_fix_keeps_a_byte_order_mark(rewritten) -> None:
    src, _ = rewritten
    data = (src / "bom.cpp").read_bytes()
    assert b"torch::stable::add" in data  # rewritten
    assert data.startswith(BOM + b"#include <torch/csrc/stable/")
    assert data.count(BOM) == 1


def test_fix_keeps_crlf_line_endings(rewritten) -> None:
    src, _ = rewritten
    data = (src / "crlf.cpp").read_bytes()
    assert b"torch::stable::add" in data
    assert data.count(b"#include") == 2  # a line the rewrite added
    assert data.count(b"\n") == data.count(b"\r\n") == 5, data  # every line, the added one too, ends in CRLF


@pytest.mark.parametrize("mode", [0o755, 0o600])
def test_fix_keeps_the_file_mode(rewritten, mode: int) -> None:
    src, _ = rewritten
    path = src / f"mode{mode:o}.cpp"
    assert b"torch::stable::add" in path.read_bytes()
    assert oct(os.stat(path).st_mode & 0o7777) == oct(mode)


def test_fix_writes_through_a_symlink(rewritten) -> None:
    src, _ = rewritten
    link = src / "link.cpp"
    assert os.path.islink(link) and os.readlink(link) == os.path.join("real", "target.cpp")
    assert b"torch::stable::add" in (src / "real" / "target.cpp").read_bytes()
    assert leftovers(src) == []


# ---- 5, 9: one transaction; errors name the file ----------------------------------------------------------------


@pytest.fixture(scope="module")
def failed_on_b(tmp_path_factory, rewritten):
    """--fix over a.cpp and b.cpp where only b.cpp's rewrite cannot be written: the file size limit (4 KB, SIGXFSZ
    ignored: EFBIG, as ENOSPC on a full disk) stops it, a.cpp's fits. (`rewritten` runs first: the precompiled
    prelude is cached by then, so this run's scan takes seconds.)"""
    src = tmp_path_factory.mktemp("failedonb")
    before = two_sources(src, big=True)

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = run_port("a.cpp", "b.cpp", "--target", "2.10", "--fix", cwd=src, preexec_fn=limited)
    return src, before, proc


def test_fix_failing_on_a_later_file_writes_none(failed_on_b) -> None:
    src, before, proc = failed_on_b
    assert proc.returncode == 2, proc.stderr
    assert contents(before) == before  # a.cpp too: all or none
    assert leftovers(src) == []
    assert "rewritten" not in proc.stdout


def test_fix_write_error_names_the_file(failed_on_b) -> None:
    _, _, proc = failed_on_b
    line = one_error(proc, "b.cpp", "File too large")
    assert "standard output" not in line


# ---- 6: an edit made during the scan ------------------------------------------------------------------------------

# The first rewrite computed (after both files were read) appends a line to a.cpp, as an editor saving it would.
EDIT_DURING_SCAN = """
from shimgen.tools.porting import fix as _fix
_orig = _fix.fix
_edited = []
def _fix_and_edit(*a, **k):
    if not _edited:
        _edited.append(1)
        with open('a.cpp', 'ab') as f:
            f.write(b'// saved by an editor meanwhile\\n')
    return _orig(*a, **k)
_fix.fix = _fix_and_edit
"""


def test_fix_refuses_a_source_edited_since_it_was_read(tmp_path) -> None:
    before = two_sources(tmp_path)
    proc = run_port("a.cpp", "b.cpp", "--target", "2.10", "--fix", cwd=tmp_path, hook=EDIT_DURING_SCAN)
    one_error(proc, "a.cpp", "changed since it was read")
    a, b = before
    assert (tmp_path / "a.cpp").read_bytes() == before[a] + b"// saved by an editor meanwhile\n"  # the edit kept
    assert (tmp_path / "b.cpp").read_bytes() == before[b]  # one transaction: nothing written
    assert leftovers(tmp_path) == []


# ---- 7, 8: interrupts --------------------------------------------------------------------------------------------

# SIGINT sent from inside a libclang cursor visitor (a ctypes callback) while b.cpp is scanned, a.cpp done: where
# Python's handler runs inside the callback, an exception it raises is printed and dropped by ctypes.
SIGINT_IN_LIBCLANG = """
import os, signal
from clang import cindex as _ci
from shimgen.tools.porting import clang_scan as _cs
_state = {'file': '', 'n': 0}
_visit = _ci.callbacks['cursor_visit']
def _visit_and_signal(fn):
    def visit(*a):
        if _state['file'].endswith('b.cpp'):
            _state['n'] += 1
            if _state['n'] == 5:
                os.kill(os.getpid(), signal.SIGINT)
        return fn(*a)
    return _visit(visit)
_ci.callbacks['cursor_visit'] = _visit_and_signal
_scan = _cs.scan
def _scan_noting(path, *a, **k):
    _state['file'] = path
    return _scan(path, *a, **k)
_cs.scan = _scan_noting
"""


def test_sigint_inside_libclang_is_honoured(tmp_path) -> None:
    before = two_sources(tmp_path)
    proc = run_port("a.cpp", "b.cpp", "--target", "2.10", "--fix", cwd=tmp_path, hook=SIGINT_IN_LIBCLANG)
    interrupted(proc)
    assert contents(before) == before  # interrupted during the scan: nothing written
    assert leftovers(tmp_path) == []


# SIGINT sent while the files are written: as a staged file is made durable (before the renames), or as a
# rewritten file is renamed over a source.
SIGINT_WHILE_WRITING = """
import os, signal
_SOURCES = ('a.cpp', 'b.cpp')
_real = {{'replace': os.replace, 'fsync': os.fsync}}
_sent = []
def _signal_once():
    if not _sent:
        _sent.append(1)
        os.kill(os.getpid(), signal.SIGINT)
def _replace(src, dst, *a, **k):
    if os.path.basename(str(dst)) in _SOURCES and {when!r} == 'rename':
        _signal_once()
    return _real['replace'](src, dst, *a, **k)
def _fsync(fd):
    if {when!r} == 'stage':
        _signal_once()
    return _real['fsync'](fd)
os.replace = _replace
os.fsync = _fsync
"""


@pytest.mark.parametrize("when", ["stage", "rename"])
def test_an_interrupt_while_writing_leaves_nothing_behind(tmp_path, when: str) -> None:
    before = two_sources(tmp_path)
    proc = run_port("a.cpp", "b.cpp", "--target", "2.10", "--fix", cwd=tmp_path,
                    hook=SIGINT_WHILE_WRITING.format(when=when))
    interrupted(proc)
    assert leftovers(tmp_path) == []
    after = contents(before)
    changed = [p for p in before if after[p] != before[p]]
    assert changed in ([], list(before)), changed  # all or none
    if when == "stage":  # before the commit point: none
        assert changed == []


# ---- 10: a header cache that cannot be written ---------------------------------------------------------------


@pytest.mark.parametrize("case", ["file size limit", "cache path is a file"])
def test_an_unwritable_cache_costs_speed_only(tmp_path, case: str) -> None:
    """An empty cache that cannot be written: the scan goes on without it (libclang reads the stand-in headers
    from memory, no precompiled prelude is made) and the run's outcome is what it would be with a cache."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "small.cpp").write_bytes(SOURCE)
    cache = tempfile.mkdtemp(dir=tmp_path)
    env = {"XDG_CACHE_HOME": cache, "SHIMGEN_CACHE_DIR": os.path.join(cache, "derived")}
    if case == "file size limit":  # as tests/test_hardening_surfaces.py's full file system, with an empty cache
        report = tmp_path / "r.json"
        report.write_text('{"old": true}\n')

        def limited() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

        proc = run_port("small.cpp", "--target", "2.10", "--json", str(report), cwd=src, env=env,
                        preexec_fn=limited)
        line = one_error(proc, f"--json {report}", "File too large")
        assert "standard output" not in line
        assert report.read_text() == '{"old": true}\n'
    else:  # a folder where the cache should be is a regular file: nothing can be created under it
        blocked = os.path.join(cache, "blocked")
        with open(blocked, "w") as f:
            f.write("not a folder\n")
        env = {"XDG_CACHE_HOME": blocked, "SHIMGEN_CACHE_DIR": os.path.join(blocked, "derived")}
        proc = run_port("small.cpp", "--target", "2.10", cwd=src, env=env)
        assert proc.returncode == 0, proc.stderr
        no_traceback(proc)
        assert "`at::add`" in proc.stdout and "torch::stable::add" in proc.stdout
    assert leftovers(src) == []
