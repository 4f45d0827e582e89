"""The torch releases shimgen knows (data/releases.yaml): the runtimes of the matrix and the probe, the installed
torch CI tests against, and the release facts the emitters and --verify read (headers floor, error text)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from shimgen.inputs import package_yaml
from shimgen.versions import Version

DATA = "data/releases.yaml"


@dataclass(frozen=True)
class Releases:
    runtimes: tuple[str, ...]  # X.Y.Z, oldest first
    ci_runtimes: tuple[str, ...]
    installed: str  # X.Y.Z
    headers_floor: Version
    error_text_since: Version


@functools.cache
def load() -> Releases:
    raw = package_yaml(DATA)
    return Releases(
        runtimes=tuple(str(r) for r in raw["runtimes"]),
        ci_runtimes=tuple(str(r) for r in raw["ci_runtimes"]),
        installed=str(raw["installed"]),
        headers_floor=Version.parse(raw["headers_floor"], "headers_floor in data/releases.yaml"),
        error_text_since=Version.parse(raw["error_text_since"], "error_text_since in data/releases.yaml"),
    )
