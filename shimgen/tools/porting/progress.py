"""Where a long `shimgen port` run is, on stderr (stdout carries the report).

On a terminal (stderr a TTY): one status line, rewritten in place as each file starts (`shimgen port: 12/50 files,
8 s: csrc/a.cpp`, or the precompiled prelude being made), and erased before the report is printed, so the terminal
keeps only the report. Elsewhere (a pipe, a CI log): nothing, unless `--progress` asks
for it; then a line when the scan starts, at most one every `EVERY` seconds after it, and one at the end. A stderr
that cannot be written (closed, full) stops the progress, never the run."""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import Callable, TextIO

EVERY = 5.0  # seconds between two lines where stderr is not a terminal (--progress)


class Progress:
    def __init__(self, total: int, mode: str = "auto", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """mode: auto (a status line where `stream` is a terminal, else nothing), always (lines where it is not
        a terminal), never."""
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.shown = 0  # the width of the status line on the terminal now (0: none)
        self.last: float | None = None  # when the last line was written (not a terminal)
        tty = _isatty(self.stream)
        self.live = mode != "never" and tty
        self.lines = mode == "always" and not tty and self.stream is not None

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError, AttributeError):  # stderr closed or full: no progress, the run goes on
            self.live = self.lines = False

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        return columns or shutil.get_terminal_size((80, 24)).columns or 80

    def _elapsed(self) -> float:
        return self.clock() - self.start

    def _say(self, what: str, force: bool = False) -> None:
        head = f"shimgen port: {self.done}/{self.total} files, {self._elapsed():.0f} s"
        text = f"{head}: {what}" if what else head
        if self.live:
            width = max(20, self._columns() - 1)
            if len(text) > width:  # the end of the path kept: the file's name
                room = width - len(head) - 3
                text = f"{head}: ...{what[-(room - 2):]}" if room >= 12 else head[:width]
            self._write("\r" + text.ljust(self.shown))
            self.shown = len(text)
        elif self.lines and (force or self.last is None or self.clock() - self.last >= EVERY):
            self.last = self.clock()
            self._write(text + "\n")

    def note(self, what: str) -> None:
        """A step that is not a file (making a precompiled prelude: seconds, once per torch)."""
        self._say(what)

    def file(self, path: str) -> None:
        """The scan of `path` starts."""
        self._say(_short(path))

    def file_done(self) -> None:
        self.done += 1

    def finish(self) -> None:
        """The scan is over: the terminal's status line erased; elsewhere, the last line."""
        if self.shown:
            self._write("\r" + " " * self.shown + "\r")
            self.shown = 0
        if self.lines:
            self._say("", force=True)
            self.lines = False
        self.live = False


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith(os.pardir + os.sep) else path


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False
