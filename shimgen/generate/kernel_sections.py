"""The sections of shimgen/cxx/scalar.h: one plain C++ template, split at generation time into
torch/csrc/stable/shimgen/scalar.h (core: shimgen::Scalar and the rules every number-taking wrapper uses) and one
header per kernel section, torch/csrc/stable/shimgen/kernels/<name>.h, so that a per-op header pays only for the
kernels its wrappers call (one op costs what upstream's header costs).

A section starts at a marker line directly above its `// ---- ` heading and runs to the next marker:

    // @section <name>
    // @section <name> needs <earlier section> [<earlier section> ...]

`needs` names the earlier sections whose helpers the section calls (its header includes theirs); the text before
the first marker, and a section named `core`, are core, which every header has. Which sections a header includes
comes from the helpers its bodies name (`shimgen::detail::<helper>`), looked up in the names each section defines,
as the C shims a per-op header declares come from the calls its bodies make. Every `// ---- ` heading must carry
a marker: a section added without one is an error naming its line (tests/test_kernel_sections.py), never code
that silently lands in the section above it or in core."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from shimgen.base.inputs import package_text

TEMPLATE = "cxx/scalar.h"
HEADERS = "torch/csrc/stable/shimgen/kernels/"
CORE = "core"
CLOSE = "} // namespace detail\n} // namespace shimgen\n"  # how the template ends (each header closes the same)

_MARKER = re.compile(r"// @section (\w+)(?: needs((?: \w+)+))?")
_HEADING = "// ---- "
_DIRECTIVE = re.compile(r"(?<=\n)// (?:@section|---- )[^\n]*")  # after a newline: a fast literal search
_HELPER_USE = re.compile(r"\bshimgen::detail::(\w+)")


class SectionError(ValueError):
    """cxx/scalar.h breaks the section rules (a kernel heading without a marker, an unknown need, ...)."""


@dataclass(frozen=True)
class Section:
    name: str
    needs: tuple[str, ...]
    text: str  # from its `// ---- ` heading to the next marker (the marker line itself left out)
    defines: frozenset[str]  # the names it defines at namespace scope (functions, types, constants)


@dataclass(frozen=True)
class Split:
    core: str  # the core header's text (before the banner): the template without its kernel sections
    sections: tuple[Section, ...]  # in template order (a section's needs come before it)
    owners: dict[str, tuple[str, ...]]  # a helper name -> the kernel sections defining it (core's names absent)

    def section(self, name: str) -> Section:
        return next(s for s in self.sections if s.name == name)

    def used_by(self, texts) -> list[str]:
        """The kernel sections whose helpers `texts` (wrapper bodies) name, in template order."""
        names = {s for text in texts for h in _HELPER_USE.findall(text) for s in self.owners.get(h, ())}
        return [s.name for s in self.sections if s.name in names]

    def closure(self, names) -> list[str]:
        """`names` and every section they need, directly or not, in template order."""
        todo, seen = list(names), set()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += self.section(name).needs
        return [s.name for s in self.sections if s.name in seen]


def header(name: str) -> str:
    """The output path of kernel section `name`."""
    return f"{HEADERS}{name}.h"


def defined_names(text: str) -> set[str]:
    """The names a section's text defines at namespace scope: clang-format's layout starts each such
    declaration in the first column (`inline T name(`, `struct name`, `using name =`, `constexpr T name =`)."""
    names = set()
    for line in _DECLARATION_LINE.findall(text):
        line = _ATTRIBUTES.sub("", line)
        m = _TYPE_NAME.match(line) or _DECLARED_NAME.search(line)
        if m:
            names.add(m.group(1) or m.group(2))
    return names


_DECLARATION_LINE = re.compile(r"^(?![ /#{}]|template\b|namespace\b)(.+)$", re.M)
_ATTRIBUTES = re.compile(r"^\[\[\w+\]\]\s*|\bSHIMGEN_HIDDEN\s+")
_TYPE_NAME = re.compile(r"(?:(?:struct|class|union|enum(?: class)?)\s+(\w+))|(?:using\s+(\w+)\s*=)")
_DECLARED_NAME = re.compile(r"(\w+)()\s*[(=\[{;]")


def split(template: str) -> Split:
    """The template's core and kernel sections; SectionError where it breaks the rules above."""
    if not template.endswith(CLOSE):
        raise SectionError(f"{TEMPLATE} must end with {CLOSE!r}")
    body = template[: -len(CLOSE)]
    core: list[str] = []
    found: list[tuple[str, tuple[str, ...], str]] = []
    start, marker_end = 0, -1  # where the current section's text (core first) starts; where its marker ends
    for m in _DIRECTIVE.finditer(body):  # marker and heading lines only: the rest is copied as it is
        line = m.group(0)
        where = _Where(body, m.start())  # the line, for the errors below
        marker = _MARKER.fullmatch(line)
        if line.startswith(_HEADING):
            if marker_end != m.start():
                raise SectionError(f"{where}: section `{line}` has no marker: add `// @section <name> [needs "
                                   "<earlier section>...]` directly above it (its helpers then go into "
                                   "torch/csrc/stable/shimgen/kernels/<name>.h)")
            continue
        if marker is None:
            raise SectionError(f"{where}: `{line}` is not `// @section <name> [needs <name>...]`")
        if not body.startswith(_HEADING, m.end() + 1):
            raise SectionError(f"{where}: `{line}` must be directly above its `{_HEADING.strip()}` heading")
        name, needs = marker.group(1), tuple((marker.group(2) or "").split())
        known = [n for n, _, _ in found]
        if name == CORE and (needs or known):
            raise SectionError(f"{where}: the core section comes first and needs nothing")
        if name in known:
            raise SectionError(f"{where}: section `{name}` is marked twice")
        for need in needs:
            if need not in known:
                raise SectionError(f"{where}: section `{name}` needs `{need}`, which is not a section above it "
                                   f"({', '.join(known) or 'none'})")
        text = body[start : m.start()]
        if found:
            found[-1] = (*found[-1][:2], text)
        else:
            core.append(text)
        if name != CORE:
            found.append((name, needs, ""))
        start = marker_end = m.end() + 1  # the section's text starts after its marker line
    if found:
        found[-1] = (*found[-1][:2], body[start:])
    else:
        core.append(body[start:])
    sections = tuple(Section(n, needs, text, frozenset(defined_names(text))) for n, needs, text in found)
    core_names = defined_names("".join(core))
    owners: dict[str, tuple[str, ...]] = {}
    for s in sections:
        for name in sorted(s.defines - core_names):
            owners[name] = (*owners.get(name, ()), s.name)
    return Split("".join(core) + CLOSE, sections, owners)


class _Where:
    """`cxx/scalar.h:<line>` of a position, counted only where an error names it."""

    def __init__(self, text: str, pos: int) -> None:
        self.text, self.pos = text, pos

    def __str__(self) -> str:
        return f"{TEMPLATE}:{self.text.count(chr(10), 0, self.pos) + 1}"


@functools.lru_cache(maxsize=None)
def load() -> Split:
    return split(package_text(TEMPLATE))
