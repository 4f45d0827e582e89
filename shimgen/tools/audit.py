"""`shimgen audit PATH...`: which torch releases a built extension loads on, read from the binary itself.

Each shared object (named, inside a wheel, or found in a folder: shimgen.tools.binaries) is read for its undefined
dynamic symbols, sorted into

    stable C ABI      aoti_torch_* / torch_* C functions: each with the releases whose libtorch exports it
                      (data/libtorch_exports.json, measured by `python -m shimgen.dev exports`)
    C++ (libtorch)    mangled names in at::, c10::, torch::, caffe2:: (vtables and typeinfo included): libtorch's
                      C++ ABI, which changes with every release: the binary is sure to load only on the torch it was
                      built with
    Python C API      Py* / _Py*: reported, with the limited API's verdict where abi3info (abi3audit's data) is
                      installed; not part of the torch verdict
    other             libc, libstdc++, ...: the highest symbol version of each family it needs (GLIBC, GLIBCXX)

and judged: one line per binary, `loads on torch 2.10-2.15`, or what blocks which release. Exit status 0 when every
binary loads on every release from its target (--target, else [tool.shimgen]'s, else the oldest release it loads
on) to the newest recorded; 1 when one needs a newer torch than its target, uses libtorch's C++ ABI, calls a
function no recorded libtorch exports or one in a library it does not link (its DT_NEEDED: where the loader looks),
or misses a release in its range; 2 on bad input (one line, nothing else).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from shimgen.facts import libtorch_exports, releases
from shimgen.facts.versions import Version
from shimgen.tools import binaries

JSON_FORMAT = 1  # the "format" of --json's object; raised when a key changes meaning or goes away
_TORCH_CXX = re.compile(r"(?<![\w:])(?:at|c10|torch|caffe2)::")
_TORCH_MANGLED = re.compile(r"^_Z(?:T[VISHT]|GV|TT)?N?[KVRO]*(?:2at|3c10|5torch|6caffe2)\d")
SHOWN = 3  # names a verdict line shows before "and N more"


@dataclass(frozen=True)
class StableUse:
    name: str
    weak: bool
    group: str | None  # the library group recording it; None: no recorded libtorch exports it
    releases: frozenset[Version]  # the recorded releases exporting it
    measured: tuple[Version, ...]  # the releases its group was measured on

    def status(self, r: Version) -> bool | None:
        """Does release r's libtorch export it: True, False, or None (its library not measured on r)."""
        if r in self.releases:
            return True
        return False if self.group is None or r in self.measured else None


@dataclass
class Report:
    binary: binaries.Binary
    target: Version | None
    stable: list[StableUse] = field(default_factory=list)
    cxx: list[tuple[str, str]] = field(default_factory=list)  # (mangled, demangled)
    python: list[tuple[str, str | None]] = field(default_factory=list)  # (name, limited API since, or None)
    other: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)  # GLIBC -> 2.14
    needed: list[str] = field(default_factory=list)  # the libraries it names as needed (DT_NEEDED)
    loads_on: list[Version] = field(default_factory=list)
    unmeasured: list[tuple[Version, str]] = field(default_factory=list)  # (release, group) taken on trust
    variant_groups: list[str] = field(default_factory=list)  # groups only some builds of a release have (ONLY_IN)
    problems: list[str] = field(default_factory=list)
    verdict: str = ""
    limited_api_known: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


@functools.cache
def limited_api() -> dict[str, str] | None:
    """name -> the Python release that added it to the stable ABI (abi3info, abi3audit's data); None when it is
    not installed."""
    try:
        from abi3info import DATAS, FUNCTIONS  # type: ignore[import-untyped]
    except ImportError:
        return None
    return {s.name: str(v.added) for table in (FUNCTIONS, DATAS) for s, v in table.items()}


def _short(demangled: str) -> str:
    """A C++ name as a verdict shows it: without its parameters (`c10::detail::torchCheckFail`)."""
    depth, cut = 0, len(demangled)
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    return demangled[:cut]


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _span(rs: list[Version] | tuple[Version, ...] | frozenset[Version]) -> str:
    rs = sorted(rs)
    return "none" if not rs else str(rs[0]) if len(rs) == 1 else f"{rs[0]}-{rs[-1]}"


