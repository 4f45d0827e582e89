"""`shimgen port SRC...`: which ATen calls of an existing C++/CUDA extension the stable surface covers.

It parses each source with tree-sitter's C++ grammar (the `port` extra: tree-sitter, tree-sitter-cpp), finds the
calls of ATen operators (`at::X(...)`, `torch::X(...)`, `at::X_out(...)`, `at::X_outf(...)`, `t.X(...)` and
`t->X(...)` where X is a Tensor method in native_functions.yaml), and answers for each call site, at each target
release, what an extension built with shimgen's headers gets (shimgen.generate.signatures.cpp's variants, the same
answer the generated ops.h gives). This module is the command; the model it runs (the scans, the surface's
answers, the caveats, the reports, the fixer) lives in shimgen.tools.porting:

    yes (shim | dispatcher | sibling)   a wrapper on a route that needs nothing but libtorch
    overlay                             only through shimgen's generated C shim (link the overlay library)
    from X.Y (route)                    hidden at the target: libtorch gains what it needs in X.Y
    removed in X.Y                      aten dropped the op after the target
    no: reason                          no wrapper at any release (a type without a stable representation, ...)
    varies                              the overloads that take this many arguments differ: see the op table

and which ops to put in [tool.shimgen] (`--toml PATH` writes the table). A call's overloads are those of the C++
name whose parameter count fits the arguments written (a method call counts `self`); types are not resolved.

What it cannot see, reported as such: calls inside macro definitions, code the parser could not read (a CUDA
kernel launch `<<<...>>>` parses, other extensions may not), calls written without `at::`/`torch::` (after a
`using namespace at;`: listed when the name is an ATen function), Tensor operators (`a + b`, `a[i]`), and which
overload a template or an implicit conversion picks.
"""

from __future__ import annotations

import difflib
import json
import os
import sys

from shimgen.base import output
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import source_files
from shimgen.facts import releases
from shimgen.generate.parse import NativeYaml
from shimgen.tools import project
from shimgen.tools.console import Parser, write_lines
from shimgen.generate.emit.fmt import black_format
from shimgen.tools.porting import analyze, fix as fix_mod, report as report_mod, rules
from shimgen.tools.porting.call_report import report, toml_into, toml_table
from shimgen.tools.porting.progress import Progress
from shimgen.tools.porting.calls import scan, tree_sitter_parser
from shimgen.tools.porting.surface import Surface

CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp", ".hh", ".cuh", ".inl")


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    finally:
        scan = sys.modules.get("shimgen.tools.porting.clang_scan")
        if scan is not None:
            scan.discard_temporary()


def _main(argv: list[str]) -> int:
    ap = Parser(prog="shimgen port", description="Which ATen constructs of C++/CUDA sources the stable "
                "surface covers, per site and target release; --fix rewrites the mechanical ones.")
    ap.add_argument("sources", nargs="+", metavar="SRC", help="C++/CUDA files, or folders to search")
    ap.add_argument("--target", metavar="X.Y[,X.Y]", help="target releases (default: [tool.shimgen]'s target "
                    "and the installed torch's release)")
    ap.add_argument("--toml", metavar="PATH", help="write the [tool.shimgen] table of the ops found to PATH (an "
                    "existing file's other tables kept)")
    ap.add_argument("--json", metavar="PATH", help="write the report's data as JSON")
    ap.add_argument("--yaml", metavar="PATH", help="native_functions.yaml (default: the installed torch's)")
    ap.add_argument("--parser", choices=("auto", "libclang", "tree-sitter"), default="auto",
                    help="libclang resolves types (default where it parses the file); tree-sitter sees calls only")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                    help="a macro defined for libclang, as the build defines it (-D WITH_CUDA: a CUDA build's code)")
    ap.add_argument("--fix", action="store_true", help="rewrite the mechanical constructs in place and print "
                    "a checklist of what needs a person")
    ap.add_argument("--diff", action="store_true", help="with --fix: print the rewrite as a unified diff, "
                    "leaving the files as they are")
    ap.add_argument("--progress", action="store_true", help="where stderr is not a terminal, a line on it every "
                    "few seconds of the scan (files done, the current one); on a terminal a status line is shown "
                    "anyway")
    args = ap.parse_args(argv)
    if args.diff and not args.fix:
        raise ShimgenError("--diff goes with --fix")
    files = source_files(args.sources, CPP_SUFFIXES)
    if args.target is not None:
        targets = releases.parse_list(args.target, "--target")
    else:
        found = project.current()
        release = NativeYaml(args.yaml).release
        targets = sorted({t for t in (found.target if found else None, release) if t is not None})
    if not targets:
        raise ShimgenError("no target release: give --target X.Y")
    # a report that cannot be written is refused before the scan, which takes seconds a file
    output.check_destinations([(path, f"--{flag} {path}") for flag, path in (("toml", args.toml), ("json", args.json))
                               if path])
    if args.parser == "tree-sitter" and not args.fix:  # the call-level report of the tree-sitter scan
        parser = tree_sitter_parser()
        sources = [scan(f, parser) for f in files]
        surface = Surface({c.name for s in sources for c in s.calls}, args.yaml)
        lines, data = report(sources, surface, targets)
    else:
        scanned = analyze.scan_files([os.path.abspath(f) for f in files], args.parser, tuple(args.define),
                                     Progress(len(files), "always" if args.progress else "auto"))
        rows, surface = analyze.answer(scanned, targets, args.yaml)
        lines, data = report_mod.render(rows, targets, analyze.blind_spots(scanned, surface), len(files))
    reports = []
    if args.toml:
        reports.append((args.toml, f"--toml {args.toml}", toml_into(args.toml, toml_table(data["ops"], min(targets)))))
    if args.json:
        reports.append((args.json, f"--json {args.json}", json.dumps(data, indent=1) + "\n"))
    if args.fix:
        lines, rewrites = _fix(scanned, rows, args.diff)
        reports += rewrites
    # one transaction: the reports and the rewritten sources staged, the report printed, then all renamed; an error
    # anywhere (a full disk, a closed stdout, a source edited since it was read) or an interrupt leaves every file as
    # it was
    output.write_files(reports, before_switch=lambda: write_lines(lines))
    return 0


