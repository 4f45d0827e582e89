"""ATen's op registrations as the stable ABI's: `TORCH_LIBRARY[_FRAGMENT]` blocks whose `m.def` carries a kernel,
`TORCH_LIBRARY_IMPL` blocks, and the legacy `torch::RegisterOperators().op("ns::name", &fn)`.

The stable library defines a schema (`m.def("schema")`) and registers a boxed kernel for a dispatch key
(`STABLE_TORCH_LIBRARY_IMPL(ns, K, m) { m.impl("name", TORCH_BOX(&fn)); }`). Where ATen inferred the schema from
the kernel's C++ signature, it is written out here from the function's definition as libclang read it (the
`function` sites of the scan), by data/port_rules.yaml's `registration` table; a kernel ATen registered without a
dispatch key (a catch-all) goes to the table's `key`. Each rewrite is an edit (start, end, parts) as
shimgen.tools.porting.fix applies them; what cannot be rewritten is a problem, printed in the checklist."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shimgen.tools.porting import cxx_text, macros, rules
from shimgen.tools.porting.clang_scan import Site

Part = str | tuple[int, int]


@dataclass
class Rewrite:
    edits: list[tuple[int, int, list[Part]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    helpers: list[Part] = field(default_factory=list)  # functions written before the registration (lambda kernels)
    names: set[str] = field(default_factory=set)  # the helpers' names
    autograd: list[str] = field(default_factory=list)  # "ns::F" of the torch::autograd::Function classes registered
    last: Site | None = None  # the function the last kernel named, where the file defines it


def _table() -> dict:
    return rules.load()["registration"]


# ---- the schema of a C++ function ----------------------------------------------------------------------------

def _split(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def schema_type(cpp: str, returned: bool = False) -> str | None:
    """The schema type of a C++ type (canonical spelling); None where the table has none."""
    t = _table()
    text = re.sub(r"\s*&+$", "", cpp.strip())
    text = re.sub(r"^const\s+|\s+const$", "", text).replace("__cxx11::", "").strip()
    if returned and text == "void":
        return t["void"]
    if text in t["types"]:
        return t["types"][text]
    m = re.fullmatch(r"([\w:]+)\s*<(.*)>", text)
    if m is None or m.group(1) not in t["templates"]:
        return None
    args = _split(m.group(2))
    if not args:
        return None
    if m.group(1) == "std::tuple":
        if not returned:
            return None
        inner = [schema_type(a) for a in args]
        return None if None in inner else t["templates"]["std::tuple"].format(", ".join(inner))
    inner = schema_type(args[0])
    return None if inner is None else t["templates"][m.group(1)].format(inner)


def _named(fn: Site) -> str:
    return fn.written if fn.kind == "function" else "the lambda"


def schema(name: str, fn: Site) -> tuple[str | None, str]:
    """(the schema `name(params) -> returns` of function `fn`, "") or (None, why not)."""
    params = []
    for i, (cpp, pname) in enumerate(fn.params):
        st = schema_type(cpp)
        if st is None:
            return None, f"no schema type for `{cpp}` (parameter {pname or i + 1} of {_named(fn)})"
        params.append(f"{st} {pname or f'arg{i}'}")
    ret = schema_type(fn.returns, returned=True)
    if ret is None:
        return None, f"no schema type for `{fn.returns}` (what {_named(fn)} returns)"
    return f"{name}({', '.join(params)}) -> {ret}", ""


# ---- the function a registration names -----------------------------------------------------------------------

_REF = re.compile(r"(?:TORCH_FN\s*\(\s*(?P<fn>&?\s*[\w:]+)\s*\)|(?P<plain>&?\s*[\w:]+))")


def kernel(data: bytes, arg: tuple[int, int]) -> tuple[list[Part], str] | None:
    """A kernel argument as written (`&fn`, `fn`, `TORCH_FN(fn)`, `TORCH_BOX(&fn)`): the parts of its TORCH_BOX
    form and the function's name as written; None where it is something else (a lambda, torch::dispatch(...))."""
    text = data[arg[0]:arg[1]].decode("utf-8", "replace")
    if re.fullmatch(r"TORCH_BOX\s*\(.*\)", text, re.S):
        m = re.fullmatch(r"TORCH_BOX\s*\(\s*&?\s*([\w:]+)\s*\)", text, re.S)
        return ([arg], m.group(1)) if m else None
    m = _REF.fullmatch(text)
    if m is None:
        return None
    written = m.group("fn") or m.group("plain")
    name = written.lstrip("&").strip()
    if m.group("fn") is None and written.startswith("&"):
        return ["TORCH_BOX(", arg, ")"], name
    return [f"TORCH_BOX(&{name})"], name


