"""Version tags of the torch::stable wrappers are computed, and they hide exactly what a targeted release lacks.

1. Against upstream: for every 2.13 ops.h wrapper that reaches an aten op (facts cut from stable_surface.json
   into tests/fixtures), the earliest release at which upstream's call form compiles against shimgen's header
   equals the gate upstream gives that wrapper.
2. Against the compiler: with -DTORCH_TARGET_VERSION=<2.9 or 2.10>, a TU calling every wrapper whose tag is
   <= the target compiles, and a call of any wrapper tagged newer does not.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from shimgen.generate import plan as plan_mod
from shimgen.generate.signatures import c as sig_c, cpp as sig_cpp
from shimgen.generate.pipeline import generate, write as write_atomically
from shimgen.facts.versions import Version
from tests.cxx import syntax_check

HERE = os.path.dirname(__file__)
ACCEPTANCE = "add,pad,amax,narrow,transpose,sum,sort,index_select,cat,max,flip,masked_select,permute,full"


def _upstream_wrappers():
    with open(os.path.join(HERE, "fixtures", "stable_surface_2_13.json")) as f:
        return json.load(f)["2.13.0"]["ops_h"]


def _param_count(signature: str) -> int:
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    depth, count = 0, 1 if inner.strip() else 0
    for ch in inner:
        depth += ch in "<({"
        depth -= ch in ">)}"
        count += ch == "," and depth == 0
    return count


def _upstream_tag(gate: list[str]) -> Version:
    for g in gate:
        m = re.match(r">= TORCH_VERSION_(\d+)_(\d+)_0", g)
        if m:
            return Version(int(m.group(1)), int(m.group(2)))
    return Version(2, 9)


@pytest.fixture(scope="module")
def manifest_wrappers():
    p = plan_mod.make(None)
    ws, notes = sig_cpp.wrappers(p)
    assert not notes
    return p, ws


def test_tags_equal_upstream(manifest_wrappers):
    p, ws = manifest_wrappers
    by_shim = {sig_c.shim_name(op): op.name for op in p.ops}
    checked = []
    for u in _upstream_wrappers():
        if u["dispatcher_ops"]:
            name = u["dispatcher_ops"][0].removeprefix("aten::")
            op = name if "." in name else f"{name}.default"
        elif u["shim_calls"]:
            op = by_shim[u["shim_calls"][0]]
        else:
            continue  # helpers such as parallel_for: no aten op
        n = _param_count(u["signature"])
        (w,) = [w for w in ws if w.op.name == op]
        starts = [
            v.start
            for v in w.variants
            if sum(1 for q in w.kept(v) if q.default is None) <= n <= v.kept
        ]
        assert starts, f"{op}: no variant accepts upstream's {n}-argument call"
        assert min(starts) == _upstream_tag(u["gate"]), (op, u["signature"], u["gate"], w.variants)
        checked.append(op)
    assert len(checked) == 28  # the 33 wrappers less parallel_for, get_num_threads, from_blob x2, to(device)


def _address(w: sig_cpp.Wrapper, v: sig_cpp.Variant) -> str:
    """Take the address of exactly this variant's signature: compiles only if that very function exists."""
    params = ", ".join(q.cpp_type for q in w.kept(v))
    return f"(void)static_cast<{w.returns} (*)({params})>(&torch::stable::{w.name});"


def _tu(lines: list[str]) -> str:
    return "#include <torch/csrc/stable/ops.h>\nvoid f() {\n  " + "\n  ".join(lines) + "\n}\n"


@pytest.mark.parametrize("target", [Version(2, 9), Version(2, 10)])
def test_target_version_hides_exactly_what_it_lacks(tmp_path, target):
    ops = ACCEPTANCE.split(",") + plan_mod.make(None).manifest.default_ops
    gen = str(tmp_path / "gen")
    files, _ = generate(ops, None, None)
    write_atomically(gen, files)
    ws, _ = sig_cpp.wrappers(plan_mod.make(ops))
    present, absent = [], []
    for w in ws:
        for v in w.variants:
            active = v.start <= target and (v.end is None or target < v.end)
            (present if active else absent).append(_address(w, v))
    assert present and absent
    # The plan's wrappers are those of a build that opts in to the overlay (SHIMGEN_OVERLAY; docs/routes.md "Stable
    # means libtorch alone"); a form a build lacks is a template whose static_assert names the op and the release.
    overlay = ("SHIMGEN_OVERLAY",)
    ok = syntax_check(_tu(present), gen, target.hex, overlay)
    assert ok.returncode == 0, ok.stderr[-3000:]
    for line in absent:
        if line in present:  # another form of the same wrapper (another route) has this very signature there
            continue
        res = syntax_check(_tu([line]), gen, target.hex, overlay)
        assert res.returncode != 0, f"{line} compiles at {target}, but that variant's range excludes it"
        assert re.search(r"is not a member of|no matches converting function|invalid .static_cast.|"
                         r"static assertion failed: torch::stable::\w+: aten::\S+ needs TORCH_TARGET_VERSION >= ",
                         res.stderr), res.stderr[-2000:]
    # and the newest release sees every wrapper's newest variant
    newest = [_address(w, w.variants[-1]) for w in ws]
    assert syntax_check(_tu(newest), gen, None, overlay).returncode == 0
