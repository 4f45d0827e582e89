"""How a schema `Scalar` crosses the stable ABI without changing the answer (data/scalar_facts.yaml + rules).

A wrapper takes a `shimgen::Scalar` (bool, integer, floating point or complex, kept as the caller wrote it, like
at::Scalar). No released dispatcher converts a Scalar and a C shim carries it as a `double`, so a wrapper lowers
it by rule, per call:

* **C shim (`double`)**: exact when the value is floating point (ATen then gets the same double the caller
  meant), or when it is an integer equal to an integral schema default and the shim is shimgen's own (its
  definition passes that integer, conversion table `aten_default`).
* **Tensor sibling**: the overload of the same name whose schema has `Tensor` where this one has `Scalar`
  (`mul.Scalar` -> `mul.Tensor`, `clamp` -> `clamp.Tensor`, `where.ScalarOther` -> `where.self`), called through
  its own wrapper with the Scalar as a 0-dim tensor. ATen implements most `.Scalar` overloads as exactly that call
  with a *wrapped number*, which type promotion treats as lower priority than a 0-dim tensor; the 0-dim tensor's
  dtype is chosen at run time so that promotion equals the wrapped number's: first the number's own dtype (int64,
  float64, bool, complex128: the very tensor ATen would wrap), else the result dtype ATen would compute (then the
  value must convert to it exactly), else the call raises. The promotion table comes from this data.
* **Composition**: factories with a fill value (`full`, `new_full`, `full_like`) become their `empty` sibling and
  `fill_.Scalar` (the `compositions` section), whose wrapper lowers the number in turn; `full`'s dtype, when not
  given, is inferred from the value as ATen infers it.
* Otherwise the wrapper raises an error starting `shimgen: ` naming the argument, its value and why.

Which siblings and compositions may be used, and where an integral value may travel as a double, is data
(`siblings`, `int_as_double`), proven by measurement (`python -m shimgen.dev prove siblings`,
`... int-as-double`), never assumed.

The facts live in data/scalar_facts.yaml and are read here (this module is all the generation stack imports);
the Python reference of the generated header's rule is shimgen.proofs.provers.scalar_model, and the commands that
measure the facts are shimgen.proofs.provers.scalars:

    python -m shimgen.dev prove promotion      # rewrite the promotion facts from the installed torch
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from shimgen.base import cache
from shimgen.base.inputs import load_yaml, package_text

DATA = "data/scalar_facts.yaml"

# torch dtype name -> torch::headeronly::ScalarType enumerator, for the dtypes type promotion knows.
DTYPES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "float32": "Float", "float64": "Double", "complex32": "ComplexHalf",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "bfloat16": "BFloat16", "uint16": "UInt16",
    "uint32": "UInt32", "uint64": "UInt64",
}


@dataclass(frozen=True)
class Facts:
    dtypes: tuple[str, ...]  # ScalarType enumerators, in table order
    category: dict[str, int]  # 0 bool, 1 integral, 2 floating point, 3 complex
    promote: dict[tuple[str, str], str | None]  # None: torch refuses to promote the pair
    siblings: dict[str, str] = field(default_factory=dict)  # `mul.Scalar` -> `mul.Tensor`, where any cell is proven
    cells: dict[str, int] = field(default_factory=dict)  # `mul.Scalar` -> mask of proven (tensor class, kind)
    cells_fit: dict[str, int] = field(default_factory=dict)  # ... proven for numbers that fit the result dtype
    # ... proven for numbers the result dtype holds exactly (stands_in_exactly: the half types' cells)
    cells_exact: dict[str, int] = field(default_factory=dict)
    compositions: dict[str, dict[str, str]] = field(default_factory=dict)
    int_as_double: frozenset[str] = frozenset()  # overloads proven: an integer on floating tensors == the double
    # `add.Tensor` -> {"via": "subtract.Tensor", "args": {via's argument: `name` or `-name`}, "proven": [...]}:
    # aten computes the op as that overload (sub is add with -alpha), whose libtorch C shim then stands in for it
    # (shimgen.generate.routes.equivalent); only entries proven equal on some runtime
    # (`python -m shimgen.dev prove equivalents`)
    equivalents: dict[str, dict] = field(default_factory=dict)
    # `pow.Tensor_Scalar` -> [{"argument", "value", "cells": {number kind: [tensor dtypes]}, "via", "args",
    # "proven"}]: for that very number aten's Scalar kernel computes the op as `via` (pow(x, 2) is x * x), so a call
    # passing it takes `via`'s wrapper (emit_cpp.number_rules_prelude); proven per runtime, gradients included
    number_rules: dict[str, list[dict]] = field(default_factory=dict)
    # `threshold_backward.default` -> {"kernel": "threshold", "args": [the kernel's arguments: names or numbers],
    # "proven": [...]}: aten's kernel as dispatching aten calls carrying only tensors (scalar.h's
    # shimgen::detail::<kernel>_select; shimgen.generate.routes.composition); proven per runtime, gradients included
    # (`python -m shimgen.dev prove kernel-compositions`)
    kernel_compositions: dict[str, dict] = field(default_factory=dict)


@functools.cache
def load() -> Facts:
    text = package_text(DATA)
    return cache.derived("scalar_facts", [text.encode()], lambda: _facts(text))


def _facts(text: str) -> Facts:
    raw = load_yaml(text)
    p = raw["promotion"]
    dtypes = tuple(p["dtypes"])
    table = p["table"]
    promote = {(a, b): (table[i][j] or None) for i, a in enumerate(dtypes) for j, b in enumerate(dtypes)}
    return Facts(
        dtypes=dtypes,
        category={d: int(c) for d, c in zip(dtypes, p["categories"])},
        promote=promote,
        siblings={op: v["to"] for op, v in (raw.get("siblings") or {}).items() if v.get("cells") or v.get("cells_fit") or v.get("cells_exact")},
        cells={op: int(v.get("cells", 0)) for op, v in (raw.get("siblings") or {}).items()},
        cells_fit={op: int(v.get("cells_fit", 0)) for op, v in (raw.get("siblings") or {}).items()},
        cells_exact={op: int(v.get("cells_exact", 0)) for op, v in (raw.get("siblings") or {}).items()},
        compositions={k: dict(v) for k, v in (raw.get("compositions") or {}).items()},
        int_as_double=frozenset(raw.get("int_as_double") or ()),
        equivalents={op: dict(v) for op, v in (raw.get("equivalents") or {}).items() if v.get("proven")},
        number_rules={op: [dict(r) for r in rules if r.get("proven")]
                      for op, rules in (raw.get("number_rules") or {}).items()},
        kernel_compositions={op: dict(v) for op, v in (raw.get("kernel_compositions") or {}).items()
                             if v.get("proven")},
    )


# ---- how the proven cells are encoded (the masks in the data, read by the generated header) -----------------

KINDS = ("bool", "int", "uint", "double", "complex")  # shimgen::Scalar::Kind, in order
# Classes of the promoted tensor operands' dtype: reduced-precision types compute with a wrapped number in a wider
# type (opmath), so they are proven apart.
CLASSES = ("bool", "integral", "floating", "reduced floating", "complex", "reduced complex")
_CLASS = {"Bool": 0, "Half": 3, "BFloat16": 3, "Float": 2, "Double": 2, "ComplexHalf": 5, "ComplexFloat": 4,
          "ComplexDouble": 4}


def class_of(dtype: str) -> int:
    return _CLASS.get(dtype, 1)


def cell(tensor_class: int, kind: str) -> int:
    """The bit of a (tensor operands' class, number kind) cell in a sibling's `cells` masks."""
    return 1 << (tensor_class * len(KINDS) + KINDS.index(kind))


def targets(op: str) -> tuple[str, ...]:
    """The overloads a Scalar op's numbers are lowered to: its composition's ops, or its Tensor sibling."""
    facts = load()
    comp = facts.compositions.get(op)
    if comp is not None:
        return (comp["create"], comp["fill"])
    sibling = facts.siblings.get(op)
    return (sibling,) if sibling else ()


def vias(op: str) -> tuple[str, ...]:
    """The overloads `op`'s wrapper calls by the `equivalents`, `number_rules` and `kernel_compositions` facts
    (generated with it)."""
    facts = load()
    rule = facts.equivalents.get(op)
    kernel = facts.kernel_compositions.get(op, {})
    return (((rule["via"],) if rule else ()) + tuple(r["via"] for r in facts.number_rules.get(op, []) if "via" in r)
            + ((kernel["via"],) if "via" in kernel else ())
            + ((kernel["none_via"],) if "none_via" in kernel else ())  # kernel str_value: the overload for None
            + ((kernel["operand"]["via"],) if "operand" in kernel else ())
            + tuple(kernel.get("calls", {}).values())  # a kernel calling several wrappers (trapezoid_dx)
            + tuple(c for spec in kernel.get("composed", {}).values() for c in spec["calls"])  # str_value
            + ((kernel["views"],) if "views" in kernel else ()))  # fill_diagonal_'s as_strided
