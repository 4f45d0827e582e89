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
(`siblings`, `int_as_double`), proven by measurement (`python -m shimgen.scalars prove`), never assumed.

    python -m shimgen.scalars promotion      # rewrite the promotion facts from the installed torch
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import dataclass, field

import yaml

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
    compositions: dict[str, dict[str, str]] = field(default_factory=dict)
    int_as_double: frozenset[str] = frozenset()  # overloads proven: an integer on floating tensors == the double
    # `add.Tensor` -> {"via": "subtract.Tensor", "args": {via's argument: `name` or `-name`}}: aten computes the op
    # as that overload (sub is add with -alpha), whose libtorch C shim then stands in for it; only entries proven
    # equal on some runtime (`python -m shimgen.scalars equivalents`)
    equivalents: dict[str, dict] = field(default_factory=dict)


@functools.cache
def load() -> Facts:
    from shimgen.inputs import package_text

    raw = yaml.safe_load(package_text(DATA))
    p = raw["promotion"]
    dtypes = tuple(p["dtypes"])
    table = p["table"]
    promote = {(a, b): (table[i][j] or None) for i, a in enumerate(dtypes) for j, b in enumerate(dtypes)}
    return Facts(
        dtypes=dtypes,
        category={d: int(c) for d, c in zip(dtypes, p["categories"])},
        promote=promote,
        siblings={op: v["to"] for op, v in (raw.get("siblings") or {}).items() if v.get("cells") or v.get("cells_fit")},
        cells={op: int(v.get("cells", 0)) for op, v in (raw.get("siblings") or {}).items()},
        cells_fit={op: int(v.get("cells_fit", 0)) for op, v in (raw.get("siblings") or {}).items()},
        compositions={k: dict(v) for k, v in (raw.get("compositions") or {}).items()},
        int_as_double=frozenset(raw.get("int_as_double") or ()),
        equivalents={op: dict(v) for op, v in (raw.get("equivalents") or {}).items() if v.get("proven")},
    )


# ---- the lowering rule, in Python: the reference the C++ header (templates/scalar.h.j2) implements -------------

KINDS = ("bool", "int", "uint", "double", "complex")  # shimgen::Scalar::Kind, in order
# Classes of the promoted tensor operands' dtype: reduced-precision types compute with a wrapped number in a wider
# type (opmath), so they are proven apart.
CLASSES = ("bool", "integral", "floating", "reduced floating", "complex", "reduced complex")
_CLASS = {"Bool": 0, "Half": 3, "BFloat16": 3, "Float": 2, "Double": 2, "ComplexHalf": 5, "ComplexFloat": 4,
          "ComplexDouble": 4}


def class_of(dtype: str) -> int:
    return _CLASS.get(dtype, 1)


def kind_of(n) -> str:
    if isinstance(n, bool):
        return "bool"
    if isinstance(n, int):
        return "int" if n <= 2**63 - 1 else "uint"
    return "double" if isinstance(n, float) else "complex"


def cell(tensor_class: int, kind: str) -> int:
    """The bit of a (tensor operands' class, number kind) cell in a sibling's `cells` masks."""
    return 1 << (tensor_class * len(KINDS) + KINDS.index(kind))


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
                        cells_fit: int = 0):
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
                if not (cells & bit or fits):
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
    import torch

    return getattr(torch, {v: k for k, v in DTYPES.items()}[dtype])


def converts_exactly(n, dtype: str) -> bool:
    """Does the number survive conversion to `dtype` and back? (The header's converts_exactly.)"""
    import torch

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
    import math

    import torch

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


def targets(op: str) -> tuple[str, ...]:
    """The overloads a Scalar op's numbers are lowered to: its composition's ops, or its Tensor sibling."""
    facts = load()
    comp = facts.compositions.get(op)
    if comp is not None:
        return (comp["create"], comp["fill"])
    sibling = facts.siblings.get(op)
    return (sibling,) if sibling else ()


def vias(op: str) -> tuple[str, ...]:
    """The overload whose libtorch C shim computes `op` as aten does (the `equivalents` facts), if any."""
    rule = load().equivalents.get(op)
    return (rule["via"],) if rule else ()


# ---- the command -----------------------------------------------------------------------------------------------


