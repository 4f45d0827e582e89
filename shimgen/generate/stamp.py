"""The stamp (`DIR/shimgen.yaml`): the invocation that produced an output folder, written and read with a YAML
serializer, so `shimgen --check --out DIR` can replay it."""

from __future__ import annotations

import os
import re

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import read_text
from shimgen.facts import releases

STAMP = "shimgen.yaml"  # records the invocation in the output folder, so `--check --out DIR` can replay it

_KEYS = ("ops", "only", "since", "yaml")
# A string of only these characters (op names, versions, most paths) is written as the serializer writes it,
# 'text', without importing yaml (a tenth of a small run's start-up); tests/test_stamp.py compares the two.
_PLAIN_RE = re.compile(r"[A-Za-z0-9_./-]+\Z")
# A list item (an op name) is written unquoted, as the serializer writes a name YAML reads back as a string.
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?\Z")
_YAML_WORDS = {"yes", "no", "true", "false", "on", "off", "null"}  # names YAML would read as a bool or null
_HEADER = "# Written by shimgen: the invocation that produced this folder (`shimgen --check` replays it).\n"


def text(ops: list[str] | None, since: str | None, yaml_rel: str | None = None, only: bool = False) -> str:
    """The stamp's text, written by a YAML serializer (quotes, colons or non-ASCII in a path round-trip)."""
    data: dict[str, object] = {"ops": list(ops) if ops else "manifest"}
    if ops and only:
        data["only"] = True
    if since:
        data["since"] = since
    if yaml_rel:
        data["yaml"] = yaml_rel

    comment = {"yaml": "  # relative to this folder", "only": "  # without the manifest's op set"}
    fast = [_plain(v) for v in data.values()]
    if all(v is not None for v in fast):
        return _HEADER + "".join(f"{k}: {v}{comment.get(k, '')}\n" for k, v in zip(data, fast))
    return _serialized(data, comment)


def _plain(v: object) -> str | None:
    """`v` as the serializer writes it (see _serialized) where that is plain to see: `manifest`, `true`, a
    string of _PLAIN_RE's characters single-quoted, a list of op names in flow style; else None."""
    if v == "manifest" or v is True:
        return "manifest" if v == "manifest" else "true"
    if isinstance(v, str):
        return f"'{v}'" if _PLAIN_RE.match(v) else None
    if isinstance(v, list) and all(isinstance(s, str) and _NAME_RE.match(s) and s.lower() not in _YAML_WORDS
                                   for s in v):
        return "[" + ", ".join(v) + "]"
    return None


def _serialized(data: dict[str, object], comment: dict[str, str]) -> str:
    """The stamp's text by PyYAML's serializer (libyaml's where PyYAML has it: about ten times faster for a
    whole yaml's op names): strings single-quoted, a list in flow style."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    def value(v: object) -> str:
        style = "'" if isinstance(v, str) and v != "manifest" else None
        dumped = yaml.dump(v, Dumper=dumper, default_flow_style=True, default_style=style, width=1 << 30)
        return dumped.removesuffix("\n...\n").removesuffix("\n")

    result = _HEADER + "".join(f"{k}: {value(v)}{comment.get(k, '')}\n" for k, v in data.items())
    assert yaml.load(result, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == data, result
    return result


def read(out: str) -> tuple[list[str] | None, str | None, str | None, bool]:
    """(ops, since, yaml path, only) recorded in DIR/shimgen.yaml; the yaml path is made relative to the cwd."""
    path = os.path.join(out, STAMP)
    if not os.path.lexists(path):
        return None, None, None, False
    raw = read_text(path, f"stamp {path}", limit=16 << 20)
    import yaml  # start-up: only --check and its kin read a stamp

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise ShimgenError(f"malformed stamp {path}: {' '.join(str(e).split())}") from None

    def bad(reason: str) -> ShimgenError:
        return ShimgenError(f"malformed stamp {path}: {reason}")

    if not isinstance(data, dict):
        raise bad("expected a mapping with `ops: manifest` or `ops: [name, ...]`")
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise bad(f"unknown keys {', '.join(unknown)}")
    ops = data.get("ops")
    if ops != "manifest":
        if not isinstance(ops, list) or not all(isinstance(o, str) and o for o in ops):
            raise bad("expected `ops: manifest` or `ops: [name, ...]`")
        if not ops:
            raise bad("`ops: []` names no op (the manifest's set is written `ops: manifest`)")
    since = data.get("since")
    if since is not None:
        if not isinstance(since, str):
            raise bad(f"`since` must be a quoted version such as '2.13', not {since!r}")
        releases.parse(since, f"since in stamp {path}")
    native = data.get("yaml")
    if native is not None and not (isinstance(native, str) and native):
        raise bad("`yaml` must be a path")
    native = os.path.normpath(os.path.join(out, native)) if native else None
    only = data.get("only", False)
    if not isinstance(only, bool):
        raise bad("`only` is true or false")
    return (None if ops == "manifest" else list(ops)), since, native, only
