"""Validation of one schema before anything is generated from it, and C/C++-safe argument names.

Whatever shimgen accepts, it must write code that compiles and means what the schema says; whatever it cannot
write that way is bad input, reported as one line naming the op, the argument and the reason. The rules:

* Malformed schema (always an error, whichever way the op was selected): a schema torchgen cannot parse, an
  argument or return name that is not an identifier (`self)` from an extra parenthesis), a bad alias annotation
  (`Tensor(a!!)`), a default that does not fit its type: `None` for a non-optional type, a number for a Tensor,
  an integer outside int64 (`99999999999999999999999`), a float that is not finite in a double (`1e999`), an
  unterminated or non-string literal for a `str`, a list whose length differs from a fixed-size type whose C++
  representation is a fixed-size array (`bool[3]` is `std::array<bool, 3>`), a scalar for a list type with no
  size, a known symbolic default of another type (`bool b=Mean`).
* No representation (a Refusal: skipped with a note under a bare name, an error when named explicitly): a
  symbolic default the conversion table's `defaults` cannot spell (`int dim=banana`, a future enum constant).
  It is refused when the op is parsed, so neither its C shim nor its wrapper is written.

`int[N]` whose C++ type is an ArrayRef takes a default list of any length, as ATen does (2.13's fft_fft2 has
`int[1] dim=[-2,-1]`): the literal reaches ATen as written.

C++-safe names (`cpp_safe`): an argument named like a C++ keyword (`class`, `namespace`) or like something the
generated code declares next to it (the dispatcher route's `stack`, the shim route's `ret0`, the C shim
definition's `tmp_result`, a prelude's `{name}_h` local of another argument, a prelude's own loop variable)
gets a trailing underscore, torchgen's mangling for keywords (`from` -> `from_` in its Python API), repeated
until it is unique. Real schemas need none of this (their names are what torchgen writes into its C shims);
the Python stubs apply the same rule for Python (emit_py).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re

from torchgen.model import (
    Annotation,
    Argument,
    Arguments,
    BaseType,
    FunctionSchema,
    ListType,
    NativeFunction,
    OptionalType,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)

from shimgen.base.errors import Refusal, ShimgenError
from shimgen.generate.table import Table

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT_RE = re.compile(r"-?[0-9]+")
_FLOAT_RE = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_INT64 = (-(2**63), 2**63 - 1)

# C++20 keywords and alternative tokens, and object-like macros every C++ translation unit may see.
CPP_RESERVED = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
    compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
    this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
    while xor xor_eq errno NULL EOF linux unix""".split()
)
# Names the emitters declare in a wrapper body or a C shim definition, beside the arguments: the dispatcher
# route's `stack`, the shim route's `ret<i>` locals, the C shim definition's `tmp_result`.
_GENERATED_LOCAL_RE = re.compile(r"stack|tmp_result|ret[0-9]+")
# A C++ declaration in a table row's prelude: `size_t i = 0`, `const auto& t : ...`, `int32_t {name}_v = 0`.
_DECLARED_RE = re.compile(r"(?:\bsize_t|\bauto&?|\bint(?:32|64)_t|\bdouble|AtenTensorHandle\*?)\s+([A-Za-z_]\w*)")


# ---- the schema text ----------------------------------------------------------------------------------------


def parse_schema(func: str, op: str, table: Table | None) -> FunctionSchema:
    """Parse a schema with torchgen; on failure name the argument and the reason (an unsupported type gets the
    table's refusal)."""
    try:
        return FunctionSchema.parse(func)
    except Exception as e:
        reason = " ".join(str(e).split()) or type(e).__name__
    m = re.match(r"^[^(]*\((.*)\) -> .*$", func)
    for piece in m.group(1).split(", ") if m else []:
        if piece in ("*", ""):
            continue
        try:
            Argument.parse(piece)
        except Exception:
            _blame_argument(piece, op, table)
    raise ShimgenError(f"malformed schema {func!r}: {reason}", op)


def _blame_argument(piece: str, op: str, table: Table | None) -> None:
    type_text, _, arg = piece.rpartition(" ")
    arg = arg.split("=")[0]
    if not type_text:  # `int` alone: a type without a name, not an unsupported type
        raise ShimgenError(f"malformed schema: argument {piece!r} has no name", op)
    for ann in re.findall(r"\(([^()]*)\)", type_text):
        try:
            Annotation.parse(ann)
        except Exception:
            raise ShimgenError(f"bad alias annotation ({ann}) in {type_text!r}", op, arg) from None
    type_text = re.sub(r"\([^()]*\)", "", type_text)
    if table is not None:
        table.argument(type_text, op, arg)  # raises the table's refusal
    raise ShimgenError(f"malformed schema type {type_text!r}", op, arg)


def check_names(schema: FunctionSchema, op: str) -> None:
    seen: set[str] = set()
    for a in schema.arguments.flat_all:
        if not _IDENT_RE.fullmatch(a.name):
            raise ShimgenError(f"argument name {a.name!r} is not an identifier (unbalanced parentheses?)", op)
        if a.name in seen:
            raise ShimgenError("two arguments have this name", op, a.name)
        seen.add(a.name)
    for i, r in enumerate(schema.returns):
        if r.name is not None and not _IDENT_RE.fullmatch(r.name):
            raise ShimgenError(f"return name {r.name!r} is not an identifier", op, f"return {i}")


# ---- defaults -----------------------------------------------------------------------------------------------


def check_defaults(schema: FunctionSchema, op: str, table: Table) -> None:
    """Every default fits its type (see the module docstring); the table's refusal for a symbol it lacks."""
    for a in schema.arguments.flat_all:
        if a.default is not None:
            _check_default(a.type, a.default, table, op, a.name)


