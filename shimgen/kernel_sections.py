"""The sections of shimgen/templates/scalar.h: one plain C++ template, split at generation time into
torch/csrc/stable/shimgen/scalar.h (core: shimgen::Scalar and the rules every number-taking wrapper uses) and one
header per kernel section, torch/csrc/stable/shimgen/kernels/<name>.h, so that a per-op header pays only for the
kernels its wrappers call (issue 20: one op costs what upstream's header costs).

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

from shimgen.inputs import package_text

TEMPLATE = "templates/scalar.h"
HEADERS = "torch/csrc/stable/shimgen/kernels/"
CORE = "core"
CLOSE = "} // namespace detail\n} // namespace shimgen\n"  # how the template ends (each header closes the same)

_MARKER = re.compile(r"// @section (\w+)(?: needs((?: \w+)+))?")
_HEADING = "// ---- "
_HELPER_USE = re.compile(r"\bshimgen::detail::(\w+)")


class SectionError(ValueError):
    """templates/scalar.h breaks the section rules (a kernel heading without a marker, an unknown need, ...)."""


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
    for line in text.splitlines():
        if not line or line[0] in " /#{}" or line.startswith(("template", "namespace")):
            continue
        line = re.sub(r"^\[\[\w+\]\]\s*|\bSHIMGEN_HIDDEN\s+", "", line)
        m = (re.match(r"(?:struct|class|union|enum(?: class)?)\s+(\w+)", line) or re.match(r"using\s+(\w+)\s*=", line)
             or re.search(r"(\w+)\s*[(=\[{;]", line))
        if m:
            names.add(m.group(1))
    return names


def split(template: str) -> Split:
    """The template's core and kernel sections; SectionError where it breaks the rules above."""
    if not template.endswith(CLOSE):
        raise SectionError(f"{TEMPLATE} must end with {CLOSE!r}")
    lines = template[: -len(CLOSE)].splitlines(keepends=True)
    core: list[str] = []
    found: list[tuple[str, tuple[str, ...], list[str]]] = []
    current = core
    for k, line in enumerate(lines):
        m = _MARKER.fullmatch(line.rstrip("\n"))
        if m:
            name, needs = m.group(1), tuple((m.group(2) or "").split())
            if not lines[k + 1 :] or not lines[k + 1].startswith(_HEADING):
                raise SectionError(f"{TEMPLATE}:{k + 1}: `{line.strip()}` must be directly above its "
                                   f"`{_HEADING.strip()}` heading")
            known = [n for n, _, _ in found]
            if name == CORE:
                if needs or known:
                    raise SectionError(f"{TEMPLATE}:{k + 1}: the core section comes first and needs nothing")
                continue  # core goes on
            if name in known:
                raise SectionError(f"{TEMPLATE}:{k + 1}: section `{name}` is marked twice")
            for need in needs:
                if need not in known:
                    raise SectionError(f"{TEMPLATE}:{k + 1}: section `{name}` needs `{need}`, which is not a "
                                       f"section above it ({', '.join(known) or 'none'})")
            found.append((name, needs, []))
            current = found[-1][2]
            continue
        if line.startswith("// @section"):
            raise SectionError(f"{TEMPLATE}:{k + 1}: `{line.strip()}` is not `// @section <name> [needs <name>...]`")
        if line.startswith(_HEADING) and not (k and _MARKER.fullmatch(lines[k - 1].rstrip("\n"))):
            raise SectionError(f"{TEMPLATE}:{k + 1}: section `{line.strip()}` has no marker: add "
                               "`// @section <name> [needs <earlier section>...]` directly above it (its helpers "
                               "then go into torch/csrc/stable/shimgen/kernels/<name>.h)")
        current.append(line)
    sections = tuple(Section(n, needs, "".join(text), frozenset(defined_names("".join(text))))
                     for n, needs, text in found)
    core_names = defined_names("".join(core))
    owners: dict[str, tuple[str, ...]] = {}
    for s in sections:
        for name in sorted(s.defines - core_names):
            owners[name] = (*owners.get(name, ()), s.name)
    return Split("".join(core) + CLOSE, sections, owners)


@functools.lru_cache(maxsize=None)
def load() -> Split:
    return split(package_text(TEMPLATE))
