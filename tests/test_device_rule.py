"""The device rule of the number routes, kept honest on the CPU (no GPU needed).

aten's Scalar overloads hand a number to every device's kernel; shimgen's routes hand it over as a 0-dim tensor made
on the CPU. libtorch's CUDA kernels registered without `device_check: NoCheck` refuse a CPU tensor beside CUDA
operands ("Expected all tensors to be on the same device, but got min is on cpu": clamp, clamp_min, clamp_max, clip,
hardtanh, scatter on an H100), so a number tensor that feeds such an op must be made on the operand's device
(scalar.h on_device_of), and one that feeds a TensorIterator op (NoCheck) may stay on the CPU (no cost).

Checked here: (1) the rule (shimgen/facts/device_checks.py) on the overloads measured on a GPU; (2) the generated text:
every sibling route whose target checks devices makes its numbers with number_tensor_on; (3) at run time, an
extension built with SHIMGEN_TEST_NUMBERS_ON_DEVICE (the device path taken on the CPU too) run under a dispatch mode
that marks the CPU number tensors (aten::scalar_tensor, what libtorch's scalar_to_tensor C shims call, and their
dtype conversions): no marked tensor reaches an op that checks devices, and every value equals aten's. The same
extension built without the macro trips the mode (the check can fail)."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from shimgen.facts import device_checks, scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.parse import NativeYaml
from tests.cxx import build_so

# measured on an H100 (torch 2.11.0+cu130): these targets refused a CPU number tensor, these took it
MEASURED_CHECKING = ["clamp.Tensor", "clamp_.Tensor", "clamp_min.Tensor", "clamp_max.Tensor", "clip.Tensor",
                     "scatter.src"]
MEASURED_TAKING = ["mul.Tensor", "mul_.Tensor", "add.Tensor", "lerp.Tensor", "where.self", "div.Tensor",
                   "eq.Tensor", "pow.Tensor_Tensor"]


@pytest.fixture(scope="module")
def native() -> NativeYaml:
    return NativeYaml()


def _rule(native: NativeYaml, name: str) -> bool:
    def lookup(n):
        return native.select([n])[0].f

    def overloads(base):
        return [o.f for o in native.select([base])]

    return device_checks.checks_devices(name, lookup(name), lookup, overloads)


@pytest.mark.parametrize("name", MEASURED_CHECKING)
def test_measured_refusals_check_devices(native, name) -> None:
    assert _rule(native, name)


@pytest.mark.parametrize("name", MEASURED_TAKING)
def test_measured_takers_keep_cpu_numbers(native, name) -> None:
    assert not _rule(native, name)


def test_out_overloads_follow_their_functional(native) -> None:
    # clamp.Tensor_out is NoCheck in the yaml, but runs clamp.Tensor's structured kernel
    assert _rule(native, "clamp.Tensor_out") and _rule(native, "clamp_min.Tensor_out")
    assert not _rule(native, "mul.out")


def test_data_names_real_overloads(native) -> None:
    forwards, host_reads = device_checks._data()
    for name in [*forwards, *forwards.values(), *host_reads]:
        assert native.select([name]), name
    for name in forwards:  # a forward that lands on a checking op would be better left out (the default)
        assert not _rule(native, name), name


def test_generated_siblings_place_numbers_by_the_rule(native, tmp_path) -> None:
    siblings = scalars.load().siblings
    checking = {op for op, target in siblings.items() if _rule(native, target)}
    assert {"clamp.default", "clamp_min.default", "clip.default", "clamp.out"} <= checking
    names = sorted({op.split(".")[0] for op in siblings if op.split(".")[0].startswith(("clamp", "clip", "mul"))})
    files, _ = pipeline.generate(names, None, None, str(tmp_path), only=True)
    text = "\n".join(v if isinstance(v, str) else v.decode() for k, v in files.items() if "/ops/" in k)
    on = text.count("number_tensor_on(")
    off = text.count("number_tensor(")
    assert on >= 10 and off >= 2, (on, off)  # clamp*/clip forms on the device, mul's on the CPU
    for block in text.split("/// Stable wrapper of aten::")[1:]:
        head = block.split("(")[0]
        if head in siblings and "number_tensor" in block:
            wanted = "number_tensor_on(" if head in checking else "number_tensor("
            assert wanted in block, head


CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_clamp(Tensor x, double lo, double hi) { return ts::clamp(x, lo, hi); }
Tensor k_clamp_int(Tensor x, int64_t lo, int64_t hi) { return ts::clamp(x, lo, hi); }
Tensor k_clamp_(Tensor x, double lo, double hi) { Tensor y = ts::clone(x); ts::clamp_(y, lo, hi); return y; }
Tensor k_clamp_min(Tensor x, double lo) { return ts::clamp_min(x, lo); }
Tensor k_clamp_max(Tensor x, double hi) { return ts::clamp_max(x, hi); }
Tensor k_clip(Tensor x, double lo, double hi) { return ts::clip(x, lo, hi); }
Tensor k_hardtanh(Tensor x, double lo, double hi) { return ts::hardtanh(x, lo, hi); }
Tensor k_scatter(Tensor x, Tensor idx, double v) { return ts::scatter(x, 1, idx, v); }
Tensor k_mul(Tensor x, double v) { return ts::mul(x, v); }
Tensor k_clamp_out(Tensor x, Tensor out, double lo, double hi) { ts::clamp_out(out, x, lo, hi); return out; }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("clamp(Tensor x, float lo, float hi) -> Tensor");
  m.def("clamp_int(Tensor x, int lo, int hi) -> Tensor");
  m.def("clamp_(Tensor x, float lo, float hi) -> Tensor");
  m.def("clamp_min(Tensor x, float lo) -> Tensor");
  m.def("clamp_max(Tensor x, float hi) -> Tensor");
  m.def("clip(Tensor x, float lo, float hi) -> Tensor");
  m.def("hardtanh(Tensor x, float lo, float hi) -> Tensor");
  m.def("scatter(Tensor x, Tensor idx, float v) -> Tensor");
  m.def("mul(Tensor x, float v) -> Tensor");
  m.def("clamp_out(Tensor x, Tensor(a!) out, float lo, float hi) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("clamp", TORCH_BOX(&k_clamp));
  m.impl("clamp_int", TORCH_BOX(&k_clamp_int));
  m.impl("clamp_", TORCH_BOX(&k_clamp_));
  m.impl("clamp_min", TORCH_BOX(&k_clamp_min));
  m.impl("clamp_max", TORCH_BOX(&k_clamp_max));
  m.impl("clip", TORCH_BOX(&k_clip));
  m.impl("hardtanh", TORCH_BOX(&k_hardtanh));
  m.impl("scatter", TORCH_BOX(&k_scatter));
  m.impl("mul", TORCH_BOX(&k_mul));
  m.impl("clamp_out", TORCH_BOX(&k_clamp_out));
}
"""

