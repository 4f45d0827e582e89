"""An installed, non-editable shimgen has every file the repository's does: pyproject.toml lists each package (a
folder of modules) and its package-data globs match each tracked data file (the C++ of shimgen/cxx and its
kernels' folder, the yaml data, the templates, the CMake package). A folder of modules left out of `packages`
once shipped a wheel whose first run failed on an import."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _setuptools() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def _tracked(folder: str) -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:  # pragma: no cover - CI runs on a clone
        pytest.skip(f"git ls-files is unavailable here ({e}): the check reads the tracked files")
    return out.splitlines()


def _shipped(path: str, packages: list[str], data: dict[str, list[str]]) -> bool:
    """Does a wheel hold `path` (a tracked file under shimgen/)? A module: its folder is a listed package. A data
    file: a glob of a listed package above it matches its path from that package's folder."""
    folder, name = os.path.split(path)
    if name.endswith(".py") and folder.replace("/", ".") in packages:
        return True  # a module (a .py in no package may still ship as data: the provers' kernel modules)
    for package, globs in data.items():
        base = package.replace(".", "/") + "/"
        if package in packages and path.startswith(base) and any(_glob_matches(path[len(base):], g) for g in globs):
            return True
    return False


def _glob_matches(rel: str, glob: str) -> bool:
    """setuptools' package-data glob: `*` stays within one folder."""
    parts, pattern = rel.split("/"), glob.split("/")
    return len(parts) == len(pattern) and all(fnmatch.fnmatchcase(p, g) for p, g in zip(parts, pattern))


def test_every_tracked_file_of_the_package_is_shipped() -> None:
    config = _setuptools()
    files = _tracked("shimgen")
    assert any(f.startswith("shimgen/cxx/kernels/") and f.endswith(".h") for f in files)
    left_out = [f for f in files if not _shipped(f, config["packages"], config["package-data"])]
    assert left_out == []


def test_the_check_would_catch_a_folder_left_out() -> None:
    config = _setuptools()
    packages = [p for p in config["packages"] if p != "shimgen.generate.routes"]
    assert not _shipped("shimgen/generate/routes/composition.py", packages, config["package-data"])
    assert not _shipped("shimgen/cxx/kernels/index.txt", config["packages"], {"shimgen": ["cxx/*.h"]})
    assert not _shipped("shimgen/cxx/kernels/compositions.h", config["packages"], {"shimgen": ["cxx/*.h"]})
    assert _shipped("shimgen/cxx/scalar.h", config["packages"], {"shimgen": ["cxx/*.h"]})
    assert not _shipped("shimgen/proofs/provers/kernels/renorm.py", config["packages"], {})
