"""The Python reference of the generated header's Scalar lowering (torch/csrc/stable/shimgen/scalar.h): which
0-dim tensors stand in for the numbers of a call, over torch dtype names (`Long`...), as the header computes them.
The sibling prover (shimgen.proofs.provers.scalars) measures aten against it; the generation stack never imports it."""

from __future__ import annotations

import math

import torch

from shimgen.facts.scalar_facts import DTYPES, Facts, cell, class_of


def kind_of(n) -> str:
    if isinstance(n, bool):
        return "bool"
    if isinstance(n, int):
        return "int" if n <= 2**63 - 1 else "uint"
    return "double" if isinstance(n, float) else "complex"

class Model:
    """stand_in_dtypes and friends over torch dtype names (`Long`...), as the generated header computes them."""

    def __init__(self, facts: Facts, default_dtype: str = "Float") -> None:
        self.f = facts
        self.default = default_dtype

    def promote(self, a: str | None, b: str | None) -> str | None | bool:
        if a is False or b is False:
            return False  # refused
        if a is None:
            return b
        if b is None:
            return a
        return self.f.promote.get((a, b)) or False

    def cat(self, t) -> int:
        return self.f.category[t] if isinstance(t, str) else -1

    def to_complex(self, t: str):
        return {"Half": "ComplexHalf", "Float": "ComplexFloat", "Double": "ComplexDouble"}.get(t, False)

    def combine(self, higher, lower):
        if higher is False or lower is False:
            return False
        if self.cat(higher) == 3:
            return higher
        if self.cat(lower) == 3:
            return self.to_complex(higher) if self.cat(higher) == 2 else lower
        if self.cat(higher) == 2:
            return higher
        if higher == "Bool" or self.cat(lower) == 2:
            return self.promote(higher, lower)
        return higher if higher is not None else lower

    def result_type(self, tensors: list[tuple[str, bool]], wrapped: list[str | None]):
        dim = zero = numbers = None
        for dtype, zero_dim in tensors:
            if zero_dim:
                zero = self.promote(zero, dtype)
            else:
                dim = self.promote(dim, dtype)
        for w in wrapped:
            numbers = self.promote(numbers, w)
        return self.combine(dim, self.combine(zero, numbers))

    @staticmethod
    def natural(n) -> str:
        return {"bool": "Bool", "int": "Long", "uint": "UInt64", "double": "Double", "complex": "ComplexDouble"}[
            kind_of(n)]

    def wrapped(self, n) -> str:
        k = kind_of(n)
        if k == "double":
            return self.default
        if k == "complex":
            return self.to_complex(self.default)
        return self.natural(n)

    def tensor_class(self, tensors: list[tuple[str, bool]]) -> int:
        t = None
        for dtype, _ in tensors:
            t = self.promote(t, dtype)
        return class_of(t) if isinstance(t, str) else -1

    def stand_in_dtypes(self, tensors: list[tuple[str, bool]], numbers: list, cells: int | None = None,
                        cells_fit: int = 0, cells_exact: int = 0):
        """The 0-dim tensors' dtypes for `numbers` (None entries: absent), or the reason the call is refused.
        With `cells`, only in proven cells: `cells`, or `cells_fit` for a number that converts exactly to the
        result dtype."""
        want = self.result_type(tensors, [self.wrapped(n) if n is not None else None for n in numbers])
        if cells is not None:
            tclass = self.tensor_class(tensors)
            for n in numbers:
                if n is None:
                    continue
                bit = cell(tclass, kind_of(n)) if tclass >= 0 else 0
                fits = bool(cells_fit & bit) and isinstance(want, str) and in_range(n, want)
                exact = bool(cells_exact & bit) and isinstance(want, str) and stands_in_exactly(n, want)
                if not (cells & bit or fits or exact):
                    return "not proven for these dtypes and this kind of number"
        natural = [self.natural(n) if n is not None else None for n in numbers]
        if isinstance(want, str) and self.result_type(tensors + [(d, True) for d in natural if d], []) == want:
            return natural
        if not isinstance(want, str):
            return "no type promotion rule is known for these dtypes"
        for n in numbers:
            if n is not None and not stands_in_exactly(n, want):
                return "the number does not convert exactly to the result dtype"
        if self.result_type(tensors + [(want, True) for n in numbers if n is not None], []) != want:
            return "no 0-dim tensor reproduces aten's type promotion for this number"
        return [want if n is not None else None for n in numbers]

def _torch_dtype(dtype: str):
    return getattr(torch, {v: k for k, v in DTYPES.items()}[dtype])


def converts_exactly(n, dtype: str) -> bool:
    """Does the number survive conversion to `dtype` and back? (The header's converts_exactly.)"""
    try:
        t = torch.tensor(n, dtype=_torch_dtype(dtype))
    except (RuntimeError, OverflowError):
        return False
    if isinstance(n, complex):
        return t.is_complex() and complex(t.item()) == n
    return (t.item() == n) if not t.is_complex() else complex(t.item()) == n


REDUCED = ("Half", "BFloat16", "ComplexHalf")


def in_range(n, dtype: str) -> bool:
    """Is the number within `dtype`'s range: exactly representable for a bool or integer dtype, finite after
    rounding for a floating-point or complex one (ATen's overflow checks). (The header's in_range.)"""
    t = _torch_dtype(dtype)
    if t == torch.bool or not (t.is_floating_point or t.is_complex):
        return converts_exactly(n, dtype)
    if isinstance(n, complex) and not t.is_complex:
        return False
    parts = (n.real, n.imag) if isinstance(n, complex) else (n,)
    real = torch.finfo(t).max
    return all(math.isfinite(float(p)) and abs(float(p)) <= real for p in parts)


def stands_in_exactly(n, dtype: str) -> bool:
    """May a 0-dim tensor of `dtype` (the result dtype) stand in for the number? Where ATen computes with the
    number in that very dtype, rounding it there is what ATen does; a reduced-precision result (half, bfloat16)
    computes with it in float, so there it must convert exactly. (The header's stands_in_exactly.)"""
    return converts_exactly(n, dtype) if dtype in REDUCED else in_range(n, dtype)
