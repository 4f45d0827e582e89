"""The command line's contract: errors are one line naming the op, argument and reason, exit 2, no traceback,
nothing written; output is deterministic; `--check` reports what changed. Runs `python -m shimgen` in a
subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shimgen.generate.emit import c as emit_c
from shimgen.generate import table as table_mod

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
YAML_2_12 = os.path.join(FIXTURES, "2.12.0", "native_functions.yaml")  # cut from torch 2.12.0, with Dimname ops
MALFORMED_YAML = os.path.join(FIXTURES, "malformed_yaml", "native_functions.yaml")
MALFORMED_SCHEMA = os.path.join(FIXTURES, "malformed_schema", "native_functions.yaml")


def shimgen(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shimgen", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def snapshot(folder: str | os.PathLike) -> dict[str, bytes]:
    """Every file under folder (relative path -> bytes), temporary files included."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = f.read()
    return out


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("shimgen: error: "), line
    for n in needles:
        assert n in line, (n, line)
    assert proc.stdout == ""  # no file was written, so none is listed
    return line


@pytest.fixture(scope="module")
def add_pad_amax(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("add_pad_amax")
    proc = shimgen("--ops", "add,pad,amax", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return str(out)


# --- errors ------------------------------------------------------------------------------------------------------


def test_unknown_op_names_close_matches(tmp_path) -> None:
    proc = shimgen("--ops", "addd", "--out", str(tmp_path / "out"))
    line = assert_one_line_error(proc, "addd", "did you mean", " add,")
    assert "unknown op" in line
    assert not (tmp_path / "out").exists()


def test_unknown_overload_names_close_matches(tmp_path) -> None:
    proc = shimgen("--ops", "add,add.Tensr", "--out", str(tmp_path / "out"))
    assert_one_line_error(proc, "add.Tensr", "add.Tensor")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec", ["add..Tensor", "add.Tensor.x", "1add", "add-x"])
def test_bad_op_spec(tmp_path, spec: str) -> None:
    assert_one_line_error(shimgen("--ops", spec, "--out", str(tmp_path)), spec)


def test_empty_ops(tmp_path) -> None:
    assert_one_line_error(shimgen("--ops", ",", "--out", str(tmp_path)), "--ops")


def test_malformed_yaml(tmp_path) -> None:
    proc = shimgen("--yaml", MALFORMED_YAML, "--ops", "bad_yaml", "--since", "2.13", "--out", str(tmp_path / "o"))
    # the entry starts on line 7 of the fixture
    assert_one_line_error(proc, "op bad_yaml.default", "malformed yaml", "native_functions.yaml:7")


def test_yaml_without_entries(tmp_path) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text("foo: [1, 2]\n")
    assert_one_line_error(shimgen("--yaml", str(path), "--ops", "add", "--out", str(tmp_path / "o")), "malformed yaml")


def test_missing_yaml(tmp_path) -> None:
    proc = shimgen("--yaml", str(tmp_path / "nope.yaml"), "--ops", "add", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "nope.yaml", "No such file")


@pytest.mark.parametrize(
    "op, needle",
    [
        ("no_arrow", "malformed schema"),  # no `->`
        ("no_name", "argument 'int' has no name"),  # a type without an argument name
        ("bad_return", "Tensr"),  # unknown return type
    ],
)
def test_malformed_schema(tmp_path, op: str, needle: str) -> None:
    proc = shimgen("--yaml", MALFORMED_SCHEMA, "--ops", op, "--since", "2.13", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, f"op {op}.default", needle)
    assert not (tmp_path / "o").exists()


def test_unsupported_type_named_explicitly(tmp_path) -> None:
    proc = shimgen("--yaml", YAML_2_12, "--ops", "add.Tensor,sort.dimname", "--out", str(tmp_path / "o"))
    reason = table_mod.load().arguments["Dimname"].refuse
    line = assert_one_line_error(proc, "op sort.dimname", "argument dim", "Dimname")
    assert " ".join(reason.split()) in line  # the table's reason, verbatim
    assert not (tmp_path / "o").exists()


def test_unsupported_type_under_bare_name_is_skipped_with_a_note(tmp_path) -> None:
    out = tmp_path / "o"
    proc = shimgen("--yaml", YAML_2_12, "--ops", "sort", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    notes = proc.stderr.splitlines()
    skipped = {"sort.dimname", "sort.dimname_stable", "sort.dimname_values", "sort.dimname_values_stable"}
    assert len(notes) == len(skipped)
    for n in notes:
        assert n.startswith("shimgen: note: skipped op sort.dimname") and "argument dim" in n and "Dimname" in n
    assert {n.split()[4].rstrip(",") for n in notes} == skipped
    header = emit_c.read_declarations(str(out))  # shimgen's shims: c_shim_aten_overlay.h
    for shim in ["sort", "sort_stable", "sort_values", "sort_values_stable"]:
        assert f"AOTITorchError aoti_torch_aten_{shim}(" in header
    assert "aoti_torch_aten_sort_dimname" not in header
    # the release comes from the fixture's folder name (2.12.0), and tags ops the manifest does not know
    assert "#if TORCH_FEATURE_VERSION >= TORCH_VERSION_2_12_0\nAOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_sort(" in header
    assert "torch 2.12" in header.splitlines()[0]


def test_refused_only_overloads_are_an_error(tmp_path) -> None:
    # the only overload of record_stream takes a Stream, which the table refuses: nothing would be generated
    proc = shimgen("--ops", "record_stream", "--out", str(tmp_path / "o"))
    line = assert_one_line_error(proc, "op record_stream.default", "argument s", "Stream")
    assert "skipped" not in line


@pytest.mark.parametrize("since", ["banana", "2", "2.x", "2.8", "1.13"])
def test_bad_since(tmp_path, since: str) -> None:
    proc = shimgen("--ops", "add", "--since", since, "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "--since", since)
    assert not (tmp_path / "o").exists()


def test_no_release_and_no_since(tmp_path) -> None:
    proc = shimgen("--yaml", MALFORMED_SCHEMA, "--ops", "good_op", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "op good_op.default", "--since")


def test_failing_runs_leave_existing_output_byte_identical(add_pad_amax: str, tmp_path) -> None:
    out = tmp_path / "o"
    assert shimgen("--ops", "add,pad,amax", "--out", str(out)).returncode == 0
    before = snapshot(out)
    assert before == snapshot(add_pad_amax)
    for args in [
        ["--ops", "addd"],
        ["--ops", "add,sort", "--since", "banana"],
        ["--yaml", YAML_2_12, "--ops", "sort.dimname"],
        ["--yaml", MALFORMED_YAML, "--ops", "good_op,bad_yaml", "--since", "2.13"],
        ["--yaml", MALFORMED_SCHEMA, "--ops", "good_op,no_arrow", "--since", "2.13"],
    ]:
        proc = shimgen(*args, "--out", str(out))
        assert proc.returncode == 2, (args, proc.stderr)
        assert snapshot(out) == before, args


def test_unwritable_output_writes_nothing(tmp_path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "shimgen.yaml").write_text("old stamp\n")
    (out / "torch").write_text("a file where the include tree's folder should be\n")
    before = snapshot(out)
    proc = shimgen("--ops", "add", "--out", str(out))
    assert_one_line_error(proc, "cannot write")
    assert snapshot(out) == before  # the stamp was staged first, and removed again: no partial output


@pytest.mark.parametrize("cxx, needle", [
    ("/nonexistent/g++", "CXX=/nonexistent/g++: no such compiler"),
    ("no-such-compiler-here", "CXX=no-such-compiler-here: no such compiler"),
    ("broken", "does not run"),  # a script that exits 1
])
def test_verify_with_a_compiler_that_cannot_run_writes_nothing(tmp_path, cxx: str, needle: str) -> None:
    """The compiler is checked (found, and answering --version) before anything is written: neither the output
    folder nor the build folder appears."""
    work = tmp_path / "work"
    work.mkdir()
    if cxx == "broken":
        script = tmp_path / "broken-cxx"
        script.write_text("#!/bin/sh\necho 'broken: cannot find its own libraries' >&2\nexit 1\n")
        script.chmod(0o755)
        cxx = str(script)
    proc = shimgen("--ops", "add", "--only", "--out", "v", "--verify", cwd=work, env={"CXX": cxx})
    line = assert_one_line_error(proc, needle)
    assert cxx in line
    assert os.listdir(work) == []


# --- determinism and --check ---------------------------------------------------------------------------------------


def test_two_runs_write_identical_bytes(add_pad_amax: str, tmp_path) -> None:
    again = tmp_path / "again"
    proc = shimgen("--ops", "add,pad,amax", "--out", str(again), env={"PYTHONHASHSEED": "12345"})
    assert proc.returncode == 0, proc.stderr
    assert snapshot(again) == snapshot(add_pad_amax)
    # it prints each file it wrote, one per line
    assert sorted(proc.stdout.splitlines()) == sorted(os.path.join(str(again), p) for p in snapshot(again))
    # rewriting in place changes nothing either, and leaves no temporary files
    assert shimgen("--ops", "add,pad,amax", "--out", str(again)).returncode == 0
    assert snapshot(again) == snapshot(add_pad_amax)
    # ordinary file modes (not mkstemp's 0600)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(again / emit_c.HEADER).st_mode & 0o777 == 0o666 & ~umask


def test_op_order_does_not_matter(add_pad_amax: str, tmp_path) -> None:
    out = tmp_path / "o"
    assert shimgen("--ops", "amax,pad,add", "--out", str(out)).returncode == 0
    for rel, data in snapshot(add_pad_amax).items():
        if rel != "shimgen.yaml":  # the stamp records the invocation as given
            assert snapshot(out)[rel] == data, rel


def test_check_in_sync(add_pad_amax: str) -> None:
    proc = shimgen("--check", "--out", add_pad_amax)
    assert proc.returncode == 0, proc.stderr
    assert "up to date" in proc.stdout


def _copy(src: str, dst) -> str:
    for rel, data in snapshot(src).items():
        path = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return str(dst)


def test_check_reports_a_changed_signature(add_pad_amax: str, tmp_path) -> None:
    out = _copy(add_pad_amax, tmp_path / "o")
    header = os.path.join(out, emit_c.OVERLAY_HEADER)  # add.Tensor's shim is shimgen's
    text = open(header).read()
    edited = text.replace("aoti_torch_aten_add_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha",
                          "aoti_torch_aten_add_Tensor(AtenTensorHandle self, AtenTensorHandle other, int64_t alpha")
    assert edited != text
    open(header, "w").write(edited)
    before = snapshot(out)
    proc = shimgen("--check", "--out", out)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"--- {header} (on disk)" in proc.stdout and f"+++ {header} (generated)" in proc.stdout
    assert "-AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_add_Tensor(" in proc.stdout
    assert "ABI break: signature of aoti_torch_aten_add_Tensor changed" in proc.stderr
    assert "To update: shimgen --ops add,pad,amax" in proc.stderr
    assert snapshot(out) == before  # --check writes nothing


def test_check_reports_a_new_op(add_pad_amax: str, tmp_path) -> None:
    out = _copy(add_pad_amax, tmp_path / "o")
    proc = shimgen("--check", "--ops", "add,pad,amax,sort.default", "--out", out)
    assert proc.returncode == 1
    assert "new op: aoti_torch_aten_sort" in proc.stderr
    assert "+AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_sort(" in proc.stdout


def test_check_reports_a_removed_op_and_a_missing_file(add_pad_amax: str, tmp_path) -> None:
    out = _copy(add_pad_amax, tmp_path / "o")
    os.remove(os.path.join(out, emit_c.SOURCE))
    proc = shimgen("--check", "--ops", "add,pad", "--only", "--out", out)
    assert proc.returncode == 1
    assert "ABI break: aoti_torch_aten_amax removed" in proc.stderr
    assert f"missing: {os.path.join(out, emit_c.SOURCE)}" in proc.stderr


def test_check_with_unknown_op_is_an_error(add_pad_amax: str) -> None:
    assert_one_line_error(shimgen("--check", "--ops", "addd", "--out", add_pad_amax), "addd")


@pytest.mark.parametrize("args", [["--bogus"], ["--ops"], ["--check", "extra"]])
def test_bad_command_line_is_one_line_too(tmp_path, args: list[str]) -> None:
    proc = shimgen(*args, cwd=tmp_path)
    assert_one_line_error(proc, "see shimgen --help")


def test_explicit_overload_with_no_route_is_an_error(tmp_path) -> None:
    # _foreach_maximum.ScalarList: Scalar[] (no dispatcher conversion), a Tensor[] return (no C shim), and no
    # composition (kernel foreach leaves it: aten's derivative halves the gradient at a tie)
    proc = shimgen("--ops", "_foreach_maximum.ScalarList", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "op _foreach_maximum.ScalarList", "no route")
    assert not (tmp_path / "o").exists()


def test_a_directory_in_the_way_writes_nothing(tmp_path) -> None:
    (tmp_path / "o" / "torch" / "csrc" / "stable" / "ops.h").mkdir(parents=True)
    proc = shimgen("--ops", "add", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "is a directory")
    assert [p for p in (tmp_path / "o").rglob("*") if p.is_file()] == []  # no file, no temporary left behind


@pytest.mark.parametrize("stamp", ["ops: [\n", "- 1\n", "ops: add\n"])
def test_malformed_stamp_is_one_line(tmp_path, stamp: str) -> None:
    (tmp_path / "shimgen.yaml").write_text(stamp)
    proc = shimgen("--check", "--out", str(tmp_path))
    assert_one_line_error(proc, "malformed stamp")


def test_cpp_string_defaults_are_escaped() -> None:
    from shimgen.generate.table import _cpp_string

    assert _cpp_string('a\nb"c\\d') == '"a\\012b\\"c\\\\d"'


def test_only_needs_ops(tmp_path) -> None:
    proc = shimgen("--only", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, "--only needs --ops")
    assert not (tmp_path / "o").exists()


def test_output_is_additive_unless_only(tmp_path) -> None:
    """--ops adds to the manifest's op set (upstream's surface); --only generates just the ops named."""
    for flags, has_clone in ([], True), (["--only"], False):
        out = tmp_path / ("only" if flags else "additive")
        proc = shimgen("--ops", "sort", *flags, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        header = emit_c.read_declarations(str(out))
        assert " aoti_torch_aten_sort(" in header
        assert (" aoti_torch_aten_clone(" in header) == has_clone
        assert shimgen("--check", "--out", str(out)).returncode == 0  # the stamp replays --only too
