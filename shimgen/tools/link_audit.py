"""The audit the build integrations run after linking (shimgen.setuptools, the CMake package's shimgen_generate):
`shimgen audit` (shimgen.tools.audit) of the library just linked, against the build's target, reduced to one line.

On by default. Turned off by `[tool.shimgen] audit = false` (setuptools), the CMake option `SHIMGEN_AUDIT=OFF`
or `shimgen_generate(... NO_AUDIT)`, or for any build by the environment variable SHIMGEN_AUDIT=0 (ENV_OFF; the
variable also accepts the values of ENV_ON, which leave the build's own setting in force). It reads the binary and
the recorded exports only: no torch import, well under a second per library.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from shimgen.base.errors import ShimgenError
from shimgen.facts import libtorch_exports
from shimgen.facts.versions import Version
from shimgen.tools import audit, binaries

ENV = "SHIMGEN_AUDIT"
ENV_OFF = ("0", "false", "no", "off")
ENV_ON = ("1", "true", "yes", "on", "")
# How each integration turns it off, as its failure line names it.
OPT_OUT = {
    "setuptools": f"[tool.shimgen] audit = false or {ENV}=0 skips this check",
    "cmake": f"-D{ENV}=OFF or {ENV}=0 skips this check",
}


@dataclass(frozen=True)
class Outcome:
    ok: bool
    line: str  # `LIBRARY: <the audit's verdict>`


def enabled(setting: bool = True) -> bool:
    """Whether the build audits its libraries: the build's own setting, unless SHIMGEN_AUDIT says 0."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ENV_OFF:
        return False
    if value not in ENV_ON:
        raise ShimgenError(f"{ENV}={os.environ[ENV]!r}: expected 0 or 1")
    return setting


def check(library: str, target: Version | None) -> Outcome:
    """The audit of one linked library against `target` (None: from the oldest release it loads on)."""
    exports = libtorch_exports.load()
    if target is not None and target > exports.releases[-1]:  # a release newer than the recorded exports: the
        target = exports.releases[-1]  # newest recorded is the best judge there is
    with binaries.opened([library]) as found:
        reports = [audit.classify(b, target, exports) for b in found]
    bad = [r for r in reports if not r.ok]
    shown = bad[0] if bad else reports[0]
    return Outcome(not bad, f"{shown.binary.name}: {shown.verdict}")


def failure(outcome: Outcome, integration: str) -> str:
    """The one line a build stops with."""
    return f"{outcome.line} (the audit after linking; {OPT_OUT[integration]})"
