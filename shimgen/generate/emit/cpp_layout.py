"""Generated C++ in the layout clang-format (shimgen/data/.clang-format, PyTorch's style) gives it, written
directly, without running clang-format: small pure layout rules for the shapes shimgen emits, as
shimgen/generate/emit/py_layout.py does for Python.

A file is cut into top-level chunks (at blank lines outside any function or class body), which clang-format
formats independently. `chunk()` writes one chunk or raises Unsure where a line's shape is one these rules do not
cover; shimgen.generate.emit.fmt then sends the chunks it was unsure of to one clang-format process (`fallback` counts
them). The rules are clang-format's for this style (ColumnLimit 80, BinPackArguments/Parameters false,
AlignAfterOpenBracket AlwaysBreak, ReflowComments, 2-space indent, 4-space continuation):
- a statement that fits stays on one line (the emitters write canonical spacing);
- a function definition's parameters go one per line after `name(`; a call's arguments go on one continuation
  line if they fit, else one per line; `OUTER(INNER(...))` breaks after OUTER's bracket when INNER's call then
  fits, else after INNER's; `lhs = call(...)` breaks after `=` when the right-hand side then fits;
- `//` and `///` comments are reflowed as clang-format reflows them (a line over the limit breaks at its last
  space that fits; the rest joins the next line of the same comment when that line may be reflowed);
- preprocessor lines stay as written; a long `#if A && B` breaks after `&&` with an escaped newline.
tests/test_cpp_layout.py compares the result with clang-format's over every golden, generated/ and the whole yaml.
"""

from __future__ import annotations

import re

WIDTH = 80
CONT = 4  # ContinuationIndentWidth


class Unsure(Exception):
    """The layout rules do not cover this chunk: format it with clang-format."""


# ---- cutting a file into chunks ----------------------------------------------------------------------------------


def _opens_scope(line: str) -> bool:
    """A line ending with `{` that opens an indented block (not `extern "C" {` or a namespace)."""
    s = line.strip()
    if not s.endswith("{") or s.startswith(("//", "#")):
        return False
    return not (s.startswith('extern "C"') or re.match(r"(inline\s+)?namespace\b", s))


def chunks(text: str) -> list[str]:
    """text cut after each blank line outside any block: "".join(chunks(text)) == text."""
    out: list[str] = []
    start = 0
    depth = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        s = line.strip()
        if not s.startswith(("//", "#")):
            depth += _code_braces(s)
            if depth < 0:
                depth = 0  # the `}` of extern "C" / a namespace
        if s == "" and depth == 0:
            out.append(text[start:pos])
            start = pos
    if start < len(text):
        out.append(text[start:])
    return out


def _code_braces(s: str) -> int:
    if s.startswith('extern "C"') or re.match(r"(inline\s+)?namespace\b", s):
        return 0
    if s.startswith("}") and re.match(r"}\s*//\s*(extern|namespace)", s):
        return 0
    body = _strip_strings(s)
    return body.count("{") - body.count("}")


def _strip_strings(s: str) -> str:
    if '"' not in s and "'" not in s:
        return s
    return re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', s)


# ---- comments --------------------------------------------------------------------------------------------------

_SPECIAL = ("@", "\\", "TODO", "FIXME", "XXX", "-# ", "- ", "+ ", "* ")
_NUMBERED = re.compile(r"[1-9][0-9]?\. ")
_NUMBERED_SPLIT = re.compile(r"[1-9][0-9]?\.")
_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _may_reflow(content: str) -> bool:
    c = content.strip(" \t")
    special = c.startswith(_SPECIAL) or bool(_NUMBERED.match(c))
    return len(c) >= 2 and not special and not c.endswith("\\") and not (c[0] in _PUNCT and c[1] in _PUNCT)


def _split(text: str, start_col: int) -> int | None:
    """Where clang-format breaks comment content `text` starting at column start_col: the index of the blank it
    breaks at, or None (no break possible)."""
    if WIDTH <= start_col + 1:
        return None
    max_split = min(WIDTH - start_col, len(text))  # the last column a kept character may take is WIDTH
    space = text.rfind(" ", 0, max_split + 1)
    while space != -1:
        before = text[:space].rstrip(" ")
        if before.endswith("\\"):
            space = text.rfind(" ", 0, len(before))
            continue
        if _NUMBERED_SPLIT.match(text[space:].lstrip(" ")):
            space = text.rfind(" ", 0, space)
            continue
        break
    if space == -1 or text[:space].strip(" ") == "":
        first = len(text) - len(text.lstrip(" "))
        if first == len(text):
            return None
        space = text.find(" ", max(max_split, first))
        if space == -1:
            return None
    return space if space > 0 else None