OPS = ["clamp", "clamp_", "clamp_min", "clamp_max", "clip", "hardtanh", "scatter", "mul", "clone"]


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("device_rule") / "gen")
    files, _ = pipeline.generate(OPS, None, None, out, only=True)
    pipeline.write(out, files)
    return out


def _build(gen: str, root, ns: str, defines: list[str]):
    src = root / f"{ns}.cpp"
    src.write_text(CALLS.replace("NS", ns))
    lib = str(root / f"{ns}.so")
    build_so(str(src), lib, gen, defines)  # libtorch alone
    torch.ops.load_library(lib)
    return getattr(torch.ops, ns)


@pytest.fixture(scope="module")
def on_device(gen, tmp_path_factory):
    return _build(gen, tmp_path_factory.mktemp("dr_dev"), "device_rule_dev", ["SHIMGEN_TEST_NUMBERS_ON_DEVICE"])


@pytest.fixture(scope="module")
def plain(gen, tmp_path_factory):
    return _build(gen, tmp_path_factory.mktemp("dr_plain"), "device_rule_plain", [])


class CpuNumbers(TorchDispatchMode):
    """Marks the CPU number tensors (aten::scalar_tensor and what is converted from one); records every call to an
    op that checks devices (device_checks.py) with a marked tensor among its arguments."""

    def __init__(self, native: NativeYaml) -> None:
        super().__init__()
        self.native = native
        self.marked: set[int] = set()
        self.keep: list[torch.Tensor] = []  # alive for the mode's life: ids stay unique
        self.violations: list[str] = []
        self.memo: dict[str, bool] = {}

    def _checks(self, name: str) -> bool:
        if name not in self.memo:
            try:
                self.memo[name] = _rule(self.native, name)
            except Exception:  # not an aten overload the yaml knows (prim, ...): no codegen check
                self.memo[name] = False
        return self.memo[name]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = f"{func._schema.name.split('::')[1]}.{func._overloadname}"
        flat = [*args, *kwargs.values()]
        tensors = [a for a in flat if isinstance(a, torch.Tensor)]
        tensors += [t for a in flat if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.Tensor)]
        fed = any(id(t) in self.marked for t in tensors)
        if fed and func._schema.name.startswith("aten::") and self._checks(name):
            self.violations.append(name)
        out = func(*args, **kwargs)
        # a CPU number tensor, or one converted / viewed from one, stays marked; fill_ onto a fresh tensor is the
        # device path (the filled tensor is not marked)
        base = name.split(".")[0]
        if base == "scalar_tensor" or (fed and base in ("_to_copy", "to", "expand", "expand_as", "alias",
                                                         "unsqueeze", "detach")):
            for t in out if isinstance(out, (list, tuple)) else [out]:
                if isinstance(t, torch.Tensor):
                    self.marked.add(id(t))
                    self.keep.append(t)
        return out


