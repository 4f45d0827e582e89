"""Derive data/stable_tensor_members.json: the public member functions of torch::stable::Tensor in each
release's stable headers (the runtimes' torch include folders), so the report knows `t.numel()` compiles at 2.10
without reading any torch at run time.

    python -m shimgen.dev derive-members [--runtimes DIR] [--out shimgen/data/stable_tensor_members.json]

Runtimes are the venvs DIR/torch-X.Y.Z (default $SHIMGEN_RUNTIMES or ~/.cache/shimgen/runtimes), plus the
installed torch. A release keeps the members its headers declare; a member is recorded with the first release
that declares it (releases in between that were not measured are counted as having it from that first one)."""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import tempfile

from shimgen.tools.porting import clang_env

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(HERE, "data", "stable_tensor_members.json")


def members(include_root: str) -> set[str]:
    ci = clang_env.cindex()
    if ci is None:
        raise SystemExit("derive_members needs libclang: pip install libclang")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.cpp")
        with open(src, "w") as f:
            f.write("#include <torch/csrc/stable/tensor.h>\n")
        tu = ci.Index.create().parse(src, args=clang_env.args(clang_env.torch_includes(include_root),
                                                              extra=("-DTORCH_STABLE_ONLY",)))
    found: set[str] = set()

    def walk(node, inside: bool) -> None:
        for c in node.get_children():
            if c.kind == ci.CursorKind.NAMESPACE:
                walk(c, inside)
            elif c.kind in (ci.CursorKind.CLASS_DECL, ci.CursorKind.STRUCT_DECL) and c.spelling == "Tensor" \
                    and c.is_definition() and "stable" in (c.semantic_parent.spelling or ""):
                for m in c.get_children():
                    if m.kind in (ci.CursorKind.CXX_METHOD, ci.CursorKind.FUNCTION_TEMPLATE) \
                            and m.access_specifier == ci.AccessSpecifier.PUBLIC and not m.spelling.startswith("operator"):
                        found.add(m.spelling)

    walk(tu.cursor, False)
    return found


def release_of(root: str) -> str | None:
    path = os.path.join(root, "torch", "version.py")
    if not os.path.exists(path):
        return None
    m = re.search(r"__version__\s*=\s*['\"](\d+\.\d+)", open(path).read())
    return m.group(1) if m else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev derive-members", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtimes", default=os.environ.get("SHIMGEN_RUNTIMES") or os.path.expanduser("~/.cache/shimgen/runtimes"))
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    roots = sorted(glob.glob(os.path.join(args.runtimes, "torch-*", "lib", "python3*", "site-packages", "torch")))
    import torch

    roots.append(os.path.dirname(torch.__file__))
    per_release: dict[str, set[str]] = {}
    for root in roots:
        rel = release_of(os.path.dirname(root))
        inc = os.path.join(root, "include")
        if rel is None or not os.path.isdir(os.path.join(inc, "torch", "csrc", "stable")):
            continue
        per_release[rel] = members(inc)
    key = lambda r: tuple(int(x) for x in r.split("."))
    releases = sorted(per_release, key=key)
    first: dict[str, str] = {}
    for rel in releases:
        for m in sorted(per_release[rel]):
            first.setdefault(m, rel)
    data = {"measured": releases, "members": dict(sorted(first.items()))}
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"{args.out}: {len(first)} members over {', '.join(releases)}")
    return 0
