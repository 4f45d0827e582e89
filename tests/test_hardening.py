"""The hostile-user probe, kept: bad or odd inputs get one line and exit 2 (or a correct, compiling
output), never a traceback, never a clobbered output folder; the output folder is one transaction across SIGINT,
SIGTERM, SIGKILL and a concurrent writer; input is read bounded and as UTF-8 whatever the locale.

Everything runs `python -m shimgen` in subprocesses, as a user would, on small fixtures written here. The
interrupt tests start shimgen through tests/launch/shimgen, whose --slow-write widens the write windows
(shimgen.base.output, patched in that process: the product reads no test hook).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from shimgen.tools import cli
from shimgen.base import output
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp, py as emit_py
from shimgen.generate import pipeline
from shimgen.base.errors import ShimgenError
from shimgen.generate.parse import default_yaml_path, detect_release
from shimgen.facts.versions import Version
from tests.test_cli_errors import assert_one_line_error, shimgen, snapshot
from tests.children import quick_exit

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
YAML_2_12 = os.path.join(FIXTURES, "2.12.0", "native_functions.yaml")


def run(*args: str) -> subprocess.CompletedProcess:
    """`shimgen ARGS` in this process (the CLI's main, streams captured): for the many cases that need no process
    of their own. A traceback would surface as this test's error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(args))
    return subprocess.CompletedProcess(list(args), rc, out.getvalue(), err.getvalue())


def write_yaml(folder, text: str | bytes, name: str = "native_functions.yaml") -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    return path


def run_yaml(tmp_path, text: str | bytes, ops: str, *extra: str) -> subprocess.CompletedProcess:
    path = write_yaml(tmp_path / "in", text)
    return run("--yaml", path, "--ops", ops, "--since", "2.13", "--out", str(tmp_path / "o"), *extra)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


# ---- versions ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["256.0", "2.256", "2.13abc!!", "٢.١٣", "2.1e1", "2.13.0+cpu", "02.13", "2.13.",
                                  " 2.13", "2.13.256", "2", "2.x", "", "2.13.0.0", "v2.13", "2.13a0"])
def test_strict_version_parser_rejects(text: str) -> None:
    with pytest.raises(ShimgenError):
        Version.parse(text)


@pytest.mark.parametrize("text, want", [("2.13", (2, 13)), ("2.13.1", (2, 13)), ("255.255.255", (255, 255)),
                                        ("0.0", (0, 0))])
def test_strict_version_parser_accepts(text: str, want: tuple[int, int]) -> None:
    v = Version.parse(text)
    assert (v.major, v.minor) == want


@pytest.mark.parametrize("text, want", [("2.13.0+cpu", (2, 13)), ("2.14.0a0+git1234abc", (2, 14)),
                                        ("2.13.0rc1", (2, 13)), ("2.15.0.dev20260101+cu128", (2, 15)),
                                        ("2.13.0.post1", (2, 13)), ("2.12.1", (2, 12))])
def test_release_versions_may_carry_a_build_suffix(text: str, want: tuple[int, int]) -> None:
    assert Version.parse_release(text) == Version(*want)


@pytest.mark.parametrize("text", ["2.13+cpu", "2.13.0 +cpu", "2.256.0+cpu", "2.13.0!", "٢.١٣.0"])
def test_release_versions_are_still_strict(text: str) -> None:
    with pytest.raises(ShimgenError):
        Version.parse_release(text)


