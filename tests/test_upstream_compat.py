"""Code written against upstream's 2.13 torch/csrc/stable/ops.h compiles against shimgen's and gives the same
results: tests/compat/upstream_calls.cpp calls every 2.13 wrapper in upstream's style."""

from __future__ import annotations

import os

import pytest
import torch

from shimgen.facts import manifest
from shimgen.generate.pipeline import generate, write as write_atomically
from tests.children import quick_exit
from tests.cxx import WARNINGS, build_so, library, syntax_check

HERE = os.path.dirname(__file__)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compat")
    gen = str(tmp / "generated")
    files, _ = generate(None, None, None)  # the manifest's default set: every op upstream's ops.h reaches
    write_atomically(gen, files)
    src = os.path.join(HERE, "compat", "upstream_calls.cpp")
    upstream = str(tmp / "libcompat_upstream.so")
    ours = str(tmp / "libcompat_generated.so")
    build_so(src, upstream, None, ["COMPAT_NS=compat_upstream"])
    build_so(src, ours, gen, ["COMPAT_NS=compat_generated", "EXPECT_SHIMGEN_OPS_H"])
    torch.ops.load_library(upstream)
    torch.ops.load_library(ours)
    return upstream, ours


@pytest.mark.parametrize("dtype", [torch.float32])
def test_same_results_as_upstream(libs, dtype):
    x = torch.arange(6, dtype=dtype).reshape(2, 3) - 2.5
    theirs = torch.ops.compat_upstream.run_all(x)
    ours = torch.ops.compat_generated.run_all(x)
    assert len(theirs) == len(ours) == 41
    for i, (a, b) in enumerate(zip(theirs, ours)):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), i
        assert torch.equal(a, b), (i, a, b)


def test_results_match_eager(libs):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5
    ours = torch.ops.compat_generated.run_all(x)
    assert torch.equal(ours[1], x.narrow(1, 0, 2))
    assert torch.equal(ours[4], torch.nn.functional.pad(x, [1, 1], value=0.5))
    assert torch.equal(ours[7], x.amax(dim=[0, 1], keepdim=True))
    assert torch.equal(ours[-4], torch.zeros_like(x))
    assert torch.equal(ours[-3], x - 2 * x)
    assert torch.equal(ours[-1], torch.full([2], 5.0, dtype=torch.float64))


# Every overload of every name upstream's ops.h has (sum.default beside sum.dim_IntList, to.dtype beside
# to.dtype_layout, ...): the most that can compete with upstream's wrappers for its callers' calls.
EVERY_OVERLOAD = sorted({op.split(".")[0] for op in manifest.load().default_ops})


@pytest.mark.parametrize("ops", [["sort"], EVERY_OVERLOAD], ids=["sort", "every-overload-of-upstreams-names"])
def test_upstream_calls_compile_with_any_selection(ops: list[str], tmp_path) -> None:
    """The output is additive: whatever --ops selects, code written against upstream's ops.h still compiles."""
    gen = str(tmp_path / "generated")
    files, _ = generate(ops, None, None)
    write_atomically(gen, files)
    with open(os.path.join(HERE, "compat", "upstream_calls.cpp"), encoding="utf-8") as f:
        source = "#define COMPAT_NS compat_any\n#define EXPECT_SHIMGEN_OPS_H\n" + f.read()
    res = syntax_check(source, gen)
    assert res.returncode == 0, "\n".join(line for line in res.stderr.splitlines() if "error" in line)[:4000]


# ---- every release: the output of a plain run under that torch, against that torch's own ops.h ----------------

RUNTIMES = ["2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]
# What each release's run_all returns: 2.13's 41, nine more from 2.14, four more from 2.15.
COUNTS = {"2.14": 50, "2.15": 54}

_COMPARE = """
import sys, torch
torch.ops.load_library(sys.argv[1]); torch.ops.load_library(sys.argv[2])
x = torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5
theirs, ours = torch.ops.compat_upstream.run_all(x), torch.ops.compat_generated.run_all(x)
print(len(theirs), len(ours))
for i, (a, b) in enumerate(zip(theirs, ours)):
    assert (a.dtype, a.shape) == (b.dtype, b.shape), (i, a, b)
    assert torch.equal(a, b), (i, a, b)
"""


@pytest.mark.parametrize("name", RUNTIMES)
def test_plain_run_under_each_release_is_a_drop_in(name: str, tmp_path) -> None:
    """`shimgen` with that release's yaml (as a plain run under its torch reads it) writes an ops.h that code
    written against that release's own torch/csrc/stable/ops.h compiles with, warning-free, against that release's
    headers, and whose calls return what upstream's header returns (run in that release's python)."""
    import subprocess  # noqa: PLC0415

    from shimgen.proofs.verify import build, runtimes  # noqa: PLC0415

    rt = runtimes.find(name)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    yaml_path = os.path.join(os.path.dirname(rt.torch.root), "torchgen", "packaged", "ATen", "native",
                             "native_functions.yaml")
    gen = str(tmp_path / "generated")
    files, _ = generate(None, yaml_path, None)
    write_atomically(gen, files)
    src = os.path.join(HERE, "compat", "upstream_calls.cpp")
    inc = rt.torch.include_dirs[0]
    libs = {}
    for ns, out, extra in [("compat_upstream", None, []),
                           ("compat_generated", gen, ["-DEXPECT_SHIMGEN_OPS_H", *WARNINGS])]:
        so = str(tmp_path / f"lib{ns}.so")
        proc = library([*build.STABLE_FLAGS, f"-DCOMPAT_NS={ns}", *extra, *([f"-I{out}"] if out else []),
                        f"-isystem{inc}"], src, so, rt.torch.link_flags())
        assert proc.returncode == 0, f"{name} {ns}: " + "\n".join(
            line for line in proc.stderr.splitlines() if "error" in line)[:4000]
        libs[ns] = so
    proc = subprocess.run([rt.python, "-c", quick_exit(_COMPARE), libs["compat_upstream"], libs["compat_generated"]],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    minor = ".".join(name.split(".")[:2])
    want = COUNTS.get(minor, 41)
    assert proc.stdout.split() == [str(want), str(want)], proc.stdout
