"""What the command-line tools (`shimgen`, `shimgen port`) share: an argument parser whose usage errors are one
line and exit status 2, and writing to standard output where a closed or full stdout is a one-line error."""

from __future__ import annotations

import argparse
import errno
import os
import sys

from shimgen.base.errors import ShimgenError


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        self.exit(2, f"shimgen: error: {message} (see shimgen --help)\n")

    def _print_message(self, message: str, file=None) -> None:  # argparse's own swallows a full or closed stdout
        if message:
            file = file or sys.stderr
            if file is None:
                raise OSError(errno.EBADF, "it is closed")
            file.write(message)
            file.flush()


def write_lines(lines: list[str], raw: bool = False) -> None:
    """Write to stdout and flush; a closed or full stdout is a ShimgenError (one line on stderr, exit 2)."""
    stream = sys.stdout
    if stream is None:  # started with fd 1 closed (`>&-`)
        raise ShimgenError("cannot write to standard output: it is closed")
    try:
        stream.writelines(lines if raw else [line + "\n" for line in lines])
        stream.flush()
    except OSError as e:
        silence_stdout()
        raise ShimgenError(f"cannot write to standard output: {e.strerror or e}") from None
    except UnicodeEncodeError as e:
        raise ShimgenError(f"cannot write to standard output in its encoding ({stream.encoding}): {e.reason}") from None


def silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush of what is still buffered cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
