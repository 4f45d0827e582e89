"""The construct rules of data/port_rules.yaml and the members of torch::stable::Tensor
(data/stable_tensor_members.json), as lookups."""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass

import yaml

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data")


@dataclass(frozen=True)
class Rule:
    """What a port writes instead of one ATen construct."""

    replace: str | None = None  # the stable spelling (None: there is none)
    since: str | None = None  # the first release whose stable headers have it
    none: str | None = None  # why there is no replacement
    fix: bool = False  # the rewrite is mechanical (`shimgen port --fix` makes it)
    note: str | None = None
    header: str | tuple[str, ...] | None = None  # the stable header(s) the replacement needs
    ops: tuple[str, ...] = ()  # aten ops the replacement calls (they go into [tool.shimgen] ops)
    call: str | None = None  # a macro call's whole rewrite, `{args}` its arguments as written
    registration: str | None = None  # a registration's form: def | impl | legacy (shimgen.tools.porting.registration)
    form: str | None = None  # a call rewritten by its own code in fix.py (from_blob: its arguments rearranged)

    @classmethod
    def of(cls, d: dict) -> "Rule":
        header = d.get("header")
        return cls(replace=d.get("replace"), since=d.get("since"), none=d.get("none"), fix=bool(d.get("fix")),
                   note=d.get("note"), header=tuple(header) if isinstance(header, list) else header,
                   ops=tuple(d.get("ops", ())),
                   call=d.get("call"), registration=d.get("registration"), form=d.get("form"))


@functools.lru_cache(maxsize=None)
def load() -> dict:
    with open(os.path.join(DATA, "port_rules.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


@functools.lru_cache(maxsize=None)
def members() -> dict[str, str]:
    """torch::stable::Tensor's public members -> the first release whose stable headers declare it."""
    with open(os.path.join(DATA, "stable_tensor_members.json"), encoding="utf-8") as f:
        return json.load(f)["members"]


def member_name(aten: str) -> str:
    return load()["members"].get("renamed", {}).get(aten, aten)


def operator(op: str) -> dict | None:
    return load()["operators"].get(op)


def template(name: str) -> Rule | None:
    d = load()["templates"].get(name)
    return Rule.of(d) if d else None


def type_rule(qualified: str) -> Rule | None:
    d = load()["types"].get(qualified)
    return Rule.of(d) if d else None


def call_rule(qualified: str, params: tuple[str, ...] | None = None) -> Rule | None:
    """The rule of a call of `qualified`; `params`: the parameter types of the overload called, where known."""
    d = load()["calls"].get(qualified)
    if d and d.get("param") and params is not None and not any(d["param"] in p for p in params):
        return None
    return Rule.of(d) if d else None


def constant(name: str) -> str | None:
    return load()["constants"].get(name)


def value(qualified: str) -> str | None:
    """The number an ATen named number (at::internal::GRAIN_SIZE) stands for, written out."""
    return load().get("values", {}).get(qualified)


def name_rule(qualified: str) -> dict | None:
    """The stand-in of an ATen function template (port_rules.yaml `names`): {replace, header}."""
    return load().get("names", {}).get(qualified)


def hazard(name: str) -> dict:
    return load()["hazards"][name]


def header(name: str) -> list[str] | None:
    return load()["headers"].get(name)


def rename_types(text: str) -> str:
    """ATen's type names written inside template arguments (`at::RestrictPtrTraits`), in their stable spelling."""
    for key, d in load()["types"].items():
        if d.get("fix") and d.get("replace"):
            name = key.rsplit("::", 1)[-1]
            text = re.sub(rf"(?<![\w:])(?:::)?(?:at|c10|torch)::{re.escape(name)}\b", d["replace"], text)
    return text