def function(functions: list[Site], name: str) -> Site | None:
    """The one function defined in the file that `name` (as written, maybe qualified) names."""
    name = name.lstrip(":")
    found = [f for f in functions if f.kind == "function" and (f.key == name or f.key.endswith("::" + name))]
    keys = {f.key for f in found}
    return found[0] if len(keys) == 1 and len(found) == 1 else None


def _literal(data: bytes, arg: tuple[int, int]) -> str | None:
    """The string an op's name or schema argument is: a literal, or one in a macro whose rewrite is its argument
    (TORCH_SELECTIVE_SCHEMA("..."), TORCH_SELECTIVE_NAME("..."))."""
    text = data[arg[0]:arg[1]].decode("utf-8", "replace").strip()
    m = re.fullmatch(r"([A-Z][A-Z0-9_]*)\s*\((.*)\)", text, re.S)
    if m:
        rule = macros.rule(m.group(1))
        if rule is None or rule.call != "{args}":
            return None
        text = m.group(2)
    return cxx_text.string_literal(text)


def _where(data: bytes, site: Site, at: int) -> str:
    return f"{site.file.rsplit('/', 1)[-1]}:{data.count(bytes([10]), 0, at) + 1}"


# ---- torch::autograd::Function classes -------------------------------------------------------------------------

def _applied(data: bytes, fn: Site | None, classes: list[str]) -> list[str]:
    """The classes (torch::autograd::Function) whose `F::apply(` the kernel function's body calls."""
    if fn is None or not classes:
        return []
    body = data[fn.start:fn.end]
    return [c for c in classes if re.search(rb"\b" + re.escape(c.encode()) + rb"\s*::\s*apply\s*\(", body)]


def _class_body(data: bytes, cls: str) -> tuple[int, int] | None:
    """The body (its braces) of `class cls` / `struct cls` deriving from something (a torch::autograd::Function)."""
    m = re.search(rb"\b(?:class|struct)\s+" + re.escape(cls.encode()) + rb"\s*(?:final\s*)?:[^{;]*\{", data)
    return cxx_text.block(data, m.end() - 1) if m else None


def _dirty_params(data: bytes, cls: str) -> list[int]:
    """The forward parameters (their places after the context) the class's forward names in mark_dirty:
    `ctx->mark_dirty({x})`, `{x.value()}` (an optional's tensor), `{*x}`."""
    body = _class_body(data, cls)
    if body is None:
        return []
    text = data[body[0]:body[1]]
    m = re.search(rb"\bforward\s*(?=\()", text)
    got = cxx_text.balanced_args(text, m.end()) if m else None
    if got is None:
        return []
    names = []
    for a, b in got[0][1:]:
        words = re.findall(rb"[A-Za-z_]\w*", text[a:b].split(b"=")[0])
        names.append(words[-1].decode() if words else "")
    out: list[int] = []
    for call in re.finditer(rb"\bmark_dirty\s*\(\s*\{([^{}]*)\}", text):
        for item in call.group(1).split(b","):
            w = re.match(rb"\s*\*?\s*([A-Za-z_]\w*)", item)
            if w and w.group(1).decode() in names and names.index(w.group(1).decode()) not in out:
                out.append(names.index(w.group(1).decode()))
    return out


def _written_into(data: bytes, fn: Site | None, classes: list[str]) -> list[int]:
    """The kernel's parameters (their places) a torch::autograd::Function it applies writes into: the arguments
    of `F::apply(...)` at the places F's forward names in mark_dirty, where each is one of the kernel's
    parameters by name. ATen's RegisterOperators registration left such an op conservative (no alias analysis);
    its stable schema says it: `Tensor(a!)` (TorchScript keeps a call whose result is unused)."""
    if fn is None or fn.kind != "function":
        return []
    names = [name for _, name in fn.params]
    body = data[fn.start:fn.end]
    out: list[int] = []
    for cls in _applied(data, fn, classes):
        dirty = _dirty_params(data, cls)
        if not dirty:
            continue
        for m in re.finditer(rb"\b" + re.escape(cls.encode()) + rb"\s*::\s*apply\s*(?=\()", body):
            got = cxx_text.balanced_args(body, m.end())
            if got is None:
                continue
            for i in dirty:
                if i < len(got[0]):
                    a, b = got[0][i]
                    arg = body[a:b].decode("utf-8", "replace").strip()
                    if arg in names and names.index(arg) not in out:
                        out.append(names.index(arg))
    return sorted(out)


