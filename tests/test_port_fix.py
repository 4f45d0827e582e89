"""`shimgen port --fix` on three ATen extension sources written for this test (tests/port_ext/: box_ops.cpp,
seq_ops.cpp and the CUDA-style row_ops.cu): the report's rows over them against a table checked by hand
(tests/port_ext/expected_rows.txt), the rewrite plus at most five hand edits per file (HAND_EDITS, counted), one
abi3 wheel at target 2.10 built from the ported files, and its ops equal to the ATen originals' on the CI
runtimes 2.10.0 and 2.14.1 (the originals built with torch.utils.cpp_extension against each runtime, once).

Costs (a 2-core machine shared with other jobs): the scan about 10 s (libclang; the precompiled preludes are cached
under ~/.cache/shimgen/port after the first run), the wheel about 1.5 minutes, each runtime's originals about a minute."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest
from tests.children import quick_exit

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")

HERE = os.path.dirname(os.path.abspath(__file__))
EXT = os.path.join(HERE, "port_ext")
SOURCES = ["box_ops.cpp", "seq_ops.cpp", "row_ops.cu"]
RUNTIMES = ["2.10.0", "2.14.1"]

# What the rewrite leaves to a person, made by hand (file -> [(text after --fix, replacement)]): the checklist's
# constructs. At most five per file.
HAND_EDITS = {
    "box_ops.cpp": [],  # boxes.device().index(): torch::stable::Device has index() from 2.10
    "seq_ops.cpp": [],
    "row_ops.cu": [
        ("const c10::cuda::CUDAGuard guard(x.device());",
         "const torch::stable::accelerator::DeviceGuard guard(x.get_device_index());"),
    ],  # the current stream: shimgen::cuda::current_stream() (torch/csrc/stable/shimgen/cuda.h), by --fix
}
CHECKLIST = {
    "row_ops.cu:61: CUDAGuard (c10::cuda::CUDAGuard) -> torch::stable::accelerator::DeviceGuard",
}


def runtimes_dir() -> str:
    return os.environ.get("SHIMGEN_RUNTIMES") or os.path.expanduser("~/.cache/shimgen/runtimes")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("portfix")
    csrc = tmp / "csrc"
    csrc.mkdir()
    for name in SOURCES:
        shutil.copy(os.path.join(EXT, name), csrc / name)
    files = [str(csrc / n) for n in SOURCES]
    proc = _run([sys.executable, "-m", "shimgen", "port", *files, "-D", "WITH_CUDA", "--target", "2.10,2.14",
                 "--json", str(tmp / "report.json"), "--toml", str(tmp / "ops.toml"), "--fix"], cwd=tmp)
    edited = {}
    for name in SOURCES:
        text = (csrc / name).read_text()
        assert len(HAND_EDITS[name]) <= 5
        for old, new in HAND_EDITS[name]:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        edited[name] = text
    return tmp, proc.stdout, json.loads((tmp / "report.json").read_text()), edited


def _row_line(r) -> str:
    return " | ".join([f"{os.path.basename(r['file'])}:{r['line']}", r["kind"], r["construct"],
                       ",".join(r["ops"]) or "-", r["replacement"], r["2.10"]["text"], r["2.14"]["text"]])


def test_rows_against_the_table_checked_by_hand(ported):
    _, _, data, _ = ported
    got = [_row_line(r) for r in data["rows"]]
    with open(os.path.join(EXT, "expected_rows.txt"), encoding="utf-8") as f:
        want = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    assert got == want


def test_the_hazard_and_the_types_resolved(ported):
    _, _, data, _ = ported
    rows = data["rows"]
    hazards = [r for r in rows if r["kind"] == "hazard"]
    # encode_boxes' four `out.select(1, k) = ...` and topk_gather's `gathered[b] = ...`
    assert [(os.path.basename(r["file"]), r["line"]) for r in hazards] == [
        ("box_ops.cpp", 109), ("box_ops.cpp", 110), ("box_ops.cpp", 111), ("box_ops.cpp", 112), ("seq_ops.cpp", 90)]
    # numel/dim/is_contiguous are torch::stable::Tensor members at 2.10, not "from 2.12"
    members = {r["construct"].split(".")[-1] for r in rows if r["kind"] == "member"}
    assert {"dim", "numel", "size", "scalar_type", "is_cuda", "sizes"} <= members
    assert all(r["2.10"]["text"] == "yes (member)" for r in rows if r["kind"] == "member")
    # operators name the aten op they call: sub and mul go into [tool.shimgen]
    assert {"sub", "mul", "add", "div", "neg", "gt", "add_", "copy_", "item"} <= set(data["ops"])


def test_checklist_names_what_needs_a_person(ported):
    _, out, _, _ = ported
    listed = {line[len("- [ ] "):].split(" (")[0] for line in out.splitlines() if line.startswith("- [ ] ")}
    want = {c.split(" (")[0] for c in CHECKLIST}
    assert {line.split(" -> ")[0] for line in listed} == {c.split(" -> ")[0] for c in want}
    assert sum(len(v) for v in HAND_EDITS.values()) == len(CHECKLIST)


def test_markdown_is_a_table(tmp_path):
    """A call written over several lines is one row of the table; --target refuses a release the data lacks."""
    src = tmp_path / "m.cpp"
    src.write_text("#include <ATen/ATen.h>\nat::Tensor f(const at::Tensor& a) {\n  return at::softmax(\n"
                   "      a,\n      1);\n}\n")
    proc = _run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.10"])
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| m.cpp:")]
    assert rows and all(line.count(" | ") + 2 == rows[0].count(" | ") + 2 for line in rows)
    bad = subprocess.run([sys.executable, "-m", "shimgen", "port", str(src), "--target", "2.8"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--target" in bad.stderr and "2.8" in bad.stderr


@pytest.fixture(scope="module")
def wheel(ported):
    tmp, _, _, edited = ported
    proj = tmp / "proj"
    (proj / "csrc").mkdir(parents=True)
    (proj / "ported_ext").mkdir()
    (proj / "ported_ext" / "__init__.py").write_text("")
    for name, text in edited.items():
        # the CPU build of the CUDA-style file compiles it as C++ (without WITH_CUDA), as its project would
        (proj / "csrc" / name.replace(".cu", ".cpp")).write_text(text)
    ops = (tmp / "ops.toml").read_text().split("\n")[1]
    (proj / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "ported-ext"\nversion = "0.1"\n[tool.setuptools]\npackages = ["ported_ext"]\n'
        f'[tool.shimgen]\n{ops}\ntarget = "2.10"\n')
    mods = ", ".join(f'StableExtension("ported_ext.{n.split(".")[0]}", ["csrc/{n.replace(".cu", ".cpp")}"])'
                     for n in SOURCES)
    (proj / "setup.py").write_text(
        "from setuptools import setup\nfrom shimgen.setuptools import BuildExtension, StableExtension\n"
        f"setup(ext_modules=[{mods}], cmdclass={{'build_ext': BuildExtension}},\n"
        "      options={'bdist_wheel': {'py_limited_api': 'cp39'}})\n")
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", "dist", "."], cwd=proj,
         env={**os.environ, "MAX_JOBS": "2"})
    wheels = glob.glob(str(proj / "dist" / "*.whl"))
    assert len(wheels) == 1 and wheels[0].endswith("-cp39-abi3-linux_x86_64.whl"), wheels
    return wheels[0]


def test_cuda_style_file_compiles_with_nvcc(ported, tmp_path):
    """The ported row_ops.cu with its CUDA kernels (WITH_CUDA) compiles with nvcc against the stable headers."""
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda-13.0/bin/nvcc" if os.path.exists("/usr/local/cuda-13.0/bin/nvcc")
                                    else None)
    if nvcc is None:
        pytest.skip("nvcc not found (needed to compile the CUDA-style source)")
    tmp, _, _, edited = ported
    import torch.utils.cpp_extension as ce

    from shimgen.setuptools import generate_into, stable_flags

    gen = tmp_path / "gen"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.shimgen]\n{(tmp / "ops.toml").read_text().splitlines()[1]}\ntarget = "2.10"\n')
    generate_into(str(gen), str(tmp_path))
    src = tmp_path / "row_ops.cu"
    src.write_text(edited["row_ops.cu"])
    # USE_CUDA: a CUDA build's macro, under which torch's C shim header declares the CUDA stream functions
    _run([nvcc, "-c", "-std=c++17", "-DWITH_CUDA", "-DUSE_CUDA", *stable_flags("2.10"), f"-I{gen}",
          *(f"-I{p}" for p in ce.include_paths()), str(src), "-o", str(tmp_path / "row_ops.o")])
    assert (tmp_path / "row_ops.o").stat().st_size > 0


_ORIGINALS = """
import sys, torch.utils.cpp_extension as ce
ce.load(name="aten_originals", sources=sys.argv[2:], build_directory=sys.argv[1], is_python_module=False)
"""

_COMPARE = """
import sys, torch
a, b = torch.load(sys.argv[1], weights_only=False), torch.load(sys.argv[2], weights_only=False)
assert len(a) == len(b), (len(a), len(b))
def same(x, y):
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)
    if isinstance(x, (list, tuple)):
        return isinstance(y, (list, tuple)) and len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    return x == y
