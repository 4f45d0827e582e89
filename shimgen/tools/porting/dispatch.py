"""ATen's dispatch macros (`AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16, st, "name", body)`, `AT_DISPATCH_SWITCH`,
`AT_DISPATCH_CASE_*`, `AT_DISPATCH_V2`) as headeronly's (THO_DISPATCH_V2, THO_DISPATCH_SWITCH, THO_DISPATCH_CASE):
the same types, the same name bound in the body (`scalar_t`, `index_t`), the same name in the error.

The facts are data/port_rules.yaml's `dispatch` table; this module reads a macro's name by ATen's grammar
(AT_DISPATCH_[CASE_]<group>[_AND<n>]) and writes the stable form. `write` gives the parts of the rewrite (text, or
byte ranges of the file that are themselves rewritten), and `describe` the same form over placeholder arguments, as
the report prints it: the report and `--fix` come from one writer."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from shimgen.tools.porting import rules

Part = str | tuple[int, int]

PREFIX = "AT_DISPATCH_"
CASE_PREFIX = "AT_DISPATCH_CASE_"
_SUFFIX = re.compile(r"(?:_AND(\d*))?")
# an ATen spelling of a ScalarType constant: at::kHalf, c10::kBFloat16, torch::kLong, kFloat, at::ScalarType::Half,
# ScalarType::Long, c10::ScalarType::Float (the enumerator), torch::headeronly::ScalarType::Half (already stable)
_CONSTANT = re.compile(r"(?:::)?(?:(?:at|c10|torch)::)?(?:headeronly::)?(?:ScalarType::(?P<enum>\w+)|(?P<k>k\w+))")


@dataclass(frozen=True)
class Form:
    """What one ATen dispatch macro is: `kind` group (the whole dispatch), case (the cases of a group, inside a
    switch), form (a macro of the same arguments: the switch, one case, V2) or none (no stable form)."""

    name: str
    kind: str
    types: tuple[str, ...] = ()  # the group's enumerators, in ATen's order
    extra: int = 0  # the SCALARTYPE arguments written before the others
    hint: str = "scalar_t"
    replace: str = ""  # a form's stable macro
    body: int | None = None  # a form's body argument
    types_from: int | None = None  # a form's first type argument (a constant written as the enumerator)
    why: str = ""  # a none's reason


def _table() -> dict:
    return rules.load()["dispatch"]


@functools.lru_cache(maxsize=None)
def form(name: str) -> Form | None:
    """The form of the ATen macro `name`; None where it is no dispatch macro ATen's grammar names."""
    t = _table()
    forms = t["forms"]
    if name in forms:
        d = forms[name]
        return Form(name, "form", replace=d["replace"], body=d.get("body"), types_from=d.get("types"))
    if name.startswith(CASE_PREFIX):
        kind, rest = "case", name[len(CASE_PREFIX):]
    elif name.startswith(PREFIX):
        kind, rest = "group", name[len(PREFIX):]
    else:
        return None
    groups = {**{g: None for g in t.get("none", {})}, **t["groups"]}
    for group in sorted(groups, key=len, reverse=True):  # ALL_TYPES_AND_COMPLEX before ALL_TYPES
        if not rest.startswith(group):
            continue
        m = _SUFFIX.fullmatch(rest[len(group):])
        if m is None:
            continue
        extra = (int(m.group(1)) if m.group(1) else 1) if rest[len(group):] else 0
        if group in t.get("none", {}):
            return Form(name, "none", why=t["none"][group])
        g = groups[group]
        types, hint = (g["types"], g.get("hint", "scalar_t")) if isinstance(g, dict) else (g, "scalar_t")
        return Form(name, kind, tuple(types), extra, hint)
    return None


def enumerator(name: str) -> str:
    return f"{_table()['enum']}::{name}"


def _lists(types: tuple[str, ...]) -> list[str]:
    """The types as headeronly's type-list macros where a run of them is exactly one (the longest first), the
    enumerators otherwise."""
    lists = sorted(_table()["lists"].items(), key=lambda kv: -len(kv[1]))
    out, i = [], 0
    while i < len(types):
        for macro, names in lists:
            if tuple(types[i:i + len(names)]) == tuple(names):
                out.append(macro)
                i += len(names)
                break
        else:
            out.append(enumerator(types[i]))
            i += 1
    return out


def constant(text: str) -> str | None:
    """The stable enumerator an ATen ScalarType constant as written names (None: not a constant)."""
    m = _CONSTANT.fullmatch("".join(text.split()))
    if m is None:
        return None
    if m.group("enum"):
        return enumerator(m.group("enum"))
    name = rules.constant(m.group("k"))
    return enumerator(name) if name else None


