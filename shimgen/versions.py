"""Torch release numbers and the TORCH_VERSION_X_Y_Z macros that gate the stable surface."""

from __future__ import annotations

import re
from dataclasses import dataclass

from shimgen.errors import ShimgenError

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[a-z+].*)?$")


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int

    @staticmethod
    def parse(text: str, what: str = "version") -> Version:
        m = _VERSION_RE.match(str(text).strip())
        if not m:
            raise ShimgenError(f"bad {what} {text!r}: expected X.Y such as 2.13")
        return Version(int(m.group(1)), int(m.group(2)))

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
