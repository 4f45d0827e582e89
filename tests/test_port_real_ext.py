"""`shimgen port --fix --target 2.10` on a real third-party CPU extension (tests/port_ext/torch_cluster.yaml's `part`:
part of rusty1s/pytorch_cluster, MIT): the checklist is the one recorded there (empty), the recorded hand edits (none)
make it compile as three stable-ABI libraries against libtorch alone, and the project's own tests of the ported ops
pass on the installed torch with those libraries in place of its ATen build.

The project is kept as it is at the pinned commit in tests/port_ext/torch_cluster/ (MIT; its LICENSE beside it), a
test corpus naming its source and licence; pytest does not collect it (tests/conftest.py collect_ignore_glob). The
whole project, built as one abi3 wheel with its own setup.py and run on each runtime: tests/test_port_cluster.py.

Costs: the scan about 3-9 s (11 files, the precompiled preludes cached), the three libraries about 15 s, the tests 5 s."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")
torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "port_ext", "torch_cluster.yaml")

# torch_cluster/__init__.py loads every library of the project; the part ported has three
_INIT = """import importlib.machinery, os.path as osp, torch
for library in {libraries!r}:
    spec = importlib.machinery.PathFinder().find_spec(library, [osp.dirname(__file__)])
    torch.ops.load_library(spec.origin)
from .grid import grid_cluster  # noqa
from .graclus import graclus_cluster  # noqa
"""


def _corpus() -> dict:
    """The part's entries, with the copy's folder."""
    with open(CORPUS, encoding="utf-8") as f:
        whole = yaml.safe_load(f)
    return {**whole["part"], "copy": whole["copy"]}


def _checkout(corpus: dict, dest) -> None:
    """The pinned commit's files into dest: the copy kept beside the corpus file (tests/port_ext/torch_cluster/, with
    the project's LICENSE), never edited by hand."""
    shutil.copytree(os.path.join(HERE, "port_ext", corpus["copy"]), str(dest), dirs_exist_ok=True)


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    corpus = _corpus()
    src = tmp_path_factory.mktemp("real_ext")
    _checkout(corpus, src)
    files = [str(src / f) for f in corpus["ported"]]
    proc = _run([sys.executable, "-m", "shimgen", "port", *files, "--target", "2.10", "--fix", "--toml",
                 str(src / "ops.toml")], cwd=src)
    checklist = [line[len("- [ ] "):] for line in proc.stdout.splitlines() if line.startswith("- [ ] ")]
    for edit in corpus["hand_edits"]:
        path = src / edit["file"]
        text = path.read_text()
        assert text.count(edit["old"]) == 1, (edit["file"], edit["old"])
        path.write_text(text.replace(edit["old"], edit["new"]))
    return corpus, src, checklist


def test_checklist_is_the_recorded_one(ported):
    corpus, _, checklist = ported
    assert checklist == corpus["checklist"]
    assert corpus["hand_edits"] == []


def test_the_ported_project_passes_its_own_tests(ported, tmp_path):
    from shimgen.generate import pipeline
    from shimgen.setuptools import stable_flags
    from tests.cxx import CXX, TORCH

    corpus, src, _ = ported
    ops = yaml.safe_load("x: " + (src / "ops.toml").read_text().splitlines()[1].split("=", 1)[1])["x"]
    gen = str(tmp_path / "gen")
    files, _ = pipeline.generate(ops, None, None, gen, only=True)
    pipeline.write(gen, files)
    pkg = tmp_path / "site" / "torch_cluster"
    pkg.mkdir(parents=True)
    for name, sources in corpus["libraries"].items():
        # the project's own build: each library from its sources, here against the stable headers at 2.10
        _run([CXX, *TORCH.stable_flags(gen), *stable_flags("2.10")[1:], "-O1", "-shared", "-fPIC",
              *(str(src / s) for s in sources), "-o", str(pkg / f"{name}.so"), *TORCH.link_flags()])
    for path in corpus["python"]:
        shutil.copy(src / path, pkg / os.path.basename(path))
    (pkg / "__init__.py").write_text(_INIT.format(libraries=[n.removesuffix("_cpu") + "_cpu"
                                                             for n in corpus["libraries"]]))
    tests = tmp_path / "tests"
    tests.mkdir()
    for path in corpus["tests"]:
        shutil.copy(src / path, tests / os.path.basename(path))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--rootdir", str(tests),
                *(os.path.basename(p) for p in corpus["tests"])], cwd=tests, env=env)
    assert f"{corpus['passed']} passed" in out.stdout and "failed" not in out.stdout, out.stdout[-3000:]
