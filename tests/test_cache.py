"""shimgen.base.cache: a cached value is build()'s value, keyed by everything it is derived from."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

from shimgen.base import cache
from shimgen.facts import history, scalar_facts as scalars
from shimgen.generate import table


def test_derived_reads_what_it_built_and_rebuilds_a_corrupt_entry(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return {"value": [1, 2, 3]}

    assert cache.derived("x", [b"data"], build) == {"value": [1, 2, 3]}
    assert cache.derived("x", [b"data"], build) == {"value": [1, 2, 3]} and len(calls) == 1  # read back
    assert cache.derived("x", [b"other data"], build) and len(calls) == 2  # other inputs: another key
    for entry in [p for p in os.listdir(tmp_path) if p.startswith("x-")]:
        (tmp_path / entry).write_bytes(b"not a pickle")
    assert cache.derived("x", [b"data"], build) == {"value": [1, 2, 3]}  # a corrupt entry is rebuilt
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")]  # no temporary file left behind


def test_caching_off_and_unwritable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", "")
    assert cache.directory() is None and cache.derived("x", [b""], lambda: 5) == 5
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(blocked / "sub"))  # cannot be created: no cache, same value
    assert cache.derived("x", [b""], lambda: 6) == 6


@pytest.mark.parametrize("home", ["", "relative/home"])
def test_a_home_that_is_not_a_folder_means_no_cache(monkeypatch, home: str) -> None:
    """HOME empty (or relative) names no folder: no cache, never one at /.cache or under the working directory
    (XDG: a relative $XDG_CACHE_HOME is ignored too)."""
    monkeypatch.delenv("SHIMGEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", home)
    for xdg in (None, "", "relative/cache"):
        if xdg is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert cache.directory() is None, (home, xdg)
    from shimgen.tools.porting import clang_scan  # `shimgen port`'s headers: a folder of the run, removed after

    folder = clang_scan._cache_dir()
    assert os.path.isabs(folder) and not folder.startswith("/.cache") and os.path.isdir(folder)
    clang_scan.discard_temporary()
    assert not os.path.exists(folder)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")  # an absolute XDG_CACHE_HOME still applies
    assert cache.directory() == "/somewhere/cache/shimgen/derived"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/someone")
    assert cache.directory() == "/home/someone/.cache/shimgen/derived"


def test_cached_package_data_equals_the_parsed_data(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    for load in (scalars.load, history.load, table.load):
        load.cache_clear()
        cold = load()  # built and stored
        load.cache_clear()
        warm = load()  # read from the cache
        assert warm == cold, load.__module__
        load.cache_clear()
    assert any(p.startswith("scalar_facts-") for p in os.listdir(tmp_path))


def test_the_folder_is_kept_under_its_size_limit_least_recently_used_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SHIMGEN_CACHE_MAX_MB", "1")  # 1 MiB: prune down to 768 KiB once it holds more
    for i in range(6):  # 6 x 200 KiB, each older than the next
        p = tmp_path / f"old-{i}.pickle"
        p.write_bytes(b"x" * 200 * 1024)
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    assert cache.read(str(tmp_path / "old-0.pickle")) is not None  # a read makes old-0 the most recent
    assert cache.derived("value", [b"new"], lambda: b"y" * 100 * 1024) == b"y" * 100 * 1024
    left = sorted(p.name for p in tmp_path.iterdir())
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 768 * 1024
    assert "old-0.pickle" in left and "old-1.pickle" not in left and "old-5.pickle" in left, left
    assert any(n.startswith("value-") for n in left)


def test_the_code_digest_covers_the_subpackages(tmp_path) -> None:
    """A change to any module of the generation stack, a route's included, gives cached values another key; one
    to a tool (which derives no cached value) does not."""
    copy = tmp_path / "shimgen"
    package = os.path.dirname(os.path.dirname(cache.__file__))
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))

    def digest() -> bytes:
        spec = importlib.util.spec_from_file_location("cache_copy", copy / "base" / "cache.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # a fresh module: its own memo of code()
        return module.code()

    before = digest()
    with open(copy / "tools" / "port.py", "a") as f:
        f.write("\n# changed\n")
    assert digest() == before
    with open(copy / "generate" / "routes" / "composition.py", "a") as f:
        f.write("\n# changed\n")
    assert digest() != before
