"""The round-trip extension: every generated torch::stable wrapper registered as
`torch.ops.shimgen_roundtrip.<op>.<overload>`, plus the op descriptions the samples runner needs.

Each wrapper gets a kernel whose parameters follow the aten schema's order (the boxed stack's). The kernel
receives each argument as the conversion table's `box` type (default: the wrapper's own parameter type) and
calls the wrapper through a function pointer of the wrapper's exact signature, so the call can only reach that
overload. The op is defined with the aten schema, each type replaced by the table's `box_schema` (Scalar ->
float, SymInt -> int, ...). Only the variant the installed torch compiles (the last one) is exercised.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.model import Argument, Return, SchemaKind

from shimgen.errors import Refusal
from shimgen.fmt import clang_format
from shimgen.parse import NativeYaml, Op
from shimgen.plan import Plan
from shimgen.sig_cpp import Wrapper, wrappers
from shimgen.table import Row
from shimgen.templates import render
from shimgen.versions import Version

NAMESPACE = "shimgen_roundtrip"
SOURCE = "shimgen_roundtrip.cpp"


@dataclass(frozen=True)
class Kernel:
    wrapper: Wrapper
    fn: str  # the kernel's C++ name
    schema: str  # the round-trip op's schema, as passed to m.def
    params: tuple[str, ...]  # "std::vector<int64_t> dim", in schema order
    returns: str  # the kernel's C++ return type
    pointer: str  # the wrapper's function pointer type
    args: tuple[str, ...]  # what the kernel passes to the wrapper, in C++ order
    unused: tuple[str, ...]  # parameters the installed variant drops (always None in the samples)

    @property
    def op(self) -> Op:
        return self.wrapper.op

    @property
    def schema_literal(self) -> str:
        """The schema as a C++ string literal."""
        return '"' + self.schema.replace("\\", "\\\\").replace('"', '\\"') + '"'

    @property
    def qualified(self) -> str:
        """The name m.impl takes: `add.Tensor`, or `amax` for the unnamed overload."""
        return str(self.op.schema.name)


def _arg_row(plan: Plan, op: Op, a: Argument) -> Row:
    return plan.table.argument(a.type, op.name, a.name)


def schema_argument(row: Row, a: Argument) -> str:
    """One argument of the round-trip schema: the aten argument, its type replaced by the table's box_schema."""
    if row.box_schema is None:
        return str(a)
    default = f"={a.default}" if a.default is not None else ""
    return f"{row.fill(row.box_schema)} {a.name}{default}"


def schema_return(row: Row, r: Return) -> str:
    if row.box_schema is None:
        return str(r)
    return row.fill(row.box_schema) + (f" {r.name}" if r.name else "")


def roundtrip_schema(op: Op, plan: Plan) -> str:
    s = op.schema
    args = [schema_argument(_arg_row(plan, op, a), a) for a in s.arguments.flat_positional]
    if s.arguments.flat_kwarg_only or s.arguments.out:
        args.append("*")
    args += [schema_argument(_arg_row(plan, op, a), a) for a in (*s.arguments.flat_kwarg_only, *s.arguments.out)]
    rets = [schema_return(plan.table.ret(r.type, op.name, f"return {i}"), r) for i, r in enumerate(s.returns)]
    if len(rets) == 1 and not s.returns[0].name:
        ret_text = rets[0]
    else:
        ret_text = "(" + ", ".join(rets) + ")"
    return f"{s.name}({', '.join(args)}) -> {ret_text}"


def kernel_returns(op: Op, plan: Plan) -> str:
    rows = [plan.table.ret(r.type, op.name, f"return {i}") for i, r in enumerate(op.schema.returns)]
    types: list[str] = []
    for row in rows:
        t = row.box or row.cpp
        if t is None:
            raise Refusal("a return has no C++ type for the round-trip kernel", op.name)
        types.append(t)
    if not types:
        return "void"
    return types[0] if len(types) == 1 else "std::tuple<" + ", ".join(types) + ">"


