"""data/probe.yaml: the probe's outcome per conversion-table row, runtime and targeted release, and the `ivalue`
fact each row's outcomes imply.

A row's `ivalue` is the first release L such that an extension targeting L or later (up to the probe headers'
release) gets every probed value through on runtime L and on every later runtime: every (target T, runtime R)
pair with min(L, headers) <= T <= R converts. No such release: null (only a C shim can carry the type).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

import yaml

from shimgen.generate import table as table_mod
from shimgen.generate.table import Table
from shimgen.facts.versions import Version

PATH = "data/probe.yaml"
OUTCOMES = ("converts", "refuses", "wrong", "unbuilt")
_PRECEDENCE = ("wrong", "refuses", "unbuilt", "converts")  # a row's outcome is its worst case's
SECTIONS = {"argument": "arguments", "return": "returns"}


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


@dataclass
class Results:
    headers: str  # the torch release whose stable headers built the probe extensions
    # row id ("argument:bool[N]") -> runtime ("2.10.0") -> target ("2.10") -> "outcome" or "outcome: detail"
    rows: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)

    @property
    def runtimes(self) -> list[str]:
        return sorted({r for by_rt in self.rows.values() for r in by_rt}, key=_key)

    def merge(self, newer: Results) -> Results:
        """These results with `newer`'s runtimes replaced or added (a runtime is probed as a whole)."""
        rows = {rid: dict(by_rt) for rid, by_rt in self.rows.items()}
        for rid, by_rt in newer.rows.items():
            rows.setdefault(rid, {}).update(by_rt)
        return Results(newer.headers, rows)


def outcome(cell: str) -> str:
    return cell.split(":", 1)[0]


def worst(cells: list[str]) -> str:
    """The cell of the worst outcome among a row's cases (the first such case's detail)."""
    return min(cells, key=lambda c: _PRECEDENCE.index(outcome(c)))


def ivalue(by_runtime: dict[str, dict[str, str]], headers: Version) -> Version | None:
    releases = sorted({Version.parse(r) for r in by_runtime})
    for first in releases:
        low = min(first, headers)
        pairs = [outcome(cell) for rt, by_target in by_runtime.items() if Version.parse(rt) >= first
                 for t, cell in by_target.items() if Version.parse(t) >= low]
        if pairs and all(o == "converts" for o in pairs):
            return first
    return None


def facts(results: Results) -> dict[str, Version | None]:
    """The `ivalue` every probed row's outcomes imply, by row id."""
    headers = Version.parse(results.headers)
    return {rid: ivalue(by_rt, headers) for rid, by_rt in results.rows.items()}


def contradictions(table: Table, results: Results) -> list[str]:
    """One line per probed row whose `ivalue` in the table differs from what the probe implies."""
    lines = []
    for rid, derived in sorted(facts(results).items()):
        kind, key = rid.split(":", 1)
        row = getattr(table, SECTIONS[kind]).get(key)
        if row is None or row.refuse:
            lines.append(f"{rid}: probed, but the table has no such row")
        elif row.ivalue != derived:
            lines.append(f"{rid}: the table says ivalue {_show(row.ivalue)}, the probe implies {_show(derived)}")
    return lines


def _show(v: Version | None) -> str:
    return str(v) if v else "null"


# ---- the data file -----------------------------------------------------------------------------------------

_HEADER = """\
# The dispatcher probe on real torch releases: for each conversion-table row, whether libtorch's boxed
# dispatcher carries values of the row's type, per runtime and per targeted release (the TORCH_TARGET_VERSION
# the probe extension was built with, from the stable headers of torch {headers}).
# Written by `python -m shimgen.dev probe --write` (shimgen/proofs/probe/); DO NOT EDIT. The table's `ivalue`
# column must be what these results imply (shimgen/proofs/probe/results.py; tests/test_probe.py).
#   converts   every probed value arrived as the caller wrote it
#   refuses    libtorch (or the stable header's from()/to()) raised; the reason follows
#   wrong      the call succeeded with a different value, or the process crashed
#   unbuilt    the stable headers offer no conversion for the row's C++ type at that target
"""


def dump(results: Results) -> str:
    lines = [_HEADER.format(headers=results.headers).rstrip("\n"), f"headers: {json.dumps(results.headers)}"]
    for kind, section in SECTIONS.items():
        lines.append(f"{section}:")
        for rid in sorted((r for r in results.rows if r.startswith(kind + ":")), key=row_order):
            lines.append(f"  {json.dumps(rid.split(':', 1)[1])}:")
            for rt, by_target in sorted(results.rows[rid].items(), key=lambda kv: _key(kv[0])):
                lines.append(f"    {json.dumps(rt)}:")
                for t, cell in sorted(by_target.items(), key=lambda kv: _key(kv[0])):
                    lines.append(f"      {json.dumps(t)}: {json.dumps(cell)}")
    return "\n".join(lines) + "\n"


_ORDER: dict[str, int] = {}


def row_order(rid: str) -> tuple[int, str]:
    """Table order (arguments, then returns, as in conversion_table.yaml); unknown rows last."""
    if not _ORDER:
        t = table_mod.load()
        keys = [f"{kind}:{key}" for kind, section in SECTIONS.items() for key in getattr(t, section)]
        _ORDER.update((k, i) for i, k in enumerate(keys))
    return _ORDER.get(rid, 10**6), rid


def parse(text: str) -> Results:
    raw = yaml.safe_load(text) or {}
    rows: dict[str, dict[str, dict[str, str]]] = {}
    for kind, section in SECTIONS.items():
        for key, by_rt in (raw.get(section) or {}).items():
            rows[f"{kind}:{key}"] = {str(rt): {str(t): str(c) for t, c in bt.items()} for rt, bt in by_rt.items()}
    return Results(str(raw.get("headers", "")), rows)


def load() -> Results:
    return parse(resources.files("shimgen").joinpath(PATH).read_text())
