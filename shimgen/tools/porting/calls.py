"""The calls of ATen operators in one C++/CUDA source, as tree-sitter's C++ grammar sees them (the `port` extra:
tree-sitter, tree-sitter-cpp): `at::X(...)`, `torch::X(...)`, `at::X_out(...)`, `at::X_outf(...)`, and `t.X(...)` /
`t->X(...)` method calls (whether X is a Tensor method of native_functions.yaml is the surface's question,
shimgen.tools.porting.surface). Types are not resolved; calls inside macro definitions and code the parser could not
read are recorded as such."""

from __future__ import annotations

from dataclasses import dataclass, field

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import read_text

NAMESPACES = ("at", "torch", "::at", "::torch")


@dataclass(frozen=True)
class Call:
    file: str
    line: int
    text: str  # the callee as written, e.g. `at::softmax`, `x.masked_fill_`
    name: str  # the C++ name: `softmax`, `masked_fill_`, `sum_out`
    method: bool
    nargs: int  # arguments written; a method call adds self
    numbers: tuple[int, ...] = ()  # positions (self counted) of arguments written as number literals


@dataclass
class Source:
    path: str
    calls: list[Call] = field(default_factory=list)
    unqualified: list[tuple[int, str]] = field(default_factory=list)  # (line, name) called without a namespace
    macros: list[int] = field(default_factory=list)  # lines of macro definitions that contain a call
    unparsed: list[int] = field(default_factory=list)  # lines the parser could not read


def tree_sitter_parser():
    try:
        import tree_sitter
        import tree_sitter_cpp
    except ImportError:
        raise ShimgenError("shimgen port needs a C++ parser: pip install 'shimgen[port]' "
                           "(tree-sitter, tree-sitter-cpp)") from None
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


def scan(path: str, parser=None) -> Source:
    """The call sites of one source file."""

    text = read_text(path, path)
    tree = (parser or tree_sitter_parser()).parse(text.encode("utf-8"))
    src = Source(path)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("preproc_def", "preproc_function_def"):
            body = node.child_by_field_name("value")
            if body is not None and "(" in body.text.decode():
                src.macros.append(node.start_point[0] + 1)
            continue
        if node.type == "ERROR" or node.is_missing:
            src.unparsed.append(node.start_point[0] + 1)
        if node.type == "call_expression":
            call = _call(path, node)
            if isinstance(call, Call):
                src.calls.append(call)
            elif call is not None:
                src.unqualified.append((node.start_point[0] + 1, call))
        stack.extend(reversed(node.children))
    src.calls.sort(key=lambda c: c.line)
    return src


def _call(path: str, node) -> Call | str | None:
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return None
    written = [c for c in args.named_children if c.type != "comment"]
    nargs = len(written)
    numbers = tuple(i for i, c in enumerate(written) if _is_number(c))
    line = node.start_point[0] + 1
    if fn.type == "qualified_identifier":
        text = fn.text.decode()
        scope, _, name = text.rpartition("::")
        if scope.replace(" ", "") in NAMESPACES and name.isidentifier():
            return Call(path, line, text, name, False, nargs, numbers)
        return None
    if fn.type == "field_expression":
        field_node = fn.child_by_field_name("field")
        if field_node is not None and field_node.type == "field_identifier":
            obj = fn.child_by_field_name("argument")
            op = "->" if any(c.type == "->" for c in fn.children) else "."
            name = field_node.text.decode()
            return Call(path, line, f"{obj.text.decode() if obj else ''}{op}{name}", name, True, nargs + 1,
                        tuple(i + 1 for i in numbers))
        return None
    if fn.type == "identifier":
        return fn.text.decode()
    return None


def _is_number(node) -> bool:
    """A number literal, possibly negated or cast-free parenthesized: it cannot bind to a Tensor parameter."""
    if node.type == "number_literal":
        return True
    if node.type in ("unary_expression", "parenthesized_expression"):
        inner = [c for c in node.named_children]
        return len(inner) == 1 and _is_number(inner[0])
    return False
