"""How a worker process of the proofs starts (`module_command`) and, once it imported torch, how it ends (`exit_now`).

Python's finalization with torch loaded (clearing every module, collecting what is left) costs about a second of
CPU per process (measured: `python -c "import torch"` 2.6-3.7 s of CPU, 1.9-2.3 s when it ends with os._exit), and a
worker has nothing left to release: its results are written (and flushed) before it returns. The proofs' workers
(verify's samples runner, the probe's runner, the provers' and recorders' workers) run dozens of times per command
and end here."""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def exit_now(code: int | None) -> NoReturn:
    """Flush stdout and stderr, then end the process with `code` (None: 0) at once, skipping finalization.
    Only for a `__main__` whose files are all closed: nothing else is flushed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # closed, or its reader went away: nothing to keep
    os._exit(0 if code is None else code)


# The folder holding the shimgen package this process runs (a checkout's root, or site-packages).
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_command(python: str, module: str, *args: str) -> list[str]:
    """The command running `python -m module args` with this process's shimgen, whatever the working directory
    holds: `-m` puts the working directory first on sys.path, so a folder with a `shimgen/` package of its own (a
    checkout, a project of that name) would be imported instead. Here the child's path starts with the folder
    holding this shimgen package and leaves the working directory out; the working directory itself, the
    environment and the module's `__name__ == "__main__"` are as with -m."""
    boot = ("import sys\n"
            "if sys.path[:1] == ['']: del sys.path[0]\n"
            f"sys.path.insert(0, {_ROOT!r})\n"
            "import runpy\n"
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n")
    return [python, "-c", boot, *args]
