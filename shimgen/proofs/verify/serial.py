"""Recorded argument values, stored so that any torch from 2.9 on can rebuild them exactly.

A recorded call is a dict: argument name -> encoded value. Encoded values are plain Python data (None, bool, int,
float, complex, str, bytes, lists and tuples), so a cache file written with pickle needs no torch class to load and
is read with a restricted unpickler. Tags (a tuple whose first item is a str starting with `@`):

  ("@tensor", dtype, shape, stride, storage_offset, data)   a strided CPU tensor: its storage extent's raw bytes
  ("@qtensor", dtype, int_repr, scale, zero_point)           a per-tensor affine quantized tensor
  ("@qtensor_pc", dtype, int_repr, scales, zero_points, axis)  a per-channel affine quantized tensor
  ("@sparse", shape, indices, values, coalesced)              a sparse COO tensor
  ("@dtype", name) ("@layout", name) ("@memory_format", name) ("@device", text) ("@generator", state tensor)
  ("@list", [items]) ("@tuple", [items])                      so that a list of two ints is not read as a tag

decode() builds fresh tensors on each call (a sample is made afresh for aten and for the wrapper).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

MAX_BYTES = 1 << 18  # a recorded call whose tensors need more is not kept (OpInfo's samples are far smaller)


class Unserializable(Exception):
    """A value no tag can carry (a nested or non-CPU tensor, a tensor subclass, a Python object)."""


def _tensor_bytes(t: Any) -> tuple[list[int], list[int], int, bytes]:
    """(shape, stride, storage offset, bytes of the storage extent the tensor reads), offset relative to that extent."""
    import torch

    shape, stride = list(t.shape), list(t.stride())
    if t.numel() == 0:
        return shape, stride, 0, b""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    flat = t.as_strided((extent,), (1,), t.storage_offset()).contiguous()
    data = flat.view(torch.uint8) if flat.element_size() > 0 else flat
    return shape, stride, 0, data.numpy().tobytes()


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def encode(v: Any, budget: list[int] | None = None) -> Any:
    """The value as plain data; raises Unserializable. `budget` ([bytes left]) bounds the tensor bytes kept."""
    import torch

    budget = budget if budget is not None else [MAX_BYTES]
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return v
    if isinstance(v, torch.Tensor):
        if type(v) is not torch.Tensor and not isinstance(v, torch.nn.Parameter):
            raise Unserializable(f"a tensor subclass {type(v).__name__}")
        if v.device.type != "cpu":
            raise Unserializable(f"a tensor on {v.device}")
        t = v.detach()
        if t.is_quantized:
            scheme = t.qscheme()
            if scheme == torch.per_tensor_affine:
                return ("@qtensor", _dtype_name(t.dtype), encode(t.int_repr(), budget), float(t.q_scale()),
                        int(t.q_zero_point()))
            if scheme == torch.per_channel_affine:
                return ("@qtensor_pc", _dtype_name(t.dtype), encode(t.int_repr(), budget),
                        encode(t.q_per_channel_scales(), budget), encode(t.q_per_channel_zero_points(), budget),
                        int(t.q_per_channel_axis()))
            raise Unserializable(f"a quantized tensor with scheme {scheme}")
        if t.layout == torch.sparse_coo:
            return ("@sparse", list(t.shape), encode(t._indices(), budget), encode(t._values(), budget),
                    bool(t.is_coalesced()))
        if t.layout != torch.strided or t.is_nested:
            raise Unserializable(f"a tensor with layout {t.layout}")
        t = t.resolve_conj().resolve_neg()
        shape, stride, offset, data = _tensor_bytes(t)
        budget[0] -= len(data)
        if budget[0] < 0:
            raise Unserializable("tensors larger than the recording keeps")
        return ("@tensor", _dtype_name(t.dtype), shape, stride, offset, data)
    if isinstance(v, torch.dtype):
        return ("@dtype", _dtype_name(v))
    if isinstance(v, torch.layout):
        return ("@layout", _dtype_name(v))
    if isinstance(v, torch.memory_format):
        return ("@memory_format", _dtype_name(v))
    if isinstance(v, torch.device):
        return ("@device", str(v))
    if isinstance(v, torch.Generator):
        if v.device.type != "cpu":
            raise Unserializable(f"a generator on {v.device}")
        return ("@generator", encode(v.get_state(), budget))
    if isinstance(v, (list, tuple, torch.Size)):
        tag = "@tuple" if isinstance(v, tuple) and not isinstance(v, torch.Size) else "@list"
        return (tag, [encode(x, budget) for x in v])
    raise Unserializable(f"a value of type {type(v).__name__}")


def decode(v: Any) -> Any:
    """Fresh values from encode()'s output (new tensors each time)."""
    import torch

    if not isinstance(v, tuple) or not v or not isinstance(v[0], str) or not v[0].startswith("@"):
        return v
    tag = v[0]
    if tag == "@tensor":
        _, dtype, shape, stride, offset, data = v
        dt = getattr(torch, dtype)
        if not data:
            return torch.empty_strided(shape, stride, dtype=dt)
        flat = torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dt)
        return flat.as_strided(shape, stride, offset)
    if tag == "@qtensor":
        _, dtype, int_repr, scale, zero_point = v
        return torch._make_per_tensor_quantized_tensor(decode(int_repr), scale, zero_point)
    if tag == "@qtensor_pc":
        _, dtype, int_repr, scales, zero_points, axis = v
        return torch._make_per_channel_quantized_tensor(decode(int_repr), decode(scales), decode(zero_points), axis)
    if tag == "@sparse":
        _, shape, indices, values, coalesced = v
        return torch.sparse_coo_tensor(decode(indices), decode(values), shape, is_coalesced=coalesced)
    if tag == "@dtype":
        return getattr(torch, v[1])
    if tag == "@layout":
        return getattr(torch, v[1])
    if tag == "@memory_format":
        return getattr(torch, v[1])
    if tag == "@device":
        return torch.device(v[1])
    if tag == "@generator":
        g = torch.Generator()
        g.set_state(decode(v[1]))
        return g
    if tag == "@list":
        return [decode(x) for x in v[1]]
    if tag == "@tuple":
        return tuple(decode(x) for x in v[1])
    raise ValueError(f"unknown tag {tag}")


def describe(v: Any) -> str:
    """A short label for an encoded value: `T(2, 3):float32`, `[1, 2]`, `2.5`."""
    if isinstance(v, tuple) and v and isinstance(v[0], str) and v[0].startswith("@"):
        tag = v[0]
        if tag == "@tensor":
            return f"T{tuple(v[2])}:{v[1]}" + ("" if _contiguous(v[2], v[3]) else "(strided)")
        if tag in ("@qtensor", "@qtensor_pc"):
            return f"Q{describe(v[2])[1:]}:{v[1]}"
        if tag == "@sparse":
            return f"S{tuple(v[1])}"
        if tag in ("@list", "@tuple"):
            return "[" + ",".join(describe(x) for x in v[1]) + "]"
        if tag == "@generator":
            return "Generator"
        return str(v[1])
    return repr(v)


def _contiguous(shape: list[int], stride: list[int]) -> bool:
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


# ---- files ---------------------------------------------------------------------------------------------------


class _PlainUnpickler(pickle.Unpickler):
    """Loads only plain data: a cache file cannot make the runner import or call anything."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in ("complex", "bytearray", "set", "frozenset"):
            return getattr(__import__("builtins"), name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a samples file")


def dumps(data: Any) -> bytes:
    return pickle.dumps(data, protocol=4)


def loads(blob: bytes) -> Any:
    return _PlainUnpickler(io.BytesIO(blob)).load()
