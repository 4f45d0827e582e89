"""Which release a running libtorch is: each release's first C function of torch/csrc/stable/c/shim.h
(data/releases.yaml `libtorch_markers`, derived by `python -m shimgen.dev markers`), asked once per process with
dlsym by the generated shimgen::detail::running_release. Checked against every runtime's headers and exports, and by
one extension built at target 2.10 that reports the release it runs on."""

from __future__ import annotations

import os
import subprocess

import pytest

from shimgen.facts import releases
from shimgen.proofs import libtorch_markers
from shimgen.facts.versions import Version
from shimgen.generate.pipeline import generate, write
from shimgen.proofs.verify import runtimes
from tests.children import quick_exit
from tests.cxx import build_so

RUNTIMES = list(releases.load().runtimes)

SHIM_H = """
#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0
// a comment naming torch_not_a_function(
AOTI_TORCH_EXPORT AOTITorchError
torch_first_of_2_10(int x);
AOTI_TORCH_EXPORT AOTITorchError torch_second_of_2_10(int x);
#endif // TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0

#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_14_0
#ifdef USE_MPS
AOTI_TORCH_EXPORT AOTITorchError torch_mps_only(int x);
#endif // USE_MPS
#if defined(SOMETHING)
#endif
AOTI_TORCH_EXPORT int32_t torch_first_of_2_14();
#endif // TORCH_FEATURE_VERSION >= TORCH_VERSION_2_14_0
"""


def test_the_rule_takes_each_blocks_first_function_outside_build_options() -> None:
    assert libtorch_markers.derive(SHIM_H) == [(Version(2, 10), "torch_first_of_2_10"),
                                               (Version(2, 14), "torch_first_of_2_14")]


def test_the_check_names_a_missing_and_an_early_marker() -> None:
    markers = [(Version(2, 10), "a"), (Version(2, 14), "b")]
    assert libtorch_markers.check(markers, Version(2, 13), {"a"}) == []
    assert libtorch_markers.check(markers, Version(2, 13), {"a", "b"}) == [
        "libtorch 2.13 exports b, the marker of the later 2.14"]
    assert libtorch_markers.check(markers, Version(2, 14), {"a"}) == ["libtorch 2.14 does not export b, the marker "
                                                                      "of 2.14"]


def _found() -> list[runtimes.Runtime]:
    rts, missing = runtimes.resolve(RUNTIMES)
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    return rts


@pytest.mark.parametrize("name", RUNTIMES)
def test_the_recorded_markers_are_each_runtimes_headers_and_exports(name: str) -> None:
    rt = next((r for r in _found() if r.name == name), None)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    recorded = list(releases.load().libtorch_markers)
    path = os.path.join(rt.torch.root, libtorch_markers.SHIM_H)
    derived = []  # 2.9's headers have no shim.h of release blocks
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            derived = libtorch_markers.derive(f.read())
    assert derived == [m for m in recorded if m[0] <= rt.release], (derived, recorded)
    assert libtorch_markers.check(recorded, rt.release, libtorch_markers.exports(rt.torch.root)) == []


EXTENSION = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

int64_t release(torch::stable::Tensor x) { return shimgen::detail::running_release() + 0 * x.dim(); }

STABLE_TORCH_LIBRARY(running_release, m) { m.def("release(Tensor x) -> int"); }
STABLE_TORCH_LIBRARY_IMPL(running_release, CompositeExplicitAutograd, m) { m.impl("release", TORCH_BOX(&release)); }
"""


@pytest.mark.slow
def test_an_extension_built_at_2_10_names_the_release_it_runs_on(tmp_path) -> None:
    rts = _found()
    if not rts:
        pytest.skip(runtimes.missing_reason(RUNTIMES))
    files, _ = generate(["add.Tensor"], None, None, str(tmp_path / "gen"), only=True)
    write(str(tmp_path / "gen"), files)
    (tmp_path / "release.cpp").write_text(EXTENSION)
    lib = str(tmp_path / "release.so")
    build_so(str(tmp_path / "release.cpp"), lib, str(tmp_path / "gen"), ["TORCH_TARGET_VERSION=0x020a000000000000"])
    newest = releases.load().libtorch_markers[-1][0]
    for rt in [r for r in rts if r.release.minor >= 10]:  # older than the target: refused to load, by design
        code = quick_exit("import sys, torch\ntorch.ops.load_library(sys.argv[1])\n"
                          "print(torch.ops.running_release.release(torch.zeros(1)))")
        proc = subprocess.run([rt.python, "-c", code, lib], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        want = min(rt.release, newest)  # a release newer than the data's newest marker reads as that one
        assert int(proc.stdout.split()[-1]) == want.major * 100 + want.minor, (rt.name, proc.stdout)