def _mutable(text: str, params: list[int]) -> str:
    """The schema `text` with the parameters at `params` annotated as written into: Tensor(a!), Tensor(b!)?."""
    head, sep, rest = text.partition("(")
    args, close, ret = rest.rpartition(") -> ")
    parts = _split(args)
    for n, i in enumerate(params):
        if i < len(parts):
            parts[i] = re.sub(r"^Tensor\b", f"Tensor({chr(ord('a') + n)}!)", parts[i])
    return f"{head}{sep}{', '.join(parts)}{close}{ret}"


def _catch_all_key(data: bytes, fn: Site | None, classes: list[str]) -> str:
    """Where a kernel registered without a dispatch key goes: the table's `key`, or the autograd table's
    `kernel_key` where it calls a torch::autograd::Function's apply (above autograd, as ATen's catch-all runs)."""
    return rules.load()["autograd"]["kernel_key"] if _applied(data, fn, classes) else _table()["key"]


def _autograd_lines(ns: str, classes: list[str], indent: str) -> tuple[list[str], list[str]]:
    """The def lines (in the library's block) and impl lines (in a block of the autograd table's `key`) of the
    classes' two ops each."""
    t = rules.load()["autograd"]
    return ([f"{indent}  {t['def'].format(cls=c, ns=ns)}\n" for c in classes],
            [f"{indent}  {t['impl'].format(cls=c, ns=ns)}\n" for c in classes])


# ---- the three forms -----------------------------------------------------------------------------------------

def _calls(data: bytes, var: str, a: int, b: int):
    """`var.def(...)` / `var.impl(...)` calls in data[a:b]: (method, start, args, end after `)`)."""
    for m in re.finditer(rb"\b" + re.escape(var.encode()) + rb"\s*\.\s*(def|impl)\s*(?=\()", data[a:b]):
        got = cxx_text.balanced_args(data, a + m.end())
        if got is not None:
            yield m.group(1).decode(), a + m.start(), got[0], got[1]


def _statement_end(data: bytes, after: int) -> int:
    """After a call's `)`: the index after its `;` and the rest of the line where only space follows."""
    j = after
    while j < len(data) and data[j:j + 1] in (b" ", b"\t"):
        j += 1
    if data[j:j + 1] != b";":
        return after
    j += 1
    k = j
    while k < len(data) and data[k:k + 1] in (b" ", b"\t", b"\r"):
        k += 1
    return k + 1 if data[k:k + 1] == b"\n" else j


def _impl_blocks(ns: str, kernels: list[tuple[str, str, list[Part]]], indent: str,
                 raw: tuple[str, list[str]] | None = None) -> list[Part]:
    """STABLE_TORCH_LIBRARY_IMPL blocks of (dispatch key, op name, TORCH_BOX parts), one a key; `raw`: a key and
    lines written in its block (a torch::autograd::Function's ops)."""
    keys: dict[str, list[tuple[str, list[Part]] | str]] = {}
    for key, name, box in kernels:
        keys.setdefault(key, []).append((name, box))
    if raw and raw[1]:
        keys.setdefault(raw[0], []).extend(raw[1])
    out: list[Part] = []
    for key, named in keys.items():
        out.append(f"{indent}STABLE_TORCH_LIBRARY_IMPL({ns}, {key}, m) {{\n" if not out else
                   f"\n\n{indent}STABLE_TORCH_LIBRARY_IMPL({ns}, {key}, m) {{\n")
        for one in named:
            if isinstance(one, str):
                out.append(one)
                continue
            name, box = one
            out += [f'{indent}  m.impl("{name}", ', *box, ");\n"]
        out.append(f"{indent}}}")
    return out


def dispatch_key(data: bytes, arg: tuple[int, int]) -> str | None:
    """The dispatch key an argument names (torch::kCPU, c10::DispatchKey::CUDA, at::kMeta): the stable key's name
    by the table's `keys`; None where it names none of them."""
    text = data[arg[0]:arg[1]].decode("utf-8", "replace")
    m = re.fullmatch(r"\s*(?:[\w]+\s*::\s*)*(\w+)\s*", text)
    return _table()["keys"].get(m.group(1)) if m else None


