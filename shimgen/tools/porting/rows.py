"""Each construct of the scan, answered: its stable replacement and its availability at each target.

Calls of aten ops (functions, Tensor methods, the op behind each Tensor operator) are answered by
shimgen.tools.porting.surface.Surface, the same answer the generated ops.h gives; everything else by the rules
(data/port_rules.yaml) and torch::stable::Tensor's members per release (data/stable_tensor_members.json)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from shimgen.tools.porting import macros, rules
from shimgen.tools.porting.calls import Call
from shimgen.tools.porting.clang_scan import Site
from shimgen.tools.porting.surface import Answer
from shimgen.facts.versions import Version

# statuses, as the summary counts them
STATUSES = ("yes", "overlay", "from", "removed", "varies", "no", "hazard")


@dataclass(frozen=True)
class Cell:
    status: str
    text: str


@dataclass
class Row:
    site: Site
    construct: str  # what the report names: `at::zeros`, `a - b`, `TORCH_CHECK`
    ops: tuple[str, ...]  # the aten ops it calls (those go into [tool.shimgen] ops)
    replacement: str
    cells: list[Cell]
    fix: bool  # `--fix` rewrites it
    note: str = ""
    overloads: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.site.file)}:{self.site.line}"


def _since(rule: rules.Rule, target: Version) -> Cell:
    if rule.none:
        return Cell("no", f"no: {rule.none}")
    if rule.since is None or Version.parse(rule.since) <= target:
        return Cell("yes", "yes")
    return Cell("from", f"from {rule.since}")


def names_needed(sites: list[Site]) -> set[str]:
    """The C++ names the Surface must know: calls, methods, and the ops behind operators and rules."""
    out = set()
    for s in sites:
        if s.kind in ("call", "method"):
            out.add(s.key)
        elif s.kind == "operator":
            out.update(_operator_ops(s))
        elif s.kind == "hazard":
            out.update(rules.hazard(s.key).get("ops", ()))
        elif s.kind in ("rule", "template"):
            r = rules.call_rule(s.key) if s.kind == "rule" else rules.template(s.key)
            if r is not None:
                out.update(r.ops)
    return out


def _operator_ops(s: Site) -> tuple[str, ...]:
    entry = rules.operator(s.key) or {}
    got = entry.get(s.form) or entry.get("tensor")
    if got is None:
        return ()
    return tuple(got) if isinstance(got, list) else (got,)


def _op_cell(surface, name: str, method: bool, nargs: int, numbers: tuple[int, ...], target: Version, site: Site):
    if name not in surface.names:
        return Answer("no", f"no: {name} is not an aten op"), []
    call = Call(site.file, site.line, name, name, method, nargs, numbers)
    if not surface.is_aten(call):
        return Answer("no", f"no: {name} is not an aten op"), []
    return surface.answer(call, target)


def _worst(cells: list[Cell]) -> Cell:
    order = {s: i for i, s in enumerate(("yes", "overlay", "varies", "from", "removed", "no"))}
    return max(cells, key=lambda c: order.get(c.status, 99))


def answer(sites: list[Site], surface, targets: list[Version]) -> list[Row]:
    rows = []
    for s in sites:
        row = _row(s, surface, targets)
        if row is not None:
            rows.append(row)
    return rows


def _obj(s: Site) -> str:
    return "t"


def _row(s: Site, surface, targets: list[Version]) -> Row | None:
    k = s.kind
    if k == "call":
        cells, names = [], []
        for t in targets:
            a, names = _op_cell(surface, s.key, False, s.nargs, s.numbers, t, s)
            cells.append(Cell(a.status if a.status != "not-aten" else "no", a.text))
        if all(c.text.endswith("is not an aten op") for c in cells):
            return None  # an ATen helper that is not an op (at::native::..., ...): not a port's concern here
        return Row(s, s.written, (s.key,), f"torch::stable::{s.key}(...)", cells, fix=True, overloads=names)
    if k == "method":
        cells, names = [], []
        for t in targets:
            a, names = _op_cell(surface, s.key, True, s.nargs, s.numbers, t, s)
            cells.append(Cell(a.status, a.text))
        aten = not all(c.text.endswith("is not an aten op") for c in cells)
        if not aten:
            cells = [Cell("no", "no: an ATen Tensor member with no stable equivalent")] * len(targets)
        return Row(s, s.written, (s.key,) if aten else (), f"torch::stable::{s.key}(t, ...)" if aten else "none",
                   cells, fix=aten, overloads=names)
    if k == "member":
        name = rules.member_name(s.key)
        since = rules.members()[name]
        cells = [Cell("yes", "yes (member)") if Version.parse(since) <= t else Cell("from", f"from {since} (member)")
                 for t in targets]
        return Row(s, s.written, (), f"t{s.form or '.'}{name}()", cells, fix=name != s.key)
    if k == "template":
        rule = rules.template(s.key)
        rep = rule.replace.format(t="t", T=rules.rename_types(s.targs) if s.targs else "T")
        return Row(s, s.written, rule.ops, rep, [_since(rule, t) for t in targets], fix=rule.fix,
                   note=rule.note or "")
    if k == "operator":
        ops = _operator_ops(s)
        cells = []
        nargs = 1 if s.key in ("unary -", "~") else 2
        for t in targets:
            got = [_op_cell(surface, op, True, nargs if i == len(ops) - 1 else 2,
                            (1,) if s.form == "scalar" else (), t, s)[0] for i, op in enumerate(ops)]
            cells.append(_worst([Cell(a.status, a.text) for a in got]))
        form = {"tensor": "Tensor, Tensor", "scalar": "Tensor, number", "reverse": "number, Tensor"}.get(s.form, "")
        if nargs == 1:
            form = "Tensor"
        sym = s.key.replace("unary ", "")
        return Row(s, f"operator{sym} ({form})", ops, f"{rules.load()['operators_header']}: "
                   + " -> ".join(f"torch::stable::{o}" for o in ops), cells, fix=True)
    if k == "type":
        rule = rules.type_rule(s.key)
        return Row(s, s.written if s.written == s.key else f"{s.written} ({s.key})", (), rule.replace or "none",
                   [_since(rule, t) for t in targets], fix=rule.fix, note=rule.note or "")
    if k == "constant":
        number = rules.value(s.key)
        named = rules.name_rule(s.key)
        rep = (number if number is not None else named["replace"] if named is not None
               else f"torch::headeronly::ScalarType::{rules.constant(s.key)}")
        return Row(s, s.written, (), rep, [Cell("yes", "yes")] * len(targets), fix=True)
    if k == "macro":
        rule = macros.rule(s.key)
        rep = rule.replace or "none"
        note = rule.note or ""
        return Row(s, s.key, (), rep, [_since(rule, t) for t in targets], fix=rule.fix, note=note)
    if k == "include":
        heads = rules.header(s.key)
        return Row(s, f"#include <{s.key}>", (), ", ".join(heads), [Cell("yes", "yes")] * len(targets), fix=True)
    if k == "rule":
        rule = rules.call_rule(s.key) or rules.call_rule(s.key.split("(")[0])
        if rule is None:
            return None
        return Row(s, s.written, rule.ops, rule.replace or "none", [_since(rule, t) for t in targets],
                   fix=bool(rule.fix and (rule.call or rule.form)), note=rule.note or rule.none or "")
    if k == "hazard":
        h = rules.hazard(s.key)
        return Row(s, s.written, tuple(h.get("ops", ())), h["replace"], [Cell("hazard", "hazard")] * len(targets),
                   fix=True, note=h["what"])
    return None
