"""Generated code in its formatted shape, without running a formatter: small pure layout functions for the few
shapes shimgen emits (a bracketed list after a head: a `def` signature, a call's arguments).

Each function returns the lines black (line length 88) would write, or raises Unsure where the shape is one
whose layout these rules do not cover; the caller then formats that unit with black (shimgen.generate.emit.fmt). The
rules are black's for lines without comments or magic trailing commas:
- a line that fits stays as it is;
- a `def` splits at its first bracket (black's left-hand split), a call at its last one (right-hand split);
  the contents go on one indented line if they fit, else one item per line with a trailing comma (a `def`
  with a single parameter always gets the comma, which then keeps it on a line of its own).
tests/test_layout.py compares the result with black's over the whole yaml and every golden.
"""

from __future__ import annotations

PY_WIDTH = 88


class Unsure(Exception):
    """The layout rules do not cover this line: format it with the formatter."""


class Nested(tuple):
    """An item that is itself bracketed, `(a, b)`: (head, items, tail). On one line it reads as written; where
    the items go one per line and it does not fit, it splits the same way one level deeper."""

    def __new__(cls, head: str, items: list[str], tail: str) -> "Nested":
        return super().__new__(cls, (head, tuple(items), tail))

    def __str__(self) -> str:
        return f"{self[0]}{', '.join(map(str, self[1]))}{self[2]}"


def _fits(line: str, width: int = PY_WIDTH) -> bool:
    return len(line) <= width


def bracketed(head: str, items: list[str], tail: str, indent: int, is_def: bool = False,
              comma_after_star: bool = True) -> str:
    """`head` + items joined by `, ` + `tail` at `indent`, split as black splits it when it does not fit.

    head ends with the opening bracket (`def f(`, `_too_new(`), tail starts with the closing one (`) -> T:`).
    comma_after_star: black's target versions allow a trailing comma after `*` in a def (it infers them from
    the file: the module's `from __future__ import annotations` means 3.7+; the stub has no such hint)."""
    pad = " " * indent
    one = f"{pad}{head}{', '.join(map(str, items))}{tail}"
    if _fits(one):
        return one
    first, last = pad + head, pad + tail
    if not items or not _fits(first) or not _fits(last):
        raise Unsure(one)
    inner = " " * (indent + 4)
    if len(items) > 1 or not is_def:
        body = inner + ", ".join(map(str, items))
        if _fits(body):
            return "\n".join([first, body, last])
        if len(items) == 1:
            raise Unsure(one)  # one item too long for a line: black splits inside it
    star = is_def and any(str(item).startswith("*") for item in items)
    comma = "," if comma_after_star or not star else ""
    lines = []
    for k, item in enumerate(items):
        end = "," if k < len(items) - 1 else comma
        line = f"{inner}{item}{end}"
        if not _fits(line) and isinstance(item, Nested):  # black splits the item's own brackets the same way
            line = bracketed(item[0], list(item[1]), item[2] + end, indent + 4)
        elif not _fits(line):
            raise Unsure(one)
        lines.append(line)
    return "\n".join([first, *lines, last])


def assignment(target: str, head: str, items: list[str], tail: str, indent: int) -> str:
    """`target = head(items)tail`: split at the call's bracket when `target = head(` fits on the first line, else
    black puts the right-hand side in parentheses of its own on the lines between."""
    try:
        return bracketed(target + head, items, tail, indent)
    except Unsure:
        if _fits(" " * indent + target + head):
            raise
    pad = " " * indent
    return "\n".join([f"{pad}{target}(", bracketed(head, items, tail, indent + 4), f"{pad})"])


def chained_call(head: str, items: list[str], trailer: str, indent: int) -> str:
    """`head(items)trailer` where trailer is a second call `(...)` (`_pick(...)(*args, **kwargs)`): black
    splits at the trailer when what precedes it fits on the first line, else at the first call."""
    pad = " " * indent
    call = f"{head}{', '.join(map(str, items))})"
    one = f"{pad}{call}{trailer}"
    if _fits(one):
        return one
    assert trailer.startswith("(") and trailer.endswith(")")
    if _fits(f"{pad}{call}("):
        inner = trailer[1:-1]
        return bracketed(f"{call}(", [inner], ")", indent) if inner else one
    return bracketed(head, items, ")" + trailer, indent)


def string(text: str) -> str:
    """A Python string literal as black writes it (double quotes; repr's escapes otherwise)."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        return '"' + literal[1:-1].replace("\\'", "'") + '"'
    if literal.startswith('"'):
        return literal
    raise Unsure(literal)


def normalize_literal(value: str) -> str:
    """A default value's literal as black writes it: single-quoted strings become double-quoted."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        body = value[1:-1]
        if '"' in body or "\\" in body or "'" in body:
            raise Unsure(value)
        return f'"{body}"'
    return value
