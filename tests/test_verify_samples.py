"""--verify's sample rules (no compiler): per-type rules read from the conversion table, the data-file samples of the
families aten rejects on generic values, and the recorders of PyTorch's other corpora (common_nn, OpInfo aliases).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest
import torch

from shimgen.generate import table
from shimgen.generate.parse import NativeYaml
from shimgen.proofs.verify import record, samples, serial


@functools.cache
def _native() -> NativeYaml:
    return NativeYaml()


def _spec(fullname: str) -> dict:
    """The op as the runner sees it (roundtrip.op_spec's fields the sample rules read)."""
    (op,) = _native().select([fullname])
    s = op.schema
    out = {a.name for a in s.arguments.out}
    args = [{"name": a.name, "type": str(a.type), "default": a.default, "kwarg_only": False, "is_write": a.is_write,
             "is_out": a.name in out} for a in s.arguments.flat_all]
    name, _, overload = fullname.partition(".")
    return {"op": fullname, "name": name, "overload": overload, "kind": s.kind().name, "functional": None,
            "args": args}


def test_every_type_the_verifier_samples_has_its_rule_in_the_table() -> None:
    """The types rules used to key by name are table rows now: optional and sized types read their base row."""
    for schema_type in ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "SymInt", "int[]", "SymInt[2]",
                        "int[1]?", "bool", "bool[3]", "float", "float?", "float[]?", "Scalar", "Scalar?",
                        "Scalar[]", "str", "ScalarType?", "Layout?", "Device?", "MemoryFormat?", "Generator?"):
        assert samples.sample_spec(schema_type).get("values") is not None, schema_type
    assert samples.grid("Scalar?") and not samples.grid("float")
    assert not samples.fits("Scalar", serial.encode(torch.ones(2)))  # a tensor cannot be passed for a Scalar
    assert samples.fits("Tensor", 2.5) and samples.fits("int[]", 3) and not samples.fits("int", 2.5)


def test_a_new_type_is_one_table_row(monkeypatch) -> None:
    """A row's `sample` column alone gives an argument of a new type its values and its recorded-value kinds."""
    real = table.load()
    row = table.Row(key="Widget", sample={"values": ["40 + 2"], "recorded": ["int"]})
    monkeypatch.setattr(table, "load", lambda: table.Table(**{**real.__dict__,
                                                                "arguments": {**real.arguments, "Widget": row}}))
    samples.sample_spec.cache_clear()
    try:
        arg = {"name": "w", "type": "Widget?", "default": None, "is_write": False, "is_out": False}
        ctx = samples.Ctx(torch.float32, (2, 3), 0)
        assert samples.candidates(arg, ctx, {}) == ([42, None], [])
        assert samples.fits("Widget", 3) and not samples.fits("Widget", 2.5)
    finally:
        samples.sample_spec.cache_clear()


FAMILIES = ["det.default", "inverse.default", "matrix_power.default", "upsample_nearest2d.default",
            "upsample_bicubic2d_backward.default", "upsample_trilinear3d.vec", "multi_margin_loss.default",
            "indices.default", "crow_indices.default", "_coalesce.default", "quantize_per_tensor.default",
            "q_per_channel_scales.default", "segment_reduce.default", "embedding_sparse_backward.default",
            "_slow_conv2d_forward.default", "conv_tbc.default",
            # nested inputs, packed sequences, int4 / float8 / fp16-packed weights, autograd state, index contracts
            "_nested_select_backward.default", "linear_backward.default", "_nested_from_padded_and_nested_example.default",
            "gru.data", "_pack_padded_sequence_backward.default", "_weight_int4pack_mm_for_cpu.default",
            "_scaled_mm.default", "fbgemm_linear_fp16_weight.default", "_sobol_engine_scramble_.default",
            "_backward.default", "_weight_norm_interface_backward.default", "_convert_indices_from_csr_to_coo.out"]


@pytest.mark.parametrize("fullname", FAMILIES)
def test_family_samples_meet_aten_preconditions(fullname: str) -> None:
    """Each family's data-file samples include calls aten accepts as written (the reference is never bent: these
    are the values passed to aten itself)."""
    op = _spec(fullname)
    aten = getattr(getattr(torch.ops.aten, op["name"]), op["overload"])
    accepted = 0
    for s in samples.generate(op, None):
        try:
            aten(**{k: v for k, v in s.make().items() if v is not samples.OMIT})
        except Exception:  # noqa: BLE001 - error samples are meant to fail
            continue
        accepted += 1
    assert accepted >= 1


def _watching() -> tuple[record.Recorder, type]:
    from torch.utils._python_dispatch import TorchDispatchMode

    rec = record.Recorder()

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            rec.add(func, args, kwargs or {})
            return func(*args, **(kwargs or {}))

    return rec, Mode


