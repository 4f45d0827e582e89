"""`shimgen port --fix` on ATen's dispatch macros: every AT_DISPATCH_* macro of the installed ATen/Dispatch.h (and
AT_DISPATCH_SWITCH with AT_DISPATCH_CASE*, AT_DISPATCH_V2) is written once in a source, rewritten by the fixer,
and both sides go through the preprocessor: the rewrite switches over the same types in the same order, binds the
body's type to the same name (`scalar_t`, `index_t`) and reports the same dispatch name as ATen's macro; the
rewritten source compiles against the stable headers at target 2.10 (the installed torch's, and the 2.10 runtime's
own where it is installed).

The ATen side is the installed ATen's own expansion, not the rules' table: a macro ATen adds, or a group whose
types change, fails here until data/port_rules.yaml's `dispatch` table says it. The rewrite is `shimgen port
--fix`'s, as a user runs it (one libclang scan, seconds); the rest is the preprocessor and -fsyntax-only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import pytest

from shimgen.setuptools import stable_flags
from shimgen.tools.porting import rules
from tests.cxx import CXX

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")

torch = pytest.importorskip("torch")
import torch.utils.cpp_extension as ce  # noqa: E402

INCLUDES = [f"-I{p}" for p in ce.include_paths()]
# extra types a SCALARTYPE argument names: none in any group, so each case is told apart
EXTRAS = ["at::ScalarType::Bool", "at::kHalf", "c10::kBFloat16", "at::ScalarType::ComplexHalf",
          "at::ScalarType::UInt16", "at::ScalarType::UInt32", "at::ScalarType::UInt64",
          "at::ScalarType::Float8_e4m3fn"]
BODY = "[&] { return static_cast<int>(sizeof(scalar_t)); }"


def aten_macros() -> dict[str, list[str]]:
    """The dispatch macros ATen/Dispatch.h defines, with their parameter names."""
    path = os.path.join(ce.include_paths()[0], "ATen", "Dispatch.h")
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    out = {}
    for m in re.finditer(r"#define\s+(AT_DISPATCH_\w+)\(([^)]*)\)", text):
        out[m.group(1)] = [p.strip() for p in m.group(2).split(",")]
    return out


def _use(name: str, params: list[str], i: int) -> str:
    """One function calling macro `name` (a case macro inside AT_DISPATCH_SWITCH)."""
    extras = EXTRAS[:sum(1 for p in params if p.startswith("SCALARTYPE"))]
    body = BODY.replace("scalar_t", "index_t") if name == "AT_DISPATCH_INDEX_TYPES" else BODY
    if name.startswith("AT_DISPATCH_CASE_"):
        call = f'AT_DISPATCH_SWITCH(st, "{name}", {name}({", ".join([*extras, body])}))'
    else:
        call = f'{name}({", ".join([*extras, "st", chr(34) + name + chr(34), body])})'
    return f"int f{i}(c10::ScalarType st) {{\n  return {call};\n}}\n"


def _cases(expanded: str, count: int) -> list[tuple[str, list[str], list[str]]]:
    """Per function f0..f{count-1} of a preprocessed source: (the dispatch name, the case labels' enumerators, the
    names each case binds)."""
    out = []
    for i in range(count):
        m = re.search(rf"\bf{i}\s*\(", expanded)
        end = re.search(rf"\bf{i + 1}\s*\(", expanded) if i + 1 < count else None
        chunk = expanded[m.start():end.start() if end else len(expanded)]
        name = re.search(r'at_dispatch_name\s*=\s*"([^"]*)"', chunk).group(1)
        # an ATen constant (at::kHalf) as the enumerator it names
        labels = [rules.constant(x.split("::")[-1]) or x.split("::")[-1]
                  for x in re.findall(r"case\s+([\w:]+)\s*:", chunk)]
        hints = re.findall(r"using\s+(\w+)\s*\[\[maybe_unused\]\]", chunk)
        out.append((name, labels, hints))
    return out


def _preprocess(source: str, flags: list[str]) -> str:
    proc = subprocess.run([CXX, "-std=c++17", "-E", "-P", *flags, *INCLUDES, "-x", "c++", "-"], input=source,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _ported(source: str) -> tuple[str, str]:
    """`shimgen port --fix --target 2.10` over `source`: the file it leaves, and what it prints."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        proc = subprocess.run([sys.executable, "-m", "shimgen", "port", path, "--target", "2.10", "--fix"],
                              capture_output=True, text=True, cwd=tmp)
        assert proc.returncode == 0, proc.stderr[-3000:]
        with open(path, encoding="utf-8") as f:
            return f.read(), proc.stdout