def _kernel_arg(data: bytes, args: list[tuple[int, int]]) -> tuple[str | None, tuple[int, int]] | None:
    """The kernel of a def's or impl's arguments after the name, and its dispatch key (None: none written, a
    catch-all): `fn`, `KEY, fn`, `torch::dispatch(KEY, fn)`; None where they are something else."""
    if len(args) == 2:
        key = dispatch_key(data, args[0])
        return (key, args[1]) if key else None
    if len(args) != 1:
        return None
    text = data[args[0][0]:args[0][1]].decode("utf-8", "replace")
    m = re.match(r"(?:(?:torch|c10)\s*::\s*)?dispatch\s*(?=\()", text)
    if m is None:
        return None, args[0]
    got = cxx_text.balanced_args(data, args[0][0] + m.end())
    if got is None or len(got[0]) != 2:
        return None
    key = dispatch_key(data, got[0][0])
    return (key, got[0][1]) if key else None


def _lambda(data: bytes, functions: list[Site], fn_arg, name: str, where: str, rw: Rewrite
            ) -> tuple[list[Part], Site] | None:
    """A kernel written as a lambda without captures: a function of its parameters and body written before the
    registration (`static auto <name>_kernel(params) body`, its return type deduced or as written), boxed."""
    lam = next((f for f in functions if f.kind == "lambda" and (f.start, f.end) == tuple(fn_arg)), None)
    m = re.match(rb"\[\s*\]\s*", data[fn_arg[0]:fn_arg[1]])
    if lam is None or m is None:
        rw.problems.append(f"{where}: the kernel `{data[fn_arg[0]:fn_arg[1]].decode()}` is no function name nor a "
                           "lambda without captures: register it with TORCH_BOX(&fn) by hand")
        return None
    at = fn_arg[0] + m.end()
    params: list[Part] = []
    if data[at:at + 1] == b"(":
        got = cxx_text.balanced_args(data, at)
        if got is None:
            return None
        params = [(at + 1, got[1] - 1)]
        at = got[1]
    brace = data.find(b"{", at, fn_arg[1])
    body = cxx_text.block(data, brace) if brace >= 0 else None
    if body is None or body[1] + 1 != fn_arg[1]:
        return None
    between = data[at:brace].decode("utf-8", "replace")
    trailing: list[Part] = [" ", cxx_text.strip(data, at + between.index("->"), brace)] if "->" in between else []
    fname = re.sub(r"\W", "_", name) + "_kernel"
    while fname in rw.names or any(f.kind == "function" and f.key.rpartition("::")[2] == fname for f in functions):
        fname += "_"
    rw.names.add(fname)
    rw.helpers += [f"static auto {fname}(", *params, ")", *trailing, " ", (body[0], body[1] + 1), "\n\n"]
    return [f"TORCH_BOX(&{fname})"], lam


def _box(data: bytes, functions: list[Site], fn_arg, name: str, where: str, rw: Rewrite
         ) -> tuple[list[Part], Site | None] | None:
    """The TORCH_BOX parts of a kernel argument and the function it names where the file defines it, or None (a
    problem noted)."""
    if data[fn_arg[0]:fn_arg[0] + 1] == b"[":
        return _lambda(data, functions, fn_arg, name, where, rw)
    got = kernel(data, fn_arg)
    if got is None:
        rw.problems.append(f"{where}: the kernel `{data[fn_arg[0]:fn_arg[1]].decode()}` is no function name: "
                           "register it with TORCH_BOX(&fn) by hand")
        return None
    box, fname = got
    fn = function(functions, fname)
    if fn is not None and fn.noexcept:
        rw.problems.append(f"{where}: `{fname}` is noexcept, which TORCH_BOX does not take: register a function "
                           f'that calls it for "{name}" by hand')
        return None
    return box, fn


def _def(data: bytes, functions: list[Site], name_written: str, fn_arg, where: str, rw: Rewrite,
         classes: list[str] = ()) -> tuple[str, str, list[Part]] | None:
    """A def with a kernel: (its schema, the op's name, the kernel's TORCH_BOX parts), or None (a problem noted)."""
    name = name_written.split("(", 1)[0].strip().rpartition("::")[2]
    mark = len(rw.helpers)
    got = _box(data, functions, fn_arg, name, where, rw)
    if got is None:
        return None
    box, fn = got
    rw.last = fn
    if "(" in name_written:
        return name_written.split("::", 1)[-1] if "::" in name_written.split("(", 1)[0] else name_written, name, box
    text, why = schema(name, fn) if fn is not None else (None, "")
    if text is None:
        del rw.helpers[mark:]  # a lambda's function is not written for a def left as it was
        rw.problems.append(f"{where}: {why}: write the schema of \"{name}\" by hand" if why else
                           f"{where}: `{data[fn_arg[0]:fn_arg[1]].decode()}` is not one function defined in this "
                           f'file: write the schema of "{name}" by hand')
        return None
    written = _written_into(data, fn, list(classes))
    return (_mutable(text, written) if written else text), name, box