@pytest.mark.parametrize("since", ["256.0", "2.256", "2.13abc!!", "٢.١٣", "2.1e1", "2.13'", "2.13\n"])
def test_bad_since_is_one_line(tmp_path, since: str) -> None:
    proc = run("--ops", "add", "--since", since, "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "--since")
    assert not (tmp_path / "o").exists()


def test_release_of_the_installed_yaml_ignores_the_local_suffix() -> None:
    """The installed torch reports e.g. 2.13.0+cpu: its packaged yaml is still that release's."""
    from importlib import metadata

    release, problem = detect_release(default_yaml_path())
    assert problem is None and release == Version.parse_release(metadata.version("torch"))


@pytest.mark.parametrize("folder, want", [("2.12.0", "2.12"), ("v2.11", "2.11"), ("3.1415", None), ("2.12.0x", None),
                                          ("٢.١٢", None)])
def test_release_from_folder_name(tmp_path, folder: str, want: str | None) -> None:
    path = write_yaml(tmp_path / folder, "- func: foo(Tensor self) -> Tensor\n")
    release, _ = detect_release(path)
    assert (str(release) if release else None) == want


def test_non_utf8_version_txt_is_named_in_the_error(tmp_path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "version.txt").write_bytes(b"2.13.0\xff\n")
    path = write_yaml(tmp_path / "repo" / "aten" / "src" / "ATen" / "native", "- func: foo(Tensor self) -> Tensor\n")
    proc = run("--yaml", path, "--ops", "foo", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "op foo.default", "version.txt", "not UTF-8", "--since")
    (tmp_path / "repo" / "version.txt").write_text("2.14.0a0\n")  # what a PyTorch checkout holds
    proc = run("--yaml", path, "--ops", "foo", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert "torch 2.14's" in (tmp_path / "o" / emit_c.HEADER).read_text()


# ---- reading input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/full", "/dev/zero"])
def test_endless_yaml_is_bounded(tmp_path, device: str) -> None:
    proc = run("--yaml", device, "--ops", "add", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, device, "larger than 64 MB")


@pytest.mark.parametrize("data, needle", [
    (b"- func: foo(Tensor self) -> Tensor\n  # caf\xe9\n", "not UTF-8 text (byte 0xe9 at offset 42)"),
    (b"- func: foo(Tensor self) -> Tensor\n\x00\x01\x02binary", "binary file"),
    (bytes(range(256)) * 8, "binary file"),
], ids=["latin1", "nul", "random"])  # fmt: skip
def test_non_text_yaml_is_one_line(tmp_path, data: bytes, needle: str) -> None:
    assert_one_line_error(run_yaml(tmp_path, data, "foo"), needle)


def test_byte_order_mark_is_ignored(tmp_path) -> None:
    proc = run_yaml(tmp_path, "\ufeff- func: foo(Tensor self) -> Tensor\n", "foo")
    assert proc.returncode == 0, proc.stderr


def test_a_directory_as_yaml(tmp_path) -> None:
    assert_one_line_error(run("--yaml", str(tmp_path), "--ops", "add", "--out", str(tmp_path / "o")),
                          "Is a directory")


def test_c_locale_without_utf8_mode(tmp_path) -> None:
    """The README's first command under LC_ALL=C with UTF-8 mode off writes what a UTF-8 locale writes."""
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    proc = shimgen("--ops", "add,pad,amax", "--out", str(tmp_path / "c"), env=env)
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    ref = run("--ops", "add,pad,amax", "--out", str(tmp_path / "u"))
    assert ref.returncode == 0, ref.stderr
    assert snapshot(tmp_path / "c") == snapshot(tmp_path / "u")
    proc = shimgen("--check", "--out", str(tmp_path / "c"), env=env)
    assert proc.returncode == 0, proc.stderr


# ---- validation before generation ---------------------------------------------------------------------------------

ENTRY = "- func: {}\n  variants: function\n"


@pytest.mark.parametrize("schema, needles", [
    ("foo(Tensor self, Tensor? other=3) -> Tensor", ["argument other", "'3'", "Tensor?"]),
    ("foo(Tensor self, int n=99999999999999999999999) -> Tensor", ["argument n", "64-bit"]),
    ("foo(Tensor self, int n=-9223372036854775809) -> Tensor", ["argument n", "64-bit"]),
    ("foo(Tensor self, float f=1e999) -> Tensor", ["argument f", "finite"]),
    ("foo(Tensor self, Scalar f=-1e999) -> Tensor", ["argument f", "finite"]),
    ("foo(Tensor self, bool[3] m=[True,True]) -> Tensor", ["argument m", "2 items for a fixed size of 3"]),
    ("foo(Tensor self, int[] p=1) -> Tensor", ["argument p", "list default"]),
    ("foo(Tensor self, int n=None) -> Tensor", ["argument n", "optional"]),
    ("foo(Tensor self, bool b=1) -> Tensor", ["argument b", "no value of this type"]),
    ("foo(Tensor self, bool b=Mean) -> Tensor", ["argument b", "Mean is a default for int"]),
    ("foo(Tensor self, int n=1.5) -> Tensor", ["argument n", "floating-point"]),
    ('foo(Tensor self, str s="abc) -> Tensor', ["argument s", "unterminated"]),
    ("foo(Tensor self, str s=abc) -> Tensor", ["argument s", "quoted string"]),
    ("foo(Tensor self, int[2] p=[1,,2]) -> Tensor", ["argument p", "empty list item"]),
    ("foo(Tensor(a!!) self) -> Tensor", ["argument self", "bad alias annotation (a!!)"]),
    ("foo(Tensor self)) -> Tensor", ["op foo.default", "'self)'", "not an identifier"]),
    ("foo(Tensor self, Tensor self) -> Tensor", ["argument self", "two arguments"]),
])  # fmt: skip
def test_malformed_schema_is_one_line(tmp_path, schema: str, needles: list[str]) -> None:
    proc = run_yaml(tmp_path, ENTRY.format(schema), "foo")
    assert_one_line_error(proc, "op foo.default", *needles)
    assert not (tmp_path / "o").exists()


def test_duplicate_overload(tmp_path) -> None:
    text = ENTRY.format("foo(Tensor self) -> Tensor") + ENTRY.format("bar(Tensor self) -> Tensor")
    text += ENTRY.format("foo(Tensor self) -> Tensor")
    assert_one_line_error(run_yaml(tmp_path, text, "foo"), "op foo.default", "more than once", "lines 1 and 5")
    assert run_yaml(tmp_path, text, "bar").returncode == 0  # the duplicate is not selected: nothing to say


def test_real_yaml_concatenated(tmp_path) -> None:
    with open(default_yaml_path(), "rb") as f:
        real = f.read()
    proc = run_yaml(tmp_path, real + b"\n" + real, "add")
    assert_one_line_error(proc, "op add.", "more than once")


def test_entry_without_func_blames_itself(tmp_path) -> None:
    text = ENTRY.format("foo(Tensor self) -> Tensor") + "- variants: function\n  dispatch: {}\n"
    line = assert_one_line_error(run_yaml(tmp_path, text, "foo"), "native_functions.yaml:3", "no `func:`")
    assert "foo" not in line  # not the previous op


def test_symbolic_default_without_spelling_is_a_refusal_for_both_surfaces(tmp_path) -> None:
    """One rule: an overload whose default the table cannot spell is skipped with a note under a bare name
    (neither its C shim nor its wrapper is written), an error when named, and an error when nothing is left."""
    text = ENTRY.format("foo(Tensor self, int dim=banana) -> Tensor")
    assert_one_line_error(run_yaml(tmp_path, text, "foo"), "op foo.default", "argument dim", "banana")
    text += ENTRY.format("foo.other(Tensor self, int dim) -> Tensor")
    proc = run_yaml(tmp_path, text, "foo")
    assert proc.returncode == 0, proc.stderr
    assert "shimgen: note: skipped op foo.default, argument dim" in proc.stderr
    header = emit_c.read_declarations(str(tmp_path / "o"))
    assert "aoti_torch_aten_foo_other(" in header and "aoti_torch_aten_foo(" not in header
    assert "foo.default" not in (tmp_path / "o" / emit_cpp.HEADER).read_text().split("// Not generated")[0]
    assert "foo.other" in (tmp_path / "o" / emit_cpp.op_header("foo")).read_text()  # its wrappers are there
    assert "foo.default" not in (tmp_path / "o" / emit_cpp.op_header("foo")).read_text()
    assert_one_line_error(run_yaml(tmp_path, text, "foo.default"), "op foo.default", "banana")


def test_bare_name_with_nothing_callable_is_an_error(tmp_path) -> None:
    out = tmp_path / "o"
    assert run("--ops", "add", "--out", str(out)).returncode == 0
    before = snapshot(out)
    for ops in ["histogramdd", "qscheme"]:
        proc = run("--ops", ops, "--out", str(out))
        assert_one_line_error(proc, "op " + ops)
        assert snapshot(out) == before  # never an empty surface written over the old one
    proc = run("--ops", "add,histogramdd", "--out", str(out))  # other ops produce output: notes only
    assert proc.returncode == 0, proc.stderr
    assert "shimgen: note: op histogramdd.TensorList_bins" in proc.stderr


# ---- the CLI's failure paths ------------------------------------------------------------------------------------


@pytest.fixture
def written(tmp_path) -> str:
    out = tmp_path / "written"
    assert run("--ops", "add", "--out", str(out)).returncode == 0
    return str(out)


def test_full_stdout_leaves_the_output_untouched(written: str) -> None:
    before = snapshot(written)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "add,pad", "--out", written], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["shimgen: error: cannot write to standard output: No space left on device"]
    assert snapshot(written) == before


def test_closed_stdout(written: str) -> None:
    before = snapshot(written)
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "add,pad", "--out", written],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: os.close(1))  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.strip().endswith("standard output: it is closed"), proc.stderr
    assert snapshot(written) == before
    r, w = os.pipe()  # a reader that went away: EPIPE
    os.close(r)
    proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "add,pad", "--out", written], stdout=w,
                          stderr=subprocess.PIPE, text=True)
    os.close(w)
    assert proc.returncode == 2 and "Broken pipe" in proc.stderr, proc.stderr
    no_traceback(proc)
    assert snapshot(written) == before


