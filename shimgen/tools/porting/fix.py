"""`shimgen port --fix`: the mechanical rewrites of a scanned file, and the checklist of what needs a person.

An edit replaces one byte range by a list of parts: text, or a byte range of the original that is itself
rewritten (so `out.select(1, 0) = at::log(x)` becomes `torch::stable::copy_(torch::stable::select(out, 1, 0),
torch::stable::log(x))`: the hazard's edit names the two sides, each rewritten by its own edits)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shimgen.tools.porting import cxx_text, dispatch, macros, registration, rules
from shimgen.tools.porting.rows import Row

Part = str | tuple[int, int]

_QUAL = re.compile(rb"(?:(?:::)?[A-Za-z_]\w*\s*::\s*)+$")


@dataclass
class Edit:
    start: int
    end: int
    parts: list[Part]


@dataclass
class Result:
    text: str
    checklist: list[str] = field(default_factory=list)
    fixed: int = 0
    autograd: list[str] = field(default_factory=list)  # "ns::F" of the torch::autograd::Function classes registered


def _qualified_start(data: bytes, start: int) -> int:
    m = _QUAL.search(data[max(0, start - 200):start])
    return start - len(m.group(0)) if m else start


class Fixer:
    def __init__(self, data: bytes, rows: list[Row], newline: str = "\n", functions: list | None = None) -> None:
        self.data = data
        self.functions = functions or []  # the functions and lambdas the file defines (a kernel may be one)
        self.newline = newline.encode()  # the file's line ending: the text an edit adds ends its lines with it
        self.rows = rows
        self.edits: list[Edit] = []
        self.checklist: list[str] = []
        self.headers: list[str] = []
        self.covered: set[int] = set()  # ids of rows an edit handles

    def header(self, h: str | tuple[str, ...] | None) -> None:
        for one in (h,) if isinstance(h, str) else h or ():
            if one not in self.headers:
                self.headers.append(one)

    def args_parts(self, args: list[tuple[int, int]]) -> list[Part]:
        out: list[Part] = []
        for i, a in enumerate(args):
            if i:
                out.append(", ")
            out.append(a)
        return out

    def plan(self) -> None:
        data = self.data
        includes = []
        self.classes = self._autograd_classes()
        self.autograd_ops: list[str] = []  # "ns::F" of the classes the registrations registered
        for row in self.rows:
            s = row.site
            k = s.kind
            if k == "call" and s.callee:
                args = self._factory_args(s.args)
                if args is None:
                    self.edits.append(Edit(s.callee[0], s.callee[1], [f"torch::stable::{s.key}"]))
                else:
                    self.edits.append(Edit(s.start, s.end, [f"torch::stable::{s.key}(", *args, ")"]))
                self.covered.add(id(row))
            elif k == "method" and row.fix and s.obj and (to := self._to_options(s)) is not None:
                self.edits.append(Edit(s.start, s.end, to))
                self.covered.add(id(row))
            elif k == "method" and row.fix and s.obj:
                obj: Part = s.obj if s.form != "->" else ("*", s.obj)  # type: ignore[assignment]
                head = ["torch::stable::", s.key, "("]
                self.edits.append(Edit(s.start, s.end, [*head, *(obj if isinstance(obj, tuple) and obj[0] == "*"
                                                                   else [obj]), *([", "] if s.args else []),
                                                        *self.args_parts(s.args), ")"]))
                self.covered.add(id(row))
            elif k == "member":
                if row.fix and s.obj:
                    name = rules.member_name(s.key)
                    self.edits.append(Edit(s.start, s.end, [s.obj, s.form, name, "(", *self.args_parts(s.args), ")"]))
                self.covered.add(id(row))
            elif k == "template" and row.fix and s.obj:
                rule = rules.template(s.key)
                rep = rule.replace.format(t="\0", T=rules.rename_types(s.targs))
                before, _, after = rep.partition("\0")
                if s.form == "->":
                    self.edits.append(Edit(s.start, s.end, [before, "(*", s.obj, ")", after]))
                else:
                    self.edits.append(Edit(s.start, s.end, [before, s.obj, after]))
                self.header(rule.header)
                self.covered.add(id(row))
            elif k == "operator":
                if s.key == "[]" and len(s.args) == 2:
                    self.edits.append(Edit(s.start, s.end, ["torch::stable::select(", s.args[0], ", 0, ",
                                                            s.args[1], ")"]))
                else:
                    self.header(rules.load()["operators_header"])
                self.covered.add(id(row))
            elif k == "type" and row.fix:
                rule = rules.type_rule(s.key)
                start = _qualified_start(data, s.start)
                self.edits.append(Edit(start, s.end, [rule.replace]))
                self.header(rule.header)
                self.covered.add(id(row))
            elif k == "constant":
                self.edits.append(Edit(s.start, s.end, [row.replacement]))
                if (named := rules.name_rule(s.key)) is not None:
                    self.header(named.get("header"))
                self.covered.add(id(row))
            elif k == "macro" and row.fix:
                if self._macro(row):
                    self.covered.add(id(row))
            elif k == "include":
                includes.append(row)
                self.covered.add(id(row))
            elif k == "rule" and row.fix and self._call_rule(s).form == "from_blob":
                parts = self._from_blob(s.args)
                if parts is not None:
                    self.edits.append(Edit(s.start, s.end, parts))
                    self.covered.add(id(row))
            elif k == "rule" and row.fix and (s.obj or "{t}" not in (self._call_rule(s).call or "{t}")):
                rule = self._call_rule(s)
                self.edits.append(Edit(s.start, s.end, _template(rule.call, s.obj, s.args)))
                self.header(rule.header)
                self.covered.add(id(row))
            elif k == "hazard" and len(s.args) == 2:
                op = rules.hazard(s.key)["replace"].split("(")[0]
                self.edits.append(Edit(s.start, s.end, [f"{op}(", s.args[0], ", ", s.args[1], ")"]))
                self.covered.add(id(row))
        if self.edits:
            self._std_headers()
        self._includes(includes)
        for cls in self.classes:
            if not any(op.endswith("::" + cls) for op in self.autograd_ops):
                self.checklist.append(f"{cls} (torch::autograd::Function): no kernel registered in this file calls "
                                      f"{cls}::apply: register its ops by hand in its library's blocks "
                                      f"(shimgen::autograd::def<{cls}>, impl<{cls}>)")
        for row in self.rows:
            if id(row) in self.covered:
                continue
            if row.site.kind == "member":
                continue
            cell = row.cells[0]
            what = row.note or (cell.text if cell.status != "yes" else "")
            self.checklist.append(f"{row.where}: {row.construct} -> {row.replacement}" + (f" ({what})" if what else ""))

    def _std_headers(self) -> None:
        """The standard headers ATen's headers brought in that the file uses without including them (port_rules.yaml
        `std_headers`): the stable headers do not, so the rewritten file includes them itself."""
        for name, head in rules.load().get("std_headers", {}).items():
            if (re.search(rb"\bstd::" + name.encode() + rb"\b", self.data)
                    and not re.search(rb"#[ \t]*include[ \t]*<" + re.escape(head.encode()) + rb">", self.data)):
                self.header(head)

    @staticmethod
    def _call_rule(s):
        return rules.call_rule(s.key) or rules.call_rule(s.key.split("(")[0])

    def _autograd_classes(self) -> list[str]:
        """The classes the file derives from torch::autograd::Function (the base's type rows), by name."""
        out = []
        for row in self.rows:
            s = row.site
            if s.kind == "type" and s.key == "torch::autograd::Function":
                before = self.data[max(0, s.start - 300):_qualified_start(self.data, s.start)]
                m = re.search(rb"\b(?:class|struct)\s+(\w+)\s*(?:final\s*)?:\s*(?:public\s+)?$", before)
                if m and m.group(1).decode() not in out:
                    out.append(m.group(1).decode())
        return out

    def _from_blob(self, args: list[tuple[int, int]]) -> list[Part] | None:
        """ATen's from_blob(data, {n, ...}, x.options() | dtype): the stable from_blob with the contiguous strides
        and the device (x's, or the CPU ATen's default TensorOptions name) and dtype written out. The strides are
        the sizes' products ({a, b, c}: {b * c, c, 1}), written where the sizes are a braced list of plain
        expressions (names, numbers, member calls, casts: nothing evaluated twice changes); other sizes are left to
        a person."""
        if len(args) != 3:
            return None
        sizes = self.data[args[1][0]:args[1][1]].decode("utf-8", "replace").strip()
        strides = _contiguous_strides(sizes)
        if strides is None:
            return None
        opts = self._options(args[2])
        if opts is None:
            text = self.data[args[2][0]:args[2][1]].decode("utf-8", "replace")
            if ".options()" in text or "TensorOptions" in text:
                return None
            device: Part = "torch::stable::Device(torch::headeronly::DeviceType::CPU)"
            dtype: Part = args[2]
        else:
            obj, dtype = opts
            device = f"{obj}.device()"
        return ["torch::stable::from_blob(", args[0], ", ", args[1], f", {strides}, ", device, ", ", dtype, ")"]

    def _options(self, arg: tuple[int, int]) -> tuple[str, Part] | None:
        """`x.options()` or `x.options().dtype(D)` (x a name, or a name's member calls without arguments): x and
        the dtype (D as written, else x's); the options' own rows are handled by the caller's rewrite."""
        a, b = arg
        text = self.data[a:b].decode("utf-8", "replace")
        m = re.fullmatch(r"(\s*)(\w+(?:\.\w+\(\))*)\.options\(\)(?:\.dtype\((.+)\))?\s*", text, re.S)
        if not m:
            return None
        obj = m.group(2)
        if m.group(3):
            d0 = a + len(text[:text.index(".dtype(") + len(".dtype(")].encode())
            dtype: Part = (d0, d0 + len(m.group(3).encode()))
        else:
            dtype = f"{obj}.scalar_type()"
        for row in self.rows:
            if row.site.kind == "rule" and a <= row.site.start and row.site.end <= b:
                self.covered.add(id(row))
        return obj, dtype

    def _to_options(self, s) -> list[Part] | None:
        """ATen's `t.to(x.options())` (or `x.options().dtype(D)`): the TensorOptions' dtype and device, the stable
        to.device overload (`torch::stable::to(t, x.device(), dtype)`); another `to` is the caller's."""
        if s.key != "to" or s.form == "->" or len(s.args) != 1:
            return None
        got = self._options(s.args[0])
        if got is None:
            return None
        obj, dtype = got
        return ["torch::stable::to(", s.obj, ", ", f"{obj}.device()", ", ", dtype, ")"]

    def _factory_args(self, args: list[tuple[int, int]]) -> list[Part] | None:
        """A factory's TensorOptions written as `x.options()` or `x.options().dtype(D)`, x a name or a name's
        member calls without arguments (`w.value().options()`, an optional's tensor): the dtype, layout and device
        arguments the stable wrappers take in their place (ATen's TensorOptions order)."""
        if not args:
            return None
        got = self._options(args[-1])
        if got is None:
            return None
        obj, dtype = got
        return [*self.args_parts(args[:-1]), ", ", dtype, ", std::nullopt, ", f"{obj}.device()"]

    def _macro(self, row: Row) -> bool:
        s = row.site
        rule = macros.rule(s.key)
        self.header(rule.header)
        form = dispatch.form(s.key)
        if form is not None:
            got = cxx_text.balanced_args(self.data, s.end)
            if got is None:
                return False
            args, after = got
            gaps: list[Part] = [(a[1], b[0]) for a, b in zip(args, args[1:])]  # as written: CRLF stays CRLF
            head = self.data[cxx_text.line_start(self.data, s.start):s.start].decode("utf-8", "replace")
            column = "".join(c if c in " \t" else " " for c in head)
            between = " \\\n" + column if self._in_define(s.start) else "\n" + column
            parts = dispatch.write(form, args, lambda a: self.data[a[0]:a[1]].decode("utf-8", "replace"), gaps,
                                   between)
            if parts is None:
                return False
            self.edits.append(Edit(s.start, after, parts))
            return True
        if rule.registration:
            rw = registration.rewrite(rule.registration, self.data, s, self.functions, self.classes)
            self.edits += [Edit(a, b, parts) for a, b, parts in rw.edits]
            self.checklist += rw.problems
            self.autograd_ops += [op for op in rw.autograd if op not in self.autograd_ops]
            if rw.autograd:
                self.header(rules.load()["types"]["torch::autograd::Function"]["header"])
            return True
        if rule.call:
            got = cxx_text.balanced_args(self.data, s.end)
            if got is None or not got[0]:
                return False
            args, after = got
            before, _, rest = rule.call.partition("{args}")
            self.edits.append(Edit(s.start, after, [before, (args[0][0], args[-1][1]), rest]))
            return True
        self.edits.append(Edit(s.start, s.end, [rule.replace]))
        return True

    def _in_define(self, at: int) -> bool:
        """`at` is in a #define's body (its lines continue with a backslash)."""
        s = cxx_text.line_start(self.data, at)
        while True:
            if self.data[s:at].lstrip().startswith(b"#"):
                return True
            if s < 2 or self.data[s - 2:s - 1] != b"\\" and self.data[s - 3:s - 1] != b"\\\r":
                return False
            s = cxx_text.line_start(self.data, s - 1)

    def _includes(self, rows: list[Row]) -> None:
        """ATen's includes become the stable headers they stand for and those the rewrites need, written where the
        first was; a file with no ATen include (it has ATen through a project header) gets the headers its rewrites
        need after its last #include outside a conditional (`#ifdef WITH_CUDA`; a header guard's is the file's own
        level), at its top where it has none."""
        if not rows:
            if self.headers:
                at, end_nl = _after_includes(self.data)
                text = "".join(f"#include <{h}>\n" for h in self.headers)
                self.edits.append(Edit(at, at, [text if end_nl else "\n" + text]))
            return
        heads: list[str] = []
        for row in rows:
            for h in row.replacement.split(", "):
                if h not in heads:
                    heads.append(h)
        for h in self.headers:
            if h not in heads:
                heads.append(h)
        first, *rest = sorted(rows, key=lambda r: r.site.start)
        text = "\n".join(f"#include <{h}>" for h in heads)
        self.edits.append(Edit(first.site.start, first.site.end, [text]))
        for r in rest:
            self.edits.append(Edit(r.site.start, r.site.end, [""]))

    # -- applying the edits
    def render(self) -> str:
        edits: dict[tuple[int, int], Edit] = {}
        for e in self.edits:
            edits.setdefault((e.start, e.end), e)
        ordered = sorted(edits.values(), key=lambda e: (e.start, -e.end))
        self._ordered = ordered
        return self._render(0, len(self.data), None).decode("utf-8")

    def _render(self, a: int, b: int, owner: Edit | None) -> bytes:
        out = []
        pos = a
        for e in self._ordered:
            if e is owner or e.start < pos or e.end > b or e.start < a:
                continue
            out.append(self.data[pos:e.start])
            for p in e.parts:
                if isinstance(p, str):
                    out.append(p.encode("utf-8").replace(b"\n", self.newline))
                elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):  # ("*", range)
                    out.append(b"*" + self._render(p[1][0], p[1][1], e))
                else:
                    out.append(self._render(p[0], p[1], e))
            pos = e.end
        out.append(self.data[pos:b])
        return b"".join(out)