def comment_block(lines: list[str], col: int) -> list[str]:
    """Consecutive `//` / `///` lines starting at column col, reflowed as clang-format does."""
    parsed = []
    for line in lines:
        m = re.match(r"(///?)( *)(.*)$", line.strip())
        assert m
        marker, spaces, content = m.groups()
        if content.startswith("/") or "\t" in line:
            raise Unsure(line)
        if content == "":
            parsed.append((marker, marker, ""))
        else:
            if spaces == "":
                raise Unsure(line)  # clang-format would insert a space
            parsed.append((marker, marker + spaces, content.rstrip(" ")))
    out: list[str] = []
    pad = " " * col
    carry: str | None = None  # the remainder of a broken line, to be reflowed into the next
    for i, (marker, prefix, content) in enumerate(parsed):
        if carry is not None:
            prev_prefix = parsed[i - 1][1]
            if prefix == prev_prefix and _may_reflow(content) and i > 0:
                content = carry + " " + content.lstrip(" ")
            else:
                out.append(_emit(pad, parsed[i - 1][1], carry))
            carry = None
        line_prefix = prefix if content else marker
        start = col + len(line_prefix)
        text = content
        # break as long as the line is over the limit
        while start + len(text) > WIDTH:
            at = _split(text, start)
            if at is None:
                break
            head, rest = text[:at].rstrip(" "), text[at:].lstrip(" ")
            out.append(_emit(pad, line_prefix, head))
            text = rest
            if start + len(text) > WIDTH:
                continue
            carry = text
            text = None
            break
        if text is not None:
            if carry is None:
                out.append(_emit(pad, line_prefix, text))
    if carry is not None:
        out.append(_emit(pad, parsed[-1][1], carry))
    return out


def _emit(pad: str, prefix: str, content: str) -> str:
    return f"{pad}{prefix}{content}" if content else f"{pad}{prefix.rstrip(' ')}"


# ---- splitting code ----------------------------------------------------------------------------------------------

