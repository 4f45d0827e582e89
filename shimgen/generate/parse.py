"""Read native_functions.yaml into torchgen's model and select the operator overloads a user asked for.

torchgen's own `parse_native_yaml` parses all ~2,600 entries (about 1.8 s). shimgen indexes the file's
`- func:` lines with one regular expression and hands only the selected entries to torchgen's
`NativeFunction.from_yaml`, so generating a few ops costs milliseconds. The schema parser is torchgen's.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
from dataclasses import dataclass
from functools import cached_property

from torchgen.model import FunctionSchema, Location, NativeFunction, Variant

from shimgen.base import cache
from shimgen.generate import validate
from shimgen.generate import table as table_mod
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.base.inputs import load_yaml, package_text, read_text
from shimgen.generate.table import Table
from shimgen.facts.versions import Version

# Every top-level list item (an entry) starts at column 0 with `- `; shimgen's index wants `- func: name(`.
# Searched as a newline and `-` (a literal prefix the regex engine scans for quickly; the file's first line aside).
_ITEM_RE = re.compile(r"\n-(?: |\n|\Z)")
_FIRST_ITEM_RE = re.compile(r"-(?: |\n|\Z)")
_ENTRY_RE = re.compile(r"- func: *([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))? *\(")
_SPEC_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")
# A selection of at least this many entries reads every entry's parse from shimgen's cache (one pickle of the whole
# file, built by the first such run): parsing them all costs about a second, loading them a tenth of that. A
# smaller selection parses its own entries (milliseconds), never loading the whole file's.
CACHED_PARSE_MIN = 200
# A smaller selection's entries are parsed once and kept in a small memo (NativeYaml._memoized): at most this many.
ENTRY_MEMO_LIMIT = 400


def default_yaml_path() -> str:
    """The native_functions.yaml packaged inside the installed torch wheel's torchgen."""
    import torchgen

    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")


_VERSION_LINE_RE = re.compile(r"^__version__\s*=\s*['\"]([^'\"\n]+)['\"]\s*$", re.M)


def _installed_torch_version() -> str:
    """The installed torch's version string (LookupError: none). torch/version.py, beside the torchgen whose
    yaml this is, states it in one line (`__version__ = '2.13.0+cpu'`): read as text, it costs a file read,
    where importlib.metadata (the fallback) costs its import and a scan of every installed distribution."""
    import torchgen

    path = os.path.join(os.path.dirname(os.path.dirname(torchgen.__file__)), "torch", "version.py")
    try:
        with open(path, encoding="utf-8") as f:
            m = _VERSION_LINE_RE.search(f.read(1 << 16))
        if m is not None:
            return m.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        raise LookupError("torch") from None


def _wheel_torch_version(yaml_path: str) -> str | None:
    """The `__version__` of the torch package beside a wheel's torchgen (site-packages/torchgen/packaged/ATen/
    native/native_functions.yaml -> site-packages/torch/version.py); None where the yaml is not laid out so."""
    native = os.path.dirname(yaml_path)
    parts = native.split(os.sep)
    if parts[-4:] != ["torchgen", "packaged", "ATen", "native"]:
        return None
    path = os.path.join(os.sep.join(parts[:-4]), "torch", "version.py")
    try:
        with open(path, encoding="utf-8") as f:
            m = _VERSION_LINE_RE.search(f.read(1 << 16))
    except (OSError, UnicodeDecodeError):
        return None
    return m.group(1) if m else None


