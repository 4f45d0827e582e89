"""`shimgen audit` against what happens: nine binaries built the ways extensions are built, each audited and each
loaded (RTLD_NOW, after `import torch`; then one of its ops called on CPU tensors) under torch 2.10.0, 2.13.0 (the
installed CPU wheel), 2.14.1 and 2.15.0. For every binary and runtime, the audit's verdict for that release is what
happened.

    example      examples/stable_ops's wheel (pip wheel; its CUDA kernels too where a toolkit is found)
    quickstart   examples/quickstart's wheel
    ported       tests/port_ext/seq_ops.cpp after `shimgen port --fix`, a StableExtension at target 2.10
    aten         the same seq_ops.cpp unported, a torch.utils.cpp_extension build: libtorch's C++ ABI
    target-2.14  a stable source built at TORCH_TARGET_VERSION 2.14 on torch 2.13's own headers (shimgen's refuse
                 a target newer than the headers with an #error)
    new-shim     a library at target 2.10 calling torch_has_storage, first exported by libtorch 2.14 (built
                 without the audit after linking, which would stop it)
    cuda         a .cu file (nvcc, StableExtension(cuda=True): the CUDA runtime linked statically, no libtorch_cuda)
                 calling aoti_torch_get_current_cuda_stream, which only libtorch_cuda.so exports
    cuda-linked  a C++ library calling the same function that links libtorch_cuda.so (a CUDA runtime's)
    abi3-python  an abi3 wheel whose module calls PyUnicode_AsUTF8, outside Python's limited API

What is predicted for a runtime: its release is in the binary's `loads_on`, and the libraries only some builds have
(`variant_libraries`: libtorch_cuda.so) are in that runtime's wheel. A binary with libtorch C++ symbols is promised
to load on the release it was built with (the installed one) and nothing elsewhere: there it loads exactly when
that torch still exports each of its C++ symbols (measured here with nm), which the test checks too. A refusal must
be the loader's (`undefined symbol`, `cannot open shared object file`). Without a CUDA toolkit, or without a
runtime that has libtorch_cuda.so, a cuda binary is left out (named in the skip); in CI (CI=true) a missing runtime,
toolkit or binary fails.

    python -m tests.test_audit_matrix        # builds everything and prints the table (docs/audit.md)
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass

import pytest

from shimgen.facts import releases
from shimgen.facts.versions import Version
from shimgen.generate import pipeline
from shimgen.proofs.verify import runtimes
from shimgen.tools import cuda_toolkit, link_audit
from tests import cxx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIMES = ("2.10.0", "2.13.0", "2.14.1", "2.15.0")
BUILT_WITH = Version.parse(cxx.TORCH.version.split("+")[0])
TIMEOUT = 1200


@dataclass(frozen=True)
class Binary:
    name: str
    audited: str  # the .so or the wheel named to `shimgen audit`
    target: str | None  # --target
    load: str  # the library torch.ops.load_library loads, or the folder holding `module`
    module: str | None  # imported (the folder first on sys.path) instead of load_library
    call: str  # a Python expression run after loading, true when the op computed what aten computes ("": none)
    build_error: str = ""  # the build's `error:` line where the audit after linking stopped it (then built without)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != link_audit.ENV}
    return {**env, "PYTHONPATH": ROOT + os.pathsep + env.get("PYTHONPATH", ""), **extra}


def _run(cmd: list[str], cwd, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=_env(**env))
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def _wheel(project: str, **env: str) -> str:
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", "dist", "."],
         project, **env)
    wheels = glob.glob(os.path.join(project, "dist", "*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _unpacked(wheel: str, dest: str) -> str:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest)
    return dest


def _copy(src: str, dest: str) -> str:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "*.so"))
    return dest


def _setup_project(folder: str, table: str, setup: str, files: dict[str, str]) -> str:
    os.makedirs(folder)
    files = {"pyproject.toml": table, "setup.py": setup, **files}
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(folder, rel)) or folder, exist_ok=True)
        with open(os.path.join(folder, rel), "w", encoding="utf-8") as f:
            f.write(text)
    return folder


def _inplace(folder: str, pattern: str, **env: str) -> str:
    _run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], folder, **env)
    found = glob.glob(os.path.join(folder, pattern))
    assert len(found) == 1, found
    return found[0]


STABLE_SETUP = ("from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
                "setup(ext_modules=[{ext}], cmdclass={{'build_ext': BuildExtension}},\n"
                "      options={{'bdist_wheel': {{'py_limited_api': 'cp39'}}}})\n")


def table(name: str, ops: str, target: str = "2.10", package: str | None = None) -> str:
    project = f'[project]\nname = "{name}"\nversion = "0.1"\n'
    if package:
        project += f'[tool.setuptools]\npackages = ["{package}"]\n'
    return f'{project}[tool.shimgen]\nops = {ops}\ntarget = "{target}"\n'


# ---- the binaries -------------------------------------------------------------------------------------------


def build_example(tmp: str) -> Binary:
    src = _copy(os.path.join(ROOT, "examples", "stable_ops"), os.path.join(tmp, "stable_ops"))
    wheel = _wheel(src)
    return Binary("example", wheel, "2.10", _unpacked(wheel, os.path.join(tmp, "example-site")), "stable_ops",
                  "torch.allclose(stable_ops.rms_norm_act(torch.ones(2, 4), torch.ones(4)), torch.ones(2, 4), "
                  "atol=1e-5)")


def build_quickstart(tmp: str) -> Binary:
    src = _copy(os.path.join(ROOT, "examples", "quickstart"), os.path.join(tmp, "quickstart"))
    wheel = _wheel(src)
    return Binary("quickstart", wheel, "2.10", _unpacked(wheel, os.path.join(tmp, "quickstart-site")), "quickstart",
                  "torch.equal(quickstart.scaled_relu(torch.tensor([-1.0, 2.0]), 3.0), torch.tensor([0.0, 6.0]))")


SEQ_CALL = ("torch.equal(torch.ops.seq_ops.segment_sum(torch.arange(6.0).reshape(3, 2), torch.tensor([0, 1, 3])), "
            "torch.tensor([[0.0, 1.0], [6.0, 8.0]]))")


def build_ported(tmp: str) -> Binary:
    folder = os.path.join(tmp, "ported")
    os.makedirs(folder)
    shutil.copy(os.path.join(ROOT, "tests", "port_ext", "seq_ops.cpp"), folder)
    _run([sys.executable, "-m", "shimgen", "port", "seq_ops.cpp", "--target", "2.10", "--toml", "ops.toml", "--fix"],
         folder)
    with open(os.path.join(folder, "ops.toml"), encoding="utf-8") as f:
        ops = next(line for line in f if line.startswith("ops = ")).split("=", 1)[1].strip()
    with open(os.path.join(folder, "pyproject.toml"), "w", encoding="utf-8") as f:
        f.write(table("ported-seq", ops))
    with open(os.path.join(folder, "setup.py"), "w", encoding="utf-8") as f:
        f.write(STABLE_SETUP.format(ext="StableExtension('seq_ops', ['seq_ops.cpp'])"))
    so = _inplace(folder, "seq_ops*.so")
    return Binary("ported", so, "2.10", so, None, SEQ_CALL)


def build_aten(tmp: str) -> Binary:
    folder = _setup_project(os.path.join(tmp, "aten"), '[project]\nname = "seq-aten"\nversion = "0.1"\n',
                            "from setuptools import setup\nfrom torch.utils import cpp_extension\n"
                            "setup(ext_modules=[cpp_extension.CppExtension('seq_ops_aten', ['seq_ops.cpp'])],\n"
                            "      cmdclass={'build_ext': cpp_extension.BuildExtension})\n", {})
    shutil.copy(os.path.join(ROOT, "tests", "port_ext", "seq_ops.cpp"), folder)
    so = _inplace(folder, "seq_ops_aten*.so")
    return Binary("aten", so, None, so, None, SEQ_CALL)


ROW_MAX = """#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

