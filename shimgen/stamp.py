"""The stamp (`DIR/shimgen.yaml`): the invocation that produced an output folder, written and read with a YAML
serializer, so `shimgen --check --out DIR` can replay it."""

from __future__ import annotations

import os

import yaml

from shimgen.errors import ShimgenError
from shimgen.inputs import read_text
from shimgen.versions import Version

STAMP = "shimgen.yaml"  # records the invocation in the output folder, so `--check --out DIR` can replay it

_KEYS = ("ops", "only", "since", "yaml")
# libyaml's (the same YAML, about ten times faster for a whole yaml's op names), where PyYAML has it.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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

    def value(v: object) -> str:  # as the serializer quotes it: strings single-quoted, a list in flow style
        style = "'" if isinstance(v, str) and v != "manifest" else None
        dumped = yaml.dump(v, Dumper=_DUMPER, default_flow_style=True, default_style=style, width=1 << 30)
        return dumped.removesuffix("\n...\n").removesuffix("\n")

    comment = {"yaml": "  # relative to this folder", "only": "  # without the manifest's op set"}
    result = _HEADER + "".join(f"{k}: {value(v)}{comment.get(k, '')}\n" for k, v in data.items())
    assert yaml.load(result, Loader=_LOADER) == data, result  # what --check will read back
    return result


def read(out: str) -> tuple[list[str] | None, str | None, str | None, bool]:
    """(ops, since, yaml path, only) recorded in DIR/shimgen.yaml; the yaml path is made relative to the cwd."""
    path = os.path.join(out, STAMP)
    if not os.path.lexists(path):
        return None, None, None, False
    raw = read_text(path, f"stamp {path}", limit=16 << 20)
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
        Version.parse(since, f"since in stamp {path}")
    native = data.get("yaml")
    if native is not None and not (isinstance(native, str) and native):
        raise bad("`yaml` must be a path")
    native = os.path.normpath(os.path.join(out, native)) if native else None
    only = data.get("only", False)
    if not isinstance(only, bool):
        raise bad("`only` is true or false")
    return (None if ops == "manifest" else list(ops)), since, native, only
