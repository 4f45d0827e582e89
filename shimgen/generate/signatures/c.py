"""C shim signatures: how one operator overload looks as an `aoti_torch_aten_*` function.

The rules are torchgen's (`gen_aoti_c_shim.py`), driven by the conversion table's `c`, `aten` and returns
columns: arguments in schema order (out= arguments first for out variants), one `ret<i>` pointer per return
(none for in-place and out= variants), and the function named after the overload's unambiguous name.
"""

from __future__ import annotations

import functools
import re

from torchgen.model import FunctionSchema

from shimgen.facts import history
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.base.inputs import package_yaml
from shimgen.generate import cpp_model
from shimgen.generate.cpp_model import CShim, ShimVersion
from shimgen.generate.parse import Op, aten_function
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import FIRST_STABLE, Version


@functools.cache
def nullable_returns() -> tuple[str, ...]:
    """Ops whose C shim may be called with null return pointers (data/c_shim.yaml: torchgen's list)."""
    raw = package_yaml("data/c_shim.yaml")
    return tuple(raw["nullable_returns"])


def shim_name(op: Op, version: int = 1) -> str:
    base = f"aoti_torch_aten_{op.schema.name.unambiguous_name()}"
    return base if version == 1 else f"{base}_v{version}"


def c_arguments(op: Op, table: Table | None = None) -> list:
    """Schema arguments in C shim order: out= arguments first for out variants (their returns are dropped)."""
    return c_order(op.schema)


def c_order(schema: FunctionSchema) -> list:
    args = schema.arguments
    return [*args.out, *args.flat_non_out] if schema.is_out_fn() else list(args.flat_all)


def has_c_returns(op: Op) -> bool:
    return not op.schema.is_out_fn() and not op.schema.name.name.inplace


def build(op: Op, table: Table, nargs: int | None = None, version: int = 1) -> CShim:
    """The C shim for `op`, or Refusal when a type has no C representation. An older version (torchgen's `_vN`
    scheme) takes only the first `nargs` arguments in C order and passes the others' schema defaults to ATen."""
    params: list[str] = []
    aten_args: list[str] = []
    args = c_arguments(op, table)
    nargs = len(args) if nargs is None else nargs
    for k, a in enumerate(args):
        if k >= nargs:  # not in this version: ATen gets the schema default (torchgen's gen_arguments)
            from torchgen.api.cpp import default_expr  # start-up: only an older version needs torchgen's C++ API
            aten_args.append(default_expr(a.default, a.type, symint=False) if a.default is not None else "std::nullopt")
            continue
        row = table.argument(a.type, op.name, a.name)
        if not row.c:
            raise Refusal(f"type {a.type} has no C shim representation: {row.c_refuse}", op.name, a.name)
        params += [row.fill(p, a.name) for p in row.c]
        expr = row.aten_out if (a.is_write and row.aten_out) else row.aten
        if row.aten_default and a.default is not None and re.fullmatch(r"-?\d+", a.default):
            expr = row.aten_default
        aten_args.append(row.fill(expr, a.name, default=a.default or ""))

    assignments: list[str] = []
    if has_c_returns(op):
        nullable = any(n in op.schema.name.unambiguous_name() for n in nullable_returns())
        single = len(op.schema.returns) == 1
        for i, r in enumerate(op.schema.returns):
            row = table.ret(r.type, op.name, f"return {i}")
            if not row.c:
                raise Refusal(f"{row.c_refuse}", op.name, f"return {i}")
            params.append(f"{row.c} ret{i}")
            value = "tmp_result" if single else f"std::get<{i}>(tmp_result)"
            assign = f"*ret{i} = {row.fill(row.aten, value=value)};"
            assignments.append(f"if (ret{i}) {{ {assign} }}" if nullable else assign)

    return CShim(op, shim_name(op, version), tuple(params), tuple(aten_args), backend_call(op), tuple(assignments),
                 nargs, version)


def backend_call(op: Op) -> str:
    """The ATen function the shim definition calls (torchgen's choice; `at::_ops::` where no at:: function exists),
    as the op's parse computed it (shimgen.generate.parse.aten_function)."""
    return op.backend or aten_function(op.f)


# ---- versions (torchgen's `_vN` C shims) --------------------------------------------------------------------


def versions(op: Op, plan) -> list[ShimVersion]:
    """The op's C shims, oldest first: the original name keeps the arguments of the release the shim first shipped
    in; each later release whose schema gained trailing defaulted arguments (in C order) adds `_v<N>` with all of
    them, gated on that release (torchgen's fallback_ops `vN` entries, computed from the release history). A
    libtorch shim's versions ship when the manifest says; the others are shimgen's. Refusal when the op has no C
    shim representation; ShimgenError when its schema changed incompatibly since the shim first shipped (an ABI
    break PyTorch's linters forbid)."""
    return plan.per_op(("c_shims", op.name), lambda: _versions(op, plan))


