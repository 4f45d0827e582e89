"""The report of `shimgen port`: one row per construct, as Markdown (a valid table: a cell is one line, `|`
escaped) and as data (--json)."""

from __future__ import annotations

import re

from shimgen.tools.porting import rules
from shimgen.tools.porting.rows import STATUSES, Row
from shimgen.tools.porting.surface import CAVEATS

_CAVEATS = (
    *CAVEATS,
    ("hazard", "compiles after a naive port and computes something else: write the replacement"),
)

POINTERS = (
    "accessors: torch::headeronly::HeaderOnlyTensorAccessor / HeaderOnlyGenericPackedTensorAccessor "
    "(torch/headeronly/core/TensorAccessor.h); shimgen::accessor<T, N>(t), packed_accessor32/64 in "
    "torch/csrc/stable/shimgen/operators.h",
    "dispatch macros: THO_DISPATCH_V2(dtype, name, AT_WRAP((lambda)), AT_FLOATING_TYPES, extra types...), "
    "THO_DISPATCH_SWITCH / THO_DISPATCH_CASE (torch/headeronly/core/Dispatch_v2.h, Dispatch.h)",
    "checks: STD_TORCH_CHECK (torch/headeronly/util/Exception.h); registration: STABLE_TORCH_LIBRARY with "
    "m.def(schema), STABLE_TORCH_LIBRARY_IMPL with m.impl(name, TORCH_BOX(&fn)) (torch/csrc/stable/library.h)",
    "operators and item<T>(): torch/csrc/stable/shimgen/operators.h (opt-in; each operator calls the aten op "
    "ATen's operator calls, through the wrappers)",
)


def cell(text: str) -> str:
    """One Markdown table cell: one line, `|` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: str) -> str:
    t = cell(text)
    return f"`{t}`" if "`" not in t else t


def ops_of(rows: list[Row]) -> list[str]:
    """The aten ops to put in [tool.shimgen]: those the rows call where some target has them."""
    out = set()
    for r in rows:
        if any(c.status in ("yes", "overlay", "from", "varies", "hazard") for c in r.cells):
            for op in r.ops:
                out.add(op.partition(".")[0])
    return sorted(out)


def toml_table(ops: list[str], target) -> str:
    import json

    body = ", ".join(json.dumps(o) for o in ops)
    return f'[tool.shimgen]\nops = [{body}]\ntarget = "{target}"\n'


def render(rows: list[Row], targets: list, blind: list[str], nfiles: int) -> tuple[list[str], dict]:
    lines = [f"# shimgen port: {nfiles} files, {len(rows)} constructs; targets "
             f"{', '.join(str(t) for t in targets)}", ""]
    lines += ["| site | kind | construct | aten op | stable replacement | " + " | ".join(str(t) for t in targets)
              + " |", "|" + "---|" * (5 + len(targets))]
    for r in rows:
        lines.append(f"| {r.where} | {r.site.kind} | {code(r.construct)} | {cell(', '.join(r.ops) or '-')} | "
                     f"{code(r.replacement)} | " + " | ".join(cell(c.text) for c in r.cells) + " |")
    lines += ["", "## Summary", "", "| target | constructs | " + " | ".join(STATUSES) + " |",
              "|" + "---|" * (2 + len(STATUSES))]
    summary = {}
    for i, t in enumerate(targets):
        counts = {s: sum(1 for r in rows if r.cells[i].status == s) for s in STATUSES}
        summary[str(t)] = counts
        lines.append(f"| {t} | {len(rows)} | " + " | ".join(str(counts[s]) for s in STATUSES) + " |")
    used = {c.status for r in rows for c in r.cells}
    for r in rows:
        for c in r.cells:
            for inner in re.findall(r"\(([a-z_ ]+)\)", c.text):
                used.update(inner.split(" or "))
    caveats = [(k, text) for k, text in _CAVEATS if k in used]
    if caveats:
        lines += ["", "## Caveats", "", *(f"- `{k}`: {text}" for k, text in caveats)]
    notes = sorted({(r.site.kind, r.site.key, r.note) for r in rows if r.note})
    if notes:
        lines += ["", "## Notes", "", *(f"- {k} `{cell(key)}`: {cell(n)}" for k, key, n in notes)]
    lines += ["", "## Where the stable equivalents are", "", *(f"- {p}" for p in POINTERS)]
    if blind:
        lines += ["", "## What it cannot see", "", *blind]
    ops = ops_of(rows)
    toml = toml_table(ops, min(targets))
    lines += ["", "## [tool.shimgen]", "", "```toml", *toml.splitlines(), "```"]
    data = {
        "targets": [str(t) for t in targets],
        "rows": [{"file": r.site.file, "line": r.site.line, "kind": r.site.kind, "construct": r.construct,
                  "ops": list(r.ops), "replacement": r.replacement, "fix": r.fix, "overloads": r.overloads,
                  **{str(t): {"status": r.cells[i].status, "text": r.cells[i].text} for i, t in enumerate(targets)}}
                 for r in rows],
        "summary": summary,
        "ops": ops,
    }
    return lines, data
