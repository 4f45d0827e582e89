"""Torch release numbers and the TORCH_VERSION_X_Y_Z macros that gate the stable surface."""

from __future__ import annotations

import re
from typing import NamedTuple

from shimgen.base.errors import ShimgenError

# MAJOR.MINOR[.PATCH]: ASCII digits only (`\\d` would accept any Unicode digit), no leading zeros, no suffix.
_VERSION_RE = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?")
# What a built release may append (PEP 440): 2.13.0+cpu, 2.14.0a0+git1234abc, 2.13.0rc1, 2.15.0.dev20260101.
_RELEASE_SUFFIX_RE = re.compile(r"(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?(?:\+[A-Za-z0-9.]+)?")
# Each part is one byte of the TORCH_VERSION_X_Y_Z / TORCH_ABI_VERSION macros: [MAJ][MIN][PATCH][ABI tag x5].
_PART_MAX = 255


class Version(NamedTuple):
    """A release, MAJOR.MINOR. A named tuple: compared, sorted and hashed as (major, minor) in C, which the version
    rules do some hundred thousand times for a whole yaml (a dataclass's generated comparisons cost ~0.15 s)."""

    major: int
    minor: int

    @staticmethod
    def parse(text: object, what: str = "version") -> Version:
        """A version written by a person or a data file (--since, stamps, the table, the manifest, a folder name):
        exactly `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`, ASCII digits, each part 0-255 (a byte of the version macro).
        The patch is checked and dropped: stable-ABI gates are per minor release."""
        return _parse(text, what, suffix_ok=False)

    @staticmethod
    def parse_release(text: object, what: str = "version") -> Version:
        """The version a torch build reports about itself (`torch.__version__`, importlib.metadata, a PyTorch
        checkout's version.txt): as parse(), plus the suffixes builds carry (`2.13.0+cpu`, `2.14.0a0+git1234`,
        `2.13.0rc1`, `.devN`, `.postN`). Only for versions read from torch itself, never for user input."""
        return _parse(text, what, suffix_ok=True)

    @property
    def macro(self) -> str:
        return f"TORCH_VERSION_{self.major}_{self.minor}_0"

    @property
    def hex(self) -> str:
        """The value of TORCH_TARGET_VERSION for this release, e.g. 0x020a000000000000."""
        return f"0x{self.major:02x}{self.minor:02x}000000000000"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


# The first release with a stable ABI: what it has needs no gate.
FIRST_STABLE = Version(2, 9)
# torch_call_dispatcher(..., TORCH_ABI_VERSION) replaced aoti_torch_call_dispatcher in this release.
VERSIONED_DISPATCHER = Version(2, 10)


def _parse(text: object, what: str, suffix_ok: bool) -> Version:
    shown = repr(text) if isinstance(text, str) else f"{text!r} (a {type(text).__name__}, not a string)"
    expected = "expected MAJOR.MINOR[.PATCH] such as 2.13"
    if not isinstance(text, str):
        raise ShimgenError(f"bad {what} {shown}: {expected}")
    m = _VERSION_RE.match(text)
    rest = text[m.end() :] if m else text
    if m is None or (rest and not (suffix_ok and m.group(3) is not None and _RELEASE_SUFFIX_RE.fullmatch(rest))):
        raise ShimgenError(f"bad {what} {shown}: {expected}")
    parts = [int(g) for g in m.groups() if g is not None]
    if any(p > _PART_MAX for p in parts):
        raise ShimgenError(f"bad {what} {shown}: each part must be at most {_PART_MAX} (one byte of the version macro)")
    return Version(parts[0], parts[1])


def newest(*versions: Version | None) -> Version:
    return max([v for v in versions if v is not None] + [FIRST_STABLE])


def gate_open(v: Version) -> str | None:
    """The `#if` line guarding something that needs release v, or None when every stable release has it."""
    return None if v <= FIRST_STABLE else f"#if TORCH_FEATURE_VERSION >= {v.macro}"


def gate_close(v: Version) -> str | None:
    return None if v <= FIRST_STABLE else f"#endif // TORCH_FEATURE_VERSION >= {v.macro}"


def macro_definitions(versions: set[Version]) -> list[str]:
    """#define lines for TORCH_VERSION_X_Y_Z macros the installed version.h may lack (guarded, so harmless)."""
    lines = []
    for v in sorted(versions):
        if v <= FIRST_STABLE:
            continue
        lines += [
            f"#ifndef {v.macro}",
            f"#define {v.macro} (((0ULL + {v.major}) << 56) | ((0ULL + {v.minor}) << 48))",
            "#endif",
        ]
    return lines
