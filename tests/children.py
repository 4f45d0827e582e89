"""The tests' Python children that import torch end without Python's finalization: with torch loaded it costs about
a second of CPU per process (shimgen.base.process says more), and the suite starts dozens of them. `quick_exit(code)`
is a `python -c` script that, once it has run to its end, flushes its output and leaves at once; a script that
raises or calls sys.exit ends as it would have."""

from __future__ import annotations

EPILOGUE = "\nimport os as _os, sys as _sys\n_sys.stdout.flush()\n_sys.stderr.flush()\n_os._exit(0)\n"


def quick_exit(code: str) -> str:
    return code + EPILOGUE
