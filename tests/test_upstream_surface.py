"""data/upstream_surface.yaml: what each release's own torch/csrc/stable/ops.h defines, recorded from the shipped
headers (python -m shimgen.dev upstream-surface record), and how a run's default op set follows the yaml's release."""

from __future__ import annotations

import os
import shutil

import pytest

from shimgen.generate import plan as plan_mod
from shimgen.facts import upstream_surface
from shimgen.generate.parse import NativeYaml, default_yaml_path, detect_release
from shimgen.proofs.verify import runtimes
from shimgen.facts.versions import Version

RUNTIMES = ["2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]


@pytest.mark.parametrize("name", RUNTIMES)
def test_recorded_surface_is_the_shipped_headers(name: str) -> None:
    rt = runtimes.find(name)
    if rt is None:
        pytest.skip(runtimes.missing_reason([name]))
    header = os.path.join(rt.torch.include_dirs[0], "torch", "csrc", "stable", "ops.h")
    with open(header, encoding="utf-8") as f:
        found = upstream_surface.parse(f.read(), NativeYaml().all_op_names())
    assert upstream_surface.load()[Version.parse(name)] == found


def test_every_release_only_adds() -> None:
    data = upstream_surface.load()
    releases = sorted(data)
    assert releases[0] <= Version(2, 10) and releases[-1] >= Version(2, 15), releases
    for old, new in zip(releases, releases[1:]):
        assert set(data[old]["functions"]) <= set(data[new]["functions"]), (old, new)
    assert {"from_blob", "parallel_for", "get_num_threads"} <= set(data[releases[-1]]["functions"])
    assert {"sort.default", "sort.stable", "view.dtype", "is_pinned.default"} <= set(data[Version(2, 15)]["ops"])


def test_default_set_follows_the_yaml_release() -> None:
    """The installed (2.13) yaml: upstream's 2.13 surface is in the default plan; permute (2.14's) is not."""
    names = {op.name for op in plan_mod.make(None).ops}
    assert set(upstream_surface.load()[Version(2, 13)]["ops"]) <= names
    assert "permute.default" not in names


def test_a_newer_torch_than_the_data_is_read_from_its_header(tmp_path) -> None:
    """A wheel newer than every recorded release: its own ops.h says what its upstream surface is."""
    site = tmp_path / "site-packages"
    native = site / "torchgen" / "packaged" / "ATen" / "native"
    native.mkdir(parents=True)
    shutil.copy(default_yaml_path(), native / "native_functions.yaml")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.99.0+cpu'\n")
    stable = site / "torch" / "include" / "torch" / "csrc" / "stable"
    stable.mkdir(parents=True)
    (stable / "ops.h").write_text('inline Tensor permute(const Tensor& self) {\n'
                                  '  torch_call_dispatcher("aten::permute", "", stack, 1);\n}\n')
    yaml_path = str(native / "native_functions.yaml")
    assert detect_release(yaml_path) == (Version(2, 99), None)
    assert upstream_surface.for_yaml(Version(2, 99), yaml_path, NativeYaml(yaml_path).all_op_names()) == \
        ["permute.default"]
