"""The generated C shim definitions compile against the installed torch and compute what eager PyTorch computes.

* An overlay library is built from shimgen's c_shim_aten.cpp for a handful of overloads libtorch 2.13 does not
  ship (add.Tensor first), and a stable-ABI-only extension (-DTORCH_STABLE_ONLY, tests/c_shim_ext/) calls those
  shims from kernels registered with STABLE_TORCH_LIBRARY. The extension compiles with `-I <generated dir>` in
  front of torch's include directory, so shimgen's c_shim_aten.h replaces torch's (torch/csrc/stable/ops.h
  includes it too), and with -DSHIMGEN_OVERLAY, the opt-in under which c_shim_aten.h includes the overlay's
  declarations (c_shim_aten_overlay.h). Python then compares each op with eager PyTorch.
* Without that opt-in no declaration of an overlay shim is visible: calling one is a compile error, not an
  extension that fails to load.
* The definitions of every overload shimgen can declare compile (syntax and template instantiation only).
* The version gates hide a 2.13 shim from an extension that targets 2.12.

Builds go to one module-scoped temporary folder. Set SHIMGEN_CXX to choose the compiler (default: g++).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
import torch

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c
from shimgen.generate import parse, plan
from shimgen.generate.signatures import stage as signatures
from shimgen.generate import table as table_mod
from shimgen.proofs.verify import build
from tests.cxx import TORCH
from tests.test_shipped_header import SHIMIFIED_2_13

HERE = os.path.dirname(os.path.abspath(__file__))
EXT_SOURCE = os.path.join(HERE, "c_shim_ext", "shimgen_ctest.cpp")
TORCH_LIB = TORCH.lib_dir
CXX = os.environ.get("SHIMGEN_CXX", "g++")

# Overlay ops: none of them is in libtorch 2.13 (checked below), each exercises a representation.
OVERLAY_OPS = [
    "add.Tensor",  # the op the issue names; Scalar as double
    "add.out",  # out= variant: out argument first, no ret pointers
    "cat.default",  # Tensor[] argument
    "index.Tensor",  # Tensor?[] argument
    "clamp.default",  # Scalar? arguments
    "sort.default",  # two returns
    "max.dim",  # two returns
    "topk.default",  # SymInt argument, two returns
    "unfold.default",  # method-only: at::_ops::unfold::call
    "new_ones.default",  # method-only SymInt op: at::symint::new_ones<c10::SymInt>; ScalarType?/Layout?/Device?/bool?
    "randn.generator",  # Generator? argument
    "result_type.Tensor",  # ScalarType return
]
# The shims libtorch 2.13 ships; the extension's header declares them too (torch/csrc/stable/ops.h needs them).
UPSTREAM_OPS = SHIMIFIED_2_13
ATEN_FLAGS = TORCH.aten_flags()  # C++20, per-operator headers, torch's include folders
LINK_TORCH = TORCH.link_flags()


def _write(root: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def _generate(root: str, ops: list[str]) -> str:
    return _write(root, emit_c.emit(resolve(plan.make(ops))))


def _run(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"compile failed: {' '.join(cmd)}\n{proc.stderr[-6000:]}")
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def compiler() -> str:
    if shutil.which(CXX) is None:
        pytest.fail(f"no C++ compiler {CXX!r} on PATH (set SHIMGEN_CXX); the C shim tests need one")
    return CXX


@pytest.fixture(scope="module")
def built(compiler: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = str(tmp_path_factory.mktemp("cshim"))
    overlay_dir = _generate(os.path.join(root, "overlay"), OVERLAY_OPS)
    header_dir = _generate(os.path.join(root, "headers"), OVERLAY_OPS + UPSTREAM_OPS)
    overlay = os.path.join(root, "libshimgen_overlay.so")
    ext_obj = os.path.join(root, "shimgen_ctest.o")
    ext = os.path.join(root, "shimgen_ctest.so")
    overlay_cmd, overlay_link = build.library(compiler, ["-I", overlay_dir, *ATEN_FLAGS],
                                              os.path.join(overlay_dir, emit_c.SOURCE), overlay, LINK_TORCH)
    ext_cmd = [
        compiler, "-O1", "-c", "-fPIC", *TORCH.stable_flags(header_dir, overlay=True),
        EXT_SOURCE, "-o", ext_obj,
    ]  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        t_overlay, t_ext = pool.map(_run, [overlay_cmd, ext_cmd])
    t_overlay += _run(overlay_link)
    t_link = _run([compiler, "-shared", ext_obj, "-o", ext, "-L", root, "-lshimgen_overlay", f"-Wl,-rpath,{root}",
                   *LINK_TORCH])  # fmt: skip
    print(f"\nbuilt overlay ({len(OVERLAY_OPS)} shims, ATen headers) in {t_overlay:.1f}s, "
          f"stable extension in {t_ext:.1f}s + link {t_link:.1f}s")  # fmt: skip
    return {"root": root, "overlay": overlay, "ext": ext, "headers": header_dir}


def _shim_name(op: str) -> str:
    name, _, overload = op.partition(".")
    return f"aoti_torch_aten_{name}" + ("" if overload == "default" else f"_{overload}")


def test_overlay_ops_are_not_in_libtorch() -> None:
    libtorch = ctypes.CDLL(os.path.join(TORCH_LIB, "libtorch_cpu.so"))
    assert hasattr(libtorch, "aoti_torch_aten_amax")  # the probe works
    for op in OVERLAY_OPS:
        assert not hasattr(libtorch, _shim_name(op)), f"{op}: libtorch ships it; keep it out of the overlay"


def test_overlay_exports_exactly_the_generated_shims(built: dict[str, str]) -> None:
    overlay = ctypes.CDLL(built["overlay"])
    for op in OVERLAY_OPS:
        assert hasattr(overlay, _shim_name(op)), op
    # the overlay defines no upstream shim, so it cannot interpose on libtorch's
    header = emit_c.read_declarations(os.path.join(built["root"], "overlay"))
    assert "aoti_torch_aten_amax(" not in header


@pytest.fixture(scope="module")
def ops(built: dict[str, str]):
    # The extension names the overlay as a dependency (DT_NEEDED + rpath), so the loader resolves its shim calls
    # there without making the overlay's symbols global to the whole test process.
    torch.ops.load_library(built["ext"])
    return torch.ops.shimgen_ctest


def test_add_tensor(ops) -> None:
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    assert torch.equal(ops.add(a, b, 2.5), torch.add(a, b, alpha=2.5))
    # broadcasting and type promotion happen in ATen, behind the shim
    i = torch.arange(4)
    assert torch.equal(ops.add(a, i, 1.0), torch.add(a, i))
    # alpha equal to its schema default (1) reaches aten as the integer default: integral tensors work
    # (libtorch's own subtract.Tensor shim passes the double and raises here)
    j = torch.arange(6).reshape(2, 3)
    assert torch.equal(ops.add(j, j, 1.0), j + j) and ops.add(j, j, 1.0).dtype == torch.int64
    assert torch.equal(ops.add(j.bool(), j.bool(), 1.0), j.bool() + j.bool())
    with pytest.raises(RuntimeError, match="aoti_torch_aten_add_Tensor"):
        ops.add(j, j, 2.0)  # any other double is a floating alpha, which aten rejects as for at::add(j, j, 2.0)


def test_shim_error_becomes_exception(ops) -> None:
    with pytest.raises(RuntimeError, match="aoti_torch_aten_add_Tensor"):
        ops.add(torch.randn(3, 4), torch.randn(5), 1.0)


def test_out_variant(ops) -> None:
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    out = torch.empty(2, 3)
    result = ops.add_out(a, b, out)
    assert torch.equal(out, a + b)
    assert result.data_ptr() == out.data_ptr()


def test_tensor_list_and_optional_tensor_list(ops) -> None:
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(ops.cat2(a, b, 0), torch.cat([a, b], 0))
    assert torch.equal(ops.cat2(a, b, 1), torch.cat([a, b], 1))
    x = torch.randn(4, 5)
    rows, cols = torch.tensor([3, 0]), torch.tensor([1, 4])
    assert torch.equal(ops.index2(x, rows, None), x[rows])
    assert torch.equal(ops.index2(x, None, cols), x[:, cols])
    assert torch.equal(ops.index2(x, rows, cols), x[rows, cols])


def test_optional_scalars(ops) -> None:
    x = torch.randn(10)
    assert torch.equal(ops.clamp(x, -0.5, 0.5), torch.clamp(x, -0.5, 0.5))
    assert torch.equal(ops.clamp(x, None, 0.25), torch.clamp(x, max=0.25))
    assert torch.equal(ops.clamp(x, -0.25, None), torch.clamp(x, min=-0.25))


def test_multi_returns(ops) -> None:
    x = torch.randn(4, 6)
    for got, want in [
        (ops.sort(x, 1, True), torch.sort(x, 1, True)),
        (ops.sort(x, 0, False), torch.sort(x, 0, False)),
        (ops.max_dim(x, 1, False), torch.max(x, 1, False)),
        (ops.max_dim(x, 0, True), torch.max(x, 0, True)),
        (ops.topk(x, 3, 1, True, True), torch.topk(x, 3, 1, True, True)),
        (ops.topk(x, 2, 0, False, True), torch.topk(x, 2, 0, False, True)),
    ]:
        assert len(got) == 2
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_method_only_ops(ops) -> None:
    x = torch.randn(3, 8)
    assert torch.equal(ops.unfold(x, 1, 3, 2), x.unfold(1, 3, 2))
    ones = ops.new_ones_f64(x, [2, 5])
    assert ones.dtype == torch.float64 and ones.device.type == "cpu"
    assert torch.equal(ones, x.new_ones(2, 5, dtype=torch.float64))


def test_generator_default(ops) -> None:
    torch.manual_seed(1234)
    got = ops.randn([3, 2])
    torch.manual_seed(1234)
    assert torch.equal(got, torch.randn(3, 2))


def test_scalar_type_return(ops) -> None:
    # the kernel returns the shim's int32 dtype code, which the dispatcher hands to Python as an int:
    # c10::ScalarType's enumerators (Long = 4, Float = 6, Double = 7)
    codes = {torch.int64: 4, torch.float32: 6, torch.float64: 7}
    for a, b in [
        (torch.ones(2), torch.ones(2, dtype=torch.int64)),
        (torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64)),
        (torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.float64)),
    ]:
        assert ops.result_type(a, b) == codes[torch.result_type(a, b)]


def test_upstream_shim_through_generated_header(ops) -> None:
    x = torch.randn(3, 5)
    assert torch.equal(ops.amax(x, 1), torch.amax(x, 1))


def test_every_declarable_definition_compiles(compiler: str, tmp_path: str) -> None:
    """All C shim definitions shimgen can write for torch 2.13 (about 2,450) go through the C++ front end."""
    native = parse.NativeYaml()
    names = sorted({n.split(".")[0] for n in native.all_op_names()})
    p = plan.make(names)  # bare names: overloads the table refuses are skipped with a note
    shims, refused = signatures.c_shims(p)
    assert len(shims) > 2000 and len(refused) > 100
    root = _write(str(tmp_path), emit_c.emit(resolve(p)))
    seconds = _run([compiler, "-fsyntax-only", "-I", root, *ATEN_FLAGS, os.path.join(root, emit_c.SOURCE)])
    print(f"\nfront end over {len(shims)} shim definitions: {seconds:.1f}s")


_GATE_PROBE = """
#include <torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h>
auto probe = &aoti_torch_aten_add_Tensor;
auto upstream = &aoti_torch_aten_amax;
"""


@pytest.mark.parametrize("target, visible", [("0x020d000000000000", True), ("0x020c000000000000", False)])
def test_version_gate(built: dict[str, str], compiler: str, tmp_path, target: str, visible: bool) -> None:
    """add.Tensor is tagged 2.13: an extension that targets 2.12 does not see its declaration (opted in to the
    overlay, whose shim it is)."""
    src = tmp_path / "probe.cpp"
    src.write_text(_GATE_PROBE)
    cmd = [compiler, "-fsyntax-only", *TORCH.stable_flags(built["headers"], overlay=True),
           f"-DTORCH_TARGET_VERSION={target}", str(src)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if visible:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode != 0
        assert "aoti_torch_aten_add_Tensor" in proc.stderr and "aoti_torch_aten_amax" not in proc.stderr



def test_overlay_shims_need_the_opt_in(compiler: str, tmp_path) -> None:
    """Stable means libtorch alone: a file including the committed generated/ ops.h without SHIMGEN_OVERLAY sees
    libtorch's C shims and none of the overlay's (c_shim_aten.h includes c_shim_aten_overlay.h only with it), so
    calling one is a compile error naming it, not an extension that fails to load; with the opt-in it compiles.
    Probed: every overlay shim, those a per-op header declares for its overlay-world bodies included (their
    declarations there are gated on SHIMGEN_OVERLAY too)."""
    out = os.path.join(os.path.dirname(HERE), "generated")
    with open(os.path.join(out, emit_c.OVERLAY_HEADER), encoding="utf-8") as f:
        overlay_shims = re.findall(r"AOTITorchError (aoti_torch_aten_\w+)\(", f.read())
    with open(os.path.join(out, emit_c.HEADER), encoding="utf-8") as f:
        libtorch_shims = re.findall(r"AOTITorchError (aoti_torch_aten_\w+)\(", f.read())
    probed = overlay_shims
    assert "aoti_torch_aten_add_Tensor" in probed and len(probed) >= 20, probed  # add.Tensor: the docs' example
    assert libtorch_shims and not set(libtorch_shims) & set(overlay_shims)
    source = "#include <torch/csrc/stable/ops.h>\n\n" + "".join(
        f"auto probe_{k} = &{s};\n" for k, s in enumerate([*probed, *libtorch_shims]))
    src = tmp_path / "probe.cpp"
    src.write_text(source)
    for overlay in (False, True):
        cmd = [compiler, "-fsyntax-only", *TORCH.stable_flags(out, overlay=overlay), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if overlay:
            assert proc.returncode == 0, proc.stderr[-4000:]
            continue
        assert proc.returncode != 0
        undeclared = set(re.findall(r"[‘'](aoti_torch_aten_\w+)[’'] was not declared", proc.stderr))
        assert undeclared == set(probed), proc.stderr[-4000:]  # each overlay shim, and no libtorch shim


def test_a_per_op_header_declares_its_overlay_shim_only_with_the_opt_in(compiler: str, tmp_path) -> None:
    """aten::_assert_async.msg has no libtorch route at 2.13 but the overlay's C shim, which its per-op header
    declares for its overlay-world body: behind SHIMGEN_OVERLAY too, so a file including that header alone
    without the opt-in cannot call the shim."""
    from shimgen.generate import pipeline  # noqa: PLC0415

    out = str(tmp_path / "gen")
    files, _ = pipeline.generate(["_assert_async"], None, None, out, only=True)
    pipeline.write(out, files)
    shim = "aoti_torch_aten__assert_async_msg"
    assert f"{shim}(" in files["torch/csrc/stable/ops/_assert_async.h"]
    src = tmp_path / "probe.cpp"
    src.write_text(f"#include <torch/csrc/stable/ops/_assert_async.h>\n\nauto probe = &{shim};\n")
    for overlay in (False, True):
        cmd = [compiler, "-fsyntax-only", *TORCH.stable_flags(out, overlay=overlay), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if overlay:
            assert proc.returncode == 0, proc.stderr[-4000:]
        else:
            assert f"{shim}’ was not declared" in proc.stderr or f"{shim}' was not declared" in proc.stderr, \
                proc.stderr[-4000:]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s"]))
