"""The samples runner on small fixtures (no compiler): time limits, crash attribution, the three outcomes of a
sample, Scalar-boxing attribution, the recorded-samples file, the report. Fixture ops: tests/fixtures/verify/ops.py.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import torch

from shimgen.base.errors import ShimgenError
from shimgen.proofs.verify import record, report, serial
from shimgen.proofs.verify.runner import box
from shimgen.proofs.verify.runner_client import run_samples

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "verify", "ops.py")


def _arg(name: str, type_: str, box_schema: str | None = None) -> dict:
    return {"name": name, "type": type_, "box_schema": box_schema or type_, "default": None, "kwarg_only": False,
            "is_write": False, "is_out": False}


def _op(name: str, args: list[dict]) -> dict:
    return {"op": f"{name}.default", "name": name, "overload": "default", "kind": "functional",
            "functional": None, "route": "dispatcher", "overlay": False, "boxed": True, "lowers": False,
            "since": "2.9", "wrapper": name, "tags": [],
            "args": args, "returns": [{"type": "Tensor", "name": "", "is_write": False, "box_schema": "Tensor"}]}


def _run(tmp_path, ops: list[dict], calls: dict[str, list[dict]], device: str | None = None,
         **limits) -> tuple[dict, float]:
    recorded = tmp_path / "recorded.pkl"
    recorded.write_bytes(serial.dumps({"format": record.FORMAT, "calls": calls}))
    spec = {"reference": "shimgen_fx", "roundtrip_ns": "shimgen_fx_rt", "preload": [FIXTURE],
            "recorded": str(recorded), "limits": {"sample_seconds": 2, "op_seconds": 60, **limits}, "ops": ops}
    if device:
        spec["device"] = device
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    t0 = time.perf_counter()
    results = run_samples(str(spec_path), spec, str(tmp_path / "runner.log"), jobs=2)
    return results, time.perf_counter() - t0


def _calls(op: str, values: list[dict]) -> dict[str, list[dict]]:
    return {op: [{"args": {k: serial.encode(v) for k, v in vals.items()}, "source": "OpInfo fixture"}
                 for vals in values]}


SPIN = _op("spin", [_arg("x", "Tensor"), _arg("mode", "int")])
SCALE = _op("scale", [_arg("x", "Tensor"), _arg("s", "Scalar", "float")])


@pytest.fixture(scope="module")
def spin_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runner")
    x = torch.arange(6.0).reshape(2, 3)
    calls = _calls("spin.default", [{"x": x, "mode": m} for m in range(10)])
    calls.update(_calls("scale.default", [{"x": x, "s": 2.5}, {"x": torch.arange(3), "s": 2}]))
    return _run(tmp, [SPIN, SCALE], calls)


def test_hangs_and_crashes_cost_one_sample_and_the_run_goes_on(spin_run) -> None:
    results, seconds = spin_run
    r = results["spin.default"]
    assert r["samples"] == 10, r
    assert r["counts"] == {"exact": 1, "refused": 1, "wrong": 4, "error": 1, "aten-fails": 3, "unreached": 0,
                           "nondeterministic": 0}, r
    assert results["scale.default"]["samples"] == 2  # the next op ran
    # Two hangs, each killed at the 2 s sample limit: far from the fixture's 3,600 s sleep (a loose bound: the
    # machine may be busy; this is not a timing test).
    assert seconds < 600, seconds


def test_a_hang_or_crash_names_the_side_it_happened_on(spin_run) -> None:
    r = spin_run[0]["spin.default"]
    failures = " | ".join(r["failures"])
    notes = " | ".join(r["notes"])
    assert "sample 2: the wrapper hung (a sample ran past the 2 s limit)" in failures
    assert "sample 3: the wrapper crashed (killed by SIGSEGV) in phase `wrapper`; aten returned" in failures
    assert "values differ from aten's" in failures  # mode 5
    assert "sample 1: aten itself hung on this input" in notes and "not the wrapper's failure" in notes
    assert "sample 4: aten itself crashed on this input (killed by SIGSEGV)" in notes
    assert "sample 8: the wrapper crashed (killed by SIGSEGV) in phase `wrapper (aten raised)`; aten raised an " \
           "error on this input" in failures
    assert "refused: " in notes and "shimgen: mode 6 cannot cross the stable ABI" in notes
    # mode 9: the crash shows in the wrapper's phase, but aten run alone on the input crashes too
    assert "sample 9: the process crashed (killed by SIGSEGV) in phase `wrapper`, and aten alone crashes on " \
           "this input too" in notes
    assert "and runs alone without trouble" in failures  # modes 2, 3 and 8 were checked the same way
    status, reason = report.verdict(r)
    assert status == "WRONG" and "hung" in reason


def test_the_scalar_boxing_is_attributed_not_hidden(spin_run) -> None:
    """aten gets the caller's int 2 (int64 result); the wrapper gets 2.0 (float result): wrong, and aten given
    2.0 agrees with the wrapper, so the cause is the boxing. The float sample is exact."""
    r = spin_run[0]["scale.default"]
    assert r["counts"]["exact"] == 1 and r["counts"]["wrong"] == 1, r
    assert r["scalar_wrong"] == 1
    assert "dtype torch.float32 != aten's torch.int64" in r["failures"][0]
    assert report.verdict(r)[0] == "WRONG (Scalar)"


ON_META = _op("on_meta", [_arg("x", "Tensor")])


@pytest.mark.parametrize("device", [None, "cpu", "meta"])
def test_the_samples_move_to_the_spec_device_on_both_sides(tmp_path, device) -> None:
    """spec["device"] (`--verify --device cuda` on a GPU): every tensor of a sample reaches aten and the wrapper on
    that device; by default and with cpu, they stay where the recording made them. The meta device stands in for a
    GPU here: the fixture's aten raises unless x is on meta, its wrapper returns ones only for x on meta, and the
    results agree; then comparing the arguments themselves fails (meta tensors hold no values to compare)."""
    x = torch.arange(4.0)
    results, _ = _run(tmp_path, [ON_META], _calls("on_meta.default", [{"x": x}, {"x": x.reshape(2, 2)}]), device,
                      sample_seconds=60)
    r = results["on_meta.default"]
    assert r["counts"]["exact"] == 0 and r["counts"]["wrong"] >= 2, r
    for failure in r["failures"]:
        if device == "meta":
            assert "comparing the results failed" in failure and "Meta" in failure, failure
        else:
            assert "aten raised RuntimeError('on_meta: x is on cpu')" in failure, failure


def test_the_runner_imports_this_shimgen_whatever_the_working_directory(tmp_path, monkeypatch) -> None:
    """`shimgen --verify` run from a folder holding another `shimgen` package (a checkout, a project of that name):
    the samples runner imports the shimgen that started it, never the working directory's."""
    decoy = tmp_path / "cwd" / "shimgen"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('the working directory\\'s shimgen was imported')\n")
    monkeypatch.chdir(decoy.parent)
    results, _ = _run(tmp_path, [ON_META], _calls("on_meta.default", [{"x": torch.arange(3.0)}]))
    assert results["on_meta.default"]["samples"] >= 1, results  # the runner ran (it died at its imports before)


def test_device_move_keeps_structure_and_leaves() -> None:
    from shimgen.proofs.verify import devices

    t = torch.ones(2, requires_grad=True)
    moved = devices.move({"a": [t, (t, 3)], "b": 2.5, "c": torch.float32}, torch.device("meta"))
    assert moved["b"] == 2.5 and moved["c"] is torch.float32 and isinstance(moved["a"][1], tuple)
    assert moved["a"][0].is_meta and moved["a"][0].is_leaf and moved["a"][0].requires_grad
    assert moved["a"][1][1] == 3
    assert devices.parse(None) == "cpu" and devices.parse("cuda:1") == "cuda:1"
    for bad in ("tpu", "cuda:x", "cpu:0", "", " "):
        with pytest.raises(ShimgenError, match="expected cpu, cuda or cuda:N"):
            devices.parse(bad)


@pytest.mark.slow  # waits out the runner's time limits
def test_op_time_limit_stops_an_op_that_keeps_hanging(tmp_path) -> None:
    calls = _calls("spin.default", [{"x": torch.ones(2), "mode": 2}] * 6)
    results, seconds = _run(tmp_path, [SPIN], calls, sample_seconds=1, op_seconds=2.5)
    r = results["spin.default"]
    assert 1 <= r["counts"]["wrong"] <= 4, r
    assert any("not run (time limit 2.5 s)" in n for n in r["notes"]), r
    assert seconds < 600  # not 6 hangs of 3,600 s


def test_box_carries_scalars_as_the_round_trip_schema_does() -> None:
    scalar = _arg("s", "Scalar", "float")
    assert box(scalar, 3) == 3.0 and isinstance(box(scalar, 3), float)
    assert box(scalar, True) == 1.0
    assert box(_arg("n", "int"), 3) == 3  # only types the schema boxes differently change
    assert box(_arg("f", "float"), 3) == 3


def test_serial_round_trips_every_kind_of_value() -> None:
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:3]  # a strided view of a larger storage
    values = {
        "view": t, "bool": torch.tensor([True, False]), "complex": torch.tensor([1 + 2j]), "empty": torch.empty(0, 3),
        "scalar": torch.tensor(2.5, dtype=torch.float64), "list": [torch.ones(2), None], "ints": [1, 2],
        "tuple": (1, 2.5), "dtype": torch.int64, "device": torch.device("cpu"), "layout": torch.strided,
        "mf": torch.channels_last, "none": None, "number": 3, "text": "mean", "c": 1 + 2j,
        "q": torch.quantize_per_tensor(torch.tensor([0.5, 1.0]), 0.1, 2, torch.quint8),
        "sparse": torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(),
        "gen": torch.Generator().manual_seed(5),
    }
    blob = serial.dumps({k: serial.encode(v) for k, v in values.items()})
    back = {k: serial.decode(v) for k, v in serial.loads(blob).items()}
    assert back["view"].stride() == t.stride() and torch.equal(back["view"], t)
    for k in ("bool", "complex", "empty", "scalar"):
        assert back[k].dtype == values[k].dtype and torch.equal(back[k], values[k]), k
    assert torch.equal(back["list"][0], torch.ones(2)) and back["list"][1] is None
    assert back["ints"] == [1, 2] and back["tuple"] == (1, 2.5) and back["c"] == 1 + 2j
    assert (back["dtype"], back["device"], back["layout"], back["mf"]) == (torch.int64, torch.device("cpu"),
                                                                           torch.strided, torch.channels_last)
    assert back["none"] is None and back["number"] == 3 and back["text"] == "mean"
    assert torch.equal(back["q"].int_repr(), values["q"].int_repr()) and back["q"].q_scale() == 0.1
    assert torch.equal(back["sparse"].to_dense(), values["sparse"].to_dense())
    assert torch.equal(back["gen"].get_state(), values["gen"].get_state())


