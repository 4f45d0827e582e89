"""Wrappers beyond upstream's names are function templates (docs/design.md, "Wrappers beyond upstream's names are
function templates"): upstream's names stay plain inline functions, so code written against upstream's ops.h compiles
unchanged (its addresses included); every other wrapper is called as a function, and its address is taken with a
type."""

from __future__ import annotations

import json
import os
import re

import pytest

from shimgen.generate import pipeline
from tests.cxx import syntax_check

HERE = os.path.dirname(os.path.abspath(__file__))
HEAD = "template <typename Lazy = void>\n"


def upstream_names() -> set[str]:
    """The wrapper names of upstream's 2.13 ops.h (the fixture derived from stable_surface.json)."""
    with open(os.path.join(HERE, "fixtures", "stable_surface_2_13.json"), encoding="utf-8") as f:
        return {w["name"] for w in json.load(f)["2.13.0"]["ops_h"]}


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("deferred"))
    files, _ = pipeline.generate(["abs", "clamp", "std", "transpose", "narrow"], None, None, out)
    pipeline.write(out, files)
    return out


HIDDEN = "template <typename ShimgenHidden = void>\n"


def definitions(out: str, name: str) -> list[tuple[str, str]]:
    """(first line, the template head before it or "") of each definition in ops/<name>.h but the hidden forms."""
    with open(os.path.join(out, "torch/csrc/stable/ops", f"{name}.h"), encoding="utf-8") as f:
        text = f.read()
    found = re.finditer(r"^(template <[^\n]*>\n)?(inline [^\n]*)", text, flags=re.M)
    return [(m.group(2), m.group(1) or "") for m in found if m.group(1) != HIDDEN]


def test_upstream_names_are_plain_functions(out) -> None:
    names = upstream_names() & {f[:-2] for f in os.listdir(os.path.join(out, "torch/csrc/stable/ops"))}
    assert {"transpose", "narrow", "sum", "empty_like"} <= names
    for name in sorted(names):
        defs = definitions(out, name)
        assert defs and all(head == "" for _, head in defs), (name, defs)


def test_other_names_are_templates(out) -> None:
    for name in ("abs", "clamp", "std"):
        defs = definitions(out, name)
        assert defs and all(head == HEAD for _, head in defs), (name, defs)


def test_calls_and_addresses_compile(out) -> None:
    source = """
#include <torch/csrc/stable/ops.h>
using torch::stable::Tensor;

void calls(const Tensor& t) {
  // upstream's names: plain functions, their addresses as with upstream's header
  Tensor (*narrow)(const Tensor&, int64_t, int64_t, int64_t) = &torch::stable::narrow;
  Tensor (*transpose)(const Tensor&, int64_t, int64_t) = &torch::stable::transpose;
  // a template wrapper: a call as a function, an address with a type
  Tensor (*abs)(const Tensor&) = &torch::stable::abs;
  auto abs2 = static_cast<Tensor (*)(const Tensor&)>(&torch::stable::abs);
  auto abs3 = &torch::stable::abs<>;
  Tensor a = torch::stable::abs(t);
  Tensor c = torch::stable::clamp(t, 0.0, 1.0);  // clamp.default
  Tensor d = torch::stable::clamp(t, t, t);  // clamp.Tensor
  Tensor s = torch::stable::std(t, {1});  // std.correction, a braced list
  Tensor s0 = torch::stable::std(t, 0);  // ATen's C++-only std(self, int dim)
  Tensor u = torch::stable::std(t, true);  // std.default
  (void)narrow, (void)transpose, (void)abs, (void)abs2, (void)abs3;
  (void)a, (void)c, (void)d, (void)s, (void)s0, (void)u;
}
"""
    proc = syntax_check(source, out)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_hidden_form_still_names_its_reason(out) -> None:
    # torch::stable::std's correction form needs 2.10 at the earliest in the default build: at 2.9 a call reaching
    # it must fail with the hidden form's message, not an ambiguity between two templates.
    proc = syntax_check("#include <torch/csrc/stable/ops.h>\n"
                        "void f(const torch::stable::Tensor& t) { (void)torch::stable::std(t, {1}); }\n",
                        out, target="0x0209000000000000")
    assert proc.returncode != 0
    assert "static assertion failed: torch::stable::std" in proc.stderr, proc.stderr[-3000:]
    assert "ambiguous" not in proc.stderr, proc.stderr[-3000:]