def _fix(scanned, rows, diff: bool) -> tuple[list[str], list[tuple[str, str, bytes, bytes]]]:
    """The checklist (with the diff, or the files rewritten), and the rewrites to write: (path, label, new bytes,
    bytes read). A rewrite changes only what its edits change: a byte-order mark stays, and the lines it adds end
    as the file's lines do (CRLF or LF)."""
    out: list[str] = []
    checklist: list[str] = []
    rewrites: list[tuple[str, str, bytes, bytes]] = []
    seen: dict[str, bytes] = {}  # the file a path names (through links) -> its rewrite
    autograd: list[tuple[str, str]] = []  # (file, "ns::F") of each torch::autograd::Function registered as ops
    for f in scanned:
        mine = [r for r in rows if r.site.file == f.path]
        if f.parser != "libclang":
            checklist.append(f"{os.path.basename(f.path)}: not rewritten ({f.why}): the report lists its calls")
            continue
        kernels = [s for s in f.sites if s.kind in ("function", "lambda")]  # what a registration may name
        res = fix_mod.fix(f.text, mine, fix_mod.newline_of(f.data), kernels)
        checklist += res.checklist
        autograd += [(f.path, op) for op in res.autograd]
        if res.text == f.text:
            continue
        if diff:
            out += [line.rstrip("\n") for line in difflib.unified_diff(
                f.text.splitlines(True), res.text.splitlines(True), f"a/{os.path.basename(f.path)}",
                f"b/{os.path.basename(f.path)}")]
            continue
        bom = b"\xef\xbb\xbf" if f.data.startswith(b"\xef\xbb\xbf") else b""
        new = bom + res.text.encode("utf-8")
        real = os.path.realpath(f.path)
        if real in seen:  # the same file named twice (a folder and a file in it, a link): written once
            continue
        seen[real] = new
        rewrites.append((f.path, f.path, new, f.data))
        out.append(f"{f.path}: rewritten")
    if autograd:
        module, line = _autograd_module(autograd)
        checklist.append(line)
        if diff:
            out += ["--- /dev/null", f"+++ b/{os.path.basename(module[0])}",
                    *(f"+{x}" for x in module[1].splitlines())]
        else:
            rewrites.append((module[0], module[0], module[1]))
            out.append(f"{module[0]}: written")
    out += ["", f"## Checklist: {len(checklist)} constructs need a person", "", *(f"- [ ] {c}" for c in checklist)]
    return out, rewrites


def _autograd_module(autograd: list[tuple[str, str]]) -> tuple[tuple[str, str], str]:
    """The Python module registering the autograd of the ops written for torch::autograd::Function classes
    (data/port_rules.yaml `autograd`), beside the ported files that define them (their common folder), and the
    checklist line asking to import it."""
    t = rules.load()["autograd"]
    ops = list(dict.fromkeys(op for _, op in autograd))
    folder = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p, _ in autograd])
    path = os.path.join(folder, t["module"])
    text = black_format(t["template"].format(ops=ops))  # black-clean, as the project's own Python may be checked
    return (path, text), t["checklist"].format(module=t["module"], ops=", ".join(ops))
