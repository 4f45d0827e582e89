"""The conversion table (data/conversion_table.yaml) as typed rows, and the lookup from a torchgen Type to its row.

Every emitter asks this module, never its own if-chain, how a schema type crosses the stable ABI.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from torchgen.model import ListType, OptionalType, Type

from shimgen.base import cache
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.base.inputs import load_yaml, package_text, read_text
from shimgen.facts.versions import Version

_SIZE_RE = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Row:
    """One row of the table: a schema type and its representation on every surface."""

    key: str
    c: tuple[str, ...] | str | None = None
    aten: str | None = None
    aten_out: str | None = None
    aten_default: str | None = None
    cpp: str | None = None
    cpp_out: str | None = None
    prelude: str | None = None
    to_c: tuple[str, ...] = ()
    stack: str | None = None
    c_local: str | None = None
    from_c: str | None = None
    ivalue: Version | None = None
    leak_free: Version | None = None
    header: Version | None = None  # the release whose stable headers first declare the C++ type (None: every one)
    since: Version | None = None
    box: str | None = None
    box_schema: str | None = None
    py: str | None = None
    exact_c: str | None = None
    exact_c_default: str | None = None
    exact_c_floating: str | None = None
    stand_in: str | None = None
    literal: str | None = None  # how a literal default of this base type is written: int, float, number, bool, str
    list_dtype: str | None = None  # --verify: the dtype of the tensor carrying a list of this element type
    refuse: str | None = None
    c_refuse: str | None = None
    note: str | None = None
    sample: dict | None = field(default=None, compare=False)  # --verify's sample rule (verify/samples.py)
    size: int | None = field(default=None, compare=False)

    def fill(self, text: str, name: str = "", value: str = "", default: str = "") -> str:
        """Substitute the table's placeholders; C++ braces in the text stay as they are."""
        out = text.replace("{name}", name).replace("{value}", value).replace("{default}", default)
        if self.size is not None:
            out = out.replace("{size}", str(self.size))
        return out

    @property
    def dispatcher_since(self) -> Version | None:
        """The first release the dispatcher route may carry this type: it converts it (ivalue), without leaking."""
        if self.ivalue is None:
            return None
        return max(self.ivalue, self.leak_free) if self.leak_free is not None else self.ivalue

    def dispatcher_from(self, leaky: bool) -> Version | None:
        """dispatcher_since, or, where the author accepts a leaking conversion (`leaky`), the first release that
        converts this type at all (ivalue)."""
        return self.ivalue if leaky else self.dispatcher_since

    @property
    def leaks_before(self) -> Version | None:
        """The release from which libtorch converts this type on the dispatcher without leaking, if an earlier
        one converts it leaking (str: 2.14); None if no release leaks it."""
        if self.ivalue is None or self.leak_free is None or self.leak_free <= self.ivalue:
            return None
        return self.leak_free

    def stack_value(self, name: str) -> str:
        """What the dispatcher route passes to torch::stable::detail::from() for this argument."""
        return self.fill(self.stack or "{name}", name)


_FIELDS = set(Row.__dataclass_fields__) - {"key", "size"}


def _row(key: str, raw: dict, section: dict) -> Row:
    data = dict(raw)
    base = data.pop("same_as", None)
    if base is not None:
        merged = dict(section[base])
        merged.pop("same_as", None)
        merged.update(data)
        data = merged
    unknown = set(data) - _FIELDS
    if unknown:
        raise ShimgenError(f"conversion table row {key!r} has unknown fields {sorted(unknown)}")
    for vkey in ("ivalue", "since", "leak_free", "header"):
        if data.get(vkey) is not None:
            data[vkey] = Version.parse(data[vkey], f"{vkey} of table row {key!r}")
    for lkey in ("c", "to_c"):
        if isinstance(data.get(lkey), list):
            data[lkey] = tuple(data[lkey])
    return Row(key=key, **data)