def def_block(data: bytes, site: Site, functions: list[Site], classes: list[str] = ()) -> Rewrite:
    """TORCH_LIBRARY[_FRAGMENT](ns, m) { ... }: each m.def with a kernel keeps only its schema; the kernels (and
    any m.impl of the block) go to a STABLE_TORCH_LIBRARY_IMPL block after it, one a dispatch key (the table's
    `key` for a kernel registered without one)."""
    rw = Rewrite([(site.start, site.end, [macros.rule(site.key).replace])])
    got = cxx_text.balanced_args(data, site.end)
    if got is None or len(got[0]) != 2:
        return rw
    (ns_r, var_r), after = got
    body = cxx_text.block(data, after)
    if body is None:
        return rw
    ns, var = (data[a:b].decode() for a, b in (ns_r, var_r))
    kernels: list[tuple[str, str, list[Part]]] = []
    applied: list[str] = []  # the torch::autograd::Function classes whose apply a kernel calls
    for method, start, args, end in _calls(data, var, *body):
        where = _where(data, site, start)
        if len(args) < 2:
            continue
        literal = _literal(data, args[0])
        karg = _kernel_arg(data, args[1:])
        if literal is None or karg is None:
            rw.problems.append(f"{where}: {var}.{method} written otherwise (a name that is no string literal, a "
                               "dispatch key the table does not name): rewrite by hand")
            continue
        key, fn_arg = karg
        if method == "def":
            made = _def(data, functions, literal, fn_arg, where, rw, classes)
            if made is None:
                continue
            text, name, box = made
            fn = rw.last
            rw.edits.append((args[0][0], args[-1][1], [f'"{text}"']))
        else:  # an m.impl in the library's own block: moved to the IMPL block of its key
            name = literal.split("(", 1)[0].strip().rpartition("::")[2]
            got_box = _box(data, functions, fn_arg, name, where, rw)
            if got_box is None:
                continue
            box, fn = got_box
            rw.edits.append((cxx_text.line_start(data, start) if not data[cxx_text.line_start(data, start):start]
                             .strip() else start, _statement_end(data, end), [""]))
        key = key or _catch_all_key(data, fn, classes)
        applied += [c for c in _applied(data, fn, classes) if c not in applied]
        kernels.append((key, name, box))
    indent = cxx_text.indent_at(data, site.start)
    defs, impls = _autograd_lines(ns, applied, indent)
    if defs:
        rw.edits.append((body[1], body[1], defs))
        rw.autograd += [f"{ns}::{c}" for c in applied]
    if kernels:
        rw.edits.append((body[1] + 1, body[1] + 1, ["\n\n", *_impl_blocks(
            ns, kernels, indent, (rules.load()["autograd"]["key"], impls))]))
    return _with_helpers(rw, data, site)


def impl_block(data: bytes, site: Site, functions: list[Site], classes: list[str] = ()) -> Rewrite:
    """TORCH_LIBRARY_IMPL(ns, K, m) { m.impl("name", kernel); }: each kernel as TORCH_BOX(&fn)."""
    rw = Rewrite([(site.start, site.end, [macros.rule(site.key).replace])])
    got = cxx_text.balanced_args(data, site.end)
    if got is None or len(got[0]) != 3:
        return rw
    args, after = got
    var = data[args[2][0]:args[2][1]].decode()
    body = cxx_text.block(data, after)
    if body is None:
        return rw
    for method, start, cargs, _ in _calls(data, var, *body):
        if method != "impl" or len(cargs) != 2:
            continue
        literal = _literal(data, cargs[0])
        name = (literal or "").split("(", 1)[0].strip().rpartition("::")[2]
        got_k = _box(data, functions, cargs[1], name, _where(data, site, start), rw)
        if got_k is not None and got_k[0] != [cargs[1]]:
            rw.edits.append((cargs[1][0], cargs[1][1], got_k[0]))
    return _with_helpers(rw, data, site)


