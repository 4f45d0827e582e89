"""The composition kernels (data/scalar_facts.yaml `kernel_compositions`, route `composition`): one registry entry
per kernel, named by the rows' `kernel` value. An entry holds what the route and the prover ask of a kernel: where
a row of it has a variant at a release (`variant_at`), the wrapper's doc lines (`describe`), its C++ body (`body`,
calling its scalar.h helpers) and what its prover runs (`prover_spec`: the hook, in the prover module of the same
name under shimgen/proofs/provers/kernels, and the facts it reads). The route and the prover ask the entry; nothing
compares a kernel's name.

Adding a kernel is one entry (in a module of this package), its C++ helper in scalar.h, its prover hook (in the
prover module named as the entry's module) and a test (docs/kernels.md).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING

from shimgen.base.errors import ShimgenError

if TYPE_CHECKING:
    from shimgen.generate.cpp_model import Variant, Wrapper
    from shimgen.generate.plan import Plan
    from shimgen.generate.routes import Query, Route


class Kernel:
    """One composition kernel. `name` is the rows' `kernel` value; `prover` the hook its rows are proven by, in its
    prover module (`prover_module`: shimgen/proofs/provers/kernels/<this entry's module>.py, its PROVERS), which
    the compositions worker loads."""

    name = ""
    prover = ""

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The variant of the row's op at q.level, or None where this kernel cannot compute it there."""
        raise NotImplementedError

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        """The wrapper's doc lines: what it computes, on which runtimes that is proven, what it refuses."""
        raise NotImplementedError

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """The wrapper's C++ body (after autocast's, where the row names one)."""
        raise NotImplementedError

    @property
    def prover_module(self) -> str:
        """The entry's prover module, paired with it by file name: the name of the module defining its class."""
        return type(self).__module__.rpartition(".")[2]

    def prover_spec(self, rule: dict, out: str) -> dict:
        """What the compositions worker reads besides the row (`out`: the overload's out= argument, or ""): the hook
        that proves the row, and the kernel's facts the hook reads (`module`, where it is another prover module's
        hook than prover_module's)."""
        return {"prover": self.prover}


@functools.cache
def modules() -> list[str]:
    """The entries' modules: every module of this package but `common` (the helpers they share), in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name != "common")


_REGISTRY: dict[str, Kernel] = {}
_LOADED: set[str] = set()


def register(*entries: Kernel) -> None:
    for e in entries:
        assert e.name and e.name not in _REGISTRY, e.name
        _REGISTRY[e.name] = e


def _load(module: str) -> None:
    if module not in _LOADED:
        importlib.import_module(f"shimgen.generate.routes.kernels.{module}")
        _LOADED.add(module)


def registry() -> dict[str, Kernel]:
    """kernel name -> entry, every module of modules() loaded."""
    for m in modules():
        _load(m)
    return _REGISTRY


def get(name: str, op: str | None = None) -> Kernel:
    """The entry of kernel `name`; an unknown kernel is a data error (one line). Most kernels live in the module of
    their name: that module alone is loaded for them (a run of a few ops imports a few of the ~30 modules), the
    others where a name is not found there."""
    entry = _REGISTRY.get(name)
    if entry is None and name in modules():
        _load(name)
        entry = _REGISTRY.get(name)
    if entry is None:
        entry = registry().get(name)
    if entry is None:
        raise ShimgenError(f"data/scalar_facts.yaml kernel_compositions: unknown kernel `{name}` (known: "
                           f"{', '.join(sorted(registry()))})", op=op)
    return entry
