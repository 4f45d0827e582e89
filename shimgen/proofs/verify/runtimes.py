"""Other torch releases to run generated code on: one virtual environment per release, outside the repository.

A runtime named `2.10.0` is the venv `$SHIMGEN_RUNTIMES/torch-2.10.0` (default base: ~/.cache/shimgen/runtimes),
found without starting it: its interpreter `bin/python` and its torch package (C++ headers under `include/`,
libraries under `lib/`). The installed torch counts as the runtime of its own version when no venv of that
name exists. `.ci/run` creates the venvs CI needs; any venv made like it works:

    python -m venv $SHIMGEN_RUNTIMES/torch-2.10.0
    $SHIMGEN_RUNTIMES/torch-2.10.0/bin/pip install torch==2.10.0 pyyaml==6.0.3
"""

from __future__ import annotations

import glob
import os
import re
import sys
from dataclasses import dataclass

from shimgen.facts import releases
from shimgen.base.errors import ShimgenError
from shimgen.proofs.verify.build import Torch, find_torch
from shimgen.facts.versions import FIRST_STABLE, Version

ENV = "SHIMGEN_RUNTIMES"
DEFAULT_BASE = os.path.join("~", ".cache", "shimgen", "runtimes")
_VERSION_RE = re.compile(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_NAME_RE = re.compile(r"^\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class Runtime:
    name: str  # "2.10.0"
    python: str  # the interpreter that imports this torch
    torch: Torch  # its headers and libraries

    @property
    def release(self) -> Version:
        return Version.parse(self.name)

    @property
    def installed(self) -> bool:
        return self.python == sys.executable


def base_dir() -> str:
    return os.path.expanduser(os.environ.get(ENV) or DEFAULT_BASE)


def _torch_version(root: str) -> str | None:
    try:
        with open(os.path.join(root, "version.py")) as f:
            m = _VERSION_RE.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def find(name: str, base: str | None = None) -> Runtime | None:
    """The runtime `name` (X.Y.Z), or None if neither a venv nor the installed torch is that release."""
    if not _NAME_RE.match(name):
        raise ShimgenError(f"bad runtime {name!r}: expected a torch release X.Y.Z such as 2.10.0")
    venv = os.path.join(base or base_dir(), f"torch-{name}")
    python = os.path.join(venv, "bin", "python")
    for root in sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "torch"))):
        version = _torch_version(root)
        if os.access(python, os.X_OK) and version and version.split("+")[0] == name:
            return Runtime(name, python, Torch(root, version))
    installed = find_torch()
    if installed.version.split("+")[0] == name:
        return Runtime(name, sys.executable, installed)
    return None


def resolve(names: list[str], base: str | None = None) -> tuple[list[Runtime], list[str]]:
    """(the runtimes found, in release order; the names not found)."""
    found, missing = [], []
    for n in names:
        r = find(n, base)
        (found.append(r) if r else missing.append(n))
    return sorted(found, key=lambda r: tuple(int(x) for x in r.name.split("."))), missing


def missing_reason(missing: list[str], base: str | None = None) -> str:
    where = base or base_dir()
    return (f"torch runtime(s) {', '.join(missing)} not found: expected venvs {where}/torch-X.Y.Z "
            f"(set ${ENV}; `.ci/run` creates them)")


# The release matrix (docs/releases.md): one patch release per minor release of the stable ABI.
RELEASES = releases.load().runtimes  # data/releases.yaml


def targets(up_to: Version) -> list[Version]:
    """The releases an extension can target, from the first stable one up to `up_to` (the headers' release)."""
    return [Version(FIRST_STABLE.major, m) for m in range(FIRST_STABLE.minor, up_to.minor + 1)]
