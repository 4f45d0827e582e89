"""`div(a, b, rounding_mode)` below target 2.14 in the default build (kernel `str_value`): libtorch 2.10-2.13's
dispatcher leaks 48 bytes per call converting a `str`, so the wrapper compares the string itself and calls
`div.Tensor` (None) or `floor_divide` ("floor", aten's same div_floor kernel), carrying tensors only; the functional forms compute "trunc" on
CPU tensors of integral, floating dtypes as aten's div_trunc kernel does (floor_divide(a - fmod(a, b), b);
trunc(a / b); for bfloat16 and half by a single-element b, in float rounded once). "trunc" elsewhere (in place,
out=, CUDA), and a floor or trunc call autograd records
(floor_divide has no derivative, div's is zero), take the dispatcher's guarded form:
aten's op on libtorch 2.14 and later, an error naming the leak and the remedies before; another string raises aten's
error. The extension is built at target 2.10 without SHIMGEN_LEAKY_STR and compared with aten on the installed torch,
and on 2.14.1 and 2.15.0 where their venvs are found."""

from __future__ import annotations

import subprocess

import pytest
import torch

from shimgen.generate import pipeline
from shimgen.facts import scalar_facts as scalars
from shimgen.generate.routes import kernels
from tests.cxx import build_so

TARGET_2_10 = "0x020a000000000000"

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_floor(Tensor a, Tensor b) { return ts::div(a, b, "floor"); }
Tensor k_none(Tensor a, Tensor b) { return ts::div(a, b, std::nullopt); }
Tensor k_trunc(Tensor a, Tensor b) { return ts::div(a, b, "trunc"); }
Tensor k_bad(Tensor a, Tensor b) { return ts::div(a, b, "Floor"); }
Tensor k_floor_number(Tensor a, double b) { return ts::div(a, b, "floor"); }
Tensor k_divide_floor(Tensor a, Tensor b) { return ts::divide(a, b, "floor"); }
Tensor k_floor_(Tensor a, Tensor b) { ts::div_(a, b, "floor"); return a; }
Tensor k_floor_out(Tensor a, Tensor b, Tensor out) { ts::div_out(out, a, b, "floor"); return out; }
Tensor k_trunc_(Tensor a, Tensor b) { ts::div_(a, b, "trunc"); return a; }
Tensor k_trunc_number(Tensor a, double b) { return ts::div(a, b, "trunc"); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("floor(Tensor a, Tensor b) -> Tensor");
  m.def("none(Tensor a, Tensor b) -> Tensor");
  m.def("trunc(Tensor a, Tensor b) -> Tensor");
  m.def("bad(Tensor a, Tensor b) -> Tensor");
  m.def("floor_number(Tensor a, float b) -> Tensor");
  m.def("divide_floor(Tensor a, Tensor b) -> Tensor");
  m.def("floor_(Tensor(a!) a, Tensor b) -> Tensor(a!)");
  m.def("floor_out(Tensor a, Tensor b, Tensor(a!) out) -> Tensor(a!)");
  m.def("trunc_(Tensor(a!) a, Tensor b) -> Tensor(a!)");
  m.def("trunc_number(Tensor a, float b) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("floor", TORCH_BOX(&k_floor));
  m.impl("none", TORCH_BOX(&k_none));
  m.impl("trunc", TORCH_BOX(&k_trunc));
  m.impl("bad", TORCH_BOX(&k_bad));
  m.impl("floor_number", TORCH_BOX(&k_floor_number));
  m.impl("divide_floor", TORCH_BOX(&k_divide_floor));
  m.impl("floor_", TORCH_BOX(&k_floor_));
  m.impl("floor_out", TORCH_BOX(&k_floor_out));
  m.impl("trunc_", TORCH_BOX(&k_trunc_));
  m.impl("trunc_number", TORCH_BOX(&k_trunc_number));
}
"""

OPS = ["div.Tensor_mode", "div.Scalar_mode", "divide.Tensor_mode", "div_.Tensor_mode", "div.out_mode"]
ROWS = ["div.Tensor_mode", "divide.Tensor_mode", "div_.Tensor_mode", "divide_.Tensor_mode", "div.out_mode",
        "divide.out_mode"]


def test_the_rows_name_the_str_value_kernel_and_are_proven() -> None:
    facts = scalars.load().kernel_compositions
    entry = kernels.get("str_value")
    assert entry.name == "str_value" and entry.prover == "prove_str_value"
    for op in ROWS:
        row = facts.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op) is entry
        assert row["argument"] == "rounding_mode" and "floor" in row["calls"]
        functional = "_" not in op.split(".")[0][-1:] and "out" not in op
        assert (row.get("composed", {}).get("trunc", {}).get("how") == "div_trunc") == functional, op
        assert row.get("refused", []) == ([] if functional else ["trunc"]), op
        assert "floor_divide" in row["calls"]["floor"] and row["no_derivative"] == ["floor"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("rounding_mode")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "rounding_mode.cpp"
    src.write_text(CALLS.replace("NS", "rounding_mode"))
    lib = str(root / "rounding_mode.so")
    build_so(str(src), lib, str(root / "gen"), [f"TORCH_TARGET_VERSION={TARGET_2_10}"])  # no SHIMGEN_LEAKY_STR
    torch.ops.load_library(lib)
    return torch.ops.rounding_mode, lib


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(), b.nan_to_num())


def _agree(mine, atens) -> None:
    """The same result, or both raise with aten's message in the composition's."""
    try:
        want = atens()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            mine()
        assert str(e).splitlines()[0] in str(got.value), (str(e), str(got.value))
        return
    got = mine()
    assert _same(got, want), (got, want)


def _operands() -> list[tuple[torch.Tensor, torch.Tensor]]:
    ints = torch.tensor([7, -7, 7, -7, 0, 5, -1, 9])
    int_divisors = torch.tensor([2, 2, -2, -2, 3, 1, 3, -4])
    floats = torch.tensor([7.5, -7.5, 1.0, -1.0, 0.0, -0.0, float("inf"), float("nan"), 3.0, -3.0])
    float_divisors = torch.tensor([2.0, 2.0, 0.0, -0.0, 0.0, 2.0, 3.0, 1.0, float("inf"), float("-inf")])
    return [
        (ints, int_divisors),  # negative operands: floor, not truncation
        (ints.to(torch.int32), int_divisors.to(torch.int8)),  # integral promotion
        (floats, float_divisors),  # zero divisors, inf, nan, -0.0
        (floats.to(torch.float16), float_divisors.to(torch.float64)),
        (ints, float_divisors[:8]),  # int / float promotes
        (torch.tensor([True, False, True]), torch.tensor([True, True, True])),  # bool
        (ints.view(2, 4), int_divisors[:4]),  # broadcasting
        (floats, torch.tensor(-2)),  # a 0-dim operand: the tensor's dtype wins
        (ints, torch.tensor(2.5, dtype=torch.float64)),
        (torch.randn(3, 4, dtype=torch.bfloat16), torch.randn(4, dtype=torch.float32)),
        # bfloat16 and half results: by several elements (a / b rounded, then truncated), by one (in float: b's
        # own value, a cast to the result dtype first)
        (torch.randn(3, 8, dtype=torch.bfloat16) * 9, torch.randn(8, dtype=torch.bfloat16)),
        (torch.randn(3, 8, dtype=torch.bfloat16) * 9, torch.tensor(0.3, dtype=torch.bfloat16)),
        (torch.randn(40, dtype=torch.bfloat16) * 9, torch.tensor(0.3, dtype=torch.float32)),
        (torch.randn(40, dtype=torch.float16) * 9, torch.tensor([0.3], dtype=torch.float16)),
        (torch.randn(40, dtype=torch.float16) * 9, torch.tensor(0.7, dtype=torch.float64)),
        (torch.arange(-300, 300, 7), torch.tensor(0.3, dtype=torch.bfloat16)),
        (floats.to(torch.bfloat16), torch.tensor(float("nan"), dtype=torch.bfloat16)),
    ]


@pytest.mark.slow
def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_div_Tensor_mode" not in out


@pytest.mark.slow
def test_div_floor_and_none_at_2_10_are_atens(ext) -> None:
    ops, _ = ext
    for a, b in _operands():
        _agree(lambda: ops.floor(a, b), lambda: torch.div(a, b, rounding_mode="floor"))
        _agree(lambda: ops.divide_floor(a, b), lambda: torch.divide(a, b, rounding_mode="floor"))
        _agree(lambda: ops.none(a, b), lambda: torch.div(a, b))
        _agree(lambda: ops.floor_(a.clone(), b), lambda: a.clone().div_(b, rounding_mode="floor"))
        for dtype in (torch.float32, torch.int64):
            _agree(lambda: ops.floor_out(a, b, torch.empty(0, dtype=dtype)),
                   lambda: torch.div(a, b, rounding_mode="floor", out=torch.empty(0, dtype=dtype)))
    i = torch.tensor([7, -7, 0])
    _agree(lambda: ops.floor(i, torch.tensor([0, 2, 0])), lambda: torch.div(i, torch.tensor([0, 2, 0]),
                                                                            rounding_mode="floor"))
    for n in (2.0, -2.0, 0.0, 0.5):  # a number divisor: aten's wrapped number (div.Scalar_mode's own route)
        _agree(lambda: ops.floor_number(i, n), lambda: torch.div(i, n, rounding_mode="floor"))
        _agree(lambda: ops.floor_number(i.float(), n), lambda: torch.div(i.float(), n, rounding_mode="floor"))
    _agree(lambda: ops.floor_number(i.float(), float("-inf")), lambda: torch.div(i.float(), float("-inf"),
                                                                                 rounding_mode="floor"))


@pytest.mark.slow
def test_trunc_is_atens_for_integral_and_float_and_refused_elsewhere_naming_the_remedies(ext) -> None:
    ops, _ = ext
    for a, b in _operands():
        if torch.result_type(a, b) == torch.bool:
            continue
        _agree(lambda: ops.trunc(a, b), lambda: torch.div(a, b, rounding_mode="trunc"))
    i = torch.tensor([7, -7, 9, -1, -128, 127], dtype=torch.int8)
    _agree(lambda: ops.trunc(i, torch.tensor([2, 2, -4, 3, -1, -2], dtype=torch.int8)),
           lambda: torch.div(i, torch.tensor([2, 2, -4, 3, -1, -2], dtype=torch.int8), rounding_mode="trunc"))
    _agree(lambda: ops.trunc(i, torch.tensor([2, 0, 1, 1, 1, 1], dtype=torch.int8)),  # aten's ZeroDivisionError
           lambda: torch.div(i, torch.tensor([2, 0, 1, 1, 1, 1], dtype=torch.int8), rounding_mode="trunc"))
    for n in (2.0, -2.0, 0.5, 3.0):  # a number divisor: the sibling's 0-dim tensor
        _agree(lambda: ops.trunc_number(i.long(), n), lambda: torch.div(i.long(), n, rounding_mode="trunc"))
        _agree(lambda: ops.trunc_number(i.float(), n), lambda: torch.div(i.float(), n, rounding_mode="trunc"))
        x = torch.randn(40, dtype=torch.bfloat16) * 9
        _agree(lambda: ops.trunc_number(x, n), lambda: torch.div(x, n, rounding_mode="trunc"))
    leak = r"shimgen: div(_)?.Tensor_mode: the running libtorch \(2.13\) leaks 48 bytes per call converting its " \
           r"str `rounding_mode`.*torch >= 2.14.*SHIMGEN_LEAKY_STR.*SHIMGEN_OVERLAY"
    with pytest.raises(RuntimeError, match=leak):  # in place: not composed
        ops.trunc_(torch.tensor([7.5, -7.5]), torch.tensor([2.0, 2.0]))
    a, b = torch.tensor([7, -7]), torch.tensor([2, 2])
    _agree(lambda: ops.bad(a, b), lambda: torch.div(a, b, rounding_mode="Floor"))
    with pytest.raises(RuntimeError, match=r"shimgen: div.Tensor_mode: div expected rounding_mode to be one of "
                                           r"None, 'trunc', or 'floor' but found 'Floor'"):
        ops.bad(a, b)


@pytest.mark.slow
def test_floor_where_autograd_records_it_is_refused_and_otherwise_atens(ext) -> None:
    ops, _ = ext
    a = torch.tensor([7.5, -7.5, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([2.0, 2.0, -0.5], dtype=torch.float64)
    # aten's div with a rounding mode records a zero gradient; floor_divide has none: refused, never a graph whose
    # backward raises
    with pytest.raises(RuntimeError, match=r"shimgen: div.Tensor_mode: the running libtorch \(2.13\) leaks 48 bytes "
                                           r"per call converting its str `rounding_mode`"):
        ops.floor(a, b)
    with torch.no_grad():
        _agree(lambda: ops.floor(a, b), lambda: torch.div(a, b, rounding_mode="floor"))
    _agree(lambda: ops.floor(a.detach(), b), lambda: torch.div(a.detach(), b, rounding_mode="floor"))
    grads = []
    for fn in (ops.none, torch.div):  # rounding_mode None: div.Tensor, its gradient
        x = a.detach().clone().requires_grad_()
        (fn(x, b) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
        grads.append(x.grad)
    assert _same(grads[0], grads[1])


@pytest.mark.parametrize("op", ["div.Tensor_mode", "div_.Tensor_mode", "div.out_mode"])
def test_the_composition_serves_only_builds_without_a_route_carrying_the_str(op: str) -> None:
    """The default build: the composition below 2.14. SHIMGEN_LEAKY_STR: the dispatcher from 2.10 (ranked first; it
    computes "trunc" too). The overlay: its C shim at 2.13 (every value), never the composition there."""
    from shimgen.generate import plan as plan_mod
    from shimgen.generate.signatures import cpp as sig_cpp
    from shimgen.generate.plan import WORLDS

    p = plan_mod.make([op])
    routes = {}
    for world in WORLDS:
        w = next(x for x in sig_cpp.wrappers(p.in_world(world))[0] if x.op.name == op)
        routes[world.label] = [(str(v.start), v.route.name) for v in w.variants]
        assert all(v.kept == len(w.params) for v in w.variants), routes[world.label]
    # from 2.10 the composition gives what it does not compute to the dispatcher's guarded form (another variant)
    assert routes["default"] == [("2.9", "composition"), ("2.10", "composition"), ("2.14", "dispatcher")]
    assert routes["leaky-str"] == routes["overlay-leaky-str"] == [("2.9", "composition"), ("2.10", "dispatcher")]
    assert routes["overlay"] == [("2.9", "composition"), ("2.10", "composition"), ("2.13", "generated_shim"),
                                 ("2.14", "dispatcher")]


ON_RUNTIME = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.rounding_mode
a = torch.tensor([7.5, -7.5, 3.0, -0.0], dtype=torch.float64)
b = torch.tensor([2.0, 2.0, -0.5, 3.0], dtype=torch.float64)
ints, divisors = torch.tensor([7, -7, 9, -1]), torch.tensor([2, 2, -4, 3])
assert torch.equal(ops.trunc(ints, divisors), torch.div(ints, divisors, rounding_mode="trunc"))
assert torch.equal(ops.trunc(a, b), torch.div(a, b, rounding_mode="trunc"))
grads = []
for fn in (ops.floor, lambda x, y: torch.div(x, y, rounding_mode="floor")):
    x = a.clone().requires_grad_()
    r = fn(x, b)
    (r * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
    grads.append((r.detach(), x.grad))
assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1]), grads
print("ok")
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["2.14.1", "2.15.0"])
def test_trunc_and_a_recorded_floor_are_atens_own_from_2_14(ext, name) -> None:
    """The same target-2.10 binary on libtorch 2.14+: "trunc" and a floor autograd records are aten's div itself
    (the dispatcher carries the str without leaking there), values and gradients."""
    from tests.children import run_on

    _, lib = ext
    proc = run_on(name, ON_RUNTIME, lib)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
