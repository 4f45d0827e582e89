"""The fast path writes what the formatters write: shimgen.generate.emit.py_layout's lines are black's, and shimgen.generate.emit.cpp_layout's
(with its clang-format fallback for the chunks it is unsure of) are what clang-format gives each file alone. Compared with the formatter path (`generate(formatter=True)`:
black over the whole Python module, clang-format over each C++ file alone) on every golden, generated/ and a large
slice of the installed yaml (every 4th op name: whole-yaml black alone takes about a minute here; the benchmark
`benchmarks/bench_generate.py --identical` compares the whole yaml)."""

from __future__ import annotations

import os

import pytest

from shimgen.generate.emit import py_layout as layout
from shimgen.generate import pipeline, stamp
from shimgen.generate.parse import NativeYaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")


def _outputs() -> list[str]:
    return sorted(os.path.join(GOLDEN, d) for d in os.listdir(GOLDEN)) + [os.path.join(ROOT, "generated")]


def _same(ops, yaml_path, since, out, only) -> None:
    fast, _ = pipeline.generate(ops, yaml_path, since, out, only)
    ref, _ = pipeline.generate(ops, yaml_path, since, out, only, formatter=True)
    assert sorted(fast) == sorted(ref)
    differ = [path for path in ref if fast[path] != ref[path]]
    assert not differ, differ


@pytest.mark.parametrize("out", _outputs(), ids=os.path.basename)
def test_golden_fast_path_is_the_formatters_output(out: str) -> None:
    ops, since, yaml_path, only = stamp.read(out)
    _same(ops, yaml_path, since, out, only)


def test_large_slice_of_the_yaml() -> None:
    names = list(dict.fromkeys(op.split(".")[0] for op in NativeYaml(None).all_op_names()))
    _same(names[::4], None, None, None, True)


def test_layout_rules() -> None:
    # fits: unchanged
    assert layout.bracketed("def f(", ["a: int"], ") -> int:", 0, True) == "def f(a: int) -> int:"
    long = [f"argument_{i}: int" for i in range(4)]
    # contents fit on one indented line: no trailing comma
    assert layout.bracketed("def function_with_a_long_name_for_this_test(", long, ") -> int:", 0, True) == (
        "def function_with_a_long_name_for_this_test(\n"
        "    argument_0: int, argument_1: int, argument_2: int, argument_3: int\n"
        ") -> int:")
    # one per line with a trailing comma; none after `*` where the target versions do not allow it (stub)
    many = [*long, "*", *[f"keyword_{i}: int" for i in range(4)]]
    split = layout.bracketed("def f(", many, ") -> int:", 0, True)
    assert split.splitlines()[-2:] == ["    keyword_3: int,", ") -> int:"]
    assert layout.bracketed("def f(", many, ") -> int:", 0, True, comma_after_star=False).splitlines()[-2] == (
        "    keyword_3: int")
    # a def with a single parameter too long for the line keeps black's added comma
    single = layout.bracketed("def " + "f" * 70 + "(", ["x: " + "T" * 20], ") -> int:", 0, True)
    assert single.splitlines()[1] == "    x: " + "T" * 20 + ","
    # a call splits at its last bracket
    assert layout.chained_call("return _pick(", ['"n"', "(a, b)", "args", "kwargs"], "(*args, **kwargs)", 4) == (
        '    return _pick("n", (a, b), args, kwargs)(*args, **kwargs)')
    with pytest.raises(layout.Unsure):  # one argument longer than the line: black splits inside it
        layout.bracketed("call(", ["x" * 100], ")", 4)
    assert layout.string("mean") == '"mean"' and layout.normalize_literal("'L'") == '"L"'
