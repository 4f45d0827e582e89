"""`python -m shimgen.dev`: one developer command whose subcommands are the measuring and recording commands."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from shimgen import dev

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _dev(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shimgen.dev", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_help_lists_every_command_with_one_line() -> None:
    proc = _dev("--help")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.split("commands:\n")[1].splitlines() if line.strip()]
    assert listed == list(dev.COMMANDS)
    assert len(listed) >= 10


def test_no_command_is_the_usage_and_exit_2() -> None:
    proc = _dev()
    assert proc.returncode == 2 and "commands:" in proc.stdout


def test_an_unknown_command_is_one_line_exit_2() -> None:
    proc = _dev("no-such-command")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "'no-such-command'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_each_commands_help_works_and_names_the_dev_command() -> None:
    for name in dev.COMMANDS:
        proc = _dev(name, "--help")
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        assert proc.stdout.startswith(f"usage: python -m shimgen.dev {name} "), (name, proc.stdout[:200])


def _has_main_block(path: str) -> bool:
    tree = ast.parse(open(path, encoding="utf-8").read())
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)


# The entries another process runs with `python -m` or by path (a worker, often in another torch runtime's venv),
# besides the package's own `python -m shimgen` and `python -m shimgen.dev`.
WORKERS = {
    "shimgen/dev.py",
    "shimgen/proofs/probe/runner.py",
    "shimgen/proofs/verify/record.py",
    "shimgen/proofs/verify/runner.py",
    "shimgen/proofs/provers/scalars.py",
    "shimgen/proofs/provers/compositions_worker.py",
    "shimgen/proofs/provers/equivalents_worker.py",
    "shimgen/proofs/provers/legacy_shims_worker.py",
    "shimgen/proofs/provers/number_rules_worker.py",
    "shimgen/proofs/provers/kernels/cpu_activation.py",  # its cases, one child per CPU capability and thread count
}


def test_a_module_runs_as_a_program_only_as_a_worker() -> None:
    """Every command a person runs to measure or record is a subcommand of `python -m shimgen.dev`."""
    found = set()
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "shimgen")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            if f == "__main__.py" and rel != "shimgen/__main__.py":
                found.add(rel)
            elif f.endswith(".py") and _has_main_block(path):
                found.add(rel)
    assert found == WORKERS


def test_a_document_it_cannot_read_is_one_line_exit_2(tmp_path) -> None:
    missing = tmp_path / "no-such.md"
    proc = _dev("overlay-needs", "--target", "2.13", "--doc", str(missing))
    assert proc.returncode == 2
    assert proc.stderr == f"shimgen: error: --doc {missing}: No such file or directory\n", proc.stderr
    assert not missing.exists()
