"""Which stable C functions each torch release's libtorch exports (data/libtorch_exports.json).

A stable C function is a name matching `^(aoti_torch_|torch_)` that a release's libtorch defines in its dynamic
symbol table (`nm -D --defined-only`). The data is measured, never typed: `python -m shimgen.dev exports --write`
(shimgen.proofs.libtorch_exports) reads each torch runtime found and records, per library group, the releases
measured and, for each function, the releases whose libraries export it. Two groups:

    libtorch        libtorch_cpu.so and libtorch.so: the CPU and base C functions every wheel has
    libtorch_cuda   libtorch_cuda.so: the CUDA shims (`aoti_torch_cuda_*`, the CUDA guards and streams), measured
                    only on the runtimes whose wheel has it (a CPU wheel has none: that release is unmeasured there)

The file is compact and sorted: each function's releases as ranges over its group's measured releases
(`"2.10-2.15"`; `"2.9-2.10,2.12-2.15"` where one release lacks it), one function per line.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_text
from shimgen.facts.versions import Version

DATA = "data/libtorch_exports.json"
STABLE_NAME = re.compile(r"^(aoti_torch_|torch_)")
# group -> the libraries of a torch/lib folder it reads; the group is measured on a runtime when its first library
# is there
GROUPS: dict[str, tuple[str, ...]] = {
    "libtorch": ("libtorch_cpu.so", "libtorch.so"),
    "libtorch_cuda": ("libtorch_cuda.so",),
}
# group -> the libraries through which an extension reaches its functions: the loader resolves an extension's
# symbols in the libraries it names as needed (DT_NEEDED) and in theirs, not in what `import torch` loaded (torch._C
# is loaded RTLD_LOCAL). libtorch.so needs libtorch_cpu.so, and libtorch_cuda.so in CUDA builds
# (tests/test_audit.py checks this against each runtime).
REACHED_THROUGH: dict[str, tuple[str, ...]] = {
    "libtorch": ("libtorch_cpu.so", "libtorch.so"),
    "libtorch_cuda": ("libtorch_cuda.so", "libtorch.so"),
}
# group -> the builds of a release whose wheels have its libraries (a group not named: every build has them)
ONLY_IN: dict[str, str] = {
    "libtorch_cuda": "CUDA builds of torch",
}


@dataclass(frozen=True)
class Group:
    releases: tuple[Version, ...]  # the releases whose libraries were measured, oldest first
    symbols: dict[str, frozenset[Version]]  # function -> the releases (of `releases`) exporting it


@dataclass(frozen=True)
class Exports:
    runtimes: dict[Version, str]  # release -> the runtime measured for it (X.Y.Z)
    groups: dict[str, Group]

    @property
    def releases(self) -> tuple[Version, ...]:
        return tuple(sorted(self.runtimes))

    def lookup(self, name: str) -> tuple[str, Group] | None:
        """The group that records `name` (its library), or None: no recorded release exports it."""
        for group_name, group in self.groups.items():
            if name in group.symbols:
                return group_name, group
        return None

    def exported_by(self, release: Version) -> dict[str, set[str]]:
        """group -> the functions `release`'s libraries export, for the groups measured on it."""
        return {g: {s for s, rs in group.symbols.items() if release in rs}
                for g, group in self.groups.items() if release in group.releases}


# ---- measuring -------------------------------------------------------------------------------------------------


def defined_symbols(library: str) -> set[str]:
    """The dynamic symbols a shared library defines (`nm -D --defined-only`)."""
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ShimgenError(f"nm -D --defined-only {library} failed: {e}") from None
    names = set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts:
            names.add(parts[-1].split("@")[0])
    return names


def measure(torch_lib: str) -> dict[str, set[str]]:
    """group -> the stable C functions the libraries of a torch/lib folder export, for each group whose first
    library is there."""
    found = {}
    for group, libraries in GROUPS.items():
        if not os.path.isfile(os.path.join(torch_lib, libraries[0])):
            continue
        names: set[str] = set()
        for lib in libraries:
            path = os.path.join(torch_lib, lib)
            if os.path.isfile(path):
                names |= {n for n in defined_symbols(path) if STABLE_NAME.match(n)}
        found[group] = names
    return found


