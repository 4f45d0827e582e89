"""Release history of aten's schemas (data/history.json): which overloads exist in which torch release, and with
which schema. Version tags, `_vN` C shims, dispatcher stack layouts and the drift check read it.

The data is produced from release yaml files by this module's command and committed; shimgen reads only its own
copy at run time:

    python -m shimgen.dev history ../shared/torch-schemas          # every X.Y.Z/native_functions.yaml under it
    python -m shimgen.dev history --add 2.16 path/native_functions.yaml   # one more release into the existing data

The file holds, per overload (`add.Tensor`, `numel.default`), the releases at which its schema changed: the first
release that has it, each release whose schema differs from the one before, and the release that removed it
(schema `null`). A release's schema is the one of the last change at or before it.
"""

from __future__ import annotations

import argparse
import enum
import functools
import json
import os
import re
import sys
from dataclasses import dataclass

from torchgen.model import Argument, FunctionSchema

from shimgen.base.errors import ShimgenError
from shimgen.base import cache
from shimgen.base.inputs import package_text
from shimgen.facts.versions import Version

DATA = "data/history.json"
_FUNC_RE = re.compile(r"^- func: *(([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))? *\(.*)$", re.M)


# ---- the data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class History:
    releases: tuple[Version, ...]  # every release the data covers, oldest first
    changes: dict[str, tuple[tuple[Version, str | None], ...]]  # op -> (release, schema text or None), oldest first

    def schema_text(self, op: str, release: Version) -> str | None:
        """The op's schema in `release` (None: absent there). Releases after the newest known one are assumed to
        keep the newest schema; releases before the oldest are unknown (None)."""
        if not self.releases or release < self.releases[0]:
            return None
        text = None
        for at, schema in self.changes.get(op, ()):
            if at > release:
                break
            text = schema
        return text

    def knows(self, op: str) -> bool:
        return op in self.changes

    @property
    def newest(self) -> Version | None:
        return self.releases[-1] if self.releases else None


def op_name(name: str, overload: str | None) -> str:
    return f"{name}.{overload or 'default'}"


def schemas_of(text: str) -> dict[str, str]:
    """Every `- func:` schema of a native_functions.yaml text, by op name, whitespace-normalised."""
    return {op_name(m.group(2), m.group(3)): " ".join(m.group(1).split()) for m in _FUNC_RE.finditer(text)}


def build(release_schemas: dict[Version, dict[str, str]]) -> History:
    releases = tuple(sorted(release_schemas))
    changes: dict[str, list[tuple[Version, str | None]]] = {}
    names = sorted({op for schemas in release_schemas.values() for op in schemas})
    for op in names:
        points: list[tuple[Version, str | None]] = []
        for r in releases:
            schema = release_schemas[r].get(op)
            last = points[-1][1] if points else None
            if schema != last:
                points.append((r, schema))
        changes[op] = points
    return History(releases, {op: tuple(p) for op, p in changes.items()})


def dumps(h: History) -> str:
    """The data file's text: one op per line, sorted, so a new release diffs line by line."""
    lines = ["{", f' "releases": {json.dumps([str(r) for r in h.releases])},', ' "ops": {']
    items = sorted(h.changes.items())
    for i, (op, points) in enumerate(items):
        value = json.dumps([[str(r), s] for r, s in points], ensure_ascii=True)
        lines.append(f"  {json.dumps(op)}: {value}{',' if i + 1 < len(items) else ''}")
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def loads(text: str) -> History:
    raw = json.loads(text)
    releases = tuple(Version.parse(r) for r in raw["releases"])
    changes = {
        op: tuple((Version.parse(r), s) for r, s in points) for op, points in raw["ops"].items()
    }
    return History(releases, changes)


@functools.cache
def load() -> History:
    text = package_text(DATA)
    return cache.derived("history", [text.encode()], lambda: loads(text))


def release_schemas(h: History) -> dict[Version, dict[str, str]]:
    """The inverse of build(): every release's full schema set."""
    out: dict[Version, dict[str, str]] = {}
    for r in h.releases:
        out[r] = {op: s for op in h.changes if (s := h.schema_text(op, r)) is not None}
    return out


# ---- comparing two schemas of one overload -------------------------------------------------------------------


class Kind(enum.Enum):
    """How a schema changed between two releases, from the stable ABI's point of view (PyTorch's linters say the
    same: a trailing defaulted argument is compatible, anything structural is a break)."""

    SAME = "same"
    DEFAULT_CHANGED = "default changed"  # same arguments, some default differs (a warning)
    TRAILING_ADDED = "new trailing defaulted argument"  # new = old + defaulted arguments at the end
    TRAILING_REMOVED = "trailing defaulted argument removed"  # the reverse: old = new + defaulted arguments
    RENAMED = "argument renamed"  # same types in the same places: the ABI holds, keyword callers (Python) break
    BREAK = "structural change"  # anything else: arguments inserted, reordered, retyped; returns changed


def abi_type(a: Argument) -> str:
    """An argument's type as the stable ABI sees it: SymInt travels as int (C shim int64_t, StableIValue int)."""
    return str(a.type).replace("SymInt", "int")


def _order(s: FunctionSchema, c_order: bool) -> list[Argument]:
    """Arguments in C shim order (out= arguments first) or in the dispatcher's stack order (the schema's)."""
    args = s.arguments
    return [*args.out, *args.flat_non_out] if (c_order and s.is_out_fn()) else list(args.flat_all)


