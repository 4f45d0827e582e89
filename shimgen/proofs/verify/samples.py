"""Sample inputs for `shimgen --verify`, generated from an op's schema (runs inside the runner, with torch).

For every dtype (float32, float64, int64, bool) and shape (2x3, 0-d, empty 0x3) the runner gets a base
sample (required arguments only: defaults in effect), one sample per non-default value of each argument, and
error samples (a dim out of range, an index past the end, tensors whose shapes do not fit, ...). Values come
from rules keyed by the schema type and the argument's name (a `dim` is a valid dim of `self`, an `index`
tensor holds valid indices along `dim`, a `mask` is bool, ...); what a rule cannot guess comes from
data/verify_samples.yaml: per op (`name` or `name.overload`; an in-place op also takes its functional name's),
Python expressions that replace an argument's candidates (`args`) or error values (`errors`), and
`values: false` for ops whose result is uninitialised. Random ops compare values too: the default generator is
seeded before each call, and a Generator argument is a fresh generator with a fixed seed on each side.

A sample is a choice per argument: omitted (its default applies), candidate k, or error value k. Values are
built in schema order, so later arguments see earlier ones (`index` sees `self` and `dim`), and afresh for
each call (same seed, same values), so in-place and out= calls never share tensors. out= tensors take their
dtypes from the functional overload's result; the base sample also tries them sized, of another dtype and
overlapping (see out_tensors).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import yaml

from shimgen.base.inputs import package_text

DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool)
SHAPES: tuple[tuple[int, ...], ...] = ((2, 3), (), (0, 3))
OMIT = object()  # the argument is not passed: its schema default applies


@dataclass
class Sample:
    label: str
    make: Callable[[], dict[str, Any]]  # fresh values on each call: argument name -> value (OMIT: not passed)
    values: bool = True  # compare values; False where aten's result is undefined (out= with overlapping memory)
    source: str = "shimgen"  # where the values come from: shimgen's rules, or the recorded OpInfo call


@dataclass
class Ctx:
    """What rules and override expressions see: the sample's dtype and shape, and the arguments built so far."""

    dtype: torch.dtype
    shape: tuple[int, ...]
    seed: int
    a: dict[str, Any] = field(default_factory=dict)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def T(self, shape: Any = None, dtype: torch.dtype | None = None) -> torch.Tensor:
        """A random tensor (of the sample's dtype and shape unless given)."""
        shape = self.shape if shape is None else tuple(shape)
        dtype = dtype or self.dtype
        g = torch.Generator().manual_seed(self.seed)
        self.seed += 1
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=g).bool()
        if dtype.is_floating_point or dtype.is_complex:
            return torch.randn(shape, generator=g).to(dtype)
        return torch.randint(-5, 6, shape, generator=g).to(dtype)

    def dim_size(self, dim: int | None = None, of: str = "self") -> int:
        """The size of `of` along `dim` (a 0-d tensor counts as size 1)."""
        t = self.a.get(of)
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            return 1
        d = self.a.get("dim", 0) if dim is None else dim
        if not isinstance(d, int) or not -t.dim() <= d < t.dim():
            return 1
        return t.shape[d]

    def index(self, n: int, count: int = 3) -> torch.Tensor:
        """`count` valid indices into a dimension of size n (none when n is 0)."""
        if n == 0:
            return torch.zeros(0, dtype=torch.long)
        g = torch.Generator().manual_seed(self.seed)
        self.seed += 1
        return torch.randint(0, n, (count,), generator=g)

    def eval(self, expr: Any) -> Any:
        if not isinstance(expr, str):
            return expr
        scope = {"torch": torch, "shape": self.shape, "ndim": self.ndim, "dtype": self.dtype, "a": self.a,
                 "T": self.T, "index": self.index, "dim_size": self.dim_size, "numel": _numel(self.shape)}
        return eval(expr, scope)  # noqa: S307 - expressions from shimgen's own data file


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---- rules: valid candidates and error values per (type, name) ---------------------------------------------

Rule = Callable[[Ctx, dict], list]


def _is_dim_name(name: str) -> bool:
    return "dim" in name and name not in ("keepdim",)