def build(measured: dict[Version, tuple[str, dict[str, set[str]]]]) -> Exports:
    """The data from each release's measurement (release -> (runtime X.Y.Z, group -> functions))."""
    groups = {}
    for group in GROUPS:
        rels = tuple(sorted(r for r, (_, m) in measured.items() if group in m))
        symbols: dict[str, set[Version]] = {}
        for r in rels:
            for name in measured[r][1][group]:
                symbols.setdefault(name, set()).add(r)
        groups[group] = Group(rels, {s: frozenset(v) for s, v in symbols.items()})
    return Exports({r: rt for r, (rt, _) in measured.items()}, groups)


def merge(old: Exports, new: Exports) -> Exports:
    """`old` with each (release, group) `new` measured replaced by `new`'s measurement: a runtime not found today
    keeps its recorded exports, and so does a group today's runtime lacks (a CPU wheel's libtorch_cuda, recorded
    from the release's CUDA wheel with `exports --lib`)."""
    measured: dict[Version, tuple[str, dict[str, set[str]]]] = {}
    for data in (old, new):
        for r in data.releases:
            kept = measured[r][1] if r in measured else {}
            measured[r] = (data.runtimes[r], {**kept, **data.exported_by(r)})
    return build(measured)


# ---- the file --------------------------------------------------------------------------------------------------


def ranges(releases: frozenset[Version], over: tuple[Version, ...]) -> str:
    """`2.10-2.15`, `2.9-2.10,2.12-2.15`: the runs of `releases` within the ordered `over`."""
    runs: list[list[Version]] = []
    previous_in = False
    for r in over:
        if r in releases:
            if previous_in:
                runs[-1][1] = r
            else:
                runs.append([r, r])
        previous_in = r in releases
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def parse_ranges(text: str, over: tuple[Version, ...], what: str) -> frozenset[Version]:
    found: set[Version] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        lo, hi = Version.parse(first, what), Version.parse(last or first, what)
        if lo not in over or hi not in over or hi < lo:
            raise ShimgenError(f"{what}: {part!r} is not a range of the measured releases")
        found |= {r for r in over if lo <= r <= hi}
    return frozenset(found)


def dumps(data: Exports) -> str:
    """The file's text: deterministic, one function per line."""
    lines = ["{",
             ' "about": "the stable C functions (^(aoti_torch_|torch_)) each release\'s libtorch exports, measured '
             'by python -m shimgen.dev exports --write",',
             ' "runtimes": {' + ", ".join(f'"{r}": "{data.runtimes[r]}"' for r in data.releases) + "},",
             ' "groups": {']
    names = list(GROUPS)
    for i, g in enumerate(names):
        group = data.groups[g]
        lines.append(f'  "{g}": {{')
        lines.append(f'   "libraries": {json.dumps(list(GROUPS[g]))},')
        lines.append(f'   "releases": {json.dumps([str(r) for r in group.releases])},')
        lines.append('   "symbols": {')
        items = sorted(group.symbols.items())
        for j, (s, rs) in enumerate(items):
            lines.append(f'    "{s}": "{ranges(rs, group.releases)}"{"," if j + 1 < len(items) else ""}')
        lines.append("   }")
        lines.append("  }" + ("," if i + 1 < len(names) else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def loads(text: str, what: str = DATA) -> Exports:
    raw = json.loads(text)
    runtimes = {Version.parse(r, what): str(rt) for r, rt in raw["runtimes"].items()}
    groups = {}
    for g in GROUPS:
        entry = raw["groups"].get(g, {"releases": [], "symbols": {}})
        rels = tuple(sorted(Version.parse(r, what) for r in entry["releases"]))
        groups[g] = Group(rels, {s: parse_ranges(v, rels, f"{what}: {s}") for s, v in entry["symbols"].items()})
    return Exports(runtimes, groups)


@functools.cache
def load() -> Exports:
    return loads(package_text(DATA))


def data_path() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DATA)