def _category(dtype) -> int:
    import torch

    if dtype == torch.bool:
        return 0
    if dtype.is_complex:
        return 3
    if dtype.is_floating_point:
        return 2
    return 1


def promotion_facts() -> dict:
    """The promotion section, measured on the installed torch (torch.promote_types)."""
    import torch

    names = list(DTYPES)
    table = []
    for a in names:
        row = []
        for b in names:
            try:
                row.append(DTYPES[str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]])
            except (RuntimeError, TypeError):
                row.append("")
        table.append(row)
    return {
        "source": f"torch.promote_types of torch {torch.__version__}",
        "dtypes": [DTYPES[n] for n in names],
        "categories": [_category(getattr(torch, n)) for n in names],
        "table": table,
    }


def discover_siblings(schemas: dict[str, object], stand_in: dict[str, str]) -> dict[str, str]:
    """By rule: for each overload with a Scalar, the overload of the same name (in-place and out= alike) whose
    schema is the same except that each such argument has the conversion table's `stand_in` type there (Scalar
    -> Tensor, Scalar? -> Tensor?), with the same names and returns."""

    def shape(schema):
        return (str(schema.name.name), tuple((a.name, a.is_write) for a in schema.arguments.flat_all),
                tuple(str(r.type) for r in schema.returns))

    def stands_in(ours, theirs) -> bool:
        swapped = False
        for a, b in zip(ours.arguments.flat_all, theirs.arguments.flat_all):
            ta, tb = str(a.type), str(b.type)
            if ta != tb:
                if stand_in.get(ta) != tb:
                    return False
                swapped = True
        return swapped

    by_shape: dict[tuple, list[str]] = {}
    for op, schema in schemas.items():
        by_shape.setdefault(shape(schema), []).append(op)
    found: dict[str, str] = {}
    for op, schema in schemas.items():
        if not any(str(a.type) in stand_in for a in schema.arguments.flat_all):
            continue
        candidates = [c for c in by_shape[shape(schema)] if c != op and stands_in(schema, schemas[c])]
        if len(candidates) == 1:
            found[op] = candidates[0]
    return dict(sorted(found.items()))


def _spec(schema) -> dict:
    """An op description in the shape shimgen.verify.samples reads (see roundtrip.op_spec)."""
    args = schema.arguments
    kwarg_only = {a.name for a in (*args.flat_kwarg_only, *args.out)}
    out = {a.name for a in args.out}
    return {
        "op": f"{schema.name.name}.{schema.name.overload_name or 'default'}",
        "name": str(schema.name.name),
        "overload": schema.name.overload_name or "default",
        "kind": schema.kind().name,
        "args": [{"name": a.name, "type": str(a.type), "box_schema": str(a.type), "default": a.default,
                  "kwarg_only": a.name in kwarg_only, "is_write": a.is_write, "is_out": a.name in out}
                 for a in args.flat_all],
        "returns": [{"type": str(r.type), "name": r.name, "is_write": r.is_write, "box_schema": str(r.type)}
                    for r in schema.returns],
    }


def _same(a, b) -> bool:
    """Equal results: the same dtype, shape and values (NaN where the other has NaN), recursively."""
    import torch

    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.is_complex():
            a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
        if a.is_floating_point():
            a, b = a.double(), b.double()
            return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


ITEM_SECONDS = 20  # an item taking longer hangs (special_laguerre_polynomial_l with n = 2^53 + 1 loops n times)


def _lines(proc, timeout: float):
    """The child's output lines; None when it stays silent for `timeout` seconds."""
    import select

    assert proc.stdout is not None
    buffer = ""
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            yield None
            return
        chunk = os.read(proc.stdout.fileno(), 65536).decode()
        if not chunk:
            return
        buffer += chunk
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            yield line


