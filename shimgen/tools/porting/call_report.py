"""The call-level report of `shimgen port --parser tree-sitter`: each ATen call site's answer per target release
(shimgen.tools.porting.surface), a summary, the caveats of the routes named, the ops, what the scan cannot see and
the [tool.shimgen] table of the ops found (Markdown, and the same data for --json)."""

from __future__ import annotations

import json
import os
import re

from shimgen.base.errors import ShimgenError
from shimgen.facts.versions import Version
from shimgen.tools.porting import rules
from shimgen.tools.porting.calls import Call, Source
from shimgen.tools.porting.surface import CAVEATS, Answer, Surface


def report(sources: list[Source], surface: Surface, targets: list) -> tuple[list[str], dict]:
    """The Markdown report and the same data for --json."""
    rows = []
    for src in sources:
        for call in src.calls:
            member = _member_since(call) if surface.is_aten(call) else None
            if member is not None:  # a member of torch::stable::Tensor (numel, dim, ...): no op needed
                answers = [(Answer("yes", "yes (member)") if member <= t else Answer("from", f"from {member} (member)"),
                            []) for t in targets]
                rows.append((call, [a for a, _ in answers], []))
                continue
            if not surface.is_aten(call) and call.method:
                continue  # a method of some other type, or a Tensor accessor that is not an op (sizes, data_ptr)
            answers = [surface.answer(call, t) for t in targets]
            rows.append((call, [a for a, _ in answers], answers[0][1]))
    lines = [f"# shimgen port: {len(sources)} files, {len(rows)} ATen calls; targets "
             f"{', '.join(str(t) for t in targets)}", ""]
    head = "| call site | call | overloads | " + " | ".join(str(t) for t in targets) + " |"
    lines += [head, "|" + "---|" * (3 + len(targets))]
    for call, answers, names in rows:
        where = f"{os.path.basename(call.file)}:{call.line}"
        lines.append(f"| {where} | `{call.text}` | {', '.join(names) or '-'} | "
                     + " | ".join(a.text for a in answers) + " |")
    lines += ["", "## Summary", ""]
    statuses = ["yes", "overlay", "from", "removed", "varies", "no", "not-aten"]
    lines += ["| target | calls | " + " | ".join(statuses) + " |", "|" + "---|" * (2 + len(statuses))]
    summary = {}
    for i, t in enumerate(targets):
        counts = {s: sum(1 for _, a, _ in rows if a[i].status == s) for s in statuses}
        summary[str(t)] = counts
        lines.append(f"| {t} | {len(rows)} | " + " | ".join(str(counts[s]) for s in statuses) + " |")
    used = {a.status for _, answers, _ in rows for a in answers}
    for _, answers, _ in rows:  # the routes named in parentheses: `yes (dispatcher or sibling)`
        for a in answers:
            for inner in re.findall(r"\(([a-z_ ]+)\)", a.text):
                used.update(inner.split(" or "))
    caveats = [(route, text) for route, text in CAVEATS if route in used]
    if caveats:
        lines += ["", "## Caveats", "", *(f"- `{route}`: {text}" for route, text in caveats)]
    by_op: dict[str, list] = {}
    for call, answers, _ in rows:
        by_op.setdefault(call.name, []).append((call, answers))
    lines += ["", "## Ops", "", "| C++ name | calls | " + " | ".join(str(t) for t in targets) + " |",
              "|" + "---|" * (2 + len(targets))]
    for name in sorted(by_op):
        uses = by_op[name]
        cells = []
        for i in range(len(targets)):
            texts = sorted({a[i].text for _, a in uses})
            cells.append("; ".join(texts))
        lines.append(f"| `{name}` | {len(uses)} | " + " | ".join(cells) + " |")
    blind = []
    for src in sources:
        base = os.path.basename(src.path)
        aten_like = [(ln, n) for ln, n in src.unqualified if n in surface.known or n in _functions(surface)]
        if aten_like:
            blind.append(f"- {base}: unqualified calls named like ATen functions (not counted): "
                         + ", ".join(f"`{n}` (line {ln})" for ln, n in aten_like))
        if src.macros:
            blind.append(f"- {base}: macro definitions not examined (lines {', '.join(map(str, src.macros))})")
        if src.unparsed:
            blind.append(f"- {base}: code the parser could not read near lines "
                         f"{', '.join(map(str, sorted(set(src.unparsed))))}")
    lines += ["", "## What it cannot see", "", *blind,
              "- Tensor operators (`a + b`, `a[i]`, `a += b`) and which overload a template or an implicit "
              "conversion picks: a call's overloads are those whose parameter count fits"]
    ops = sorted({surface.names[c.name][0] for c, a, _ in rows
                  if any(x.status not in ("no", "not-aten") for x in a) and "(member)" not in a[0].text})
    toml = toml_table(ops, min(targets))
    lines += ["", "## [tool.shimgen]", "", "```toml", *toml.splitlines(), "```"]
    data = {
        "targets": [str(t) for t in targets],
        "calls": [{"file": c.file, "line": c.line, "call": c.text, "overloads": names,
                   **{str(t): {"status": a[i].status, "text": a[i].text} for i, t in enumerate(targets)}}
                  for c, a, names in rows],
        "summary": summary,
        "ops": ops,
    }
    return lines, data


def _member_since(call: Call):
    """The release from which torch::stable::Tensor has the method `call` calls (None: not a member)."""
    if not call.method:
        return None
    since = rules.members().get(rules.member_name(call.name))
    return Version.parse(since) if since else None


def _functions(surface: Surface) -> set[str]:
    return set(surface.wrappers)


def toml_table(ops: list[str], target) -> str:
    body = ", ".join(json.dumps(o) for o in ops)
    return f'[tool.shimgen]\nops = [{body}]\ntarget = "{target}"\n'


# a TOML table's header line: [name] or [[name]], with an optional comment
_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")


def toml_into(path: str, table: str) -> str:
    """The text `--toml PATH` writes: the table alone where PATH does not exist; where it does (a project's
    pyproject.toml), its text with its [tool.shimgen] table (and that table's subtables) replaced by `table`, every
    other table kept as written. A file that is not TOML is refused, never overwritten."""
    import tomllib

    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        return table
    try:
        tomllib.loads(old)
    except tomllib.TOMLDecodeError as e:
        raise ShimgenError(f"cannot write --toml {path}: it is not TOML ({e}), and is kept as it is") from None
    kept: list[str] = []
    inside = False
    for line in old.splitlines(keepends=True):
        m = _TOML_HEADER.match(line)
        if m:
            name = m.group(1).replace(" ", "").replace('"', "").replace("'", "")
            inside = name == "tool.shimgen" or name.startswith("tool.shimgen.")
        if not inside:
            kept.append(line)
    text = "".join(kept).rstrip("\n")
    return (text + "\n\n" if text else "") + table
