"""The README's quick start is examples/quickstart: the files the README shows are those files, byte for byte, and
the extension builds with its setup.py and runs on the installed torch and on torch 2.10.0 (its target)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from shimgen.proofs.verify import runtimes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICKSTART = os.path.join(ROOT, "examples", "quickstart")
SHOWN = {"csrc/quickstart.cpp": "cpp", "quickstart/__init__.py": "python", "setup.py": "python",
         "CMakeLists.txt": "cmake", "pyproject.toml": "toml"}
RUN = """
import torch, quickstart
x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
assert quickstart.scaled_relu(x, 0.5).tolist() == [[0.0, 1.0], [1.5, 0.0]]
assert quickstart.row_max(x).tolist() == [2.0, 3.0]
print(torch.__version__)
"""


def _readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("rel", sorted(SHOWN))
def test_the_readme_shows_the_example_as_it_is(rel: str) -> None:
    with open(os.path.join(QUICKSTART, rel), encoding="utf-8") as f:
        text = f.read()
    assert f"```{SHOWN[rel]}\n{text}```" in _readme(), f"README's copy of examples/quickstart/{rel} differs"


def test_the_readme_says_how_to_build_and_run_it() -> None:
    readme = _readme()
    for command in ("pip wheel --no-build-isolation --no-deps -w dist .",
                    'cmake -S . -B build/cmake -DShimgen_DIR="$(shimgen --cmake-dir)"',
                    "cmake --build build/cmake"):
        assert command in readme, command


@pytest.mark.slow
def test_it_builds_and_runs_on_the_installed_torch_and_its_target(tmp_path) -> None:
    src = str(tmp_path / "quickstart")
    shutil.copytree(QUICKSTART, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "*.so"))
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=src, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    interpreters = {"installed": sys.executable}
    oldest = runtimes.find("2.10.0")
    if oldest is not None:
        interpreters["2.10.0"] = oldest.python
    for name, python in interpreters.items():
        run = subprocess.run([python, "-c", RUN], cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": src},
                             capture_output=True, text=True)
        assert run.returncode == 0, (name, run.stderr[-3000:])
    if oldest is None:
        reason = runtimes.missing_reason(["2.10.0"])
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(f"ran on the installed torch only: {reason}")
