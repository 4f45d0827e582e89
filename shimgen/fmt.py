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


class Formatting:
    """clang-format processes under way for a set of generated files; result() waits for them."""

    def __init__(self, files: dict[str, str]) -> None:
        self._started = {
            path: _start_clang_format(text)
            for path, text in files.items()
            if path.endswith((".h", ".cpp")) and not path.endswith(UNFORMATTED)
        }

    def result(self) -> dict[str, str]:
        return {path: _finish_clang_format(started) for path, started in self._started.items()}


def start_formatting(files: dict[str, str]) -> Formatting:
    """Start formatting every generated C++ file with clang-format (PyTorch's style), all processes at once."""
    return Formatting(files)


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
