"""meshgrid(tensors, indexing) below target 2.14 in the default build (kernel `meshgrid`): aten's
CompositeImplicitAutograd meshgrid as the same views (each input viewed along its own dimension and expanded, the
first two swapped for "xy"), the string compared in C++, so no str crosses the ABI and nothing leaks on libtorch
2.10-2.13. One extension, built at target 2.10 without SHIMGEN_LEAKY_STR and linked with libtorch alone, is run on
the installed torch and on each runtime venv: values, shapes, strides and storage offsets of the views, aten's
errors, and float64 gradients (registered as CompositeImplicitAutograd)."""

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

std::vector<Tensor> grid(std::vector<Tensor> tensors, std::string indexing) {
  return ts::meshgrid(tensors, indexing);
}
std::vector<Tensor> xy(Tensor a, Tensor b) { return ts::meshgrid({a, b}, "xy"); }

STABLE_TORCH_LIBRARY(meshgrid_views, m) {
  m.def("grid(Tensor[] tensors, str indexing) -> Tensor[]");
  m.def("xy(Tensor a, Tensor b) -> Tensor[]");
}

STABLE_TORCH_LIBRARY_IMPL(meshgrid_views, CompositeImplicitAutograd, m) {
  m.impl("grid", TORCH_BOX(&grid));
  m.impl("xy", TORCH_BOX(&xy));
}
"""

CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.meshgrid_views
bad, done = [], 0

def outcome(fn):
    try:
        return "ok", [(g, tuple(g.shape), g.stride(), g.storage_offset()) for g in fn()]
    except RuntimeError as e:
        return "error", str(e).splitlines()[0]

g = torch.Generator().manual_seed(2)
CASES = [[(3,)], [(3,), (4,)], [(2,), (0,), (5,)], [(), (3,)], [(1,), (1,), (2,), (3,)], [(2, 2)], []]
for dtype in (torch.float32, torch.float64, torch.int64, torch.bool):
    for shapes in CASES:
        xs = [(torch.randn(sh, generator=g, dtype=torch.float64) * 3).to(dtype) for sh in shapes]
        for indexing in ("ij", "xy", "IJ"):
            want = outcome(lambda: torch.meshgrid(*xs, indexing=indexing) if xs else torch.ops.aten.meshgrid(xs, indexing=indexing))
            got = outcome(lambda: ops.grid(xs, indexing))
            done += 1
            if want[0] != got[0]:
                bad.append(f"{dtype} {shapes} {indexing!r}: {want[0]} vs {got[0]} {got[1] if got[0] == 'error' else ''}")
            elif want[0] == "error":
                if want[1] not in got[1] and not got[1].endswith("(aten raises)"):
                    bad.append(f"{dtype} {shapes} {indexing!r}: {want[1]} vs {got[1]}")
            elif [w[1:] for w in want[1]] != [h[1:] for h in got[1]] or \
                    not all(torch.equal(w[0], h[0]) for w, h in zip(want[1], got[1])):
                bad.append(f"{dtype} {shapes} {indexing!r}: views differ")
a, b = torch.arange(3.0), torch.arange(4.0)
if not all(torch.equal(x, y) for x, y in zip(ops.xy(a, b), torch.meshgrid(a, b, indexing="xy"))):
    bad.append("xy")
grads = []
for fn in (lambda v: ops.grid(v, "xy"), lambda v: torch.meshgrid(*v, indexing="xy")):
    leaves = [torch.arange(3.0, dtype=torch.float64).requires_grad_(), torch.arange(4.0, dtype=torch.float64).requires_grad_()]
    sum((r * (torch.arange(r.numel(), dtype=r.dtype).view(r.shape) + 1)).sum() for r in fn(leaves)).backward()
    grads.append([x.grad for x in leaves])
if not all(torch.equal(x, y) for x, y in zip(*grads)):
    bad.append("gradient")
print("DONE", done)
for line in bad:
    print("BAD", line)
"""


def test_the_row_names_the_kernel_and_is_proven_on_every_runtime() -> None:
    row = scalars.load().kernel_compositions.get("meshgrid.indexing")
    assert row is not None, "meshgrid.indexing: no proven kernel_compositions row"
    assert kernels.get(row["kernel"], "meshgrid.indexing").name == "meshgrid"
    assert {str(v) for v in row["proven"]} >= {"2.10.0", "2.13.0", "2.14.1", "2.15.0"}


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("meshgrid_views")
    files, _ = pipeline.generate(["meshgrid.indexing"], None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    (root / "meshgrid.cpp").write_text(CALLS)
    out = str(root / "meshgrid.so")
    build_so(str(root / "meshgrid.cpp"), out, str(root / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    return out


def test_no_str_is_converted(lib) -> None:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "torch_new_string_handle" not in out and "shimgen_overlay" not in out


@pytest.mark.parametrize("name", ["2.10.0", "2.13.0", "2.14.1", "2.15.0"])
def test_views_errors_and_gradients_are_atens_on_each_runtime(lib, name) -> None:
    names = list(releases.load().runtimes)
    rts, missing = runtimes.resolve(names)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    rt = next((r for r in rts if r.name == name), None)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    proc = subprocess.run([rt.python, "-c", quick_exit(CHECK), lib], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("BAD")] == [], proc.stdout[-3000:]
    assert int(next(line for line in lines if line.startswith("DONE")).split()[1]) == 4 * 7 * 3, proc.stdout
