"""The compatibility matrix (shimgen.proofs.verify.matrix): wrappers built once per targeted release, run on other torch
runtimes (venvs under $SHIMGEN_RUNTIMES; `.ci/run` creates 2.10.0 and 2.14.1, the installed torch is 2.13.0).

The op set has drifted, added and removed ops: numel/dim/is_contiguous (dispatcher ops from 2.12), cholesky/qr
(removed in 2.14), tril/triu (int -> SymInt in 2.10), _cdist_backward (argument renamed in 2.14), plus
manifest ops on each route. The matrix runs on every runtime found (the installed torch is always one); a missing
runtime's cells are named in a skip of the tests that need them, and in CI (CI=true) a missing runtime fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shimgen.generate import plan as plan_mod
from shimgen.proofs.verify import matrix, roundtrip, runtimes
from shimgen.facts.versions import Version

OPS = [
    "add.Tensor", "pad.default", "amax.default", "narrow.default", "new_zeros.default", "transpose.int",
    "sum.dim_IntList", "flatten.using_ints", "numel.default", "dim.default", "is_contiguous.default",
    "cholesky.default", "qr.default", "tril.default", "triu.default", "_cdist_backward.default",
]  # fmt: skip
TARGETS = ["2.9", "2.10", "2.13"]
RUNTIMES = ["2.10.0", "2.13.0", "2.14.1"]


@pytest.fixture(scope="session")
def ci_matrix(tmp_path_factory) -> dict:
    """The matrix over the runtimes found; data["missing"] names the others (CI: a missing one fails)."""
    found, missing = runtimes.resolve(RUNTIMES)
    if missing and os.environ.get("CI") == "true":
        pytest.fail(runtimes.missing_reason(missing))
    if not found:
        pytest.skip(f"none of the runtimes {', '.join(RUNTIMES)} is here, not even the installed torch")
    root = tmp_path_factory.mktemp("matrix")
    out = root / "matrix.json"
    cmd = [sys.executable, "-m", "shimgen.dev", "matrix", "--ops", ",".join(OPS), "--targets", ",".join(TARGETS),
           "--runtimes", ",".join(r.name for r in found), "--build-dir", str(root / "build"), "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=2400)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    data = json.loads(out.read_text())
    data["stdout"], data["returncode"] = proc.stdout, proc.returncode
    data["ran"], data["missing"] = [r.name for r in found], missing
    return data


def _skip_cells_of_missing(data: dict, needed: tuple[str, ...]) -> None:
    """After checking the cells that ran: skip, naming the runtimes whose cells this test could not check."""
    absent = [r for r in needed if r in data["missing"]]
    if absent:
        pytest.skip(f"cells on {', '.join(absent)} not run: {runtimes.missing_reason(absent)}")


def _cells(data: dict, op: str) -> dict[str, dict]:
    return data["cells"][op]


def test_every_pair_at_or_after_its_target_is_run(ci_matrix: dict) -> None:
    pairs = {tuple(p) for p in ci_matrix["pairs"]}
    ran = ci_matrix["ran"]
    assert pairs == {(t, r) for t in TARGETS for r in ran if Version.parse(t) <= Version.parse(r)}
    for op in OPS:
        assert set(_cells(ci_matrix, op)) == {f"{t}/{r}" for t, r in pairs}, op
    assert "failures caused by shimgen" in ci_matrix["stdout"]
    _skip_cells_of_missing(ci_matrix, tuple(RUNTIMES))


def test_ops_removed_in_a_newer_runtime_are_flagged_not_failed(ci_matrix: dict) -> None:
    for op in ("cholesky.default", "qr.default"):
        for key, cell in _cells(ci_matrix, op).items():
            if key.endswith("/2.14.1"):
                assert cell["code"] == "removed", (op, key, cell)
                assert "does not exist in torch 2.14.1" in cell["detail"]
            else:
                assert cell["code"] in ("ok", "."), (op, key, cell)
    _skip_cells_of_missing(ci_matrix, ("2.14.1",))


def test_ops_missing_from_an_older_dispatcher_are_attributed(ci_matrix: dict) -> None:
    """numel/dim/is_contiguous are only TorchScript ops in 2.10: a wrapper compiled at a target <= 2.10 cannot
    work there. The matrix says so (absent, with the wrapper's error) unless the wrapper is hidden there."""
    for op in ("numel.default", "dim.default", "is_contiguous.default"):
        for key, cell in _cells(ci_matrix, op).items():
            if key.endswith("/2.10.0"):
                assert cell["code"] in ("absent", "."), (op, key, cell)
                if cell["code"] == "absent":
                    assert "not a dispatcher op in torch 2.10.0" in cell["detail"], cell
            else:
                assert cell["code"] in ("ok", "."), (op, key, cell)
    _skip_cells_of_missing(ci_matrix, ("2.10.0",))


def test_ops_present_everywhere_pass_everywhere(ci_matrix: dict) -> None:
    """Every other cell is ok, or hidden where the wrapper does not exist at the target."""
    special = {"numel.default", "dim.default", "is_contiguous.default", "cholesky.default", "qr.default"}
    for op in OPS:
        if op in special:
            continue
        for key, cell in _cells(ci_matrix, op).items():
            assert cell["code"] in ("ok", "."), (op, key, cell)
    # at least one wrapper per target really ran (a matrix of hidden cells would prove nothing)
    for t in TARGETS:
        assert any(_cells(ci_matrix, op)[f"{t}/2.13.0"]["code"] == "ok" for op in OPS), t
    _skip_cells_of_missing(ci_matrix, tuple(RUNTIMES))


def test_no_failure_is_caused_by_shimgen(ci_matrix: dict) -> None:
    bad = [(op, k, c) for op in OPS for k, c in _cells(ci_matrix, op).items()
           if matrix.LEGEND[c["code"]][1]]
    assert not bad, bad
    assert ci_matrix["returncode"] == 0
    _skip_cells_of_missing(ci_matrix, tuple(RUNTIMES))


# ---- no runtime needed -------------------------------------------------------------------------------------


def _wrapper(op: str):
    from shimgen.generate.signatures import cpp as sig_cpp

    p = plan_mod.make([op])
    return p, next(w for w in sig_cpp.wrappers(p)[0] if w.op.name == op)  # not a lowering target the plan added


def test_kernel_at_an_old_target_receives_lists_and_strings_as_tensors() -> None:
    """At 2.9 the dispatcher cannot carry int[] or str: the kernel takes tensors and decodes them."""
    p, w = _wrapper("pad.default")
    k = roundtrip.kernel(w, p, Version(2, 9))
    assert k.schema == "pad(Tensor self, Tensor pad, Tensor mode, float? value=None) -> Tensor"
    assert dict(k.encoded) == {"pad": {"dtype": "int64", "size": None, "optional": False},
                               "mode": {"dtype": "str", "size": None, "optional": False}}
    assert "auto pad_decoded = shimgen_rt::decode<std::vector<int64_t>>(pad);" in k.decodes
    k13 = roundtrip.kernel(w, p, Version(2, 13))
    assert k13.schema == 'pad(Tensor self, int[] pad, str mode="constant", float? value=None) -> Tensor'
    assert not k13.encoded


def test_kernel_exercises_the_variant_of_its_target() -> None:
    """linalg_eigvalsh.default in a build with the overlay (no SHIMGEN_LEAKY_STR): the dispatcher variant with every
    argument, guarded (its str `UPLO` leaks in libtorch 2.10-2.13's dispatcher: the call raises there) before 2.13;
    shimgen's shim at 2.13 (it computes on every runtime: it wins the tie); the dispatcher, unguarded, from 2.14. In
    the widest build (leaky strings accepted) the dispatcher carries every argument from 2.10. (div.Tensor_mode,
    fft_rfft.default and fft_fft2.default, the examples before, now take a composition below 2.13 there: kernels
    str_value and fft_norm.)"""
    from shimgen.generate.signatures import cpp as sig_cpp
    from shimgen.generate.plan import World

    default, dw = _wrapper("linalg_eigvalsh.default")
    k = roundtrip.kernel(dw, default, Version(2, 10))
    assert k.variant.route.name == "dispatcher" and not k.unused
    p = default.in_world(World(overlay=True, leaky_str=False))
    w = next(x for x in sig_cpp.wrappers(p)[0] if x.op.name == "linalg_eigvalsh.default")
    k = roundtrip.kernel(w, p, Version(2, 10))
    assert k.variant.route.name == "dispatcher" and not k.unused and k.variant.guard == ("UPLO",)
    spec = roundtrip.op_spec(k, p, p.native)
    assert not [a["name"] for a in spec["args"] if a.get("unused")]
    assert spec["error_text"] is False  # before 2.13 an extension cannot read libtorch's message
    assert roundtrip.kernel(w, p, Version(2, 13)).variant.route.name == "generated_shim"
    k14 = roundtrip.kernel(w, p, Version(2, 14))
    assert k14.variant.route.name == "dispatcher" and not k14.unused and not k14.variant.guard


def test_hidden_wrappers_have_no_kernel() -> None:
    p = plan_mod.make(["numel.default"])  # aten::numel arrived in 2.12
    ks, skipped = roundtrip.kernels(p, p.release, Version(2, 10))
    assert not ks and skipped[0][1].startswith("hidden at 2.10")


def test_samples_leave_out_unused_arguments_and_encode_lists() -> None:
    from shimgen.proofs.verify import targeted

    op = {"op": "x.default", "name": "x", "overload": "default", "args": [
        {"name": "self", "kwarg_only": False, "default": None},
        {"name": "min", "kwarg_only": False, "default": "None", "unused": True},
        {"name": "dim", "kwarg_only": False, "default": "[]", "encode": {"dtype": "int64", "size": None}},
        {"name": "mode", "kwarg_only": False, "default": '"constant"', "encode": {"dtype": "str", "size": None}},
    ]}
    adapted, wrap = targeted.adapt(op)
    assert [a["name"] for a in adapted["args"]] == ["self", "dim", "mode"]
    assert all(a["kwarg_only"] for a in adapted["args"][1:])  # after a left-out argument: by keyword
    seen = {}
    wrap(lambda *a, **k: seen.update(pos=a, kw=k))("s", dim=[1, 2])
    assert seen["pos"] == ("s",)
    assert seen["kw"]["dim"].tolist() == [1, 2]
    assert bytes(seen["kw"]["mode"].tolist()) == b"constant"  # an omitted encoded argument gets aten's default


def _result(status: str | None = None, reason: str | None = None, failures: tuple[str, ...] = (),
            **counts: int) -> dict:
    """A samples-runner result for one op (runner_client's shape)."""
    c = {"exact": 0, "refused": 0, "wrong": 0, "error": 0, "aten-fails": 0, "unreached": 0}
    c.update({k.replace("_", "-"): v for k, v in counts.items()})
    return {"counts": c, "failures": list(failures), "notes": [], "scalar_wrong": 0, "causes": {}, "status": status,
            "reason": reason, "samples": sum(c.values())}


def test_cells_are_classified() -> None:
    r10, r14 = (runtimes.Runtime(n, sys.executable, None) for n in ("2.10.0", "2.14.1"))  # type: ignore[arg-type]
    absent = _result("absent", "aten::cholesky.default does not exist in torch 2.14.1")
    assert matrix.classify(absent, Version(2, 13), r14).code == "removed"
    assert matrix.classify(absent, Version(2, 13), r10).code == "absent"
    assert matrix.classify(_result(exact=3), None, r10).code == "ok"
    assert matrix.classify(_result(failures=("x: values differ",), exact=2, wrong=1), None, r10).code == "FAIL"
    crashed = _result(failures=("sample 2: the wrapper crashed (SIGSEGV) in phase `wrapper`; aten returned",), wrong=1)
    assert matrix.classify(crashed, None, r10).code == "CRASH"
    assert matrix.classify(_result(error=4), None, r10).code == "n/r"  # aten raised on every sample
    assert matrix.classify(_result(refused=2), None, r10).code == "refused"
    assert matrix.classify(_result("error", "the runner process died"), None, r10).code == "CRASH"
    assert matrix.classify(None, None, r10).code == "CRASH"


def test_overlay_errors_are_attributed_to_ops(tmp_path) -> None:
    """A shim that does not compile against a runtime's headers is blamed by line (definition or include)."""
    from shimgen.proofs.verify import overlay

    p = plan_mod.make(["add.Tensor", "clone.default"])
    src = overlay.sources(p)["torch/csrc/inductor/aoti_torch/generated/c_shim_aten.cpp"]
    path = str(tmp_path / "c_shim_aten.cpp")
    lines = src.splitlines()
    clone_def = next(i for i, t in enumerate(lines, 1) if t.startswith("// aten::clone"))
    clone_inc = next(i for i, t in enumerate(lines, 1) if t == "#include <ATen/ops/clone.h>")
    log = f"{path}:{clone_def + 3}:5: error: no matching function\n"
    assert matrix._ops_in_errors(log, src, path, p.ops) == {"clone.default"}
    log = f"{path}:{clone_inc}:10: fatal error: ATen/ops/clone.h: No such file or directory\n"
    assert matrix._ops_in_errors(log, src, path, p.ops) == {"clone.default"}
    stubs = matrix._stubs(p, [op for op in p.ops if op.name == "clone.default"], "torch 2.10.0")
    assert "AOTITorchError aoti_torch_aten_clone(" in stubs and "return AOTI_TORCH_FAILURE;" in stubs


def test_runtimes_are_found_by_name_without_starting_them(tmp_path, monkeypatch) -> None:
    from shimgen.base.errors import ShimgenError

    venv = tmp_path / "torch-2.11.0"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\n")
    (venv / "bin" / "python").chmod(0o755)
    pkg = venv / "lib" / "python3.11" / "site-packages" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "version.py").write_text("__version__ = '2.11.0+cu130'\n")
    monkeypatch.setenv(runtimes.ENV, str(tmp_path))
    r = runtimes.find("2.11.0")
    assert r is not None and r.python == str(venv / "bin" / "python") and r.release == Version(2, 11)
    assert r.torch.root == str(pkg) and r.torch.version == "2.11.0+cu130"
    found, missing = runtimes.resolve(["2.11.0", "2.12.1"])
    assert [x.name for x in found] == ["2.11.0"] and missing == ["2.12.1"]
    assert f"{tmp_path}/torch-X.Y.Z" in runtimes.missing_reason(missing)
    with pytest.raises(ShimgenError, match="bad runtime"):
        runtimes.find("2.11")
    assert runtimes.targets(Version(2, 13)) == [Version(2, m) for m in range(9, 14)]
