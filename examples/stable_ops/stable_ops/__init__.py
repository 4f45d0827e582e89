"""shimgen's worked example: custom ops on the LibTorch stable ABI (see csrc/stable_ops.cpp)."""

from __future__ import annotations

from typing import Optional

import torch

from . import _C  # noqa: F401  (loads the library: its ops register as torch.ops.stable_ops.*)

ACTIVATIONS = {None: 0, "silu": 1, "relu": 2, "sigmoid": 3, "tanh": 4}


def rms_norm_act(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, act: Optional[str] = None) -> torch.Tensor:
    return torch.ops.stable_ops.rms_norm_act(x, weight, eps, ACTIVATIONS[act])


def masked_softmax(x: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.ops.stable_ops.masked_softmax(x, mask, dim)


def quantize_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.ops.stable_ops.quantize_int8(x)


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return torch.ops.stable_ops.dequantize_int8(q, scale)


def requantize_int8(acc: torch.Tensor, multiplier: int, shift: int) -> torch.Tensor:
    return torch.ops.stable_ops.requantize_int8(acc, multiplier, shift)


def linear_act(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor] = None,
               act: Optional[str] = None) -> torch.Tensor:
    return torch.ops.stable_ops.linear_act(x, w, b, ACTIVATIONS[act])
