"""libtorch's device C shims as data (shimgen/data/device_shims.json, `python -m shimgen.dev device-shims`).

The committed data is checked against what the command makes of the headers: of every release when
../shared/torch-shims is beside this checkout, and always of the installed wheel's own c_shim_cpu.h /
c_shim_cuda.h (a fresh clone has torch 2.13.0 installed) and of what its libtorch_cpu.so exports (`nm`).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from shimgen.facts import libtorch_device_shims as ds
from shimgen.facts.versions import Version

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared", "torch-shims")
TORCH_DIR = os.path.dirname(torch.__file__)
INSTALLED = Version.parse_release(torch.__version__)
RUNTIME = torch.__version__.split("+")[0]


def _header(device: str) -> str:
    return os.path.join(TORCH_DIR, "include", "torch", "csrc", "inductor", "aoti_torch", "generated",
                        f"c_shim_{device}.h")


def test_data_round_trips_byte_for_byte() -> None:
    text = open(ds.data_path(), encoding="utf-8").read()
    assert ds.dumps(ds.loads(text)) == text


@pytest.mark.parametrize("device", ds.DEVICES)
def test_installed_header_agrees_with_the_data(device: str) -> None:
    """Every shim the installed wheel declares is in the data with the same op, version, gate and parameter types,
    first declared no later than this release; every shim the data says this release declares is declared."""
    data = ds.load()
    if INSTALLED not in data.releases:
        pytest.skip(f"the data covers {[str(r) for r in data.releases]}, not the installed torch {INSTALLED}")
    path = _header(device)
    assert os.path.isfile(path), f"the torch wheel ships {path}"
    declared = ds.parse_header(open(path, encoding="utf-8").read(), ds.known_ops(), path)
    assert len(declared) > 100
    for d in declared:
        s = data.shims.get(d.function)
        assert s is not None, f"{d.function} is declared by the installed header but not in the data"
        assert (s.op, s.version, s.gate) == (d.op, d.version, d.gate), d.function
        assert ds.c_types(s.params) == ds.c_types(d.params), d.function
        assert s.since <= INSTALLED
    expected = {s.function for s in data.shims.values()
                if s.device == device and s.since <= INSTALLED and (s.removed is None or s.removed > INSTALLED)}
    assert expected == {d.function for d in declared}


def test_installed_libtorch_exports_what_the_data_says() -> None:
    """The data's export facts for the installed runtime are what `nm -D --defined-only` measures now."""
    data = ds.load()
    if RUNTIME not in data.exports:
        pytest.skip(f"the data measured no runtime {RUNTIME} (runtimes: {sorted(data.exports)})")
    measured = ds.missing_exports(data, os.path.join(TORCH_DIR, "lib"), INSTALLED)
    assert measured == data.exports[RUNTIME]
    # and the measurement can fail: a symbol the library does not define is reported missing
    fake = ds.Shim("aoti_torch_cpu_no_such_shim", "cpu", "abs.default", 1, INSTALLED, None, ())
    more = ds.DeviceShims(data.releases, {**data.shims, fake.function: fake}, data.exports)
    assert "aoti_torch_cpu_no_such_shim" in ds.missing_exports(more, os.path.join(TORCH_DIR, "lib"), INSTALLED)["cpu"]


def test_the_route_facts_of_common_calls() -> None:
    """What the data says about the overloads that matter most (and that usable() reads exports)."""
    data = ds.load()
    assert [s.function for s in data.of("add.Tensor", "cpu")] == ["aoti_torch_cpu_add_Tensor"]
    assert data.shims["aoti_torch_cpu_add_Tensor"].params[-2:] == ("double alpha", "AtenTensorHandle* ret0")
    assert data.usable("aoti_torch_cpu_pow_Tensor_Scalar", Version(2, 10))
    assert not data.of("gelu.default", "cpu")  # no device shim: another route must serve it
    gated = data.shims["aoti_torch_cpu__grouped_mm"]
    assert gated.since == Version(2, 12) and not data.usable(gated.function, Version(2, 11))
    rt = next(iter(data.exports))
    broken = ds.DeviceShims(data.releases, data.shims, {**data.exports, rt: {"cpu": ("aoti_torch_cpu_add_Tensor",)}})
    assert not broken.usable("aoti_torch_cpu_add_Tensor", Version(2, 9))


def test_committed_data_is_what_the_command_builds_from_the_shipped_headers() -> None:
    if not os.path.isdir(SHARED):
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have the release headers at {SHARED}")
        pytest.skip(f"the release headers ({SHARED}) are not beside this checkout")
    r = subprocess.run([sys.executable, "-m", "shimgen.dev", "device-shims", SHARED, "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_extending_release_by_release_builds_what_every_header_builds() -> None:
    """`python -m shimgen.dev release add` extends the data one release at a time (ds.extend); from any
    release on, that gives byte for byte what the command builds from every release's headers."""
    if not os.path.isdir(SHARED):
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have the release headers at {SHARED}")
        pytest.skip(f"the release headers ({SHARED}) are not beside this checkout")
    ops = ds.known_ops()
    headers = {r: {dev: ds.parse_header(open(p, encoding="utf-8").read(), ops, p) for dev, p in paths.items()}
               for r, paths in ds.header_releases(SHARED).items()}
    full = ds.dumps(ds.build(headers))
    releases = sorted(headers)
    for cut in range(1, len(releases)):
        data = ds.build({r: headers[r] for r in releases[:cut]})
        for r in releases[cut:]:
            data = ds.extend(data, r, headers[r])
        assert ds.dumps(data) == full, f"extended from {releases[cut]}"
