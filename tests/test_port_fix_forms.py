"""`shimgen port --fix` on tests/port_forms/forms.cpp, an ATen source written for this test with every dispatch form
(AT_DISPATCH_FLOATING_TYPES[_AND_HALF|_AND|_AND2..4], REDUCED_FLOATING, ALL_TYPES[_AND..3|_AND_COMPLEX[_AND2]],
INTEGRAL_TYPES[_AND], FLOATING_AND_COMPLEX_TYPES[_AND1|_AND2], COMPLEX_TYPES, AT_DISPATCH_SWITCH with
AT_DISPATCH_CASE* written inline and in a macro's definition, INDEX_TYPES's index_t, a nested dispatch, AT_DISPATCH_V2)
and every registration form (TORCH_LIBRARY's m.def("name", &fn | fn | TORCH_FN(fn)) without a schema, with one,
with torch::dispatch(KEY, fn), an m.impl in the library's block with a key and without, TORCH_LIBRARY_FRAGMENT
with TORCH_LIBRARY_IMPL, TORCH_SELECTIVE_SCHEMA/NAME, torch::RegisterOperators().op; AT_PRIVATE_CASE_TYPE_USING_HINT
with a name of its own, a c10::optional parameter):

* the rewrite needs no hand edit (an empty checklist) and compiles against the stable headers at target 2.10;
* built as a stable-ABI library (libtorch alone) and loaded into the installed torch, each op gives, for each of
  twelve dtypes, the value the ATen original gives (built with torch.utils.cpp_extension), or fails where it fails
  with the same message (`"name" not implemented for 'Bool'`; ATen raises NotImplementedError, the stable
  dispatch's STD_TORCH_CHECK a RuntimeError whose message starts with the check's place, `operator(), forms.cpp:71,
  `: the type and that prefix are not compared).

Costs: the scan a few seconds (libclang, the prelude cached), the ATen original about a minute (torch's headers),
the stable library seconds (both through the test build cache)."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.children import quick_exit

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")
torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "port_forms", "forms.cpp")

_ORIGINAL = """
import sys, torch.utils.cpp_extension as ce
ce.load(name="forms_aten", sources=[sys.argv[2]], build_directory=sys.argv[1], is_python_module=False)
"""

# each op over each dtype: its value, or the first line of its error
_CASES = r"""
import json, re, sys, torch
torch.ops.load_library(sys.argv[1])
dtypes = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128]
ops = ["floating", "floating_and_half", "floating_and", "floating_and2", "floating_and3", "floating_and4",
       "reduced_floating", "all", "all_and", "all_and2", "all_and3", "all_and_complex", "all_and_complex_and2",
       "integral", "integral_and", "floating_and_complex", "floating_and_complex_and1", "floating_and_complex_and2",
       "complex", "switch_cases", "switch_defined_cases", "index", "v2"]
def run(f, *a):
    try:
        out = f(*a)
    except Exception as e:
        # STD_TORCH_CHECK's message starts with the place of the check: `operator(), forms.cpp:71, `
        return "error: " + re.sub(r"^[\w:]+\(\), \S+:\d+, ", "", str(e).strip().splitlines()[0])
    return [o.tolist() if isinstance(o, torch.Tensor) else o for o in out] if isinstance(out, tuple) else out
out = {}
for d in dtypes:
    x = torch.tensor([1, 0, 3]).to(d)
    for op in ops:
        out[f"{op} {d}"] = run(getattr(torch.ops.forms, op), x)
    out[f"nested {d}"] = run(torch.ops.forms.nested, x, torch.tensor([2, 5]).to(d))
    out[f"nested {d} int32"] = run(torch.ops.forms.nested, x, torch.tensor([2, 5], dtype=torch.int32))
    out[f"legacy one {d}"] = run(torch.ops.forms_legacy.one, x)
    out[f"legacy two {d}"] = run(torch.ops.forms_legacy.two, x, 7)
    out[f"selective {d}"] = run(torch.ops.forms.selective, x, None)
    out[f"selective {d} y"] = run(torch.ops.forms.selective, x, x)
