"""Release history (shimgen/data/history.json) and what is computed from it: version tags, hidden ops, ops removed
later, narrower older forms, dispatcher stack layouts, `_vN` C shims, and the drift check.

The history is package data built from the release yaml files by `python -m shimgen.dev history`; the first test
proves the committed file is exactly what that command makes of the release yaml files, read from their
compressed copies in tests/fixtures/releases (cut by tests/fixtures/make_release_yamls.py), so it runs from a
fresh clone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from shimgen.generate.signatures.stage import resolve
from shimgen.facts import drift, history
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp
from shimgen.generate import pipeline, plan as plan_mod, routes
from shimgen.generate.signatures import c as sig_c, cpp as sig_cpp
from shimgen.generate.parse import NativeYaml
from shimgen.facts.versions import Version
from tests.children import quick_exit
from tests.cxx import CXX, TORCH, build_so, syntax_check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DRIFT = os.path.join(HERE, "fixtures", "drift")
V = Version.parse


def test_committed_history_is_what_the_command_builds(tmp_path) -> None:
    """Through the command itself, on the committed copies of the seven release yaml files."""
    from tests.fixtures import make_release_yamls as fixture

    released = fixture.releases()
    assert len(released) >= 7, released  # 2.9.0 ... 2.15.0
    for r in released:
        (tmp_path / r).mkdir()
        (tmp_path / r / "native_functions.yaml").write_text(fixture.read(r, "native_functions.yaml"), encoding="utf-8")
    out = tmp_path / "history.json"
    assert history.main([str(tmp_path), "--out", str(out)]) == 0
    with open(history.data_path(), encoding="utf-8") as f:
        assert f.read() == out.read_text(encoding="utf-8"), (
            "run `python -m shimgen.dev history DIR` on the release yaml files and commit the result")


def test_history_command_adds_one_release(tmp_path) -> None:
    """Adding a release later is one command: --add merges it into the existing data."""
    out = tmp_path / "history.json"
    older = {V("2.12"): history.schemas_of(open(os.path.join(DRIFT, "2.12.0", "native_functions.yaml")).read())}
    out.write_text(history.dumps(history.build(older)))
    newer = os.path.join(DRIFT, "2.13.0", "native_functions.yaml")
    assert history.main(["--add", "2.13", newer, "--out", str(out)]) == 0
    h = history.loads(out.read_text())
    assert h.releases == (V("2.12"), V("2.13"))
    assert h.schema_text("sort.dimname", V("2.12")) is not None
    assert h.schema_text("sort.dimname", V("2.13")) is None  # removed in 2.13
    assert h.schema_text("add.Tensor", V("2.13")) == h.schema_text("add.Tensor", V("2.12"))


def test_history_facts() -> None:
    h = history.load()
    assert h.releases == tuple(V(f"2.{m}") for m in range(9, 16))
    assert h.changes["numel.default"][0][0] == V("2.12")
    assert [r for r, _ in h.changes["cholesky.default"]] == [V("2.9"), V("2.14")]
    assert h.schema_text("cholesky.default", V("2.14")) is None
    flash = h.changes["_flash_attention_forward.default"]
    assert [r for r, _ in flash] == [V("2.9"), V("2.12")]
    assert "num_splits" in flash[1][1] and "num_splits" not in flash[0][1]


# ---- tags computed from the history, over the whole 2.13 yaml ----------------------------------------------


@pytest.fixture(scope="module")
def whole():
    p = plan_mod.make(sorted(NativeYaml().by_name))
    ws, _ = sig_cpp.wrappers(p)
    return p, ws


def test_no_wrapper_is_older_than_its_op(whole) -> None:
    """34 overloads of the 2.13 yaml are newer than 2.9: each wrapper starts no earlier than its op's release."""
    p, ws = whole
    h = p.history
    late = {op: pts[0][0] for op, pts in h.changes.items() if pts[0][0] > V("2.9")}
    in_yaml = {op.name for op in p.ops}
    assert len(late.keys() & in_yaml) == 34
    for w in ws:
        first = h.changes[w.op.name][0][0]
        assert w.since >= first, (w.op.name, w.since, first)
        if w.op.name in late:
            assert w.variants[0].start >= late[w.op.name]


def test_removed_ops_end_where_aten_removed_them(whole) -> None:
    p, ws = whole
    ended = {w.op.name: w.variants[-1].end for w in ws if w.variants[-1].end is not None}
    assert ended == {"cholesky.default": V("2.14"), "cholesky.out": V("2.14"), "qr.default": V("2.14"),
                     "qr.Q": V("2.14")}
    cholesky = next(w for w in ws if w.op.name == "cholesky.default")
    assert sig_cpp.gone(cholesky, p) == (V("2.14"), "removed")