def classify(binary: binaries.Binary, target: Version | None, exports: libtorch_exports.Exports) -> Report:
    rep = Report(binary, target)
    symbols = binaries.undefined(binary)
    mangled = [s.name for s in symbols if s.name.startswith("_Z")]
    shown = binaries.demangle(mangled)
    api = limited_api()
    rep.limited_api_known = api is not None
    for s in symbols:
        if libtorch_exports.STABLE_NAME.match(s.name):
            found = exports.lookup(s.name)
            group, data = found if found else (None, None)
            rep.stable.append(StableUse(s.name, s.weak, group, data.symbols[s.name] if data else frozenset(),
                                        data.releases if data else ()))
        elif s.name.startswith("_Z") and (_TORCH_MANGLED.match(s.name) or _TORCH_CXX.search(shown[s.name])):
            rep.cxx.append((s.name, shown[s.name]))
        elif s.name.startswith(("Py", "_Py")):
            rep.python.append((s.name, api.get(s.name) if api is not None else None))
        else:
            rep.other.append(s.name)
    rep.versions = binaries.needed_versions(binary)
    rep.needed = binaries.needed_libraries(binary)
    judge(rep, exports.releases)
    return rep


def judge(rep: Report, recorded: tuple[Version, ...]) -> None:
    """Fill in the releases the binary loads on, what blocks its range and the verdict line."""
    newest = recorded[-1]
    required = [u for u in rep.stable if not u.weak]
    rep.loads_on = [r for r in recorded if all(u.status(r) is not False for u in required)] if not rep.cxx else []
    problems = []
    if rep.cxx:
        names = sorted(dict.fromkeys(_short(d) for _, d in rep.cxx))
        problems.append(f"sure to load only on the torch it was built with: {len(rep.cxx)} C++ symbol"
                        f"{'s' if len(rep.cxx) != 1 else ''} outside the stable ABI ({_names(names)})")
    unknown = [u.name for u in required if u.group is None]
    if unknown:
        problems.append(f"exported by no recorded libtorch ({_span(recorded)}): {_names(unknown)}")
    unreached: dict[str, list[str]] = {}  # group -> its functions the binary cannot reach (REACHED_THROUGH)
    for u in required:
        if u.group is not None and not set(libtorch_exports.REACHED_THROUGH[u.group]) & set(rep.needed):
            unreached.setdefault(u.group, []).append(u.name)
    for g, names in sorted(unreached.items()):
        problems.append(f"loads on no torch: it calls {_names(names)} but links none of "
                        f"{', '.join(libtorch_exports.REACHED_THROUGH[g])} (its DT_NEEDED), where the loader would "
                        "find them")
    if unreached:
        rep.loads_on = []
    if not rep.cxx and not unknown and not unreached:
        start = rep.target or (rep.loads_on[0] if rep.loads_on else recorded[0])
        span = [r for r in recorded if start <= r <= newest]
        needs: dict[Version, list[str]] = {}
        dropped: dict[Version, list[str]] = {}
        gaps: dict[Version, list[str]] = {}
        for u in required:
            missing = [r for r in span if u.status(r) is False]
            if not missing:
                continue
            first, last = min(u.releases), max(u.releases)
            if any(r < first for r in missing):
                needs.setdefault(first, []).append(u.name)
            if any(r > last for r in missing):
                dropped.setdefault(last, []).append(u.name)
            for r in missing:
                if first < r < last:
                    gaps.setdefault(r, []).append(u.name)
        if needs:
            at = max(needs)
            names = [n for r in sorted(needs, reverse=True) for n in needs[r]]
            why = f" (target {rep.target})" if rep.target else ""
            problems.append(f"needs torch >= {at}{why}: {_names(names)}")
        for last in sorted(dropped):
            after = next(r for r in recorded if r > last)
            problems.append(f"not on torch >= {after}: {_names(dropped[last])} (last exported by {last})")
        for r in sorted(gaps):
            problems.append(f"not on torch {r}: {_names(gaps[r])}")
        if not rep.loads_on and not problems:
            problems.append("loads on no recorded torch release")
    rep.problems = problems
    rep.unmeasured = sorted({(r, u.group) for u in required for r in rep.loads_on
                             if u.group is not None and u.status(r) is None})
    rep.variant_groups = sorted({u.group for u in required if u.group in libtorch_exports.ONLY_IN})
    if problems:
        rep.verdict = "; ".join(problems)
        return
    lo = newest
    for r in reversed(recorded):
        if r not in rep.loads_on:
            break
        lo = r
    rep.verdict = f"loads on torch {lo}-{newest}" if lo != newest else f"loads on torch {newest}"
    if rep.target:
        rep.verdict += f" (target {rep.target})"
    for g in rep.variant_groups:  # e.g. libtorch_cuda.so: a CPU build of the same release refuses the binary
        rep.verdict += f"; {libtorch_exports.ONLY_IN[g]} only ({'+'.join(libtorch_exports.GROUPS[g])})"
    if rep.unmeasured:
        by_group: dict[str, list[Version]] = {}
        for r, g in rep.unmeasured:
            by_group.setdefault(g, []).append(r)
        rep.verdict += "; " + ", ".join(f"{'+'.join(libtorch_exports.GROUPS[g])} of {', '.join(map(str, rs))} "
                                        "not measured" for g, rs in sorted(by_group.items()))


