"""What the probe sends: one Probe per conversion-table row that is not refused, with its values from
data/probe_cases.yaml and its C++ representation from the table (the same columns the emitters read)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from importlib import resources

import yaml

from shimgen.base.errors import ShimgenError
from shimgen.generate.table import Row, Table

FIXED_SIZE = 3  # [N] in a row key is probed as [3]
KINDS = {"argument": "arguments", "return": "returns"}


@dataclass(frozen=True)
class Case:
    cpp: str  # argument: C++ expression of the row's type; return: C++ condition over `v`
    py: str  # argument: Python condition over `x`; return: the Python value the kernel returns
    storage: str | None = None  # argument: a local the value may view (a list's elements)


@dataclass(frozen=True)
class Probe:
    kind: str  # "argument" or "return"
    key: str  # the table row, e.g. "bool[N]"
    schema_type: str  # the type in the probe op's schema, e.g. "bool[3]"
    cpp_type: str  # the wrapper's C++ type: a parameter's, or what to<>() reads a return as
    stack: str  # argument: what the dispatcher route passes to from(), over the local `value`
    stack_decl: str  # the same over a declared (never defined) value, for decltype
    cases: tuple[Case, ...]

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.key}"

    @property
    def op(self) -> str:
        """The probe op's name in the shimgen_probe namespace (returns add _<case index>)."""
        return ("arg_" if self.kind == "argument" else "ret_") + slug(self.key)


def slug(key: str) -> str:
    """A row key as part of an identifier: `Tensor?[]` -> `Tensor_opt_list`, `bool[N]` -> `bool_N`."""
    text = key.replace("?", "_opt").replace("[]", "_list").replace("[N]", "_N")
    return re.sub(r"\W", "_", text)


@functools.cache
def _data() -> dict:
    text = resources.files("shimgen").joinpath("data/probe_cases.yaml").read_text()
    return yaml.safe_load(text) or {}


def probes(table: Table, select: list[str] | None = None) -> list[Probe]:
    """Every non-refused row of the table (or those named in `select`: `bool[N]`, or `return:Scalar` for one
    kind), in table order, arguments first."""
    data = _data()
    result = []
    for kind, section_name in KINDS.items():
        section: dict[str, Row] = getattr(table, section_name)
        for key, row in section.items():
            if row.refuse:
                continue
            if select is not None and key not in select and f"{kind}:{key}" not in select:
                continue
            raw = (data.get(section_name) or {}).get(key)
            if not raw:
                raise ShimgenError(f"data/probe_cases.yaml has no cases for the {kind} row {key!r}")
            if "[N]" in key:
                row = replace(row, size=FIXED_SIZE)
            if isinstance(raw, dict):  # {as: C++ type, cases: [...]}: the value goes out as that type (below)
                row, raw = replace(row, cpp=raw["as"], stack=None), raw["cases"]
            cases = tuple(Case(**c) for c in raw)
            result.append(Probe(kind, key, key.replace("[N]", f"[{FIXED_SIZE}]"), row.fill(row.cpp, "value"),
                                row.stack_value("value") if kind == "argument" else "",
                                row.stack_value("shimgen_probe::declared_value()") if kind == "argument" else "",
                                cases))
    if select is not None:
        known = {p.key for p in result} | {p.id for p in result}
        unknown = [s for s in select if s not in known]
        if unknown:
            raise ShimgenError(f"no conversion-table row to probe named {', '.join(unknown)}")
    return result
