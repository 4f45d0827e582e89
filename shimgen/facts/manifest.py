"""The manifest (data/manifest.yaml): the default op set and the release each op's C shim first shipped in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import load_yaml, package_yaml, read_text
from shimgen.facts.versions import Version


@dataclass(frozen=True)
class Entry:
    since: Version
    upstream: bool  # libtorch itself ships the C shim (from `since` on)
    # For a libtorch shim: the release each later `_v<N>` shim first shipped in (`v2: "2.13"`); the arguments of
    # each version come from the release history. A version not listed is not in libtorch.
    versions: dict[int, Version] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    entries: dict[str, Entry]

    @property
    def default_ops(self) -> list[str]:
        return sorted(self.entries)

    def since(self, op: str, fallback: Version) -> Version:
        entry = self.entries.get(op)
        return entry.since if entry else fallback

    def upstream_shim(self, op: str, target: Version) -> bool:
        """Does the libtorch of release `target` ship this op's C shim?"""
        entry = self.entries.get(op)
        return bool(entry and entry.upstream and entry.since <= target)


def load(path: str | None = None) -> Manifest:
    raw = (package_yaml("data/manifest.yaml") if path is None else load_yaml(read_text(path, "manifest"))) or {}
    entries = {}
    for op, e in (raw.get("ops") or {}).items():
        if not isinstance(e, dict) or "since" not in e:
            raise ShimgenError(f"manifest entry needs `since`", op)
        versions = {
            int(k[1:]): Version.parse(v, f"{k} of {op}") for k, v in e.items() if re.fullmatch(r"v\d+", str(k))
        }
        unknown = set(e) - {"since", "upstream"} - {f"v{n}" for n in versions}
        if unknown:
            raise ShimgenError(f"manifest entry has unknown fields {sorted(unknown)}", op)
        entries[op] = Entry(Version.parse(e["since"], f"since of {op}"), bool(e.get("upstream", False)), versions)
    return Manifest(entries)
