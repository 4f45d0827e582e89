"""The stamp's text (shimgen.generate.stamp) and a small run's start-up: what it imports, what it memoizes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from shimgen.generate import stamp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("ops, since, yaml_rel, only", [
    (["add", "pad", "amax"], None, None, False),
    (["add.Tensor", "sum.dim_IntList"], "2.10.0", None, True),
    (None, "2.11.0", "../shared/torch-schemas/2.12.0/native_functions.yaml", False),
    (["add"], None, "dir with space/native_functions.yaml", False),
    (["add"], None, "it's:here #1/native.yaml", False),
    (["add"], None, "naïve/native_functions.yaml", True),
    (["add"], None, "manifest", False),
    (["add"], None, "-leading/dash.yaml", False),
    (["yes", "No", "null.default", "true_divide", "on.Tensor", "a.1", "_x", "y", "n", "ON"], None, None, True),
    (["add", "9lives"], "2.12.0", None, False),
])
def test_stamp_text_is_the_serializers(ops, since, yaml_rel, only) -> None:
    """The stamp written without yaml (plain names and paths) is byte for byte what the serializer writes, and
    reads back as what was written."""
    data = {"ops": list(ops) if ops else "manifest", **({"only": True} if ops and only else {}),
            **({"since": since} if since else {}), **({"yaml": yaml_rel} if yaml_rel else {})}
    comment = {"yaml": "  # relative to this folder", "only": "  # without the manifest's op set"}
    text = stamp.text(ops, since, yaml_rel, only)
    assert text == stamp._serialized(data, comment)
    assert yaml.safe_load(text) == data


@pytest.mark.parametrize("package", ["yaml", "torchgen.api"])
def test_a_warm_small_run_imports_no_yaml_parser(tmp_path, package) -> None:
    """With shimgen's cache warm, generating a few ops reads every package data file and the selected entries
    from the cache: PyYAML (a tenth of the run's start-up) is never imported, nor torchgen's C++ API model (about
    an eighth: the ATen function each C shim calls is kept with the entry's parse)."""
    code = ("import sys; from shimgen.generate import pipeline; pipeline.generate(['add', 'pad', 'amax'], None, None, None); "
            f"print(sorted(m for m in sys.modules if m == {package!r} or m.startswith({package + '.'!r})))")
    env = dict(os.environ, SHIMGEN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    assert runs[0].stdout.strip() != "[]"  # the first run parsed them (and so can tell)
    assert runs[1].stdout.strip() == "[]", runs[1].stdout


def test_a_small_runs_layout_memo_keeps_small_files_only(tmp_path, monkeypatch) -> None:
    """The C++ layout memo of runs of few files (shimgen.generate.emit.fmt) keeps each file it laid out, and never a large one
    (which would make every small run load it)."""
    from shimgen.base import cache
    from shimgen.generate.emit import fmt

    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    small = "namespace a {\nint f(int x);\n}\n"
    large = "namespace b {\n" + "".join(f"int g{i}(int x);\n" for i in range(fmt.FEW_FILES_MEMO_CHARS // 16)) + "}\n"
    first = fmt.Formatting({"s.h": small, "l.h": large}).result()
    memo = cache.Memo("cpp-layout-few", [fmt._formatter_identity()])
    assert memo.get(small)[0] == first["s.h"]
    assert memo.get(large) is None
    assert fmt.Formatting({"s.h": small, "l.h": large}).result() == first
