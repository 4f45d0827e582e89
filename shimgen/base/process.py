"""How a worker process that imported torch ends.

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