def test_serial_refuses_what_it_cannot_rebuild() -> None:
    with pytest.raises(serial.Unserializable):
        serial.encode(torch.empty(2, device="meta"))
    with pytest.raises(serial.Unserializable):
        serial.encode(object())
    with pytest.raises(serial.Unserializable):
        serial.encode(torch.zeros(1 << 17))  # over the byte budget


def test_a_samples_file_cannot_run_code(tmp_path) -> None:
    import pickle

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    with pytest.raises(pickle.UnpicklingError):
        serial.loads(pickle.dumps(Evil()))


def test_report_writes_markdown_and_json(spin_run, tmp_path) -> None:
    results, _ = spin_run
    spec = {"ops": [SPIN, SCALE]}
    table = report.rows(spec, results)
    paths = report.write(str(tmp_path / "coverage.md"), table, {"command": "test"})
    md = open(paths[0]).read()
    data = json.load(open(paths[1]))
    assert "| WRONG | 1 |" in md and "| WRONG (Scalar) | 1 |" in md
    assert data["summary"]["overloads"] == 2 and data["summary"]["failing"] == 2
    assert {row["op"]: row["status"] for row in data["ops"]} == {"spin.default": "WRONG",
                                                                "scale.default": "WRONG (Scalar)"}


def test_an_overload_opinfo_never_reached_borrows_fitting_calls() -> None:
    """add_.Tensor takes add.Tensor's calls (its functional); mul.Scalar takes only mul.Tensor's calls whose
    `other` is a number (a tensor cannot be passed for a Scalar)."""
    from shimgen.proofs.verify import samples

    def spec(op: str, kind: str, functional: str | None, args: list[dict]) -> dict:
        name, _, overload = op.partition(".")
        return {**_op(name, args), "op": op, "overload": overload, "kind": kind, "functional": functional}

    x = torch.ones(2)
    recorded = {**_calls("add.Tensor", [{"self": x, "other": x}]),
                **_calls("mul.Tensor", [{"self": x, "other": x}, {"self": x, "other": 2}])}
    add_ = spec("add_.Tensor", "inplace", "add.Tensor", [_arg("self", "Tensor(a!)"), _arg("other", "Tensor")])
    got = samples.recorded_samples(add_, recorded, None)
    assert len(got) == 1 and got[0].source == "OpInfo fixture (via add.Tensor)"
    mul_scalar = spec("mul.Scalar", "functional", None, [_arg("self", "Tensor"), _arg("other", "Scalar", "float")])
    got = samples.recorded_samples(mul_scalar, recorded, None)
    assert [s.label for s in got] == ["self=T(2,):float32, other=2"]


