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

from shimgen.errors import ShimgenError
from shimgen.fmt import black_format
from shimgen.plan import Plan
from shimgen.sig_cpp import Param, Wrapper, gone, render_default, wrappers
from shimgen.templates import render

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
    call: str  # `torch.ops.aten.add.Tensor(self, other, alpha=alpha)`
    result: str | None  # the return statement's value; None: the call's result is returned (typed local)
    local: str = "result"  # the name of that typed local

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


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def _attribute(obj: str, name: str) -> str:
    """`obj.name`, or getattr() where the name is a Python keyword (the overload `random_.from`)."""
    return f"getattr({obj}, {name!r})" if keyword.iskeyword(name) else f"{obj}.{name}"


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
    outs = [a.name for a in s.arguments.out]
    tensor_returns = all(str(r.type) == "Tensor" for r in s.returns)
    if s.is_out_fn() and tensor_returns and len(s.returns) == len(outs):
        return _ret_annotation(["Tensor"] * len(outs)), ", ".join(_py_name(o) for o in outs)
    if s.name.name.inplace and tensor_returns and len(s.returns) == 1 and s.arguments.self_arg is not None:
        return "Tensor", _py_name(s.arguments.self_arg.argument.name)
    types = []
    for i, r in enumerate(s.returns):
        row = plan.table.ret(r.type, w.op.name, f"return {i}")
        if not row.py:
            raise ShimgenError(f"type {r.type} has no Python type in the conversion table", w.op.name, f"return {i}")
        types.append(row.py)
    return _ret_annotation(types), None


def _param(a: Argument, p: Param, plan: Plan, kw_only: bool, op: str) -> PyParam:
    if not p.row.py:
        raise ShimgenError(f"type {a.type} has no Python type in the conversion table", op, a.name)
    return PyParam(_py_name(a.name), a.name, p.row.py, _py_default(p, plan), kw_only)


def function(w: Wrapper, plan: Plan, impl: str) -> PyFunction:
    s = w.op.schema
    by_name = {p.name: p for p in w.params}
    positional = [_param(a, by_name[a.name], plan, False, w.op.name) for a in s.arguments.flat_positional]
    keywords = [*s.arguments.flat_kwarg_only, *s.arguments.out]
    kw_only = [_param(a, by_name[a.name], plan, True, w.op.name) for a in keywords]
    args = [p.name for p in positional]
    for p in kw_only:  # torch.ops.aten takes keyword-only arguments by their schema names
        args.append(f"{p.schema_name}={p.name}" if p.name == p.schema_name else f"**{{{p.schema_name!r}: {p.name}}}")
    target = _attribute(_attribute("torch.ops.aten", str(s.name.name)), w.op.overload or "default")
    returns, result = _returns(w, plan)
    local = "result"  # the typed local that holds the op's result (a parameter may be named `result`)
    while any(p.name == local for p in (*positional, *kw_only)):
        local += "_"
    return PyFunction(
        name=w.name,
        impl=impl,
        op=w.op.name,
        schema=f"aten::{s}",
        since=str(w.since),
        since_tuple=f"({w.since.major}, {w.since.minor})",
        gone=(str(end[0]), end[1]) if (end := gone(w, plan)) else None,
        params=(*positional, *kw_only),
        returns=returns,
        call=f"{target}({', '.join(args)})",
        result=result,
        local=local,
    )


def groups(plan: Plan) -> list[PyGroup]:
    """The plan's wrappers as Python functions, grouped by name in the order of their first wrapper."""
    ws, _ = wrappers(plan)
    by_name: dict[str, list[Wrapper]] = {}
    for w in ws:
        by_name.setdefault(w.name, []).append(w)
    result = []
    for name, members in by_name.items():
        if name in _RESERVED:
            raise ShimgenError(f"the Python function {name} would shadow a name the generated module uses",
                               members[0].op.name)
        if len(members) == 1:
            fns: tuple[PyFunction, ...] = (function(members[0], plan, name),)
        else:
            fns = tuple(function(w, plan, f"_{name}__{w.op.overload or 'default'}") for w in members)
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


def emit(plan: Plan) -> dict[str, str]:
    gs = groups(plan)
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
    # Only the functions go through black: the rest of the module is written black-clean by its template
    # (the tests check the whole file), which keeps black's share of a small run to its import. The
    # functions keep the module's `from __future__` line while black formats them: black infers the target
    # Python versions from it (PY37+, as for the whole module), and they decide its trailing commas.
    functions = black_format(_FUTURE + render("py_functions.py.j2", **context))
    assert functions.startswith(_FUTURE)
    functions = functions[len(_FUTURE) :].lstrip("\n")
    module = render("py_module.py.j2", imports=_imports(gs, True), functions=functions, **context)
    stub = render("py_module.pyi.j2", imports=_imports(gs, False), **context)
    return {
        MODULE: module,
        STUB: black_format(stub, pyi=True),
        MARKER: "# PEP 561 marker: torch_stable_ops ships inline types and a stub (__init__.pyi).\n",
    }
