"""Read native_functions.yaml into torchgen's model and select the operator overloads a user asked for.

torchgen's own `parse_native_yaml` parses all ~2,600 entries (about 1.8 s). shimgen indexes the file's
`- func:` lines with one regular expression and hands only the selected entries to torchgen's
`NativeFunction.from_yaml`, so generating a few ops costs milliseconds. The schema parser is torchgen's.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata

import yaml
from torchgen.model import Argument, FunctionSchema, Location, NativeFunction

from shimgen.errors import Refusal, ShimgenError
from shimgen.table import Table
from shimgen.versions import Version

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ENTRY_RE = re.compile(r"^- func: *([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))? *\(", re.M)
_SPEC_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")
_DIR_VERSION_RE = re.compile(r"^v?(\d+\.\d+)(\.\d+)?$")


def default_yaml_path() -> str:
    """The native_functions.yaml packaged inside the installed torch wheel's torchgen."""
    import torchgen

    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")


@dataclass(frozen=True)
class Op:
    """One selected operator overload, in torchgen's model."""

    f: NativeFunction
    explicit: bool  # named as `name.overload` (a refusal is then an error, not a note)
    added: bool = False  # not selected: another op lowers its numbers to it (shimgen/scalars.py)

    @property
    def schema(self) -> FunctionSchema:
        return self.f.func

    @property
    def name(self) -> str:
        """`add.Tensor`, or `empty_like.default` for the unnamed overload."""
        return f"{self.schema.name.name}.{self.schema.name.overload_name or 'default'}"

    @property
    def aten_name(self) -> str:
        """The boxed dispatcher's operator name, e.g. `aten::add`."""
        return f"aten::{self.schema.name.name}"

    @property
    def overload(self) -> str:
        return self.schema.name.overload_name