def kernel(w: Wrapper, plan: Plan) -> Kernel:
    op = w.op
    v = w.variants[-1]  # the variant the installed torch compiles
    by_name = {p.name: p for p in w.params}
    kept = w.kept(v)
    kept_names = {p.name for p in kept}
    params = []
    for a in op.schema.arguments.flat_all:
        p = by_name[a.name]
        box = p.row.fill(p.row.box, a.name) if p.row.box else p.cpp_type
        params.append(f"{box} {a.name}")
    pointer = f"{w.returns} (*)({', '.join(p.cpp_type for p in kept)})"
    args = tuple(f"shimgen_rt::pass<{p.cpp_type}>({p.name})" for p in kept)
    unused = tuple(p.name for p in w.params if p.name not in kept_names)
    return Kernel(
        wrapper=w,
        fn=f"k_{op.schema.name.unambiguous_name()}",
        schema=roundtrip_schema(op, plan),
        params=tuple(params),
        returns=kernel_returns(op, plan),
        pointer=pointer,
        args=args,
        unused=unused,
    )


def kernels(plan: Plan, installed: Version) -> tuple[list[Kernel], list[tuple[str, str]]]:
    """Kernels for every wrapper the installed torch compiles; (op, reason) for the wrappers left out."""
    ws, notes = wrappers(plan)
    skipped = [("?", n) for n in notes]
    result = []
    for w in ws:
        v = w.variants[-1]
        if v.start > installed:
            skipped.append((w.op.name, f"its wrapper needs PyTorch {v.start}; torch {installed} is installed"))
            continue
        try:
            result.append(kernel(w, plan))
        except Refusal as e:
            skipped.append((w.op.name, e.line()))
    return result, skipped


def source(plan: Plan, ks: list[Kernel]) -> str:
    return clang_format(render("roundtrip.cpp.j2", banner=plan.banner, namespace=NAMESPACE, kernels=ks))


# ---- what the samples runner needs to know about each op ---------------------------------------------------


def _functional(op: Op, native: NativeYaml) -> str | None:
    """For an out= or in-place overload, the functional overload with the same signature (where one exists)."""
    if op.schema.kind() == SchemaKind.functional:
        return None
    sig = op.schema.signature()
    base = str(op.schema.name.name.base)
    try:
        candidates = native.select([base])
    except Exception:  # no overload of that name parses: no functional to compare with
        return None
    for c in candidates:
        if c.schema.kind() == SchemaKind.functional and c.schema.signature() == sig:
            return c.name
    return None


def _ret_box_schema(plan: Plan, op: Op, i: int) -> str:
    r = op.schema.returns[i]
    row = plan.table.ret(r.type, op.name, f"return {i}")
    return row.fill(row.box_schema) if row.box_schema else str(r.type)


def op_spec(k: Kernel, plan: Plan, native: NativeYaml) -> dict:
    op = k.op
    s = op.schema
    kwarg_only = {a.name for a in (*s.arguments.flat_kwarg_only, *s.arguments.out)}
    out_names = {a.name for a in s.arguments.out}
    args = []
    for a in s.arguments.flat_all:
        row = _arg_row(plan, op, a)
        args.append(
            {
                "name": a.name,
                "type": str(a.type),
                "box_schema": row.fill(row.box_schema) if row.box_schema else str(a.type),
                "default": a.default,
                "kwarg_only": a.name in kwarg_only,
                "is_write": a.is_write,
                "is_out": a.name in out_names,
            }
        )
    return {
        "op": op.name,
        "name": str(s.name.name),
        "overload": s.name.overload_name or "default",
        "kind": s.kind().name,
        "functional": _functional(op, native),
        "route": k.wrapper.variants[-1].route,
        "since": str(k.wrapper.since),
        "wrapper": k.wrapper.name,
        "tags": sorted(op.f.tags),
        "args": args,
        "returns": [
            {"type": str(r.type), "name": r.name, "is_write": r.is_write, "box_schema": _ret_box_schema(plan, op, i)}
            for i, r in enumerate(s.returns)
        ],
    }