def _gen(tmp_path, ops: str, *extra: str) -> str:
    out = str(tmp_path / "out")
    files, _ = pipeline.generate(ops.split(","), None, None, out)
    pipeline.write(out, files)
    return out


@pytest.fixture(scope="module")
def drifted(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("drifted") / "out")
    files, _ = pipeline.generate(["numel", "dim", "is_contiguous", "cholesky", "add.Tensor"], None, None, out)
    pipeline.write(out, files)
    return out


@pytest.mark.parametrize("target,visible", [
    ("0x020a000000000000", False), ("0x020b000000000000", False), ("0x020c000000000000", True),
    (None, True),
])
def test_ops_new_in_2_12_are_hidden_before(drifted: str, target: str | None, visible: bool) -> None:
    source = ("#include <torch/csrc/stable/ops.h>\n"
              "int64_t f(const torch::stable::Tensor& t) {\n"
              "  return torch::stable::numel(t) + torch::stable::dim(t) + torch::stable::is_contiguous(t);\n}\n")
    res = syntax_check(source, drifted, target)
    assert (res.returncode == 0) == visible, res.stderr[-2000:]
    if not visible:
        assert "numel" in res.stderr and "dim" in res.stderr and "is_contiguous" in res.stderr


@pytest.mark.parametrize("target,visible", [("0x020d000000000000", True), ("0x020e000000000000", False)])
def test_removed_op_hidden_from_its_removal(drifted: str, target: str, visible: bool) -> None:
    source = ("#include <torch/csrc/stable/ops.h>\n"
              "torch::stable::Tensor f(const torch::stable::Tensor& t) { return torch::stable::cholesky(t); }\n")
    res = syntax_check(source, drifted, target)
    assert (res.returncode == 0) == visible
    if not visible:
        assert "cholesky" in res.stderr, res.stderr[-2000:]
    text = open(os.path.join(drifted, emit_cpp.op_header("cholesky"))).read()
    assert "Removed in PyTorch 2.14: an extension using it fails on libtorch >= 2.14." in text