def write(f: Form, args: list[Part], text_of, gaps: list[Part] = (), between: str = " ") -> list[Part] | None:
    """The parts of the stable macro call that replaces `f`'s call with arguments `args` (their text by
    `text_of`); None where the arguments do not fit the macro. `gaps`: what is between the arguments as written
    (`,` and the line breaks; byte ranges of the file, or text): each argument written keeps the gap it had before it (TYPE's and NAME's line break
    stay), a separator more is `, `; `between`: what separates the cases a group's cases macro becomes (a line
    break and the macro's column, where it is written)."""
    gaps = list(gaps)

    def gap(i: int) -> Part:  # the gap before argument i as written
        return gaps[i - 1] if 0 < i <= len(gaps) else ", "

    def sep() -> Part:  # the next gap of a form, whose arguments keep their order
        return gap(next(order))

    order = iter(range(1, len(args)))

    def typ(a: Part) -> Part:
        return constant(text_of(a)) or a

    def body(parts: list[Part]) -> list[Part]:  # the body arguments (a comma outside parentheses splits it in two)
        if len(parts) == 1 or all(isinstance(p, str) for p in parts):
            return ["(", *_join(parts), ")"]
        return ["(", (parts[0][0], parts[-1][1]), ")"]

    if f.kind == "group":
        if len(args) < f.extra + 3:
            return None
        extras, (type_, name), rest = args[:f.extra], args[f.extra:f.extra + 2], args[f.extra + 2:]
        if f.hint == "scalar_t":
            n = f.extra
            out: list[Part] = ["THO_DISPATCH_V2(", type_, gap(n + 1), name, gap(n + 2), "AT_WRAP(", *body(rest), ")"]
            for t in _lists(f.types):
                out += [", ", t]
            for i, e in enumerate(extras):
                out += [gap(i) if i else ", ", typ(e)]
            return [*out, ")"]
        cases = _cases(f, [enumerator(t) for t in f.types] + [typ(e) for e in extras], body(rest), between)
        return ["THO_DISPATCH_SWITCH(", type_, gap(f.extra + 1), name, gap(f.extra + 2), *cases, ")"]
    if f.kind == "case":
        if len(args) < f.extra + 1:
            return None
        return _cases(f, [enumerator(t) for t in f.types] + [typ(e) for e in args[:f.extra]], body(args[f.extra:]),
                      between)
    if f.kind == "form":
        if f.body is not None and len(args) <= f.body:
            return None
        head = args if f.body is None else args[:f.body]
        out = [f.replace, "("]
        for i, a in enumerate(head):
            if i:
                out.append(sep())
            out.append(typ(a) if f.types_from is not None and i >= f.types_from else a)
        if f.body is not None:
            out += [sep()] if head else []
            out += body(args[f.body:])
        out.append(")")
        return out
    return None


def _cases(f: Form, enums: list[Part], body: list[Part], between: str = " ") -> list[Part]:
    out: list[Part] = []
    for i, e in enumerate(enums):
        if i:
            out.append(between)
        if f.hint == "scalar_t":
            out += ["THO_DISPATCH_CASE(", e, ", ", *body, ")"]
        else:
            out += ["THO_PRIVATE_CASE_TYPE_USING_HINT(", e, f", {f.hint}, ", *body, ")"]
    return out


def _join(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for i, p in enumerate(parts):
        if i:
            out.append(", ")
        out.append(p)
    return out


def placeholders(f: Form) -> list[str]:
    if f.kind == "group":
        return [*(f"SCALARTYPE{i + 1}" for i in range(f.extra)), "TYPE", "NAME", "BODY"]
    if f.kind == "case":
        return [*(f"SCALARTYPE{i + 1}" for i in range(f.extra)), "BODY"]
    if f.name == "AT_DISPATCH_SWITCH":
        return ["TYPE", "NAME", "CASES..."]
    if f.name == "AT_DISPATCH_CASE":
        return ["SCALARTYPE", "BODY"]
    return ["TYPE", "NAME", "BODY", "TYPES..."]


def describe(name: str) -> str:
    """The stable form of macro `name` over placeholder arguments, as `write` writes it (the report's cell)."""
    f = form(name)
    if f is None or f.kind == "none":
        return "none"
    parts = write(f, placeholders(f), lambda a: a)
    return "".join(p for p in parts if isinstance(p, str)) if parts else "none"


def rule(name: str) -> rules.Rule | None:
    """The macro's rule as the report and the fixer read it."""
    f = form(name)
    if f is None:
        return None
    t = _table()
    if f.kind == "none":
        return rules.Rule(none=f.why)
    return rules.Rule(replace=describe(name), since=t["since"], fix=True, header=tuple(t["header"]))
