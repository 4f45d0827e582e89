"""The committed outputs are what the tool generates now: `shimgen --check` over every golden folder and over
generated/ (the manifest's default op set). Regenerate them with tests/regen_golden.sh, never by hand."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from shimgen import cli, emit_c

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
    assert os.path.isfile(os.path.join(folder, cli.STAMP)), f"{folder} has no {cli.STAMP}: run tests/regen_golden.sh"
    assert os.path.isfile(os.path.join(folder, emit_c.HEADER))
    rc = cli.main(["--check", "--out", folder])
    out, err = capsys.readouterr()
    assert rc == 0, f"{folder} is out of date; run tests/regen_golden.sh and review the diff\n{err}\n{out[-4000:]}"
    assert "up to date" in out


def _committed_generated_header() -> str:
    """generated/'s C shim header as committed. The README's first command (`shimgen --ops add,pad,amax`, default
    --out generated/) rewrites the working copy with another op set (and its stamp, so --check still replays
    it); the manifest's output is then read from git's HEAD."""
    path = os.path.join(ROOT, "generated", emit_c.HEADER)
    with open(os.path.join(ROOT, "generated", "shimgen.yaml"), encoding="utf-8") as f:
        stamped_manifest = "ops: manifest" in f.read()
    if stamped_manifest:
        with open(path, encoding="utf-8") as f:
            return f.read()
    rel = f"generated/{emit_c.HEADER}"
    proc = subprocess.run(["git", "-C", ROOT, "show", f"HEAD:{rel}"], capture_output=True, text=True)
    assert proc.returncode == 0, f"generated/ holds another op set and git cannot show the committed {rel}"
    return proc.stdout


def test_generated_declares_the_manifest() -> None:
    from shimgen import manifest

    header = _committed_generated_header()
    for op in manifest.load().default_ops:
        name, _, overload = op.partition(".")
        shim = f"aoti_torch_aten_{name}" + ("" if overload == "default" else f"_{overload}")
        assert f" {shim}(" in header, op


def test_golden_add_pad_amax_content() -> None:
    """Spot checks on the smallest golden: every overload of the three names, gated by its version tag."""
    from tests.test_shipped_header import gated_declarations

    with open(os.path.join(GOLDEN, "add_pad_amax", emit_c.HEADER), encoding="utf-8") as f:
        gates = {re.search(r"(aoti_torch_aten_\w+)\(", d).group(1): g for g, d in gated_declarations(f.read())}
    assert list(gates) == sorted(gates)
    new = "TORCH_FEATURE_VERSION >= TORCH_VERSION_2_13_0"
    # amax and pad shipped (ungated) in 2.9; the rest are shimgen's, tagged with the yaml's release (2.13)
    assert gates == {
        "aoti_torch_aten_add_Scalar": new,
        "aoti_torch_aten_add_Tensor": new,
        "aoti_torch_aten_add_out": new,
        "aoti_torch_aten_amax": None,
        "aoti_torch_aten_amax_out": new,
        "aoti_torch_aten_pad": None,
    }
