"""`shimgen --verify`: the generated wrappers, compiled against the installed torch and run against torch.ops.aten.

One session-scoped build covers every route (libtorch's C shim, the boxed dispatcher, shimgen's generated C shim
in the overlay library) and every type class; the other tests reuse it, or build something small of their own
(a deliberately broken wrapper must fail the verification; a header that does not compile must fail the build).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass

import pytest

from shimgen.generate import plan as plan_mod
from shimgen.proofs.verify import overlay, roundtrip
from tests.children import quick_exit

# Every route and type class, in few ops (the comment names what each adds).
REPRESENTATIVE = [
    "amax.default",  # shim: int[1], bool
    "pad.default",  # shim: SymInt[], str, float?
    "narrow.default",  # shim: SymInt, a view
    "new_zeros.default",  # shim: ScalarType?, Layout?, Device?, bool?
    "fill_.Scalar",  # shim: in-place, Scalar
    "transpose.int",  # dispatcher: int, a view
    "permute.default",  # dispatcher: int[]
    "flip.default",  # dispatcher: int[]
    "index_select.default",  # dispatcher: Tensor index
    "sum.dim_IntList",  # dispatcher: int[1]?, ScalarType?
    "sum.IntList_out",  # dispatcher: out=
    "sort.stable",  # dispatcher: bool?, two returns
    "sort.values",  # dispatcher: out= with two outputs
    "max.dim",  # dispatcher: two returns
    "cat.default",  # dispatcher: Tensor[]
    "masked_select.default",  # dispatcher: bool mask
    "clamp.Tensor",  # dispatcher: Tensor?
    "argmax.default",  # dispatcher: int?
    "isclose.default",  # dispatcher: float
    "contiguous.default",  # dispatcher: MemoryFormat
    "to.dtype_layout",  # dispatcher: Layout?, Device?, MemoryFormat?
    "zero_.default",  # dispatcher: in-place
    "add.Tensor",  # equivalent: libtorch's subtract.Tensor shim with -alpha (the overlay only adds forms)
    "softplus_backward.default",  # generated shim: Scalar
    "clamp.default",  # sibling: Scalar? as clamp.Tensor's 0-dim tensors (the dispatcher would drop min and max)
    "add_.Tensor",  # composition: in-place (add.Tensor, then copy_)
    "add.out",  # composition: out= (add.Tensor, then aten's out= rules)
    "full.out",  # generated shim: SymInt[] size, out=
]
ROUTES = {"shim", "dispatcher", "generated_shim", "sibling", "equivalent", "composition"}
# Ops the plan adds because a wrapper above lowers to them (full.out's numbers fill through fill_.Scalar, whose
# integers beyond a double's reach go through fill_.Tensor): generated and verified like the rest.
LOWERING_TARGETS = ["fill_.Tensor", "subtract.Tensor"]  # added by the plan: a lowering target, an equivalent's via
TYPE_CLASSES = {"Tensor", "Tensor?", "Tensor[]", "int", "int[]", "int?", "float", "float?", "Scalar", "bool",
                "bool?", "str", "Scalar?", "ScalarType?", "Device?", "Layout?", "MemoryFormat", "MemoryFormat?", "SymInt",
                "SymInt[]"}
_ROW_RE = re.compile(r"^(\S+)\s+(shim|dispatcher|generated_shim|sibling|equivalent|composition)\s+(\d+\.\d+)\s+(\S+)"
                     r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)"
                     r"\s+([\d.]+)s\s+(\S.*?)$", re.M)
# Overloads with a Scalar: a number the wrapper's route cannot carry exactly (an integer beyond 2^53 for a
# C shim's double, a float for an integer tensor's sibling where aten would compute otherwise) is refused with a
# `shimgen:` error while aten returns: counted as refused, never wrong.
SCALAR_OPS = {"add.Tensor", "add.out", "add_.Tensor", "clamp.default", "fill_.Scalar", "full.out",
              "softplus_backward.default",
              "subtract.Tensor"}  # libtorch's shim carries alpha as a double: refused for integers


@dataclass
class Run:
    out: str
    build: str
    proc: subprocess.CompletedProcess
    seconds: float

    @property
    def rows(self) -> dict[str, tuple[str, ...]]:
        return {m.group(1): m.groups()[1:] for m in _ROW_RE.finditer(self.proc.stdout)}


def shimgen_verify(ops: list[str], out: str, build: str, env: dict | None = None) -> Run:
    cmd = [sys.executable, "-m", "shimgen", "--ops", ",".join(ops), "--only", "--out", out, "--verify", "--build-dir",
           build]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "SHIMGEN_VERIFY_OPINFO": "off", **(env or {})})
    return Run(out, build, proc, time.perf_counter() - t0)


@pytest.fixture(scope="session")
def verified(tmp_path_factory) -> Run:
    root = tmp_path_factory.mktemp("verify")
    return shimgen_verify(REPRESENTATIVE, str(root / "out"), str(root / "build"))


def test_representative_set_passes(verified: Run) -> None:
    """Every op, and each op the plan added as a lowering target, is proven on shimgen's own samples: no sample
    wrong; a refusal (a `shimgen:` error where aten returned) only for a number a Scalar route cannot carry."""
    rows = verified.rows
    named = sorted(REPRESENTATIVE + LOWERING_TARGETS)
    assert sorted(rows) == named, verified.proc.stdout + verified.proc.stderr[-4000:]
    for op, (route, since, source, exact, refused, wrong, errors, seconds, result) in rows.items():
        assert source == "shimgen" and int(exact) > 0, op
        assert result == "proven" and wrong == "0", (op, verified.proc.stderr[-4000:])
        assert refused == "0" or op in SCALAR_OPS, (op, verified.proc.stderr[-4000:])
    assert f"{len(named)}/{len(named)} overloads proven" in verified.proc.stdout
    assert verified.proc.returncode == 0


def test_every_route_and_type_class_is_covered(verified: Run) -> None:
    assert {route for route, *_ in verified.rows.values()} == ROUTES
    with open(os.path.join(verified.build, "verify_ops.json")) as f:
        spec = json.load(f)
    types = {re.sub(r"\[\d+\]", "[]", a["type"]) for op in spec["ops"] for a in op["args"]}
    assert TYPE_CLASSES <= types, TYPE_CLASSES - types
    kinds = {op["kind"] for op in spec["ops"]}
    assert {"functional", "inplace", "out"} <= kinds
    assert any(len(op["returns"]) > 1 for op in spec["ops"])  # multi-return
    assert any(op["kind"] == "out" and len(op["returns"]) > 1 for op in spec["ops"])


def test_error_cases_ran(verified: Run) -> None:
    """Ops with a dim, an index or a second tensor have error samples (aten raised; so did the wrapper)."""
    rows = verified.rows
    for op in ("amax.default", "transpose.int", "index_select.default", "cat.default", "add.Tensor", "sort.values",
               "narrow.default", "pad.default"):
        assert int(rows[op][6]) > 0, op


def test_progress_and_timings_are_reported(verified: Run) -> None:
    assert f"verify [1/{len(REPRESENTATIVE) + len(LOWERING_TARGETS)}]" in verified.proc.stderr
    assert re.search(r"build \d+\.\d+s \(overlay .*round-trip extension", verified.proc.stdout)


def test_built_libraries_load_with_torch_ops_load_library(verified: Run) -> None:
    """The round-trip extension loads by itself (it finds the overlay next to it) in a fresh interpreter."""
    lib = os.path.join(verified.build, "libshimgen_roundtrip.so")
    assert os.path.isfile(lib) and os.path.isfile(os.path.join(verified.build, overlay.LIBRARY))
    code = textwrap.dedent(f"""
        import torch
        torch.ops.load_library({lib!r})
        rt = torch.ops.shimgen_roundtrip
        x, y = torch.randn(2, 3), torch.randn(2, 3)
        assert torch.equal(rt.add.Tensor(x, y, alpha=torch.tensor(2)), torch.add(x, y, alpha=2))  # overlay
        assert torch.equal(rt.cat.default([x, y], 1), torch.cat([x, y], 1))  # dispatcher
        assert torch.equal(rt.amax.default(x, [1]), torch.amax(x, [1]))  # libtorch's shim
        out = torch.empty(0)
        assert rt.add.out(x, y, alpha=torch.tensor(1), out=out) is out
        print("loaded")
    """)
    proc = subprocess.run([sys.executable, "-c", quick_exit(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "loaded" in proc.stdout, proc.stderr[-3000:]


def test_unchanged_sources_reuse_the_build(verified: Run) -> None:
    again = shimgen_verify(REPRESENTATIVE, verified.out, verified.build)
    assert again.rows.keys() == verified.rows.keys(), again.proc.stderr[-3000:]
    steps = re.search(r"^build [\d.]+s \((.*)\); samples", again.proc.stdout, re.M).group(1).split(", ")
    assert {s.rsplit(" ", 1)[0] for s in steps} >= {"overlay 1/1", "round-trip extension 1/1", "runner helper",
                                                   "overlay (link)", "round-trip extension (link)"}
    assert all(s.endswith(" reused") for s in steps), steps


def _mutate(path: str, old: str, new: str) -> None:
    with open(path) as f:
        text = f.read()
    assert old in text, old
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def test_a_wrong_wrapper_fails_and_a_crash_is_reported(tmp_path) -> None:
    """narrow with start and length swapped must fail; amax ignoring its error code must not pass (it returns a
    null tensor, or crashes the runner); the other ops still run. No overlay: both ops are libtorch shims."""
    from shimgen.tools.cli import main as cli_main

    out, build = str(tmp_path / "out"), str(tmp_path / "build")
    assert cli_main(["--ops", "narrow.default,amax.default,pad.default", "--only", "--out", out]) == 0
    ops_h = os.path.join(out, "torch", "csrc", "stable", "ops")  # each name's wrappers: ops/<name>.h
    _mutate(os.path.join(ops_h, "narrow.h"), "aoti_torch_aten_narrow(self.get(), dim, start, length, &ret0)",
            "aoti_torch_aten_narrow(self.get(), dim, length, start, &ret0)")
    _mutate(os.path.join(ops_h, "amax.h"), "SHIMGEN_CHECK(aoti_torch_aten_amax(", "(void)(aoti_torch_aten_amax(")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from shimgen.proofs.verify import run; "
         f"sys.exit(run({out!r}, {build!r}, ['narrow.default', 'amax.default', 'pad.default'], None, None))"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "SHIMGEN_VERIFY_OPINFO": "off"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    rows = {m.group(1): m.groups()[1:] for m in _ROW_RE.finditer(proc.stdout)}
    assert rows["narrow.default"][-1] == "WRONG"
    assert rows["amax.default"][-1] in ("WRONG", "ERROR")
    assert rows["pad.default"][-1] == "proven"
    assert "narrow.default failed:" in proc.stderr and "!= aten's" in proc.stderr
    assert not os.path.exists(os.path.join(build, overlay.LIBRARY))  # nothing libtorch lacks


def test_a_build_failure_is_reported(tmp_path) -> None:
    from shimgen.tools.cli import main as cli_main

    out, build = str(tmp_path / "out"), str(tmp_path / "build")
    assert cli_main(["--ops", "pad.default", "--only", "--out", out]) == 0
    _mutate(os.path.join(out, "torch", "csrc", "stable", "ops", "pad.h"), "inline torch::stable::Tensor pad(",
            "inline torch::stable::Tensor pad(not_a_type x, ")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from shimgen.proofs.verify import run; "
         f"sys.exit(run({out!r}, {build!r}, ['pad.default'], None, None))"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "SHIMGEN_VERIFY_OPINFO": "off"},
    )
    assert proc.returncode == 1
    assert "building round-trip extension 1/1 failed" in proc.stderr
    assert "not_a_type" in proc.stderr


# ---- no compiler needed -------------------------------------------------------------------------------------


def _kernel(op: str) -> roundtrip.Kernel:
    p = plan_mod.make([op])
    ks, skipped = roundtrip.kernels(p, p.release)
    assert not skipped
    return next(k for k in ks if k.op.name == op)  # not a lowering target the plan added


@pytest.mark.parametrize(
    "op, schema",
    [
        # A Scalar travels as a 0-dim tensor of the caller's number (lossless); the runner boxes an omitted default.
        ("add.Tensor", "add.Tensor(Tensor self, Tensor other, *, Tensor? alpha=None) -> Tensor"),
        ("histc.default", "histc(Tensor self, int bins=100, Tensor? min=None, Tensor? max=None) -> Tensor"),
        ("clamp.default", "clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"),
        ("full.out", "full.out(int[] size, Tensor fill_value, *, Tensor(a!) out) -> Tensor(a!)"),
        ("narrow.default", "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)"),
        ("sort.values", "sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, "
                        "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)"),
        ("pad.default", 'pad(Tensor self, int[] pad, str mode="constant", float? value=None) -> Tensor'),
    ],
)
def test_roundtrip_schema_uses_box_schema_types(op: str, schema: str) -> None:
    assert _kernel(op).schema == schema


def test_kernel_takes_box_types_in_schema_order_and_calls_the_exact_wrapper() -> None:
    k = _kernel("sum.IntList_out")
    assert k.params == ("const torch::stable::Tensor& self", "std::optional<std::vector<int64_t>> dim",
                        "bool keepdim", "std::optional<torch::headeronly::ScalarType> dtype",
                        "torch::stable::Tensor& out")
    assert k.returns == "torch::stable::Tensor"
    assert k.pointer.startswith("torch::stable::Tensor& (*)(torch::stable::Tensor&, const torch::stable::Tensor&")
    assert k.args[0] == "shimgen_rt::pass<torch::stable::Tensor&>(out)"  # the wrapper takes out first


def test_a_route_that_carries_every_argument_beats_one_that_drops_some() -> None:
    """clamp(self, Scalar? min=None, Scalar? max=None): the dispatcher cannot carry Scalar?, so it could only call
    clamp with min and max as None (always an error). The Tensor sibling clamp.Tensor carries both (as 0-dim
    tensors) on every release, so that route wins from 2.9 on, with every argument kept."""
    from shimgen.generate.signatures import cpp as sig_cpp

    p = plan_mod.make(["clamp.default"])
    w = sig_cpp.build(next(op for op in p.ops if op.name == "clamp.default"), p)
    assert [(v.route.name, v.kept) for v in w.variants] == [("sibling", 3)]
    assert w.variants[0].start == plan_mod.Version(2, 9)


def test_overlay_leaves_out_what_libtorch_ships() -> None:
    from shimgen.proofs.verify import build

    p = plan_mod.make(["add.Tensor", "amax.default", "pad.default", "transpose.int"])
    missing, _ = overlay.missing_ops(p, build.find_torch())
    assert [op.name for op in missing.ops] == ["add.Tensor", "transpose.int"]


def test_ci_budget(verified: Run) -> None:
    """The shared build and run stay well inside CI's limit (2 cores)."""
    assert verified.seconds < 240, verified.seconds


