"""einsum below target 2.14 in the default build (kernel `einsum`): aten's CompositeImplicitAutograd einsum
(Linear.cpp: einsum, sumproduct_pair) as the same dispatching calls in the same order, the equation parsed in C++
with aten's checks, so no str crosses the ABI and nothing leaks on libtorch 2.10-2.13. One extension, built at
target 2.10 without SHIMGEN_LEAKY_STR and linked with libtorch alone, is run on the installed torch and on each
runtime venv: values bit for bit, dtype, shape and strides against aten::einsum, on equations with explicit and
implicit outputs, ellipses, repeated labels, broadcast size-1 dimensions, one to four operands and a contraction
path; aten's errors; float64 gradients (registered as CompositeImplicitAutograd, autograd sees the same calls)."""

from __future__ import annotations

import os
import subprocess

import pytest

from shimgen.facts import releases
from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor plain(std::string equation, std::vector<Tensor> tensors) { return ts::einsum(equation, tensors); }
Tensor pathed(std::string equation, std::vector<Tensor> tensors, std::vector<int64_t> path) {
  return ts::einsum(equation, tensors, path);
}
Tensor matmul(Tensor a, Tensor b) { return ts::einsum("ij,jk->ik", {a, b}); }

STABLE_TORCH_LIBRARY(einsum_calls, m) {
  m.def("plain(str equation, Tensor[] tensors) -> Tensor");
  m.def("pathed(str equation, Tensor[] tensors, int[] path) -> Tensor");
  m.def("matmul(Tensor a, Tensor b) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(einsum_calls, CompositeImplicitAutograd, m) {
  m.impl("plain", TORCH_BOX(&plain));
  m.impl("pathed", TORCH_BOX(&pathed));
  m.impl("matmul", TORCH_BOX(&matmul));
}
"""

# Run by each runtime's interpreter: every case's outcome against aten's, one line per difference.
CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.einsum_calls
bad, done = [], 0

def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    if a.is_floating_point():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    return torch.equal(a, b)

g = torch.Generator().manual_seed(7)
def t(*shape, dtype=torch.float32):
    x = torch.randn(*shape, generator=g, dtype=torch.float64) * 3
    return x.round().to(dtype) if not dtype.is_floating_point else x.to(dtype)

CASES = [
    ("ij,jk->ik", [(5, 7), (7, 3)]), ("ij,jk", [(5, 7), (7, 3)]), ("bij,bjk->bik", [(2, 5, 7), (2, 7, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]), ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    ("ii->i", [(6, 6)]), ("ii", [(6, 6)]), ("iij->j", [(4, 4, 3)]), ("ij->", [(5, 7)]), ("ij->ji", [(5, 7)]),
    ("ij", [(5, 7)]), ("ji", [(5, 7)]), ("i,i->", [(9,), (9,)]), ("i,j->ij", [(4,), (6,)]), ("i,i->i", [(9,), (9,)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 6)]), ("...ij,...jk", [(1, 4, 5), (3, 5, 6)]),
    ("a...b,b...c->a...c", [(2, 3, 4), (4, 3, 5)]), ("...->...", [(2, 3)]), ("i...->...", [(4, 2, 3)]),
    ("ij,ij->ij", [(5, 7), (5, 7)]), ("ij,ij->", [(5, 7), (5, 7)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,kj->ik", [(5, 7), (3, 7)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("i,i,i->i", [(6,), (6,), (6,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]), ("bn,anm,bm->ba", [(3, 4), (2, 4, 5), (3, 5)]),
    ("ij,jk->ik", [(5, 1), (1, 3)]), ("ij,jk->ik", [(1, 7), (7, 1)]), ("ij,j->i", [(5, 7), (7,)]),
    ("i j , j k -> i k", [(5, 7), (7, 3)]), ("Ab,bC->AC", [(5, 7), (7, 3)]), ("ij,jk->ik", [(0, 7), (7, 3)]),
    ("ij,jk->ik", [(5, 0), (0, 3)]),
    # aten's errors
    ("ij,jk->ik", [(5, 7), (6, 3)]), ("ij,jk->il", [(5, 7), (7, 3)]), ("ij,jk->ii", [(5, 7), (7, 3)]),
    ("i.j,jk->ik", [(5, 7), (7, 3)]), ("i1,jk->ik", [(5, 7), (7, 3)]), ("ij,jk,kl->il", [(5, 7), (7, 3)]),
    ("ij->ik", [(5, 7)]), ("ijk->ik", [(5, 7)]), ("ii->i", [(5, 6)]), ("ij->i.", [(5, 7)]),
    ("...i...,j->", [(5, 7), (3,)]), ("ij,jk->ik", [(5, 7), (7, 3, 2)]),
]
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.int64):
    for eq, shapes in CASES:
        xs = [t(*s, dtype=dtype) for s in shapes]
        try:
            want = ("ok", torch.einsum(eq, *xs))
        except RuntimeError as e:
            want = ("error", str(e).splitlines()[0])
        try:
            got = ("ok", ops.plain(eq, xs))
        except RuntimeError as e:
            got = ("error", str(e).splitlines()[0])
        done += 1
        if want[0] != got[0] or (want[0] == "ok" and not same(got[1], want[1])) or \
                (want[0] == "error" and want[1] not in got[1]):
            bad.append(f"{dtype} {eq!r} {shapes}: {want[0]} {want[1] if want[0] == 'error' else ''} vs {got[0]} "
                       f"{got[1] if got[0] == 'error' else ''}")
# a contraction path, and aten's path errors
xs = [t(3, 4), t(4, 5), t(5, 2)]
for path in ([1, 2, 0, 1], [0, 1, 0, 1], [2, 1, 0, 1], [0, 1], [0, 0, 0, 1], [0, 5, 0, 1]):
    try:
        want = ("ok", torch.ops.aten.einsum("ij,jk,kl->il", xs, path=path))
    except RuntimeError as e:
        want = ("error", str(e).splitlines()[0])
    try:
        got = ("ok", ops.pathed("ij,jk,kl->il", xs, path))
    except RuntimeError as e:
        got = ("error", str(e).splitlines()[0])
    if want[0] != got[0] or (want[0] == "ok" and not same(got[1], want[1])) or \
            (want[0] == "error" and want[1] not in got[1]):
        bad.append(f"path {path}: {want} vs {got}")
# float64 gradients (CompositeImplicitAutograd: autograd records the composition's calls)
for eq, shapes in CASES[:30]:
    grads = []
    for fn in (lambda v: ops.plain(eq, v), lambda v: torch.einsum(eq, *v)):
        g = torch.Generator().manual_seed(3)
        leaves = [(torch.randn(*s, generator=g, dtype=torch.float64)).requires_grad_() for s in shapes]
        r = fn(leaves)
        (r * (torch.arange(r.numel(), dtype=r.dtype).view(r.shape) + 1) / 3).sum().backward()
        grads.append([x.grad for x in leaves])
    if not all(a is not None and b is not None and torch.equal(a, b) for a, b in zip(*grads)):
        bad.append(f"gradient {eq!r} {shapes}")
print("DONE", done)
for b in bad:
    print("BAD", b)
"""


def test_the_row_names_the_kernel_and_is_proven_on_every_runtime() -> None:
    row = scalars.load().kernel_compositions.get("einsum.default")
    assert row is not None, "einsum.default: no proven kernel_compositions row"
    assert kernels.get(row["kernel"], "einsum.default").name == "einsum"
    assert row["calls"]["batched"] == "bmm.default"
    assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("einsum_calls")
    files, _ = pipeline.generate(["einsum.default"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "einsum.cpp").write_text(CALLS)
    out = str(root / "einsum.so")
    build_so(str(root / "einsum.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


def test_the_extension_needs_libtorch_alone_and_converts_no_str(lib) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "shimgen_overlay" not in out and "aoti_torch_aten_einsum" not in out
    assert "torch_new_string_handle" not in out  # the equation is parsed in C++, never converted


def _runtimes() -> list[runtimes.Runtime]:
    names = list(releases.load().runtimes)
    rts, missing = runtimes.resolve(names)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    return [r for r in rts if r.release.minor >= 10]


@pytest.mark.parametrize("name", ["2.10.0", "2.13.0", "2.14.1", "2.15.0"])
def test_values_errors_and_gradients_are_atens_on_each_runtime(lib, name) -> None:
    rt = next((r for r in _runtimes() if r.name == name), None)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    proc = subprocess.run([rt.python, "-c", quick_exit(CHECK), lib], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-4000:]
    assert int(next(line for line in lines if line.startswith("DONE")).split()[1]) >= 4 * 45, proc.stdout