def test_common_nn_criterion_tests_are_recorded_with_their_targets() -> None:
    """A common_nn criterion dict (module, input, valid target) is recorded as the aten call it reaches."""
    rec, mode = _watching()
    test = {"module_name": "MultiMarginLoss", "constructor_args": (1, 0.5), "input_size": (5, 10),
            "target_fn": lambda: torch.tensor([0, 3, 9, 2, 1])}
    record._watch(rec, mode, "common_nn fixture", record._nn_test_call(test, grad=True), grad=True)
    calls = rec.calls["multi_margin_loss.default"]
    target = serial.decode(calls[0]["args"]["target"])
    assert target.tolist() == [0, 3, 9, 2, 1] and calls[0]["source"] == "common_nn fixture"
    assert "multi_margin_loss_backward.default" in rec.calls


def test_an_opinfo_alias_is_recorded_at_its_own_name() -> None:
    """linalg.det's OpInfo lists `det` as an alias: calling it records det.default (a composite that decomposes
    before any mode sees it) besides linalg_det."""
    rec, mode = _watching()
    record._install_composite_recorders(rec)
    x = torch.randn(3, 3, dtype=torch.float64)
    info = SimpleNamespace(
        name="linalg.det", variant_test_name="", aliases=[SimpleNamespace(name="det", op=torch.det)],
        inplace_variant=None, supported_dtypes=lambda device: {torch.float32},
        sample_inputs=lambda device, dtype: [SimpleNamespace(input=x.float(), args=(), kwargs={})])
    record._run_opinfo_variants(info, rec, mode)
    assert "det.default" in rec.calls
    assert rec.calls["det.default"][0]["source"] == "OpInfo linalg.det alias det float32"


def test_unproven_overloads_fall_into_reason_groups() -> None:
    """data/verify_reasons.yaml sorts every unproven overload into a group with an action; the last group takes
    what no other does, and a failure is never a reason."""
    from shimgen.proofs.verify import report

    def row(op: str, status: str, category: str, error: str = "", notes: list[str] | None = None) -> dict:
        return {"op": op, "status": status, "category": category, "aten_error": error, "notes": notes or [],
                "reason": "", "kernels": ["CPU"]}

    groups = {g["group"] for g in report.reason_groups()}
    assert all(g.get("action") for g in report.reason_groups())
    cuda = row("_foo.default", "unproven", "unproven: not runnable on this machine")
    hook = row("convolution_overrideable.default", "unproven", "unproven: aten raised on every sample",
               "(2, 3): x: convolution_overrideable not implemented. You are likely triggering this with tensor "
               "backend other than CPU/CUDA/MKLDNN")
    other = row("_bar.default", "unproven", "unproven: aten raised on every sample", "shapes do not match")
    wrong = row("_baz.default", "WRONG", "WRONG")
    got = [report.reason_group(r) for r in (cuda, hook, other, wrong)]
    assert got[0].startswith("not runnable") and got[1].startswith("backend hooks")
    assert got[2] == report.reason_groups()[-1]["group"] and got[3] == "FAILING: WRONG"
    assert set(got[:3]) <= groups


def test_a_sample_already_in_the_kernels_layout_is_left_as_written() -> None:
    """An op whose only CPU kernel is NestedTensorCPU gets its first tensor made nested, unless the data file
    already built an input in that layout (a dense padded tensor beside a nested example stays dense)."""
    op = _spec("_nested_from_padded_and_nested_example.default")
    dense = {"padded": torch.ones(2, 2, 3), "nt_example": torch.ones(2, 3)}
    assert samples._in_layout(op, dense, "NestedTensorCPU")["padded"].is_nested
    written = {"padded": torch.ones(2, 2, 3), "nt_example": torch.nested.nested_tensor([torch.ones(2, 3)])}
    assert not samples._in_layout(op, written, "NestedTensorCPU")["padded"].is_nested
    made = [s.make() for s in samples.generate(op, None, layout="NestedTensorCPU")]
    as_written = [v for v in made if v["nt_example"].is_nested]  # the others carry an error value there
    assert as_written and not any(v["padded"].is_nested for v in as_written)


def test_roundtrip_kernels_are_registered_for_nested_tensors_too() -> None:
    """A nested argument dispatches to NestedTensorCPU (AutogradNestedTensor above it), which
    CompositeExplicitAutograd does not cover: the round-trip kernels are registered for both, or the wrapper is
    never reached."""
    from shimgen.generate.templates import render
    from shimgen.proofs.verify import roundtrip

    assert {"NestedTensorCPU", "AutogradNestedTensor"} <= set(roundtrip.DISPATCH_KEYS)
    text = render("roundtrip.cpp.j2", banner="", namespace="ns", kernels=[], includes=(),
                  dispatch_keys=roundtrip.DISPATCH_KEYS)
    for key in roundtrip.DISPATCH_KEYS:
        assert f"STABLE_TORCH_LIBRARY_IMPL(ns, {key}, m)" in text
