"""shimgen's quick start: custom ops on the LibTorch stable ABI (csrc/quickstart.cpp)."""

import torch  # first: the extension links libtorch, which torch's import loads

from . import _C  # noqa: F401,E402  (loads the library: its ops register as torch.ops.quickstart.*)


def scaled_relu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.ops.quickstart.scaled_relu(x, scale)


def row_max(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.quickstart.row_max(x)
