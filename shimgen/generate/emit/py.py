"""Emit the typed Python mirror of the torch::stable wrappers: the package `torch_stable_ops` under DIR/python/.

DIR/python/torch_stable_ops/__init__.py   one function per C++ wrapper, calling torch.ops.aten.<op>.<overload>
DIR/python/torch_stable_ops/__init__.pyi  its type stub (the public signatures only)
DIR/python/torch_stable_ops/py.typed      PEP 561 marker

Users put DIR/python on sys.path (or MYPYPATH) and `import torch_stable_ops`. The Python function of a wrapper
has the C++ name (collision renames included, from sig_cpp.wrappers) and the schema's argument names, order,
keyword-only markers and defaults; out= variants keep the schema's keyword-only `out` (the C++ puts it first).
Types come from the conversion table's `py` column. Where several wrappers share a C++ name (C++ overloads),
the Python name is a `typing.overload` set and the rule in the module docstring picks the aten overload.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from torchgen.model import Argument

from shimgen.generate.emit import py_layout as layout
from shimgen.generate.emit.fmt import black_format, start_black
from shimgen.base.errors import ShimgenError
from shimgen.generate.cpp_model import Param, Resolved, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.table import render_default
from shimgen.generate.templates import render

PACKAGE = "torch_stable_ops"
MODULE = f"python/{PACKAGE}/__init__.py"
STUB = f"python/{PACKAGE}/__init__.pyi"
MARKER = f"python/{PACKAGE}/py.typed"
_FUTURE = "from __future__ import annotations\n"

# Module-level names the generated module defines or imports, and the builtins its helpers and annotations
# use: a wrapper named like one of them would shadow it (the emitter refuses rather than emit broken code).
_RESERVED = {
    "annotations", "inspect", "math", "re", "types", "typing", "torch", "Tensor", "Sequence", "Any", "Callable",
    "NoReturn", "overload", "VERSIONS", "__all__", "_RUNNING", "_SIGNATURES", "_parse_version", "_too_new", "_gone",
    "_accepts", "_pick",
    "isinstance", "type", "str", "bytes", "int", "float", "bool", "list", "tuple", "dict", "object",
    "RuntimeError", "TypeError", "ValueError", "None",
}  # fmt: skip


@dataclass(frozen=True)
class PyParam:
    name: str  # the Python parameter name (a Python keyword gets a trailing underscore)
    schema_name: str  # the schema's name (torch.ops.aten takes keyword-only arguments by it)
    annotation: str
    default: str | None
    kw_only: bool


@dataclass(frozen=True)
class PyFunction:
    name: str  # the public (C++) name
    impl: str  # the name of the def carrying the body: `name`, or `_name__overload` inside an overload set
    op: str  # `add.Tensor`
    schema: str  # `aten::add.Tensor(...) -> Tensor`
    since: str  # the C++ wrapper's version tag
    since_tuple: str  # `(2, 13)`
    gone: tuple[str, str] | None  # (release, what happened) when a later release removed or broke the op
    params: tuple[PyParam, ...]
    returns: str
    target: str  # `torch.ops.aten.add.Tensor`
    args: tuple[str, ...]  # `self`, `other`, `alpha=alpha`
    result: str | None  # the return statement's value; None: the call's result is returned (typed local)
    local: str = "result"  # the name of that typed local

    @property
    def call(self) -> str:
        return f"{self.target}({', '.join(self.args)})"

    @property
    def signature(self) -> str:
        parts: list[str] = []
        star = False
        for p in self.params:
            if p.kw_only and not star:
                parts.append("*")
                star = True
            default = f" = {p.default}" if p.default is not None else ""
            parts.append(f"{p.name}: {p.annotation}{default}")
        return f"({', '.join(parts)}) -> {self.returns}"

    @property
    def doc(self) -> str:
        return f"{_doc_text(self.schema)}\n\n{self.versions_text}"

    @property
    def versions_text(self) -> str:
        text = f"Minimum compatible version: PyTorch {self.since}."
        if self.gone:
            text += f" {self.gone[1].capitalize()} in PyTorch {self.gone[0]}."
        return text

    @property
    def gone_tuple(self) -> str:
        assert self.gone is not None
        major, minor = self.gone[0].split(".")
        return f"({major}, {minor})"


@dataclass(frozen=True)
class PyGroup:
    """The Python functions of one public name: one function, or an overload set."""

    name: str
    functions: tuple[PyFunction, ...]

    @property
    def overloaded(self) -> bool:
        return len(self.functions) > 1

    @property
    def doc(self) -> str:
        lines = ["Overloads, tried in this order (the first that accepts the arguments is called):", ""]
        for f in self.functions:
            lines += [_doc_text(f.schema), f"    {f.versions_text}"]
        return "\n".join(lines)


def _doc_text(text: str) -> str:
    """Text safe inside a triple-quoted docstring (schema string defaults may hold backslashes and quotes)."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


