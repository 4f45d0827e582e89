"""Adding a torch release end to end (`python -m shimgen.dev release add X.Y.Z`), tried as a dry run on a
made-up 2.16.0 (2.15.0's files, with one more C shim and a `_v2` in its header): every change is computed and
printed, nothing is written. Re-adding a release shimgen already has changes nothing."""

from __future__ import annotations

import io
import os
import subprocess

from shimgen.facts import libtorch_device_shims as device_shims
from shimgen.proofs.provers import release
from shimgen.facts.versions import Version
from tests.fixtures import make_release_yamls as fixture

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shared(tmp_path, as_release: str, extra_decls: str = "", cpu_header: str | None = None) -> str:
    """A ../shared-like folder holding 2.15.0's files as `as_release` (and `cpu_header` as its c_shim_cpu.h)."""
    for folder, names in (("torch-schemas", ("native_functions.yaml", "tags.yaml")), ("torch-shims", ("c_shim_aten.h",))):
        d = tmp_path / folder / as_release
        d.mkdir(parents=True)
        for n in names:
            text = fixture.read("2.15.0", n)
            if n == "c_shim_aten.h":
                text = text.replace('#ifdef __cplusplus\n}', extra_decls + '#ifdef __cplusplus\n}')
            (d / n).write_text(text, encoding="utf-8")
    if cpu_header is not None:
        (tmp_path / "torch-shims" / as_release / "c_shim_cpu.h").write_text(cpu_header, encoding="utf-8")
    return str(tmp_path)


def _status() -> str:
    return subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "shimgen/data", "tests/fixtures"],
                          capture_output=True, text=True, check=True).stdout


def test_dry_run_of_a_new_release_names_every_change_and_writes_nothing(tmp_path) -> None:
    decls = ("AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_sort(AtenTensorHandle self, int64_t dim, "
             "int32_t descending, AtenTensorHandle* ret0, AtenTensorHandle* ret1);\n"
             "AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_amax_v2(AtenTensorHandle self);\n")
    shared = _shared(tmp_path, "2.16.0", decls)
    before = _status()
    out = io.StringIO()
    assert release.add("2.16.0", shared, None, dry_run=True, out=out) == 0
    text = out.getvalue()
    assert "2.9, 2.10, 2.11, 2.12, 2.13, 2.14, 2.15, 2.16" in text  # the history gets the release
    assert "+ sort.default: libtorch 2.16 ships its C shim" in text
    assert "+ amax.default: libtorch 2.16 ships aoti_torch_aten_..._v2" in text
    assert "runtimes: (none of 2.16) -> 2.16.0" in text
    assert "python -m shimgen.dev probe --write" in text and "tests/regen_golden.sh" in text
    for path in ("shimgen/data/history.json", "shimgen/data/manifest.yaml", "shimgen/data/releases.yaml",
                 "tests/fixtures/releases/2.16.0/native_functions.yaml.xz"):
        assert f"dry run: would write {path}" in text, path
    assert _status() == before
    assert not os.path.exists(os.path.join(ROOT, "tests", "fixtures", "releases", "2.16.0"))


def test_re_adding_a_known_release_changes_nothing(tmp_path) -> None:
    out = io.StringIO()
    assert release.add("2.15.0", _shared(tmp_path, "2.15.0"), None, dry_run=True, out=out) == 0
    assert "would write" not in out.getvalue(), out.getvalue()


def test_a_newer_patch_replaces_the_runtime_of_its_minor_release() -> None:
    text = open(os.path.join(ROOT, "shimgen", "data", "releases.yaml"), encoding="utf-8").read()
    new, changes = release.releases_changes("2.14.2", text)
    assert changes == ["runtimes: 2.14.1 -> 2.14.2"]
    assert '"2.13.0", "2.14.2", "2.15.0"' in new and "2.14.1\"" not in new.split("runtimes:")[1].split("\n")[0]


def _cpu_header(release: Version, extra: str) -> str:
    """The c_shim_cpu.h the committed data says `release` declares, plus `extra` declarations."""
    data = device_shims.load()
    live = sorted(fn for fn, s in data.shims.items() if s.device == "cpu" and s.since <= release
                  and (s.removed is None or s.removed > release))
    decls = [f"AOTI_TORCH_EXPORT AOTITorchError {fn}({', '.join(data.shims[fn].params)});" for fn in live]
    return "\n".join(decls + [extra]) + "\n"


def test_a_new_release_adds_its_device_shims_and_nothing_else(tmp_path) -> None:
    new = "AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_amax_v9(AtenTensorHandle self, AtenTensorHandle* ret0);"
    shared = _shared(tmp_path, "2.16.0", cpu_header=_cpu_header(Version(2, 15), new))
    out = io.StringIO()
    assert release.add("2.16.0", shared, None, dry_run=True, out=out) == 0
    text = out.getvalue()
    assert "4. device shims: 1 changes\n     + aoti_torch_cpu_amax_v9\n" in text, text
    assert "dry run: would write shimgen/data/device_shims.json" in text
    assert "c_shim_cpu.h.xz" not in text  # the device headers are package data's source, not test fixtures


def test_device_shims_extended_release_by_release_equal_those_built_from_every_header() -> None:
    data = device_shims.load()
    last = max(data.releases)
    declared = {"cpu": [device_shims.Declared(fn, "cpu", s.op, s.version, s.gate, s.params)
                        for fn, s in data.shims.items() if s.device == "cpu" and s.since <= last and s.removed is None]}
    assert device_shims.extend(data, last, declared) is data  # re-adding the newest release changes nothing
    gone = declared["cpu"][0].function
    later = device_shims.extend(data, Version(last.major, last.minor + 1),
                                {"cpu": [d for d in declared["cpu"] if d.function != gone]})
    assert later.shims[gone].removed == Version(last.major, last.minor + 1)
    assert all(s == data.shims[fn] for fn, s in later.shims.items() if fn != gone)
