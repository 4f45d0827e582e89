"""shimgen/cxx/scalar.h is one template split into core (torch/csrc/stable/shimgen/scalar.h) and one header
per kernel section (torch/csrc/stable/shimgen/kernels/<name>.h, shimgen/generate/kernel_sections.py); a per-op header
includes the sections its wrappers call. The compile checks of the split headers are in
tests/test_cpp_whole_yaml.py (every section header alone, and a per-op header using each)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.generate import kernel_sections
from shimgen.base.inputs import package_text

GOLDEN = Path(__file__).parent / "golden" / "add_pad_amax"
TEMPLATE = package_text(kernel_sections.TEMPLATE)


def _uses(text: str, names) -> set[str]:
    return {n for n in names if re.search(rf"\b{re.escape(n)}\b", text)}


def test_every_heading_of_the_template_is_a_marked_section() -> None:
    split = kernel_sections.load()
    headings = [line for line in TEMPLATE.splitlines() if line.startswith("// ---- ")]
    assert len(split.sections) == len(headings) - 1  # core's own heading (type promotion) is marked `core`
    assert len({s.name for s in split.sections}) == len(split.sections)
    assert all(s.text.startswith("// ---- ") and s.defines for s in split.sections)
    assert not [line for text in (split.core, *(s.text for s in split.sections)) for line in text.splitlines()
                if line.startswith("// @section")]
    # nothing lost or duplicated: core and the sections are the template without its marker lines
    body = TEMPLATE[: -len(kernel_sections.CLOSE)]
    assert split.core[: -len(kernel_sections.CLOSE)] + "".join(s.text for s in split.sections) == "".join(
        line for line in body.splitlines(keepends=True) if not line.startswith("// @section"))


def test_a_section_added_without_a_marker_is_an_error_naming_its_line() -> None:
    """What a helper adding a kernel at the end does: a new `// ---- kernel ...` heading. Without its marker line
    it would land in the section above it; the split refuses it instead."""
    body = TEMPLATE[: -len(kernel_sections.CLOSE)]
    new = "// ---- kernel `frobnicate`: a new kernel\n\ninline int frobnicate_select() {\n  return 1;\n}\n\n"
    line = body.count("\n") + 1
    with pytest.raises(kernel_sections.SectionError, match=rf"scalar.h:{line}: .*kernel `frobnicate`.* no marker"):
        kernel_sections.split(body + new + kernel_sections.CLOSE)
    marked = kernel_sections.split(body + "// @section frobnicate needs compositions\n" + new + kernel_sections.CLOSE)
    assert marked.owners["frobnicate_select"] == ("frobnicate",)
    assert marked.closure(marked.used_by(["shimgen::detail::frobnicate_select()"]))[-2:] == ["compositions",
                                                                                               "frobnicate"]


@pytest.mark.parametrize("marker, reason", [
    ("// @section frobnicate needs nowhere\n", "needs `nowhere`, which is not a section above it"),
    ("// @section compositions\n", "marked twice"),
    ("// @section frobnicate needs: compositions\n", "is not `// @section <name>"),
])
def test_a_bad_marker_is_an_error(marker: str, reason: str) -> None:
    body = TEMPLATE[: -len(kernel_sections.CLOSE)]
    new = "// ---- kernel `frobnicate`\n\ninline int frobnicate_select() {\n  return 1;\n}\n\n"
    with pytest.raises(kernel_sections.SectionError, match=re.escape(reason)):
        kernel_sections.split(body + marker + new + kernel_sections.CLOSE)
    with pytest.raises(kernel_sections.SectionError, match="directly above its `// ----` heading"):
        kernel_sections.split(body + "// @section frobnicate\n\n" + new + kernel_sections.CLOSE)


def test_each_section_needs_the_sections_whose_helpers_it_calls() -> None:
    """The markers' `needs` are data the headers' includes follow; the names a section's text uses are read here,
    so a need left out (a compile error in a TU including only that section's users) fails this test first."""
    split = kernel_sections.load()
    core_names = kernel_sections.defined_names(split.core)
    assert not _uses(split.core, set(split.owners)), "core calls a kernel section's helper"
    for s in split.sections:
        reach = set(split.closure([s.name]))
        for other in split.sections:
            if other.name not in reach:
                assert not _uses(s.text, other.defines - core_names), (s.name, other.name)


def test_a_per_op_header_includes_the_sections_its_wrappers_call() -> None:
    ops = GOLDEN / "torch/csrc/stable/ops"
    includes = re.compile(r"#include <torch/csrc/stable/shimgen/kernels/(\w+)\.h>")
    add = (ops / "add.h").read_text()
    assert "shimgen::detail::integral_add_select(" in add
    assert includes.findall(add) == ["compositions"]
    for name in ("pad", "amax", "amax_out"):  # no kernel: core (the prelude's) only
        assert includes.findall((ops / f"{name}.h").read_text()) == [], name
    written = sorted(p.name for p in (GOLDEN / "torch/csrc/stable/shimgen/kernels").iterdir())
    split = kernel_sections.load()
    used = {k for p in ops.iterdir() for k in includes.findall(p.read_text())}
    assert written == [f"{k}.h" for k in sorted(split.closure(used))]  # only the sections some header needs


def test_the_core_header_has_no_kernel_section() -> None:
    core = emit_cpp.scalar_header("banner")
    assert "// ---- Kernel compositions" not in core and "integral_add_select" not in core
    assert core.endswith(kernel_sections.CLOSE)
    assert len(core.splitlines()) < len(TEMPLATE.splitlines()) / 2


def test_each_helper_name_has_one_home() -> None:
    """A header's sections are found by the names its wrappers call, so a name is defined in core or in one
    section: an overload of a core helper (or of another section's) added in a section would leave the headers
    calling it without that section."""
    split = kernel_sections.load()
    core = kernel_sections.defined_names(split.core)
    seen: dict[str, str] = {}
    for s in split.sections:
        assert not s.defines & core, (s.name, sorted(s.defines & core))
        for name in s.defines:
            assert seen.setdefault(name, s.name) == s.name, (name, seen[name], s.name)
    assert len(split.owners) == len(seen)
