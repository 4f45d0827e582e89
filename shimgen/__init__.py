"""shimgen: generate PyTorch stable-ABI C shims, torch::stable wrappers and Python stubs."""

import os as _os
import signal as _signal
import sys as _sys

__version__ = "0.1.0"


def _startup_interrupt(signum: int, frame: object) -> None:
    """SIGINT/SIGTERM while the `shimgen` command starts up: nothing is written yet, so leave at once with one line
    (a KeyboardInterrupt here would print a traceback from the middle of an import)."""
    _os.write(2, f"shimgen: interrupted ({_signal.Signals(signum).name})\n".encode())
    _signal.signal(signum, _signal.SIG_DFL)  # end by the signal, as shimgen.tools.cli.main does
    _os.kill(_os.getpid(), signum)


def _started_as_the_command() -> bool:
    """`shimgen ...` (the console script) or `python -m shimgen ...`; not an import by other code."""
    argv = list(getattr(_sys, "orig_argv", []))
    as_module = "-m" in argv[:-1] and argv[argv.index("-m") + 1] == "shimgen"
    return as_module or _os.path.basename(_sys.argv[0] if _sys.argv else "") == "shimgen"


if _started_as_the_command():  # shimgen.tools.cli.main takes over once its error handling is in place
    for _s in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(_s, _startup_interrupt)
