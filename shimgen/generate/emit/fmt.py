"""Formatting of generated files: clang-format with PyTorch's style for C++, black for Python."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import signal
import subprocess
from importlib import resources

from shimgen.base import cache
from shimgen.generate.emit import cpp_layout
from shimgen.base.errors import ShimgenError


@functools.cache
def _clang_format() -> str:
    try:  # the pinned clang-format wheel's own binary: a system clang-format formats differently
        import clang_format as wheel

        exe = wheel.get_executable("clang-format")
        if not os.path.isfile(exe):
            exe = None
    except (ImportError, AttributeError):
        exe = None
    exe = exe or shutil.which("clang-format")
    if exe is None:
        raise ShimgenError("clang-format not found: install shimgen's dependencies (pip install clang-format)")
    return exe


def _start_clang_format(text: str) -> tuple[subprocess.Popen, str]:
    style = resources.files("shimgen").joinpath("data/.clang-format")
    proc = subprocess.Popen(
        [_clang_format(), f"--style=file:{style}", "--assume-filename=generated.cpp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",  # never the locale's encoding (LC_ALL=C would make it ASCII)
        errors="replace",
    )
    # clang-format reads all of stdin before it writes: hand it the whole text now, collect the result later.
    assert proc.stdin is not None
    proc.stdin.write(text)
    proc.stdin.close()
    return proc, text


def _finish_clang_format(started: tuple[subprocess.Popen, str]) -> str:
    proc, _ = started
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait()
    if proc.returncode < 0 and -proc.returncode in (signal.SIGINT, signal.SIGTERM):
        raise KeyboardInterrupt  # Ctrl-C reached clang-format too (same process group): an interrupt, not a failure
    if proc.returncode != 0:
        raise ShimgenError(f"clang-format failed: {err.strip()}")
    return out


def clang_format(text: str) -> str:
    return _finish_clang_format(_start_clang_format(text))


# Files kept exactly as the templates write them: c_shim_aten.h (and c_shim_aten_overlay.h, its opt-in part) keeps
# torchgen's one declaration per line so it diffs line for line with PyTorch's checked-in header;
# shimgen/dispatch.h is fixed text written in clang-format's layout (tests/test_cpp_layout.py checks that
# clang-format leaves it unchanged).
UNFORMATTED = ("c_shim_aten.h", "c_shim_aten_overlay.h", "shimgen/dispatch.h", "shimgen/operators.h", "shimgen/autograd.h", "shimgen/cuda.h")


# A generation of at least this many C++ files reads the layout of each file an earlier run formatted from
# shimgen's cache (cache.Memo, keyed by the file's raw text, shimgen's code and the clang-format binary and
# style: about a second for a whole yaml's 2,000 files, a hundredth to load); fewer files read it from a memo of
# their own (the fixed headers every run writes, scalar.h and the kernel sections, and the few ops' headers:
# 20 ms of layout for `--ops add,pad,amax`, a millisecond to load), never loading the whole yaml's.
MEMO_FILES = 200
FEW_FILES_MEMO_LIMIT = 400
# ... of files up to this size: a larger one (the overlay's definitions for a whole yaml, laid out alone by
# format_cpp) would make every small run load it.
FEW_FILES_MEMO_CHARS = 64 * 1024

_SEPARATOR = "// shimgen: next file {}\n\n"  # between the texts of one clang-format run (short: never reflowed)


class Formatting:
    """The formatted text of a set of generated C++ files; result() returns it.

    The fast path writes clang-format's layout directly (shimgen.generate.emit.cpp_layout) and sends only the chunks it
    is unsure of to one clang-format process, started here and collected in result(): `fallback` counts those
    chunks (none for the whole 2.13 yaml is the goal; tests/test_cpp_layout.py pins the measured count).
    clang-format formats the top-level chunks of a file independently, so each chunk formatted alone, joined
    with separator comments, gives what formatting the file gives (tests/test_layout.py compares every file with
    clang-format's). per_file: clang-format over each whole file alone instead, the reference the tests use."""

    def __init__(self, files: dict[str, str], per_file: bool = False) -> None:
        chosen = [p for p in files if p.endswith((".h", ".cpp")) and not p.endswith(UNFORMATTED)]
        self._started: list[tuple[list[str], tuple[subprocess.Popen, str]]] = []
        self._parts: dict[str, list[str]] = {}
        self._unsure: list[tuple[str, int, str]] = []  # (path, chunk index, the chunk's trailing newlines)
        self.fallback = 0
        self._memo: cache.Memo | None = None
        self._memo_chars: int | None = None  # the largest file the memo keeps (None: any)
        self._raw: dict[str, tuple[str, int]] = {}  # path -> (its text, how many of its chunks are unsure)
        self._done: dict[str, str] = {}  # path -> its layout, from the memo
        if per_file:
            self._started = [([p], _start_clang_format(files[p])) for p in chosen]
            return

        texts = []
        done: dict[str, str | None] = {}  # chunk -> its layout (None: unsure); half the chunks recur across files
        # Many files (a whole yaml's ~2,000): the layout of each file an earlier run formatted, from shimgen's cache
        many = len(chosen) >= MEMO_FILES
        self._memo = cache.Memo("cpp-layout" if many else "cpp-layout-few", [_formatter_identity()],
                                limit=20_000 if many else FEW_FILES_MEMO_LIMIT)
        self._memo_chars = None if many else FEW_FILES_MEMO_CHARS
        for path in chosen:
            hit = self._memo.get(files[path]) if self._memoizes(files[path]) else None
            if hit is not None:
                self._done[path], unsure = hit
                self.fallback += unsure
                continue
            parts = cpp_layout.chunks(files[path])
            before = len(texts)
            for k, part in enumerate(parts):
                laid = done.get(part, "")
                if laid == "":
                    try:
                        laid = cpp_layout.chunk(part)
                    except cpp_layout.Unsure:
                        laid = None
                    done[part] = laid
                if laid is not None:
                    parts[k] = laid
                    continue
                body = part.rstrip("\n")
                self._unsure.append((path, k, part[len(body):]))
                texts.append(body + "\n")
            self._parts[path] = parts
            self._raw[path] = (files[path], len(texts) - before)
        self.fallback += len(texts)
        self._cached: str | None = None
        self._cache_path: str | None = None
        if texts:
            joined = _join(texts)
            self._cache_path = _fallback_cache_path(joined)
            if self._cache_path is not None:
                data = cache.read(self._cache_path)
                self._cached = data.decode("utf-8") if data is not None else None
            if self._cached is None:
                self._started = [(["chunks"], _start_clang_format(joined))]

    def _memoizes(self, raw: str) -> bool:
        return self._memo is not None and (self._memo_chars is None or len(raw) <= self._memo_chars)

    def result(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self._parts or self._done:
            if self._unsure:
                text = self._cached
                if text is None:
                    text = _finish_clang_format(self._started[0][1])
                    if self._cache_path is not None:
                        cache.write_atomically(self._cache_path, text.encode("utf-8"))
                formatted = _split(text, len(self._unsure))
                for (path, k, newlines), text in zip(self._unsure, formatted):
                    self._parts[path][k] = text.rstrip("\n") + newlines
        if self._parts or self._done:
            out = {path: "".join(parts) for path, parts in self._parts.items()}
            if self._memo is not None:
                for path, text in out.items():
                    raw, unsure = self._raw[path]
                    if self._memoizes(raw):
                        self._memo.put(raw, (text, unsure))
                self._memo.save()
            out.update(self._done)
            return out
        for group, started in self._started:
            out.update(zip(group, _split(_finish_clang_format(started), len(group))))
        return out


def _formatter_identity() -> bytes:
    """What clang-format's output depends on besides its input: the binary (path, size, modification time) and
    the style file (b"" where clang-format is missing: nothing formatted by it is then produced)."""
    try:
        exe = _clang_format()
        st = os.stat(exe)
        style = resources.files("shimgen").joinpath("data/.clang-format").read_bytes()
    except (OSError, ShimgenError):
        return b""
    return f"{exe}\0{st.st_size}\0{st.st_mtime_ns}\0".encode() + style


def _fallback_cache_path(text: str) -> str | None:
    """Where clang-format's output for `text` (the chunks the layout rules leave to it) is kept, keyed by the text,
    the style file and the clang-format binary (path, size, modification time): the chunks of the fixed template
    text (the prelude, scalar.h, upstream's helpers) are the same in every run, so after the first run on a
    machine they need no clang-format process. None: caching is off (shimgen.base.cache)."""
    folder = cache.directory()
    if folder is None:
        return None
    try:
        exe = _clang_format()
        st = os.stat(exe)
        style = resources.files("shimgen").joinpath("data/.clang-format").read_bytes()
    except (OSError, ShimgenError):
        return None
    h = hashlib.sha256(f"{exe}\0{st.st_size}\0{st.st_mtime_ns}\0".encode() + style + b"\0" + text.encode("utf-8"))
    return os.path.join(folder, f"clang-format-{h.hexdigest()[:40]}.txt")


def _join(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    return "".join(_SEPARATOR.format(i) + t for i, t in enumerate(texts))


def _split(text: str, n: int) -> list[str]:
    if n == 1:
        return [text]
    parts = text.split("// shimgen: next file ")
    assert parts[0] == "" and len(parts) == n + 1, "a separator changed while formatting"
    result = []
    for i, part in enumerate(parts[1:]):
        prefix = f"{i}\n\n"
        assert part.startswith(prefix), "a separator changed while formatting"
        result.append(part[len(prefix) :])
    return result


def start_formatting(files: dict[str, str], per_file: bool = False) -> Formatting:
    """Format every generated C++ file in clang-format's layout (PyTorch's style): written directly, with at most
    one clang-format process for what the layout rules do not cover (per_file: clang-format over each file)."""
    return Formatting(files, per_file)


def format_cpp(text: str) -> str:
    """One C++ text in clang-format's layout (shimgen.generate.emit.cpp_layout; clang-format only for chunks it is unsure of)."""
    return Formatting({"unit.cpp": text}).result()["unit.cpp"]


def black_format(text: str, pyi: bool = False) -> str:
    """black's layout of `text`. A short text (the lines shimgen.generate.emit.py_layout is unsure of) is remembered in shimgen's
    cache (cache.Memo, keyed by the text, black's version and shimgen's code), so a repeated run neither imports
    black (its slowest import, about 0.15 s) nor runs it."""
    memo = _black_memo() if len(text) <= BLACK_MEMO_CHARS else None
    key = ("pyi\0" if pyi else "py\0") + text
    found = memo.get(key) if memo is not None else None
    if isinstance(found, str):
        return found
    import black  # imported lazily: it is the slowest import shimgen has

    result = black.format_str(text, mode=black.Mode(is_pyi=pyi))
    if memo is not None:
        memo.put(key, result)
        memo.save()
    return result


BLACK_MEMO_CHARS = 4000


@functools.cache
def _black_memo() -> cache.Memo:
    from importlib import metadata

    try:
        version = metadata.version("black")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return cache.Memo("black-layout", [version.encode()], limit=5000)


PARALLEL_BLACK_CHARS = 200_000  # texts at least this long are formatted in a process of their own
_BLACK_SCRIPT = (
    "import sys, black\n"
    "text = sys.stdin.buffer.read().decode('utf-8')\n"
    "sys.stdout.buffer.write(black.format_str(text, mode=black.Mode(is_pyi=sys.argv[1] == 'pyi')).encode('utf-8'))\n"
)


class BlackFormatting:
    """black over one text, in another process when the text is long (black holds the GIL, so a thread would
    not run beside the caller's own formatting), else in this one when result() is asked for."""

    def __init__(self, text: str, pyi: bool) -> None:
        self.text, self.pyi, self.proc = text, pyi, None
        if len(text) >= PARALLEL_BLACK_CHARS:
            import sys

            self.proc = subprocess.Popen([sys.executable, "-c", _BLACK_SCRIPT, "pyi" if pyi else "py"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert self.proc.stdin is not None
            self.proc.stdin.write(text.encode("utf-8"))  # black reads all of it before it writes
            self.proc.stdin.close()

    def result(self) -> str:
        if self.proc is None:
            return black_format(self.text, self.pyi)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out, err = self.proc.stdout.read(), self.proc.stderr.read()
        self.proc.wait()
        if self.proc.returncode != 0:
            raise ShimgenError(f"black failed: {err.decode('utf-8', 'replace').strip().splitlines()[-1:]}")
        return out.decode("utf-8")


def start_black(text: str, pyi: bool = False) -> BlackFormatting:
    return BlackFormatting(text, pyi)