def _with_helpers(rw: Rewrite, data: bytes, site: Site) -> Rewrite:
    """The functions written for lambda kernels go before the registration's macro (its first edit)."""
    if rw.helpers:
        start, end, parts = rw.edits[0]
        rw.edits[0] = (start, end, [*rw.helpers, cxx_text.indent_at(data, site.start), *parts])
    return rw


def legacy(data: bytes, site: Site, functions: list[Site], classes: list[str] = ()) -> Rewrite:
    """`[static] auto r = torch::RegisterOperators()[.op("ns::name[(schema)]", &fn)]...;` (or the constructor's
    own ("ns::name", &fn)): a STABLE_TORCH_LIBRARY_FRAGMENT and a STABLE_TORCH_LIBRARY_IMPL block per namespace."""
    rw = Rewrite()
    where = f"{site.file.rsplit('/', 1)[-1]}:{site.line}"
    # the statement: from after the previous `;`, `{` or `}` (a preprocessor line ends one too) to its `;`
    before = max(data.rfind(b";", 0, site.start), data.rfind(b"{", 0, site.start), data.rfind(b"}", 0, site.start))
    start = before + 1
    while True:  # past blank lines, comments and preprocessor lines
        m = re.match(rb"\s*(?://[^\n]*|/\*.*?\*/|#[^\n]*)?", data[start:site.start], re.S)
        if not m or m.end() == 0:
            break
        start += m.end()
    start = cxx_text.line_start(data, start) if not data[cxx_text.line_start(data, start):start].strip() else start
    ops: list[tuple[list[tuple[int, int]], int]] = []
    got = cxx_text.balanced_args(data, site.end)
    if got is None:
        rw.problems.append(f"{where}: RegisterOperators written otherwise: rewrite by hand")
        return rw
    args, pos = got
    if args:
        ops.append((args, site.start))
    while True:
        m = re.match(rb"\s*\.\s*op\s*(?=\()", data[pos:])
        if not m:
            break
        got = cxx_text.balanced_args(data, pos + m.end())
        if got is None:
            break
        ops.append((got[0], pos))
        pos = got[1]
    end = _statement_end(data, pos)
    if end == pos or not ops:
        rw.problems.append(f"{where}: RegisterOperators written otherwise: rewrite by hand")
        return rw
    by_ns: dict[str, list[tuple[str, list[Part]]]] = {}
    for args, at in ops:
        if len(args) != 2:
            rw.problems.append(f"{where}: an op registered with options: rewrite by hand")
            return rw
        literal = _literal(data, args[0])
        if literal is None or "::" not in literal.split("(", 1)[0]:
            rw.problems.append(f"{where}: an op whose name is no \"ns::name\" literal: rewrite by hand")
            return rw
        ns = literal.split("(", 1)[0].split("::", 1)[0].strip()
        made = _def(data, functions, literal, args[1], where, rw, classes)
        if made is None:
            return rw
        text, name, box = made
        by_ns.setdefault(ns, []).append((text, box, _catch_all_key(data, rw.last, classes),
                                         _applied(data, rw.last, classes)))
    indent = cxx_text.indent_at(data, start)
    parts: list[Part] = []
    for ns, defs in by_ns.items():
        if parts:
            parts.append("\n\n")
        applied = [c for *_, cs in defs for c in cs]
        applied = [c for i, c in enumerate(applied) if c not in applied[:i]]
        adefs, aimpls = _autograd_lines(ns, applied, indent)
        rw.autograd += [f"{ns}::{c}" for c in applied]
        parts.append(f"{indent}STABLE_TORCH_LIBRARY_FRAGMENT({ns}, m) {{\n")
        parts += [f'{indent}  m.def("{text}");\n' for text, *_ in defs] + adefs
        parts += [f"{indent}}}\n\n",
                  *_impl_blocks(ns, [(key, text.split("(", 1)[0], box) for text, box, key, _ in defs], indent,
                                (rules.load()["autograd"]["key"], aimpls))]
    nl = "\n" if data[end - 1:end] == b"\n" else ""
    rw.edits.append((start, end, [*rw.helpers, *parts, nl]))
    return rw


FORMS = {"def": def_block, "impl": impl_block, "legacy": legacy}


def rewrite(form: str, data: bytes, site: Site, functions: list[Site], classes: list[str] = ()) -> Rewrite:
    """`classes`: the file's torch::autograd::Function classes (a kernel calling one's apply registers its ops)."""
    return FORMS[form](data, site, functions, list(classes))