_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|["()\[\]{}<>,]')  # string literals and the characters that nest or split


def top_commas(s: str) -> list[str]:
    """s split at its commas outside brackets and strings (templates' `<...>` included)."""
    parts, depth, start = [], 0, 0
    for m in _TOKENS.finditer(s):
        c = m.group()
        if c[0] == '"':
            if len(c) == 1:
                raise Unsure(s)  # an unterminated string
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "<":
            if _is_template_open(s, m.start()):
                depth += 1
        elif c == ">":
            if depth > 0 and _angle_close(s, m.start()):
                depth -= 1
        elif depth == 0:  # a comma
            parts.append(s[start : m.start()].strip())
            start = m.end()
    parts.append(s[start:].strip())
    return parts


def _split_binary(s: str, op: str) -> list[str]:
    """s split at `op` outside brackets and strings."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i = _string_end(s, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and s.startswith(op, i):
            parts.append(s[start:i])
            i += len(op)
            start = i
            continue
        i += 1
    parts.append(s[start:])
    return parts


def _is_template_open(s: str, i: int) -> bool:
    return i > 0 and (s[i - 1].isalnum() or s[i - 1] == "_") and not s[i + 1 : i + 2] in ("<", "=")


def _angle_close(s: str, i: int) -> bool:
    return s[i - 1 : i] != "-" and s[i + 1 : i + 2] != "="


def _string_end(s: str, i: int) -> int:
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == '"':
            return j + 1
        j += 1
    raise Unsure(s)


def _matching(s: str, i: int) -> int:
    """Index of the bracket closing the one at s[i]."""
    depth = 0
    for m in _BRACKETS.finditer(s, i):
        c = m.group()
        if c[0] == '"':
            if len(c) == 1:
                raise Unsure(s)
            continue
        depth += 1 if c in "([{" else -1
        if depth == 0:
            return m.start()
    raise Unsure(s)


_BRACKETS = re.compile(r'"(?:\\.|[^"\\])*"|["()\[\]{}]')


def _fits(line: str) -> bool:
    return len(line) <= WIDTH


_ATOM = re.compile(r'"(\\.|[^"\\])*"$')


def _args_lines(args: list[str], indent: int, tail: str, allow_one_line: bool = True) -> list[str]:
    """Arguments after a broken `(`: on one continuation line if they fit, else one per line; an argument too long
    for its line is accepted only where clang-format cannot break it either (a string literal)."""
    pad = " " * indent
    one = pad + ", ".join(args) + tail
    if allow_one_line and _fits(one):
        return [one]
    lines = []
    for k, a in enumerate(args):
        end = "," if k < len(args) - 1 else tail
        line = pad + a + end
        if not _fits(line):
            if _ATOM.match(a) and (end == "," or not end.strip(");,")):
                pass
            else:
                nested = _nested(a, indent, end)
                if nested is None:
                    raise Unsure(line)
                lines.extend(nested)
                continue
        lines.append(line)
    return lines


def _nested(arg: str, indent: int, end: str) -> list[str] | None:
    """An argument that is itself a braced list or call, one per line inside it: `{a, b}` / `f(a, b)`."""
    if arg.startswith("{") and arg.endswith("}") and _matching(arg, 0) == len(arg) - 1:
        inner = top_commas(arg[1:-1])
        if any(not x for x in inner):
            return None
        # one element per line, aligned after the brace (a braced list is bin-packed like arguments)
        lines = [" " * indent + "{" + x + "," if k == 0 else " " * (indent + 1) + x + ","
                 for k, x in enumerate(inner)]
        lines[-1] = lines[-1][:-1] + "}" + end
        return lines if all(_fits(x) for x in lines) else None
    ternary = _split_binary(arg, " ? ")
    if len(ternary) == 2 and "?" not in ternary[1]:  # `c ? a : b`: the `:` under the `?` (BreakBeforeTernaryOperators)
        branches = _split_binary(ternary[1], " : ")
        if len(branches) == 2:
            first = " " * indent + ternary[0] + " ? " + branches[0]
            second = " " * (indent + len(ternary[0]) + 1) + ": " + branches[1] + end
            return [first, second] if _fits(first) and _fits(second) else None
    call = re.match(r"[\w:]+(?:<[\w:<>, *&]*>)?\(", arg)
    if call and _matching(arg, call.end() - 1) == len(arg) - 1:
        # a call: break after its bracket, its arguments at +4 (on one line if they fit), one level at a time
        inner = top_commas(arg[call.end() : -1])
        if not all(inner) or len(call.group()) <= CONT:
            return None
        return [" " * indent + call.group(), *_args_lines(inner, indent + CONT, ")" + end)]
    return None


def _call(stmt: str, indent: int) -> list[str]:
    """A statement `[prefix]CALLEE(args)rest;` at indent that does not fit on one line."""
    pad = " " * indent
    a = re.fullmatch(r"((?:const )?[\w:]+(?:<[\w:, ]*>)?[*&]? \w+ = )([^=]+;)", stmt)
    if a and "?" in a.group(2):  # `T x = c ? a : b;`: after `=` when the right-hand side then fits
        if _fits(pad + a.group(1).rstrip()) and _fits(" " * (indent + CONT) + a.group(2)):
            return [pad + a.group(1).rstrip(), " " * (indent + CONT) + a.group(2)]
        raise Unsure(stmt)
    b = re.fullmatch(r"([\w:]+(?:<[\w:, ]*>)? \w+)\{(.*)\};", stmt)
    if b and _matching(stmt, len(b.group(1))) == len(stmt) - 2:  # `T name{a, b};`: like a call's arguments
        head = pad + b.group(1) + "{"
        args = top_commas(b.group(2))
        if not _fits(head) or not all(args) or len(head) <= indent + CONT:
            raise Unsure(stmt)
        return [head, *_args_lines(args, indent + CONT, "};")]
    m = re.match(r"((?:return |[\w:<>, *&\[\]]+ = )?)([\w:.<>\->*&\[\]]+(?:<[\w:, *&<>]*>)?)([({])", stmt)
    if not m:
        raise Unsure(stmt)
    prefix, callee, bracket = m.group(1), m.group(2), m.group(3)
    open_at = m.end() - 1
    close = _matching(stmt, open_at)
    rest = stmt[close + 1 :]
    inside = stmt[open_at + 1 : close]
    if rest not in (";", ")", ");") and not re.fullmatch(r"\)*;", rest):
        raise Unsure(stmt)
    if "[" in callee or "(" in prefix:
        raise Unsure(stmt)
    # `lhs = rhs;`: after `=` when the right-hand side then fits
    if prefix.endswith(" = "):
        rhs = stmt[len(prefix) :]
        if _fits(pad + prefix.rstrip() ) and _fits(" " * (indent + CONT) + rhs):
            return [pad + prefix.rstrip(), " " * (indent + CONT) + rhs]
    args = top_commas(inside) if inside.strip() else []
    if not args:
        raise Unsure(stmt)
    head = pad + stmt[: open_at + 1]
    if not _fits(head) or len(head) <= indent + CONT:  # a short head: clang-format aligns after its bracket
        raise Unsure(stmt)
    tail = _bracket_close(bracket) + rest
    # OUTER(INNER(...)): OUTER's single argument is a call
    if len(args) == 1 and re.match(r"[\w:]+(<[^()]*>)?\(", args[0]) and _matching(args[0], args[0].index("(")) == len(
            args[0]) - 1 and not prefix:
        inner = args[0]
        whole = " " * (indent + CONT) + inner + tail
        if _fits(whole):
            return [head, whole]
        i = inner.index("(")
        inner_args = top_commas(inner[i + 1 : -1])
        if not inner_args or not inner_args[0]:
            raise Unsure(stmt)
        head2 = pad + stmt[: open_at + 1] + inner[: i + 1]
        if not _fits(head2):
            raise Unsure(stmt)
        return [head2, *_args_lines(inner_args, indent + CONT, ")" + tail)]
    return [head, *_args_lines(args, indent + CONT, tail)]


def _bracket_close(b: str) -> str:
    return {"(": ")", "{": "}"}[b]


def _declaration(stmt: str, after: str = "") -> list[str]:
    """A function definition's first line `... name(params) {` at column 0 that does not fit, or a C shim's
    declaration `AOTI_TORCH_EXPORT ... name(params);`."""
    close = ");" if stmt.startswith("AOTI_TORCH_EXPORT ") and stmt.endswith(");") else ") {"
    if not stmt.endswith(close):
        raise Unsure(stmt)
    m = re.match(r"((?:inline |static |constexpr )*[\w:<>, *&]+? )(\w+)\(", stmt)
    if not m or "template" in stmt[: m.end()] or "operator" in stmt[: m.end()]:
        raise Unsure(stmt)
    open_at = m.end() - 1
    if _matching(stmt, open_at) != len(stmt) - len(close):
        raise Unsure(stmt)
    params = top_commas(stmt[open_at + 1 : -len(close)])
    if not params or not all(params):
        raise Unsure(stmt)
    ret, rest = m.group(1).rstrip(), stmt[len(m.group(1)) :]
    if stmt.startswith("AOTI_TORCH_EXPORT "):  # clang-format does not see a return type here: it breaks after it
        if _fits(rest):
            return [ret, rest]
        if _fits(stmt[: open_at + 1]):
            return [stmt[: open_at + 1], *_params(params, close=close)]
        return [ret, m.group(2) + "(", *_params(params, close=close)]
    if not stmt.startswith("inline "):
        raise Unsure(stmt)
    head = stmt[: open_at + 1]
    if _fits(head):
        return [head, *_params(params)]
    t = re.fullmatch(r"inline std::tuple<(.*)>", ret)
    if not t:
        raise Unsure(stmt)  # clang-format weighs an overlong first line against a split after the return type
    elems = top_commas(t.group(1))
    qualified = " " * CONT + ret[len("inline std::") :]  # `    tuple<...>`
    if len(elems) >= 4 and not _fits(qualified):
        # `inline std::tuple<` + one element per line, then the name at column 0
        type_lines = ["inline std::tuple<"] + [" " * CONT + e + ("," if k < len(elems) - 1 else ">")
                                                for k, e in enumerate(elems)]
        return [*type_lines, *_name_and_params(m.group(2), params, 0)]
    if len(elems) == 3 and not _fits(ret) and _fits(qualified):
        # `inline std::` + `    tuple<...>` + the name, all continuation lines
        return ["inline std::", qualified, *_name_and_params(m.group(2), params, CONT)]
    if len(elems) == 2 and _fits(ret):
        # clang-format weighs the overlong first line against its splits, and the weights depend on what precedes
        # the declaration (measured on every such declaration of the whole 2.13 yaml):
        # - after a comment: one column over stays; further, the return type goes on a line of its own;
        # - after a preprocessor line (the version gate of a wrapper inside HIDDEN_NAMESPACE_BEGIN, whose lack of
        #   a semicolon clang-format carries into the declaration): `inline std::` + `    tuple<...> name(`, the
        #   parameters indented twice, while that second line is at most one column over; longer, the return
        #   type on a line of its own. (tests/test_cpp_layout.py compares every generated file with clang-format.)
        # (PenaltyExcessCharacter is 1,000,000 a column, PenaltyReturnTypeOnItsOwnLine 2,000,000.)
        over = len(head) - WIDTH
        if after == "comment":
            if over <= 1:
                return [head, *_params(params)]
            return [ret, *_name_and_params(m.group(2), params, 0)]
        if after == "directive":
            second = " " * CONT + head[len("inline std::") :]
            if len(second) <= WIDTH + 1:
                return ["inline std::", second, *_params(params, 2 * CONT)]
            return [ret, *_name_and_params(m.group(2), params, 0)]
    raise Unsure(stmt)  # two elements elsewhere: clang-format weighs an overlong line against three other splits


def _name_and_params(name: str, params: list[str], indent: int) -> list[str]:
    pad = " " * indent
    one = f"{pad}{name}({', '.join(params)}) {{"
    if _fits(one):
        return [one]
    col = indent + len(name) + 1
    if col <= indent + CONT:  # breaking after `(` would not move the parameters left: they follow it, aligned
        lines = _params(params, col)
        return [f"{pad}{name}(" + lines[0].lstrip(" "), *lines[1:]]
    return [f"{pad}{name}(", *_params(params, indent + CONT)]


def _params(params: list[str], indent: int = CONT, close: str = ") {") -> list[str]:
    lines = []
    pad = " " * indent
    for k, p in enumerate(params):
        end = "," if k < len(params) - 1 else close
        line = pad + p + end
        if not _fits(line):
            d = re.fullmatch(r"([^=]+) = ([\w:]+)", p)  # a default that does not fit: after `=`, indented
            if d and _fits(pad + d.group(1) + " =") and _fits(pad + " " * CONT + d.group(2) + end):
                lines += [pad + d.group(1) + " =", pad + " " * CONT + d.group(2) + end]
                continue
            t = re.fullmatch(r"([\w:<>, *&]+[>*&]|[\w:<>, ]+) (\w+)", p)  # a long type: the name on the next line
            if t and _fits(pad + t.group(1)) and _fits(pad + " " * CONT + t.group(2) + end):
                lines += [pad + t.group(1), pad + " " * CONT + t.group(2) + end]
                continue
            raise Unsure(line)
        lines.append(line)
    return lines


def _preprocessor(line: str) -> list[str]:
    s = line.strip()
    if s.endswith("\\"):
        raise Unsure(line)
    m = re.match(r"#(endif|else)( *)(//.*)?$", s)
    if m and m.group(3):
        head = f"#{m.group(1)} "
        return [head + x.lstrip() if k == 0 else x for k, x in enumerate(comment_block([m.group(3)], len(head)))]
    if _fits(s) or re.fullmatch(r"#include <[^ >]+>", s):  # clang-format never breaks an #include
        return [s]
    m = re.match(r"#(if|elif) (.+) && (.+)$", s)
    if m and " && " not in m.group(2) and "//" not in s:
        first = f"#{m.group(1)} {m.group(2)} && \\"
        second = " " * CONT + m.group(3)
        if _fits(first) and _fits(second) and len(second) < len(first) - 1:
            return [first, second]
    raise Unsure(line)


# ---- statements and blocks ---------------------------------------------------------------------------------------


# Spacing clang-format would change (the emitters write canonical spacing; a line kept as written must have it):
# two spaces, a space before `,;)]` or after `([`, a pointer or reference bound to the name (`int *x`).
_ODD_SPACING = re.compile(r"  | [,;)\]]|[(\[] |\w [*&]\w")


def _statement(stmt: str, indent: int, after: str = "") -> list[str]:
    """`after`: what the line before the statement is (_after; clang-format's choices for a declaration depend
    on it)."""
    pad = " " * indent
    if _ODD_SPACING.search(_strip_strings(stmt)):
        raise Unsure(stmt)
    if _fits(pad + stmt):
        return [pad + stmt]
    if indent == 0:
        return _declaration(stmt, after)
    cond = re.fullmatch(r"if \(!\((.*)\)\) \{", stmt)
    if cond:  # `if (!(a || b || c)) {`: one operand of the || chain per line, aligned after `if (!(`
        ops = _split_binary(cond.group(1), " || ")
        col = indent + len("if (!(")
        if len(ops) < 2 or any(" && " in o and o[0] != "(" for o in ops[:-1]):
            raise Unsure(stmt)
        lines = [pad + "if (!(" + ops[0]]  # operands packed greedily, each line ending with `||`
        for o in ops[1:]:
            end = ")) {" if o is ops[-1] else ""
            if _fits(lines[-1] + " || " + o + (end or " ||")):  # with the `||` that would end the line
                lines[-1] += " || " + o + end
            else:
                lines[-1] += " ||"
                lines.append(" " * col + o + end)
        if not all(_fits(x) for x in lines):
            raise Unsure(stmt)
        return lines
    if stmt.startswith(("if ", "for ", "while ", "switch ", "} else")) or stmt.endswith("{"):
        raise Unsure(stmt)
    return _call(stmt, indent)


def _after(out: list[str]) -> str:
    """What the last line written is, looking through a template header: "comment", "directive" (a
    preprocessor line, or the continuation of one) or ""."""
    k = len(out) - 1
    if k >= 0 and out[k].startswith("template "):
        k -= 1
    if k < 0:
        return ""
    if out[k].lstrip().startswith("//"):
        return "comment"
    if out[k].startswith("#") or (k > 0 and out[k - 1].endswith("\\")):
        return "directive"
    return ""


def _complete(text: str) -> bool:
    body = _strip_strings(text)
    if body.count("(") + body.count("[") != body.count(")") + body.count("]"):
        return False
    return body.endswith((";", "{", "}", ":")) or body.endswith("}") or bool(re.match(r"[A-Z_]+\(.*\)$", body))


def _compact_macro_block(name: str, lines: list[str], i: int, indent: int) -> tuple[list[str], int] | None:
    """`NAME({ stmt; });` on one line, or `NAME(` + `{ stmt; });` on the next, where the block is one statement
    that fits so (clang-format's layout of a short block argument); None: the block form."""
    stmt_lines = []
    j = i + 1
    while j < len(lines) and lines[j].strip() != "});":
        t = lines[j].strip()
        if t.startswith(("#", "//")) or t == "" or t.endswith("{") or t.startswith("}"):
            return None
        stmt_lines.append(t)
        j += 1
    if j >= len(lines) or not stmt_lines:
        return None
    stmt = " ".join(stmt_lines)
    if not _complete(stmt) or stmt.count(";") != 1 or not stmt.endswith(";"):
        return None
    pad = " " * indent
    one = f"{pad}{name}({{ {stmt} }});"
    if _fits(one):
        return [one], j + 1
    two = f"{pad}{' ' * CONT}{{ {stmt} }});"
    if _fits(f"{pad}{name}(") and _fits(two):
        return [f"{pad}{name}(", two], j + 1
    return None


def chunk(text: str) -> str:
    """One chunk (see chunks()) in clang-format's layout, or Unsure."""
    lines = text.split("\n")
    trailing = lines[-1] == ""
    if trailing:
        lines = lines[:-1]
    out: list[str] = []
    depth = 0  # indented blocks open (function bodies, nested blocks)
    switch_open: dict[int, bool] = {}  # depth -> that block is a switch's
    in_case: dict[int, bool] = {}  # depth -> a case label has been seen in that switch
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        s = line.strip()
        if s == "":
            if out and ((out[-1].endswith("{") and _opens_scope(out[-1])) or
                        (i + 1 < n and lines[i + 1].strip().startswith("}") and depth > 0)):
                raise Unsure(text)
            out.append("")
            i += 1
            continue
        if s.startswith("#"):
            out.extend(_preprocessor(line))
            i += 1
            continue
        if s.startswith("//"):
            j = i
            while j < n and lines[j].strip().startswith("//"):
                j += 1
            out.extend(comment_block(lines[i:j], 2 * depth))
            i = j
            continue
        if s.startswith("}") and re.fullmatch(r"}\s*//\s*(extern \"C\"|namespace.*)", s):  # the end of a block that does not indent
            out.append("} " + s[1:].lstrip())
            i += 1
            continue
        block = s.endswith("({") and re.fullmatch(r"([A-Z][A-Z0-9_]*)\(\{", s)
        if block:  # `MACRO({` ... `});`: a block argument (AOTI_TORCH_CONVERT_EXCEPTION_TO_ERROR_CODE)
            compact = _compact_macro_block(block.group(1), lines, i, 2 * depth)
            if compact is not None:
                out.extend(compact[0])
                i = compact[1]
                continue
            out.append(" " * (2 * depth) + s)
            depth += 1
            i += 1
            continue
        stmt = s
        j = i + 1
        while stmt != "});" and not _complete(stmt):
            if j >= n:
                raise Unsure(text)
            nxt = lines[j].strip()
            if nxt.startswith(("#", "//")) or nxt == "":
                raise Unsure(text)
            stmt = stmt + ("" if stmt.endswith(("(", "{", "[")) else " ") + nxt
            j += 1
        i = j
        if stmt.startswith("}") and re.fullmatch(r"}\s*//\s*(extern \"C\"|namespace.*)", stmt):
            out.append(stmt)
            continue
        if "//" in _strip_strings(stmt) or "/*" in stmt or "[](" in stmt or "[&" in stmt or "[=" in stmt:
            raise Unsure(stmt)
        if stmt.startswith("template"):  # AlwaysBreakTemplateDeclarations: the header on a line of its own
            head = re.match(r"template <[^<>]*> ", stmt)
            if not head or len(head.group(0)) + 2 * depth > 81 or stmt[head.end():].startswith("template"):
                raise Unsure(stmt)
            out.append(" " * (2 * depth) + head.group(0).rstrip())
            stmt = stmt[head.end():]
        inline_block = stmt.endswith("; }") and re.fullmatch(r"((?:if|for|while) \(.*\)) \{ ([^{};]*;) \}", stmt)
        if inline_block:  # `if (c) { s; }`: clang-format never keeps a block on one line here
            pad = " " * (2 * depth)
            out.extend(_statement(inline_block.group(1) + " {", 2 * depth))
            out.extend(_statement(inline_block.group(2), 2 * depth + 2))
            out.append(pad + "}")
            continue
        if "{ " in stmt and re.search(r"\{ .*; \}", _strip_strings(stmt)):
            raise Unsure(stmt)
        closes = stmt.startswith("}")
        if closes:
            if re.match(r"}\s*//\s*(extern|namespace)", stmt):
                out.append(stmt)
                continue
            depth -= 1
            if depth < 0:
                raise Unsure(text)
        if stmt.endswith(":") and re.fullmatch(r"(case [\w:]+|default):", stmt):  # IndentCaseLabels: labels indented, bodies further
            if depth < 1 or not switch_open.get(depth):
                raise Unsure(stmt)
            out.append(" " * (2 * depth) + stmt)
            in_case[depth] = True
            continue
        if stmt.endswith(":") and re.fullmatch(r"(public|private|protected):", stmt):
            if depth < 1:
                raise Unsure(text)
            out.append(" " * (2 * depth - 1) + stmt)
            continue
        opens = _opens_scope(stmt) and not (closes and stmt == "}")
        if opens and stmt.startswith('extern "C"'):
            opens = False
        if closes and stmt not in ("}", "};", "});") and not stmt.startswith("} else"):
            raise Unsure(stmt)
        if closes:
            in_case.pop(depth + 1, None)
            switch_open.pop(depth + 1, None)
        extra = 2 if in_case.get(depth) else 0
        if extra and opens:
            raise Unsure(stmt)  # a block inside a case
        out.extend(_statement(stmt, 2 * depth + extra, _after(out)))
        if opens:
            depth += 1
            if stmt.startswith("switch "):
                switch_open[depth] = True
    if depth != 0:
        raise Unsure(text)
    return "\n".join(out) + ("\n" if trailing else "")


def layout(text: str) -> tuple[str, list[int]]:
    """(the text with every chunk it could write in clang-format's layout, the indices of the chunks left as they
    were: they need clang-format)."""
    parts = chunks(text)
    unsure = []
    for k, part in enumerate(parts):
        try:
            parts[k] = chunk(part)
        except Unsure:
            unsure.append(k)
    return "".join(parts), unsure
