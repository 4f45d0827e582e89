"""A model of C++ overload resolution over the generated wrappers, for the arguments extension authors write.

Which overload of `sum` does `sum(t, {1}, true)` reach, and is `sum(t, std::nullopt)` ambiguous? The facts are
data: how each kind of argument (`int` literal, `std::nullopt`, braced list `{int}`, ...) converts to each C++
parameter type (data/cpp_conversions.yaml; tests/test_overloads.py checks every entry against the compiler).
The rules are C++'s ([over.match.viable], [over.match.best]), reduced to what the wrappers' parameter types need:

* a candidate is viable if it takes that many arguments (the others have defaults) and every argument converts;
* candidate F1 is better than F2 if no argument converts worse and some argument converts better, by rank
  exact < const_ref < promotion < conversion < user; two user-defined conversions never decide (they are
  indistinguishable unless they are the same conversion, which ranks the same);
* the call reaches the viable candidate that is better than every other viable one; otherwise it is ambiguous,
  or has no match.

A rank that depends on the representation (a Scalar as `double`: an `int` converts by a standard conversion,
and competes with `int64_t`; as a class type, by a user-defined one, and loses to it) is the type's entry, so
the same rules answer for another representation given its entry.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import IntEnum
from importlib import resources

from shimgen.base import cache
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import load_yaml, package_yaml


class Rank(IntEnum):
    EXACT = 0
    CONST_REF = 1
    PROMOTION = 2
    CONVERSION = 3
    USER = 4


_ARRAY_RE = re.compile(r"^std::array<bool, \d+>$")


@dataclass(frozen=True)
class Conversions:
    kinds: dict[str, str]  # kind -> the C++ a probe passes for it
    types: dict[str, dict[str, Rank]]  # C++ parameter type -> kind -> rank

    def rank(self, cpp_type: str, kind: str) -> Rank | None:
        """How an argument of `kind` converts to a parameter of `cpp_type`; None: it does not."""
        if kind not in self.kinds:
            raise ShimgenError(f"unknown argument kind {kind!r} (data/cpp_conversions.yaml lists the kinds)")
        return self.entry(cpp_type).get(kind)

    def entry(self, cpp_type: str) -> dict[str, Rank]:
        key = "std::array<bool, {size}>" if _ARRAY_RE.match(cpp_type) else cpp_type
        found = self.types.get(key)
        if found is None:
            raise ShimgenError(f"C++ parameter type {cpp_type} has no entry in data/cpp_conversions.yaml")
        return found


@functools.cache
def load(path: str | None = None) -> Conversions:
    if path is None:
        raw = package_yaml("data/cpp_conversions.yaml")
    else:
        with open(path) as f:
            raw = load_yaml(f.read())
    kinds = {str(k): str(v) for k, v in raw["kinds"].items()}
    types: dict[str, dict[str, Rank]] = {}
    for cpp, entry in raw["types"].items():
        unknown = set(entry) - set(kinds)
        if unknown:
            raise ShimgenError(f"data/cpp_conversions.yaml: {cpp} names unknown kinds {sorted(unknown)}")
        types[str(cpp)] = {str(k): Rank[str(v).upper()] for k, v in entry.items()}
    return Conversions(kinds, types)


@dataclass(frozen=True)
class Candidate:
    """One C++ function of an overload set: its parameter types and how many of them need an argument."""

    label: str  # what the call reaches, e.g. `sum.dim_IntList`
    params: tuple[str, ...]
    required: int


@dataclass(frozen=True)
class Resolution:
    reached: Candidate | None  # None: ambiguous or no match
    viable: tuple[Candidate, ...]  # every viable candidate (the best ones first when ambiguous)

    @property
    def ambiguous(self) -> bool:
        return self.reached is None and len(self.viable) > 1

    def describe(self) -> str:
        if self.reached is not None:
            return self.reached.label
        if not self.viable:
            return "no match"
        return "ambiguous: " + " | ".join(c.label for c in self.viable)


def _ranks(c: Candidate, args: list[str], conv: Conversions) -> list[Rank] | None:
    if not (c.required <= len(args) <= len(c.params)):
        return None
    ranks = []
    for kind, cpp in zip(args, c.params):
        r = conv.rank(cpp, kind)
        if r is None:
            return None
        ranks.append(r)
    return ranks


def _better(a: list[Rank], b: list[Rank]) -> bool:
    """Is a candidate whose arguments convert with ranks `a` better than one with ranks `b`?"""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def resolve(candidates: list[Candidate], args: list[str], conv: Conversions | None = None) -> Resolution:
    """Which candidate a call with arguments of these kinds reaches."""
    conv = conv or load()
    viable = [(c, r) for c in candidates if (r := _ranks(c, args, conv)) is not None]
    for c, r in viable:
        if all(_better(r, r2) for c2, r2 in viable if c2 is not c):
            return Resolution(c, tuple(v for v, _ in viable))
    # Ambiguous: report the candidates no other one beats.
    best = tuple(c for c, r in viable if not any(_better(r2, r) for c2, r2 in viable if c2 is not c))
    return Resolution(None, best)


def may_tie(a: list[str], b: list[str], conv: Conversions | None = None) -> bool:
    """Can some call with one argument per parameter reach two functions with these parameter types equally well
    (an ambiguous call, if nothing else takes it)? Weighed over the kinds authors write (`{}` aside: every
    class type takes it). Position by position: the call ties if every position can tie, or if one position
    can favour `a` and another `b`."""
    conv = conv or load()
    options: list[frozenset[int]] = []
    for ta, tb in zip(a, b):
        signs = _signs(conv, ta, tb)
        if not signs:
            return False
        options.append(signs)
    if all(0 in o for o in options):
        return True
    favour_a = {i for i, o in enumerate(options) if -1 in o}
    favour_b = {i for i, o in enumerate(options) if 1 in o}
    return any(i != j for i in favour_a for j in favour_b)


RARE_KINDS = {"{}"}


def _signs(conv: Conversions, ta: str, tb: str) -> frozenset[int]:
    """How the kinds authors write rank for a parameter of type ta against one of type tb: -1 (ta better), 0, 1;
    remembered on `conv` (a whole yaml's overload sets ask for the same few hundred pairs 400,000 times)."""
    memo = conv.__dict__.setdefault("_signs", {})
    found = memo.get((ta, tb))
    if found is None:
        signs = set()
        for k in conv.kinds:
            if k in RARE_KINDS:
                continue
            ra, rb = conv.rank(ta, k), conv.rank(tb, k)
            if ra is not None and rb is not None:
                signs.add((ra > rb) - (ra < rb))
        found = memo[(ta, tb)] = frozenset(signs)
    return found


@functools.cache
def extra_overloads() -> list[dict]:
    """The hand-written overloads the generated header mirrors (data/extra_overloads.yaml), as dicts."""
    text = resources.files("shimgen").joinpath("data/extra_overloads.yaml").read_text()
    return cache.derived("extra_overloads", [text.encode()], lambda: _extra_overloads(text))


def _extra_overloads(text: str) -> list[dict]:
    raw = load_yaml(text)
    result = []
    for spec in raw["overloads"]:
        if set(spec) != {"target", "source", "missing", "params", "call"} or spec["missing"] not in ("omit",
                                                                                                     "delete"):
            raise ShimgenError(f"data/extra_overloads.yaml: malformed entry {spec}")
        result.append({k: ([str(x) for x in v] if isinstance(v, list) else str(v)) for k, v in spec.items()})
    return result
