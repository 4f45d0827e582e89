"""Scan each file (libclang; tree-sitter where libclang cannot parse it) and answer its constructs."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import decode, read_bytes
from shimgen.tools.porting import calls, clang_scan, rows as rows_mod, rules
from shimgen.tools.porting.clang_scan import Site
from shimgen.tools.porting.progress import Progress
from shimgen.tools.porting.surface import Surface


@dataclass
class Scanned:
    path: str
    text: str
    sites: list[Site] = field(default_factory=list)
    parser: str = "libclang"
    why: str = ""  # why libclang could not parse it
    ts: object = None  # the tree-sitter scan (shimgen.tools.porting.calls.Source), where it fell back
    data: bytes = b""  # the file's bytes as read (text is their UTF-8 decoding, a byte-order mark dropped)


def scan_files(paths: list[str], parser: str = "auto", defines: tuple[str, ...] = (),
               progress: Progress | None = None) -> list[Scanned]:
    """Each file scanned (scan_file). The torch headers that several files include outside any conditional
    (clang_scan.shared_headers: `torch/script.h`, ...) are parsed once for all of them, in a precompiled prelude of
    their own; a set only one file includes is parsed in that file (a precompiled prelude takes longer to make than
    the file to parse), unless an earlier run made its prelude."""
    texts: dict[str, tuple[bytes, str]] = {}
    shared: dict[str, tuple[str, ...]] = {}
    if parser in ("auto", "libclang"):
        for path in paths:
            if path not in texts:
                data = read_bytes(path, path)
                texts[path] = (data, decode(data, path))
                shared[path] = clang_scan.shared_headers(path, texts[path][1])
    uses = Counter(shared.values())
    progress = progress or Progress(len(paths), "never")
    out = []
    try:
        if parser in ("auto", "libclang"):
            clang_scan.prepare(sorted(s for s, n in uses.items() if s and n > 1), defines, progress.note)
        for p in paths:
            progress.file(p)
            out.append(scan_file(p, parser, defines, shared.get(p, ()), uses[shared.get(p, ())] > 1, texts.get(p)))
            progress.file_done()
    finally:
        progress.finish()
    return out


def scan_file(path: str, parser: str = "auto", defines: tuple[str, ...] = (), headers: tuple[str, ...] = (),
              build_shared: bool = False, read: tuple[bytes, str] | None = None) -> Scanned:
    """One file's constructs: libclang's (`headers`, `build_shared`: the precompiled prelude to parse it against,
    clang_scan.parse), else tree-sitter's. `read`: its bytes and text, where the caller read them."""
    if read is None:
        raw = read_bytes(path, path)
        read = (raw, decode(raw, path))
    data, text = read
    if parser in ("auto", "libclang"):
        try:
            return Scanned(path, text, clang_scan.scan(path, text, defines, headers, build_shared), data=data)
        except clang_scan.Unparsed as e:
            if parser == "libclang":
                raise ShimgenError(f"{path}: {e}") from None
            why = str(e)
    else:
        why = "--parser tree-sitter"
    src = calls.scan(path)
    sites = []
    members = rules.members()
    for c in src.calls:
        if c.method and rules.member_name(c.name) in members:
            sites.append(Site(path, c.line, "member", c.name, c.text))
        else:
            sites.append(Site(path, c.line, "method" if c.method else "call", c.name, c.text, nargs=c.nargs,
                              numbers=c.numbers))
    return Scanned(path, text, sites, "tree-sitter", why, src, data)


def answer(scanned: list[Scanned], targets, yaml_path: str | None = None):
    sites = [s for f in scanned for s in f.sites]
    surface = Surface(rows_mod.names_needed(sites), yaml_path)
    out = rows_mod.answer(sites, surface, targets)
    # a tree-sitter method that is not an aten op is some other type's method (types are not resolved there)
    ts = {f.path for f in scanned if f.parser == "tree-sitter"}
    out = [r for r in out if not (r.site.file in ts and r.site.kind == "method" and not r.ops)]
    return out, surface


def blind_spots(scanned: list[Scanned], surface) -> list[str]:
    lines = []
    for f in scanned:
        base = os.path.basename(f.path)
        if f.parser == "tree-sitter":
            lines.append(f"- {base}: read by tree-sitter ({f.why}): types not resolved; only calls of aten ops "
                         "and Tensor members are listed")
            src = f.ts
            aten_like = [(ln, n) for ln, n in src.unqualified if n in surface.known]
            if aten_like:
                lines.append(f"- {base}: unqualified calls named like ATen functions (not counted): "
                             + ", ".join(f"`{n}` (line {ln})" for ln, n in aten_like))
            if src.unparsed:
                lines.append(f"- {base}: code the parser could not read near lines "
                             f"{', '.join(map(str, sorted(set(src.unparsed))))}")
    lines.append("- which overload an implicit conversion picks where a call's argument types are dependent "
                 "(inside a template): its overloads are those whose parameter count fits")
    return lines
