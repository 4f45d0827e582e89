"""[tool.shimgen] in pyproject.toml (shimgen/tools/project.py): `shimgen` alone (re)generates the project's folder,
`shimgen --check` verifies it, a bad table is one line and exit status 2 with nothing written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shimgen(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shimgen", *args], capture_output=True, text=True, cwd=cwd)


def project(tmp_path, table: str) -> str:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "ext"\n\n[tool.shimgen]\n{table}\n')
    return str(tmp_path)


def test_repository_table_describes_generated():
    """The repository's own table is the README's first command: `shimgen --check` alone verifies generated/."""
    proc = shimgen("--check", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "generated is up to date" in proc.stdout
    sub = shimgen("--check", cwd=os.path.join(ROOT, "tests"))  # found from a subfolder too
    assert sub.returncode == 0 and "generated is up to date" in sub.stdout, sub.stderr


def test_generate_then_check(tmp_path):
    root = project(tmp_path, 'ops = ["softmax", "masked_fill"]\ntarget = "2.10"\nout = "build/gen"\nonly = true')
    proc = shimgen(cwd=root)
    assert proc.returncode == 0, proc.stderr
    gen = tmp_path / "build" / "gen"
    assert (gen / "torch/csrc/stable/ops/softmax.h").is_file()
    assert not (gen / "torch/csrc/stable/ops/clone.h").exists()  # only = true
    assert "only: true" in (gen / "shimgen.yaml").read_text()
    assert shimgen("--check", cwd=root).returncode == 0
    (tmp_path / "sub").mkdir()
    assert shimgen("--check", cwd=tmp_path / "sub").returncode == 0  # the table above the working directory
    project(tmp_path, 'ops = "softmax,masked_fill,amax"\nout = "build/gen"\nonly = true')  # a comma string too
    stale = shimgen("--check", cwd=root)
    assert stale.returncode == 1
    assert "missing:" in stale.stderr and "amax.h" in stale.stderr
    assert "To update: shimgen  (reads [tool.shimgen])" in stale.stderr
    assert shimgen(cwd=root).returncode == 0 and shimgen("--check", cwd=root).returncode == 0


def test_command_line_wins_and_other_folders_are_not_the_project(tmp_path):
    root = project(tmp_path, 'ops = ["softmax"]\nout = "gen"\nonly = true')
    other = tmp_path / "other"
    proc = shimgen("--ops", "amax", "--only", "--out", str(other), cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (other / "torch/csrc/stable/ops/amax.h").is_file() and not (tmp_path / "gen").exists()
    assert shimgen("--check", "--out", str(other), cwd=root).returncode == 0  # replays other's stamp
    assert shimgen("--project", root, "--out", str(tmp_path / "third"), cwd=ROOT).returncode == 0
    assert (tmp_path / "third/torch/csrc/stable/ops/softmax.h").is_file()


@pytest.mark.parametrize("table, message", [
    ("ops = 3", "`ops` must be a list of op names"),
    ("ops = []", "`ops` names no op"),
    ('ops = ["softmax", ""]', "`ops` must be a list of op names"),
    ('opps = ["softmax"]', "unknown key `opps`"),
    ("target = 2.10", "`target` must be a quoted release"),
    ('target = "2.8"', "the stable ABI starts at 2.9"),
    ('target = "2.x"', "target"),
    ('ops = ["softmax"]\nonly = "yes"', "`only` is true or false"),
    ("only = true", "`only` needs `ops`"),
    ('out = ""', "`out` must be a folder name"),
    ('ops = ["softmaxx"]', "softmaxx"),
    ("ops = [", "malformed TOML"),
    ('ops = ["softmax"]\ntarget = "2.10"\nsince = "2.14"', '`since` 2.14 is above `target` 2.10'),
])
def test_bad_table_is_one_line(tmp_path, table, message):
    root = project(tmp_path, table)
    for args in ((), ("--check",)):
        proc = shimgen(*args, cwd=root)
        assert proc.returncode == 2, (table, proc.stderr)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("shimgen: error: "), proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(os.listdir(root)) == ["pyproject.toml"]  # nothing written


def test_cmake_dir():
    proc = shimgen("--cmake-dir", cwd=ROOT)
    assert proc.returncode == 0
    assert os.path.isfile(os.path.join(proc.stdout.strip(), "ShimgenConfig.cmake"))
