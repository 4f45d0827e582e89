"""The tests' Python children that import torch end without Python's finalization: with torch loaded it costs about
a second of CPU per process (shimgen.base.process says more), and the suite starts dozens of them. `quick_exit(code)`
is a `python -c` script that, once it has run to its end, flushes its output and leaves at once; a script that
raises or calls sys.exit ends as it would have. `run_on(name, code, *args)` runs such a script on a runtime: the
installed torch, or a release's venv (skipped where it is missing, failed under CI for the releases CI installs)."""

from __future__ import annotations

EPILOGUE = "\nimport os as _os, sys as _sys\n_sys.stdout.flush()\n_sys.stderr.flush()\n_os._exit(0)\n"


def quick_exit(code: str) -> str:
    return code + EPILOGUE


# the runtimes .ci/run installs: under CI a missing one is a failure, not a skip
CI_RUNTIMES = ("2.10.0", "2.14.1")


def run_on(name: str, code: str, *args: str, env: dict[str, str] | None = None):
    """`code` (a script, quick_exit's) run by runtime `name`'s interpreter ("installed": this one) with `args` (and
    `env` for its environment, else this one's): the completed process."""
    import os
    import subprocess
    import sys

    import pytest

    python = sys.executable
    if name != "installed":
        from shimgen.proofs.verify import runtimes

        rts, missing = runtimes.resolve([name])
        if not rts:
            if os.environ.get("CI") == "true" and name in CI_RUNTIMES:
                pytest.fail(runtimes.missing_reason(missing))
            pytest.skip(runtimes.missing_reason(missing))
        python = rts[0].python
    return subprocess.run([python, "-c", quick_exit(code), *args], capture_output=True, text=True, env=env)
