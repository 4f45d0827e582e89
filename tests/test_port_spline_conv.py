"""`shimgen port --fix --target 2.10` on a real third-party extension with C++ autograd (tests/port_ext/
torch_spline_conv.yaml: rusty1s/pytorch_spline_conv, MIT): two torch::autograd::Function classes, three
torch::RegisterOperators registrations (one a lambda), AT_DISPATCH_FLOATING_TYPES_AND, AT_ASSERTM/AT_ERROR. The
checklist is the one recorded there, the recorded hand edits (4: the generated autograd module into the package and
its import, the build's two lines) make the project build as one abi3 wheel with its own setup.py, and the project's
own test suite (19 tests, gradcheck of the backward among them) passes from that wheel on the installed torch and on
each runtime venv found (2.10.0, 2.14.1, 2.15.0; skipped, named, where absent), as it does on the original's ATen
build.

The project is kept as it is at the pinned commit in tests/port_ext/torch_spline_conv/ (MIT; its LICENSE beside
it), a test corpus naming its source and licence; pytest does not collect it (tests/conftest.py collect_ignore_glob).

Costs (2 shared cores, libclang's prelude cached): the scan 35 s (8 files), the wheel 35 s, each runtime's tests
5-7 s."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest
import yaml

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")
pytest.importorskip("torch")

from shimgen.proofs.verify import runtimes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "port_ext", "torch_spline_conv.yaml")
RUNTIMES = ("2.10.0", "2.13.0", "2.14.1", "2.15.0")
# what pytest imports, for a runtime venv without pytest (pure Python: put on its path from this interpreter's)
PYTEST_MODULES = ("pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "pygments")


def _corpus() -> dict:
    with open(CORPUS, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def _edit(src, edit: dict) -> None:
    if "copy" in edit:
        shutil.copy(src / edit["copy"], src / edit["to"])
        return
    path = src / edit["file"]
    text = path.read_text()
    assert text.count(edit["old"]) == 1, (edit["file"], edit["old"])
    path.write_text(text.replace(edit["old"], edit["new"]))


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The project ported by --fix (its checklist), the hand edits applied, built as one wheel and installed into a
    folder of its own (pip --target), put on a runtime's path by PYTHONPATH."""
    corpus = _corpus()
    src = tmp_path_factory.mktemp("spline_conv")
    shutil.copytree(os.path.join(HERE, "port_ext", corpus["copy"]), str(src), dirs_exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = _run([sys.executable, "-m", "shimgen", "port", *corpus["ported"], "--target", "2.10", "--fix",
                 "--toml", corpus["toml"]], cwd=src, env=env)
    checklist = [line[len("- [ ] "):] for line in proc.stdout.splitlines() if line.startswith("- [ ] ")]
    for edit in corpus["hand_edits"]:
        _edit(src, edit)
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w", str(dist), "."],
         cwd=src, env={**env, "FORCE_ONLY_CPU": "1"})
    wheels = sorted(os.listdir(dist))
    site = tmp_path_factory.mktemp("site")
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
          *(str(dist / w) for w in wheels)])
    return corpus, src, checklist, wheels, site


def test_checklist_and_hand_edits_are_the_recorded_ones(ported):
    corpus, _, checklist, _, _ = ported
    assert checklist == [" ".join(c.split()) for c in corpus["checklist"]]
    assert len(corpus["hand_edits"]) <= 5


def test_one_abi3_wheel(ported):
    _, _, _, wheels, site = ported
    assert len(wheels) == 1 and "-abi3-" in wheels[0], wheels
    libs = sorted(f for f in os.listdir(site / "torch_spline_conv") if f.endswith(".so"))
    assert [f.split(".")[0] for f in libs] == ["_basis_cpu", "_version_cpu", "_weighting_cpu"], libs


def _pytest_path(folder) -> str:
    """A folder of links to this interpreter's pytest and what it imports, for a runtime venv that has none."""
    folder.mkdir(exist_ok=True)
    for name in PYTEST_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        path = os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin
        link = folder / os.path.basename(path)
        if not link.exists():
            link.symlink_to(path)
    return str(folder)


@pytest.mark.parametrize("name", RUNTIMES)
def test_the_project_passes_its_own_tests(ported, name, tmp_path):
    corpus, src, _, _, site = ported
    rt = runtimes.find(name)
    if rt is None:
        pytest.skip(f"no torch {name}: neither the installed torch nor {runtimes.base_dir()}/torch-{name}")
    tests = tmp_path / "tests"
    shutil.copytree(src / corpus["tests"], tests)
    paths = [str(site)]
    if rt.python != sys.executable:
        paths.append(_pytest_path(tmp_path / "pytest"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(paths)
    proc = subprocess.run([rt.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "no:randomly", "--rootdir", str(tests), str(tests)],
                          cwd=tests, env=env, capture_output=True, text=True)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0 and f"{corpus['passed']} passed" in last and "failed" not in last, \
        proc.stdout[-4000:] + proc.stderr[-2000:]