class NativeYaml:
    """An indexed native_functions.yaml; entries are parsed on demand."""

    def __init__(self, path: str | None = None, release: Version | None = None) -> None:
        self.path = path or default_yaml_path()
        try:
            with open(self.path, encoding="utf-8") as f:
                self.text = f.read()
        except OSError as e:
            raise ShimgenError(f"cannot read native_functions.yaml {self.path}: {e.strerror}") from None
        self._starts = [(m.start(), m.group(1), m.group(2) or "") for m in _ENTRY_RE.finditer(self.text)]
        if not self._starts:
            raise ShimgenError(f"malformed yaml {self.path}: no `- func:` entries")
        self.release = release or detect_release(self.path)

    @cached_property
    def by_name(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for i, (_, name, _) in enumerate(self._starts):
            index.setdefault(name, []).append(i)
        return index

    def all_op_names(self) -> list[str]:
        """Every overload in the file as `name.overload` (unnamed ones as `name.default`)."""
        return [f"{n}.{o or 'default'}" for _, n, o in self._starts]

    def select(self, specs: list[str], table: Table | None = None, notes: list[str] | None = None) -> list[Op]:
        """Resolve `name`, `name.overload` and `name.default` specs to ops, sorted by name, without duplicates.

        An overload whose types the table refuses is an error when named explicitly; when a bare name selected
        it, it is skipped and the refusal appended to `notes`.
        """
        chosen: dict[int, bool] = {}
        for spec in specs:
            if not _SPEC_RE.match(spec):
                raise ShimgenError(f"bad op name {spec!r}: expected name, name.overload or name.default")
            name, _, overload = spec.partition(".")
            indices = self.by_name.get(name, [])
            if overload:
                want = "" if overload == "default" else overload
                indices = [i for i in indices if self._starts[i][2] == want]
            if not indices:
                raise ShimgenError(self._unknown(spec), spec)
            for i in indices:
                chosen[i] = chosen.get(i, False) or bool(overload)
        ops = []
        refused: list[Refusal] = []
        for i, explicit in chosen.items():
            try:
                ops.append(Op(self._parse(i, table), explicit))
            except Refusal as e:
                if explicit or notes is None:
                    raise
                refused.append(e)
                notes.append(f"skipped {e.line()}")
        if not ops:  # every selected overload was refused: that is the error (not a "skipped" note)
            raise refused[-1] if refused else ShimgenError("no op selected")
        return sorted(ops, key=lambda op: op.name)

    def _unknown(self, spec: str) -> str:
        if "." in spec:
            candidates = self.all_op_names()
        else:
            candidates = list(self.by_name)
        close = difflib.get_close_matches(spec, candidates, n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown op in {os.path.basename(self.path)}{hint}"

    def _parse(self, i: int, table: Table | None) -> NativeFunction:
        start, name, overload = self._starts[i]
        end = self._starts[i + 1][0] if i + 1 < len(self._starts) else len(self.text)
        op = f"{name}.{overload or 'default'}"
        line = self.text.count("\n", 0, start) + 1
        try:
            loaded = yaml.load(self.text[start:end], Loader=_LOADER)
        except yaml.YAMLError as e:
            reason = " ".join(str(e).split())
            raise ShimgenError(f"malformed yaml at {os.path.basename(self.path)}:{line}: {reason}", op) from None
        if not (isinstance(loaded, list) and len(loaded) == 1 and isinstance(loaded[0], dict)):
            raise ShimgenError(f"malformed yaml at {os.path.basename(self.path)}:{line}: expected one mapping", op)
        entry = loaded[0]
        func = entry.get("func")
        if not isinstance(func, str):
            raise ShimgenError(f"malformed yaml at line {line}: `func` is not a string", op)
        check_schema(func, op, table)
        tags = entry.get("tags", [])
        valid_tags = set([tags] if isinstance(tags, str) else tags) or {"core"}
        try:
            f, _ = NativeFunction.from_yaml(entry, Location(self.path, line), valid_tags)
        except Exception as e:  # torchgen raises AssertionError/RuntimeError on bad entries
            raise ShimgenError(f"malformed entry at line {line}: {' '.join(str(e).split())}", op) from None
        if table is not None:  # every argument and return must have a row that does not refuse it
            for a in f.func.arguments.flat_all:
                table.argument(a.type, op, a.name)
            for k, r in enumerate(f.func.returns):
                table.ret(r.type, op, r.name or f"return {k}")
        return f


def check_schema(func: str, op: str, table: Table | None) -> FunctionSchema:
    """Parse a schema with torchgen; on failure name the argument and, from the table, why its type is refused."""
    try:
        return FunctionSchema.parse(func)
    except Exception as e:
        reason = " ".join(str(e).split()) or type(e).__name__
    m = re.match(r"^[^(]*\((.*)\) -> .*$", func)
    for piece in (m.group(1).split(", ") if m else []):
        if piece in ("*", ""):
            continue
        try:
            Argument.parse(piece)
        except Exception:
            type_text, _, arg = piece.rpartition(" ")
            arg = arg.split("=")[0]
            if not type_text:  # `int` alone: a type without a name, not an unsupported type
                raise ShimgenError(f"malformed schema: argument {piece!r} has no name", op) from None
            type_text = re.sub(r"\([a-z!|>\s*]+\)", "", type_text)
            if table is not None:
                table.argument(type_text, op, arg)  # raises the table's refusal
            raise ShimgenError(f"malformed schema type {type_text!r}", op, arg) from None
    raise ShimgenError(f"malformed schema {func!r}: {reason}", op)


def detect_release(path: str) -> Version | None:
    """Which torch release a native_functions.yaml comes from.

    1. The installed wheel's own yaml: the installed torch's version (importlib.metadata, no torch import).
    2. A folder named like a release (`.../2.13.0/native_functions.yaml`, as in torch-schemas collections).
    3. A PyTorch checkout: `version.txt` at the repository root (aten/src/ATen/native/ is three levels down).
    Otherwise None: the user must say `--since`.
    """
    real = os.path.realpath(path)
    if real == os.path.realpath(default_yaml_path()):
        try:
            return Version.parse(metadata.version("torch"))
        except (metadata.PackageNotFoundError, ShimgenError):
            return None
    folder = os.path.dirname(real)
    m = _DIR_VERSION_RE.match(os.path.basename(folder))
    if m:
        return Version.parse(m.group(1))
    probe = folder
    for _ in range(5):
        candidate = os.path.join(probe, "version.txt")
        if os.path.isfile(candidate):
            with open(candidate) as f:
                try:
                    return Version.parse(f.read().strip())
                except ShimgenError:
                    return None
        probe = os.path.dirname(probe)
    return None