def _need_opinfo() -> None:
    """OpInfo needs the `expecttest` package (in the test extras): CI must have it; elsewhere the test skips."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("expecttest is missing: install the test extras (pip install -e '.[test]')")
        pytest.skip("OpInfo needs the expecttest package (pip install -e '.[test]')")


def test_opinfo_samples_are_recorded_cached_and_replayed(verified: Run, tmp_path, monkeypatch) -> None:
    """Two OpInfo entries recorded into a fresh cache, read back from it, and replayed through the representative
    build: add.Tensor and sum.dim_IntList get OpInfo samples; sum.IntList_out, which OpInfo never calls, gets its
    functional overload's samples with out= tensors."""
    from shimgen.proofs.verify import build, record
    from shimgen.proofs.verify.runner_client import run_samples

    _need_opinfo()
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path / "cache"))
    version = build.find_torch().version
    rec = record.record(version, jobs=1, ops=["add", "sum"])
    assert rec.note is None and not rec.cached
    assert {"add.Tensor", "sum.dim_IntList"} <= set(rec.calls), sorted(rec.calls)
    assert all(c["source"].startswith("OpInfo ") for c in rec.calls["add.Tensor"])
    assert rec.path.startswith(str(tmp_path / "cache")) and os.path.isfile(rec.path)
    assert record.record(version, jobs=1, ops=["add", "sum"]).cached

    with open(os.path.join(verified.build, "verify_ops.json")) as f:
        spec = json.load(f)
    spec["ops"] = [op for op in spec["ops"] if op["op"] in ("add.Tensor", "sum.dim_IntList", "sum.IntList_out")]
    spec["recorded"] = rec.path
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    results = run_samples(str(spec_path), spec, str(tmp_path / "runner.log"), jobs=2)
    for op in ("add.Tensor", "sum.dim_IntList", "sum.IntList_out"):
        r = results[op]
        assert r["sources"].get("OpInfo", 0) > 0 and r["counts"]["exact"] > 0, (op, r)
        assert r["counts"]["wrong"] == 0, (op, r)


def test_without_opinfo_verify_says_so(verified: Run) -> None:
    assert "note: OpInfo samples off" in verified.proc.stdout