@dataclass(frozen=True)
class Table:
    arguments: dict[str, Row]
    returns: dict[str, Row]
    defaults: dict[str, dict[str, str]]  # symbolic schema defaults -> {"cpp": ..., "py": ...}
    default_types: dict[str, tuple[str, ...]] = field(default_factory=dict)  # symbolic default -> base types
    # The dispatcher route carries a tuple of returns only where its types read the same backwards (the table's
    # `dispatcher` section says why).
    mirrored_returns_only: bool = False

    def literal(self, base: str) -> str | None:
        """How a literal default of schema base type `base` is written (the row's `literal`); None: no literal."""
        row = self.arguments.get(base)
        return row.literal if row is not None else None

    def argument(self, typ: Type, op: str, arg: str) -> Row:
        return self._lookup(self.arguments, typ, op, arg)

    def ret(self, typ: Type, op: str, arg: str) -> Row:
        return self._lookup(self.returns, typ, op, arg)

    @staticmethod
    def _lookup(section: dict[str, Row], typ: Type | str, op: str, arg: str) -> Row:
        named = _TEXT.get(id(typ))  # torchgen rebuilds a type's text on every str(): asked ~60,000 times
        if named is not None and named[0] is typ:
            text = named[1]
        else:
            text = str(typ)
            _TEXT[id(typ)] = (typ, text)
        found = _FOUND.get((id(section), text))  # a whole yaml asks ~60,000 times for ~100 types
        if found is not None and found[0] is section:
            if isinstance(found[1], str):
                raise Refusal(found[1], op, arg)
            return found[1]
        try:
            row = Table._find(section, text)
        except Refusal as e:
            _FOUND[(id(section), text)] = (section, e.reason)
            raise Refusal(e.reason, op, arg) from None
        _FOUND[(id(section), text)] = (section, row)
        return row

    @staticmethod
    def _find(section: dict[str, Row], text: str) -> Row:
        op, arg = "", ""
        m = _SIZE_RE.search(text)
        key = _SIZE_RE.sub("[N]", text)
        row = section.get(key)
        if row is None:
            base = refusal_base(text)
            base_row = section.get(base)
            if base_row is not None and base_row.refuse:
                raise Refusal(f"type {text} is refused: {base_row.refuse}", op, arg)
            raise Refusal(f"type {text} has no row in the conversion table", op, arg)
        if row.refuse:
            raise Refusal(f"type {text} is refused: {row.refuse}", op, arg)
        if m:
            row = Row(**{**row.__dict__, "size": int(m.group(1))})
        return row


# _lookup's answers: (id(section), type text) -> (that section, its row or the refusal's reason). The section is
# held, so its id is never another's; a table's sections are not changed once loaded.
_FOUND: dict[tuple[int, str], tuple[dict[str, Row], Row | str]] = {}
# _lookup's type texts: id(type) -> (that type, its str()). The type is held, so its id is never another's; torchgen's
# types are frozen.
_TEXT: dict[int, tuple[Type | str, str]] = {}


def refusal_base(type_text: str) -> str:
    """The element type of a (possibly optional, list) schema type: `Dimname[]?` -> `Dimname`."""
    return re.sub(r"(\[\d*\]|\?)+$", "", type_text.strip())


def element(typ: Type) -> Type:
    while isinstance(typ, (OptionalType, ListType)):
        typ = typ.elem
    return typ


@functools.cache
def load(path: str | None = None) -> Table:
    if path is None:  # the package's own table: cached (shimgen.base.cache), keyed by its bytes and shimgen's code
        text = package_text("data/conversion_table.yaml")
        return cache.derived("conversion_table", [text.encode()], lambda: _table(text))
    return _table(read_text(path, "conversion table"))


def _table(text: str) -> Table:
    raw = load_yaml(text)
    args, rets = raw["arguments"], raw["returns"]
    defaults = raw.get("defaults") or {}
    return Table(
        mirrored_returns_only=bool((raw.get("dispatcher") or {}).get("mirrored_returns_only", False)),
        arguments={k: _row(k, v, args) for k, v in args.items()},
        returns={k: _row(k, v, rets) for k, v in rets.items()},
        defaults={str(k): {t: str(x) for t, x in v.items() if t != "types"} for k, v in defaults.items()},
        default_types={str(k): tuple(str(t) for t in v.get("types", ())) for k, v in defaults.items()},
    )


# ---- defaults: a schema default spelled from the table's `defaults`, or as a literal -------------------------------


def render_default(text: str, row: Row, table: Table, target: str = "cpp") -> str:
    """A schema default spelled for C++ (target="cpp") or Python (target="py")."""
    sym = table.defaults.get(text)
    if sym is not None:
        return sym[target]
    if text.startswith("[") and text.endswith("]"):
        items = [i.strip() for i in text[1:-1].split(",") if i.strip()]
        if target == "cpp":
            return "{" + ", ".join(_cpp_int(i) for i in items) + "}"
        return "[" + ", ".join(items) + "]"
    if text[:1] in "'\"":
        value = _unquote(text)
        return _cpp_string(value) if target == "cpp" else repr(value)
    if re.fullmatch(r"-?\d+", text):
        if row.size is not None and "[" in row.key:  # `int[2] stride=1` means [1, 1]
            items = [_cpp_int(text) if target == "cpp" else text] * row.size
            return ("{" + ", ".join(items) + "}") if target == "cpp" else "[" + ", ".join(items) + "]"
        if target == "cpp" and row.cpp and "double" in row.cpp:
            return text + ".0"
        return _cpp_int(text) if target == "cpp" else text
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?", text):
        return text
    raise Refusal(f"schema default {text!r} has no spelling in the conversion table's defaults")


def _cpp_int(text: str) -> str:
    """An integer literal for C++: INT64_MIN has none (9223372036854775808 fits no signed type), so spell it."""
    return "(-9223372036854775807 - 1)" if text == str(-(2**63)) else text


def _unquote(text: str) -> str:
    import ast

    return ast.literal_eval(text)


def _cpp_string(value: str) -> str:
    """A C++ string literal: quotes, backslashes and non-printable characters escaped (octal)."""
    out = []
    for ch in value:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable() and ord(ch) < 128:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'