def test_a_target_newer_than_the_headers_is_one_error_naming_both(drifted: str) -> None:
    """TORCH_TARGET_VERSION 2.14 against the installed 2.13 headers: the prelude's #error names both releases (the
    build would otherwise claim a release its headers cannot declare); the headers' own release compiles."""
    source = "#include <torch/csrc/stable/ops.h>\nint f() { return 0; }\n"
    res = syntax_check(source, drifted, "0x020e000000000000")
    assert res.returncode != 0
    errors = [line for line in res.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "shimgen: TORCH_TARGET_VERSION 2.14 is newer than the torch 2.13 headers" in \
        errors[0], res.stderr[-2000:]
    assert syntax_check(source, drifted, "0x020d000000000000").returncode == 0


def test_removed_op_generation_note(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "cholesky.default", "--out", str(tmp_path / "g")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "cholesky.default: removed in 2.14: an extension using it fails on libtorch >= 2.14" in proc.stderr


def test_python_stub_refuses_a_removed_op(drifted: str) -> None:
    sys.path.insert(0, os.path.join(drifted, "python"))
    try:
        import torch_stable_ops as ops  # noqa: PLC0415

        assert "Removed in PyTorch 2.14" in ops.cholesky.__doc__
        ops._RUNNING = (2, 14)
        with pytest.raises(RuntimeError, match=r"cholesky.default, which was removed in PyTorch 2.14"):
            ops.cholesky(__import__("torch").eye(2))
    finally:
        sys.path.remove(os.path.join(drifted, "python"))
        sys.modules.pop("torch_stable_ops", None)


# ---- narrower forms and the dispatcher's stack --------------------------------------------------------------


def test_flash_attention_forms_and_stack() -> None:
    """2.9-2.11 take the 15 arguments those releases have; 2.12+ all 17. Every form pushes 17 slots: each
    release's dispatcher reads as many as its own schema has, so a 2.10 extension on libtorch 2.12+ must leave
    the two new arguments' defaults where the newer dispatcher reads them (an older one ignores them)."""
    p = plan_mod.make(["_flash_attention_forward.default"])
    (w,), _ = sig_cpp.wrappers(p)
    assert [(v.start, v.end, v.kept, len(v.stack), v.route.name) for v in w.variants] == [
        (V("2.9"), V("2.12"), 15, 17, "dispatcher"), (V("2.12"), None, 17, 17, "dispatcher")]
    text = emit_cpp.wrapper_texts(emit_cpp.emit(resolve(p)))
    old_form = text[: text.index("#endif // TORCH_FEATURE_VERSION < TORCH_VERSION_2_12_0")]
    call = next(line for line in old_form.splitlines() if "shimgen::detail::call_dispatcher<" in line)
    assert "call_dispatcher<17>(" in call  # 17 slots (shimgen/dispatch.h converts each value with from())
    assert call.count("std::nullopt") == 2  # the two arguments 2.12 added, pushed as their defaults
    assert "const std::optional<torch::stable::Tensor>& block_table" not in old_form


STACK_EXT = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;

// The 2.9-2.11 form (15 arguments) when built for 2.10; the full form otherwise.
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> flash(Tensor q, Tensor k, Tensor v) {
  return torch::stable::_flash_attention_forward(q, k, v, std::nullopt, std::nullopt, 4, 4, 0.0, false, false);
}

STABLE_TORCH_LIBRARY(shimgen_stack, m) {
  m.def("flash(Tensor q, Tensor k, Tensor v) -> (Tensor, Tensor, Tensor, Tensor, Tensor)");
}
STABLE_TORCH_LIBRARY_IMPL(shimgen_stack, CompositeExplicitAutograd, m) { m.impl("flash", TORCH_BOX(&flash)); }
"""

# Meta tensors: the op has a Meta kernel (it is CUDA-only otherwise), which reads every argument of the stack.
RUN_STACK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
q = torch.randn(1, 4, 2, 8, device="meta")
want = torch.ops.aten._flash_attention_forward(q, q, q, None, None, 4, 4, 0.0, False, False)
got = torch.ops.shimgen_stack.flash(q, q, q)
print([(tuple(t.shape), t.dtype) for t in want] == [(tuple(t.shape), t.dtype) for t in got])
"""


@pytest.mark.parametrize("target", ["0x020a000000000000", None])
def test_flash_attention_call_reaches_aten_on_this_runtime(tmp_path, target: str | None) -> None:
    """Built for 2.10 (15-argument form) or for the installed release, and run on the installed libtorch (2.13,
    whose schema has 17 arguments): the dispatcher gets a well-formed stack and returns what aten returns."""
    files, _ = pipeline.generate(["_flash_attention_forward.default"], None, None, str(tmp_path / "gen"))
    pipeline.write(str(tmp_path / "gen"), files)
    src = tmp_path / "ext.cpp"
    src.write_text(STACK_EXT)
    lib = str(tmp_path / "ext.so")
    build_so(str(src), lib, str(tmp_path / "gen"), [f"TORCH_TARGET_VERSION={target}"] if target else [])
    proc = subprocess.run([sys.executable, "-c", quick_exit(RUN_STACK), lib], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stdout + proc.stderr[-2000:]


# ---- `_vN` C shims ---------------------------------------------------------------------------------------------


def _wheel_decls(header: str, device: str) -> dict[str, tuple[str | None, str]]:
    """name -> (gate macro or None, declaration with the device prefix replaced by `aten`) in a wheel header."""
    text = open(os.path.join(TORCH.include_dirs[0], "torch", "csrc", "inductor", "aoti_torch", "generated",
                             header)).read()
    found: dict[str, tuple[str | None, str]] = {}
    gate = None
    for line in text.splitlines():
        m = re.match(r"#if TORCH_FEATURE_VERSION >= (TORCH_VERSION_\w+)", line)
        if m:
            gate = m.group(1)
            continue
        if line.startswith("#endif"):
            gate = None
            continue
        m = re.match(r"AOTI_TORCH_EXPORT AOTITorchError (aoti_torch_\w+)\(", line)
        if m:
            name = m.group(1).replace(f"aoti_torch_{device}_", "aoti_torch_aten_")
            found[name] = (gate, line.replace(f"aoti_torch_{device}_", "aoti_torch_aten_"))
    return found


def test_vN_shims_equal_the_wheels() -> None:
    """--since 2.9 (the release these shims first shipped in): the original name keeps 2.9's arguments, `_v2`
    carries the new ones, gated on the release whose schema has them."""
    p = plan_mod.make(["_flash_attention_forward.default", "_scaled_dot_product_attention_math_for_mps"], since="2.9")
    header = emit_c.declarations(emit_c.emit(resolve(p)))  # shimgen's (c_shim_aten_overlay.h): libtorch's aten has neither
    ours: dict[str, tuple[str | None, str]] = {}
    gate = None
    for line in header.splitlines():
        m = re.match(r"#if TORCH_FEATURE_VERSION >= (TORCH_VERSION_\w+)", line)
        gate = m.group(1) if m else (None if line.startswith("#endif") else gate)
        m = re.match(r"AOTI_TORCH_EXPORT AOTITorchError (aoti_torch_\w+)\(", line)
        if m:
            ours[m.group(1)] = (gate, line)
    cuda = _wheel_decls("c_shim_cuda.h", "cuda")
    mps = _wheel_decls("c_shim_mps.h", "mps")
    for name in ("aoti_torch_aten__flash_attention_forward", "aoti_torch_aten__flash_attention_forward_v2"):
        assert ours[name] == cuda[name]
    for name in ("aoti_torch_aten__scaled_dot_product_attention_math_for_mps",
                 "aoti_torch_aten__scaled_dot_product_attention_math_for_mps_v2"):
        assert ours[name][1] == mps[name][1]
    # enable_gqa arrived in 2.12, and torch 2.12's own c_shim_mps.h already declares the _v2 shim (ungated: it
    # predates per-shim gates); 2.13's header gates it at 2.13 after the fact. shimgen gates on the release
    # whose aten has the arguments.
    assert ours["aoti_torch_aten__scaled_dot_product_attention_math_for_mps_v2"][0] == "TORCH_VERSION_2_12_0"
    assert mps["aoti_torch_aten__scaled_dot_product_attention_math_for_mps_v2"][0] == "TORCH_VERSION_2_13_0"


def test_vN_definitions_pass_defaults_and_compile(tmp_path) -> None:
    p = plan_mod.make(["_flash_attention_forward.default"], since="2.9")
    versions = sig_c.versions(p.ops[0], p)
    assert [(v.shim.function, v.since, v.shim.nargs) for v in versions] == [
        ("aoti_torch_aten__flash_attention_forward", V("2.9"), 15),
        ("aoti_torch_aten__flash_attention_forward_v2", V("2.12"), 17)]
    assert versions[0].shim.aten_args[-2:] == ("{}", "::std::nullopt")  # torchgen's default_expr for None
    files = emit_c.emit(resolve(p))
    out = tmp_path / "gen"
    pipeline.write(str(out), files)
    proc = subprocess.run([CXX, *TORCH.aten_flags(str(out)), "-fsyntax-only", str(out / emit_c.SOURCE)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_wrappers_pick_the_newest_shim_a_release_has() -> None:
    p = plan_mod.make(["_flash_attention_forward.default"], since="2.9")
    (w,), _ = sig_cpp.wrappers(p)
    # the dispatcher is preferred; shimgen's shims serve where it cannot (here it can everywhere)
    assert {v.route.name for v in w.variants} == {"dispatcher"}
    versions = sig_c.versions(p.ops[0], p)
    op = p.ops[0]
    forced = [routes.get("generated_shim").variant_at(routes.Query(op, list(w.params), p, V(r), versions,
                                                                   p.timeline(op)[V(r)], None))
              for r in ("2.10", "2.12")]
    assert [(v.shim, v.kept) for v in forced] == [("aoti_torch_aten__flash_attention_forward", 15),
                                                 ("aoti_torch_aten__flash_attention_forward_v2", 17)]


# ---- the drift check -----------------------------------------------------------------------------------------


def _drift(old: str, new: str, ops: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shimgen", "--drift", os.path.join(DRIFT, old, "native_functions.yaml"),
         "--yaml", os.path.join(DRIFT, new, "native_functions.yaml"), "--ops", ops],
        capture_output=True, text=True)


def test_drift_int_to_symint_is_the_same_abi() -> None:
    proc = _drift("2.9.0", "2.10.0", "tril,triu,add")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert {line.split(": ")[3] for line in lines} == {"op tril.default", "op tril.out", "op triu.default",
                                                     "op triu.out"}
    assert all("info: " in line and "argument types changed, same ABI" in line for line in lines)


def test_drift_trailing_defaulted_arguments() -> None:
    proc = _drift("2.11.0", "2.12.0", "_flash_attention_forward")
    assert proc.returncode == 0
    assert ("info: op _flash_attention_forward.default: new trailing defaulted argument(s) block_table, "
            "num_splits: a `_vN` C shim carries them") in proc.stdout


def test_drift_removed_and_renamed() -> None:
    proc = _drift("2.13.0", "2.14.0", "cholesky,qr,_cdist_backward,add")
    assert proc.returncode == 0  # none of them is in the manifest: warnings
    out = proc.stdout
    for op in ("cholesky.default", "cholesky.out", "qr.default", "qr.Q"):
        assert f"warning: op {op}: op removed" in out
    assert "warning: op _cdist_backward.default: argument renamed (grad -> grad_output)" in out
    assert "op add" not in out


def test_drift_dimname_removals() -> None:
    proc = _drift("2.12.0", "2.13.0", "sort")
    removed = re.findall(r"warning: op (sort\.\w+): op removed", proc.stdout)
    assert sorted(removed) == ["sort.dimname", "sort.dimname_stable", "sort.dimname_values",
                               "sort.dimname_values_stable"]


def test_drift_errors_for_breaks_and_manifest_removals() -> None:
    assert drift.judge("pad.default", "pad(Tensor self, int[] pad) -> Tensor", None,
                       frozenset({"pad.default"})).severity == "error"
    f = drift.judge("f.default", "f(Tensor self, int a) -> Tensor", "f(Tensor self, float a) -> Tensor")
    assert f.severity == "error" and "structural change" in f.what
    f = drift.judge("f.default", "f(Tensor self) -> Tensor", "f(Tensor self) -> (Tensor, Tensor)")
    assert f.severity == "error" and "returns" in f.what
    f = drift.judge("f.out", "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
                    "f.out(Tensor self, int k=0, *, Tensor(a!) out) -> Tensor(a!)")
    assert f.severity == "warning" and "before the out= arguments" in f.what
    f = drift.judge("f.default", "f(Tensor self, int k=1) -> Tensor", "f(Tensor self, int k=2) -> Tensor")
    assert f.severity == "warning" and "default changed (k=1->2)" in f.what


def test_drift_exit_status_on_error(tmp_path) -> None:
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text("- func: f(Tensor self, int a) -> Tensor\n")
    new.write_text("- func: f(Tensor self, float a) -> Tensor\n")
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--drift", str(old), "--yaml", str(new), "--ops", "f"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "error: op f.default: structural change" in proc.stdout


def test_check_names_schema_changes(tmp_path) -> None:
    """--check against a newer release's yaml says what changed in the schemas and what it means."""
    out = str(tmp_path / "out")
    old_yaml = os.path.join(DRIFT, "2.13.0", "native_functions.yaml")
    new_yaml = os.path.join(DRIFT, "2.14.0", "native_functions.yaml")
    files, _ = pipeline.generate(["_cdist_backward", "add.Tensor"], old_yaml, None, out)
    pipeline.write(out, files)
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--check", "--out", out, "--yaml", new_yaml,
                           "--ops", "_cdist_backward,add.Tensor"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "schema warning: op _cdist_backward.default: argument renamed (grad -> grad_output)" in proc.stderr


# ---- headers -------------------------------------------------------------------------------------------------

RUNTIMES = os.environ.get("SHIMGEN_RUNTIMES", os.path.expanduser("~/.cache/shimgen/runtimes"))


def test_generated_header_compiles_from_its_floor(drifted: str) -> None:
    """`Build time minimum version` is true: the generated ops.h compiles with the headers of every release from
    emit_cpp.HEADERS_FLOOR on, and not before (checked against each runtime found under $SHIMGEN_RUNTIMES)."""
    res = syntax_check("#include <torch/csrc/stable/ops.h>\n", drifted)
    assert res.returncode == 0, res.stderr[-2000:]  # the installed headers
    found = []
    for entry in sorted(os.listdir(RUNTIMES)) if os.path.isdir(RUNTIMES) else []:
        m = re.fullmatch(r"torch-(\d+\.\d+)\.\d+", entry)
        inc = os.path.join(RUNTIMES, entry, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                           "site-packages", "torch", "include")
        if not (m and os.path.isdir(inc)):
            continue
        proc = subprocess.run([CXX, "-std=c++17", "-DTORCH_STABLE_ONLY", f"-I{drifted}", f"-I{inc}",
                               "-fsyntax-only", "-x", "c++", "-"], input="#include <torch/csrc/stable/ops.h>\n",
                              capture_output=True, text=True)
        assert (proc.returncode == 0) == (V(m.group(1)) >= emit_cpp.HEADERS_FLOOR), (entry, proc.stderr[-1500:])
        found.append(entry)
    if not found:
        pytest.skip(f"no runtime venvs under {RUNTIMES} to compile against (only the installed headers checked)")
