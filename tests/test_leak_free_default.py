"""Nothing leaks per call in the default build, and the calls users write with a `str` still compile at target 2.10.

libtorch 2.10-2.13 converts a `str` on the boxed dispatcher with a `ToImpl<std::string>` that leaks 48 bytes per call
(benchmarks/bench_leaks.py). In a build without SHIMGEN_LEAKY_STR, a wrapper whose str crosses the dispatcher asks
the running libtorch for its release once per process (its first C function of each release, dlsym:
shimgen::detail::running_release): from 2.14 it calls aten's own op (any device, autograd), before it raises a
`shimgen:` error naming the running release, the leak and the remedies. A leak-free composition still wins where
one computes the call on every runtime: `div(a, b, "floor")` (kernel `str_value`,
tests/test_rounding_mode_composition.py). An extension built once at target 2.10 is run on every runtime found."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from shimgen.generate.pipeline import generate, write
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so, syntax_check

CALLS = {
    "gelu": "ts::gelu(x);",
    "gelu_tanh": 'ts::gelu(x, "tanh");',
    "einsum": 'ts::einsum("ij,jk->ik", {x, x});',
}
LEAK_FREE = {  # a composition compares the string in C++: no str crosses the ABI
    "div_floor": 'ts::div(x, x, std::string_view("floor"));',
}
TARGETS = {"2.10": "0x020a000000000000", "2.13": "0x020d000000000000"}
OPS = ["gelu.default", "div.Tensor_mode", "einsum.default"]
RUNTIMES = ["2.10.0", "2.13.0", "2.14.1", "2.15.0"]


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("leak_free") / "gen")
    files, _ = generate(OPS, None, None, out, only=True)
    write(out, files)
    return out


def _source(call: str) -> str:
    return ("#include <torch/csrc/stable/ops.h>\nnamespace ts = torch::stable;\n"
            f"void f(const torch::stable::Tensor& x) {{ {call} }}\n")


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("call", sorted(CALLS | LEAK_FREE))
def test_the_default_build_compiles_the_str_calls(gen: str, call: str, target: str) -> None:
    res = syntax_check(_source({**CALLS, **LEAK_FREE}[call]), gen, TARGETS[target], strict=True)
    assert res.returncode == 0, res.stderr[-2000:]


def test_below_2_14_the_dispatcher_form_is_guarded_and_the_composition_wins(gen: str) -> None:
    with open(os.path.join(gen, "torch/csrc/stable/ops/gelu.h")) as f:
        gelu = f.read()
    default = gelu[gelu.index("#else"):]  # the last world block: no SHIMGEN_OVERLAY, no SHIMGEN_LEAKY_STR
    assert 'require_leak_free_str(\n      "gelu.default", "approximate", 214, true);' in default, default
    assert "From target 2.14 no runtime leaks its str: this form never raises for it." in default
    with open(os.path.join(gen, "torch/csrc/stable/ops/div.h")) as f:
        div = f.read()
    # None and "floor" computed without the str crossing, leak-free; only "trunc" and a floor autograd records take
    # the guarded dispatcher form
    default_div = div[div.index("#else"):]
    assert "{\n  if (!rounding_mode.has_value()) {\n    return torch::stable::div(self, other);" in default_div
    assert default_div.count("require_leak_free_str") == 2  # the target 2.10-2.13 form: "trunc", a recorded floor
    with open(os.path.join(gen, "torch/csrc/stable/shimgen/ops_prelude.h")) as f:
        prelude = f.read()
    assert 'dlsym(RTLD_DEFAULT, "torch_has_storage")' in prelude and "found = 214;" in prelude


@pytest.mark.parametrize("call", sorted(CALLS | LEAK_FREE))
def test_leaky_route_only_when_asked(gen: str, call: str) -> None:
    res = syntax_check(_source({**CALLS, **LEAK_FREE}[call]), gen, TARGETS["2.10"], ("SHIMGEN_LEAKY_STR",),
                       strict=True)
    assert res.returncode == 0, res.stderr[-2000:]


EXTENSION = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_gelu(Tensor x) { return ts::gelu(x); }
Tensor k_gelu_tanh(Tensor x) { return ts::gelu(x, "tanh"); }
Tensor k_einsum(Tensor a, Tensor b) { return ts::einsum("ij,jk->ik", {a, b}); }

STABLE_TORCH_LIBRARY(leak_free_guard, m) {
  m.def("gelu(Tensor x) -> Tensor");
  m.def("gelu_tanh(Tensor x) -> Tensor");
  m.def("einsum(Tensor a, Tensor b) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(leak_free_guard, CompositeImplicitAutograd, m) {
  m.impl("gelu", TORCH_BOX(&k_gelu));
  m.impl("gelu_tanh", TORCH_BOX(&k_gelu_tanh));
  m.impl("einsum", TORCH_BOX(&k_einsum));
}
"""

