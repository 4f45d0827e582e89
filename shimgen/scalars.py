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
  `fill_.Tensor` (the `compositions` section); `full`'s dtype, when not given, is inferred from the value as ATen
  infers it.
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
from importlib import resources

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
    siblings: dict[str, str] = field(default_factory=dict)  # `mul.Scalar` -> `mul.Tensor` (proven pairs)
    compositions: dict[str, dict[str, str]] = field(default_factory=dict)
    int_as_double: frozenset[str] = frozenset()  # overloads proven: an integer on floating tensors == the double


@functools.cache
def load() -> Facts:
    raw = yaml.safe_load(resources.files("shimgen").joinpath(DATA).read_text(encoding="utf-8"))
    p = raw["promotion"]
    dtypes = tuple(p["dtypes"])
    table = p["table"]
    promote = {(a, b): (table[i][j] or None) for i, a in enumerate(dtypes) for j, b in enumerate(dtypes)}
    return Facts(
        dtypes=dtypes,
        category={d: int(c) for d, c in zip(dtypes, p["categories"])},
        promote=promote,
        siblings=dict(raw.get("siblings") or {}),
        compositions={k: dict(v) for k, v in (raw.get("compositions") or {}).items()},
        int_as_double=frozenset(raw.get("int_as_double") or ()),
    )


def targets(op: str) -> tuple[str, ...]:
    """The overloads a Scalar op's numbers are lowered to: its composition's ops, or its Tensor sibling."""
    facts = load()
    comp = facts.compositions.get(op)
    if comp is not None:
        return (comp["create"], comp["fill"])
    sibling = facts.siblings.get(op)
    return (sibling,) if sibling else ()


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
    import torch

    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and (a.numel() == 0 or torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def prove_int_as_double(schemas: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The Scalar overloads for which an integer on floating-point tensors gives exactly what the same number as
    a double gives (results, dtypes, errors), on every sample of shimgen's generator with floating tensors and
    integral numbers; and, for the others, why not. Runs in a child process, restarted past an op that crashes."""
    import json
    import subprocess

    todo = sorted(schemas)
    proven: list[str] = []
    why: dict[str, str] = {}
    while todo:
        proc = subprocess.Popen([sys.executable, "-m", "shimgen.scalars", "_int-as-double-worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({op: schemas[op] for op in todo}))
        proc.stdin.close()
        started = None
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "start":
                started = event["op"]
            else:
                (proven.append(event["op"]) if event["proven"] else why.__setitem__(event["op"], event["why"]))
                todo.remove(event["op"])
                started = None
        proc.wait()
        if started is not None:  # the child died in this op
            why[started] = "aten crashes on a sample"
            todo.remove(started)
        elif proc.returncode != 0:
            break
    return sorted(proven), why


def _worker() -> None:
    """`_int-as-double-worker`: reads {op: schema} on stdin, writes a JSON line per op (see the caller)."""
    import json
    import warnings

    import torch
    from torchgen.model import FunctionSchema

    from shimgen.verify import samples

    warnings.simplefilter("ignore")
    for op, text in json.load(sys.stdin).items():
        print(json.dumps({"event": "start", "op": op}), flush=True)
        ok, reason = _int_as_double(torch, samples, FunctionSchema.parse(text))
        print(json.dumps({"event": "done", "op": op, "proven": ok, "why": reason}), flush=True)


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
    for key in ("compositions", "siblings", "int_as_double"):
        value = raw.get(key)
        if value:
            lines.append(yaml.safe_dump({key: value}, sort_keys=True, default_flow_style=False, width=120).rstrip())
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.scalars", description=__doc__.split("\n\n")[0])
    if argv is None and sys.argv[1:] == ["_int-as-double-worker"]:
        _worker()
        return 0
    ap.add_argument("what", choices=["promotion", "siblings", "int-as-double"], help="which facts to rewrite (siblings: found by "
                    "rule in the installed yaml; `prove` then keeps the proven ones)")
    args = ap.parse_args(argv)
    path = _path()
    raw = yaml.safe_load(open(path, encoding="utf-8")) if os.path.isfile(path) else {}
    if args.what == "promotion":
        raw["promotion"] = promotion_facts()
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
        raw["siblings"] = discover_siblings({op: FunctionSchema.parse(t) for op, t in texts.items()}, stand_in)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(raw))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