torch::stable::Tensor row_max(const torch::stable::Tensor& x) {{ return torch::stable::amax(x, -1, false); }}
{extra}
STABLE_TORCH_LIBRARY({ns}, m) {{
  m.def("row_max(Tensor x) -> Tensor");{defs}
}}

STABLE_TORCH_LIBRARY_IMPL({ns}, CompositeExplicitAutograd, m) {{
  m.impl("row_max", TORCH_BOX(&row_max));{impls}
}}
"""


def _torch_headers_only(tmp: str, name: str, source: str, target: str) -> str:
    """`source` built against the installed torch's own stable headers (no shimgen output) at `target`."""
    src = os.path.join(tmp, f"{name}.cpp")
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    out = os.path.join(tmp, f"lib{name}.so")
    cxx.build_so(src, out, None, [f"TORCH_TARGET_VERSION={releases.parse(target, 'target').hex}"])
    return out


def build_target_2_14(tmp: str) -> Binary:
    source = ROW_MAX.format(ns="target214", extra="", defs="", impls="")
    # shimgen's own headers refuse the build: the #error this binary goes around
    gen = os.path.join(tmp, "gen-amax")
    files, _ = pipeline.generate(["amax"], None, None, gen, only=True)
    pipeline.write(gen, files)
    refused = cxx.syntax_check(source, gen, releases.parse("2.14", "target").hex)
    if BUILT_WITH < Version(2, 14):
        assert refused.returncode != 0 and "is newer than the torch" in refused.stderr, refused.stderr[-2000:]
    so = _torch_headers_only(tmp, "target214", source, "2.14")
    return Binary("target-2.14", so, "2.14", so, None,
                  "torch.equal(torch.ops.target214.row_max(torch.eye(3)), torch.ones(3))")