# Module-level names a generated function's body uses besides its parameters (and its result local, which
# moves aside instead): a parameter so named would shadow them.
_BODY_NAMES = {"torch", "_RUNNING", "_too_new"}


def _py_name(name: str) -> str:
    """A parameter name usable in Python: a keyword (`from`) or a name the body uses gets a trailing underscore."""
    return name + "_" if keyword.iskeyword(name) or name in _BODY_NAMES else name


def _py_names(s) -> dict[str, str]:
    """Every argument's Python name (the schema's, made usable by _py_name, then unique: `from` beside `from_`)."""
    result: dict[str, str] = {}
    for a in s.arguments.flat_all:
        name = _py_name(a.name)
        while name in result.values() or keyword.iskeyword(name):
            name += "_"
        result[a.name] = name
    return result


def _attribute(obj: str, name: str) -> str:
    """`obj.name`, or getattr() where the name is a Python keyword (the overload `random_.from`)."""
    return f"getattr({obj}, {layout.string(name)})" if keyword.iskeyword(name) else f"{obj}.{name}"


def _py_default(p: Param, plan: Plan) -> str | None:
    if p.is_out:
        return None
    if p.arg.default is not None:
        return render_default(p.arg.default, p.row, plan.table, target="py")
    return "None" if p.synthesized else None


def _ret_annotation(types: list[str]) -> str:
    if not types:
        return "None"
    return types[0] if len(types) == 1 else f"tuple[{', '.join(types)}]"


def _returns(w: Wrapper, plan: Plan) -> tuple[str, str | None]:
    """(the return annotation, the returned expression when it is an argument rather than the op's result).

    As the C++ wrapper: an in-place op returns `self`, an out= op the caller's out tensors (when the schema
    returns exactly those); anything else returns what torch.ops.aten returns, typed from the table.
    """
    s = w.op.schema
    names = _py_names(s)
    outs = [a.name for a in s.arguments.out]
    tensor_returns = all(str(r.type) == "Tensor" for r in s.returns)
    if s.is_out_fn() and tensor_returns and len(s.returns) == len(outs):
        return _ret_annotation(["Tensor"] * len(outs)), ", ".join(names[o] for o in outs)
    if s.name.name.inplace and tensor_returns and len(s.returns) == 1 and s.arguments.self_arg is not None:
        return "Tensor", names[s.arguments.self_arg.argument.name]
    types = []
    for i, r in enumerate(s.returns):
        row = plan.table.ret(r.type, w.op.name, f"return {i}")
        if not row.py:
            raise ShimgenError(f"type {r.type} has no Python type in the conversion table", w.op.name, f"return {i}")
        types.append(row.py)
    return _ret_annotation(types), None


def _param(a: Argument, p: Param, plan: Plan, kw_only: bool, op: str, py_name: str, aten_name: str) -> PyParam:
    if not p.row.py:
        raise ShimgenError(f"type {a.type} has no Python type in the conversion table", op, a.name)
    return PyParam(py_name, aten_name, p.row.py, _py_default(p, plan), kw_only)


