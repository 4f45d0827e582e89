"""`--device` of `shimgen --verify` and of the matrix (shimgen.proofs.verify.devices): where the samples run. Without a
GPU: a device that is not there, a malformed one, or --device without --verify is one line, exit 2, no traceback,
nothing written. (The samples moving to the device: tests/test_verify_runner.py; on a GPU: benchmarks/gpu_check.sh.)
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from shimgen.proofs.verify import runtimes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here: --device cuda would run")


def _one_line_exit_2(args: list[str], cwd: str) -> str:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""
    return lines[0]


@no_gpu
def test_verify_on_a_missing_gpu_is_one_line_and_writes_nothing(tmp_path) -> None:
    line = _one_line_exit_2(["-m", "shimgen", "--ops", "abs", "--out", "gen", "--verify", "--device", "cuda"],
                            str(tmp_path))
    assert line.startswith(f"shimgen: error: --device cuda: torch {torch.__version__} sees 0 CUDA device(s)"), line
    assert os.listdir(tmp_path) == []  # neither the output folder nor the build folder (.shimgen-build)


@pytest.mark.parametrize("args, said", [
    (["--verify", "--device", "tpu"], "--device tpu: expected cpu, cuda or cuda:N"),
    (["--verify", "--device", "cuda:one"], "--device cuda:one: expected cpu, cuda or cuda:N"),
    (["--verify", "--device", ""], "--device is empty: expected cpu, cuda or cuda:N"),
    (["--verify", "--device", " "], "--device is empty: expected cpu, cuda or cuda:N"),
    (["--device", "cuda"], "--device needs --verify"),
])
def test_device_usage_errors(tmp_path, args, said) -> None:
    line = _one_line_exit_2(["-m", "shimgen", "--ops", "abs", "--out", "gen", *args], str(tmp_path))
    assert said in line, line
    assert os.listdir(tmp_path) == []  # neither the output folder nor the build folder (.shimgen-build)


@no_gpu
def test_matrix_on_a_missing_gpu_is_one_line(tmp_path) -> None:
    r = runtimes.find("2.10.0")
    if r is None:
        pytest.skip(runtimes.missing_reason(["2.10.0"]))
    line = _one_line_exit_2(["-m", "shimgen.dev", "matrix", "--ops", "abs", "--targets", "2.10", "--runtimes",
                             "2.10.0", "--device", "cuda", "--build-dir", str(tmp_path / "b")], str(tmp_path))
    assert line.startswith("shimgen: error: --device cuda: torch 2.10.0"), line
    assert not (tmp_path / "b").exists()


def test_matrix_route_and_device_must_agree(tmp_path) -> None:
    line = _one_line_exit_2(["-m", "shimgen.dev", "matrix", "--ops", "abs", "--route", "cpu", "--device", "cuda"],
                            str(tmp_path))
    assert "--route cpu runs on cpu samples, not --device cuda" in line, line