def _versions(op: Op, plan) -> list[ShimVersion]:
    full = build(op, plan.table)
    entry = plan.manifest.entries.get(op.name)
    timeline = plan.timeline(op)
    exists = [r for r, at in timeline.items() if at.schema is not None]
    start = max(plan.shim_since(op), exists[0] if exists else FIRST_STABLE)
    chain: list[tuple[Version, FunctionSchema]] = []
    for r, at in timeline.items():
        if r < start or (plan.release is not None and r > plan.release) or at.schema is None:
            continue
        chain.append((r, at.schema))
    if not chain:  # no release at or after `start` has it (unknown release): one version, as the yaml says
        chain = [(start, op.schema)]
    shipped = entry.versions if entry and entry.upstream else {}
    upstream = bool(entry and entry.upstream)
    n_first = len(c_order(chain[0][1]))
    first = full if n_first == full.nargs else build(op, plan.table, n_first)
    result = [ShimVersion(first, chain[0][0], upstream)]
    prev = chain[0][1]
    for r, schema in chain[1:]:
        change = history.compare(prev, schema, c_order=True)
        if change.kind in (history.Kind.BREAK, history.Kind.TRAILING_REMOVED):
            raise ShimgenError(
                f"the C shim {shim_name(op)} (since {start}) cannot keep its declaration: the schema changed "
                f"incompatibly in {r} ({change.kind.value}: {change.detail}); an ABI break. Generate it "
                f"with --since {r} or later", op.name)
        if change.kind is history.Kind.TRAILING_ADDED:
            n = len(result) + 1
            at = shipped.get(n)
            shim = build(op, plan.table, len(c_order(schema)), n)
            result.append(ShimVersion(shim, at if at is not None else r, at is not None))
        prev = schema
    return result


# ---- a wrapper's call through a C shim (the C shim routes: libtorch's, shimgen's overlay, the device shims) ----


def carries(row: Row) -> Version | None:
    """The first release from which a C shim carries a value of `row`'s type; None: never (no C representation)."""
    return row.since if row.c else None


def returns_need(op: Op, table: Table) -> Version | None:
    """The first release from which the op's C shim hands back its returns; None: never."""
    rows = [table.ret(r.type, op.name, f"return {i}") for i, r in enumerate(op.schema.returns)]
    needs = [r.since if r.c else None for r in rows] if has_c_returns(op) else []
    if any(n is None for n in needs):
        return None
    return max(needs, default=FIRST_STABLE)  # type: ignore[type-var]


def shim_call(w: cpp_model.Wrapper, v: cpp_model.Variant, plan) -> str:
    """The C shim call of a wrapper form: arguments converted as the table says, returns read back."""
    kept = {p.name: p for p in w.kept(v)}
    lines: list[str] = []
    args: list[str] = []
    for a in c_arguments(w.op)[: v.shim_nargs]:
        row = plan.table.argument(a.type, w.op.name, a.name)
        p = kept.get(a.name)
        if p is None:  # dropped: None is a null pointer; its length / device index is 0
            args += ["nullptr"] + ["0"] * (len(row.c) - 1)
            continue
        if row.prelude:
            lines.append(row.fill(row.prelude, a.name))
        args += [row.fill(e, a.name) for e in row.to_c]
    locals_, addrs, ret = returns_from_c(w, plan)
    lines += locals_
    call = f"{v.shim}({', '.join(args + addrs)})"
    lines.append(f"SHIMGEN_CHECK({call});")
    if ret:
        lines.append(ret)
    return "\n".join(lines)


def returns_from_c(w: cpp_model.Wrapper, plan) -> tuple[list[str], list[str], str]:
    """(locals declared before the shim call, their &addresses, the return statement)."""
    op = w.op
    if op.schema.is_out_fn():
        return [], [], w.return_outs()
    if op.schema.name.name.inplace:
        return [], [], "return self;" if op.schema.returns else ""
    locals_, addrs, values = [], [], []
    for i, r in enumerate(op.schema.returns):
        row = plan.table.ret(r.type, op.name, f"return {i}")
        locals_.append(row.fill(row.c_local, f"ret{i}"))
        addrs.append(f"&ret{i}")
        values.append(row.fill(row.from_c, f"ret{i}"))
    if not values:
        return locals_, addrs, ""
    if len(values) == 1:
        return locals_, addrs, f"return {values[0]};"
    return locals_, addrs, f"return std::make_tuple({', '.join(values)});"