# a size the strides repeat (evaluated twice, so nothing that may change between the two): a name, a number, a
# cast of one, or a name's size(k)/numel()/dim() (`x.size(1)`, `(int64_t)v.size()`)
_PURE = re.compile(r"(?:\(\s*[\w:]+\s*\)\s*)?\w+(?:\s*\.\s*(?:size|numel|dim)\(\s*\d*\s*\))?")


def _contiguous_strides(sizes: str) -> str | None:
    """The contiguous strides of a braced list of sizes, as written ({a, b, c} -> {b * c, c, 1}); None where the
    sizes are not a braced list or a size after the first (which the strides repeat) is not plain (_PURE)."""
    m = re.fullmatch(r"\{([^{}]*)\}", sizes)
    if m is None:
        return None
    items = [x.strip() for x in m.group(1).split(",")]
    if not items[0] or not all(_PURE.fullmatch(x) for x in items[1:]):
        return None
    factor = [x if re.fullmatch(r"\w+", x) else f"({x})" for x in items]
    products = [items[i + 1] if i + 2 == len(items) else " * ".join(factor[i + 1:]) for i in range(len(items) - 1)]
    return "{" + ", ".join([*products, "1"]) + "}"


def _template(text: str, obj: Part, args: list[tuple[int, int]]) -> list[Part]:
    """A rule's `call` (`torch::stable::to({t}, {args})`) over the object and the arguments as written."""
    out: list[Part] = []
    for piece in re.split(r"(\{t\}|\{args\})", text):
        if piece == "{t}":
            out.append(obj)
        elif piece == "{args}":
            for i, a in enumerate(args):
                out += [", "] if i else []
                out.append(a)
        elif piece:
            out.append(piece)
    return out


