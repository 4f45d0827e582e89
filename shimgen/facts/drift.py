"""Schema drift: how the schemas of a set of ops changed between two native_functions.yaml files (or between an
output folder and what shimgen would generate now), judged for the stable ABI as PyTorch's linters judge a
schema change:

| change                                         | severity | what it means for the stable surface          |
|------------------------------------------------|----------|-----------------------------------------------|
| new op                                         | info     | new wrappers, tagged with the release          |
| argument type changed, same ABI (int->SymInt)  | info     | nothing: the C shim and the stack carry int64  |
| new trailing defaulted argument                | info     | a `_vN` C shim; older targets keep a narrower form |
| new defaulted argument before out= arguments   | warning  | a `_vN` C shim; the dispatcher cannot serve older targets |
| default changed                                | warning  | callers that omit it get another value         |
| argument renamed                               | warning  | the ABI holds; Python keyword callers break    |
| structural change, changed returns             | error    | ABI break                                      |
| trailing argument removed                      | error    | ABI break for C shims declared with it         |
| op removed                                     | error for a manifest op, else warning | extensions using it fail on the new release |
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shimgen.facts import history
from shimgen.facts.history import Kind

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Finding:
    op: str
    severity: str  # info | warning | error
    what: str
    meaning: str

    def line(self) -> str:
        return f"{self.severity}: op {self.op}: {self.what}: {self.meaning}"


def judge(op: str, old: str | None, new: str | None, default_set: frozenset[str] = frozenset()) -> Finding | None:
    """The finding for one op whose schema went from `old` to `new` (None: absent); None when nothing changed."""
    if old == new or (old is None and new is None):
        return None
    if old is None:
        return Finding(op, "info", "new op", "new wrappers, tagged with the release that added it")
    if new is None:
        severity = "error" if op in default_set else "warning"
        return Finding(op, severity, "op removed", "an extension using it fails on libtorch of the new release")
    a, b = history.parse_schema(old), history.parse_schema(new)
    flat, c = history.compare(a, b), history.compare(a, b, c_order=True)
    if flat.kind is Kind.SAME:
        return Finding(op, "info", "argument types changed, same ABI",
                       "nothing: SymInt and int cross the C shim and the stack alike")
    if flat.kind is Kind.DEFAULT_CHANGED:
        return Finding(op, "warning", f"default changed ({flat.detail})",
                       "callers that omit the argument get another value from the new release's wrappers")
    if flat.kind is Kind.RENAMED:
        return Finding(op, "warning", f"argument renamed ({flat.detail})",
                       "the C shim and the stack hold; Python callers passing it by keyword break")
    if flat.kind is Kind.TRAILING_ADDED:
        return Finding(op, "info", f"new trailing defaulted argument(s) {', '.join(flat.args)}",
                       "a `_vN` C shim carries them; extensions targeting older releases keep a narrower form")
    if c.kind is Kind.TRAILING_ADDED:
        return Finding(op, "warning", f"new defaulted argument(s) {', '.join(c.args)} before the out= arguments",
                       "a `_vN` C shim carries them; the dispatcher stack changed shape, so older targets need "
                       "the C shim")
    if flat.kind is Kind.TRAILING_REMOVED:
        return Finding(op, "error", f"trailing argument(s) {', '.join(flat.args)} removed",
                       "ABI break: C shims declared with them no longer match")
    return Finding(op, "error", f"structural change ({flat.detail})", "ABI break")


def compare(old: dict[str, str], new: dict[str, str], ops: set[str] | None = None,
            default_set: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings for every op (by `name.overload`) in `ops` (default: all) whose schema differs between the two
    schema maps, errors first, then by op."""
    names = sorted((set(old) | set(new)) if ops is None else ops)
    found = [f for op in names if (f := judge(op, old.get(op), new.get(op), default_set)) is not None]
    return sorted(found, key=lambda f: (-SEVERITIES.index(f.severity), f.op))


def select(specs: list[str], *schema_maps: dict[str, str]) -> set[str]:
    """`name`, `name.overload` and `name.default` specs, matched against the ops of either schema map."""
    every = set().union(*schema_maps)
    chosen: set[str] = set()
    for spec in specs:
        if "." in spec:
            chosen |= {spec} & every
        else:
            chosen |= {op for op in every if op.split(".")[0] == spec}
    return chosen


_DOC_RE = re.compile(r"^/// Stable wrapper of aten::(.*?)\n///\n", re.M | re.S)
_SHIM_RE = re.compile(r"^// aten::(.*)$", re.M)


def schemas_in_output(ops_h: str, c_shim_h: str) -> dict[str, str]:
    """The schemas an output folder was generated from, read back from its headers' comments (each wrapper's
    doc comment, each C shim's schema comment), by op name."""
    texts = [" ".join(line.removeprefix("///").strip() for line in m.group(1).split("\n"))
             for m in _DOC_RE.finditer(ops_h)]
    texts += [m.group(1).strip() for m in _SHIM_RE.finditer(c_shim_h)]
    found: dict[str, str] = {}
    for text in texts:
        m = re.match(r"([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))? *\(", text)
        if m:
            found[history.op_name(m.group(1), m.group(2))] = text
    return found