def function(w: Wrapper, plan: Plan, impl: str, end: tuple | None = None) -> PyFunction:
    s = w.op.schema
    by_name = {p.name: p for p in w.params}
    # Python names from the C++-safe names (so `class` is `class_` in both); aten takes keywords as written.
    names = _py_names(s)
    aten = {a.name: b.name for a, b in zip(s.arguments.flat_all, w.op.aten_schema.arguments.flat_all)}

    def param(a: Argument, kw_only: bool) -> PyParam:
        return _param(a, by_name[a.name], plan, kw_only, w.op.name, names[a.name], aten[a.name])

    positional = [param(a, False) for a in s.arguments.flat_positional]
    kw_only = [param(a, True) for a in [*s.arguments.flat_kwarg_only, *s.arguments.out]]
    args = [p.name for p in positional]
    for p in kw_only:  # torch.ops.aten takes keyword-only arguments by their schema names
        args.append(f"{p.schema_name}={p.name}" if p.name == p.schema_name else f"**{{{layout.string(p.schema_name)}: {p.name}}}")
    target = _attribute(_attribute("torch.ops.aten", str(s.name.name)), w.op.overload or "default")
    returns, result = _returns(w, plan)
    local = "result"  # the typed local that holds the op's result (a parameter may be named `result`)
    while any(p.name == local for p in (*positional, *kw_only)):
        local += "_"
    return PyFunction(
        name=w.name,
        impl=impl,
        op=w.op.name,
        schema=f"aten::{w.op.aten_schema_text}",
        since=str(w.since),
        since_tuple=f"({w.since.major}, {w.since.minor})",
        gone=(str(end[0]), end[1]) if end else None,
        params=(*positional, *kw_only),
        returns=returns,
        target=target,
        args=tuple(args),
        result=result,
        local=local,
    )


def groups(r: Resolved) -> list[PyGroup]:
    """The plan's wrappers as Python functions, grouped by name in the order of their first wrapper."""
    plan, ws = r.plan, r.wrappers
    by_name: dict[str, list[Wrapper]] = {}
    for w in ws:
        by_name.setdefault(w.name, []).append(w)
    result = []
    for name, members in by_name.items():
        if name in _RESERVED:
            raise ShimgenError(f"the Python function {name} would shadow a name the generated module uses",
                               members[0].op.name)
        if len(members) == 1:
            fns: tuple[PyFunction, ...] = (function(members[0], plan, name, r.gone.get(members[0].op.name)),)
        else:
            fns = tuple(function(w, plan, f"_{name}__{w.op.overload or 'default'}", r.gone.get(w.op.name))
                        for w in members)
        result.append(PyGroup(name, fns))
    impls = [f.impl for g in result for f in g.functions if f.impl != g.name]
    clash = set(impls) & ({g.name for g in result} | _RESERVED)
    if clash:
        raise ShimgenError(f"generated Python names clash: {', '.join(sorted(clash))}")
    return result


def _imports(gs: list[PyGroup], runtime: bool) -> list[str]:
    text = " ".join(p.annotation + " " + (p.default or "") for g in gs for f in g.functions for p in f.params)
    text += " " + " ".join(f.returns for g in gs for f in g.functions)
    overloaded = any(g.overloaded for g in gs)
    dispatch = runtime and overloaded  # the module's run-time overload resolution (_pick)
    modules = (["inspect", "types", "typing"] if dispatch else []) + (["re"] if runtime else [])
    if "math." in text:
        modules.append("math")
    lines = [f"import {m}" for m in sorted(modules)]
    abc = (["Callable"] if dispatch else []) + (["Sequence"] if "Sequence[" in text or dispatch else [])
    if abc:
        lines.append(f"from collections.abc import {', '.join(abc)}")
    typing_names = []
    if dispatch:
        typing_names.append("Any")
    if runtime:
        typing_names.append("NoReturn")
    if overloaded:
        typing_names.append("overload")
    if typing_names:
        lines.append(f"from typing import {', '.join(typing_names)}")
    lines.append("")
    if runtime or "torch." in text:
        lines.append("import torch")
    lines.append("from torch import Tensor")
    return lines


