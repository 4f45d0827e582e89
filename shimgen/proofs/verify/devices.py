"""Where the samples run: `--device cpu` (default) or `--device cuda[:N]` (`shimgen --verify`, the matrix). On a GPU
every sample's tensors move to the device before each side is called (aten and the wrapper get the same values),
so each wrapper is compared with aten on the device the caller uses."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from shimgen.base.errors import ShimgenError

DEFAULT = "cpu"


def parse(value: str | None) -> str:
    """The device named by --device (None: not given, cpu): cpu, cuda or cuda:N; anything else, an empty value
    included, is a usage error."""
    text = DEFAULT if value is None else value.strip()
    if not text:
        raise ShimgenError("--device is empty: expected cpu, cuda or cuda:N")
    kind, _, index = text.partition(":")
    if kind == "cpu" and not index or kind == "cuda" and (not index or index.isdigit()):
        return text
    raise ShimgenError(f"--device {value}: expected cpu, cuda or cuda:N")


_PROBE = ("import sys, torch; i = int(sys.argv[1]); n = torch.cuda.device_count() if torch.cuda.is_available() "
          "else 0; print(torch.__version__, n); sys.exit(0 if i < n else 3)")


def require(device: str, python: str | None = None) -> None:
    """Raise (one line) unless `device` is usable by the torch of `python` (default: this interpreter's). Asked
    in a child process, so the caller never initialises CUDA (the samples runner forks after this)."""
    if device == DEFAULT:
        return
    index = device.partition(":")[2] or "0"
    proc = subprocess.run([python or sys.executable, "-c", _PROBE, index], capture_output=True, text=True)
    said = proc.stdout.split()
    if proc.returncode == 0:
        return
    if len(said) == 2:
        raise ShimgenError(f"--device {device}: torch {said[0]} sees {said[1]} CUDA device(s) here "
                           "(torch.cuda.is_available() is False or the index is out of range); run on a machine "
                           "with a GPU and a CUDA build of torch, or leave --device out (cpu)")
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    raise ShimgenError(f"--device {device}: cannot ask {python or sys.executable} about CUDA: {last}")


def move(value: Any, device: Any) -> Any:
    """`value` with every tensor in it (lists, tuples, dicts) on `device`: a leaf that requires grad stays a leaf
    that requires grad; a tensor that cannot move (a layout the device lacks) raises, which both sides see."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.device == device:
            return value
        moved = value.detach().to(device)
        return moved.requires_grad_() if value.requires_grad and value.is_leaf else moved
    if isinstance(value, list):
        return [move(v, device) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(move(v, device) for v in value)
    if isinstance(value, dict):
        return {k: move(v, device) for k, v in value.items()}
    return value
