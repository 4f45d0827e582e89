"""Byte-level reading of C++ source text where the rewrite needs no types: a parenthesised argument list, a braced
block, a statement's extent. Strings and character literals are skipped; comments are not parsed."""

from __future__ import annotations


def balanced_args(data: bytes, at: int) -> tuple[list[tuple[int, int]], int] | None:
    """The top-level arguments of the parenthesised list starting at or after `at` (only whitespace between), and
    the index after its `)`."""
    i = data.find(b"(", at)
    if i < 0 or data[at:i].strip():
        return None
    depth, start, args, j = 0, i + 1, [], i
    quote = None
    while j < len(data):
        ch = data[j:j + 1]
        if quote:
            if ch == b"\\":
                j += 2
                continue
            if ch == quote:
                quote = None
        elif ch in (b'"', b"'"):
            quote = ch
        elif ch in b"([{":
            depth += 1
        elif ch in b")]}":
            depth -= 1
            if depth == 0:
                args.append((start, j))
                return [strip(data, a, b) for a, b in args if data[a:b].strip()], j + 1
        elif ch == b"," and depth == 1:
            args.append((start, j))
            start = j + 1
        j += 1
    return None


def strip(data: bytes, a: int, b: int) -> tuple[int, int]:
    while a < b and data[a:a + 1].isspace():
        a += 1
    while b > a and data[b - 1:b].isspace():
        b -= 1
    return a, b


def block(data: bytes, at: int) -> tuple[int, int] | None:
    """The braced block whose `{` is the first non-space byte at or after `at`: the indexes of its `{` and `}`."""
    open_ = data.find(b"{", at)
    if open_ < 0 or data[at:open_].strip():
        return None
    depth, j, quote = 0, open_, None
    while j < len(data):
        ch = data[j:j + 1]
        if quote:
            if ch == b"\\":
                j += 2
                continue
            if ch == quote:
                quote = None
        elif ch in (b'"', b"'"):
            quote = ch
        elif ch == b"{":
            depth += 1
        elif ch == b"}":
            depth -= 1
            if depth == 0:
                return open_, j
        j += 1
    return None


def string_literal(text: str) -> str | None:
    """The content of a plain string literal `"..."` (None: not one)."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"' and '"' not in t[1:-1] and "\\" not in t:
        return t[1:-1]
    return None


def line_start(data: bytes, at: int) -> int:
    return data.rfind(b"\n", 0, at) + 1


def indent_at(data: bytes, at: int) -> str:
    s = line_start(data, at)
    e = s
    while e < len(data) and data[e:e + 1] in (b" ", b"\t"):
        e += 1
    return data[s:e].decode()
