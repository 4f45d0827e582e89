"""Upstream's surface per release (data/upstream_surface.yaml): the aten overloads each release's hand-written
torch/csrc/stable/ops.h reaches (its dispatcher calls and libtorch C shim calls) and the names of its other
functions (from_blob, parallel_for, ...). A run's default op set includes the surface of the release whose yaml it
reads, so code written against that release's own ops.h compiles with the output in front (README "Drop-in").

    python -m shimgen.dev upstream-surface record X.Y OPS_H [--yaml native_functions.yaml]
    python -m shimgen.dev upstream-surface record-json X.Y STABLE_SURFACE_JSON

records one release from its shipped header (the release command runs it for a new release), or from a
stable_surface.json collection's record of that header (`<release>.ops_h`: each function's name, dispatcher_ops
and shim_calls), for a release whose wheel is not at hand (2.9). Where the torch a
yaml comes from is newer than the data, its own header is read instead (`for_yaml`)."""

from __future__ import annotations

import argparse
import os
import re
import sys

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_yaml, read_text
from shimgen.facts.versions import Version

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data/upstream_surface.yaml")
_DISPATCH = re.compile(r'(?:aoti_)?torch_call_dispatcher\(\s*"aten::(\w+)",\s*"(\w*)"')
_SHIM = re.compile(r"\baoti_torch_aten_(\w+)\(")
_FUNCTION = re.compile(r"^inline\s+[\w:<>, &*]+?\b(\w+)\(", re.M)


def parse(ops_h: str, overloads: list[str]) -> dict[str, list[str]]:
    """{ops: the aten overloads the header reaches, functions: every function name it defines}. `overloads`:
    every `name.overload` of a native_functions.yaml, to read a C shim's name (aoti_torch_aten_fill__Scalar)."""
    by_shim = {(o[: -len(".default")] if o.endswith(".default") else o).replace(".", "_"): o for o in overloads}
    ops = {f"{n}.{ov or 'default'}" for n, ov in _DISPATCH.findall(ops_h)}
    for sym in _SHIM.findall(ops_h):
        base = re.sub(r"_v\d+$", "", sym)
        if base not in by_shim:
            raise ShimgenError(f"upstream's ops.h calls aoti_torch_aten_{sym}, which names no overload of the yaml")
        ops.add(by_shim[base])
    return {"ops": sorted(ops), "functions": sorted(set(_FUNCTION.findall(ops_h)))}


def load() -> dict[Version, dict[str, list[str]]]:
    raw = package_yaml("data/upstream_surface.yaml") or {}
    return {Version.parse(k, "release in data/upstream_surface.yaml"): v for k, v in (raw.get("releases") or {}).items()}


def installed_header(yaml_path: str) -> str | None:
    """The stable ops.h of the torch package a native_functions.yaml ships in (torchgen/packaged/ATen/native/ beside
    torch/), None where the yaml is not a wheel's."""
    site = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(yaml_path)), "..", "..", "..", ".."))
    path = os.path.join(site, "torch", "include", "torch", "csrc", "stable", "ops.h")
    return path if os.path.basename(os.path.dirname(os.path.dirname(os.path.realpath(yaml_path)))) == "ATen" \
        and os.path.isfile(path) else None


def for_yaml(release: Version | None, yaml_path: str, overloads: list[str]) -> list[str]:
    """The aten overloads upstream's ops.h of `release` reaches: the recorded release at or before it; where the
    yaml's torch is newer than every recorded release, its own header (when the yaml is a wheel's)."""
    data = load()
    if release is None or not data:
        return []
    newest = max(data)
    if release > newest:
        header = installed_header(yaml_path)
        if header is not None:
            return parse(read_text(header, "upstream's ops.h"), overloads)["ops"]
    known = [r for r in data if r <= release]
    return list(data[max(known)]["ops"]) if known else []


def recorded(release: str, ops_h: str, overloads: list[str], text: str) -> tuple[str, dict[str, list[str]]]:
    """(the data file's new text with `release` recorded from `ops_h`, what was recorded)."""
    import yaml  # start-up: a generation run reads the data through shimgen's cache and never imports PyYAML

    minor = Version.parse(release, "release")
    found = parse(read_text(ops_h, "upstream's ops.h"), overloads)
    head = text[: text.index("releases:")]
    data = {str(k): v for k, v in (yaml.safe_load(text).get("releases") or {}).items()}
    data[f"{minor.major}.{minor.minor}"] = found
    ordered = dict(sorted(data.items(), key=lambda kv: Version.parse(kv[0], "release")))
    return head + yaml.safe_dump({"releases": ordered}, sort_keys=False, default_flow_style=None, width=118), found


def from_json(release: str, surface_json: str, overloads: list[str]) -> str:
    """A stable_surface.json's record of one release's ops.h, written back as the calls parse() reads."""
    import json  # noqa: PLC0415

    minor = Version.parse(release, "release")
    raw = json.loads(read_text(surface_json, "stable_surface.json"))
    entry = next((v for k, v in raw.items() if Version.parse(k, "release") == minor), None)
    if entry is None:
        raise ShimgenError(f"{surface_json} has no release {release}")
    lines = []
    for f in entry["ops_h"]:
        lines.append(f"inline void {f['name']}(")
        lines += [f'torch_call_dispatcher("{d.split(".")[0]}", "{d.split(".")[1] if "." in d else ""}"'
                  for d in f["dispatcher_ops"]]
        lines += [f"{s}(" for s in f["shim_calls"]]
    return "\n".join(lines) + "\n"


def _op_names(yaml_path: str | None) -> list[str]:
    """Every op name of a native_functions.yaml. Imported lazily: the parser is the generation core, a layer after
    the facts, and only recording a release reads a yaml."""
    from shimgen.generate.parse import NativeYaml

    return NativeYaml(yaml_path).all_op_names()


def record(release: str, ops_h: str, yaml_path: str | None, path: str = DATA) -> dict[str, list[str]]:
    with open(path, encoding="utf-8") as f:
        text, found = recorded(release, ops_h, _op_names(yaml_path), f.read())
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev upstream-surface", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record one release's surface from its shipped ops.h")
    r.add_argument("release")
    r.add_argument("ops_h")
    r.add_argument("--yaml", help="a native_functions.yaml to read C shim names with (default: the installed one)")
    j = sub.add_parser("record-json", help="record one release from a stable_surface.json collection")
    j.add_argument("release")
    j.add_argument("surface_json")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "record-json":
            import tempfile  # noqa: PLC0415

            with tempfile.NamedTemporaryFile("w", suffix=".h", delete=False) as tmp:
                tmp.write(from_json(args.release, args.surface_json, _op_names(None)))
            try:
                found = record(args.release, tmp.name, None)
            finally:
                os.unlink(tmp.name)
        else:
            found = record(args.release, args.ops_h, args.yaml)
    except ShimgenError as e:
        print(f"shimgen: error: {e}", file=sys.stderr)
        return 2
    print(f"{args.release}: {len(found['ops'])} aten overloads, {len(found['functions'])} function names")
    return 0