def test_recorded_values_are_passed_as_a_cpp_caller_writes_them() -> None:
    """aten's Python binding takes a number for a Tensor and an int for an int[]; a wrapper takes a tensor and a
    list, so both sides get those."""
    from shimgen.proofs.verify import samples

    op = _op("f", [_arg("x", "Tensor"), _arg("dims", "int[]"), _arg("s", "Scalar", "float")])
    got = samples.as_written(op, {"x": 2.5, "dims": 1, "s": 3})
    assert isinstance(got["x"], torch.Tensor) and got["x"].dim() == 0 and got["x"].item() == 2.5
    assert got["dims"] == [1] and got["s"] == 3


def _flaky_op() -> dict:
    return {"name": "flaky", "overload": "default", "args": [
        {"name": "self", "type": "Tensor", "box_schema": "Tensor", "default": None, "is_out": False,
         "kwarg_only": False}], "returns": [{"type": "Tensor", "box_schema": "Tensor"}]}


def test_aten_disagreeing_with_itself_is_its_own_outcome_never_exact_nor_wrong() -> None:
    """MKL's gelsy (linalg_lstsq driver='gelsy', float32 2x3) returns last-bit different values in about half of
    its calls: a sample where aten's reruns disagree is `nondeterministic`, the overload unproven in its own
    reason group; where aten agrees with itself a differing wrapper stays wrong."""
    from shimgen.proofs.verify import runner

    calls = {"n": 0}

    def flaky(t):  # aten: its first run differs from the later ones (as gelsy's does, by buffer address)
        calls["n"] += 1
        return t + (1e-7 if calls["n"] % 3 == 1 else 0.0)

    def make():
        return {"self": torch.ones(2, 3)}

    def steady_wrapper(t):
        return t + 0.5

    op = _flaky_op()
    outcome, message, _ = runner.check(op, flaky, steady_wrapper, make, True, lambda phase: None)
    assert outcome == "nondeterministic" and message.startswith("aten is not deterministic here")
    # a wrapper whose properties differ is still wrong, nondeterministic aten or not
    calls["n"] = 0
    outcome, _, _ = runner.check(op, flaky, lambda t: t.double(), make, True, lambda phase: None)
    assert outcome == "wrong"
    # aten deterministic: the differing wrapper is wrong
    outcome, _, _ = runner.check(op, lambda t: t + 0.0, steady_wrapper, make, True, lambda phase: None)
    assert outcome == "wrong"
    # the verdict: unproven in its own reason group, never proven, never WRONG
    r = {"op": "flaky.default", "counts": {"exact": 0, "refused": 0, "wrong": 0, "error": 0, "aten-fails": 0,
                                           "unreached": 0, "nondeterministic": 1},
         "notes": ["nondeterministic: x: aten is not deterministic here"], "failures": [], "scalar_wrong": 0}
    status, reason = report.verdict(r)
    assert status == "unproven" and report.category(status, reason) == "unproven: aten is not deterministic here"


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="needs torch's MKL LAPACK (gelsy)")
def test_linalg_lstsq_gelsy_float32_is_caught_as_nondeterministic() -> None:
    """The recorded case: aten's own gelsy on a float32 2x3 system against a wrapper returning aten's first
    values: whatever the wrapper returns, the sample is never `wrong` (and never `exact` when aten disagrees)."""
    from shimgen.proofs.verify import runner

    torch.manual_seed(0)
    a, b = torch.randn(2, 3), torch.randn(2, 2)
    op = {"name": "linalg_lstsq", "overload": "default", "args": [
        {"name": n, "type": t, "box_schema": t, "default": None, "is_out": False, "kwarg_only": kw}
        for n, t, kw in (("self", "Tensor", False), ("b", "Tensor", False), ("rcond", "float?", True),
                         ("driver", "str?", True))], "returns": [{"type": "Tensor", "box_schema": "Tensor"}] * 4}
    aten = torch.ops.aten.linalg_lstsq.default
    seen = set()
    for _ in range(20):
        outcome, _, _ = runner.check(op, aten, aten, lambda: {"self": a, "b": b, "driver": "gelsy"}, True,
                                     lambda phase: None)
        seen.add(outcome)
    assert seen <= {"exact", "nondeterministic"}


