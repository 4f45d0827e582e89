"""The torch releases shimgen knows (data/releases.yaml): the runtimes of the matrix and the probe, the installed
torch CI tests against, and the release facts the emitters and --verify read (headers floor, error text)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_text, package_yaml
from shimgen.facts.versions import FIRST_STABLE, Version

DATA = "data/releases.yaml"


@dataclass(frozen=True)
class Releases:
    runtimes: tuple[str, ...]  # X.Y.Z, oldest first
    ci_runtimes: tuple[str, ...]
    installed: str  # X.Y.Z
    headers_floor: Version
    error_text_since: Version
    # (release, the C function its libtorch is the first to export), oldest first: how a wrapper learns at run time
    # which release it runs on (shimgen::detail::running_release)
    libtorch_markers: tuple[tuple[Version, str], ...] = ()


@functools.cache
def load() -> Releases:
    raw = package_yaml(DATA)
    return Releases(
        runtimes=tuple(str(r) for r in raw["runtimes"]),
        ci_runtimes=tuple(str(r) for r in raw["ci_runtimes"]),
        installed=str(raw["installed"]),
        headers_floor=Version.parse(raw["headers_floor"], "headers_floor in data/releases.yaml"),
        error_text_since=Version.parse(raw["error_text_since"], "error_text_since in data/releases.yaml"),
        libtorch_markers=tuple(sorted((Version.parse(str(r), f"libtorch_markers {r} in {DATA}"), str(fn))
                                      for r, fn in (raw.get("libtorch_markers") or {}).items())),
    )


HISTORY = "data/history.json"
# history.json opens with its release list (shimgen.facts.history.dumps writes it first): read from there, without
# importing shimgen.facts.history (torchgen's model, a third of a second) or parsing the schemas.
_HISTORY_RELEASES_RE = re.compile(r'"releases":\s*(\[[^\]]*\])')


@functools.cache
def known() -> tuple[Version, ...]:
    """Every release the data knows, oldest first: the runtimes of data/releases.yaml and the releases of the
    schema history (data/history.json)."""
    import json  # start-up: only a run that checks a release reads the list

    found = {Version.parse(r, f"runtime {r} in {DATA}") for r in load().runtimes}
    m = _HISTORY_RELEASES_RE.search(package_text(HISTORY)[:4096])
    if m is not None:
        found |= {Version.parse(r, f"release {r} in {HISTORY}") for r in json.loads(m.group(1))}
    return tuple(sorted(v for v in found if v >= FIRST_STABLE))


def parse(text: object, what: str) -> Version:
    """A release a person wrote ([tool.shimgen]'s target and since, --target, --since, setuptools' target=): one
    the data knows (`known`), else a ShimgenError naming `what`, the value and the releases known. The one check
    of release numbers every surface shares."""
    v = Version.parse(text, what)
    if v < FIRST_STABLE:
        raise ShimgenError(f"bad {what} {text!r}: the stable ABI starts at {FIRST_STABLE}")
    releases = known()
    if v not in releases:
        raise ShimgenError(f"bad {what} {text!r}: not a torch release shimgen knows ({releases[0]} to "
                           f"{releases[-1]}; shimgen/{DATA}, shimgen/{HISTORY})")
    return v


def parse_list(text: str, what: str) -> list[Version]:
    """A comma-separated list of releases (`--target 2.10,2.13`), each checked by `parse`, sorted, without
    repeats; an empty list or an empty item is a ShimgenError."""
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise ShimgenError(f"{what} is empty (give releases such as 2.10,2.13)")
    if not all(items):
        raise ShimgenError(f"{what} {text!r} has an empty item")
    return sorted({parse(t, what) for t in items})