out["pair"] = run(torch.ops.forms.pair, torch.tensor([1.0, 2.0]), 1.5, 2, True)
json.dump(out, open(sys.argv[2], "w"), indent=0, sort_keys=True)
"""


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forms")
    src = tmp / "forms.cpp"
    shutil.copy(SOURCE, src)
    proc = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp)
    return tmp, proc.stdout, src.read_text()


def test_no_hand_edit(ported):
    _, out, text = ported
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    assert not re.search(r"\bAT_DISPATCH_|(?<!STABLE_)TORCH_LIBRARY|RegisterOperators|TORCH_FN|at::", code)
    # the extra types last, as THO_DISPATCH_V2 takes them (ATen writes them first)
    assert ('THO_DISPATCH_V2(x.scalar_type(), "all_and2", AT_WRAP(([&] {\n    return code<scalar_t>(x);\n  })), '
            "AT_ALL_TYPES, torch::headeronly::ScalarType::Half, torch::headeronly::ScalarType::BFloat16)") in text
    # the schema written out from the C++ signature
    assert 'm.def("pair(Tensor x, float scale, int shift, bool twice) -> (Tensor, float)");' in text
    assert 'm.impl("pair", TORCH_BOX(&forms::pair));' in text
    # the kernels registered for a key in an IMPL block of that key
    cpu = text[text.index("STABLE_TORCH_LIBRARY_IMPL(forms, CPU, m) {"):]
    assert 'm.impl("integral_and", TORCH_BOX(&forms::integral_and));' in cpu[:cpu.index("}")]
    assert 'm.impl("floating_and_complex", TORCH_BOX(&forms::floating_and_complex));' in cpu[:cpu.index("}")]
    assert "std::optional<torch::stable::Tensor> y" in text and "TORCH_SELECTIVE" not in code


def test_a_lambda_kernel_and_a_noexcept_one(tmp_path):
    """A lambda kernel without captures becomes a function written before the library (its schema from its call
    operator); a noexcept kernel, which TORCH_BOX takes not, is a checklist line naming the op."""
    src = tmp_path / "k.cpp"
    src.write_text("#include <ATen/ATen.h>\n#include <torch/library.h>\n"
                   "int64_t version() noexcept { return 3; }\n"
                   "at::Tensor twice(const at::Tensor& x) { return x; }\n"
                   'TORCH_LIBRARY(k, m) {\n  m.def("version", &version);\n  m.def("twice", &twice);\n'
                   '  m.def("lam", [](int64_t a) -> int64_t { return a; });\n}\n')
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp_path).stdout
    listed = [line for line in out.splitlines() if line.startswith("- [ ] ")]
    assert len(listed) == 1 and "`version` is noexcept" in listed[0] and '"version"' in listed[0], out
    text = src.read_text()
    assert "static auto lam_kernel(int64_t a) -> int64_t { return a; }\n\nSTABLE_TORCH_LIBRARY(k, m) {" in text
    assert 'm.def("lam(int a) -> int");' in text and 'm.impl("lam", TORCH_BOX(&lam_kernel));' in text
    assert 'm.def("twice(Tensor x) -> Tensor");' in text and 'm.impl("twice", TORCH_BOX(&twice));' in text


def test_from_blob_an_optionals_options_and_what_has_no_stable_form(tmp_path):
    """Constructs met in rusty1s/pytorch_sparse's CPU code: ATen's from_blob over one dimension with x.options() or
    a dtype becomes the stable from_blob with the stride {1} and the device and dtype written out (more dimensions:
    a checklist line); a factory's `w.value().options()` (an optional's tensor) becomes its dtype and device as
    `x.options()` does; a TensorOptions object built by hand and a c10::Dict have no stable form and are checklist
    lines; at::parallel_for is torch::stable::parallel_for (its signature, from 2.10) and ATen/Parallel.h the
    stable ops.h, at::internal::GRAIN_SIZE its number; a std::unordered_set ATen's headers brought in gets its own
    include. Before, none of these was rewritten and from_blob, parallel_for, TensorOptions() and Dict were
    in neither the report nor the checklist (the port did not compile). The rewrite compiles against the stable
    headers at 2.10."""
    from shimgen.setuptools import stable_flags
    from tests.cxx import syntax_check

    src = tmp_path / "k.cpp"
    head = ("#include <torch/extension.h>\n#include <ATen/Parallel.h>\n#include <vector>\n"
            "at::Tensor f(at::Tensor x, std::optional<at::Tensor> w) {\n"
            "  std::vector<int64_t> v = {1, 2};\n"
            "  auto a = torch::empty({2}, w.value().options());\n"
            "  auto b = torch::from_blob(v.data(), {2}, x.options()).clone();\n"
            "  auto c = torch::from_blob(v.data(), {(int64_t)v.size()}, torch::kLong);\n"
            "  at::parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) { v[begin] = end; });\n"
            "  std::unordered_set<int64_t> s = {v[0]};\n"
            "  int64_t grain = at::internal::GRAIN_SIZE / 2;\n")
    tail = "  return a;\n}\n"
    src.write_text(head + tail)
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp_path).stdout
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]
    text = src.read_text()
    assert "torch::stable::empty({2}, w.value().scalar_type(), std::nullopt, w.value().device());" in text
    assert "torch::stable::clone(torch::stable::from_blob(v.data(), {2}, {1}, x.device(), x.scalar_type()));" in text
    assert text.count("#include <torch/csrc/stable/ops.h>") == 1 and "ATen/Parallel.h" not in text
    assert "#include <unordered_set>" in text  # ATen's headers brought it; the stable ones do not
    assert "  int64_t grain = int64_t{32768} / 2;" in text
    assert "  torch::stable::parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) { v[begin] = end; });" in text
    assert ("torch::stable::from_blob(v.data(), {(int64_t)v.size()}, {1}, "
            "torch::stable::Device(torch::headeronly::DeviceType::CPU), torch::headeronly::ScalarType::Long);") in text
    proc = syntax_check(text, None, target=None, defines=tuple(f[2:] for f in stable_flags("2.10")))
    assert proc.returncode == 0, proc.stderr[-3000:]

    src.write_text(head + "  auto d = torch::from_blob(v.data(), x.sizes(), x.options());\n"
                   "  auto o = torch::TensorOptions().dtype(torch::kLong);\n"
                   "  c10::Dict<int64_t, at::Tensor> e;\n" + tail)
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp_path).stdout
    listed = [line[len("- [ ] "):] for line in out.splitlines() if line.startswith("- [ ] ")]
    assert [line.split(" -> ")[0] for line in listed] == [
        "k.cpp:12: torch::from_blob", "k.cpp:12: x.options", "k.cpp:13: torch::TensorOptions().dtype",
        "k.cpp:13: TensorOptions (torch::TensorOptions)", "k.cpp:14: Dict (c10::Dict)"], listed


def test_from_blob_of_more_dimensions_and_torch_tensor(tmp_path):
    """Constructs met in rusty1s/pytorch_cluster's knn and radius: ATen's from_blob over two or three dimensions
    (a braced list of plain sizes) becomes the stable from_blob with the contiguous strides written from the sizes
    ({size, 2}: {2, 1}); torch::tensor of a braced list of integers (which libclang resolves to at::tensor, an int32
    one) becomes shimgen::tensor, a CPU int64 tensor (operators.h). Before, the first was a checklist line and the
    second in neither the report nor the checklist (the port did not compile). Sizes the strides would evaluate
    again (after the first) that are not a name, a number or a size(k) stay a checklist line. The rewrite compiles
    against the stable headers at 2.10."""
    import tomllib

    from shimgen.setuptools import stable_flags
    from tests.cxx import syntax_check

    src = tmp_path / "k.cpp"
    src.write_text("#include <torch/extension.h>\n#include <vector>\n"
                   "at::Tensor f(at::Tensor x, int64_t n) {\n"
                   "  std::vector<int64_t> v(6 * n);\n"
                   "  const int64_t size = v.size() / 2;\n"
                   "  auto a = torch::from_blob(v.data(), {size, 2}, x.options().dtype(torch::kLong));\n"
                   "  auto b = torch::from_blob(v.data(), {n + 1, x.size(1), 3}, torch::kLong);\n"
                   "  auto c = a.t().index_select(0, torch::tensor({1, 0}));\n"
                   "  return c + b.sum();\n}\n")
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix", "--toml",
                "pyproject.toml"], cwd=tmp_path).stdout
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]
    text = src.read_text()
    assert ("torch::stable::from_blob(v.data(), {size, 2}, {2, 1}, x.device(), "
            "torch::headeronly::ScalarType::Long);") in text
    assert ("torch::stable::from_blob(v.data(), {n + 1, x.size(1), 3}, {(x.size(1)) * 3, 3, 1}, "
            "torch::stable::Device(torch::headeronly::DeviceType::CPU), torch::headeronly::ScalarType::Long);") in text
    assert "torch::stable::index_select(torch::stable::t(a), 0, shimgen::tensor({1, 0}));" in text
    assert "#include <torch/csrc/stable/shimgen/operators.h>" in text
    ops = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["shimgen"]["ops"]
    assert "clone" in ops  # shimgen::tensor's copy
    from shimgen.generate import pipeline

    gen = str(tmp_path / "gen")  # the wrappers of the table's ops and shimgen's headers (operators.h)
    files, _ = pipeline.generate(ops, None, None, gen, only=True)
    pipeline.write(gen, files)
    proc = syntax_check(text, gen, target=None, defines=tuple(f[2:] for f in stable_flags("2.10")))
    assert proc.returncode == 0, proc.stderr[-3000:]

    src.write_text("#include <torch/extension.h>\n#include <vector>\n"
                   "at::Tensor f(at::Tensor x, std::vector<int64_t> v, int64_t n) {\n"
                   "  return torch::from_blob(v.data(), {2, n + 1}, torch::kLong);\n}\n")
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp_path).stdout
    listed = [line[len("- [ ] "):] for line in out.splitlines() if line.startswith("- [ ] ")]
    assert [line.split(" -> ")[0] for line in listed] == ["k.cpp:4: torch::from_blob"], listed


def test_a_crlf_file_keeps_its_line_endings(ported, tmp_path):
    """The same source with CRLF line endings: the same rewrite, each line ending CRLF (the breaks a rewrite keeps
    and those it adds)."""
    _, _, text = ported
    src = tmp_path / "forms.cpp"
    with open(SOURCE, encoding="utf-8") as f:
        src.write_bytes(f.read().replace("\n", "\r\n").encode())
    _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix"], cwd=tmp_path)
    data = src.read_bytes()
    assert b"\r\r" not in data and data.count(b"\n") == data.count(b"\r\n")
    assert data.decode().replace("\r\n", "\n").replace(str(tmp_path), "") == text


def test_compiles_at_2_10(ported):
    from shimgen.setuptools import stable_flags
    from tests.cxx import syntax_check

    _, _, text = ported
    proc = syntax_check(text, None, target=None, defines=tuple(f[2:] for f in stable_flags("2.10")))
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def values(ported):
    from shimgen.setuptools import stable_flags
    from tests.cxx import build_so

    tmp, _, _ = ported
    build = tmp / "aten"
    build.mkdir()
    orig = tmp / "forms_aten.cpp"
    shutil.copy(SOURCE, orig)
    _run([sys.executable, "-c", quick_exit(_ORIGINAL), str(build), str(orig)])
    aten = glob.glob(str(build / "forms_aten*.so"))
    assert len(aten) == 1, aten
    stable = str(tmp / "forms_stable.so")
    build_so(str(tmp / "forms.cpp"), stable, None, [f[2:] for f in stable_flags("2.10")])
    got = {}
    for name, lib in (("aten", aten[0]), ("stable", stable)):
        _run([sys.executable, "-c", quick_exit(_CASES), lib, str(tmp / f"{name}.json")])
        got[name] = json.loads((tmp / f"{name}.json").read_text())
    return got


def test_same_values_and_errors_as_aten(values):
    aten, stable = values["aten"], values["stable"]
    assert aten.keys() == stable.keys()
    differ = {k: (aten[k], stable[k]) for k in aten if aten[k] != stable[k]}
    assert not differ, list(differ.items())[:10]
    # the cases ran: most dispatch, some refuse their dtype by name
    errors = [k for k, v in aten.items() if isinstance(v, str) and v.startswith("error: ")]
    assert 50 < len(errors) < len(aten) - 100, len(errors)
    assert aten["floating torch.bool"] == "error: \"floating\" not implemented for 'Bool'"
    assert aten["all_and2 torch.bfloat16"] == 1000 * 2 + 4.0


def test_the_forms_pytorch_scatter_met(tmp_path):
    """Constructs met in rusty1s/pytorch_scatter's CPU code (tests/port_ext/torch_scatter.yaml): ATen's
    at::opmath_type<scalar_t> (ATen/OpMathType.h, which the stable build refuses to include) becomes
    shimgen::opmath_type (float for Half and BFloat16, as ATen's), a c10::List<int64_t> parameter (what
    saved_data's toIntList() gave) a std::vector, `t.to(x.options())` the stable to(t, x.device(), x.scalar_type()),
    and a Tensor compared with a Half or BFloat16 number (a kernel's scalar_t) takes it as a Scalar. Before, the
    first three compiled not and were in neither the report nor the checklist; the comparison compiled not. And
    `--toml pyproject.toml` into a project's own file keeps its other tables ([build-system]) and replaces its
    [tool.shimgen] table, where it used to overwrite the file."""
    import tomllib

    from shimgen.setuptools import stable_flags
    from tests.cxx import syntax_check

    src = tmp_path / "k.cpp"
    src.write_text("#include <torch/extension.h>\n#include <ATen/OpMathType.h>\n#include <vector>\n"
                   "inline std::vector<int64_t> list2vec(const c10::List<int64_t> list) {\n"
                   "  std::vector<int64_t> result;\n"
                   "  for (size_t i = 0; i < list.size(); i++)\n    result.push_back(list[i]);\n"
                   "  return result;\n}\n"
                   "at::Tensor f(at::Tensor x, at::Tensor y) {\n"
                   "  AT_DISPATCH_ALL_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(), "
                   "\"f\", [&] {\n"
                   "    using opmath_t = at::opmath_type<scalar_t>;\n"
                   "    opmath_t zero = static_cast<opmath_t>(scalar_t(0));\n"
                   "    x.masked_fill_(x == (scalar_t)zero, (scalar_t)1);\n"
                   "  });\n"
                   "  return (y - x).to(x.options());\n}\n")
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools", "torch"]\n\n'
                                             '[tool.shimgen]\nops = ["old"]\ntarget = "2.9"\n\n'
                                             '[tool.shimgen.extra]\nx = 1\n\n[tool.other]\ny = 2\n')
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix", "--toml",
                "pyproject.toml"], cwd=tmp_path).stdout
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]
    text = src.read_text()
    assert "using opmath_t = shimgen::opmath_type<scalar_t>;" in text and "ATen/OpMathType.h" not in text
    assert "#include <torch/csrc/stable/shimgen/operators.h>" in text
    assert "list2vec(const std::vector<int64_t> list)" in text
    assert "return torch::stable::to((y - x), x.device(), x.scalar_type());" in text
    data = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert data["build-system"] == {"requires": ["setuptools", "torch"]} and data["tool"]["other"] == {"y": 2}
    assert data["tool"]["shimgen"] == {"ops": sorted(data["tool"]["shimgen"]["ops"]), "target": "2.10"}
    assert "to" in data["tool"]["shimgen"]["ops"] and "old" not in data["tool"]["shimgen"]["ops"]
    from shimgen.generate import pipeline

    gen = str(tmp_path / "gen")  # the wrappers of the table's ops and shimgen's headers (operators.h)
    files, _ = pipeline.generate(data["tool"]["shimgen"]["ops"], None, None, gen, only=True)
    pipeline.write(gen, files)
    defines = tuple(f[2:] for f in stable_flags("2.10"))
    proc = syntax_check(text, gen, target=None, defines=defines)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the numbers ATen computes a scalar_t in (shimgen::opmath_type), checked by the compiler
    check = ("#include <torch/csrc/stable/shimgen/operators.h>\n#include <type_traits>\n"
             "static_assert(std::is_same_v<shimgen::opmath_type<c10::Half>, float>);\n"
             "static_assert(std::is_same_v<shimgen::opmath_type<c10::BFloat16>, float>);\n"
             "static_assert(std::is_same_v<shimgen::opmath_type<double>, double>);\n"
             "static_assert(std::is_same_v<shimgen::opmath_type<int64_t>, int64_t>);\n")
    proc = syntax_check(check, gen, target=None, defines=defines)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_kernel_file_over_atens_tensor_info(tmp_path):
    """A CUDA file as rusty1s/pytorch_scatter's: ATen's at::cuda::detail::TensorInfo, IndexToOffset and
    getTensorInfo<T, I>(t) (ATen/cuda/detail/TensorInfo.cuh, IndexUtils.cuh) become shimgen::cuda's stand-ins (its
    template arguments kept), `t.cpu()` the stable to(t, CPU device), and the device functions its atomics and warp
    reductions call (atomicCAS, atomicAdd, __shfl_down_sync, __half, max) no longer stop libclang ("too many
    errors": the file was not rewritten before). With a CUDA toolkit, the rewrite compiles with nvcc."""
    if not clang_scan_cuda():
        pytest.skip("no CUDA toolkit's headers for libclang (clang_scan._cuda_include)")
    src = tmp_path / "k.cu"
    src.write_text("#include <torch/extension.h>\n#include <ATen/cuda/detail/IndexUtils.cuh>\n"
                   "#include <ATen/cuda/detail/TensorInfo.cuh>\n"
                   "__device__ void cas(unsigned int* a, float v) {\n"
                   "  unsigned int old = *a;\n"
                   "  atomicCAS(a, old, (unsigned int)__float_as_int(max(v, __int_as_float(old))));\n}\n"
                   "__device__ float down(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"
                   "__global__ void k(const at::cuda::detail::TensorInfo<int64_t, int> info, int64_t* out, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) {\n"
                   "    int offset = at::cuda::detail::IndexToOffset<int64_t, int, -1>::get(i, info);\n"
                   "    atomicAdd((unsigned long long*)out, (unsigned long long)info.data[offset]);\n  }\n}\n"
                   "int64_t f(at::Tensor index, at::Tensor out) {\n"
                   "  auto info = at::cuda::detail::getTensorInfo<int64_t, int>(index);\n"
                   "  k<<<1, 32>>>(info, out.data_ptr<int64_t>(), (int)index.numel());\n"
                   "  return index.max().cpu().data_ptr<int64_t>()[0];\n}\n")
    out = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10", "--fix", "-D", "WITH_CUDA",
                "--toml", "ops.toml"], cwd=tmp_path).stdout
    assert "## Checklist: 0 constructs need a person" in out, out[-3000:]
    text = src.read_text()
    assert "ATen/cuda/detail" not in text and "#include <torch/csrc/stable/shimgen/cuda.h>" in text
    assert "__global__ void k(const shimgen::cuda::TensorInfo<int64_t, int> info," in text
    assert "int offset = shimgen::cuda::IndexToOffset<int64_t, int, -1>::get(i, info);" in text
    assert "auto info = shimgen::cuda::getTensorInfo<int64_t, int>(index);" in text
    assert ("torch::stable::to(torch::stable::max(index), "
            "torch::stable::Device(torch::headeronly::DeviceType::CPU)).mutable_data_ptr<int64_t>()[0]") in text
    from shimgen.tools import cuda_toolkit

    if cuda_toolkit.find() is None:
        return
    import torch.utils.cpp_extension as ce

    from shimgen.setuptools import generate_into, stable_flags

    (tmp_path / "pyproject.toml").write_text((tmp_path / "ops.toml").read_text())
    gen = tmp_path / "gen"
    generate_into(str(gen), str(tmp_path))
    _run([os.path.join(cuda_toolkit.find(), "bin", "nvcc"), "-c", "-std=c++17", *ce.COMMON_NVCC_FLAGS,
          *stable_flags("2.10"), f"-I{gen}", *(f"-I{p}" for p in ce.include_paths()), str(src), "-o",
          str(tmp_path / "k.o")])


def clang_scan_cuda() -> bool:
    from shimgen.tools.porting import clang_scan

    return bool(clang_scan._cuda_include())
