"""`shimgen port --fix --target 2.10` on the whole of a real third-party extension (tests/port_ext/
torch_cluster.yaml: rusty1s/pytorch_cluster, MIT): nine torch::RegisterOperators registrations (one of a
lambda, one returning a tuple), at::parallel_for with at::internal::GRAIN_SIZE, AT_DISPATCH_ALL_TYPES_AND2 around
nanoflann's k-d tree, from_blob of two dimensions with `x.options().dtype(...)`, torch::tensor of integers, Tensor
operators and indexing, randperm/rand from torch's generator. The checklist is the one recorded there, the recorded
hand edits (2: the build's two lines) make the project build as one abi3 wheel with its own setup.py (nine
libraries), and the project's own test suite (test/: each op over every dtype, TorchScript, knn and radius against
scipy) gives from that wheel, on the installed torch and on each runtime venv found (2.10.0, 2.14.1, 2.15.0;
skipped, named, where absent), what the original's ATen build gives: 63 passed, and the one test that fails there
(test_nearest with float16: the project's CPU nearest is scipy.cluster.vq, which refuses it) failing the same way.

With a CUDA toolkit's headers (clang_scan's CUDA include folder) the whole csrc is ported with -D WITH_CUDA, CUDA
files too (the same checklist), and the seven ported .cu files compile with nvcc against the stable headers. The
random walk's (rw_cuda.cu) includes cuRAND's headers, a package of their own: where the toolkit lacks them libclang
cannot parse it (a checklist line names the header) and its nvcc test is skipped, named. No CUDA kernel runs here
(no GPU).

The project is kept as it is at the pinned commit in tests/port_ext/torch_cluster/ (MIT; its LICENSE beside it), a
test corpus naming its source and licence; pytest does not collect it (tests/conftest.py collect_ignore_glob).
tests/test_port_real_ext.py ports a part of the same copy (the yaml's `part`: grid, graclus, version) into plain
libraries, the steps of docs/porting.md's walk-through.

Costs: see the yaml's notes (measured by hand)."""

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
from tests.test_port_spline_conv import _edit, _pytest_path, _run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "port_ext", "torch_cluster.yaml")
RUNTIMES = ("2.10.0", "2.13.0", "2.14.1", "2.15.0")


def _corpus() -> dict:
    with open(CORPUS, encoding="utf-8") as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The project ported by --fix (its checklist), the hand edits applied, built as one wheel and installed into a
    folder of its own (pip --target), put on a runtime's path by PYTHONPATH."""
    corpus = _corpus()
    src = tmp_path_factory.mktemp("cluster")
    shutil.copytree(os.path.join(HERE, "port_ext", corpus["copy"]), str(src), dirs_exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    # with a CUDA toolkit's headers, the CUDA build's code too (its .cu and .cuh files, the WITH_CUDA branches)
    cuda = bool(clang_scan._cuda_include())  # the folder the scan reads CUDA's headers from
    files = [*corpus["ported_cuda"], "-D", "WITH_CUDA"] if cuda else corpus["ported"]
    proc = _run([sys.executable, "-m", "shimgen", "port", *files, "--target", "2.10", "--fix",
                 "--toml", corpus["toml"]], cwd=src, env=env)
    checklist = [line[len("- [ ] "):] for line in proc.stdout.splitlines() if line.startswith("- [ ] ")]
    for edit in corpus["hand_edits"]:
        _edit(src, edit)
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w", str(dist), "."],
         cwd=src, env={**env, "FORCE_ONLY_CPU": "1", "MAX_JOBS": "2"})
    wheels = sorted(os.listdir(dist))
    site = tmp_path_factory.mktemp("site")
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
          *(str(dist / w) for w in wheels)])
    return corpus, src, checklist, wheels, site, cuda


def _lacking(corpus: dict, cuda: bool) -> dict[str, str]:
    """The CUDA files whose library header (cuRAND's: a package of its own) the CUDA include folder the scan reads
    lacks: libclang cannot parse them (a checklist line names the header), nor can nvcc compile them."""
    if not cuda:
        return {}
    folders = clang_scan._cuda_include()
    return {f: h for f, h in corpus["cuda_library_headers"].items()
            if not any(os.path.exists(os.path.join(d, h)) for d in folders)}


def test_checklist_and_hand_edits_are_the_recorded_ones(ported):
    corpus, _, checklist, _, _, cuda = ported
    lacking = [f"{os.path.basename(f)}: not rewritten (libclang: '{h}' file not found): the report lists its calls"
               for f, h in _lacking(corpus, cuda).items()]
    assert checklist == [" ".join(c.split()) for c in corpus["checklist"]] + lacking
    assert len(corpus["hand_edits"]) <= 5