def _sources() -> tuple[str, tuple[str, str], list[str]]:
    """(the ATen source, its rewrite and port's output, the macro each function f<i> calls): each macro of
    ATen/Dispatch.h that is a whole dispatch (it takes TYPE) or a group's cases (AT_DISPATCH_CASE_<group>), but the
    quantized ones."""
    params = aten_macros()
    names = [n for n, ps in params.items() if "QINT" not in n and n not in ("AT_DISPATCH_SWITCH", "AT_DISPATCH_CASE")
             and ("TYPE" in ps or n.startswith("AT_DISPATCH_CASE_"))]
    body = "".join(_use(n, params[n], i) for i, n in enumerate(names))
    # the switch with single cases, and ATen's own V2 form
    extra = [
        'AT_DISPATCH_SWITCH(st, "switch", AT_DISPATCH_CASE(at::kFloat, ' + BODY + ") "
        "AT_DISPATCH_CASE(c10::ScalarType::Long, " + BODY + "))",
        'AT_DISPATCH_V2(st, "v2", AT_WRAP(' + BODY + "), AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, "
        "c10::ScalarType::Bool)",
    ]
    n = len(names)
    body += "".join(f"int f{n + k}(c10::ScalarType st) {{\n  return {call};\n}}\n" for k, call in enumerate(extra))
    aten = "#include <ATen/Dispatch.h>\n#include <ATen/Dispatch_v2.h>\n" + body
    return aten, _ported(aten), [*names, "switch", "v2"]


@pytest.fixture(scope="module")
def sources():
    return _sources()


def test_every_aten_dispatch_macro_has_a_rule():
    """Each macro ATen/Dispatch.h defines is a dispatch form of the table, or says why it has none."""
    from shimgen.tools.porting import dispatch

    missing = [n for n in aten_macros() if n.startswith("AT_DISPATCH_") and dispatch.form(n) is None]
    assert missing == []
    none = sorted(n for n in aten_macros() if dispatch.form(n) and dispatch.form(n).kind == "none")
    assert none and all("QINT" in n for n in none), none


def test_no_hand_edit(sources):
    _, (_, out), _ = sources
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]


def test_same_types_names_and_hints_as_aten(sources):
    aten, (stable, _), names = sources
    want = _cases(_preprocess(aten, []), len(names))
    got = _cases(_preprocess(stable, stable_flags("2.10")), len(names))
    differ = [(n, w, g) for n, w, g in zip(names, want, got) if w != g]
    assert not differ, differ[:5]
    assert len(names) >= 40  # every group, with and without _AND<n>, as a whole dispatch and as cases


def test_the_rewrite_compiles_at_2_10(sources):
    _, (stable, _), _ = sources
    proc = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", *stable_flags("2.10"), *INCLUDES, "-x", "c++", "-"],
                          input=stable, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_rewrite_compiles_with_the_2_10_runtime_headers(sources):
    root = os.path.join(os.environ.get("SHIMGEN_RUNTIMES") or os.path.expanduser("~/.cache/shimgen/runtimes"),
                        "torch-2.10.0")
    inc = sorted(__import__("glob").glob(os.path.join(root, "lib", "python3*", "site-packages", "torch", "include")))
    if not inc:
        pytest.skip("runtime torch-2.10.0 not installed")
    _, (stable, _), _ = sources
    proc = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", "-DTORCH_STABLE_ONLY", f"-I{inc[0]}", "-x", "c++",
                           "-"], input=stable, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_report_prints_what_the_fix_writes():
    """The report's replacement cell is the fixer's writer over placeholders: the extra types last, not first."""
    from shimgen.tools.porting import dispatch

    assert dispatch.describe("AT_DISPATCH_ALL_TYPES_AND2") == (
        "THO_DISPATCH_V2(TYPE, NAME, AT_WRAP((BODY)), AT_ALL_TYPES, SCALARTYPE1, SCALARTYPE2)")
    src = ("#include <ATen/ATen.h>\n#include <ATen/Dispatch.h>\n"
           "void f(at::Tensor x) {\n"
           '  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "n", [&] {});\n}\n')
    assert 'THO_DISPATCH_V2(x.scalar_type(), "n", AT_WRAP(([&] {})), AT_ALL_TYPES, ' \
           "torch::headeronly::ScalarType::Half, torch::headeronly::ScalarType::BFloat16)" in _ported(src)[0]