HAS_STORAGE = """
// first exported by libtorch 2.14: declared here, as code copied from newer headers would
extern "C" AOTITorchError torch_has_storage(AtenTensorHandle tensor, bool* ret_has_storage);

bool has_storage(const torch::stable::Tensor& x) {
  bool has = false;
  TORCH_ERROR_CODE_CHECK(torch_has_storage(x.get(), &has));
  return has;
}
"""


def build_new_shim(tmp: str) -> Binary:
    so = _torch_headers_only(tmp, "newshim", ROW_MAX.format(
        ns="newshim", extra=HAS_STORAGE, defs='\n  m.def("has_storage(Tensor x) -> bool");',
        impls='\n  m.impl("has_storage", TORCH_BOX(&has_storage));'), "2.10")
    return Binary("new-shim", so, "2.10", so, None, "torch.ops.newshim.has_storage(torch.ones(2)) is True")


CUDA_SOURCE = """#include <cuda_runtime.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

// exported by libtorch_cuda.so only (a CUDA build of torch): called directly, as a port of getCurrentCUDAStream does
extern "C" AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

using torch::stable::Tensor;

__global__ void scale_kernel(float* x, float s, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] *= s;
}

Tensor scale(const Tensor& x, double s) {
  STD_TORCH_CHECK(x.scalar_type() == torch::headeronly::ScalarType::Float, "scale: float32 only");
  Tensor y = torch::stable::contiguous(torch::stable::empty_like(x));
  torch::stable::copy_(y, x);
  float* p = static_cast<float*>(y.data_ptr());
  const int64_t n = y.numel();
  if (y.is_cuda()) {
    void* stream = nullptr;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(y.get_device_index(), &stream));
    scale_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        p, static_cast<float>(s), n);
    STD_TORCH_CHECK(cudaGetLastError() == cudaSuccess, "scale: the kernel did not launch");
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] *= static_cast<float>(s);
  }
  return y;
}

STABLE_TORCH_LIBRARY(cuda_scale, m) { m.def("scale(Tensor x, float s) -> Tensor"); }
STABLE_TORCH_LIBRARY_IMPL(cuda_scale, CompositeExplicitAutograd, m) { m.impl("scale", TORCH_BOX(&scale)); }
"""


