"""Formatting of generated files: clang-format with PyTorch's style for C++, black for Python."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
from importlib import resources

from shimgen.errors import ShimgenError


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


# Files kept exactly as the templates write them: c_shim_aten.h keeps torchgen's one declaration per line so it
# diffs line for line with PyTorch's checked-in header.
UNFORMATTED = ("c_shim_aten.h",)


_SEPARATOR = "// shimgen: next file {}\n\n"  # between the files of one clang-format run (short: never reflowed)
BATCHES = 2  # clang-format processes at once (one per core here)


def _batches(paths: list[str], sizes: dict[str, int], n: int) -> list[list[str]]:
    """The files in n batches of about equal size (largest first into the lightest batch), each in path order."""
    batches: list[list[str]] = [[] for _ in range(n)]
    load = [0] * n
    for path in sorted(paths, key=lambda q: (-sizes[q], q)):
        k = load.index(min(load))
        batches[k].append(path)
        load[k] += sizes[path]
    return [sorted(b) for b in batches if b]


class Formatting:
    """clang-format processes under way for a set of generated files; result() waits for them.

    The files go through a few processes rather than one each (a per-op header is small: starting clang-format
    would cost more than formatting it): each process formats several files joined by separator comments, then
    the result is cut there. clang-format formats the top-level declarations of a file independently, so the
    text of each file is what formatting it alone gives (tests/test_layout.py checks it, `per_file`)."""

    def __init__(self, files: dict[str, str], per_file: bool = False) -> None:
        chosen = [p for p in files if p.endswith((".h", ".cpp")) and not p.endswith(UNFORMATTED)]
        if per_file:
            groups = [[p] for p in chosen]
        else:
            groups = _batches(chosen, {p: len(files[p]) for p in chosen}, BATCHES)
        self._started = [(group, _start_clang_format(_join([files[p] for p in group]))) for group in groups]

    def result(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for group, started in self._started:
            out.update(zip(group, _split(_finish_clang_format(started), len(group))))
        return out


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
    """Start formatting every generated C++ file with clang-format (PyTorch's style), in BATCHES processes."""
    return Formatting(files, per_file)


def black_format(text: str, pyi: bool = False) -> str:
    import black  # imported lazily: it is the slowest import shimgen has

    return black.format_str(text, mode=black.Mode(is_pyi=pyi))


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
