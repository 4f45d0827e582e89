"""The C++ surface for EVERY op of the installed native_functions.yaml compiles, at every targeted release.

This is the broad net under the per-op proofs (test_verify.py runs a representative set): all ~2,700 generated
wrappers, their version ranges and the C++ overload rules (no two overloads may be ambiguous or redefined at any
target) must be valid C++ against the installed stable headers.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil

import pytest

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp
from shimgen.generate import kernel_sections, plan
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate.pipeline import write as write_atomically
from shimgen.generate.parse import NativeYaml
from tests.cxx import CLANG, syntax_check

TARGETS = [None, "0x0209000000000000", "0x020a000000000000", "0x020c000000000000"]


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("whole") / "out")
    p = plan.make(sorted(NativeYaml().by_name))
    write_atomically(out, {**emit_c.emit(r := resolve(p)), **emit_cpp.emit(r)})  # unformatted: the compiler does not mind
    return out, p


def test_every_op_gets_a_wrapper_or_a_stated_refusal(everything):
    _, p = everything
    ws, notes = sig_cpp.wrappers(p)
    assert len(ws) + len(notes) == len(p.ops)
    assert len(ws) > 2500, len(ws)
    assert len({(w.name, tuple(q.cpp_type for q in w.params)) for w in ws}) == len(ws)  # no duplicate signature


def test_whole_ops_h_compiles_at_every_target(everything):
    """Warning-free too (-Wall -Wextra -Werror): an extension built with -Werror includes it."""
    out, _ = everything
    source = "#include <torch/csrc/stable/ops.h>\n"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda t: syntax_check(source, out, t, strict=True), TARGETS))
    for target, res in zip(TARGETS, results):
        errors = [line for line in res.stderr.splitlines() if "error" in line][:10]
        assert res.returncode == 0, f"target {target}: " + "\n".join(errors)


@pytest.fixture(scope="module")
def instantiated(everything, tmp_path_factory):
    """The whole output with every template head taken away (Lazy as void): each body as its instantiation for
    the default argument reads."""
    out, _ = everything
    plain = str(tmp_path_factory.mktemp("plain") / "plain")
    shutil.copytree(out, plain)
    root = os.path.join(plain, "torch/csrc/stable")
    changed = 0
    for folder in ("ops", "shimgen/kernels"):
        for name in os.listdir(os.path.join(root, folder)):
            path = os.path.join(root, folder, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            new = re.sub(r"^template <typename (?:Lazy )?= void>\n", "", text, flags=re.M)
            new = new.replace("shimgen::detail::dispatch<Lazy, ", "shimgen::detail::dispatch<void, ")
            assert "Lazy" not in new, path
            changed += new != text
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    assert changed > 2000, changed
    return plain


# Every build a TU can choose: the default one at each target, the overlay's, the leaky str routes' (with and
# without the overlay).
BUILDS = [(t, ()) for t in TARGETS] + [(None, ("SHIMGEN_OVERLAY",)), (None, ("SHIMGEN_LEAKY_STR",)),
                                       ("0x020a000000000000", ("SHIMGEN_OVERLAY", "SHIMGEN_LEAKY_STR"))]


def _compile_builds(root: str, cxx: str | None) -> None:
    source = "#include <torch/csrc/stable/ops.h>\n"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: syntax_check(source, root, c[0], c[1], cxx=cxx, strict=True), BUILDS))
    for case, res in zip(BUILDS, results):
        errors = [line for line in res.stderr.splitlines() if "error" in line][:10]
        assert res.returncode == 0, f"{cxx or 'g++'} {case}: " + "\n".join(errors)


def test_every_template_body_compiles_as_instantiated(instantiated):
    """The wrappers beyond upstream's names and the kernel sections' helpers are function templates
    (`template <typename Lazy = void>`, `template <typename = void>`): including ops.h only parses their bodies.
    Their instantiation for the default argument is the same text as a plain function with void for the
    parameter, so each body is checked by compiling that text, at every target and with the overlay's forms too,
    as every body was checked before they were templates; warning-free (-Wall -Wextra -Werror)."""
    _compile_builds(instantiated, None)


@pytest.mark.skipif(CLANG is None, reason="clang++ is not installed (Debian's `clang` package; .ci/run installs it)")
def test_every_body_compiles_warning_free_with_clang(instantiated):
    """clang warns where g++ does not (an unused parameter of a hidden form's template, among others)."""
    _compile_builds(instantiated, CLANG)


_KERNEL_INCLUDE = re.compile(r"#include <torch/csrc/stable/shimgen/kernels/(\w+)\.h>")
_OP_INCLUDE = re.compile(r"#include <torch/csrc/stable/ops/(\w+)\.h>")


def test_every_header_includes_the_kernel_sections_its_wrappers_call(everything):
    """A per-op header (or a device header) reaches, through its own includes and those of the headers it
    includes, every kernel section defining a shimgen::detail helper its text names
    (shimgen/generate/kernel_sections.py), and no more: a TU including one op pays only for its kernels."""
    out, _ = everything
    split = kernel_sections.load()
    root = os.path.join(out, "torch/csrc/stable")
    texts = {}
    for folder in ("ops", "cpu", "cuda"):
        for f in os.listdir(os.path.join(root, folder)) if os.path.isdir(os.path.join(root, folder)) else []:
            texts[f"{folder}/{f[:-2]}"] = open(os.path.join(root, folder, f), encoding="utf-8").read()

    def reach(key: str, seen: set[str]) -> set[str]:
        if key in seen:
            return set()
        seen.add(key)
        found = set(split.closure(_KERNEL_INCLUDE.findall(texts[key])))
        for dep in _OP_INCLUDE.findall(texts[key]):
            found |= reach(f"ops/{dep}", seen)
        return found

    users = 0
    for key, text in texts.items():
        needed = {split.owners[h] for h in re.findall(r"\bshimgen::detail::(\w+)", text) if h in split.owners}
        assert needed <= reach(key, set()), (key, needed)
        assert set(_KERNEL_INCLUDE.findall(text)) <= needed, key  # each included section is called here
        users += bool(needed)
    assert users >= 63, users  # measured at 2.13: 63 of the whole yaml's headers call a kernel section's helper


def test_each_kernel_section_header_compiles_alone_and_with_a_header_using_it(everything):
    """Each torch/csrc/stable/shimgen/kernels/<name>.h first in a TU (its own includes suffice: its `needs` are
    complete), then the first per-op header that includes it, in the default and the overlay build."""
    out, _ = everything
    ops = os.path.join(out, emit_cpp.OP_HEADERS)
    users = {}
    for f in sorted(os.listdir(ops)):
        for k in _KERNEL_INCLUDE.findall(open(os.path.join(ops, f), encoding="utf-8").read()):
            users.setdefault(k, f)
    sections = kernel_sections.load().sections
    assert set(users) <= {s.name for s in sections}
    jobs = []
    for s in sections:
        source = f"#include <{kernel_sections.header(s.name)}>\n"
        if s.name in users:
            source += f"#include <{emit_cpp.OP_HEADERS}{users[s.name]}>\n"
        jobs += [(s.name, source, ()), (s.name, source, ("SHIMGEN_OVERLAY",))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: syntax_check(j[1], out, None, j[2]), jobs))
    for (name, source, defines), res in zip(jobs, results):
        errors = [line for line in res.stderr.splitlines() if "error" in line][:10]
        assert res.returncode == 0, f"{name} {defines}: {source}" + "\n".join(errors)