def build_cuda(tmp: str) -> Binary:
    folder = _setup_project(os.path.join(tmp, "cuda"), table("cuda-scale", '["contiguous", "empty_like", "copy_"]'),
                            STABLE_SETUP.format(ext="StableExtension('cuda_scale', ['scale.cu'], cuda=True)"),
                            {"scale.cu": CUDA_SOURCE})
    # one GPU architecture: what is audited is the host code, and nvcc's time grows with each (no compiler cache)
    stopped = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=folder,
                             capture_output=True, text=True, timeout=TIMEOUT,
                             env=_env(MAX_JOBS="2", TORCH_CUDA_ARCH_LIST="8.0"))
    errors = [line for line in stopped.stderr.splitlines() if line.startswith("error:")]
    assert stopped.returncode != 0 and len(errors) == 1, stopped.stderr[-3000:]
    so = _inplace(folder, "cuda_scale*.so", TORCH_CUDA_ARCH_LIST="8.0", **{link_audit.ENV: "0"})  # linked already
    return Binary("cuda", so, "2.10", so, None,
                  "torch.equal(torch.ops.cuda_scale.scale(torch.tensor([1.0, -2.0]), 3.0), torch.tensor([3.0, -6.0]))",
                  errors[0])


CUDA_LINKED = """#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

// exported by libtorch_cuda.so only, which this library links (as torch's CUDAExtension does)
extern "C" AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

torch::stable::Tensor stream_or_copy(const torch::stable::Tensor& x) {
  if (x.is_cuda()) {
    void* stream = nullptr;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream));
  }
  return torch::stable::clone(x);
}

STABLE_TORCH_LIBRARY(cuda_linked, m) { m.def("stream_or_copy(Tensor x) -> Tensor"); }
STABLE_TORCH_LIBRARY_IMPL(cuda_linked, CompositeExplicitAutograd, m) {
  m.impl("stream_or_copy", TORCH_BOX(&stream_or_copy));
}
"""


def cuda_library_runtime() -> runtimes.Runtime | None:
    """A runtime whose wheel has libtorch_cuda.so, to link against (the installed 2.13.0 is a CPU wheel)."""
    for name in reversed(RUNTIMES):
        rt = runtimes.find(name)
        if rt is not None and os.path.exists(os.path.join(rt.torch.root, "lib", "libtorch_cuda.so")):
            return rt
    return None


def build_cuda_linked(tmp: str) -> Binary:
    """A C++ library on the CUDA stream shim that links libtorch_cuda.so (a CUDA runtime's): needed by name."""
    src = os.path.join(tmp, "cuda_linked.cpp")
    with open(src, "w", encoding="utf-8") as f:
        f.write(CUDA_LINKED)
    out = os.path.join(tmp, "libcuda_linked.so")
    lib = os.path.join(cuda_library_runtime().torch.root, "lib")
    proc = cxx.library([*cxx.TORCH.stable_flags(None), f"-DTORCH_TARGET_VERSION={releases.parse('2.10', 't').hex}"],
                       src, out, [f"-L{lib}", "-Wl,--no-as-needed", "-ltorch_cuda", *cxx.TORCH.link_flags()])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Binary("cuda-linked", out, "2.10", out, None,
                  "torch.equal(torch.ops.cuda_linked.stream_or_copy(torch.tensor([1.0, 2.0])), "
                  "torch.tensor([1.0, 2.0]))")


