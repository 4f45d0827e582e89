"""shimgen/cxx/scalar.h is core (torch/csrc/stable/shimgen/scalar.h) and each file shimgen/cxx/kernels/<name>.h one
kernel section (torch/csrc/stable/shimgen/kernels/<name>.h, shimgen/generate/kernel_sections.py); a per-op header
includes the sections its wrappers call. The compile checks of the split headers are in
tests/test_cpp_whole_yaml.py (every section header alone, and a per-op header using each)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.generate import kernel_sections
from shimgen.base.inputs import package_text

GOLDEN = Path(__file__).parent / "golden" / "add_pad_amax"
TEMPLATE = package_text(kernel_sections.TEMPLATE)
INDEX = package_text(kernel_sections.INDEX)
FILES = {f.name: f.read_text(encoding="utf-8")
         for f in resources.files("shimgen").joinpath(kernel_sections.KERNELS).iterdir() if f.name.endswith(".h")}
NEW = "// ---- kernel `frobnicate`: a new kernel\n\ninline int frobnicate_select() {\n  return 1;\n}\n\n"


def _uses(text: str, names) -> set[str]:
    return {n for n in names if re.search(rf"\b{re.escape(n)}\b", text)}


def _split(core: str = TEMPLATE, index: str = INDEX, **files: str | None):
    """The split of the package's sources with `files` (`frobnicate_h=...`: cxx/kernels/frobnicate.h) added,
    replaced or (None) taken away."""
    kernels = dict(FILES)
    for key, text in files.items():
        name = key.removesuffix("_h") + ".h"
        if text is None:
            del kernels[name]
        else:
            kernels[name] = text
    return kernel_sections.split(core, kernels, index)


def test_each_kernel_file_is_a_section_in_the_index_order() -> None:
    split = kernel_sections.load()
    listed = [line for line in INDEX.splitlines() if line and not line.startswith("#")]
    assert [s.name for s in split.sections] == listed
    assert sorted(f"{s.name}.h" for s in split.sections) == sorted(FILES)
    assert len(split.sections) >= 25
    assert all(s.text.startswith("// ---- ") and s.defines for s in split.sections)
    for s in split.sections:  # nothing lost or changed: a section is its file without its `// @needs` line
        needs = f"// @needs {' '.join(s.needs)}\n" if s.needs else ""
        assert FILES[f"{s.name}.h"] == needs + s.text, s.name
        assert s.text.count("\n// ---- ") == 0 and "// @" not in s.text, s.name
    # core is cxx/scalar.h without its marker line; its one heading (type promotion) is marked `core`
    assert [line for line in TEMPLATE.splitlines() if line.startswith("// ---- ")] == [
        "// ---- type promotion (the table is torch.promote_types, from shimgen's data) --"]
    assert split.core == TEMPLATE.replace("// @section core\n", "")
    assert "\n// @section" not in split.core


def test_a_kernel_added_to_core_is_an_error_naming_its_line() -> None:
    """What a helper adding a kernel at the end of scalar.h would do: a new `// ---- kernel ...` heading there. It
    would land in core (every header's); the split refuses it and names the kernels' folder instead."""
    body = TEMPLATE[: -len(kernel_sections.CLOSE)]
    line = body.count("\n") + 1
    with pytest.raises(kernel_sections.SectionError,
                       match=rf"^cxx/scalar.h:{line}: .*kernel `frobnicate`.* is in core: .*cxx/kernels/<name>.h"):
        _split(body + NEW + kernel_sections.CLOSE)
    with pytest.raises(kernel_sections.SectionError, match=rf"^cxx/scalar.h:{line}: .* is not `// @section core`"):
        _split(body + "// @section frobnicate needs compositions\n" + NEW + kernel_sections.CLOSE)
    with pytest.raises(kernel_sections.SectionError, match="directly above its `// ----` heading"):
        _split(body + "// @section core\n\n" + NEW + kernel_sections.CLOSE)
    with pytest.raises(kernel_sections.SectionError, match="must end with"):
        _split(body)


def test_a_kernel_is_its_file_and_its_index_line() -> None:
    marked = _split(index=INDEX + "frobnicate\n", frobnicate_h="// @needs compositions\n" + NEW)
    assert marked.owners["frobnicate_select"] == "frobnicate"
    assert marked.section("frobnicate").text == NEW and marked.section("frobnicate").needs == ("compositions",)
    assert marked.closure(marked.used_by(["shimgen::detail::frobnicate_select()"]))[-2:] == ["compositions",
                                                                                               "frobnicate"]
    with pytest.raises(kernel_sections.SectionError,
                       match=r"^cxx/kernels/frobnicate.h: not listed in cxx/kernels/index.txt"):
        _split(frobnicate_h=NEW)
    line = INDEX.count("\n") + 1
    with pytest.raises(kernel_sections.SectionError,
                       match=rf"^cxx/kernels/index.txt:{line}: section `frobnicate` has no file"):
        _split(index=INDEX + "frobnicate\n")


@pytest.mark.parametrize("text, reason", [
    ("// @needs nowhere\n" + NEW, ":1: section `frobnicate` needs `nowhere`, which has no file "
                                  "cxx/kernels/nowhere.h"),
    ("// @needs core\n" + NEW, "needs `core`, which has no file"),
    ("// @needs frobnicate\n" + NEW, "needs `frobnicate`, which is not listed above it in cxx/kernels/index.txt"),
    ("// @needs: compositions\n" + NEW, ":1: `// @needs: compositions` is not `// @needs <section>"),
    ("// @needs\n" + NEW, "is not `// @needs <section>"),
    ("// @section frobnicate needs compositions\n" + NEW, "is not `// @needs <section>"),
    ("// @needs compositions\n\n" + NEW, ":2: a kernel file starts with its `// ----` heading"),
    (NEW + "// @needs compositions\n", ":7: `// @needs compositions` is not in its place"),
    (NEW + NEW.replace("frobnicate", "twiddle"), ":7: `// ---- kernel `twiddle`: a new kernel` is a second section"),
    (NEW + "inline int integral_add_select() {\n  return 0;\n}\n", "`integral_add_select` is defined in "
                                                                    "compositions too"),
    (NEW + "inline int in_range() {\n  return 0;\n}\n", "`in_range` is defined in core (cxx/scalar.h) too"),
])
def test_a_bad_kernel_file_is_an_error_naming_it(text: str, reason: str) -> None:
    with pytest.raises(kernel_sections.SectionError, match="^cxx/kernels/frobnicate.h" + re.escape(reason)
                       if reason.startswith(":") else "^cxx/kernels/frobnicate.h:.*" + re.escape(reason)):
        _split(index=INDEX + "frobnicate\n", frobnicate_h=text)


@pytest.mark.parametrize("index, reason", [
    (INDEX + "compositions\n", "section `compositions` is listed twice"),
    (INDEX + "core\n", "`core` is not a kernel section's name"),
    (INDEX + "two names\n", "`two names` is not a kernel section's name"),
    (INDEX.replace("\ncompositions\n", "\n"), "cxx/kernels/compositions.h: not listed"),
    (INDEX.replace("\nlegacy_shims\n", "\n") + "legacy_shims\n",
     "cxx/kernels/compositions.h:1: section `compositions` needs `legacy_shims`, which is not listed above it"),
])
def test_a_bad_index_is_an_error_naming_its_line(index: str, reason: str) -> None:
    with pytest.raises(kernel_sections.SectionError, match=re.escape(reason)):
        _split(index=index)


def test_each_section_needs_the_sections_whose_helpers_it_calls() -> None:
    """The kernel files' `// @needs` are data the headers' includes follow; the names a section's text uses are
    read here, so a need left out (a compile error in a TU including only that section's users) fails this test
    first."""
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
    assert len(core.splitlines()) < sum(len(t.splitlines()) for t in (TEMPLATE, *FILES.values())) / 4


def test_each_helper_name_has_one_home() -> None:
    """A header's sections are found by the names its wrappers call, so a name is defined in core or in one
    section: an overload of a core helper (or of another section's) added in a section would leave the headers
    calling it without that section (the split refuses one: test_a_bad_kernel_file_is_an_error_naming_it)."""
    split = kernel_sections.load()
    core = kernel_sections.defined_names(split.core)
    seen: dict[str, str] = {}
    for s in split.sections:
        assert not s.defines & core, (s.name, sorted(s.defines & core))
        for name in s.defines:
            assert seen.setdefault(name, s.name) == s.name, (name, seen[name], s.name)
    assert len(split.owners) == len(seen)
