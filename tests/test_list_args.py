"""List arguments bind nothing that dies before the call returns: tests/list_args/calls.cpp (braced lists, one
value, variables, std::vector, upstream's std::optional<HeaderOnlyArrayRef>, std::nullopt) built with
AddressSanitizer and UndefinedBehaviorSanitizer at -O0 and -O2 against shimgen's ops.h, run, and compared with
eager PyTorch. A standalone executable linked with libtorch: the sanitizers' runtimes come first in it, with no
LD_PRELOAD into a Python process. (Upstream's std::optional<IntHeaderOnlyArrayRef> parameter fails here: ASan
reports the `{1}` of sum(t, {1}, true) as stack-use-after-scope.)"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess

import pytest
import torch

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp
from shimgen.generate import plan as plan_mod
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate.pipeline import write as write_atomically
from shimgen.proofs.verify import build, overlay
from tests.cxx import CXX, TORCH

HERE = os.path.join(os.path.dirname(__file__), "list_args")
OPS = ["sum", "mean", "std", "var", "amax", "argmax", "max_pool2d", "upsample_bilinear2d", "index", "new_zeros"]
SANITIZE = ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
LEVELS = ["-O0", "-O2"]

X = torch.tensor([[1.0, 2, 4], [8, 16, 32]])
X4 = (torch.arange(16) ** 2 % 7).float().reshape(1, 1, 4, 4)
EXPECTED = {
    "sum_1_keepdim": X.sum(1, keepdim=True),
    "sum_0_1": X.sum([0, 1]),
    "sum_int": X.sum(1),
    "sum_variable": X.sum(1),
    "sum_vector": X.sum([0]),
    "sum_upstream_optional": X.sum([0]),
    "sum_nullopt": X.sum(),
    "mean_0_1": X.mean([0, 1]),
    "mean_1": X.mean([1]),
    "std_1": X.std(1),  # ATen's C++-only std(Tensor, int dim) takes `{1}`: dim 1, as eager
    "std_0_1": X.std([0, 1]),
    "std_int": X.std(0),
    "var_1_unbiased_keepdim": X.var(1, unbiased=True, keepdim=True),
    "amax_0_1_keepdim": X.amax([0, 1], keepdim=True),
    "amax_int": X.amax(1),
    "max_pool2d": torch.nn.functional.max_pool2d(X4, [2, 2]),
    "upsample_scales": torch.ops.aten.upsample_bilinear2d.vec(X4, None, False, [2.0, 1.5]),
    "index": X[torch.tensor([1, 1])],
    "sum_out": X.sum(1),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("list_args")
    gen = str(root / "gen")
    p = plan_mod.make(OPS, additive=True)
    write_atomically(gen, {**emit_c.emit(r := resolve(p)), **emit_cpp.emit(r)})
    # The overlay: the C shims libtorch lacks, of the wrappers these calls can reach through them.
    ws, _ = sig_cpp.wrappers(p)
    shimmed = {w.op.name for w in ws if w.variants[-1].route.overlay}
    ov_plan, _ = overlay.missing_ops(plan_mod.make(sorted(shimmed)), TORCH)
    ov_src = str(root / "overlay")
    write_atomically(ov_src, overlay.sources(ov_plan))
    ov, ov_link = build.library(CXX, TORCH.aten_flags(ov_src), os.path.join(ov_src, emit_c.SOURCE),
                                str(root / overlay.LIBRARY), TORCH.link_flags())

    def compile_one(cmd: list[str]) -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-4000:]

    exes = {level: str(root / f"calls{level}") for level in LEVELS}
    cmds = [ov] + [
        [CXX, *TORCH.stable_flags(gen, overlay=True), level, *SANITIZE, "-c", os.path.join(HERE, "calls.cpp"), "-o", f"{exe}.o"]
        for level, exe in exes.items()
    ]  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(compile_one, cmds))
    compile_one(ov_link)
    for level, exe in exes.items():
        compile_one([CXX, *SANITIZE, f"{exe}.o", "-o", exe, f"-L{root}", "-lshimgen_overlay", f"-Wl,-rpath,{root}",
                     *TORCH.link_flags()])  # fmt: skip
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}  # fmt: skip
    return {level: subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
            for level, exe in exes.items()}  # fmt: skip


def _parse(stdout: str) -> dict[str, torch.Tensor]:
    results = {}
    for line in stdout.splitlines():
        head, _, values = line.partition(" : ")
        label, *sizes = head.split()
        data = [float(v) for v in values.split()] if values.strip() else []
        results[label] = torch.tensor(data, dtype=torch.float64).reshape([int(s) for s in sizes])
    return results


@pytest.mark.parametrize("level", LEVELS)
def test_clean_under_sanitizers(runs: dict[str, subprocess.CompletedProcess], level: str) -> None:
    run = runs[level]
    assert run.returncode == 0, run.stderr[-4000:]
    assert "runtime error" not in run.stderr and "AddressSanitizer" not in run.stderr, run.stderr[-4000:]


@pytest.mark.parametrize("level", LEVELS)
def test_results_are_eagers(runs: dict[str, subprocess.CompletedProcess], level: str) -> None:
    got = _parse(runs[level].stdout)
    assert sorted(got) == sorted(EXPECTED)
    for label, want in EXPECTED.items():
        assert got[label].shape == want.shape, label
        assert torch.equal(got[label], want.double()), (label, got[label], want)