# ---- output -----------------------------------------------------------------------------------------------------


def text(reports: list[Report], show_symbols: bool) -> list[str]:
    """The report for people: the verdict line, then a line per kind of symbol (with --symbols, each symbol under
    its kind)."""
    lines = []
    for rep in reports:
        lines.append(f"{rep.binary.name}: {rep.verdict}")
        stable = [u for u in rep.stable if u.group is not None]
        newest = max(stable, key=lambda u: (min(u.releases), u.name), default=None)
        lines.append(f"  stable C ABI: {_count(rep.stable, 'function')}"
                     + (f"; newest: {newest.name} ({_span(newest.releases)})" if newest else ""))
        if show_symbols:
            width = max([len(u.name) for u in rep.stable] + [0])
            lines += [f"    {u.name:<{width}}  {_span(u.releases) if u.group else 'no recorded release'}"
                      f"{' (weak)' if u.weak else ''}" for u in rep.stable]
        lines.append(f"  C++ outside the stable ABI: {_count(rep.cxx, 'symbol')}")
        if show_symbols:
            lines += [f"    {d}" for _, d in rep.cxx]
        lines.append(f"  Python C API: {_python_line(rep)}")
        if show_symbols:
            lines += [f"    {n}" + (f"  limited API {s}" if s else "  not in the limited API" if rep.limited_api_known
                                    else "") for n, s in rep.python]
        versions = ", ".join(f"{f} {v}" for f, v in rep.versions.items())
        lines.append(f"  other: {_count(rep.other, 'symbol')}" + (f"; needs {versions}" if versions else ""))
        if show_symbols:
            lines += [f"    {n}" for n in rep.other]
    if len(reports) > 1:
        blocked = sum(not r.ok for r in reports)
        lines.append(f"{len(reports)} binaries: {len(reports) - blocked} load on their whole range, {blocked} do not")
    return lines


def _count(items: list, noun: str) -> str:
    return "none" if not items else f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"


def _python_line(rep: Report) -> str:
    if not rep.python:
        return "none"
    n = f"{len(rep.python)} symbol{'s' if len(rep.python) != 1 else ''}"
    if not rep.limited_api_known:
        return f"{n} (abi3info not installed: not checked against the limited API)"
    outside = [name for name, since in rep.python if since is None]
    if outside:
        return f"{n}, {len(outside)} outside the limited API ({_names(outside)})"
    newest = max((tuple(int(x) for x in s.split(".")) for _, s in rep.python if s), default=None)
    return f"{n}, all in the limited API" + (f" (Python >= {'.'.join(map(str, newest))})" if newest else "")


def as_json(reports: list[Report], recorded: tuple[Version, ...]) -> dict:
    """--json's object (docs/audit.md "JSON")."""
    return {
        "format": JSON_FORMAT,
        "releases": [str(r) for r in recorded],
        "ok": all(r.ok for r in reports),
        "binaries": [{
            "path": rep.binary.path,
            "member": rep.binary.member,
            "target": str(rep.target) if rep.target else None,
            "ok": rep.ok,
            "verdict": rep.verdict,
            "loads_on": [str(r) for r in rep.loads_on],
            "problems": rep.problems,
            "unmeasured": [{"release": str(r), "libraries": list(libtorch_exports.GROUPS[g])}
                           for r, g in rep.unmeasured],
            "variant_libraries": [lib for g in rep.variant_groups for lib in libtorch_exports.GROUPS[g]],
            "stable": [{"name": u.name, "weak": u.weak,
                        "first": str(min(u.releases)) if u.releases else None,
                        "last": str(max(u.releases)) if u.releases else None,
                        "releases": [str(r) for r in sorted(u.releases)],
                        "libraries": list(libtorch_exports.GROUPS[u.group]) if u.group else None}
                       for u in rep.stable],
            "cxx": [{"name": m, "demangled": d} for m, d in rep.cxx],
            "python": [{"name": n, "limited_api_since": s} for n, s in rep.python],
            "python_checked": rep.limited_api_known,
            "other": rep.other,
            "versions": rep.versions,
            "needed": rep.needed,
        } for rep in reports],
    }