def _same_returns(a: FunctionSchema, b: FunctionSchema) -> bool:
    ra = [str(r.type).replace("SymInt", "int") for r in a.returns]
    rb = [str(r.type).replace("SymInt", "int") for r in b.returns]
    return ra == rb


@dataclass(frozen=True)
class Change:
    kind: Kind
    args: tuple[str, ...] = ()  # the arguments concerned (added, removed, or with a new default)
    detail: str = ""

    @property
    def compatible(self) -> bool:
        return self.kind is not Kind.BREAK


def compare(old: FunctionSchema, new: FunctionSchema, c_order: bool = False) -> Change:
    """How `new` relates to `old`, with arguments in stack order (c_order=False: what the boxed dispatcher reads)
    or in C shim order (c_order=True: out= arguments first, as in the C shim and the C++ wrapper)."""
    if not _same_returns(old, new):
        return Change(Kind.BREAK, (), f"returns {_returns(old)} -> {_returns(new)}")
    a, b = _order(old, c_order), _order(new, c_order)
    common = min(len(a), len(b))
    renamed = []
    for i in range(common):
        x, y = a[i], b[i]
        if (abi_type(x), x.is_write) != (abi_type(y), y.is_write):
            return Change(Kind.BREAK, (y.name,), f"argument {i} `{x.type} {x.name}` -> `{y.type} {y.name}`")
        if x.name != y.name:
            renamed.append(f"{x.name} -> {y.name}")
    extra = b[common:] if len(b) > len(a) else a[common:]
    if any(e.default is None for e in extra) or any(e.is_write for e in extra):
        which = "added" if len(b) > len(a) else "removed"
        names = ", ".join(e.name for e in extra)
        return Change(Kind.BREAK, tuple(e.name for e in extra), f"{which} argument(s) without a default: {names}")
    if renamed:  # reported before the other compatible kinds: a keyword caller breaks whatever else changed
        return Change(Kind.RENAMED, tuple(r.split(" -> ")[1] for r in renamed), ", ".join(renamed))
    if len(b) > len(a):
        return Change(Kind.TRAILING_ADDED, tuple(e.name for e in extra))
    if len(a) > len(b):
        return Change(Kind.TRAILING_REMOVED, tuple(e.name for e in extra))
    changed = tuple(y.name for x, y in zip(a, b) if x.default != y.default)
    if changed:
        detail = ", ".join(f"{y.name}={x.default}->{y.default}" for x, y in zip(a, b) if x.default != y.default)
        return Change(Kind.DEFAULT_CHANGED, changed, detail)
    return Change(Kind.SAME)


def _returns(s: FunctionSchema) -> str:
    return "(" + ", ".join(str(r.type) for r in s.returns) + ")"


_SCHEMAS: dict[str, FunctionSchema] = {}  # text -> torchgen's parse of it


def parse_schema(text: str) -> FunctionSchema:
    schema = _SCHEMAS.get(text)
    if schema is None:
        schema = _SCHEMAS[text] = FunctionSchema.parse(text)
    return schema


def preload_schemas() -> None:
    """Every schema of the history, parsed, from shimgen's cache (for a plan of many ops: parsing the ~2,700
    schemas costs about half a second, loading them a twentieth of that)."""
    h = load()
    if "history" in _PRELOADED or cache.directory() is None:
        return
    texts = sorted({s for points in h.changes.values() for _, s in points if s is not None})
    _SCHEMAS.update(cache.derived("history_schemas", [package_text(DATA).encode()], lambda: _parsed(texts)))
    _PRELOADED.add("history")


_PRELOADED: set[str] = set()


def _parsed(texts: list[str]) -> dict[str, FunctionSchema]:
    result = {}
    for t in texts:
        try:
            result[t] = FunctionSchema.parse(t)
        except Exception:  # left to parse_schema, which raises it where the schema is asked for
            continue
    return result


# ---- the command ---------------------------------------------------------------------------------------------

_RELEASE_DIR_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ShimgenError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None


def releases_under(folder: str) -> dict[Version, str]:
    """`<folder>/<X.Y.Z>/native_functions.yaml` files, by release X.Y."""
    found: dict[Version, str] = {}
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry, "native_functions.yaml")
        if _RELEASE_DIR_RE.match(entry) and os.path.isfile(path):
            found[Version.parse(entry)] = path
    if not found:
        raise ShimgenError(f"no <X.Y.Z>/native_functions.yaml under {folder}")
    return found


def data_path() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DATA)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m shimgen.dev history", description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="*", help="folders holding <X.Y.Z>/native_functions.yaml (all releases)")
    p.add_argument("--add", nargs=2, metavar=("X.Y", "YAML"), action="append", default=[],
                   help="add (or replace) one release, keeping the others of the existing data")
    p.add_argument("--out", default=data_path(), help="the data file to write (default: shimgen's own)")
    args = p.parse_args(argv)
    try:
        schemas: dict[Version, dict[str, str]] = {}
        if args.add and not args.folders:
            schemas = release_schemas(loads(_read(args.out)))
        for folder in args.folders:
            for release, path in releases_under(folder).items():
                schemas[release] = schemas_of(_read(path))
        for release, path in args.add:
            schemas[Version.parse(release, "release")] = schemas_of(_read(path))
        if not schemas:
            raise ShimgenError("nothing to do: give folders of release yaml files, or --add X.Y YAML")
        text = dumps(build(schemas))
    except ShimgenError as e:
        print(f"shimgen.dev history: error: {e.line()}", file=sys.stderr)
        return 2
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    h = loads(text)
    print(f"{args.out}: {len(h.changes)} overloads over {', '.join(map(str, h.releases))}")
    return 0