def _after_includes(data: bytes) -> tuple[int, bool]:
    """Where headers go in a file without an ATen include: after the last #include at the shallowest conditional
    depth any #include has (0, or 1 inside a header guard), else after `#pragma once` or at the top; and whether
    that line ends."""
    depth, found = 0, []
    for m in re.finditer(rb"^[ \t]*#[ \t]*(\w+)[^\n]*\n?", data, re.M):
        word = m.group(1)
        if word in (b"if", b"ifdef", b"ifndef"):
            depth += 1
        elif word == b"endif":
            depth -= 1
        elif word == b"include":
            found.append((depth, m))
    if not found:  # after a header's `#pragma once`, else at the top
        once = re.search(rb"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*\n?", data, re.M)
        return (once.end(), once.group(0).endswith(b"\n")) if once else (0, True)
    top = min(d for d, _ in found)
    m = [m for d, m in found if d == top][-1]
    return m.end(), m.group(0).endswith(b"\n")


def newline_of(data: bytes) -> str:
    """The line ending a file's lines mostly end with: "\r\n" (CRLF) or "\n"."""
    crlf = data.count(b"\r\n")
    return "\r\n" if crlf and 2 * crlf >= data.count(b"\n") else "\n"


def fix(text: str, rows: list[Row], newline: str = "\n", functions: list | None = None) -> Result:
    """The rewrite of `text` (a file whose lines end with `newline`: the lines an edit adds end so too);
    `functions`: the functions it defines (a registration without a schema has it from its kernel's signature)."""
    f = Fixer(text.encode("utf-8"), rows, newline, functions)
    f.plan()
    return Result(f.render(), f.checklist, len(f.covered), f.autograd_ops)