PY_SOURCE = """#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <Python.h>

// Not in the limited API this abi3 wheel claims (Python.h hides it under Py_LIMITED_API): declared by hand.
extern "C" const char* PyUnicode_AsUTF8(PyObject* unicode);

torch::stable::Tensor positive(const torch::stable::Tensor& x) { return torch::stable::relu(x); }

STABLE_TORCH_LIBRARY(pyext, m) { m.def("positive(Tensor x) -> Tensor"); }
STABLE_TORCH_LIBRARY_IMPL(pyext, CompositeExplicitAutograd, m) { m.impl("positive", TORCH_BOX(&positive)); }

extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr, nullptr, nullptr, nullptr, nullptr};
  PyObject* m = PyModule_Create(&module);
  PyObject* name = PyUnicode_FromString("stable");
  if (m == nullptr || name == nullptr || PyModule_AddStringConstant(m, "name", PyUnicode_AsUTF8(name)) != 0) {
    return nullptr;
  }
  Py_DECREF(name);
  return m;
}
"""


def build_abi3_python(tmp: str) -> Binary:
    folder = _setup_project(os.path.join(tmp, "pyext"), table("pyext", '["relu"]', package="pyext"),
                            STABLE_SETUP.format(ext="StableExtension('pyext._C', ['pyext.cpp'])"),
                            {"pyext.cpp": PY_SOURCE, "pyext/__init__.py": "import torch\n\nfrom . import _C\n"})
    wheel = _wheel(folder)
    assert wheel.endswith("-cp39-abi3-linux_x86_64.whl"), wheel
    return Binary("abi3-python", wheel, "2.10", _unpacked(wheel, os.path.join(tmp, "pyext-site")), "pyext",
                  "pyext._C.name == 'stable' and torch.equal(torch.ops.pyext.positive(torch.tensor([-1.0, 2.0])), "
                  "torch.tensor([0.0, 2.0]))")


BUILDS = (build_example, build_quickstart, build_ported, build_aten, build_target_2_14, build_new_shim, build_cuda,
          build_cuda_linked, build_abi3_python)


def missing(build) -> str | None:
    """Why `build` cannot be made here (None: it can)."""
    if build is build_cuda and cuda_toolkit.find() is None:
        return "no CUDA toolkit (shimgen.tools.cuda_toolkit.find())"
    if build is build_cuda_linked and cuda_library_runtime() is None:
        return f"no runtime with libtorch_cuda.so among {', '.join(RUNTIMES)}"
    return None


def build_all(tmp: str) -> list[Binary]:
    return [build(tmp) for build in BUILDS if missing(build) is None]


def not_built() -> list[str]:
    return [f"{build.__name__}: {missing(build)}" for build in BUILDS if missing(build)]


# ---- audit and load ---------------------------------------------------------------------------------------------


def audit(b: Binary) -> dict:
    """The audit's JSON of a binary (a wheel's one shared object)."""
    proc = subprocess.run([sys.executable, "-m", "shimgen", "audit", b.audited, "--json",
                           *(["--target", b.target] if b.target else [])],
                          capture_output=True, text=True, env=_env(), cwd=os.path.dirname(b.audited))
    assert proc.returncode in (0, 1), proc.stderr
    found = json.loads(proc.stdout)["binaries"]
    assert len(found) == 1, [f["member"] for f in found]
    return found[0]


REFUSALS = ("undefined symbol", "cannot open shared object file")  # the loader's words for what the audit reads
RUNNER = r"""
import importlib, json, os, sys
import torch

results = []
for spec in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # each binary in a child of its own: op namespaces registered twice, or a crash, stay there
        os.close(read)
        out = {"name": spec["name"]}
        try:
            if spec["module"]:
                sys.path.insert(0, spec["load"])
                globals()[spec["module"]] = importlib.import_module(spec["module"])
            else:
                torch.ops.load_library(spec["load"])
            out["loaded"] = True
        except BaseException as e:  # torch.ops.load_library wraps the loader's message: keep both
            out["loaded"], out["error"] = False, f"{type(e).__name__}: {e} ({e.__cause__ or e.__context__})"
        if out["loaded"] and spec["call"]:
            try:
                out["called"] = bool(eval(spec["call"]))
            except BaseException as e:
                out["called"], out["error"] = False, f"{type(e).__name__}: {e}"
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    results.append(json.loads(data) if data else {"name": spec["name"], "loaded": False,
                                                  "error": f"the child ended with status {status}"})
print(json.dumps(results))
sys.stdout.flush()
os._exit(0)
"""


