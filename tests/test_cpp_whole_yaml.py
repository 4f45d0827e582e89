"""The C++ surface for EVERY op of the installed native_functions.yaml compiles, at every targeted release.

This is the broad net under the per-op proofs (test_verify.py runs a representative set): all ~2,700 generated
wrappers, their version ranges and the C++ overload rules (no two overloads may be ambiguous or redefined at any
target) must be valid C++ against the installed stable headers.
"""

from __future__ import annotations

import concurrent.futures

import pytest

from shimgen import emit_c, emit_cpp, plan, sig_cpp
from shimgen.pipeline import write as write_atomically
from shimgen.parse import NativeYaml
from tests.cxx import syntax_check

TARGETS = [None, "0x0209000000000000", "0x020a000000000000", "0x020c000000000000"]


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("whole") / "out")
    p = plan.make(sorted(NativeYaml().by_name))
    write_atomically(out, {**emit_c.emit(p), **emit_cpp.emit(p)})  # unformatted: the compiler does not mind
    return out, p


def test_every_op_gets_a_wrapper_or_a_stated_refusal(everything):
    _, p = everything
    ws, notes = sig_cpp.wrappers(p)
    assert len(ws) + len(notes) == len(p.ops)
    assert len(ws) > 2500, len(ws)
    assert len({(w.name, tuple(q.cpp_type for q in w.params)) for w in ws}) == len(ws)  # no duplicate signature


def test_whole_ops_h_compiles_at_every_target(everything):
    out, _ = everything
    source = "#include <torch/csrc/stable/ops.h>\n"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda t: syntax_check(source, out, t), TARGETS))
    for target, res in zip(TARGETS, results):
        errors = [line for line in res.stderr.splitlines() if "error" in line][:10]
        assert res.returncode == 0, f"target {target}: " + "\n".join(errors)