# Run in each runtime's Python: every call on float32, float64, bfloat16 and float16 (and 0-dim, empty and
# non-contiguous inputs), compared bit for bit with aten's own call, gradients included; on a runtime whose
# libtorch would leak, the error text. A dispatch mode records which aten ops the extension's call reaches.
SCRIPT = r"""
import json, sys
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

torch.ops.load_library(sys.argv[1])
ops = torch.ops.leak_free_guard
out = {"errors": {}, "unequal": [], "seen": []}

class Seen(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out["seen"].append([str(func), [a for a in args if isinstance(a, str)], sorted(
            f"{k}={v}" for k, v in kwargs.items() if isinstance(v, str))])
        return func(*args, **kwargs)

def same(a, b):
    bits = lambda t: t.reshape(-1).contiguous().view(torch.uint8)  # NaNs and -0.0 compared as bits
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(bits(a), bits(b))

CASES = {
    "gelu": (lambda x: ops.gelu(x), lambda x: F.gelu(x)),
    "gelu_tanh": (lambda x: ops.gelu_tanh(x), lambda x: F.gelu(x, approximate="tanh")),
}
g = torch.Generator().manual_seed(0)
inputs = []
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    base = (torch.randn(37, 19, generator=g) * 4).to(dt)
    inputs += [base, base.t(), base[::2, 3:], torch.tensor(1.5, dtype=dt), torch.empty(0, 3, dtype=dt),
               torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 1e-30], dtype=dt)]
for name, (mine, aten) in CASES.items():
    try:
        for x in inputs:
            if not same(mine(x), aten(x)):
                out["unequal"].append(f"{name} {x.dtype} {tuple(x.shape)}")
            if x.numel() and x.dtype in (torch.float32, torch.float64):
                grads = []
                for fn in (mine, aten):
                    y = x.detach().clone().requires_grad_()
                    (fn(y) * torch.linspace(-1, 1, y.numel(), dtype=y.dtype).view(y.shape)).sum().backward()
                    grads.append(y.grad)
                if not same(grads[0], grads[1]):
                    out["unequal"].append(f"{name} gradient {x.dtype} {tuple(x.shape)}")
    except RuntimeError as e:
        out["errors"][name] = str(e).splitlines()[0]
try:
    a, b = torch.randn(5, 7, generator=g), torch.randn(7, 3, generator=g)
    if not same(ops.einsum(a, b), torch.einsum("ij,jk->ik", a, b)):
        out["unequal"].append("einsum")
except RuntimeError as e:
    out["errors"]["einsum"] = str(e).splitlines()[0]
if not out["errors"]:
    with Seen():
        ops.gelu_tanh(torch.randn(3))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def library(gen: str, tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("leak_free_guard")
    src = root / "guard.cpp"
    src.write_text(EXTENSION)
    lib = str(root / "guard.so")
    build_so(str(src), lib, gen, [f"TORCH_TARGET_VERSION={TARGETS['2.10']}"])  # the default build: no macro
    return lib


@pytest.mark.slow
def test_one_target_2_10_binary_is_atens_from_2_14_and_refuses_before(library: str) -> None:
    rts, missing = runtimes.resolve(RUNTIMES)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    if not any(r.release.minor >= 14 for r in rts) or not any(r.release.minor < 14 for r in rts):
        pytest.skip(f"needs a runtime before 2.14 and one from 2.14: {runtimes.missing_reason(missing)}")
    for rt in rts:
        proc = subprocess.run([rt.python, "-c", quick_exit(SCRIPT), library], capture_output=True, text=True)
        assert proc.returncode == 0, (rt.name, proc.stderr[-3000:])
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not res["unequal"], (rt.name, res["unequal"])
        if rt.release.minor >= 14:
            assert not res["errors"], (rt.name, res["errors"])
            # aten's own op, called with the string the caller wrote
            assert ["aten.gelu.default", [], ["approximate=tanh"]] in res["seen"] or \
                ["aten.gelu.default", ["tanh"], []] in res["seen"], (rt.name, res["seen"])
        else:
            # einsum computes (kernel einsum: the equation parsed in C++); gelu only on a contiguous CPU tensor
            # outside autograd (kernel gelu_addmm), so its gradient loop raises
            assert sorted(res["errors"]) == ["gelu", "gelu_tanh"], (rt.name, res["errors"])
            for name, text in res["errors"].items():
                arg = "equation" if name == "einsum" else "approximate"
                assert text.startswith(f"shimgen: {name.split('_')[0]}.default: the running libtorch "
                                       f"({rt.release}) leaks 48 bytes per call converting its str `{arg}`"), text
                assert "torch >= 2.14" in text and "SHIMGEN_LEAKY_STR" in text, text
