"""`scatter(self, dim, index, src, reduce)` below target 2.14 in the default build (kernel `str_value`, a plain
`str`): libtorch 2.10-2.13's dispatcher leaks 48 bytes per call converting a `str`, so the wrapper compares the string
itself and computes "add" as `scatter_add` (aten's same scatter-gather kernel, the same order of additions), carrying
tensors only. "multiply", and an "add" autograd records (aten records scatter.reduce as not differentiable; scatter_add
has a derivative), take the dispatcher's guarded form: aten's op on libtorch 2.14 and later, an error naming the leak
and the remedies before; another string raises aten's error. The extension is built at target 2.10 without
SHIMGEN_LEAKY_STR and compared with aten on the installed torch, and on 2.10.0, 2.14.1 and 2.15.0 where their venvs are
found."""

from __future__ import annotations

import subprocess

import pytest
import torch

from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from tests.cxx import build_so

TARGET_2_10 = "0x020a000000000000"
ROWS = ["scatter.reduce", "scatter_.reduce", "scatter.reduce_out"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_scatter(Tensor s, int64_t d, Tensor i, Tensor src, std::string r) { return ts::scatter(s, d, i, src, r); }
Tensor k_scatter_(Tensor s, int64_t d, Tensor i, Tensor src, std::string r) { return ts::scatter_(s, d, i, src, r); }
Tensor k_scatter_out(Tensor s, int64_t d, Tensor i, Tensor src, std::string r, Tensor o) {
  return ts::scatter_out(o, s, d, i, src, r);
}
Tensor k_value(Tensor s, int64_t d, Tensor i, double v, std::string r) { return ts::scatter(s, d, i, v, r); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("scatter(Tensor s, int d, Tensor i, Tensor src, str r) -> Tensor");
  m.def("scatter_(Tensor(a!) s, int d, Tensor i, Tensor src, str r) -> Tensor(a!)");
  m.def("scatter_out(Tensor s, int d, Tensor i, Tensor src, str r, Tensor(a!) o) -> Tensor(a!)");
  m.def("value(Tensor s, int d, Tensor i, float v, str r) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("scatter", TORCH_BOX(&k_scatter));
  m.impl("scatter_", TORCH_BOX(&k_scatter_));
  m.impl("scatter_out", TORCH_BOX(&k_scatter_out));
  m.impl("value", TORCH_BOX(&k_value));
}
"""


def test_the_rows_name_the_str_value_kernel_and_are_proven() -> None:
    facts = scalars.load().kernel_compositions
    entry = kernels.get("str_value")
    for op in ROWS:
        row = facts.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op) is entry and "none_via" not in row  # a plain str: no None
        assert row["argument"] == "reduce" and row["calls"]["add"].startswith("scatter_add")
        assert row["refused"] == ["multiply"] and row["no_derivative"] == ["add"]
        assert {"2.10.0", "2.13.0", "2.14.1", "2.15.0"} <= set(row["proven"])
        assert entry.prover_spec(row, "")["prover"] == "prove_str_value_scatter"


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("scatter_reduce")
    files, _ = pipeline.generate([*ROWS, "scatter.value_reduce"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "scatter_reduce.cpp"
    src.write_text(CALLS.replace("NS", "scatter_reduce"))
    lib = str(root / "scatter_reduce.so")
    build_so(str(src), lib, str(root / "gen"), [f"TORCH_TARGET_VERSION={TARGET_2_10}"])  # no SHIMGEN_LEAKY_STR
    return lib


# Run by each runtime's interpreter: "add" (every form, several dtypes, an expanded index, a large one split over
# threads) equal to aten bit for bit; "multiply" and a recorded "add" aten's own from 2.14, a shimgen: error naming
# the leak before; an unknown string aten's error.
ON_RUNTIME = r"""
import sys, warnings, torch
warnings.simplefilter("ignore")  # aten's deprecation warning for reduce with a Tensor src
torch.ops.load_library(sys.argv[1])
ops = torch.ops.scatter_reduce
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])

def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(-1).view(torch.uint8) if a.numel() else a,
                                                                     b.view(-1).view(torch.uint8) if b.numel() else b)

g = torch.Generator().manual_seed(0)
cases = []
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.uint8, torch.bool):
    for shape, ishape, dim in [((5, 7), (9, 7), 0), ((5, 7), (5, 30), 1), ((64, 33), (2000, 33), 0), ((), (), 0)]:
        size = shape[dim] if shape else 1
        index = torch.randint(0, size, ishape, generator=g)
        src = (torch.randn(ishape, generator=g, dtype=torch.float64) * 100).to(dtype)
        cases.append((torch.randn(shape, generator=g, dtype=torch.float64).to(dtype), dim, index, src))
    self_, dim = torch.randn(64, 33, dtype=torch.float64).to(dtype), 0
    cases.append((self_, 0, torch.randint(0, 64, (2000, 1), generator=g).expand(2000, 33),  # aten's expanded path
                  (torch.randn(2000, 33, generator=g) * 100).to(dtype)))
for threads in (1, 2):
    torch.set_num_threads(threads)
    for s, d, i, src in cases:
        want = torch.scatter(s, d, i, src, reduce="add")
        assert same(ops.scatter(s, d, i, src, "add"), want), (s.dtype, s.shape)
        x = s.clone()
        assert ops.scatter_(x, d, i, src, "add") is not None and same(x, want)
        o = torch.empty(0, dtype=s.dtype)
        assert same(ops.scatter_out(s, d, i, src, "add", o), want) and same(o, want)
        if s.dtype == torch.float64:
            assert same(ops.value(s, d, i, 2.5, "add"), torch.scatter(s, d, i, 2.5, reduce="add"))
s, d, i, src = cases[0]
s64 = s.double()
try:
    ops.scatter(s, d, i, src, "Add")
    raise AssertionError("no error")
except RuntimeError as e:
    assert "reduce argument must be either add or multiply" in str(e), e
x = s64.clone().requires_grad_()
recorded = [lambda: ops.scatter(s, d, i, src, "multiply"), lambda: ops.scatter(x, d, i, src.double(), "add")]
for call in recorded:
    if release < (2, 14):
        try:
            call()
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "leaks 48 bytes per call converting its str `reduce`" in str(e) and "SHIMGEN_LEAKY_STR" in str(e), e
assert release < (2, 14) or same(recorded[0](), torch.scatter(s, d, i, src, reduce="multiply"))
if release >= (2, 14):
    r = recorded[1]()
    assert r.grad_fn is not None and type(r.grad_fn).__name__ == "NotImplemented"  # aten's own op, recorded
with torch.no_grad():
    assert same(ops.scatter(x, d, i, src.double(), "add"), torch.scatter(s64, d, i, src.double(), reduce="add"))
print("ok")
"""


@pytest.mark.slow
def test_the_extension_needs_libtorch_alone(ext) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_scatter_reduce" not in out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_add_is_atens_on_every_runtime_and_the_rest_is_named(ext, name) -> None:
    """One target-2.10 binary: "add" equal to aten's scatter with reduce="add" bit for bit on each runtime;
    "multiply" and a recorded "add" a shimgen: error naming the leak before 2.14, aten's own op from 2.14."""
    from tests.children import run_on

    proc = run_on(name, ON_RUNTIME, ext)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