def _in_children(job: str, items: dict[str, object]) -> dict[str, object]:
    """Run `job` over items in a child process (a JSON line per item), restarted past an item that crashes it:
    aten itself segfaults on some inputs. Returns item -> result (a crash: {"crash": true})."""
    import json
    import subprocess

    todo = sorted(items)
    results: dict[str, object] = {}
    while todo:
        proc = subprocess.Popen([sys.executable, "-m", "shimgen.scalars", "_worker", job], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=None if os.environ.get("SHIMGEN_PROGRESS") else
                                subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({k: items[k] for k in todo}))
        proc.stdin.close()
        started = None
        hung = False
        for line in _lines(proc, ITEM_SECONDS):
            if line is None:  # no word from the child for ITEM_SECONDS: it hangs in `started`
                proc.kill()
                hung = True
                break
            event = json.loads(line)
            if event["event"] == "start":
                started = event["item"]
            else:
                results[event["item"]] = event["result"]
                todo.remove(event["item"])
                started = None
        proc.wait()
        if started is not None:  # the child died or hung in this item
            results[started] = {"crash": True, "hung": hung}
            todo.remove(started)
        elif proc.returncode != 0:
            raise RuntimeError(f"the {job} worker failed")
    return results


def prove_int_as_double(schemas: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The Scalar overloads for which an integer on floating-point tensors gives exactly what the same number as
    a double gives (results, dtypes, errors), on every sample of shimgen's generator with floating tensors and
    integral numbers; and, for the others, why not."""
    proven, why = [], {}
    for op, r in _in_children("int-as-double", schemas).items():
        if r.get("crash"):  # type: ignore[union-attr]
            why[op] = "aten hangs on a sample" if r.get("hung") else "aten crashes on a sample"
        elif r["proven"]:  # type: ignore[index]
            proven.append(op)
        else:
            why[op] = r["why"]  # type: ignore[index]
    return sorted(proven), why


# The numbers the sibling proof tries in each Scalar position: every kind, signs, zero, beyond 2^53 and float range,
# and the values ATen's Scalar kernels branch on (pow.Tensor_Scalar computes x^0.5 as sqrt, x^-0.5 as rsqrt, x^2
# as x*x, x^-1 as a reciprocal: the Tensor overload does not, and differs in the last bit; --verify found it).
NUMBERS = [True, False, 3, -2, 0, 2, -1, 2**53 + 1, 2.5, 0.1, -1.5, 0.5, -0.5, 2.0, -1.0, 1e300, 1 + 2j]


def prove_equivalents(rules: dict[str, dict]) -> dict[str, dict]:
    """Each rule (`op` -> via, args) with `proven`: the runtimes (shimgen.verify.runtimes.RELEASES found here) on
    which aten's op equals `via` given those arguments on every sample of shimgen/probe/equivalents_worker.py
    (floating and integral tensors, shapes with 0-dim and broadcasting, numbers incl. +-inf and 2^53, and the
    float64 gradients); a rule differing on any runtime is proven nowhere."""
    import json
    import subprocess

    from shimgen import history
    from shimgen.parse import NativeYaml
    from shimgen.verify import runtimes

    from torchgen.model import FunctionSchema

    texts = history.schemas_of(NativeYaml().text)
    spec = {op: {"args": [a.name for a in FunctionSchema.parse(texts[op]).arguments.flat_all],
                 "via": r["via"], "via_args": r["args"]} for op, r in rules.items()}
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe", "equivalents_worker.py")
    found, missing = runtimes.resolve(list(runtimes.RELEASES))
    for name in missing:
        print(f"runtime {name} not found: not proven there", file=sys.stderr)
    proven: dict[str, list[str]] = {op: [] for op in rules}
    failed: set[str] = set()
    for rt in found:
        proc = subprocess.run([rt.python, worker], input=json.dumps(spec), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{rt.name}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for op, r in json.loads(proc.stdout).items():
            if r["wrong"] or not r["both_ok"]:
                print(f"{op} != {rules[op]['via']} on {rt.name}: {r['wrong'] or 'nothing compared'}", file=sys.stderr)
                failed.add(op)
            else:
                proven[op].append(rt.name)
    return {op: {"via": r["via"], "args": dict(r["args"]), "proven": [] if op in failed else proven[op]}
            for op, r in sorted(rules.items())}


def prove_siblings(pairs: dict[str, tuple[str, str]]) -> dict[str, dict]:
    """For each `op -> (its schema, its sibling's schema)`: over shimgen's samples (nine dtypes, 0-dim and not) and
    NUMBERS in each position the sibling takes a tensor, aten's Scalar overload given the number vs. the sibling
    given the 0-dim tensors Model.stand_in_dtypes picks. A (tensor category, number kind) cell is proven when at
    least one call in it compared and none differed; returns op -> {"cells": mask, "wrong": an example}."""
    results = _in_children("siblings", pairs)
    return {op: (r if not r.get("crash") else  # type: ignore[union-attr]
                 {"cells": 0, "cells_fit": 0,
                  "wrong": "aten hangs on a sample" if r.get("hung") else "aten crashes on a sample"})
            for op, r in results.items()}


def _worker(job: str) -> None:
    """`python -m shimgen.scalars _worker JOB`: reads {item: payload} on stdin, writes JSON lines (_in_children)."""
    import json
    import warnings

    import torch
    from torchgen.model import FunctionSchema

    from shimgen.verify import samples

    warnings.simplefilter("ignore")
    for item, payload in json.load(sys.stdin).items():
        print(json.dumps({"event": "start", "item": item}), flush=True)
        print(f"shimgen.scalars: {job}: {item}", file=sys.stderr, flush=True)
        if job == "int-as-double":
            ok, reason = _int_as_double(torch, samples, FunctionSchema.parse(payload))
            result: dict = {"proven": ok, "why": reason}
        else:
            result = _sibling_cells(torch, samples, FunctionSchema.parse(payload[0]), FunctionSchema.parse(payload[1]))
        print(json.dumps({"event": "done", "item": item, "result": result}), flush=True)


def _dtype_name(t) -> str:
    return DTYPES[str(t.dtype).split(".")[1]]


def _outcome(fn, kwargs: dict):
    import torch

    try:
        torch.manual_seed(0)
        return "ok", fn(**kwargs)
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return "error", " ".join(str(e).split()).split(". ")[0]


def _compare_once(torch, samples, aten, sibling, case, swapped, numbers, dtypes, zeros: bool):
    """(same, aten's outcome, the sibling's outcome) for one sample and numbers; None when zeroing changes
    nothing (no floating tensor)."""
    want_args = {k: v for k, v in case.make().items() if v is not samples.OMIT}
    got_args = {k: v for k, v in case.make().items() if v is not samples.OMIT}
    if zeros:
        floating = [k for k, v in want_args.items() if isinstance(v, torch.Tensor) and v.is_floating_point()]
        if not floating:
            return None
        for args in (want_args, got_args):
            for k in floating:
                args[k] = torch.zeros_like(args[k])
    for name, n, dtype in zip(swapped, numbers, dtypes):
        if n is None:
            want_args[name] = got_args[name] = None
            continue
        want_args[name] = n
        torch_dtype = getattr(torch, {v: k for k, v in DTYPES.items()}[dtype])
        got_args[name] = torch.tensor(n if dtype != "Bool" else bool(n), dtype=torch_dtype)
    want, got = _outcome(aten, want_args), _outcome(sibling, got_args)
    try:
        # an error on both sides is the same outcome for a caller (the kernels' messages may differ)
        same = want[0] == got[0] and (want[0] == "error" or _same(want[1], got[1]))
    except Exception as e:  # noqa: BLE001 - results the comparison cannot read are not proven equal
        same, got = False, ("error", f"comparing: {e}")
    return same, want, got


def _sibling_cells(torch, samples, ours, theirs) -> dict:
    model = Model(load(), DTYPES[str(torch.get_default_dtype()).split(".")[1]])
    spec = _spec(ours)
    swapped = [a.name for a, b in zip(ours.arguments.flat_all, theirs.arguments.flat_all) if str(a.type) != str(b.type)]
    optional = {a.name: str(a.type).endswith("?") for a in ours.arguments.flat_all}
    outs = {a.name for a in ours.arguments.out}  # the type promotion operands, as the header reads them
    tensor_args = [a.name for a in ours.arguments.flat_all if str(a.type) == "Tensor" and a.name not in outs]
    aten = getattr(getattr(torch.ops.aten, spec["name"]), spec["overload"])
    sibling = getattr(getattr(torch.ops.aten, str(theirs.name.name)), theirs.name.overload_name or "default")
    old = samples.DTYPES, samples.SHAPES
    samples.DTYPES = (torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                      torch.float32, torch.float64, torch.complex64)
    samples.SHAPES = ((2, 3), ())
    try:
        cases = samples.generate(spec)
    except Exception as e:  # noqa: BLE001
        return {"cells": 0, "wrong": f"no samples ({type(e).__name__})"}
    finally:
        samples.DTYPES, samples.SHAPES = old
    exact = wrong = exact_fit = wrong_fit = 0
    example = ""
    seen: set = set()
    for case in cases:
        probe = case.make()
        tensors = [(_dtype_name(probe[n]), probe[n].dim() == 0) for n in tensor_args
                   if isinstance(probe.get(n), torch.Tensor)]
        if tuple(tensors) in seen:  # one sample per dtype and rank: the numbers vary the Scalar positions
            continue
        seen.add(tuple(tensors))
        # the number in every position the sibling takes a tensor, and (where the others are optional) in each
        # one alone, the others None
        subsets = [tuple(swapped)]
        if len(swapped) > 1 and all(optional[n] for n in swapped):
            subsets += [(n,) for n in swapped]
        for subset in subsets:
            for number in NUMBERS:
                numbers = [number if n in subset else None for n in swapped]
                dtypes = model.stand_in_dtypes(tensors, numbers)
                if isinstance(dtypes, str):
                    continue  # refused whatever the cells say
                for zeros in (False, True):  # zeroed tensors too: 0 * inf = nan shows a number rounded to inf
                    result = _compare_once(torch, samples, aten, sibling, case, swapped, numbers, dtypes, zeros)
                    if result is None:
                        continue
                    same, want, got = result
                    tclass = model.tensor_class(tensors)
                    bit = cell(tclass, kind_of(number)) if tclass >= 0 else 0
                    rtype = model.result_type(tensors, [model.wrapped(n) if n is not None else None for n in numbers])
                    fits = isinstance(rtype, str) and in_range(number, rtype)
                    if same and want[0] == "ok":  # a cell is proven by results, not by errors on both sides
                        exact |= bit
                        exact_fit |= bit if fits else 0
                    elif not same:
                        wrong |= bit
                        wrong_fit |= bit if fits else 0
                        example = example or (f"{case.label}{' (zeroed)' if zeros else ''}, "
                                              f"{dict(zip(swapped, numbers))}: aten {str(want[1])[:100]}; "
                                              f"sibling {str(got[1])[:100]}")
    return {"cells": exact & ~wrong, "cells_fit": exact_fit & ~wrong_fit & ~(exact & ~wrong), "wrong": example}


def _int_as_double(torch, samples, schema) -> tuple[bool, str]:
    numbers = [a for a in schema.arguments.flat_all if str(a.type) in ("Scalar", "Scalar?")]
    spec = _spec(schema)
    try:
        aten = getattr(getattr(torch.ops.aten, spec["name"]), spec["overload"])
        cases = samples.generate(spec)
    except Exception as e:  # noqa: BLE001 - no sample generator for this op: unproven
        return False, f"no samples ({type(e).__name__})"
    compared = 0
    for case in cases:
        values = case.make()
        flat = [t for v in values.values() for t in (v if isinstance(v, (list, tuple)) else [v])]
        if any(isinstance(t, torch.Tensor) and not (t.is_floating_point() or t.is_complex()) for t in flat):
            continue
        ints, floats = dict(values), dict(values)
        changed = False
        for a in numbers:
            v = values.get(a.name, samples.OMIT)
            if v is samples.OMIT or v is None:
                v = a.default if a.default not in (None, "None") else None
                v = float(v) if v is not None and v.lstrip("-").replace(".", "", 1).isdigit() else None
            if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
                ints[a.name], floats[a.name] = int(v), float(v)
                changed = True
        if not changed:
            continue
        outcome = []
        for vals in (ints, floats):
            kw = {k: v for k, v in vals.items() if v is not samples.OMIT}
            try:
                torch.manual_seed(0)
                outcome.append(("ok", aten(**kw)))
            except Exception as e:  # noqa: BLE001
                outcome.append(("error", str(e).split("\n")[0]))
        compared += 1
        if outcome[0][0] != outcome[1][0] or not _same(outcome[0][1], outcome[1][1]):
            return False, (f"{case.label}: integer -> {str(outcome[0][1])[:80]}; "
                           f"double -> {str(outcome[1][1])[:80]}")
    if not compared:
        return False, "no sample with floating-point tensors and integral numbers"
    return True, ""


def _path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), DATA)


def dump(raw: dict) -> str:
    """The data file: the header comment, then each section (the table one row per line)."""
    head = (
        "# How a Scalar crosses the stable ABI exactly: facts read by shimgen/scalars.py. Written by\n"
        "# `python -m shimgen.scalars` (promotion: measured on the installed torch; siblings and int_as_double:\n"
        "# proven by `python -m shimgen.scalars prove`); compositions are rules, kept by the command.\n"
    )
    p = raw["promotion"]
    lines = [head, "promotion:", f"  source: {p['source']!r}", f"  dtypes: [{', '.join(p['dtypes'])}]",
             f"  categories: [{', '.join(map(str, p['categories']))}]  # 0 bool, 1 integral, 2 floating, 3 complex",
             "  table:  # promote(row, column); empty: torch refuses the pair"]
    empty = "''"
    lines += ["    - [" + ", ".join(x or empty for x in row) + "]" for row in p["table"]]
    for key in ("compositions", "equivalents", "siblings", "int_as_double"):
        value = raw.get(key)
        if value:
            lines.append(yaml.safe_dump({key: value}, sort_keys=True, default_flow_style=False, width=120).rstrip())
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.scalars", description=__doc__.split("\n\n")[0])
    if argv is None and sys.argv[1:2] == ["_worker"]:
        _worker(sys.argv[2])
        return 0
    ap.add_argument("what", choices=["promotion", "siblings", "int-as-double", "equivalents"], help="which facts to rewrite (siblings: found by "
                    "rule in the installed yaml; `prove` then keeps the proven ones)")
    args = ap.parse_args(argv)
    path = _path()
    raw = yaml.safe_load(open(path, encoding="utf-8")) if os.path.isfile(path) else {}
    if args.what == "promotion":
        raw["promotion"] = promotion_facts()
    if args.what == "equivalents":
        raw["equivalents"] = prove_equivalents(raw.get("equivalents") or {})
    if args.what == "int-as-double":
        from torchgen.model import FunctionSchema

        from shimgen import history
        from shimgen.parse import NativeYaml

        texts = history.schemas_of(NativeYaml().text)
        with_numbers = {}
        for op, t in texts.items():
            schema = FunctionSchema.parse(t)
            flat = [str(a.type) for a in schema.arguments.flat_all]
            if any(x in ("Scalar", "Scalar?") for x in flat) and any(x.startswith("Tensor") for x in flat):
                with_numbers[op] = t
        proven, why = prove_int_as_double(with_numbers)
        raw["int_as_double"] = proven
        for op, reason in sorted(why.items()):
            print(f"not proven: {op}: {reason}", file=sys.stderr)
        print(f"{len(proven)} proven, {len(why)} not", file=sys.stderr)
    if args.what == "siblings":
        from torchgen.model import FunctionSchema

        from shimgen import history, table
        from shimgen.parse import NativeYaml

        rows = table.load().arguments
        stand_in = {k: r.stand_in for k, r in rows.items() if r.stand_in}
        texts = history.schemas_of(NativeYaml().text)
        pairs = discover_siblings({op: FunctionSchema.parse(t) for op, t in texts.items()}, stand_in)
        proofs = prove_siblings({op: (texts[op], texts[to]) for op, to in pairs.items()})
        raw["siblings"] = {op: {"to": to, "cells": proofs[op]["cells"], "cells_fit": proofs[op].get("cells_fit", 0)}
                           for op, to in pairs.items()}
        for op in sorted(pairs):
            if proofs[op]["wrong"]:
                print(f"{op} -> {pairs[op]}: differs: {proofs[op]['wrong']}", file=sys.stderr)
        full = sum(1 for op in pairs if proofs[op]["cells"] and not proofs[op]["wrong"])
        some = sum(1 for op in pairs if (proofs[op]["cells"] or proofs[op].get("cells_fit")))
        print(f"{len(pairs)} siblings: {full} proven in every cell tried, {some - full} in some (or for numbers "
              f"that fit the result dtype), {len(pairs) - some} in none", file=sys.stderr)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(raw))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