class _Lay:
    """How the templates write bracketed lines: in black's layout (shimgen.generate.emit.py_layout), formatting with black only a
    line whose shape the layout rules do not cover (`formatter=False`), or on one line each, for black to format
    the whole file afterwards (`formatter=True`: the reference the fast path is tested against)."""

    def __init__(self, formatter: bool, pyi: bool) -> None:
        self.formatter, self.pyi = formatter, pyi

    def bracketed(self, head: str, items: list[str], tail: str, indent: int, is_def: bool = False) -> str:
        if not self.formatter:
            try:
                return layout.bracketed(head, items, tail, indent, is_def, comma_after_star=not self.pyi)
            except layout.Unsure:
                pass
        return self._line(f"{' ' * indent}{head}{', '.join(items)}{tail}", is_def)

    def assignment(self, target: str, head: str, items: list[str], tail: str, indent: int) -> str:
        if not self.formatter:
            try:
                return layout.assignment(target, head, items, tail, indent)
            except layout.Unsure:
                pass
        return self._line(f"{' ' * indent}{target}{head}{', '.join(items)}{tail}", False)

    def tuple(self, items: list[str]) -> layout.Nested:
        return layout.Nested("(", items, ")")

    def chained_call(self, head: str, items: list[str], trailer: str, indent: int) -> str:
        if not self.formatter:
            try:
                return layout.chained_call(head, items, trailer, indent)
            except layout.Unsure:
                pass
        return self._line(f"{' ' * indent}{head}{', '.join(map(str, items))}){trailer}", False)

    def _line(self, line: str, is_def: bool) -> str:
        return line if self.formatter else black_line(line, is_def, self.pyi)

    def string(self, text: str) -> str:
        return layout.string(text) if not self.formatter else repr(text)

    def params(self, f: PyFunction) -> list[str]:
        parts: list[str] = []
        for p in f.params:
            if p.kw_only and "*" not in parts:
                parts.append("*")
            default = p.default
            if default is not None and not self.formatter:
                try:
                    default = layout.normalize_literal(default)
                except layout.Unsure:
                    default = fmt_black_expression(default)
            parts.append(f"{p.name}: {p.annotation}" + (f" = {default}" if default is not None else ""))
        return parts

    def args(self, f: PyFunction) -> list[str]:
        return list(f.args)


def black_line(line: str, is_def: bool, pyi: bool) -> str:
    """One line black-formatted on its own (the fallback for a shape shimgen.generate.emit.py_layout does not cover). A def gets
    a body, a statement enclosing blocks to its depth, so that black sees it as it is in the file; the
    `from __future__` line gives black the same target versions (trailing commas) as the whole module."""

    depth = (len(line) - len(line.lstrip(" "))) // 4
    opener = "".join(f"{'    ' * k}if _:\n" for k in range(depth))
    body = f"\n{'    ' * (depth + 1)}pass" if is_def and not line.endswith("...") else ""
    future = "" if pyi else _FUTURE  # the stub has no `from __future__` line: black infers other targets there
    text = black_format(f"{future}\n{opener}{line}{body}\n", pyi)
    lines = text[len(future) :].strip("\n").split("\n")
    lines = lines[depth:]
    if body:
        lines = lines[:-1]
    return "\n".join(lines)


def fmt_black_expression(value: str) -> str:

    return black_format(f"_ = {value}\n").removeprefix("_ = ").removesuffix("\n")


def emit(r: Resolved, formatter: bool = False) -> dict[str, str]:
    """The Python package of what the signature stage decided (signatures.stage.resolve). The functions and the stub
    are written in black's layout (shimgen.generate.emit.py_layout); with `formatter`, on one line each and
    formatted by black instead (the reference for tests/test_layout.py)."""
    plan = r.plan
    gs = groups(r)
    versions = sorted((f.op, f.since) for g in gs for f in g.functions)
    context = dict(
        banner=plan.banner,
        package=PACKAGE,
        groups=gs,
        versions=versions,
        names=sorted(g.name for g in gs),
        overloaded=any(g.overloaded for g in gs),
        has_gone=any(f.gone for g in gs for f in g.functions),
    )
    stub_lay, lay = _Lay(formatter, pyi=True), _Lay(formatter, pyi=False)
    stub_imports = _imports(gs, False)
    while stub_imports and not stub_imports[0]:  # black keeps one blank line there in a stub
        stub_imports.pop(0)
    stub = render("py_module.pyi.j2", imports=stub_imports, lay=stub_lay, **context)
    functions = "".join(render("py_group.py.j2", g=g, lay=lay) for g in gs).lstrip("\n")
    if formatter:

        # The functions keep the module's `from __future__` line while black formats them: black infers the
        # target Python versions from it (PY37+, as for the whole module), and they decide its trailing commas.
        started = start_black(stub, pyi=True)
        functions = black_format(_FUTURE + functions)
        assert functions.startswith(_FUTURE)
        functions = functions[len(_FUTURE) :].lstrip("\n")
        stub = started.result()
    module = render("py_module.py.j2", imports=_imports(gs, True), functions=functions, **context)
    return {
        MODULE: module,
        STUB: stub,
        MARKER: "# PEP 561 marker: torch_stable_ops ships inline types and a stub (__init__.pyi).\n",
    }