def test_aten_writing_past_an_overlapping_out_is_aten_failing_not_a_corrupted_comparison() -> None:
    """adaptive_max_pool3d_backward.grad_input writes numel elements from an expanded (one-element) out=
    tensor's data pointer: with a bare `zeros(1).expand(...)` it overwrote the runner's heap, and the comparison
    then failed at random (std::bad_alloc, a TypeError in torch.frombuffer, SIGABRT). The sample's out= tensor
    sits in a guard buffer: the write lands there and the sample is aten's failure; the wrapper is not run."""
    from shimgen.proofs.verify import runner, samples

    x = torch.randn(1, 4, 4, 3, 5, dtype=torch.float64)
    o, idx = torch.ops.aten.adaptive_max_pool3d(x, (2, 2, 2))
    go = torch.randn_like(o)
    op = {"name": "adaptive_max_pool3d_backward", "overload": "grad_input", "args": [
        {"name": n, "type": "Tensor", "box_schema": "Tensor", "default": None, "is_out": n == "grad_input",
         "kwarg_only": n == "grad_input"} for n in ("grad_output", "self", "indices", "grad_input")],
        "returns": [{"type": "Tensor(a!)", "box_schema": "Tensor(a!)"}]}

    def make():
        return {"grad_output": go, "self": x, "indices": idx,
                "grad_input": samples.guarded_overlapping(torch.float64, tuple(x.shape))}

    def wrapper(*a, **k):
        raise AssertionError("the wrapper must not run after aten wrote past the tensor")

    aten = torch.ops.aten.adaptive_max_pool3d_backward.grad_input
    outcome, message, _ = runner.check(op, aten, wrapper, make, False, lambda phase: None)
    assert outcome == "aten-fails" and "grad_input" in message
    # a kernel that respects the overlap leaves the guard alone; one that writes past it is caught on either side
    t = samples.guarded_overlapping(torch.float32, (2, 3))
    with pytest.raises(RuntimeError, match="more than one element"):
        torch.mul(torch.ones(2, 3), 2, out=t)
    assert runner.guard_breach({"out": t}) is None
    t.untyped_storage()[0] = 1  # a byte before the shared element
    assert runner.guard_breach({"out": t}) == "out"