def _tensor(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if name == "mask":
        return [ctx.T(dtype=torch.bool)]
    if name in ("index", "indices"):
        return [ctx.index(ctx.dim_size())]
    return [ctx.T()]


def _tensor_errors(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if arg["is_write"] and _numel(ctx.shape) > 1:  # in-place on a tensor whose elements share memory
        return [ctx.T(shape=(1,) * ctx.ndim).expand(ctx.shape)]
    if name == "self":
        return []
    if name == "mask":
        return [ctx.T(dtype=torch.float32)]  # a mask must be bool
    if name in ("index", "indices"):
        n = ctx.dim_size()
        return [torch.tensor([n + 5])]  # past the end
    if ctx.ndim >= 1:
        return [ctx.T(shape=(7,))]  # does not broadcast with (2, 3) / (0, 3)
    return []


def _dim(ctx: Ctx, arg: dict) -> list:
    return [-1, 0] if arg["name"].endswith("1") or arg["name"].startswith("end") else [0, -1]


def _int(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if _is_dim_name(name):
        return _dim(ctx, arg)
    if name in ("start", "index"):
        return [0]
    if name == "length":
        return [1]
    return [1, 2]


def _int_errors(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if _is_dim_name(name):
        return [ctx.ndim + 2]
    if name in ("index", "length"):
        return [99]
    return []


def _int_list(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if name in ("size", "shape"):
        return [list(ctx.shape), [-1]]
    if name == "pad":
        return [[1, 1], [0, 1, 2, 0]]
    if _is_dim_name(name):
        return [[0], [-1]]
    return [[1], [1, 2]]


def _int_list_errors(ctx: Ctx, arg: dict) -> list:
    name = arg["name"]
    if name in ("size", "shape"):
        return [[-2] + list(ctx.shape)]
    if _is_dim_name(name):
        return [[ctx.ndim + 2]]
    return []


def _tensor_list(ctx: Ctx, arg: dict) -> list:
    return [[ctx.T(), ctx.T()], [ctx.T()]]


def _tensor_list_errors(ctx: Ctx, arg: dict) -> list:
    if ctx.ndim >= 2:
        other = list(ctx.shape)
        other[-1] += 1
        return [[ctx.T(), ctx.T(shape=other)]]  # sizes differ outside the cat dim
    return [[]]


# Rules by name: the conversion table's `sample` column names the one each schema type uses (a new type is a
# table row; a rule here only where a list of expressions cannot say it).
RULES: dict[str, Rule] = {
    "tensor": _tensor,
    "tensor_errors": _tensor_errors,
    "tensor_list": _tensor_list,
    "tensor_list_errors": _tensor_list_errors,
    "int": _int,
    "int_errors": _int_errors,
    "int_list": _int_list,
    "int_list_errors": _int_list_errors,
}


def rule_key(schema_type: str) -> tuple[str, bool]:
    """`int[1]?` -> (`int[]`, optional=True)."""
    optional = schema_type.endswith("?")
    base = schema_type.rstrip("?")
    if "[" in base:
        base = base[: base.index("[")] + "[]"
    return base, optional


def _table_key(schema_type: str) -> str:
    """The conversion table row that says how to sample a type: `int[2]?` -> `int[N]`, `Tensor?` -> `Tensor`."""
    import re

    return re.sub(r"\[\d+\]", "[N]", schema_type.removesuffix("?"))


@functools.cache
def sample_spec(schema_type: str) -> dict:
    """The table's `sample` column for this type ({} when the type has no row or no column)."""
    from shimgen.generate import table

    row = table.load().arguments.get(_table_key(schema_type))
    return dict(row.sample or {}) if row is not None else {}


def _apply(spec: Any, suffix: str, ctx: Ctx, arg: dict) -> list:
    if spec is None:
        return []
    if isinstance(spec, str):
        return RULES[spec + suffix](ctx, arg)
    return [ctx.eval(e) for e in spec]


def type_values(ctx: Ctx, arg: dict) -> list:
    """Valid values for an argument from its type's table row (`values`)."""
    return _apply(sample_spec(arg["type"]).get("values"), "", ctx, arg)


def type_errors(ctx: Ctx, arg: dict) -> list:
    """Error values from its type's table row (`errors`: a rule whose `<name>_errors` makes them)."""
    return _apply(sample_spec(arg["type"]).get("errors"), "_errors", ctx, arg)


def grid(schema_type: str) -> bool:
    """Whether every value of this type is tried on every dtype and shape (the table's `grid`: Scalars)."""
    return bool(sample_spec(schema_type).get("grid"))


# ---- overrides -------------------------------------------------------------------------------------------


@functools.cache
def overrides() -> dict:
    return load_unique(package_text("data/verify_samples.yaml"), "data/verify_samples.yaml") or {}


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml's safe loader, refusing a key given twice in one mapping (plain yaml keeps the last silently)."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor` merges are not duplicates
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise DuplicateKey(f"duplicate key {key!r} (line {key_node.start_mark.line + 1}, first on line "
                               f"{seen[key] + 1}): the later entry would silently replace the earlier one")
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


class DuplicateKey(ValueError):
    pass


def load_unique(text: str, name: str) -> Any:
    """YAML text as data; a key given twice in one mapping is an error naming the file and both lines."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except DuplicateKey as e:
        raise DuplicateKey(f"{name}: {e}") from None


def override_for(op: dict) -> dict:
    data = overrides()
    merged: dict = {}
    keys = [op["name"], op["op"]]  # `name.overload` refines `name`
    if op.get("kind") == "inplace" and op["name"].endswith("_"):  # add_.Tensor takes add.Tensor's, then its own
        base = op["name"][:-1]
        keys = [base, f"{base}.{op['overload']}", *keys]
    for key in keys:
        entry = data.get(key) or {}
        for k, v in entry.items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            else:
                merged[k] = v
    return merged


# ---- samples ---------------------------------------------------------------------------------------------


def _fixed_size(schema_type: str) -> int | None:
    """N for `bool[3]`, `int[2]?` (a C++ std::array: a list of any other length cannot be passed)."""
    if "[" not in schema_type:
        return None
    inner = schema_type[schema_type.index("[") + 1: schema_type.index("]")]
    return int(inner) if inner.isdigit() and int(inner) > 1 else None


def _sized(values: list, n: int | None) -> list:
    if n is None:
        return values
    return [(v * n)[:n] if isinstance(v, list) and v else v for v in values]


def candidates(arg: dict, ctx: Ctx, ov: dict) -> tuple[list, list]:
    """(valid values, error values) for one argument, given the arguments built so far."""
    name = arg["name"]
    optional = arg["type"].endswith("?")
    if name in ov.get("args", {}):
        valid = [ctx.eval(e) for e in ov["args"][name]]
    else:
        valid = _sized(type_values(ctx, arg), _fixed_size(arg["type"]))
    if name in ov.get("errors", {}):
        errors = [ctx.eval(e) for e in ov["errors"][name]]
    else:
        errors = type_errors(ctx, arg)
    if optional and arg["default"] is None and name not in ov.get("not_none", ()):
        valid = [*valid, None] if valid else [None]  # `T? x` without default: None is a value the caller passes
    return valid, errors


class NoSample(Exception):
    """No value can be made for a required argument: the op needs an entry in verify_samples.yaml."""


def build(op: dict, dtype: torch.dtype, shape: tuple[int, ...], choice: dict[str, tuple[str, int]],
          ov: dict, seed: int) -> tuple[dict[str, Any], dict[str, int], bool]:
    """Values for one sample: `choice` maps argument names to ("valid", k) or ("error", k); others take their
    base (the default if the argument has one, else candidate 0). Returns (values, counts of valid candidates
    beyond the base per argument, whether a chosen index was out of range)."""
    ctx = Ctx(dtype, shape, seed)
    counts: dict[str, int] = {}
    missing = False
    for arg in op["args"]:
        name = arg["name"]
        if arg["is_out"]:
            continue
        valid, errors = candidates(arg, ctx, ov)
        has_default = arg["default"] is not None
        counts[name] = len(valid) if has_default else max(len(valid) - 1, 0)
        counts["!" + name] = len(errors)
        kind, k = choice.get(name, ("base", 0))
        if kind == "error":
            if k >= len(errors):
                missing = True
                value = OMIT
            else:
                value = errors[k]
        elif kind == "valid":
            pool = valid if has_default else valid[1:]
            if k >= len(pool):
                missing = True
                value = OMIT
            else:
                value = pool[k]
        elif has_default:
            value = OMIT
        elif valid:
            value = valid[0]
        else:
            raise NoSample(f"no value for argument {name} ({arg['type']}): add it to data/verify_samples.yaml")
        ctx.a[name] = value
    return ctx.a, counts, missing


def _fmt(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        shape = "(nested)" if v.is_nested else tuple(v.shape)
        return f"T{shape}:{str(v.dtype).removeprefix('torch.')}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt(x) for x in v) + "]"
    if isinstance(v, torch.Generator):
        return f"Generator(seed={v.initial_seed()})"
    return str(v).removeprefix("torch.")


def out_tensors(op: dict, values: dict[str, Any], functional: Callable | None, dtype: torch.dtype,
                full: bool) -> list[tuple[str, dict[str, Any]]]:
    """out= tensors for a sample: (label, tensors): empty ones the op resizes; when `full` (the base sample),
    also tensors of the result's shape (no resize), of another dtype, and expanded ones (overlapping memory).
    Shapes and dtypes come from the functional overload's result (called with the same arguments), else the
    sample's dtype (int64 for outputs named like indices). A list out (split_copy's `Tensor(a!)[] out`) gets
    one tensor per element of the functional's list."""
    out_args = [a for a in op["args"] if a["is_out"]]
    outs = [a["name"] for a in out_args]
    if not outs:
        return [("", {})]
    results: list | None = None
    if functional is not None:
        try:
            r = functional(**{k: v for k, v in values.items() if v is not OMIT})
            results = list(r) if isinstance(r, (tuple, list)) else [r]
        except Exception:
            results = None
    lists = [a["type"].endswith("[]") for a in out_args]
    like: list | None = None  # per out: (dtype, shape), or a list of them for a list out
    if results is not None and all(isinstance(r, torch.Tensor) for r in results):
        if lists == [True]:
            like = [[(r.dtype, tuple(r.shape)) for r in results]]
        elif len(results) == len(outs) and not any(lists):
            like = [(r.dtype, tuple(r.shape)) for r in results]
    if like is None:
        like = [[] if is_list else (torch.long if "ind" in n else dtype, (0,)) for n, is_list in zip(outs, lists)]

    def each(fn: Callable[[torch.dtype, tuple[int, ...]], torch.Tensor]) -> dict[str, Any]:
        return {n: [fn(d, s) for d, s in spec] if isinstance(spec, list) else fn(*spec) for n, spec in zip(outs, like)}

    shapes = [s for spec in like for _, s in (spec if isinstance(spec, list) else [spec])]
    variants = [("out=empty", each(lambda d, s: torch.empty(0, dtype=d)))]
    if full:
        variants.append(("out=sized", each(lambda d, s: torch.zeros(s, dtype=d))))
        other = each(lambda d, s: torch.empty(0, dtype=torch.float32 if d in (torch.long, torch.bool) else torch.long))
        variants.append(("out=other dtype", other))
        if shapes and all(_numel(s) > 1 for s in shapes):  # elements sharing memory: aten refuses to write them
            variants.append(("out=overlapping", each(guarded_overlapping)))
    return variants


GUARD_ATTR = "_shimgen_guard"


def guarded_overlapping(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """An out= tensor of `shape` whose elements all share one zero (an expanded single element), as a caller
    writes `torch.zeros(1).expand(shape)`, but taken from the middle of a buffer of guard values as long as the
    shape on each side: a kernel that ignores the strides and writes `numel` elements from the data pointer
    (adaptive_max_pool3d_backward.grad_input does) then writes into the guard, not into the allocator's heap,
    and the runner sees it (runner.guard_breach)."""
    n = _numel(shape)
    base = torch.full((2 * n + 1,), 7, dtype=dtype)
    base[n] = 0
    t = base[n:n + 1].view((1,) * len(shape)).expand(shape)
    setattr(t, GUARD_ATTR, n)
    return t


# An op whose only CPU kernels take another layout (SparseCPU, QuantizedCPU, ...) gets its first tensor
# argument in that layout: the dispatch key of its kernel names the input it needs.
LAYOUTS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "SparseCPU": lambda t: t.to_sparse(),
    "SparseCsrCPU": lambda t: t.to_sparse_csr() if t.dim() == 2 else t.to_sparse(),
    "QuantizedCPU": lambda t: torch.quantize_per_tensor(t.float(), 0.1, 10, torch.quint8),
    "MkldnnCPU": lambda t: t.float().to_mkldnn(),
    "NestedTensorCPU": lambda t: torch.nested.nested_tensor(list(t.float())) if t.dim() >= 2 else t,
}


# Whether a tensor already has a layout: a sample whose data file entry built an input in the op's layout (a nested
# example beside a dense padded tensor) is left as written.
IN_LAYOUT: dict[str, Callable[[torch.Tensor], bool]] = {
    "SparseCPU": lambda t: t.layout == torch.sparse_coo,
    "SparseCsrCPU": lambda t: t.layout in (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc),
    "QuantizedCPU": lambda t: t.is_quantized,
    "MkldnnCPU": lambda t: t.is_mkldnn,
    "NestedTensorCPU": lambda t: t.is_nested,
}


def _in_layout(op: dict, values: dict[str, Any], layout: str | None) -> dict[str, Any]:
    if layout is None:
        return values
    tensors = [v for a in op["args"] if not a["is_out"] for v in _flat(values.get(a["name"]))]
    if any(IN_LAYOUT[layout](t) for t in tensors):
        return values
    for a in op["args"]:
        v = values.get(a["name"])
        if rule_key(a["type"])[0] == "Tensor" and not a["is_out"] and isinstance(v, torch.Tensor):
            try:
                return {**values, a["name"]: LAYOUTS[layout](v)}
            except (RuntimeError, ValueError, TypeError):  # this dtype or shape has no such layout
                return values
    return values


def _flat(v: Any) -> list[torch.Tensor]:
    if isinstance(v, torch.Tensor):
        return [v]
    return [t for t in v if isinstance(t, torch.Tensor)] if isinstance(v, (list, tuple)) else []


def _make(op: dict, dtype: torch.dtype, shape: tuple[int, ...], choice: dict, ov: dict, seed: int,
          functional: Callable | None, full: bool, out_variant: int, layout: str | None = None) -> dict[str, Any]:
    """The sample's values, built afresh (same seed, same values) so that each call gets its own tensors."""
    values, _, _ = build(op, dtype, shape, choice, ov, seed)
    values = _in_layout(op, values, layout)
    _, outs = out_tensors(op, values, functional, dtype, full)[out_variant]
    return {**values, **outs}


LIMIT = 24  # samples per op beyond the base ones and the Scalar grid: the runner's time goes to breadth


def _plan(op: dict, groups: list[tuple[torch.dtype, tuple[int, ...], int, list[dict]]], limit: int) -> list:
    """Which (group, choice) pairs to run: every group's base sample; every valid value of a Scalar argument in
    every group (integer, bool and floating Scalars on each dtype and shape); then the other
    values and the error values, each once, the groups taking turns, up to `limit` of them."""
    scalars = {a["name"] for a in op["args"] if grid(a["type"])}
    picked = [(g, {}) for g in range(len(groups))]
    for g, (_, _, _, choices) in enumerate(groups):
        picked += [(g, c) for c in choices if next(iter(c)) in scalars and c[next(iter(c))][0] == "valid"]
    rest = [c for c in groups[0][3] if not (next(iter(c)) in scalars and c[next(iter(c))][0] == "valid")]
    for j, c in enumerate(rest[:limit]):
        for turn in range(len(groups)):  # the group whose turn it is, or the next one that has this choice
            g = (j + turn) % len(groups)
            if c in groups[g][3]:
                picked.append((g, c))
                break
    return picked


def generate(op: dict, functional: Callable | None = None, limit: int = LIMIT, layout: str | None = None,
             dtypes: tuple | None = None, shapes: tuple[tuple[int, ...], ...] | None = None) -> list[Sample]:
    """The samples of `op`; `dtypes` and `shapes` (default DTYPES, SHAPES) where the op's override names none."""
    ov = override_for(op)
    dtypes = [getattr(torch, d) for d in ov["dtypes"]] if "dtypes" in ov else (dtypes or DTYPES)
    shapes = [tuple(s) for s in ov["shapes"]] if "shapes" in ov else (shapes or SHAPES)
    groups = []
    seed = 0
    for dtype in dtypes:
        for shape in shapes:
            seed += 1000
            _, counts, _ = build(op, dtype, shape, {}, ov, seed)
            choices: list[dict] = []  # one argument changed in each (the base sample has none)
            for arg in op["args"]:
                name = arg["name"]
                if arg["is_out"]:
                    continue
                choices += [{name: ("valid", k)} for k in range(counts.get(name, 0))]
                choices += [{name: ("error", k)} for k in range(counts.get("!" + name, 0))]
            groups.append((dtype, shape, seed, choices))
    result: list[Sample] = []
    seen: set[str] = set()
    for g, choice in _plan(op, groups, ov.get("limit", limit)):
        dtype, shape, seed, _ = groups[g]
        values, _, missing = build(op, dtype, shape, choice, ov, seed)
        if missing:
            continue
        values = _in_layout(op, values, layout)
        full = not choice and dtype == dtypes[0]  # out= variants (sized, other dtype, overlapping) once per shape
        for i, (out_label, outs) in enumerate(out_tensors(op, values, functional, dtype, full)):
            shown = ", ".join(f"{n}={_fmt(v)}" for n, v in values.items() if v is not OMIT)
            shown += f" ({layout} input)" if layout else ""
            if out_label:
                shown += f", {out_label}:" + ",".join(_fmt(t) for t in outs.values())
            if shown in seen:  # e.g. ops without tensor inputs repeat across dtypes
                continue
            seen.add(shown)
            make = functools.partial(_make, op, dtype, shape, choice, ov, seed, functional, full, i, layout)
            # Writing to overlapping out= memory: aten may refuse, else the result depends on the order of
            # writes (triu.out races): compare everything but the values.
            result.append(Sample(f"{shape}: {shown}", make, out_label != "out=overlapping"))
    return result


# ---- recorded samples (OpInfo) ---------------------------------------------------------------------------


def _decoded(args: dict[str, Any]) -> dict[str, Any]:
    from shimgen.proofs.verify import serial

    return {k: serial.decode(v) for k, v in args.items()}


def as_written(op: dict, values: dict[str, Any]) -> dict[str, Any]:
    """A recorded call as a C++ caller writes it: aten's Python binding lets a number stand for a Tensor (it
    becomes a wrapped number) and an int for a list of ints; a wrapper takes a Tensor (here a 0-dim tensor) and a
    list. Both sides get the same values."""
    types = {a["name"]: a["type"] for a in op["args"]}
    out = dict(values)
    for name, v in values.items():
        base, _ = rule_key(types.get(name, ""))
        if base == "Tensor" and isinstance(v, (bool, int, float, complex)):
            out[name] = torch.tensor(v)
        elif base in ("int[]", "SymInt[]") and isinstance(v, int) and not isinstance(v, bool):
            out[name] = [v]
    return out


def _make_recorded(args: dict[str, Any], op: dict, functional: Callable | None, out_variant: int | None,
                   full: bool) -> dict[str, Any]:
    values = as_written(op, _decoded(args))
    if out_variant is None:
        return values
    inputs = {k: v for k, v in values.items() if k not in {a["name"] for a in op["args"] if a["is_out"]}}
    dtype = next((v.dtype for v in inputs.values() if isinstance(v, torch.Tensor)), torch.float32)
    _, outs = out_tensors(op, inputs, functional, dtype, full)[out_variant]
    return {**inputs, **outs}


def _tag(v: Any) -> str:
    if isinstance(v, tuple) and v and isinstance(v[0], str) and v[0].startswith("@"):
        return v[0]
    return type(v).__name__


def _is_tensor(v: Any) -> bool:
    return _tag(v) in ("@tensor", "@qtensor", "@qtensor_pc", "@sparse")


# What a recorded (encoded) value is, by kind; the table's `recorded` column lists the kinds a type accepts.
KINDS: dict[str, Callable[[Any], bool]] = {
    "tensor": _is_tensor,
    "number": lambda v: _tag(v) in ("bool", "int", "float", "complex"),
    "bool": lambda v: _tag(v) == "bool",
    "int": lambda v: _tag(v) == "int",
    "float": lambda v: _tag(v) == "float",
    "str": lambda v: _tag(v) == "str",
    "dtype": lambda v: _tag(v) == "@dtype",
    "tensors": lambda v: _tag(v) in ("@list", "@tuple") and all(x is None or _is_tensor(x) for x in v[1]),
    "ints": lambda v: _tag(v) in ("@list", "@tuple") and all(_tag(x) == "int" for x in v[1]),
}


def fits(schema_type: str, v: Any) -> bool:
    """Whether a recorded (encoded) value can be passed for an argument of this schema type: used to borrow a
    related overload's calls (aten still decides; this only skips calls that cannot bind). The type's table row
    says which kinds it accepts (`sample: recorded`); a type that does not say accepts any value."""
    if v is None:
        return schema_type.endswith("?")
    kinds = sample_spec(schema_type).get("recorded")
    if kinds is None:
        return True
    return any(KINDS[k](v) for k in kinds)


def _related(op: dict, recorded: dict[str, list[dict]]) -> tuple[list[dict], str | None]:
    """Recorded calls that may serve an overload OpInfo never reached: its functional overload's (out=, in-place),
    then its sibling overloads' (same name, or the in-place op's functional name) whose values fit its schema.
    Returns (calls, where they came from)."""
    required = {a["name"] for a in op["args"] if a["default"] is None and not a["is_out"]
                and not a["type"].endswith("?")}
    types = {a["name"]: a["type"] for a in op["args"] if not a["is_out"]}
    bases = {op["name"], op["name"].rstrip("_")}
    keys = [op["functional"]] if op.get("functional") else []
    keys += sorted(k for k in recorded if k.rpartition(".")[0] in bases and k not in keys and k != op["op"])
    found: list[dict] = []
    sources = []
    for key in keys:
        for c in recorded.get(key, []):
            args = c["args"]
            if required <= args.keys() and all(k in types and fits(types[k], v) for k, v in args.items()):
                found.append(c)
                if key not in sources:
                    sources.append(key)
            if len(found) >= 12:
                break
        if len(found) >= 12:
            break
    return found, ", ".join(sources) or None


def recorded_samples(op: dict, recorded: dict[str, list[dict]], functional: Callable | None) -> list[Sample]:
    """Samples from the recorded OpInfo calls of this overload, or else of related overloads (_related; out=
    tensors added as for shimgen's own samples)."""
    from shimgen.proofs.verify import serial

    calls, via = recorded.get(op["op"], []), None
    if not calls:
        calls, via = _related(op, recorded)
    outs = {a["name"] for a in op["args"] if a["is_out"]}
    result: list[Sample] = []
    for i, c in enumerate(calls):
        args = c["args"]
        shown = ", ".join(f"{k}={serial.describe(v)}" for k, v in args.items())
        source = c["source"] + (f" (via {via})" if via else "")
        if outs and not outs & args.keys():
            for j, (label, _) in enumerate(out_tensors(op, _decoded(args), functional, torch.float32, i == 0)):
                make = functools.partial(_make_recorded, args, op, functional, j, i == 0)
                result.append(Sample(f"{shown}, {label}", make, label != "out=overlapping", source))
        else:
            result.append(Sample(shown, functools.partial(_make_recorded, args, op, functional, None, False), True,
                                 source))
    return result
