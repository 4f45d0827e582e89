"""`shimgen --verify --world default`: the round-trip extension built as an extension author's default build (no
SHIMGEN_OVERLAY, no overlay library linked: libtorch alone), so the routes that build takes (the equivalent, the
legacy shim, the compositions, the number rules, the dispatcher with None-only optionals) are compared with aten
through the same samples and report as the overlay build's; a wrapper hidden in that build is reported, not called.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shimgen.proofs import overlay_needs
from shimgen.generate import plan as plan_mod
from shimgen.proofs.verify import build as vbuild
from shimgen.facts.versions import Version

# The default build's own routes in few ops (the comment names what each exercises there).
OPS = [
    "add",  # add.Tensor: the equivalent (libtorch's subtract shim); add.Scalar through it; add.out hidden
    "add_",  # add_.Tensor: the in-place composition (add, then copy_)
    "addmm",  # addmm.default / addmm.out: the legacy shim aoti_torch_addmm_out; addmm.dtype hidden
    "threshold_backward",  # the threshold composition
    "leaky_relu",  # the leaky_relu composition
    "pow",  # number rules: pow(x, 2) is mul(x, x)
    "addcmul",  # the scalars_tensor composition: aten::_foreach_addcmul.Tensor on one-element lists
    "softplus_backward",  # no libtorch route: hidden in this build, needs the overlay
]
PROVEN = ["add.Tensor", "add.Scalar", "add_.Tensor", "addmm.default", "addmm.out", "threshold_backward.default",
          "leaky_relu.default", "pow.Tensor_Scalar", "pow.Scalar", "subtract.Tensor", "mul.Tensor", "addcmul.default"]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("verify_world")
    out, build, path = root / "out", root / "build", root / "report.md"
    proc = subprocess.run(
        [sys.executable, "-m", "shimgen", "--ops", ",".join(OPS), "--only", "--out", str(out), "--verify",
         "--build-dir", str(build), "--world", "default", "--report", str(path)],
        capture_output=True, text=True, timeout=600, env={**os.environ, "SHIMGEN_VERIFY_OPINFO": "off"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(root / "report.json") as f:
        data = json.load(f)
    with open(build / "verify_ops-default.json") as f:
        data["spec"] = json.load(f)
    data["build"] = str(build)
    data["stdout"] = proc.stdout
    return data


def test_default_build_routes_are_proven(report: dict) -> None:
    rows = {r["op"]: r for r in report["ops"]}
    assert {op: rows[op]["status"] for op in PROVEN} == dict.fromkeys(PROVEN, "proven")
    assert all(rows[op]["exact"] > 0 and rows[op]["wrong"] == 0 for op in PROVEN)
    # They ran through libtorch's own routes, those the overlay build never takes for them.
    routes = {rows[op]["route"] for op in PROVEN}
    assert {"equivalent", "legacy_shim", "composition", "sibling", "shim", "dispatcher"} <= routes
    assert report["info"]["build world"] == "default"
    assert report["summary"]["failing"] == 0


def test_nothing_links_the_overlay(report: dict) -> None:
    spec = report["spec"]
    assert spec["overlay"] is None and not any(op["overlay"] for op in spec["ops"])
    assert not os.path.exists(os.path.join(report["build"], "libshimgen_overlay.so"))
    lib = spec["roundtrip"]
    assert os.path.basename(lib) == "libshimgen_roundtrip-default.so"
    needed = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
    assert "libshimgen_overlay" not in needed and "libtorch_cpu" in needed


def test_hidden_wrappers_are_reported_not_called(report: dict) -> None:
    rows = {r["op"]: r for r in report["ops"]}
    hidden = {op for op, r in rows.items() if r["status"] == "hidden"}
    # Exactly what the default build hides at the installed release (the rule of docs/routes.md's generated list).
    installed = Version.parse_release(vbuild.find_torch().version, "torch")
    plan = plan_mod.make(OPS)
    assert hidden == {op for op, _ in overlay_needs.needs(plan, installed)}
    assert "softplus_backward.default" in hidden and "add.Tensor" not in hidden and "addcmul.default" not in hidden
    r = rows["softplus_backward.default"]
    assert r["category"] == "hidden in this build: needs the overlay"
    assert "`beta` is a Scalar" in r["reason"] and "SHIMGEN_OVERLAY" in r["reason"]
    assert r["exact"] == r["refused"] == r["wrong"] == 0 and r["route"] == "hidden"
    assert ("softplus_backward.default: hidden: aten::softplus_backward.default has no libtorch route"
            in report["stdout"])
    assert report["summary"]["runnable"] == len(rows) - len(hidden)
    assert report["summary"]["reason_groups"]["hidden in this build: needs the overlay"] == len(hidden)


def test_world_names() -> None:
    assert [w.label for w in plan_mod.WORLDS] == ["overlay-leaky-str", "overlay", "leaky-str", "default"]
    assert plan_mod.world_named("default") == plan_mod.DEFAULT_WORLD
    assert not plan_mod.DEFAULT_WORLD.leaky_str  # nothing leaks per call unless the author asks
    assert plan_mod.DEFAULT_WORLD.macros == []
    assert plan_mod.WORLDS[0].macros == ["-DSHIMGEN_OVERLAY", "-DSHIMGEN_LEAKY_STR"]


@pytest.mark.parametrize("args, message", [
    (["--verify", "--world", "nope"], "unknown build world 'nope': choose one of overlay-leaky-str, overlay, "
                                      "leaky-str, default"),
    (["--world", "default"], "--world needs --verify"),
])
def test_bad_world_is_one_line(tmp_path, args: list[str], message: str) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "add", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and message in proc.stderr
    assert not out.exists()