def test_a_key_given_twice_in_the_samples_file_is_an_error() -> None:
    """verify_samples.yaml had two `convolution_backward` entries; yaml kept the second silently. The loader
    refuses a duplicate key (naming both lines), still merges anchors, and the shipped file loads."""
    from shimgen.proofs.verify import samples

    with pytest.raises(samples.DuplicateKey, match=r"f.yaml: duplicate key 'conv' \(line 3, first on line 1\)"):
        samples.load_unique("conv:\n  dtypes: [float32]\nconv:\n  dtypes: [float64]\n", "f.yaml")
    with pytest.raises(samples.DuplicateKey, match="'dtypes'"):
        samples.load_unique("conv:\n  dtypes: [float32]\n  dtypes: [float64]\n", "f.yaml")
    merged = samples.load_unique("a: &x {k: 1}\nb:\n  <<: *x\n  j: 2\n", "f.yaml")
    assert merged["b"] == {"k": 1, "j": 2}
    samples.overrides.cache_clear()
    data = samples.overrides()
    assert data["convolution_backward"]["shapes"] == [[1, 2, 4, 5], [2, 2, 3, 3]]


def test_a_second_runner_starts_only_when_it_pays_for_its_start(tmp_path, monkeypatch) -> None:
    """One runner starts; a second one when the ops queued, at the time the ops so far took, shared by the runners
    there are, would take more than twice the first one's start (quick ops never pay for an interpreter)."""
    from shimgen.proofs.verify.runner_client import Pool, Running, Worker

    spec = {"ops": [{"op": f"x{i}.default"} for i in range(30)]}
    pool = Pool(str(tmp_path / "spec.json"), spec, str(tmp_path / "runner.log"), 2, "python")
    monkeypatch.setattr(pool, "_start", lambda: pool.workers.append(Worker(proc=None)))  # no process
    pool.workers.append(Worker(proc=None, ready=True))
    pool.startup = 3.0
    pool._grow()
    assert len(pool.workers) == 1  # nothing has run yet: no time to go by
    pool.queue, pool.ops_done, pool.op_seconds = list(range(28)), 2, 0.2  # 28 ops at 0.1 s: 2.8 s left
    pool._grow()
    assert len(pool.workers) == 1
    pool.workers[0].job = Running(2, time.monotonic() - 10)  # an op running for 10 s: ops are slow here
    pool._grow()
    assert len(pool.workers) == 2
    pool.workers[0].job = None
    pool.op_seconds = 60.0  # however slow: never more than `jobs`
    pool._grow()
    assert len(pool.workers) == 2


def test_a_worker_ends_with_its_output_written_and_its_status(tmp_path) -> None:
    """shimgen.base.process.exit_now: flushed output, the status given, no finalization (an atexit hook never
    runs)."""
    import subprocess
    import sys

    code = ("import atexit, sys\nfrom shimgen.base.process import exit_now\n"
            "atexit.register(lambda: print('finalized'))\nprint('report', end='')\nprint('note', file=sys.stderr)\n"
            "exit_now(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "report", "note\n")
