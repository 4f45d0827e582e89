"""`shimgen port --fix --target 2.10` on a real third-party extension whose C++ autograd writes into an argument
(tests/port_ext/torch_scatter.yaml: rusty1s/pytorch_scatter, MIT): fifteen torch::autograd::Function classes with
`mark_dirty` of the optional `out` argument, `mark_non_differentiable` of the argmin/argmax output,
`save_for_backward` of tensors the forward computed (the broadcast index, the counts, the output) and `saved_data` of
ints and sizes; three torch::RegisterOperators registrations of five ops each and one of a lambda;
AT_DISPATCH_ALL_TYPES_AND2 around the project's own reducer dispatch macro; at::opmath_type, c10::List,
`t.to(x.options())`, a Tensor compared with a Half/BFloat16 scalar_t; and a pyproject.toml of its own that `--toml`
keeps. The checklist is the one recorded there, the recorded hand edits (4: the generated autograd module into the
package and its import, the build's two lines) make the project build as one abi3 wheel with its own setup.py, and
the project's own test suite (test/ and test/composite: gradcheck of every backward, TorchScript through the ops,
`out=` arguments written in place) passes from that wheel on the installed torch and on each runtime venv found
(2.10.0, 2.14.1, 2.15.0; skipped, named, where absent), as the original's ATen build does.

With a CUDA toolkit's headers (clang_scan's CUDA include folder) the whole csrc is ported with -D WITH_CUDA, CUDA
files too (the same checklist), and the three ported .cu files compile with nvcc against the stable headers. No
CUDA kernel runs here (no GPU).

The project is kept as it is at the pinned commit in tests/port_ext/torch_scatter/ (MIT; its LICENSE beside it), a
test corpus naming its source and licence; pytest does not collect it (tests/conftest.py collect_ignore_glob).

Costs (2 shared cores, libclang's prelude cached): the scan about 12 s (the 9 CPU files and folders) or 50-120 s (all
of csrc with -D WITH_CUDA, under load), the wheel about 35 s, nvcc about a minute a .cu file, the four runtimes'
suites (1418 tests each) 6-10 s each, run at once."""

from __future__ import annotations

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
CORPUS = os.path.join(HERE, "port_ext", "torch_scatter.yaml")
RUNTIMES = ("2.10.0", "2.13.0", "2.14.1", "2.15.0")


def _corpus() -> dict:
    with open(CORPUS, encoding="utf-8") as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The project ported by --fix (its checklist), the hand edits applied, built as one wheel and installed into a
    folder of its own (pip --target), put on a runtime's path by PYTHONPATH."""
    corpus = _corpus()
    src = tmp_path_factory.mktemp("scatter")
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


def test_checklist_and_hand_edits_are_the_recorded_ones(ported):
    corpus, _, checklist, *_ = ported
    assert checklist == [" ".join(c.split()) for c in corpus["checklist"]]
    assert len(corpus["hand_edits"]) <= 5


def test_its_pyproject_keeps_its_build_system(ported):
    """`--toml pyproject.toml` into the project's own file: its [build-system] kept, [tool.shimgen] added."""
    import tomllib

    _, src, *_ = ported
    data = tomllib.loads((src / "pyproject.toml").read_text())
    assert data["build-system"]["build-backend"] == "setuptools.build_meta"
    assert data["tool"]["shimgen"]["target"] == "2.10" and "gather" in data["tool"]["shimgen"]["ops"]


def test_the_ops_that_write_into_out_say_so(ported):
    """The kernels whose Function marks `optional_out` dirty: `Tensor(a!)?` in their schemas (ATen's
    RegisterOperators left them conservative: TorchScript keeps a call whose result is unused)."""
    _, src, *_ = ported
    text = (src / "csrc" / "scatter.cpp").read_text()
    assert ('m.def("scatter_max(Tensor src, Tensor index, int dim, Tensor(a!)? optional_out, int? dim_size) -> '
            '(Tensor, Tensor)");') in text
    assert "shimgen::autograd::def<ScatterMax>(m, \"torch_scatter::ScatterMax\");" in text


def test_one_abi3_wheel(ported):
    _, _, _, wheels, site, _ = ported
    assert len(wheels) == 1 and "-abi3-" in wheels[0], wheels
    libs = sorted(f for f in os.listdir(site / "torch_scatter") if f.endswith(".so"))
    assert [f.split(".")[0] for f in libs] == ["_scatter_cpu", "_segment_coo_cpu", "_segment_csr_cpu",
                                               "_version_cpu"], libs


def test_cuda_sources_compile_with_nvcc(ported, tmp_path):
    """The ported .cu files (their kernels over shimgen::cuda::TensorInfo/IndexToOffset/getTensorInfo, the project's
    atomics on Half and BFloat16, shimgen::cuda::current_stream) compile with nvcc against the stable headers at
    target 2.10, with the flags torch's BuildExtension gives nvcc (COMMON_NVCC_FLAGS: no __half operators)."""
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
        _run([nvcc, "-c", "-std=c++17", "-DWITH_CUDA", *ce.COMMON_NVCC_FLAGS, *stable_flags("2.10"), f"-I{gen}",
              f"-I{src / 'csrc'}", *(f"-I{p}" for p in ce.include_paths()), str(src / source), "-o", str(obj)])
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
    assert f"{corpus['skipped']} skipped" in last, last