bad = [(ra[0], ra[1], rb[1]) for ra, rb in zip(a, b) if ra[0] != rb[0] or ra[1] != rb[1] or not same(ra[2], rb[2])]
print(len(a), "cases", len(bad), "differ", bad)
sys.exit(1 if bad else 0)
"""


@pytest.mark.parametrize("version", RUNTIMES)
def test_wheel_equals_the_aten_originals(version, wheel, ported, tmp_path):
    python = os.path.join(runtimes_dir(), f"torch-{version}", "bin", "python")
    if not os.path.exists(python):
        if os.environ.get("CI"):
            pytest.fail(f"runtime torch-{version} missing under {runtimes_dir()}")
        pytest.skip(f"runtime torch-{version} not installed under {runtimes_dir()}")
    # the ATen originals, compiled as their projects compile them (row_ops.cu's CPU part: the file compiled as C++),
    # the three in one translation unit: each is in its own namespace and registers its own library, and
    # torch/extension.h, nearly all of each file's compile time, is parsed once (about 45 s of CPU instead of 140)
    orig = tmp_path / "orig"
    orig.mkdir()
    for name in SOURCES:
        shutil.copy(os.path.join(EXT, name), orig / name.replace(".cu", ".cpp"))
    unity = orig / "aten_originals.cpp"
    unity.write_text("".join(f'#include "{name.replace(".cu", ".cpp")}"\n' for name in SOURCES))
    build = tmp_path / "build"
    build.mkdir()
    _run([python, "-c", quick_exit(_ORIGINALS), str(build), str(unity)])
    aten = glob.glob(str(build / "aten_originals*.so"))
    assert len(aten) == 1, aten
    site = tmp_path / "site"
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), wheel])
    stable = sorted(glob.glob(str(site / "ported_ext" / "*.so")))
    assert len(stable) == 3, stable
    cases = os.path.join(EXT, "cases.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([python, cases, aten[0], str(tmp_path / "aten.pt")], env=env)
    _run([python, cases, *stable, str(tmp_path / "stable.pt")], env=env)
    out = _run([python, "-c", _COMPARE, str(tmp_path / "aten.pt"), str(tmp_path / "stable.pt")], env=env)
    assert " 0 differ" in out.stdout, out.stdout


def test_an_operator_whose_op_is_missing_names_it(tmp_path):
    """operators.h: `a * b` compiles where mul is generated; `a - b` without sub stops the build with a
    static_assert naming the op to add to [tool.shimgen] ops (not an unreadable lookup failure)."""
    import torch.utils.cpp_extension as ce

    from shimgen.setuptools import stable_flags

    _run([sys.executable, "-m", "shimgen", "--ops", "mul", "--out", str(tmp_path / "gen")])
    inc = [f"-I{tmp_path / 'gen'}", *(f"-I{p}" for p in ce.include_paths())]
    head = ("#include <torch/csrc/stable/ops.h>\n#include <torch/csrc/stable/shimgen/operators.h>\n"
            "using torch::stable::Tensor;\n")
    ok = tmp_path / "ok.cpp"
    ok.write_text(head + "Tensor f(const Tensor& a, const Tensor& b) { return a * b * 2.0; }\n")
    _run(["g++", "-std=c++17", "-fsyntax-only", *stable_flags("2.10"), *inc, str(ok)])
    bad = tmp_path / "bad.cpp"
    bad.write_text(head + "Tensor f(const Tensor& a, const Tensor& b) { return a - b; }\n")
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *stable_flags("2.10"), *inc, str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert 'this Tensor operator calls aten::sub: add "sub" to [tool.shimgen] ops' in proc.stderr