def test_verify_build_dir_is_checked_before_writing(written: str, tmp_path) -> None:
    before = snapshot(written)
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    proc = run("--ops", "add,pad", "--out", written, "--verify", "--build-dir", str(not_a_dir))
    assert_one_line_error(proc, "--build-dir", "not a directory")
    assert snapshot(written) == before


def test_check_on_binary_unreadable_and_odd_files(written: str) -> None:
    ops_h = os.path.join(written, emit_cpp.HEADER)
    with open(ops_h, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n\x00\x00")
    proc = run("--check", "--out", written)
    assert proc.returncode == 1 and f"changed: {ops_h} (a binary file" in proc.stderr, proc.stderr
    no_traceback(proc)
    os.remove(ops_h)
    os.mkdir(ops_h)
    proc = run("--check", "--out", written)
    assert proc.returncode == 1 and f"changed: {ops_h} (a directory)" in proc.stderr, proc.stderr
    os.rmdir(ops_h)
    os.symlink("nowhere", ops_h)  # dangling: exists, cannot be read
    assert_one_line_error(run("--check", "--out", written), "cannot read", ops_h)
    os.remove(ops_h)
    stamp = os.path.join(written, pipeline.STAMP)
    with open(stamp, "wb") as f:
        f.write(b"ops: [add]\n# \xff\n")
    assert_one_line_error(run("--check", "--out", written), "stamp", "not UTF-8")


@pytest.mark.parametrize("stamp, needle", [
    ("ops: []\n", "`ops: []` names no op"),
    ("ops: [add]\nsince: 2.10\n", "quoted version"),
    ("ops: [add]\nsince: '256.0'\n", "at most 255"),
    ("ops: [add]\nextra: 1\n", "unknown keys extra"),
    ("ops: [add, 3]\n", "expected `ops: manifest`"),
])  # fmt: skip
def test_bad_stamps(tmp_path, stamp: str, needle: str) -> None:
    (tmp_path / pipeline.STAMP).write_text(stamp)
    assert_one_line_error(run("--check", "--out", str(tmp_path)), "malformed stamp" if "255" not in needle else
                          "stamp", needle)


def test_stamp_round_trips_quotes_and_odd_paths(tmp_path) -> None:
    folder = tmp_path / "it's: \"quoted\" #1 é" / "2.12.0"
    folder.mkdir(parents=True)
    shutil.copy(YAML_2_12, folder / "native_functions.yaml")
    out = tmp_path / "o"
    proc = run("--yaml", str(folder / "native_functions.yaml"), "--ops", "sort.default", "--since", "2.12.0",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    proc = run("--check", "--out", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_help_to_a_full_stdout() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "shimgen", "--help"], stdout=full, stderr=subprocess.PIPE,
                              text=True)
    assert proc.returncode == 2 and "No space left on device" in proc.stderr
    no_traceback(proc)


# ---- what shimgen accepts, it writes compiling code for -----------------------------------------------------------

# Real aten ops (so the C shim definitions compile against ATen) with argument names that are C++ keywords,
# Python keywords, names the generated code declares itself (stack, ret0, tmp_result, a prelude's `i`, another
# argument's `{name}_h`) or the generated Python uses (torch), and defaults at the edges of what fits.
ODD_BUT_VALID = r"""
- func: add.Tensor(Tensor class, Tensor namespace, *, Scalar stack=1) -> Tensor
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) class) -> Tensor(a!)
- func: index.Tensor(Tensor self, Tensor?[] i) -> Tensor
- func: cat(Tensor[] tensors, int tensors_h=0) -> Tensor
- func: pad(Tensor ret0, SymInt[] pad, str from="constant", float? torch=None) -> Tensor
- func: transpose.int(Tensor(a) stack, int dim0, int new) -> Tensor(a)
- func: amax(Tensor self, int[1] dim=[1,2,3], bool keepdim=False) -> Tensor
- func: gelu(Tensor self, *, str approximate='\'"\\\n') -> Tensor
- func: narrow_copy(Tensor self, int dim, SymInt start=-9223372036854775808, SymInt length=9223372036854775807) -> Tensor
- func: hardtanh(Tensor self, Scalar min_val=-1.7976931348623157e308, Scalar max_val=1e-320) -> Tensor
- func: clamp(Tensor self, Scalar? lambda=None, Scalar? tmp_result=None) -> Tensor
"""


def test_odd_but_valid_schemas_compile(tmp_path) -> None:
    from tests.cxx import CXX, TORCH, syntax_check

    ops = "add,index,cat,pad,transpose,amax,gelu,narrow_copy,hardtanh,clamp"
    proc = run_yaml(tmp_path, ODD_BUT_VALID.replace("\n- func", "\n  variants: function\n- func"), ops)
    assert proc.returncode == 0, proc.stderr
    out = str(tmp_path / "o")
    header = emit_c.read_declarations(out)
    assert "aoti_torch_aten_add_Tensor(AtenTensorHandle class_, AtenTensorHandle namespace_, double stack_," in header
    assert "aoti_torch_aten_pad(AtenTensorHandle ret0_, const int64_t* pad, int64_t pad_len_, const char* from," in header
    assert "aoti_torch_aten_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** i_," in header
    module = (tmp_path / "o" / emit_py.MODULE).read_text()
    assert '**{"class": class_}' in module and "from_: str" in module and "torch_: float | None" in module

    source = str(tmp_path / "o" / emit_c.SOURCE)
    with ThreadPoolExecutor(3) as pool:  # the wrappers at the newest and the oldest target; the C shim bodies
        jobs = [pool.submit(syntax_check, "#include <torch/csrc/stable/ops.h>\n", out, t)
                for t in (None, Version(2, 9).hex)]
        jobs.append(pool.submit(subprocess.run, [CXX, *TORCH.aten_flags(out), "-fsyntax-only", source],
                                capture_output=True, text=True))
        for job in jobs:
            result = job.result()
            assert result.returncode == 0, result.stderr[-4000:]
            assert out not in result.stderr, result.stderr[-4000:]  # not even a warning about generated code

    import black

    for rel, pyi in ((emit_py.MODULE, False), (emit_py.STUB, True)):
        text = (tmp_path / "o" / rel).read_text()
        compile(text, rel, "exec")
        assert black.format_str(text, mode=black.Mode(is_pyi=pyi)) == text


# ---- the output folder is one transaction -------------------------------------------------------------------------

OLD_OPS, NEW_OPS = "add,pad", "amax,sum,cat,sort"
SLOW = 0.03  # seconds per staged file and per rename: each window ~0.2 s
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch", "shimgen")


@pytest.fixture(scope="module")
def old_new(tmp_path_factory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The complete old and new sets (file -> bytes) written into one folder path, `out`."""
    root = tmp_path_factory.mktemp("sets")
    sets = []
    for ops in (OLD_OPS, NEW_OPS):
        proc = run("--ops", ops, "--only", "--out", str(root / ops))
        assert proc.returncode == 0, proc.stderr
        sets.append(snapshot(root / ops))
    # Every file the op set shapes differs between the two (--only: no manifest ops in common), or exists in one
    # only (the per-op headers), so a folder holding parts of both is told apart from either.
    same = {k for k in sets[0] if sets[0][k] == sets[1].get(k)}
    assert same <= {"python/torch_stable_ops/py.typed", "torch/csrc/stable/shimgen/scalar.h",
                    "torch/csrc/stable/shimgen/ops_prelude.h", "torch/csrc/stable/shimgen/dispatch.h",
                    "torch/csrc/stable/shimgen/operators.h", "torch/csrc/stable/shimgen/autograd.h",
                    "torch/csrc/stable/shimgen/cuda.h"}, same
    return sets[0], sets[1]


def _restore(folder, files: dict[str, bytes]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    for rel, data in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def _start(ops: str, out, slow: float = SLOW) -> subprocess.Popen:
    """`shimgen --ops OPS --only --out OUT`, each staged file and each rename of the switch `slow` seconds late."""
    return subprocess.Popen([sys.executable, LAUNCHER, "--slow-write", str(slow), "--ops", ops, "--only", "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(predicate, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def _handles_sigterm(proc: subprocess.Popen) -> bool:
    """Has shimgen's code taken over the process's signals (shimgen/__init__'s guard catches SIGTERM)? Before
    that the interpreter is still starting, and a signal is Python's business, not shimgen's."""
    try:
        with open(f"/proc/{proc.pid}/status") as f:
            caught = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return proc.poll() is not None
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


def _staging_started(out) -> bool:
    return any(n.startswith(".shimgen-stage-") for _, _, names in os.walk(out) for n in names)


def _interrupt_trial(folder, old: dict, new: dict, signum: int, when: str, rng: random.Random) -> str:
    """One run writing the new set over the old, hit by `signum` at a random point of a phase: `anytime` (from
    when shimgen's code runs until after it is done), `staging` (while it writes staging files) or `switch`
    (while it renames them into place). Returns which complete set it left."""
    _restore(folder, old)
    proc = _start(NEW_OPS, folder)
    if when == "anytime":
        _wait_for(lambda: _handles_sigterm(proc))
        time.sleep(rng.uniform(0.0, 1.6))
    elif when == "staging":
        _wait_for(lambda: _staging_started(folder) or proc.poll() is not None)
        time.sleep(rng.uniform(0.0, 0.15))
    else:
        _wait_for(lambda: os.path.exists(os.path.join(folder, ".shimgen-commit")) or proc.poll() is not None)
        time.sleep(rng.uniform(0.0, 0.15))
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert proc.returncode in (0, -signum), (proc.returncode, err)  # done, or ended by the signal after cleanup
    if proc.returncode:
        assert err.splitlines()[-1].startswith(f"shimgen: interrupted ({signal.Signals(signum).name})"), err
    state = snapshot(folder)  # every file, staging files and the journal included
    assert state in (old, new), sorted(state)
    return "old" if state == old else "new"


TRIALS = 20  # per signal


def test_interrupts_leave_the_old_or_the_new_set(tmp_path, old_new) -> None:
    """SIGINT and SIGTERM, 20 trials each at random points (of the whole run, of staging, of the switch): never a
    mix, never a staging file or journal left."""
    old, new = old_new
    rng = random.Random(1234)
    phases = ("anytime", "staging", "switch")
    plans = [(f"{signum.name}-{i}", signum, phases[i % 3], random.Random(rng.random()))
             for signum in (signal.SIGINT, signal.SIGTERM) for i in range(TRIALS)]  # fmt: skip
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda p: (p[1], _interrupt_trial(tmp_path / p[0], old, new, *p[1:])), plans))
    assert len(results) == 2 * TRIALS
    print({s.name: {r: sum(1 for t, x in results if t == s and x == r) for r in ("old", "new")}
           for s in (signal.SIGINT, signal.SIGTERM)})  # fmt: skip
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Both outcomes occur (interrupted while staging: old; during the switch, deferred: new).
        assert {"old", "new"} <= {r for s, r in results if s == signum}, results


def test_sigkill_during_the_switch_is_completed_by_the_next_run(tmp_path, old_new) -> None:
    old, new = old_new
    out = tmp_path / "o"
    _restore(out, old)
    proc = _start(NEW_OPS, out, slow=0.15)
    assert _wait_for(lambda: (out / ".shimgen-commit").exists())
    time.sleep(0.3)  # a couple of renames into the switch
    proc.kill()
    proc.communicate()
    assert (out / ".shimgen-commit").exists()
    state = snapshot(out)
    assert state != old and state != new  # a killed switch is the one mixed state; the journal records it
    check = run("--check", "--out", str(out))
    assert check.returncode == 1 and "an interrupted write" in check.stderr, check.stderr
    proc = run("--ops", OLD_OPS, "--only", "--out", str(out))  # rolls the killed run forward, then writes its own set
    assert proc.returncode == 0, proc.stderr
    assert snapshot(out) == old


def test_stale_staging_is_reported_and_removed(tmp_path, old_new) -> None:
    old, _ = old_new
    out = tmp_path / "o"
    _restore(out, old)
    stale = [out / "torch" / "csrc" / "stable" / ".shimgen-stage-k1ll3d-ops.h", out / ".shimgen-a1b2c3d4",
             out / "python" / "torch_stable_ops" / ".shimgen-stage-x-__init__.py"]
    for p in stale:
        p.write_bytes(b"x" * 100_000)
    keep = out / ".shimgen-build"  # not a staging name: never touched
    keep.mkdir()
    proc = run("--check", "--out", str(out))
    assert proc.returncode == 1 and proc.stderr.count("stale staging file") == 3, proc.stderr
    assert run("--ops", OLD_OPS, "--only", "--out", str(out)).returncode == 0
    assert not any(p.exists() for p in stale) and keep.is_dir()
    keep.rmdir()
    assert snapshot(out) == old
    assert run("--check", "--out", str(out)).returncode == 0


def test_two_writers_serialize(tmp_path, old_new) -> None:
    """Two runs into one folder at once (three races side by side): both succeed, one complete set remains."""
    old, new = old_new
    races = {trial: [_start(ops, tmp_path / f"race{trial}", slow=0.06)
                     for ops in (OLD_OPS, NEW_OPS)] for trial in range(3)}  # fmt: skip
    waited = 0
    for trial, procs in races.items():
        errs = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], errs
        assert snapshot(tmp_path / f"race{trial}") in (old, new)
        waited += sum("waiting for another shimgen run" in e for e in errs)
    assert waited >= 1  # the runs did overlap, and one waited for the other


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_one_line(tmp_path, value: str) -> None:
    """SHIMGEN_LOCK_TIMEOUT is a finite number of seconds, 0 or more: `nan` or `inf` would wait forever for a
    folder another run holds, `-1` would give up at once. One line, exit 2, nothing written."""
    out = tmp_path / "o"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a shimgen run writing this folder holds it
        proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", "add", "--only", "--out", str(out)],
                              capture_output=True, text=True, env={**os.environ, "SHIMGEN_LOCK_TIMEOUT": value},
                              timeout=60)  # an endless wait fails the test here
    finally:
        os.close(fd)
    assert_one_line_error(proc, f"SHIMGEN_LOCK_TIMEOUT={value}", "seconds")
    assert os.listdir(out) == []


def test_the_product_reads_no_test_hook(tmp_path) -> None:
    """No environment variable meant for tests steers shimgen: its modules read no SHIMGEN_TEST_* (the tests widen
    windows by patching in their own process, tests/launch/shimgen), so a leftover or hostile setting is
    inert."""
    proc = shimgen("--ops", "add", "--only", "--out", str(tmp_path / "o"), env={"SHIMGEN_TEST_SLOW_WRITE": "1e309"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    package = os.path.dirname(os.path.dirname(os.path.abspath(output.__file__)))
    readers = []
    for root, _, names in os.walk(package):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    if "SHIMGEN_TEST_" in f.read():
                        readers.append(os.path.relpath(os.path.join(root, name), package))
    assert readers == []


def test_late_ctrl_c_prints_no_traceback(tmp_path, old_new) -> None:
    """Ctrl-C as the run ends (after it listed its files): done or interrupted, complete output, no traceback."""
    old, new = old_new

    def trial(i: int) -> None:
        out = tmp_path / f"late{i}"
        _restore(out, old)
        proc = _start(NEW_OPS, out, slow=0)
        for _ in range(len(new)):
            proc.stdout.readline()
        time.sleep(0.02 * i)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, -signal.SIGINT), err
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert snapshot(out) in (old, new)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(trial, range(4)))


# ---- a failing wrapper call -------------------------------------------------------------------------------------

ERRORS_EXT = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;

Tensor bad_shim(Tensor x) { return torch::stable::narrow(x, 5, 0, 1); }
Tensor bad_dispatch(Tensor x) { return torch::stable::transpose(x, 7, 0); }

STABLE_TORCH_LIBRARY(shimgen_errors, m) {
  m.def("bad_shim(Tensor x) -> Tensor");
  m.def("bad_dispatch(Tensor x) -> Tensor");
}
STABLE_TORCH_LIBRARY_IMPL(shimgen_errors, CompositeExplicitAutograd, m) {
  m.impl("bad_shim", TORCH_BOX(&bad_shim));
  m.impl("bad_dispatch", TORCH_BOX(&bad_dispatch));
}
"""

ERRORS_PROBE = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
x = torch.randn(2, 3)
for ours, aten in [(torch.ops.shimgen_errors.bad_shim, lambda: torch.ops.aten.narrow(x, 5, 0, 1)),
                   (torch.ops.shimgen_errors.bad_dispatch, lambda: torch.ops.aten.transpose.int(x, 7, 0))]:
    try:
        aten()
    except Exception as e:
        want = str(e).splitlines()[0]
    try:
        ours(x)
    except Exception as e:
        print(repr((want, str(e))))
"""


def test_failing_calls_raise_aten_message_without_paths_or_stderr(tmp_path) -> None:
    """The wrapper's exception carries aten's message; no backtrace, no path of the generated header, and nothing
    printed on stderr (STABLE_TORCH_ERROR_CODE_CHECK printed ~4 KB there and appended the header's __FILE__)."""
    import ast

    from tests.cxx import build_so

    out = tmp_path / "gen"
    assert run("--ops", "narrow,transpose", "--out", str(out)).returncode == 0
    src = tmp_path / "errors.cpp"
    src.write_text(ERRORS_EXT)
    lib = str(tmp_path / "liberrors.so")
    build_so(str(src), lib, str(out))
    proc = subprocess.run([sys.executable, "-c", quick_exit(ERRORS_PROBE), lib], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""
    pairs = [ast.literal_eval(line) for line in proc.stdout.splitlines()]
    assert len(pairs) == 2
    for want, got in pairs:
        assert want and want in got, (want, got)
        assert str(tmp_path) not in got and "ops.h" not in got and "frame #" not in got, got


def test_per_op_headers_of_ops_no_longer_selected_are_removed(tmp_path) -> None:
    """A per-op header left from an earlier op set would be a stale wrapper anyone could still include: the
    switch removes it, and --check reports one that appears."""
    out = tmp_path / "o"
    ops_dir = out / "torch" / "csrc" / "stable" / "ops"
    assert run("--ops", "add,pad", "--only", "--out", str(out)).returncode == 0
    assert (ops_dir / "pad.h").is_file()
    assert run("--ops", "amax", "--only", "--out", str(out)).returncode == 0
    assert sorted(p.name for p in ops_dir.iterdir()) == ["amax.h", "amax_out.h"]
    assert run("--check", "--out", str(out)).returncode == 0
    (ops_dir / "pad.h").write_text("// stale\n")
    check = run("--check", "--out", str(out))
    assert check.returncode == 1 and "not generated any more" in check.stderr and "pad.h" in check.stderr
