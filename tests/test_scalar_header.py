"""scalar.h is a plain C++ header (shimgen/cxx/scalar.h: no template syntax) plus a small generated table
(templates/scalar_table.h.j2: the promotion facts of data/scalar_facts.yaml)."""

from __future__ import annotations

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.facts import scalar_facts as scalars
from shimgen.base.inputs import package_text


def test_the_header_is_plain_cpp_and_the_table_is_small() -> None:
    plain = package_text("cxx/scalar.h")
    assert "{{" not in plain and "{%" not in plain
    assert plain.count(emit_cpp._TABLE_MARKER) == 1
    assert len(package_text("generate/templates/scalar_table.h.j2").splitlines()) <= 15


def test_the_table_is_the_facts() -> None:
    text = emit_cpp.scalar_header("banner")
    facts = scalars.load()
    assert text.startswith("// banner\n")
    assert f"constexpr int kDtypes = {len(facts.dtypes)};" in text
    assert all(f"    ScalarType::{d},\n" in text for d in facts.dtypes)
    assert emit_cpp._TABLE_MARKER not in text
    first = facts.dtypes.index("Bool"), facts.dtypes.index("Long")
    assert facts.promote["Bool", "Long"] == "Long"  # one cell read back from the rendered rows
    rows = text.split("kPromote = {{\n")[1].split("}};")[0].splitlines()
    assert int(rows[first[0]].strip(" {},").split(", ")[first[1]]) == facts.dtypes.index("Long")