def load_all(rt: runtimes.Runtime, binaries: list[Binary]) -> dict[str, dict]:
    specs = [{"name": b.name, "load": b.load, "module": b.module, "call": b.call} for b in binaries]
    proc = subprocess.run([rt.python, "-c", RUNNER, json.dumps(specs)], capture_output=True, text=True,
                          timeout=TIMEOUT, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["name"]: r for r in json.loads(proc.stdout.splitlines()[-1])}


def cxx_exported(rt: runtimes.Runtime, report: dict) -> set[str]:
    """The C++ symbols this runtime's torch libraries define, of those the binary needs (by name) and libtorch's."""
    lib = os.path.join(rt.torch.root, "lib")
    names = {n for n in report["needed"] if os.path.exists(os.path.join(lib, n))} | {"libc10.so", "libtorch_cpu.so"}
    found: set[str] = set()
    for name in sorted(names):
        out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(lib, name)], capture_output=True, text=True,
                             check=True).stdout
        found |= {line.split()[-1].partition("@")[0] for line in out.splitlines() if line.strip()}
    return found


def needs_cuda_library(report: dict) -> bool:
    return any(not s["weak"] and "libtorch_cuda.so" in (s["libraries"] or []) for s in report["stable"])


def variant_libraries_present(report: dict, rt: runtimes.Runtime) -> bool:
    """The libraries only some builds of a release have (the audit's `variant_libraries`) are in this runtime's."""
    return all(os.path.exists(os.path.join(rt.torch.root, "lib", lib)) for lib in report["variant_libraries"])


def predicted(report: dict, rt: runtimes.Runtime) -> bool | None:
    """Whether the audit says the binary loads on this runtime; None where it promises nothing (libtorch's C++ ABI
    on a release other than the one the binary was built with)."""
    release = Version.parse(".".join(rt.name.split(".")[:2]))
    if report["cxx"]:  # "sure to load only on the torch it was built with"
        return True if release == BUILT_WITH else None
    return str(release) in report["loads_on"] and variant_libraries_present(report, rt)


def _runtime(name: str) -> runtimes.Runtime | None:
    rt = runtimes.find(name)
    if rt is None and os.environ.get("CI") == "true":
        pytest.fail(runtimes.missing_reason([name]))
    return rt


# ---- the tests ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> list[Binary]:
    if not_built() and os.environ.get("CI") == "true":
        pytest.fail(f"not built: {'; '.join(not_built())}")
    return build_all(str(tmp_path_factory.mktemp("matrix")))


@pytest.fixture(scope="module")
def reports(built) -> dict[str, dict]:
    return {b.name: audit(b) for b in built}


