"""The committed outputs are what the tool generates now: `shimgen --check` over every golden folder and over
generated/ (the manifest's default op set). Regenerate them with tests/regen_golden.sh, never by hand."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from shimgen.tools import cli
from shimgen.generate.emit import c as emit_c
from shimgen.generate import pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")
REGEN = os.path.join(ROOT, "tests", "regen_golden.sh")
FOLDERS = sorted(d for d in os.listdir(GOLDEN) if os.path.isdir(os.path.join(GOLDEN, d)))


def test_golden_sets_exist() -> None:
    assert {"add_pad_amax", "optional_list_device_generator", "multi_return"} <= set(FOLDERS)
    with open(REGEN, encoding="utf-8") as f:
        regenerated = set(re.findall(r"^regen (\w+)", f.read(), re.M))
    assert regenerated == set(FOLDERS), "tests/regen_golden.sh must regenerate exactly the golden folders"


@pytest.mark.parametrize("folder", [os.path.join(GOLDEN, d) for d in FOLDERS] + [os.path.join(ROOT, "generated")],
                         ids=FOLDERS + ["generated"])  # fmt: skip
def test_check_is_clean(folder: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert os.path.isfile(os.path.join(folder, pipeline.STAMP)), f"{folder} has no {pipeline.STAMP}: run tests/regen_golden.sh"
    assert os.path.isfile(os.path.join(folder, emit_c.HEADER))
    rc = cli.main(["--check", "--out", folder])
    out, err = capsys.readouterr()
    assert rc == 0, f"{folder} is out of date; run tests/regen_golden.sh and review the diff\n{err}\n{out[-4000:]}"
    assert "up to date" in out


def test_generated_declares_the_manifest() -> None:
    """generated/ is what the README's first command writes: upstream's surface (the manifest) and more."""
    from shimgen.facts import manifest

    header = emit_c.read_declarations(os.path.join(ROOT, "generated"))  # libtorch's shims and the overlay's
    with open(os.path.join(ROOT, "generated", pipeline.STAMP), encoding="utf-8") as f:
        assert "ops: [add, pad, amax]" in f.read()
    for op in [*manifest.load().default_ops, "add.Scalar", "amax.out", "pad.default"]:
        name, _, overload = op.partition(".")
        shim = f"aoti_torch_aten_{name}" + ("" if overload == "default" else f"_{overload}")
        assert f" {shim}(" in header, op


def test_readme_first_command_leaves_a_fresh_clone_clean(tmp_path) -> None:
    """The README's first command, run in a fresh clone (the tracked files of this checkout, committed into a new
    repository), rewrites generated/ with the very bytes that are committed: `git status` stays empty."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        first = next(line.strip() for line in f if line.startswith("    shimgen "))
    assert first == "shimgen --ops add,pad,amax"
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True, check=True)
    clone = tmp_path / "clone"
    for rel in filter(None, tracked.stdout.split("\0")):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            dst = clone / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "clone"], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    proc = subprocess.run([sys.executable, "-m", "shimgen", *first.split()[1:]], cwd=clone, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert status.stdout == "", f"the README's first command changed the clone:\n{status.stdout}"


def test_golden_add_pad_amax_content() -> None:
    """Spot checks on the smallest golden: every overload of the three names, gated by its version tag."""
    from tests.test_shipped_header import gated_declarations

    folder = os.path.join(GOLDEN, "add_pad_amax")
    declared = {}
    for rel in emit_c.HEADERS:
        with open(os.path.join(folder, rel), encoding="utf-8") as f:
            declared[rel] = {re.search(r"(aoti_torch_aten_\w+)\(", d).group(1): g for g, d in gated_declarations(f.read())}
        assert list(declared[rel]) == sorted(declared[rel])
    # c_shim_aten.h declares libtorch's shims; the overlay's only in c_shim_aten_overlay.h (opt-in, SHIMGEN_OVERLAY)
    assert set(declared[emit_c.HEADER]) == {"aoti_torch_aten_amax", "aoti_torch_aten_pad",
                                            "aoti_torch_aten_subtract_Tensor"}
    gates = {**declared[emit_c.HEADER], **declared[emit_c.OVERLAY_HEADER]}
    assert len(gates) == sum(map(len, declared.values()))  # no shim in both
    new = "TORCH_FEATURE_VERSION >= TORCH_VERSION_2_13_0"
    # amax and pad shipped (ungated) in 2.9; the rest are shimgen's, tagged with the yaml's release (2.13)
    assert gates == {
        "aoti_torch_aten_add_Scalar": new,
        "aoti_torch_aten_add_Tensor": new,
        "aoti_torch_aten_add_out": new,
        "aoti_torch_aten_amax": None,
        "aoti_torch_aten_amax_out": new,
        "aoti_torch_aten_pad": None,
        # libtorch's own (since 2.10), declared for add.Tensor's `equivalent` route (scalar facts' equivalents)
        "aoti_torch_aten_subtract_Tensor": "TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0",
    }