def _check_default(typ: Type, text: str, table: Table, op: str, arg: str) -> None:
    shown = str(typ)

    def bad(reason: str) -> ShimgenError:
        return ShimgenError(f"default {text!r} does not fit type {shown}: {reason}", op, arg)

    if text == "None":
        if not isinstance(typ, OptionalType):
            raise bad("None needs an optional type (`T?`)")
        return
    if isinstance(typ, OptionalType):
        typ = typ.elem
    if isinstance(typ, ListType):
        if text.startswith("["):
            if not text.endswith("]"):
                raise bad("unterminated list")
            items = [i.strip() for i in text[1:-1].split(",")]
            items = [] if items == [""] else items
            row = table.argument(typ, op, arg)
            if typ.size is not None and row.cpp and "{size}" in row.cpp and len(items) != typ.size:
                raise bad(f"{len(items)} items for a fixed size of {typ.size}")
            for item in items:
                if not item:
                    raise bad("an empty list item")
                _check_default(typ.elem, item, table, op, arg)
            return
        if typ.size is None:
            raise bad("a list type takes a list default (`[...]`)")
        typ = typ.elem  # `int[2] stride=1` means [1, 1]
    if isinstance(typ, (ListType, OptionalType)):
        raise bad("nested optional or list types take no default")
    assert isinstance(typ, BaseType)
    kind = table.literal(typ.name.name)  # how a literal of this type is written (the table's `literal`)
    if kind == "str":
        _check_string(text, bad)
        return
    if text[:1] in "'\"" or text.startswith("["):
        raise bad("not a literal of this type")
    if _INT_RE.fullmatch(text):
        if kind not in ("int", "float", "number"):
            raise bad("a number is no value of this type")
        if kind != "float" and not _INT64[0] <= int(text) <= _INT64[1]:
            raise bad("outside the 64-bit integer range")
        if kind == "float" and not math.isfinite(float(text)):
            raise bad("not a finite double")
        return
    if _FLOAT_RE.fullmatch(text):
        if kind not in ("float", "number"):
            raise bad("a floating-point number is no value of this type")
        if not math.isfinite(float(text)):
            raise bad("not a finite double (write inf if infinity is meant)")
        return
    if not re.fullmatch(r"-?[A-Za-z_][A-Za-z0-9_]*", text):
        raise bad("not a literal or a name")
    allowed = table.default_types.get(text)
    if allowed is None or text not in table.defaults:
        raise Refusal(f"schema default {text!r} has no spelling in the conversion table's defaults", op, arg)
    if typ.name.name not in allowed:
        raise bad(f"{text} is a default for {', '.join(allowed)}")


def _check_string(text: str, bad) -> None:
    if text[:1] not in ("'", '"'):
        raise bad("a str default is a quoted string")
    if len(text) < 2 or text[-1] != text[0]:
        raise bad("unterminated string")
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        raise bad("unterminated or malformed string") from None
    if not isinstance(value, str):
        raise bad("not a single string literal")


# ---- C/C++-safe names ---------------------------------------------------------------------------------------


def _declared(row, name: str) -> tuple[set[str], set[str]]:
    """(names a table row's C/C++ text derives from the argument `name`, such as `{name}_h` or `{name}_len_`;
    names its text declares literally, such as a prelude loop's `i`)."""
    raw = " ".join(" ".join(t) if isinstance(t, tuple) else t for t in (row.c, row.prelude, row.to_c, row.aten) if t)
    derived = set(re.findall(r"\b" + re.escape(name) + r"_\w+", raw.replace("{name}", name)))
    return derived, set(_DECLARED_RE.findall(raw))


def cpp_safe(f: NativeFunction, table: Table | None, op: str) -> NativeFunction:
    """`f` with every argument name safe in C and C++ (see the module docstring); `f` itself when none changes."""
    args = list(f.func.arguments.flat_all)
    names = [a.name for a in args]
    derived: list[set[str]] = []  # per argument: names derived from it (another argument may not be named so)
    own: list[set[str]] = []  # per argument: other names its own code declares (its loop variables)
    for a in args:
        row = None
        if table is not None:
            try:
                row = table.argument(a.type, op, a.name)
            except Refusal:
                pass
        d, o = _declared(row, a.name) if row is not None else (set(), set())
        derived.append(d)
        own.append(o)
    renamed = list(names)
    for i, name in enumerate(names):
        others = set(renamed[:i]) | set(names[i + 1 :])
        taken = set().union(*(derived[j] for j in range(len(args)) if j != i)) | others | own[i]
        new = name
        while new in CPP_RESERVED or _GENERATED_LOCAL_RE.fullmatch(new) or new in taken:
            new += "_"
        renamed[i] = new
    if renamed == names:
        return f
    mapping = dict(zip(names, renamed))
    return dataclasses.replace(f, func=dataclasses.replace(f.func, arguments=_rename(f.func.arguments, mapping)))


def _rename(arguments: Arguments, mapping: dict[str, str]) -> Arguments:
    def arg(a: Argument) -> Argument:
        return dataclasses.replace(a, name=mapping[a.name])

    changes: dict[str, object] = {}
    for field in dataclasses.fields(arguments):
        value = getattr(arguments, field.name)
        if isinstance(value, tuple):
            changes[field.name] = tuple(arg(a) for a in value)
        elif isinstance(value, SelfArgument):
            changes[field.name] = SelfArgument(arg(value.argument))
        elif isinstance(value, TensorOptionsArguments):
            changes[field.name] = TensorOptionsArguments(*(arg(getattr(value, x.name)) for x in
                                                           dataclasses.fields(value)))
    return dataclasses.replace(arguments, **changes)