def _cases(ns):
    x = torch.linspace(-1, 1, 12).reshape(3, 4)
    i = torch.arange(-6, 6).reshape(3, 4)
    idx = torch.tensor([[0, 1], [2, 3], [1, 0]])
    return [
        ("clamp", lambda: ns.clamp(x, 0.0, 0.5), lambda: torch.clamp(x, 0.0, 0.5)),
        ("clamp bf16", lambda: ns.clamp(x.bfloat16(), -0.25, 0.5), lambda: torch.clamp(x.bfloat16(), -0.25, 0.5)),
        ("clamp int", lambda: ns.clamp_int(i, 0, 5), lambda: torch.clamp(i, 0, 5)),
        ("clamp_", lambda: ns.clamp_(x, 0.0, 0.5), lambda: x.clone().clamp_(0.0, 0.5)),
        ("clamp_min", lambda: ns.clamp_min(x, 0.1), lambda: torch.clamp_min(x, 0.1)),
        ("clamp_max", lambda: ns.clamp_max(x, 0.2), lambda: torch.clamp_max(x, 0.2)),
        ("clip", lambda: ns.clip(x, -0.5, 0.5), lambda: torch.clip(x, -0.5, 0.5)),
        ("hardtanh", lambda: ns.hardtanh(x, -0.25, 0.25), lambda: torch.nn.functional.hardtanh(x, -0.25, 0.25)),
        ("scatter", lambda: ns.scatter(x, idx, 2.0), lambda: torch.scatter(x, 1, idx, 2.0)),
        ("mul", lambda: ns.mul(x, 2.0), lambda: torch.mul(x, 2.0)),
        ("clamp_out", lambda: ns.clamp_out(x, torch.empty(3, 4), 0.0, 0.5), lambda: torch.clamp(x, 0.0, 0.5)),
    ]


def test_no_cpu_number_reaches_a_device_checking_op(on_device, native) -> None:
    for label, ours, aten in _cases(on_device):
        mode = CpuNumbers(native)
        with mode:
            got = ours()
        want = aten()
        assert mode.violations == [], (label, mode.violations)
        assert got.dtype == want.dtype and torch.equal(got, want), label


def test_the_mode_sees_cpu_numbers_where_they_would_be_refused(plain, native) -> None:
    # the same calls, the CPU path (what a CPU operand takes): the mode flags the ops that would refuse on CUDA,
    # and not mul (a TensorIterator op taking the CPU number as aten's wrapped number)
    flagged = {}
    for label, ours, aten in _cases(plain):
        mode = CpuNumbers(native)
        with mode:
            got = ours()
        assert torch.equal(got, aten()), label
        flagged[label] = mode.violations
    assert all(flagged[k] for k in ("clamp", "clamp int", "clamp_min", "clip", "hardtanh", "scatter", "clamp_out"))
    assert flagged["mul"] == []