def test_its_pyproject_keeps_its_build_system(ported):
    """`--toml pyproject.toml` into the project's own file: its [build-system] kept, [tool.shimgen] added."""
    import tomllib

    _, src, *_ = ported
    data = tomllib.loads((src / "pyproject.toml").read_text())
    assert data["build-system"]["build-backend"] == "setuptools.build_meta"
    assert data["tool"]["shimgen"]["target"] == "2.10" and "randperm" in data["tool"]["shimgen"]["ops"]


def test_knn_and_radius_write_their_strides_and_index(ported):
    """from_blob of {size, 2} with its strides written, and torch::tensor({1, 0}) as shimgen::tensor."""
    _, src, *_ = ported
    for name in ("knn_cpu.cpp", "radius_cpu.cpp"):
        text = (src / "csrc" / "cpu" / name).read_text()
        assert ("torch::stable::from_blob(out_vec.data(), {size, 2}, {2, 1}, x.device(), "
                "torch::headeronly::ScalarType::Long);") in text, name
        assert "torch::stable::index_select(torch::stable::t(out), 0, shimgen::tensor({1, 0}));" in text, name


def test_one_abi3_wheel(ported):
    _, _, _, wheels, site, _ = ported
    assert len(wheels) == 1 and "-abi3-" in wheels[0], wheels
    libs = sorted(f for f in os.listdir(site / "torch_cluster") if f.endswith(".so"))
    assert [f.split(".")[0] for f in libs] == ["_fps_cpu", "_graclus_cpu", "_grid_cpu", "_knn_cpu", "_nearest_cpu",
                                               "_radius_cpu", "_rw_cpu", "_sampler_cpu", "_version_cpu"], libs


@pytest.fixture(scope="module")
def generated(ported, tmp_path_factory):
    """The [tool.shimgen] headers the wheel's build generates, for nvcc."""
    from shimgen.setuptools import generate_into

    gen = tmp_path_factory.mktemp("gen")
    generate_into(str(gen), str(ported[1]))
    return gen


@pytest.mark.parametrize("source", _corpus()["cuda_sources"])
def test_cuda_sources_compile_with_nvcc(ported, generated, source, tmp_path):
    """A ported .cu file compiles with nvcc against the stable headers at target 2.10, with the flags torch's
    BuildExtension gives nvcc and the project's own (--expt-relaxed-constexpr)."""
    corpus, src, _, _, _, cuda = ported
    if not cuda or cuda_toolkit.find() is None:
        pytest.skip("no CUDA toolkit (shimgen.tools.cuda_toolkit): the CUDA files were not ported or not compiled")
    if source in _lacking(corpus, cuda):
        pytest.skip(f"{_lacking(corpus, cuda)[source]} is not in the CUDA toolkit's include folder "
                    f"({clang_scan._cuda_include()}): {source} was not ported")
    import torch.utils.cpp_extension as ce

    from shimgen.setuptools import stable_flags

    nvcc = os.path.join(cuda_toolkit.find(), "bin", "nvcc")
    obj = tmp_path / (os.path.basename(source) + ".o")
    _run([nvcc, "-c", "-std=c++17", "-DWITH_CUDA", "--expt-relaxed-constexpr", *ce.COMMON_NVCC_FLAGS,
          *stable_flags("2.10"), f"-I{generated}", f"-I{src / 'csrc'}", *(f"-I{p}" for p in ce.include_paths()),
          str(src / source), "-o", str(obj)])
    assert obj.stat().st_size > 0


def _scipy_path(folder) -> str | None:
    """Links to this interpreter's scipy (and the libraries its wheel bundles), for a runtime venv without it (the
    suite's knn and radius tests compare with scipy.spatial); None where this interpreter has none."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    folder.mkdir(exist_ok=True)
    for name in ("scipy", "scipy.libs"):
        if os.path.exists(os.path.join(site, name)) and not (folder / name).exists():
            (folder / name).symlink_to(os.path.join(site, name))
    return str(folder)


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
            if subprocess.run([rt.python, "-c", "import scipy"], capture_output=True).returncode:
                scipy = _scipy_path(work / "scipy")
                if scipy is None:
                    running[name] = f"no scipy for torch {name}'s venv (the suite's knn and radius tests import it)"
                    continue
                paths.append(scipy)
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
    failed = sorted(line.split()[1] for line in lines if line.startswith("FAILED "))
    # the original's one failure (scipy refuses float16), the same here; nothing else fails, nothing is skipped
    assert failed == sorted(corpus["failed"]) and code == (1 if failed else 0), output[-4000:]
    assert f"{corpus['passed']} passed" in last and f"{len(failed)} failed" in last and "skipped" not in last, last
