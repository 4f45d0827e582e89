"""The rule of a macro call: data/port_rules.yaml's `macros` table by name, else an ATen dispatch macro read by
its grammar (shimgen.tools.porting.dispatch, which reads the `dispatch` table)."""

from __future__ import annotations

from shimgen.tools.porting import dispatch, rules


def rule(name: str) -> rules.Rule | None:
    macros = rules.load()["macros"]
    if name in macros:
        return rules.Rule.of(macros[name])
    return dispatch.rule(name)
