"""The one error type shimgen reports to users: a single line naming the op, the argument and the reason."""

from __future__ import annotations


class ShimgenError(Exception):
    """Bad input. The CLI prints `shimgen: error: <message>` and exits 2."""

    def __init__(self, reason: str, op: str | None = None, arg: str | None = None) -> None:
        self.reason = reason
        self.op = op
        self.arg = arg
        super().__init__(self.line())

    def line(self) -> str:
        where = []
        if self.op:
            where.append(f"op {self.op}")
        if self.arg:
            where.append(self.arg if self.arg.startswith("return") else f"argument {self.arg}")
        prefix = ", ".join(where)
        text = f"{prefix}: {self.reason}" if prefix else self.reason
        return " ".join(shorten(word) for word in text.split())  # always one line, of a readable length


# A word of a message longer than this (a 100 KB op name echoed back) is shown by its ends and its length.
LONGEST_WORD = 300


def shorten(word: str) -> str:
    """`word` as a message shows it: whole up to LONGEST_WORD characters, else its first and last characters and
    how many were left out (a path keeps its file name)."""
    if len(word) <= LONGEST_WORD:
        return word
    head, tail = word[:120], word[-60:]
    return f"{head}[...{len(word) - len(head) - len(tail)} more characters...]{tail}"


class Refusal(ShimgenError):
    """A type or op with no stable representation (from the conversion table). Fatal for an explicitly named
    overload; for a name that selects several overloads, the refused ones are skipped with a printed note."""
