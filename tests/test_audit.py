"""`shimgen audit`: binaries compiled here (a few lines of C or C++ naming chosen symbols, `cc -shared`: no torch
headers) judged against the recorded exports, the recorded exports checked against each runtime's libtorch, and
the verdict checked against what happens when a runtime's Python loads the library (RTLD_NOW) on 2.10.0 and 2.14.1.
Runs `python -m shimgen audit` in a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from shimgen.facts import libtorch_exports, releases
from shimgen.facts.versions import Version
from shimgen.proofs import libtorch_exports as measure_exports
from shimgen.proofs.verify import runtimes
from shimgen.tools import audit, binaries
from tests.test_cli_errors import assert_one_line_error

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CC = shutil.which("cc") or shutil.which("gcc")
MARKERS = dict(releases.load().libtorch_markers)  # release -> its libtorch's first new C function (derived)
FIRST_OF_2_10 = MARKERS[Version(2, 10)]  # torch_call_dispatcher
FIRST_OF_2_14 = MARKERS[Version(2, 14)]  # torch_has_storage
DATA = libtorch_exports.load()
NEWEST = DATA.releases[-1]

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) to build the binaries audited")


def shimgen(*args: str, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "shimgen", *args], capture_output=True, text=True, cwd=cwd, env=env)


def compile_so(folder, name: str, functions: list[str], cxx: str = "", link_torch: bool = True) -> str:
    """A shared object calling each C function of `functions` (declared `int f(void)`), plus C++ `cxx` code;
    `link_torch`: naming libtorch.so and libtorch_cpu.so as needed, as every extension does (the installed torch's:
    the loader then resolves the functions in the running torch's libtorch)."""
    src = os.path.join(folder, name + (".cpp" if cxx else ".c"))
    decl = 'extern "C" ' if cxx else "extern "
    body = "".join(f"{decl}int {f}(void);\n" for f in functions)
    body += cxx + "\n" + ('extern "C" ' if cxx else "") + "int shimgen_audit_entry(void) { return 0"
    body += "".join(f" + {f}()" for f in functions) + "; }\n"
    with open(src, "w", encoding="utf-8") as f:
        f.write(body)
    out = os.path.join(folder, name + ".so")
    cmd = [CC, "-shared", "-fPIC", "-o", out, src]
    if cxx:
        cmd[1:1] = ["-x", "c++"]
        cmd.append("-lstdc++")
    if link_torch:  # kept as needed even where no function is the installed libtorch's (a newer release's)
        lib = os.path.join(runtimes.find_torch().root, "lib")
        cmd += [f"-L{lib}", "-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu"]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


# ---- the recorded exports -----------------------------------------------------------------------------------


def test_the_file_is_what_dumps_writes() -> None:
    """Deterministic and sorted: the committed text is the dump of what it loads."""
    with open(libtorch_exports.data_path(), encoding="utf-8") as f:
        text = f.read()
    assert libtorch_exports.dumps(libtorch_exports.loads(text)) == text
    assert [str(r) for r in DATA.releases] == [".".join(r.split(".")[:2]) for r in releases.load().runtimes]


def test_ranges_name_a_missing_release_and_read_back() -> None:
    over = tuple(Version(2, m) for m in range(9, 16))
    has = frozenset(over) - {Version(2, 11)}
    assert libtorch_exports.ranges(has, over) == "2.9-2.10,2.12-2.15"
    assert libtorch_exports.parse_ranges("2.9-2.10,2.12-2.15", over, "t") == has
    assert libtorch_exports.ranges(frozenset({Version(2, 14)}), over) == "2.14"


def test_the_markers_start_where_the_data_says() -> None:
    """Two facts measured apart agree: each release's marker (from shim.h) is first exported by that release."""
    for release, fn in MARKERS.items():
        found = DATA.lookup(fn)
        assert found is not None, fn
        assert min(found[1].symbols[fn]) == release, (fn, release)


def _runtimes_found() -> list[runtimes.Runtime]:
    rts, missing = runtimes.resolve(list(releases.load().runtimes))
    if os.environ.get("CI") == "true":
        assert {r.name for r in rts} >= {"2.10.0", "2.13.0", "2.14.1"}, runtimes.missing_reason(missing)
    return rts


@pytest.mark.slow
@pytest.mark.parametrize("name", releases.load().runtimes)
def test_the_recorded_exports_are_the_runtimes(name: str) -> None:
    rt = runtimes.find(name)
    _runtimes_found()
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    measured = measure_exports.measure_runtime(rt)
    recorded = DATA.exported_by(Version.parse(name))
    # the same libraries measured; a group the runtime's wheel lacks (2.13.0's CPU wheel: libtorch_cuda) is the one
    # recorded from that release's CUDA wheel (python -m shimgen.dev exports --lib X.Y.Z=DIR)
    assert set(measured) <= set(recorded), (set(measured), set(recorded))
    lib = os.path.join(rt.torch.root, "lib")
    for group in set(recorded) - set(measured):
        assert not os.path.isfile(os.path.join(lib, libtorch_exports.GROUPS[group][0])), group
    for group in measured:
        assert measured[group] == recorded[group], (group, sorted(measured[group] ^ recorded[group])[:10])
    assert FIRST_OF_2_10 in measured["libtorch"] or Version.parse(name) < Version(2, 10)


# ---- verdicts ------------------------------------------------------------------------------------------------


def test_a_2_10_extension_loads_on_2_10_to_the_newest(tmp_path) -> None:
    so = compile_so(tmp_path, "ok", [FIRST_OF_2_10, "aoti_torch_abi_version"])
    proc = shimgen("audit", so, "--target", "2.10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == f"{so}: loads on torch 2.10-{NEWEST} (target 2.10)"
    assert "stable C ABI: 2 functions" in proc.stdout and "C++ outside the stable ABI: none" in proc.stdout


def test_a_2_14_function_at_target_2_10_names_2_14(tmp_path) -> None:
    so = compile_so(tmp_path, "new", [FIRST_OF_2_10, FIRST_OF_2_14])
    proc = shimgen("audit", so, "--target", "2.10")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == f"{so}: needs torch >= 2.14 (target 2.10): {FIRST_OF_2_14}"
    ok = shimgen("audit", so, "--target", "2.14")
    assert ok.returncode == 0 and f"loads on torch 2.14-{NEWEST} (target 2.14)" in ok.stdout, ok.stdout
    # without a target: the range it loads on, which ends at the newest release
    bare = shimgen("audit", so, cwd=tmp_path)
    assert bare.returncode == 0 and f"loads on torch 2.14-{NEWEST}" in bare.stdout, bare.stdout


def test_the_projects_target_applies(tmp_path) -> None:
    so = compile_so(tmp_path, "new", [FIRST_OF_2_14])
    (tmp_path / "pyproject.toml").write_text('[tool.shimgen]\ntarget = "2.12"\n', encoding="utf-8")
    proc = shimgen("audit", so, cwd=tmp_path)
    assert proc.returncode == 1 and "needs torch >= 2.14 (target 2.12)" in proc.stdout, proc.stdout + proc.stderr


CPP_EXTENSION = """
namespace at { class Tensor; Tensor& relu_(Tensor& self); }
namespace c10 { namespace detail {
[[noreturn]] void torchCheckFail(const char* func, const char* file, unsigned line, const char* msg);
} }
extern "C" void call_aten(at::Tensor& t) {
  at::relu_(t);
  c10::detail::torchCheckFail("f", "f.cpp", 1u, "m");
}
"""


def test_a_cpp_extension_is_outside_the_stable_abi(tmp_path) -> None:
    """What torch.utils.cpp_extension builds: calls into libtorch's C++ (at::, c10::), demangled for display."""
    so = compile_so(tmp_path, "aten", [], cxx=CPP_EXTENSION)
    proc = shimgen("audit", so, "--target", "2.10", "--symbols")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first == (f"{so}: sure to load only on the torch it was built with: 2 C++ symbols outside the stable ABI "
                     "(at::relu_, c10::detail::torchCheckFail)"), first
    assert "    at::relu_(at::Tensor&)" in proc.stdout.splitlines()
    data = json.loads(shimgen("audit", so, "--json").stdout)
    assert {c["name"] for c in data["binaries"][0]["cxx"]} == {"_ZN2at5relu_ERNS_6TensorE",
                                                               "_ZN3c106detail14torchCheckFailEPKcS2_jS2_"}
    assert data["binaries"][0]["loads_on"] == []


def test_a_library_that_links_no_libtorch_loads_on_none(tmp_path) -> None:
    """The loader resolves a library's symbols in the libraries it names as needed (and theirs), not in torch._C's
    (loaded RTLD_LOCAL): a stable function it cannot reach blocks every release (the runtimes agree: below)."""
    so = compile_so(tmp_path, "unlinked", [FIRST_OF_2_10], link_torch=False)
    proc = shimgen("audit", so, "--json")
    data = json.loads(proc.stdout)["binaries"][0]
    assert proc.returncode == 1 and data["loads_on"] == [] and not data["ok"], data
    assert data["verdict"] == (f"loads on no torch: it calls {FIRST_OF_2_10} but links none of libtorch_cpu.so, "
                               "libtorch.so (its DT_NEEDED), where the loader would find them"), data["verdict"]
    linked = json.loads(shimgen("audit", compile_so(tmp_path, "linked", [FIRST_OF_2_10]), "--json").stdout)
    assert {"libtorch.so", "libtorch_cpu.so"} <= set(linked["binaries"][0]["needed"])


@pytest.mark.slow
@pytest.mark.parametrize("name", releases.load().runtimes)
def test_each_group_is_reached_through_its_libraries(name: str) -> None:
    """REACHED_THROUGH, against each runtime that has the group: a library through which a group is reached that is
    not one of the group's own names the group's library as needed (libtorch.so needs libtorch_cuda.so)."""
    rt = runtimes.find(name)
    _runtimes_found()
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    lib = os.path.join(rt.torch.root, "lib")
    checked = 0
    for group, through in libtorch_exports.REACHED_THROUGH.items():
        own = libtorch_exports.GROUPS[group]
        if not os.path.exists(os.path.join(lib, own[0])):
            continue  # a CPU wheel: no libtorch_cuda.so
        for via in (v for v in through if v not in own):
            needed = binaries.needed_libraries(binaries.Binary(via, None, os.path.join(lib, via)))
            assert own[0] in needed, (group, via, needed)
            checked += 1
    assert checked >= (1 if os.path.exists(os.path.join(lib, "libtorch_cuda.so")) else 0)


def test_a_wheel_is_audited_by_its_shared_objects(tmp_path) -> None:
    ok = compile_so(tmp_path, "ok", [FIRST_OF_2_10])
    new = compile_so(tmp_path, "new", [FIRST_OF_2_14])
    wheel = tmp_path / "ext-0.1-cp39-abi3-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(ok, "ext/_C.abi3.so")
        z.write(new, "ext/libnew.so")
        z.writestr("ext/__init__.py", "")
    proc = shimgen("audit", str(wheel), "--target", "2.10")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert f"{wheel}!ext/_C.abi3.so: loads on torch 2.10-{NEWEST} (target 2.10)" in lines
    assert f"{wheel}!ext/libnew.so: needs torch >= 2.14 (target 2.10): {FIRST_OF_2_14}" in lines
    assert lines[-1] == "2 binaries: 1 load on their whole range, 1 do not"
    # a folder holding the wheel and a library: both found, in order
    folder = shimgen("audit", str(tmp_path), "--target", "2.14", "--json")
    names = [(b["path"], b["member"]) for b in json.loads(folder.stdout)["binaries"]]
    assert names == [(str(tmp_path / "ext-0.1-cp39-abi3-linux_x86_64.whl"), "ext/_C.abi3.so"),
                     (str(tmp_path / "ext-0.1-cp39-abi3-linux_x86_64.whl"), "ext/libnew.so"),
                     (new, None), (ok, None)]
    assert folder.returncode == 0, folder.stdout


def test_json_is_deterministic_and_documented(tmp_path) -> None:
    so = compile_so(tmp_path, "new", [FIRST_OF_2_10, FIRST_OF_2_14])
    runs = [shimgen("audit", so, "--json", "--target", "2.10") for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].returncode == 1
    data = json.loads(runs[0].stdout)
    assert set(data) == {"format", "releases", "ok", "binaries"} and data["format"] == audit.JSON_FORMAT
    b = data["binaries"][0]
    assert set(b) == {"path", "member", "target", "ok", "verdict", "loads_on", "problems", "unmeasured",
                      "variant_libraries", "stable", "cxx", "python", "python_checked", "other", "versions", "needed"}
    assert b["loads_on"] == [str(r) for r in DATA.releases if r >= Version(2, 14)]
    assert {s["name"]: (s["first"], s["last"]) for s in b["stable"]} == {
        FIRST_OF_2_10: ("2.10", str(NEWEST)), FIRST_OF_2_14: ("2.14", str(NEWEST))}
    with open(os.path.join(ROOT, "docs", "audit.md"), encoding="utf-8") as f:
        doc = f.read()
    for key in list(data) + list(b):
        assert f'"{key}"' in doc, key


def test_a_release_dropped_inside_the_range_fails(tmp_path) -> None:
    """A function the newest releases no longer export: the range ends early (recorded data made up here: no
    measured function has been dropped yet)."""
    so = compile_so(tmp_path, "old", ["torch_gone_after_2_12", FIRST_OF_2_10])
    rels = DATA.releases
    made_up = libtorch_exports.build({r: (f"{r}.0", {"libtorch": {FIRST_OF_2_10} | (
        {"torch_gone_after_2_12"} if r <= Version(2, 12) else set())}) for r in rels})
    with binaries.opened([so]) as found:
        rep = audit.classify(found[0], Version(2, 10), made_up)
    assert not rep.ok
    assert rep.verdict == "not on torch >= 2.13: torch_gone_after_2_12 (last exported by 2.12)"
    assert rep.loads_on == [r for r in rels if r <= Version(2, 12)]  # 2.9 too: the target only sets the range


def test_unknown_and_weak_functions(tmp_path) -> None:
    """A stable-named function no libtorch exports blocks every release; the same one weak blocks none."""
    so = compile_so(tmp_path, "unknown", ["aoti_torch_no_such_function"])
    proc = shimgen("audit", so)
    assert proc.returncode == 1
    assert "exported by no recorded libtorch (2.9-" in proc.stdout and "aoti_torch_no_such_function" in proc.stdout
    weak = tmp_path / "weak.c"
    weak.write_text("__attribute__((weak)) int aoti_torch_no_such_function(void);\n"
                    "int f(void) { return aoti_torch_no_such_function ? aoti_torch_no_such_function() : 0; }\n")
    out = str(tmp_path / "weak.so")
    subprocess.run([CC, "-shared", "-fPIC", "-o", out, str(weak)], check=True)
    proc = shimgen("audit", out, "--target", "2.9")
    assert proc.returncode == 0 and f"loads on torch 2.9-{NEWEST}" in proc.stdout, proc.stdout


def test_glibc_and_python_symbols_are_reported(tmp_path) -> None:
    src = tmp_path / "py.c"
    src.write_text("#include <string.h>\nint PyModule_AddObjectRef(void*, const char*, void*);\n"
                   "int _PyArg_NoKwnames(const char*, void*);\n"
                   "int f(char* d, const char* s, size_t n) { memcpy(d, s, n);\n"
                   "  return PyModule_AddObjectRef(0, 0, 0) + _PyArg_NoKwnames(0, 0); }\n")
    out = str(tmp_path / "py.so")
    subprocess.run([CC, "-shared", "-fPIC", "-o", out, str(src)], check=True)
    data = json.loads(shimgen("audit", out, "--json").stdout)["binaries"][0]
    assert data["versions"].get("GLIBC") and "memcpy" in data["other"]
    if audit.limited_api() is None:
        assert data["python_checked"] is False
    else:  # abi3info (abi3audit's data): PyModule_AddObjectRef is in the limited API from 3.10
        assert {p["name"]: p["limited_api_since"] for p in data["python"]} == {
            "PyModule_AddObjectRef": "3.10", "_PyArg_NoKwnames": None}


# ---- bad input -----------------------------------------------------------------------------------------------


def test_bad_inputs_are_one_line_exit_2(tmp_path) -> None:
    so = compile_so(tmp_path, "ok", [FIRST_OF_2_10])
    text = tmp_path / "notes.so"
    text.write_text("not a binary\n")
    truncated_elf = tmp_path / "cut.so"
    truncated_elf.write_bytes(open(so, "rb").read()[:300])
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(so, "pkg/_C.so")
    truncated_wheel = tmp_path / "cut.whl"
    truncated_wheel.write_bytes(wheel.read_bytes()[:200])
    pure = tmp_path / "pure.whl"
    with zipfile.ZipFile(pure, "w") as z:
        z.writestr("pkg/__init__.py", "")
    fifo = tmp_path / "pipe.so"
    os.mkfifo(fifo)
    empty = tmp_path / "empty"
    empty.mkdir()
    empty_file = tmp_path / "empty.so"
    empty_file.write_bytes(b"")
    elf_header_cut = tmp_path / "short.so"
    elf_header_cut.write_bytes(open(so, "rb").read()[:10])
    text_member = tmp_path / "text.whl"
    with zipfile.ZipFile(text_member, "w") as z:
        z.writestr("pkg/_C.so", "not a binary\n")
    bad_crc = bytearray(wheel.read_bytes())  # stored, not deflated: flip a byte of the library inside
    bad_crc[bad_crc.index(b"\x7fELF") + 100] ^= 0xFF
    corrupt_member = tmp_path / "crc.whl"
    corrupt_member.write_bytes(bytes(bad_crc))
    docs = tmp_path / "docs"  # a folder of files, none of them a binary
    docs.mkdir()
    (docs / "README.md").write_text("notes\n")
    (docs / "mod.py").write_text("x = 1\n")
    fifo_in_folder = tmp_path / "pipes"
    fifo_in_folder.mkdir()
    os.mkfifo(fifo_in_folder / "ext.so")
    fifo_wheel = tmp_path / "pipe.whl"
    os.mkfifo(fifo_wheel)
    obj = tmp_path / "obj.o"
    subprocess.run([CC, "-c", "-fPIC", "-o", str(obj), "-x", "c", "-"], input=b"int f(void){return 0;}\n", check=True)
    cases = [
        (text, "not an ELF shared object"),
        (truncated_elf, "a corrupt ELF file"),
        (truncated_wheel, "a corrupt or truncated wheel"),
        (pure, "a wheel with no shared object"),
        (fifo, "it is a FIFO"),
        (empty, "a folder with no shared object"),
        (tmp_path / "missing.so", "no such file or folder"),
        (obj, "a relocatable object (.o), not a shared object"),
        (empty_file, "an empty file, not a shared object"),
        (elf_header_cut, "a truncated ELF file (10 bytes)"),
        (text_member, "!pkg/_C.so: not an ELF shared object"),
        (corrupt_member, "a corrupt or truncated wheel (Bad CRC-32"),
        (docs, "a folder with no shared object (*.so) or wheel (*.whl) in it"),
        (fifo_wheel, "it is a FIFO, not a shared object or a wheel"),
    ]
    for path, reason in cases:
        line = assert_one_line_error(shimgen("audit", str(path)), str(path), reason)
        assert line.count(str(path)) == 1, line
    # a FIFO found in a folder is named by its own path
    assert_one_line_error(shimgen("audit", str(fifo_in_folder)), f"{fifo_in_folder / 'ext.so'}: it is a FIFO")
    # the build integrations' form (--after-link): the same one line, exit 2
    for path, reason in cases[:3]:
        assert_one_line_error(shimgen("audit", "--after-link", str(path)), str(path), reason)
    # a good binary named with a bad one: nothing is reported for either
    assert_one_line_error(shimgen("audit", so, str(text)), "not an ELF")
    assert_one_line_error(shimgen("audit", so, "--target", "2.7"), "--target", "2.9")
    assert_one_line_error(shimgen("audit"), "PATH")


# ---- against reality -------------------------------------------------------------------------------------------


LOAD = """
import ctypes, os, sys
import torch  # first: the library links libtorch_cpu.so, which torch's import loads
try:
    ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
    print("loaded")
except OSError as e:
    print("failed", e)
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["2.10.0", "2.14.1"])
def test_the_verdict_is_what_loading_does(tmp_path, name: str) -> None:
    """Linked as an extension is (against libtorch_cpu.so), each library loads with RTLD_NOW in a runtime exactly
    when the audit says that release is in its range."""
    rt = runtimes.find(name)
    if rt is None:
        if os.environ.get("CI") == "true":
            pytest.fail(runtimes.missing_reason([name]))
        pytest.skip(runtimes.missing_reason([name]))
    release = Version.parse(name)
    for so in (compile_so(tmp_path, "ok", [FIRST_OF_2_10]),
               compile_so(tmp_path, "new", [FIRST_OF_2_10, FIRST_OF_2_14]),
               compile_so(tmp_path, "unlinked", [FIRST_OF_2_10], link_torch=False)):
        data = json.loads(shimgen("audit", so, "--json").stdout)["binaries"][0]
        predicted = str(release) in data["loads_on"]
        proc = subprocess.run([rt.python, "-c", LOAD, so], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.startswith("loaded" if predicted else "failed"), (so, name, predicted, proc.stdout)
        if not predicted:
            assert "undefined symbol" in proc.stdout and (FIRST_OF_2_14 in proc.stdout or "unlinked" in so)


def test_a_cuda_function_is_judged_where_its_library_was_measured(tmp_path) -> None:
    """libtorch_cuda.so is measured only on CUDA wheels: a release without it is named, not taken as a drop."""
    cuda = DATA.groups["libtorch_cuda"]
    if not cuda.symbols:
        pytest.skip("the recorded exports hold no libtorch_cuda.so")
    fn = min(s for s, rs in cuda.symbols.items() if rs == frozenset(cuda.releases))
    so = compile_so(tmp_path, "cuda", [fn])
    data = json.loads(shimgen("audit", so, "--json", "--target", "2.9").stdout)["binaries"][0]
    unmeasured = [r for r in DATA.releases if r not in cuda.releases]
    assert data["ok"] and data["loads_on"] == [str(r) for r in DATA.releases]
    assert data["variant_libraries"] == ["libtorch_cuda.so"]
    assert "; CUDA builds of torch only (libtorch_cuda.so)" in data["verdict"], data["verdict"]
    assert data["unmeasured"] == [{"release": str(r), "libraries": ["libtorch_cuda.so"]} for r in unmeasured]
    if unmeasured:
        assert data["verdict"].endswith(f"libtorch_cuda.so of {', '.join(map(str, unmeasured))} not measured")
