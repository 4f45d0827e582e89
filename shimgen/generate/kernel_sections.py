"""The C++ of shimgen::detail, hand-written in shimgen/cxx/: scalar.h is core (torch/csrc/stable/shimgen/scalar.h:
shimgen::Scalar and the rules every number-taking wrapper uses), and each kernel section is one file,
cxx/kernels/<name>.h, generated as torch/csrc/stable/shimgen/kernels/<name>.h, so that a per-op header pays only
for the kernels its wrappers call (one op costs what upstream's header costs).

A kernel file is its section's text, from its `// ---- ` heading on, after a first line naming the sections whose
helpers it calls where it calls any (its header includes theirs):

    // @needs <section> [<section> ...]
    // ---- kernel `frobnicate`: what it computes ...

cxx/kernels/index.txt lists the sections, one name a line, in the order the generated headers list them; a
section's needs are listed above it. Which sections a header includes comes from the helpers its bodies name
(`shimgen::detail::<helper>`), looked up in the names each section defines, as the C shims a per-op header declares
come from the calls its bodies make. Breaking one of these rules is an error naming the file and line
(tests/test_kernel_sections.py), never code that silently lands in core or goes unshipped: a kernel file is listed
in the index and a listed name has its file; a file holds one section (one heading, at its top); its needs are
sections listed above it; a name is defined in core or in one section; and each `// ---- ` heading of cxx/scalar.h
is core's, marked `// @section core` directly above it (a kernel's heading added there is refused: its section
is a file of cxx/kernels/)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from shimgen.base import cache
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_text

TEMPLATE = "cxx/scalar.h"
KERNELS = "cxx/kernels/"
INDEX = f"{KERNELS}index.txt"
HEADERS = "torch/csrc/stable/shimgen/kernels/"
CORE = "core"
CLOSE = "} // namespace detail\n} // namespace shimgen\n"  # how core ends (each kernel header closes the same)

_CORE_MARKER = "// @section core"
_NEEDS = re.compile(r"// @needs((?: \w+)+)")
_NAME = re.compile(r"\w+")
_HEADING = "// ---- "
_DIRECTIVE = re.compile(r"(?<=\n)// (?:@section|@needs|---- )[^\n]*")  # after a newline: a fast literal search
_HELPER_USE = re.compile(r"\bshimgen::detail::(\w+)")


class SectionError(ShimgenError):
    """shimgen/cxx breaks the section rules (a kernel file not listed, an unknown need, ...): one line, as bad
    input is."""


@dataclass(frozen=True)
class Section:
    name: str
    needs: tuple[str, ...]
    text: str  # its file's text from its `// ---- ` heading on (the `// @needs` line left out)
    defines: frozenset[str]  # the names it defines at namespace scope (functions, types, constants)


@dataclass(frozen=True)
class Split:
    core: str  # the core header's text (before the banner): cxx/scalar.h without its `// @section core` lines
    sections: tuple[Section, ...]  # in index order (a section's needs come before it)
    owners: dict[str, str]  # a helper name -> the kernel section defining it (core's names absent)

    def section(self, name: str) -> Section:
        return next(s for s in self.sections if s.name == name)

    def used_by(self, texts) -> list[str]:
        """The kernel sections whose helpers `texts` (wrapper bodies) name, in index order."""
        names = {self.owners[h] for text in texts for h in _HELPER_USE.findall(text) if h in self.owners}
        return [s.name for s in self.sections if s.name in names]

    def closure(self, names) -> list[str]:
        """`names` and every section they need, directly or not, in index order."""
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


def split(core: str, kernels: Mapping[str, str], index: str) -> Split:
    """Core (cxx/scalar.h's text), the kernel sections (`kernels`: cxx/kernels/'s files by name, `foo.h`, with
    their texts) in the order of `index` (cxx/kernels/index.txt's text); SectionError where they break the rules
    above."""
    order = _order(index, kernels)
    sections: list[Section] = []
    for name in order:
        path = f"{KERNELS}{name}.h"
        needs, text = _needs(path, kernels[f"{name}.h"])
        for need in needs:
            listed = [s.name for s in sections]
            if need not in listed:
                why = f"is not listed above it in {INDEX}" if need in order else f"has no file {KERNELS}{need}.h"
                raise SectionError(f"{path}:1: section `{name}` needs `{need}`, which {why} (listed above it: "
                                   f"{', '.join(listed) or 'none'})")
        sections.append(Section(name, needs, text, frozenset(defined_names(text))))
    core_text = _core(core)
    core_names = defined_names(core_text)
    owners: dict[str, str] = {}
    for s in sections:
        for helper in sorted(s.defines):
            home = "core (cxx/scalar.h)" if helper in core_names else owners.get(helper)
            if home is not None:
                raise SectionError(f"{KERNELS}{s.name}.h: `{helper}` is defined in {home} too: a name has one home "
                                   "(a header finds its sections by the names its wrappers call)")
            owners[helper] = s.name
    return Split(core_text, tuple(sections), owners)


def _order(index: str, kernels: Mapping[str, str]) -> list[str]:
    """The section names `index` lists, each with its file in `kernels`, and every file listed."""
    order: list[str] = []
    for number, line in enumerate(index.splitlines(), 1):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        where = f"{INDEX}:{number}"
        if not _NAME.fullmatch(name) or name == CORE:
            raise SectionError(f"{where}: `{line}` is not a kernel section's name (a line holds one name, the "
                               f"file {KERNELS}<name>.h without `.h`; core is cxx/scalar.h)")
        if name in order:
            raise SectionError(f"{where}: section `{name}` is listed twice")
        if f"{name}.h" not in kernels:
            raise SectionError(f"{where}: section `{name}` has no file {KERNELS}{name}.h")
        order.append(name)
    for file in sorted(kernels):
        if file[:-2] not in order:
            raise SectionError(f"{KERNELS}{file}: not listed in {INDEX}: add its name there, below the sections "
                               "it needs (a section not listed would never reach a header)")
    return order


def _needs(path: str, text: str) -> tuple[tuple[str, ...], str]:
    """A kernel file's needs and its section's text (the file without its `// @needs` line)."""
    needs: tuple[str, ...] = ()
    if text.startswith("// @"):
        first, _, text = text.partition("\n")
        m = _NEEDS.fullmatch(first)
        if m is None:
            raise SectionError(f"{path}:1: `{first}` is not `// @needs <section> [<section>...]`")
        needs = tuple(m.group(1).split())
    line = 1 + bool(needs)
    if not text.startswith(_HEADING):
        raise SectionError(f"{path}:{line}: a kernel file starts with its `{_HEADING.strip()}` heading (after its "
                           "`// @needs` line, where it needs other sections)")
    for m in _DIRECTIVE.finditer(text):
        where = f"{path}:{line + text.count(chr(10), 0, m.start())}"
        if m.group(0).startswith(_HEADING):
            raise SectionError(f"{where}: `{m.group(0)}` is a second section in this file: a kernel section is "
                               f"its own file, {KERNELS}<name>.h, listed in {INDEX}")
        raise SectionError(f"{where}: `{m.group(0)}` is not in its place: a kernel file's only marker is its "
                           "first line, `// @needs <section>...`")
    return needs, text


def _core(template: str) -> str:
    """cxx/scalar.h's text without its `// @section core` lines, each directly above a heading of core."""
    if not template.endswith(CLOSE):
        raise SectionError(f"{TEMPLATE} must end with {CLOSE!r}")
    marker_end = -1
    kept, start = [], 0
    for m in _DIRECTIVE.finditer(template):
        line = m.group(0)
        where = f"{TEMPLATE}:{template.count(chr(10), 0, m.start()) + 1}"
        if line.startswith(_HEADING):
            if marker_end != m.start():
                raise SectionError(f"{where}: section `{line}` is in core: a kernel's section is its own file, "
                                   f"{KERNELS}<name>.h, listed in {INDEX} (a heading of core is marked "
                                   f"`{_CORE_MARKER}` directly above it)")
            continue
        if line != _CORE_MARKER:
            raise SectionError(f"{where}: `{line}` is not `{_CORE_MARKER}`: a kernel's section is its own file, "
                               f"{KERNELS}<name>.h, listed in {INDEX}")
        if not template.startswith(_HEADING, m.end() + 1):
            raise SectionError(f"{where}: `{line}` must be directly above its `{_HEADING.strip()}` heading")
        kept.append(template[start : m.start()])
        start = marker_end = m.end() + 1
    return "".join(kept) + template[start:]


@functools.lru_cache(maxsize=None)
def load() -> Split:
    """The package's split (`split`), from shimgen's cache when its texts are those it was made from."""
    index = package_text(INDEX)  # first: an install without the folder fails here, naming the file
    folder = resources.files("shimgen").joinpath(KERNELS)
    files = sorted(f.name for f in folder.iterdir() if f.name.endswith(".h"))
    core, kernels = package_text(TEMPLATE), {f: package_text(f"{KERNELS}{f}") for f in files}
    parts = [index.encode(), core.encode(), *(f"{f}\0{text}".encode() for f, text in kernels.items())]
    return cache.derived("kernel-sections", parts, lambda: split(core, kernels, index))
