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

With a CUDA toolkit's headers (clang_scan's CUDA include folder) the whole csrc is ported with -D WITH_CUDA, CUDA
files too (the same checklist), and the two ported .cu files compile with nvcc against the stable headers.

Costs (2 shared cores, libclang's prelude cached): the scan 35 s (8 CPU files) or 63-75 s (15 files with the CUDA
ones), the wheel 35-40 s, nvcc 28 s, the four runtimes' suites 25-55 s run at once: 2-3.5 minutes in all, most of it
the scan."""

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
from shimgen.tools import cuda_toolkit  # noqa: E402
from shimgen.tools.porting import clang_scan  # noqa: E402

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
    # with a CUDA toolkit's headers, the CUDA build's code too (its .cu files, version.cpp's WITH_CUDA branch)
    cuda = bool(clang_scan._cuda_include())  # the folder the scan reads CUDA's headers from
    files = [*corpus["ported_cuda"], "-D", "WITH_CUDA"] if cuda else corpus["ported"]
    proc = _run([sys.executable, "-m", "shimgen", "port", *files, "--target", "2.10", "--fix",
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
    return corpus, src, checklist, wheels, site, cuda


def test_checklist_and_hand_edits_are_the_recorded_ones(ported):
    corpus, _, checklist, *_ = ported
    assert checklist == [" ".join(c.split()) for c in corpus["checklist"]]
    assert len(corpus["hand_edits"]) <= 5


def test_one_abi3_wheel(ported):
    _, _, _, wheels, site, _ = ported
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


def test_cuda_sources_compile_with_nvcc(ported, tmp_path):
    """The ported .cu files (their kernels, shimgen::cuda::current_stream, set_device) compile with nvcc against
    the stable headers at target 2.10."""
    corpus, src, _, _, _, cuda = ported
    if not cuda or cuda_toolkit.find() is None:
        pytest.skip("no CUDA toolkit (shimgen.tools.cuda_toolkit): the CUDA files were not ported or not compiled")
    import torch.utils.cpp_extension as ce

    from shimgen.setuptools import generate_into, stable_flags

    nvcc = os.path.join(cuda_toolkit.find(), "bin", "nvcc")
    gen = tmp_path / "gen"
    generate_into(str(gen), str(src))
    for source in corpus["cuda_sources"]:
        obj = tmp_path / (os.path.basename(source) + ".o")
        _run([nvcc, "-c", "-std=c++17", "-DWITH_CUDA", "--expt-relaxed-constexpr", *stable_flags("2.10"),
              f"-I{gen}", f"-I{src / 'csrc'}", *(f"-I{p}" for p in ce.include_paths()), str(src / source), "-o",
              str(obj)])
        assert obj.stat().st_size > 0


@pytest.fixture(scope="module")
def suites(ported, tmp_path_factory):
    """The project's test suite run from the wheel on each runtime found, all at once: name -> (returncode, output),
    or the reason it is absent."""
    corpus, src, _, _, site, _ = ported
    running = {}
    for name in RUNTIMES:
        rt = runtimes.find(name)
        if rt is None:
            running[name] = f"no torch {name}: neither the installed torch nor {runtimes.base_dir()}/torch-{name}"
            continue
        work = tmp_path_factory.mktemp(f"suite-{name}")
        tests = work / "tests"
        shutil.copytree(src / corpus["tests"], tests)
        paths = [str(site)]
        if rt.python != sys.executable:
            paths.append(_pytest_path(work / "pytest"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env["PYTHONPATH"] = os.pathsep.join(paths)
        running[name] = subprocess.Popen(
            [rt.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
             "--rootdir", str(tests), str(tests)], cwd=tests, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
    out = {}
    for name, proc in running.items():
        out[name] = proc if isinstance(proc, str) else (proc.wait(), proc.stdout.read())
    return out


@pytest.mark.parametrize("name", RUNTIMES)
def test_the_project_passes_its_own_tests(ported, suites, name):
    corpus = ported[0]
    got = suites[name]
    if isinstance(got, str):
        pytest.skip(got)
    code, output = got
    lines = output.strip().splitlines()
    last = lines[-1] if lines else ""
    assert code == 0 and f"{corpus['passed']} passed" in last and "failed" not in last, output[-4000:]
