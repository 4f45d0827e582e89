"""`shimgen port SRC...`: which ATen calls of an existing C++/CUDA extension the stable surface covers.

It parses each source with tree-sitter's C++ grammar (the `port` extra: tree-sitter, tree-sitter-cpp), finds the
calls of ATen operators (`at::X(...)`, `torch::X(...)`, `at::X_out(...)`, `at::X_outf(...)`, `t.X(...)` and
`t->X(...)` where X is a Tensor method in native_functions.yaml), and answers for each call site, at each target
release, what an extension built with shimgen's headers gets (shimgen.generate.signatures.cpp's variants, the same
answer the generated ops.h gives):

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

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field

from shimgen.base.errors import ShimgenError
from shimgen.base import output
from shimgen.tools import project
from shimgen.facts import releases
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.tools.console import Parser, write_lines
from shimgen.generate import plan as plan_mod
from shimgen.generate import table as table_mod
from shimgen.base.inputs import read_text, source_files
from shimgen.generate.parse import NativeYaml
from shimgen.facts.versions import Version

NAMESPACES = ("at", "torch", "::at", "::torch")
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp", ".hh", ".cuh", ".inl")


@dataclass(frozen=True)
class Call:
    file: str
    line: int
    text: str  # the callee as written, e.g. `at::softmax`, `x.masked_fill_`
    name: str  # the C++ name: `softmax`, `masked_fill_`, `sum_out`
    method: bool
    nargs: int  # arguments written; a method call adds self
    numbers: tuple[int, ...] = ()  # positions (self counted) of arguments written as number literals


@dataclass
class Source:
    path: str
    calls: list[Call] = field(default_factory=list)
    unqualified: list[tuple[int, str]] = field(default_factory=list)  # (line, name) called without a namespace
    macros: list[int] = field(default_factory=list)  # lines of macro definitions that contain a call
    unparsed: list[int] = field(default_factory=list)  # lines the parser could not read


def _parser():
    try:
        import tree_sitter
        import tree_sitter_cpp
    except ImportError:
        raise ShimgenError("shimgen port needs a C++ parser: pip install 'shimgen[port]' "
                           "(tree-sitter, tree-sitter-cpp)") from None
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


def scan(path: str, parser=None) -> Source:
    """The call sites of one source file."""

    text = read_text(path, path)
    tree = (parser or _parser()).parse(text.encode("utf-8"))
    src = Source(path)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("preproc_def", "preproc_function_def"):
            body = node.child_by_field_name("value")
            if body is not None and "(" in body.text.decode():
                src.macros.append(node.start_point[0] + 1)
            continue
        if node.type == "ERROR" or node.is_missing:
            src.unparsed.append(node.start_point[0] + 1)
        if node.type == "call_expression":
            call = _call(path, node)
            if isinstance(call, Call):
                src.calls.append(call)
            elif call is not None:
                src.unqualified.append((node.start_point[0] + 1, call))
        stack.extend(reversed(node.children))
    src.calls.sort(key=lambda c: c.line)
    return src


def _call(path: str, node) -> Call | str | None:
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return None
    written = [c for c in args.named_children if c.type != "comment"]
    nargs = len(written)
    numbers = tuple(i for i, c in enumerate(written) if _is_number(c))
    line = node.start_point[0] + 1
    if fn.type == "qualified_identifier":
        text = fn.text.decode()
        scope, _, name = text.rpartition("::")
        if scope.replace(" ", "") in NAMESPACES and name.isidentifier():
            return Call(path, line, text, name, False, nargs, numbers)
        return None
    if fn.type == "field_expression":
        field_node = fn.child_by_field_name("field")
        if field_node is not None and field_node.type == "field_identifier":
            obj = fn.child_by_field_name("argument")
            op = "->" if any(c.type == "->" for c in fn.children) else "."
            name = field_node.text.decode()
            return Call(path, line, f"{obj.text.decode() if obj else ''}{op}{name}", name, True, nargs + 1,
                        tuple(i + 1 for i in numbers))
        return None
    if fn.type == "identifier":
        return fn.text.decode()
    return None


def _is_number(node) -> bool:
    """A number literal, possibly negated or cast-free parenthesized: it cannot bind to a Tensor parameter."""
    if node.type == "number_literal":
        return True
    if node.type in ("unary_expression", "parenthesized_expression"):
        inner = [c for c in node.named_children]
        return len(inner) == 1 and _is_number(inner[0])
    return False


# ---- what the stable surface has for each call ------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: str  # yes | overlay | from | removed | no | not-aten | varies
    text: str  # as printed

    @property
    def portable(self) -> bool:
        return self.status == "yes"


def _schema_names(cpp: str, known: set[str]) -> tuple[str, str]:
    """(schema name, C++ wrapper name) a written C++ name refers to: `sum_out`/`sum_outf` -> (sum, sum_out)."""
    for suffix in ("_outf", "_out"):
        if cpp.endswith(suffix) and cpp[: -len(suffix)] in known:
            return cpp[: -len(suffix)], cpp[: -len(suffix)] + "_out"
    return cpp, cpp


class Surface:
    """The wrappers shimgen generates for a set of C++ names (from the installed torch's yaml, or `yaml`)."""

    def __init__(self, cpp_names: set[str], yaml_path: str | None = None) -> None:
        self.native = NativeYaml(yaml_path)
        known = set(self.native.by_name)
        self.names = {c: _schema_names(c, known) for c in cpp_names}
        schema_names = sorted({s for s, _ in self.names.values() if s in known})
        table = table_mod.load()
        self.refused: dict[str, str] = {}
        ok = []
        for name in schema_names:
            try:
                self.native.select([name], table, [])
                ok.append(name)
            except ShimgenError as e:
                self.refused[name] = e.line()
        self.wrappers: dict[str, list] = {}
        self.reasons: dict[str, str] = {}
        self.methods: set[str] = set()
        if ok:
            self.plan = plan_mod.make(ok, yaml_path, additive=False)
            ws, refusals = sig_cpp.wrappers(self.plan)
            # what a build without SHIMGEN_OVERLAY calls (libtorch alone): the answer, where it has a form
            self.plain = {w.op.name: w for w in sig_cpp.wrappers(self.plan.in_world(plan_mod.DEFAULT_WORLD))[0]}
            for w in ws:
                if w.op.added:
                    continue
                self.wrappers.setdefault(w.name, []).append(w)
            for r in refusals:
                op = r.removeprefix("op ").partition(":")[0].partition(".")[0]
                self.reasons.setdefault(op, r)
            from torchgen.model import Variant

            for op in self.plan.ops:
                if Variant.method in op.f.variants:
                    self.methods.add(sig_cpp.cpp_name(op))
        self.known = known

    def is_aten(self, call: Call) -> bool:
        schema, cpp = self.names[call.name]
        if schema not in self.known:
            return False
        if call.method:  # only Tensor methods of native_functions.yaml are ATen ops
            return cpp in self.methods or (schema in self.refused and self._yaml_method(schema))
        return True

    def _yaml_method(self, schema: str) -> bool:
        from torchgen.model import Variant

        try:
            return any(Variant.method in op.f.variants for op in self.native.select([schema]))
        except ShimgenError:
            return False

    def candidates(self, call: Call) -> list:
        """The wrappers of the call's C++ name whose parameter count fits the arguments written."""
        schema, cpp = self.names[call.name]
        ws = self.wrappers.get(cpp, [])
        if call.method:
            ws = [w for w in ws if _is_method(w)]
        fit = [w for w in ws if sum(p.default is None for p in w.params) <= call.nargs <= len(w.params)
               and not any(i < len(w.params) and "stable::Tensor" in w.params[i].cpp_type for i in call.numbers)]
        return fit or ws

    def answer(self, call: Call, target) -> tuple[Answer, list[str]]:
        """The call's availability at `target`, and the overloads it may reach."""
        schema, cpp = self.names[call.name]
        if not self.is_aten(call):
            return Answer("not-aten", "not an ATen op"), []
        ws = self.candidates(call)
        if not ws:
            why = self.refused.get(schema) or self.reasons.get(schema) or f"no wrapper for {cpp}"
            return Answer("no", f"no: {_short(why)}"), []
        answers = {_answer_one(w, target, self.plain.get(w.op.name)) for w in ws}
        names = [w.op.name for w in ws]
        if len(answers) == 1:
            return answers.pop(), names
        if len({a.status for a in answers}) == 1:  # the same outcome on different routes
            head = {a.text.partition(" (")[0] for a in answers}
            if len(head) == 1:
                routes = sorted({a.text.partition(" (")[2].rstrip(")") for a in answers})
                return Answer(answers.pop().status, f"{head.pop()} ({' or '.join(routes)})"), names
        return Answer("varies", "varies: " + "; ".join(f"{w.op.name} {_answer_one(w, target, self.plain.get(w.op.name)).text}"
                                               for w in ws)), names


def _is_method(w) -> bool:
    from torchgen.model import Variant

    return Variant.method in w.op.f.variants


def _short(reason: str) -> str:
    return reason.removeprefix("shimgen: ").split(" (see ")[0]


def _answer_one(w, target, plain=None) -> Answer:
    """`w` as a build with the overlay sees it; `plain`: the same op's wrapper in a default build (libtorch
    alone), whose form, where it has one at `target`, is the answer."""
    mine = plain.variants if plain is not None else ()
    v = plain.active(target) if plain is not None else None
    if v is not None:
        return Answer("yes", f"yes ({v.route.name})")
    v = w.active(target)
    if v is not None:
        if v.route.overlay:
            return Answer("overlay", "overlay (shimgen's C shim)")
        return Answer("yes", f"yes ({v.route.name})")
    later = sorted([x for x in (*mine, *w.variants) if x.start > target], key=lambda x: (x.start, x.route.overlay))
    if later:
        first = later[0]
        route = "overlay" if first.route.overlay else first.route.name
        return Answer("from", f"from {first.start} ({route})")
    return Answer("removed", f"removed by {w.variants[-1].end}" if w.variants and w.variants[-1].end else "no")


# ---- the report -------------------------------------------------------------------------------------------


def report(sources: list[Source], surface: Surface, targets: list) -> tuple[list[str], dict]:
    """The Markdown report and the same data for --json."""
    rows = []
    for src in sources:
        for call in src.calls:
            member = _member_since(call) if surface.is_aten(call) else None
            if member is not None:  # a member of torch::stable::Tensor (numel, dim, ...): no op needed
                answers = [(Answer("yes", "yes (member)") if member <= t else Answer("from", f"from {member} (member)"),
                            []) for t in targets]
                rows.append((call, [a for a, _ in answers], []))
                continue
            if not surface.is_aten(call) and call.method:
                continue  # a method of some other type, or a Tensor accessor that is not an op (sizes, data_ptr)
            answers = [surface.answer(call, t) for t in targets]
            rows.append((call, [a for a, _ in answers], answers[0][1]))
    lines = [f"# shimgen port: {len(sources)} files, {len(rows)} ATen calls; targets "
             f"{', '.join(str(t) for t in targets)}", ""]
    head = "| call site | call | overloads | " + " | ".join(str(t) for t in targets) + " |"
    lines += [head, "|" + "---|" * (3 + len(targets))]
    for call, answers, names in rows:
        where = f"{os.path.basename(call.file)}:{call.line}"
        lines.append(f"| {where} | `{call.text}` | {', '.join(names) or '-'} | "
                     + " | ".join(a.text for a in answers) + " |")
    lines += ["", "## Summary", ""]
    statuses = ["yes", "overlay", "from", "removed", "varies", "no", "not-aten"]
    lines += ["| target | calls | " + " | ".join(statuses) + " |", "|" + "---|" * (2 + len(statuses))]
    summary = {}
    for i, t in enumerate(targets):
        counts = {s: sum(1 for _, a, _ in rows if a[i].status == s) for s in statuses}
        summary[str(t)] = counts
        lines.append(f"| {t} | {len(rows)} | " + " | ".join(str(counts[s]) for s in statuses) + " |")
    used = {a.status for _, answers, _ in rows for a in answers}
    for _, answers, _ in rows:  # the routes named in parentheses: `yes (dispatcher or sibling)`
        for a in answers:
            for inner in re.findall(r"\(([a-z_ ]+)\)", a.text):
                used.update(inner.split(" or "))
    caveats = [(route, text) for route, text in CAVEATS if route in used]
    if caveats:
        lines += ["", "## Caveats", "", *(f"- `{route}`: {text}" for route, text in caveats)]
    by_op: dict[str, list] = {}
    for call, answers, _ in rows:
        by_op.setdefault(call.name, []).append((call, answers))
    lines += ["", "## Ops", "", "| C++ name | calls | " + " | ".join(str(t) for t in targets) + " |",
              "|" + "---|" * (2 + len(targets))]
    for name in sorted(by_op):
        uses = by_op[name]
        cells = []
        for i in range(len(targets)):
            texts = sorted({a[i].text for _, a in uses})
            cells.append("; ".join(texts))
        lines.append(f"| `{name}` | {len(uses)} | " + " | ".join(cells) + " |")
    blind = []
    for src in sources:
        base = os.path.basename(src.path)
        aten_like = [(ln, n) for ln, n in src.unqualified if n in surface.known or n in _functions(surface)]
        if aten_like:
            blind.append(f"- {base}: unqualified calls named like ATen functions (not counted): "
                         + ", ".join(f"`{n}` (line {ln})" for ln, n in aten_like))
        if src.macros:
            blind.append(f"- {base}: macro definitions not examined (lines {', '.join(map(str, src.macros))})")
        if src.unparsed:
            blind.append(f"- {base}: code the parser could not read near lines "
                         f"{', '.join(map(str, sorted(set(src.unparsed))))}")
    lines += ["", "## What it cannot see", "", *blind,
              "- Tensor operators (`a + b`, `a[i]`, `a += b`) and which overload a template or an implicit "
              "conversion picks: a call's overloads are those whose parameter count fits"]
    ops = sorted({surface.names[c.name][0] for c, a, _ in rows
                  if any(x.status not in ("no", "not-aten") for x in a) and "(member)" not in a[0].text})
    toml = toml_table(ops, min(targets))
    lines += ["", "## [tool.shimgen]", "", "```toml", *toml.splitlines(), "```"]
    data = {
        "targets": [str(t) for t in targets],
        "calls": [{"file": c.file, "line": c.line, "call": c.text, "overloads": names,
                   **{str(t): {"status": a[i].status, "text": a[i].text} for i, t in enumerate(targets)}}
                  for c, a, names in rows],
        "summary": summary,
        "ops": ops,
    }
    return lines, data


# What each route costs or asks of the caller, as the reports say it (shimgen.tools.porting.report adds its own).
CAVEATS = (
    ("shim", "libtorch's own C shim: about the cost of the at:: call"),
    ("dispatcher", "libtorch's boxed dispatcher (torch_call_dispatcher, from 2.10): about 1.4-1.7x an at:: call"),
    ("sibling", "a Scalar argument travels as a 0-dim tensor to aten's Tensor overload, exactly; a number that "
                "cannot (a complex or out-of-range value for that dtype) raises a `shimgen:` error at run time "
                "rather than giving a different result"),
    ("overlay", "needs shimgen's overlay library (C shims libtorch does not ship, compiled against one torch's "
                "ATen: not ABI-stable); without `overlay = true` the setuptools build refuses it"),
    ("from", "hidden at that target: a compile error naming the release to target"),
)


def _member_since(call: Call):
    """The release from which torch::stable::Tensor has the method `call` calls (None: not a member)."""
    if not call.method:
        return None
    from shimgen.tools.porting import rules  # a cycle: shimgen.tools.porting imports this module

    since = rules.members().get(rules.member_name(call.name))
    return Version.parse(since) if since else None


def _functions(surface: Surface) -> set[str]:
    return set(surface.wrappers)


def toml_table(ops: list[str], target) -> str:
    body = ", ".join(json.dumps(o) for o in ops)
    return f'[tool.shimgen]\nops = [{body}]\ntarget = "{target}"\n'


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
    ap.add_argument("--toml", metavar="PATH", help="write the [tool.shimgen] table of the ops found to PATH")
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
        parser = _parser()
        sources = [scan(f, parser) for f in files]
        surface = Surface({c.name for s in sources for c in s.calls}, args.yaml)
        lines, data = report(sources, surface, targets)
    else:
        # a cycle (shimgen.tools.porting imports this module); also start-up: libclang loads only on this path
        from shimgen.tools.porting import analyze, report as report_mod

        scanned = [analyze.scan_file(os.path.abspath(f), args.parser, tuple(args.define)) for f in files]
        rows, surface = analyze.answer(scanned, targets, args.yaml)
        lines, data = report_mod.render(rows, targets, analyze.blind_spots(scanned, surface), len(files))
    reports = []
    if args.toml:
        reports.append((args.toml, f"--toml {args.toml}", toml_table(data["ops"], min(targets))))
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
    import difflib

    # a cycle: shimgen.tools.porting imports this module
    from shimgen.tools.porting import fix as fix_mod

    out: list[str] = []
    checklist: list[str] = []
    rewrites: list[tuple[str, str, bytes, bytes]] = []
    seen: dict[str, bytes] = {}  # the file a path names (through links) -> its rewrite
    for f in scanned:
        mine = [r for r in rows if r.site.file == f.path]
        if f.parser != "libclang":
            checklist.append(f"{os.path.basename(f.path)}: not rewritten ({f.why}): the report lists its calls")
            continue
        kernels = [s for s in f.sites if s.kind in ("function", "lambda")]  # what a registration may name
        res = fix_mod.fix(f.text, mine, fix_mod.newline_of(f.data), kernels)
        checklist += res.checklist
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
    out += ["", f"## Checklist: {len(checklist)} constructs need a person", "", *(f"- [ ] {c}" for c in checklist)]
    return out, rewrites
