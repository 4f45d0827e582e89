"""`[tool.shimgen]` in a project's pyproject.toml: what `shimgen` with no arguments generates, what `shimgen
--check` verifies, and what the build integrations (shimgen.setuptools, the CMake package) read.

    [tool.shimgen]
    ops = ["softmax", "masked_fill", "amax"]   # or one comma-separated string, as --ops takes it
    target = "2.10"                            # the oldest torch release the extension runs on
    out = "build/shimgen"                      # relative to pyproject.toml's folder (default: generated)
    only = false                               # as --only
    since = "2.10"                             # as --since (rarely needed; never above `target`)
    yaml = "path/to/native_functions.yaml"     # as --yaml (default: the installed torch's)
    overlay = false                            # true: the extension links shimgen's overlay library itself
    audit = true                               # false: setuptools does not audit the linked library

The table is found in the first pyproject.toml at or above the working directory (as black and ruff find
theirs); a pyproject.toml without the table is no shimgen project. Every problem in the table is a ShimgenError
naming the file, the key and the reason (one line, exit status 2)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from shimgen.base.errors import ShimgenError
from shimgen.facts import releases
from shimgen.base.inputs import read_text
from shimgen.facts.versions import Version

PYPROJECT = "pyproject.toml"
_KEYS = ("ops", "target", "out", "only", "since", "yaml", "overlay", "audit")


@dataclass(frozen=True)
class Project:
    path: str  # the pyproject.toml
    ops: tuple[str, ...] | None  # None: the manifest's op set
    out: str  # absolute
    target: Version | None
    only: bool = False
    since: str | None = None
    yaml: str | None = None  # absolute
    overlay: bool = False  # the extension links shimgen's overlay library (C shims libtorch lacks): not ABI-stable
    audit: bool = True  # setuptools audits each library after linking (shimgen.tools.link_audit)

    @property
    def root(self) -> str:
        return os.path.dirname(self.path)

    @property
    def target_macro(self) -> str | None:
        """`0x020a000000000000` for 2.10: the value of -DTORCH_TARGET_VERSION."""
        return self.target.hex if self.target else None


def _shown(value: object) -> str:
    """A TOML value as a message shows it: its type, and its text when short."""
    kind = type(value).__name__
    kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
    text = repr(value)
    return f"{text} ({kind})" if len(text) <= 40 else kind


def find(start: str = ".") -> str | None:
    """The pyproject.toml governing `start`: the first one at or above it."""
    here = os.path.abspath(start)
    while True:
        candidate = os.path.join(here, PYPROJECT)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _toml(path: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise ShimgenError(f"{path}: reading [tool.shimgen] on Python 3.10 needs the tomli package") from None

    text = read_text(path, path, limit=16 << 20)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ShimgenError(f"{path}: malformed TOML: {e}") from None


def load(path: str) -> Project | None:
    """The [tool.shimgen] table of one pyproject.toml, checked; None if the file has no such table."""
    tool = _toml(path).get("tool", {})
    if not isinstance(tool, dict):  # `tool = 5`: not the [tool] table every tool reads its own from
        raise ShimgenError(f"{path}: `tool` must be a table ([tool.shimgen]), not {_shown(tool)}")
    table = tool.get("shimgen")
    if table is None:
        return None
    where = f"{path} [tool.shimgen]"

    def bad(key: str, reason: str) -> ShimgenError:
        return ShimgenError(f"{where}: `{key}` {reason}")

    if not isinstance(table, dict):
        raise ShimgenError(f"{where}: expected a table, not {_shown(table)}")
    unknown = sorted(k for k in table if k not in _KEYS)
    if unknown:
        raise ShimgenError(f"{where}: unknown key `{unknown[0]}` (known: {', '.join(_KEYS)})")
    root = os.path.dirname(os.path.abspath(path))
    ops = table.get("ops")
    if ops is not None:
        if isinstance(ops, str):
            ops = [o.strip() for o in ops.split(",") if o.strip()]
        if not isinstance(ops, list) or not all(isinstance(o, str) and o.strip() for o in ops):
            raise bad("ops", f"must be a list of op names such as [\"add\", \"pad.default\"], not {ops!r}")
        if not ops:
            raise bad("ops", "names no op (leave it out for the manifest's op set)")
        ops = tuple(dict.fromkeys(o.strip() for o in ops))  # a name given twice is one op
    out = table.get("out", "generated")
    if not isinstance(out, str) or not out:
        raise bad("out", f"must be a folder name, not {out!r}")
    target = table.get("target")
    if target is not None:
        if not isinstance(target, str):
            raise bad("target", f"must be a quoted release such as \"2.10\", not {target!r}")
        target = releases.parse(target, f"`target` in {where}")
    only = table.get("only", False)
    if not isinstance(only, bool):
        raise bad("only", f"is true or false, not {only!r}")
    if only and ops is None:
        raise bad("only", "needs `ops` (the ops to generate without the manifest's set)")
    since = table.get("since")
    if since is not None:
        if not isinstance(since, str):
            raise bad("since", f"must be a quoted release such as \"2.13\", not {since!r}")
        since_release = releases.parse(since, f"`since` in {where}")
        if target is not None and since_release > target:
            raise ShimgenError(f"{where}: `since` {since} is above `target` {target}: the ops it tags would need "
                               f"torch {since}, newer than the oldest release the extension runs on (lower `since` "
                               "or raise `target`)")
    native = table.get("yaml")
    if native is not None and not (isinstance(native, str) and native):
        raise bad("yaml", "must be a path")
    overlay = table.get("overlay", False)
    if not isinstance(overlay, bool):
        raise bad("overlay", f"is true or false, not {overlay!r}")
    audit = table.get("audit", True)
    if not isinstance(audit, bool):
        raise bad("audit", f"is true or false, not {audit!r}")
    return Project(
        path=os.path.abspath(path),
        ops=ops,
        out=os.path.normpath(os.path.join(root, out)),
        target=target,
        only=only,
        since=since,
        yaml=os.path.normpath(os.path.join(root, native)) if native else None,
        overlay=overlay,
        audit=audit,
    )


def current(start: str = ".") -> Project | None:
    """The project governing `start`, or None (no pyproject.toml, or one without [tool.shimgen])."""
    path = find(start)
    return load(path) if path else None