def test_the_verdicts(built, reports) -> None:
    """What the audit says of each binary, before anything is loaded."""
    newest = reports["quickstart"]["loads_on"][-1]
    for name in ("example", "quickstart", "ported", "abi3-python"):
        assert reports[name]["ok"] and reports[name]["verdict"] == f"loads on torch 2.10-{newest} (target 2.10)", \
            (name, reports[name]["verdict"])
    aten = reports["aten"]  # the plain cpp_extension build: its build release only, its C++ symbols named
    assert not aten["ok"] and aten["loads_on"] == [] and len(aten["cxx"]) > 5, aten["verdict"]
    assert aten["verdict"].startswith("sure to load only on the torch it was built with: "), aten["verdict"]
    assert "at::" in aten["verdict"]
    assert reports["new-shim"]["verdict"] == "needs torch >= 2.14 (target 2.10): torch_has_storage"
    assert reports["target-2.14"]["ok"] and reports["target-2.14"]["verdict"].endswith("(target 2.14)")
    python = {p["name"]: p["limited_api_since"] for p in reports["abi3-python"]["python"]}
    assert "PyUnicode_AsUTF8" in python and "PyModule_Create2" in python
    if reports["abi3-python"]["python_checked"]:
        assert python["PyUnicode_AsUTF8"] is None and python["PyModule_Create2"] == "3.2"
    for name in set(reports) - {"cuda", "cuda-linked"}:  # the example's CUDA kernels find the stream at run time
        assert reports[name]["variant_libraries"] == [], name
    if "cuda-linked" in reports:
        linked = reports["cuda-linked"]
        assert linked["ok"] and linked["variant_libraries"] == ["libtorch_cuda.so"], linked
        assert "; CUDA builds of torch only (libtorch_cuda.so)" in linked["verdict"], linked["verdict"]
    if "cuda" in reports:  # StableExtension(cuda=True) links no libtorch_cuda, and --as-needed drops libtorch.so
        cuda = reports["cuda"]
        assert needs_cuda_library(cuda) and not cuda["ok"] and cuda["loads_on"] == [], cuda
        assert cuda["verdict"] == ("loads on no torch: it calls aoti_torch_get_current_cuda_stream but links none of "
                                   "libtorch_cuda.so, libtorch.so (its DT_NEEDED), where the loader would find them")
        # and the audit after linking stopped its StableExtension build with that line
        error = next(b.build_error for b in built if b.name == "cuda")
        assert error.startswith("error: shimgen: build/") and cuda["verdict"] in error, error
    if not_built():
        pytest.skip(f"not built: {'; '.join(not_built())}")


@pytest.mark.parametrize("name", RUNTIMES)
def test_the_verdict_is_what_loading_does(built, reports, name: str) -> None:
    rt = _runtime(name)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    results = load_all(rt, built)
    wrong = []
    for b in built:
        want, got = predicted(reports[b.name], rt), results[b.name]
        if want is None:  # no promise: it loads exactly when this torch still exports each of its C++ symbols
            want = {c["name"] for c in reports[b.name]["cxx"]} <= cxx_exported(rt, reports[b.name])
        if got["loaded"] != want:
            wrong.append(f"{b.name}: audit {'loads' if want else 'fails'}, loading {got}")
        elif got["loaded"] and b.call and got.get("called") is not True:
            wrong.append(f"{b.name}: loaded, but its op did not compute what aten does: {got}")
        elif not got["loaded"] and not any(why in got.get("error", "") for why in REFUSALS):
            wrong.append(f"{b.name}: refused for another reason than a missing symbol or library: {got}")
    assert not wrong, "\n".join(wrong)
    if not_built():
        pytest.skip(f"not built: {'; '.join(not_built())}")


def main() -> int:
    """Build everything, audit it, load it under each runtime found: the table."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shimgen-audit-matrix-") as tmp:
        built = build_all(tmp)
        reports = {b.name: audit(b) for b in built}
        found = [rt for rt in map(runtimes.find, RUNTIMES) if rt is not None]
        loaded = {rt.name: load_all(rt, built) for rt in found}
        print("| binary | verdict | " + " | ".join(f"{rt.name}: audit / actual" for rt in found) + " |")
        print("|---|---|" + "---|" * len(found))
        for b in built:
            cells = []
            for rt in found:
                want, got = predicted(reports[b.name], rt), loaded[rt.name][b.name]
                actual = ("loads, op ok" if got.get("called") else "loads" if got["loaded"] else "refused")
                said = "not sure" if want is None else "loads" if want else "refused"
                mark = "" if want is None or want == got["loaded"] else " **MISMATCH**"
                cells.append(f"{said} / {actual}{mark}")
            print(f"| {b.name} | {reports[b.name]['verdict']} | " + " | ".join(cells) + " |")
        missing = [n for n in RUNTIMES if runtimes.find(n) is None]
        if missing:
            print(runtimes.missing_reason(missing))
        for line in not_built():
            print(f"not built: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