@dataclass(frozen=True)
class Op:
    """One selected operator overload, in torchgen's model."""

    f: NativeFunction  # argument names made C/C++-safe (validate.cpp_safe): what every emitter uses
    explicit: bool  # named as `name.overload` (a refusal is then an error, not a note)
    added: bool = False  # not selected: another op lowers its numbers to it (shimgen/facts/scalar_facts.py)
    aten: FunctionSchema | None = None  # the schema as written, when a name had to change; else f.func
    backend: str = ""  # the ATen function a C shim's definition calls (aten_function), kept with the entry's parse

    @property
    def schema(self) -> FunctionSchema:
        return self.f.func

    @property
    def aten_schema(self) -> FunctionSchema:
        """The schema as aten has it (argument names as written): for talking to aten by name (Python kwargs)."""
        return self.aten or self.f.func

    @cached_property  # every emitter's comment quotes it: torchgen rebuilds the text on every str()
    def schema_text(self) -> str:
        """str(self.schema): `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`."""
        return str(self.schema)

    @cached_property
    def aten_schema_text(self) -> str:
        """str(self.aten_schema), the schema as aten has it."""
        return str(self.aten_schema)

    @cached_property  # asked for often (indexes, lookups): computed once
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
        self.text = read_text(self.path, f"native_functions.yaml {self.path}")
        # (offset, name, overload) of each `- func:` entry; the offset of every top-level entry (an entry's text
        # ends at the next one); the line of each `- func:` entry. From shimgen's cache, keyed by the text.
        self._starts, self._items, self._lines = cache.derived(
            "yaml-index", [self.text.encode()], lambda: _index(self.text, self.path))
        self.release_problem: str | None = None
        if release is not None:
            self.release = release
        else:
            self.release, self.release_problem = detect_release(self.path)

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
        for i in chosen:
            self._check_unique(i)
        ops = []
        refused: list[Refusal] = []
        # the whole file's parse, for a large selection or once this run has it (a plan of the whole yaml looks up
        # single overloads many times: the memo of small selections would be read and rewritten for each)
        loaded = self.__dict__.get("_parsed_key") == (id(table), _table_source(table))
        parsed = self._parsed(table) if len(chosen) >= CACHED_PARSE_MIN or loaded else None
        memo = self._entry_memo(table) if parsed is None else None
        for i, explicit in chosen.items():
            try:
                if parsed is not None:
                    f, aten, backend = _outcome(parsed[i])
                elif memo is not None:
                    f, aten, backend = _outcome(self._memoized(i, table, memo))
                else:
                    f, aten, backend = self._parse(i, table)
                ops.append(Op(f, explicit, aten=aten, backend=backend))
            except Refusal as e:
                if explicit or notes is None:
                    raise
                refused.append(e)
                notes.append(f"skipped {e.line()}")
        if memo is not None:
            memo.save()
        if not ops:  # every selected overload was refused: that is the error (not a "skipped" note)
            raise refused[-1] if refused else ShimgenError("no op selected")
        return sorted(ops, key=lambda op: op.name)

    def _entry_memo(self, table: Table | None) -> cache.Memo | None:
        """The parses of the entries small selections asked for (see _memoized), kept across runs in one small
        file (cache.Memo) keyed by the conversion table's source: a few ops are generated without loading yaml
        entries into torchgen's model each time, and without loading the whole file's parse (_parsed)."""
        source = _table_source(table)
        if source is None or cache.directory() is None:
            return None
        held = self.__dict__.get("_entries_held")
        if held is not None and held[0] == source:  # one load per run: a plan asks for single overloads again
            return held[1]
        memo = cache.Memo("native-entries", [source], limit=ENTRY_MEMO_LIMIT)
        self.__dict__["_entries_held"] = (source, memo)
        return memo

    def _memoized(self, i: int, table: Table | None, memo: cache.Memo) -> tuple:
        """Entry i's parse (see _outcome) from `memo`, keyed by everything it is derived from besides the table:
        the file's path, the entry's line (both recorded in the parse) and its text."""
        start = self._starts[i][0]
        k = bisect.bisect_left(self._items, start)
        end = self._items[k + 1] if k + 1 < len(self._items) else len(self.text)
        key = f"{self.path}\0{self._line(i)}\0{self.text[start:end]}"
        found = memo.get(key)
        if not isinstance(found, tuple):
            found = self._outcome_of(i, table)
            memo.put(key, found)
        return found

    def _parsed(self, table: Table | None) -> list[tuple] | None:
        """Every entry's parse (see _outcome), from shimgen's cache, keyed by the yaml's bytes and path and the
        conversion table's source (None: `table` is not the package's, so there is no key to keep it under)."""
        source = _table_source(table)
        if source is None:
            return None
        if cache.directory() is None:  # no cache: parsing every entry would cost more than parsing the selected
            return None
        key = self.__dict__.get("_parsed_key")
        if key == (id(table), source):
            return self.__dict__["_parsed_all"]
        try:
            result = cache.derived("native_functions", [self.text.encode(), self.path.encode(), source],
                                   lambda: [self._outcome_of(i, table) for i in range(len(self._starts))])
        except Exception:  # an entry torchgen cannot take at all: parse the selected entries one by one
            return None
        self.__dict__.update(_parsed_key=(id(table), source), _parsed_all=result)
        return result

    def _outcome_of(self, i: int, table: Table | None) -> tuple:
        try:
            return ("ok", *self._parse(i, table))
        except Refusal as e:
            return ("refused", e.reason, e.op, e.arg)
        except ShimgenError as e:
            return ("error", e.reason, e.op, e.arg)

    def _check_unique(self, i: int) -> None:
        _, name, overload = self._starts[i]
        same = [j for j in self.by_name[name] if self._starts[j][2] == overload]
        if len(same) > 1:
            lines = " and ".join(str(self._line(j)) for j in same[:2])
            op = f"{name}.{overload or 'default'}"
            raise ShimgenError(f"defined more than once in {os.path.basename(self.path)} (lines {lines})", op)

    def _line(self, i: int) -> int:
        return self._lines[i]

    def _unknown(self, spec: str) -> str:
        if "." in spec:
            candidates = self.all_op_names()
        else:
            candidates = list(self.by_name)
        close = difflib.get_close_matches(spec, candidates, n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown op in {os.path.basename(self.path)}{hint}"

    def _parse(self, i: int, table: Table | None) -> tuple[NativeFunction, FunctionSchema | None, str]:
        """The entry's NativeFunction with C/C++-safe argument names, the schema as written if a name changed, and
        the ATen function its C shim calls (aten_function: computed here, so that it is cached with the parse).
        Malformed input raises ShimgenError; a type or default the table cannot represent raises Refusal."""
        from yaml import YAMLError  # start-up: a run whose entries come from the cache needs no yaml (inputs)

        start, name, overload = self._starts[i]
        k = bisect.bisect_left(self._items, start)  # the offsets are in order
        end = self._items[k + 1] if k + 1 < len(self._items) else len(self.text)
        op = f"{name}.{overload or 'default'}"
        where = f"{os.path.basename(self.path)}:{self._line(i)}"
        try:
            loaded = load_yaml(self.text[start:end])
        except YAMLError as e:
            reason = " ".join(str(e).split())
            raise ShimgenError(f"malformed yaml at {where}: {reason}", op) from None
        if not (isinstance(loaded, list) and len(loaded) == 1 and isinstance(loaded[0], dict)):
            raise ShimgenError(f"malformed yaml at {where}: expected one mapping", op)
        entry = loaded[0]
        func = entry.get("func")
        if not isinstance(func, str):
            raise ShimgenError(f"malformed yaml at {where}: `func` is not a string", op)
        schema = validate.parse_schema(func, op, table)
        validate.check_names(schema, op)
        tags = entry.get("tags", [])
        valid_tags = set([tags] if isinstance(tags, str) else tags) or {"core"}
        try:
            f, _ = NativeFunction.from_yaml(entry, Location(self.path, self._line(i)), valid_tags)
        except Exception as e:  # torchgen raises AssertionError/RuntimeError on bad entries
            raise ShimgenError(f"malformed entry at {where}: {' '.join(str(e).split())}", op) from None
        if table is not None:  # every argument and return must have a row that does not refuse it
            for a in f.func.arguments.flat_all:
                table.argument(a.type, op, a.name)
            for k, r in enumerate(f.func.returns):
                table.ret(r.type, op, r.name or f"return {k}")
            validate.check_defaults(f.func, op, table)
        safe = validate.cpp_safe(f, table, op)
        return safe, (f.func if safe is not f else None), aten_function(safe)


def _index(text: str, path: str) -> tuple[list[tuple[int, str, str]], list[int], list[int]]:
    """NativeYaml's index of a yaml's text (see there); `path` names the file in errors."""
    starts: list[tuple[int, str, str]] = []
    items: list[int] = []
    lines: list[int] = []
    line, counted = 1, 0
    first = [0] if _FIRST_ITEM_RE.match(text) else []
    for start in (*first, *(m.start() + 1 for m in _ITEM_RE.finditer(text))):
        items.append(start)
        line += text.count("\n", counted, start)
        counted = start
        e = _ENTRY_RE.match(text, start)
        if e is None:
            what = "does not start with an op name and `(`" if text.startswith("- func:", start) else \
                "has no `func:` as its first key"
            raise ShimgenError(f"malformed yaml at {os.path.basename(path)}:{line}: the entry {what}")
        starts.append((start, e.group(1), e.group(2) or ""))
        lines.append(line)
    if not starts:
        raise ShimgenError(f"malformed yaml {path}: no `- func:` entries")
    return starts, items, lines


def _table_source(table: Table | None) -> bytes | None:
    """What an entry's parse depends on of the conversion table, as a cache key part (None: `table` is not the
    package's, so there is no key to keep a parse under)."""
    if table is None:
        return b"no table"
    if table is table_mod.load():
        return package_text("data/conversion_table.yaml").encode()
    return None


def _outcome(parsed: tuple) -> tuple[NativeFunction, FunctionSchema | None, str]:
    """An entry's cached parse as _parse returns it or raises it."""
    kind, *rest = parsed
    if kind == "ok":
        return rest[0], rest[1], rest[2]
    raise (Refusal if kind == "refused" else ShimgenError)(*rest)


def aten_function(f: NativeFunction) -> str:
    """The ATen function a C shim's definition calls for `f`: torchgen's choice (its AOTInductor
    gen_static_dispatch_backend_call), `at::_ops::<name>::call` where no at:: function exists. torchgen's C++ API
    model is imported here, not at start-up: a run whose entries come from the cache never needs it (about 30 ms)."""
    from torchgen.api.types import DispatcherSignature
    from torchgen.api.types.signatures import CppSignatureGroup

    sig = DispatcherSignature.from_schema(f.func)
    if Variant.function not in f.variants or f.manual_cpp_binding:
        if not (sig.symint and f.func.has_symint()) or f.manual_cpp_binding:
            return f"at::_ops::{f.func.name.unambiguous_name()}::call"
    group = CppSignatureGroup.from_native_function(f, method=False, fallback_binding=False)
    cpp = group.symint_signature if (sig.symint and f.func.has_symint() and group.symint_signature) else group.signature
    if Variant.function not in f.variants:
        return f"at::symint::{cpp.name().removesuffix('_symint')}<c10::SymInt>"
    return f"at::{cpp.name()}"


def check_schema(func: str, op: str, table: Table | None) -> FunctionSchema:
    """Parse a schema with torchgen; on failure name the argument and the reason (kept for callers; see validate)."""
    return validate.parse_schema(func, op, table)


def detect_release(path: str) -> tuple[Version | None, str | None]:
    """Which torch release a native_functions.yaml comes from, and if none, why (for the error asking for --since).

    1. The installed wheel's own yaml: the installed torch's version (no torch import: the `__version__` line
       the wheel's torch/version.py holds, else importlib.metadata; a local suffix such as `2.13.0+cpu` is
       allowed there).
    2. A folder named like a release (`.../2.13.0/native_functions.yaml`, as in torch-schemas collections): the
       strict MAJOR.MINOR[.PATCH] grammar, optionally after a `v`; any other folder name is not a release.
    3. A PyTorch checkout: `version.txt` (`2.14.0a0`) at the repository root (aten/src/ATen/native/ is three
       levels down); the file is read as any input (bounded, UTF-8) and must hold a release version.
    Otherwise None: the user must say `--since`.
    """
    real = os.path.realpath(path)
    if real == os.path.realpath(default_yaml_path()):
        try:
            found = _installed_torch_version()
        except LookupError:
            return None, "torch's package metadata is missing"
        try:
            return Version.parse_release(found, "installed torch version"), None
        except ShimgenError as e:
            return None, e.line()
    folder = os.path.dirname(real)
    wheel = _wheel_torch_version(real)
    if wheel is not None:  # another wheel's yaml (a runtime venv's): its torch/version.py
        try:
            return Version.parse_release(wheel, f"torch version beside {path}"), None
        except ShimgenError as e:
            return None, e.line()
    base = os.path.basename(folder)
    try:
        return Version.parse(base[1:] if base.startswith("v") else base, "folder name"), None
    except ShimgenError:
        pass
    probe = folder
    for _ in range(5):
        candidate = os.path.join(probe, "version.txt")
        if os.path.isfile(candidate):
            try:
                text = read_text(candidate, candidate, limit=4096)
                return Version.parse_release(text.strip(), f"release in {candidate}"), None
            except ShimgenError as e:
                return None, e.line()
        probe = os.path.dirname(probe)
    return None, None
