"""How much real extensions and models call each aten op (data/real_use.json): a ranking by use, so that the
overloads the default build cannot call at a target can be ordered by how much they matter.

    python -m shimgen.dev real-use [--mirrors DIR] [--write] [--out PATH] [--top N]

DIR holds one folder per repository, named `owner+name` (the form `fetch` lays a GitHub mirror out in): a bare git
directory (or a `repo` folder that is one), read at its HEAD, or a plain source tree. The command counts, per aten
op NAME (the name before the overload: `gelu`, `conv2d`, `add_`), the call sites of the repositories' sources:

* C++/CUDA (.cpp .cc .cu .cuh .h .hpp), with comments and string and character literals blanked first:
  `at::NAME(` and `torch::NAME(` (a nested namespace, `at::native::NAME(`, `at::cpu::NAME(`, `at::_ops::...`, is
  not aten's public API and is not counted); `torch::nn::functional::NAME(` and `F::NAME(`; and the method calls
  `.NAME(` / `->NAME(` (template arguments allowed) where NAME is an op with a `method` variant.
* Python (.py), by its syntax tree (so comments and strings never count): `torch.NAME(` (through any import alias,
  `from torch import NAME` included), `F.NAME(` / `torch.nn.functional.NAME(` (any alias of that module), and the
  method calls `x.NAME(` where NAME is an op with a `method` variant and `x` is not an imported module (`np.sum(`,
  `math.log(`, `tl.exp(` are a module's functions, never a Tensor's), `x` is not `self` alone (`self.norm(`,
  `self.relu(` call the class's own submodules), and NAME is not also a method of Python's str, bytes, list,
  tuple, dict or set (`.split(`, `.values(`, `.index(`, `.add(`, `.sort(`).

The heuristic is lexical: a method call is counted by its name whatever the receiver's type. Generic names
(`.data(`, `.view(`, `.to(`, `.index(`) also count std::vector's and other classes' methods in C++ (and
Tensor::data<T>(), which is not aten's `data`); `size` and `stride` have no method variant in the yaml, so
`.size(` counts nowhere. One rule removes a part of that: a call with no arguments at all (`v.size()`, `s.split()`) is not
counted for an op whose every method overload needs an argument besides self (aten's `size` needs `dim`), since
no overload of the op can be that call. A torch.nn.functional function counts for the aten op of the same name
(`F.gelu` -> `gelu`); one with no such op (`F.interpolate`) counts for none. Operators (`a + b`), `at::_ops::`
calls and a bare `NAME(` inside `namespace at` are not counted. Files under a `test`, `tests`, `testing`,
`benchmark(s)`, `docs` or `third_party` folder, and `test_*.py` / `*_test.py`, are skipped: the ranking is of what
shipped code calls. It is a ranking, not a census.

Only derived counts are recorded: each repository's name, commit, commit date and licence (SPDX id, recognized in
its LICENSE file), never its code or text. This module is a developer's command: the generator never imports it.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field

from torchgen.model import Variant

from shimgen.base.inputs import package_text
from shimgen.generate.parse import NativeYaml

DATA = "data/real_use.json"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(HERE, "data", "real_use.json")
CPP_EXT = (".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp")
PY_EXT = (".py",)
SKIP_DIRS = {"test", "tests", "testing", "benchmark", "benchmarks", "docs", "third_party"}
LICENSE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "COPYING", "LICENSE.rst")
BUILTIN_METHODS = frozenset().union(*(dir(t) for t in (str, bytes, list, tuple, dict, set)))
MAX_FILE = 2 << 20  # a larger source file is generated data, not code: skipped


# ---- the op names ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpNames:
    names: frozenset[str]  # every aten op name (`add`, `add_`, `gelu`)
    methods: frozenset[str]  # those with a `method` variant
    needs_arg: frozenset[str]  # methods whose every method overload needs an argument besides self
    release: str = ""  # the release whose yaml the names are from

    @property
    def builtin_like(self) -> frozenset[str]:
        """Methods that Python's str, bytes, list, tuple, dict or set also have (`split`, `values`, `index`, `add`,
        `sort`): a Python `x.NAME(` of these is not counted (its receiver is as likely one of those)."""
        return self.methods & BUILTIN_METHODS


@functools.lru_cache(maxsize=None)
def op_names(yaml_path: str | None = None) -> OpNames:
    """The installed torch's (or `yaml_path`'s) op names, read through shimgen's native_functions.yaml index."""
    native = NativeYaml(yaml_path)
    names = frozenset(native.by_name)
    ops = native.select(sorted(native.by_name), None, [])
    methods: set[str] = set()
    takes_none: set[str] = set()
    for op in ops:
        if Variant.method not in op.f.variants:
            continue
        name = op.name.split(".")[0]
        methods.add(name)
        args = op.schema.arguments
        required = [a for a in [*args.flat_positional, *args.flat_kwarg_only] if a.default is None and a.name != "self"]
        if not required:
            takes_none.add(name)
    return OpNames(names, frozenset(methods), frozenset(methods - takes_none), str(native.release or ""))


# ---- C++ -------------------------------------------------------------------------------------------------------


_RAW_RE = re.compile(r'R"([^()\\\s]{0,16})\(')


def strip_cpp(text: str) -> str:
    """`text` with its comments and string and character literals blanked to spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and (m := _RAW_RE.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # a character literal ('a', '\n', '\x41'); a digit separator (1'000) is left alone
            m = re.compile(r"'(?:\\.[^'\n]{0,8}|[^'\\\n])'").match(text, i)
            if m and not (i > 0 and text[i - 1].isalnum()):
                out.append(" " * (m.end() - i))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            j = i + 1
            while j < n and text[j] not in "/\"'R":
                j += 1
            out.append(text[i:j])
            i = j
    return "".join(out)


_CPP_NS_RE = re.compile(r"(?<![\w:])(?:::)?(at|torch)::([A-Za-z_]\w*)\s*\(")
_CPP_F_RE = re.compile(r"(?<![\w:])(?:::)?(?:torch::nn::functional|F)::([A-Za-z_]\w*)\s*\(")
_CPP_METHOD_RE = re.compile(r"(?:\.|->)\s*(?:template\s+)?([A-Za-z_]\w*)\s*(?:<[\w\s:,*&]*>\s*)?\(\s*(\))?")


def count_cpp(text: str, names: OpNames) -> Counter:
    """Call sites per op name in one C++/CUDA source (see the module docstring)."""
    code = strip_cpp(text)
    found: Counter = Counter()
    for m in _CPP_NS_RE.finditer(code):
        if m.group(2) in names.names:
            found[m.group(2)] += 1
    for m in _CPP_F_RE.finditer(code):
        if m.group(1) in names.names:
            found[m.group(1)] += 1
    for m in _CPP_METHOD_RE.finditer(code):
        name = m.group(1)
        if name in names.methods and not (m.group(2) and name in names.needs_arg):
            found[name] += 1
    return found


# ---- Python ----------------------------------------------------------------------------------------------------


_FUNCTIONAL = "torch.nn.functional"


def _dotted(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything else (a call, a subscript...)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def count_python(text: str, names: OpNames) -> Counter | None:
    """Call sites per op name in one Python source (see the module docstring); None if it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    bound: dict[str, str] = {}  # a name an import binds -> the qualified name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    bound[a.asname] = a.name
                else:
                    root = a.name.split(".")[0]
                    bound[root] = root
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:  # a relative import's names are the package's own: bound, never torch's
                bound[a.asname or a.name] = f"{'.' * node.level}{node.module or ''}.{a.name}"
    found: Counter = Counter()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        parts = _dotted(func)
        if parts is not None and parts[0] in bound:
            qualified = ".".join([bound[parts[0]], *parts[1:]])
            module, _, name = qualified.rpartition(".")
            if module in ("torch", _FUNCTIONAL) and name in names.names:
                found[name] += 1
            elif module == "torch.Tensor" and name in names.methods:
                found[name] += 1
            continue  # an imported module's (or object's) function: not a Tensor method
        if parts is not None and parts[:1] == ["self"] and len(parts) == 2:
            continue  # self.NAME(...): the class's own method or submodule (self.norm, self.relu), not a Tensor's
        if isinstance(func, ast.Attribute) and func.attr in names.methods and func.attr not in names.builtin_like:
            empty = not node.args and not node.keywords
            if not (empty and func.attr in names.needs_arg):
                found[func.attr] += 1
    return found


# ---- the repositories ------------------------------------------------------------------------------------------


@dataclass
class Repo:
    name: str  # owner/name
    commit: str | None
    date: str | None  # the commit's date (YYYY-MM-DD)
    license: str
    files: dict[str, bytes] = field(default_factory=dict)  # path -> content (the sources and licence files)


def _skipped(path: str) -> bool:
    parts = path.split("/")
    base = parts[-1]
    return (any(p in SKIP_DIRS for p in parts[:-1]) or base.startswith("test_") or base.endswith("_test.py")
            or not base.endswith(CPP_EXT + PY_EXT))


def spdx(text: str) -> str:
    """The SPDX id of a licence text, recognized by its words; NOASSERTION when none is recognized."""
    flat = " ".join(text.split())
    if "Apache License" in flat and "Version 2.0" in flat:
        return "Apache-2.0"
    if "Permission is hereby granted, free of charge" in flat:
        return "MIT"
    if "Redistribution and use in source and binary forms" in flat:
        return "BSD-3-Clause" if "Neither the name" in flat or "Neither the names" in flat else "BSD-2-Clause"
    if "GNU GENERAL PUBLIC LICENSE" in flat:
        return "GPL-3.0" if "Version 3" in flat else "GPL-2.0"
    return "NOASSERTION"


def _git_dir(path: str) -> str | None:
    for candidate in (os.path.join(path, "repo"), path, os.path.join(path, ".git")):
        if os.path.isfile(os.path.join(candidate, "HEAD")) and os.path.isdir(os.path.join(candidate, "objects")):
            return candidate
    return None


def _git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], input=data, capture_output=True, check=True).stdout


def read_repo(path: str) -> Repo:
    """The repository in folder `path` (named owner+name): its sources, licence, commit and date."""
    name = os.path.basename(os.path.normpath(path)).replace("+", "/", 1)
    git_dir = _git_dir(path)
    files: dict[str, bytes] = {}
    if git_dir is not None:
        commit, date = _git(git_dir, "log", "-1", "--format=%H %cs", "HEAD").decode().split()
        listing = _git(git_dir, "ls-tree", "-r", "-z", "--long", "HEAD").split(b"\0")
        wanted = []
        for row in listing:
            if not row:
                continue
            meta, _, p = row.partition(b"\t")
            mode, kind, blob, size = meta.split()
            p = p.decode("utf-8", "replace")
            if kind != b"blob" or mode == b"120000" or not size.isdigit() or int(size) > MAX_FILE:
                continue
            if p in LICENSE_FILES or not _skipped(p):
                wanted.append((p, blob.decode()))
        batch = _git(git_dir, "cat-file", "--batch", data="".join(f"{b}\n" for _, b in wanted).encode())
        pos = 0
        for p, _ in wanted:
            eol = batch.index(b"\n", pos)
            head = batch[pos:eol].split()
            if len(head) < 3:  # `<blob> missing`: a file the snapshot lists but does not hold
                pos = eol + 1
                continue
            size = int(head[2])
            files[p] = batch[eol + 1:eol + 1 + size]
            pos = eol + 1 + size + 1
    else:
        commit = date = None
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                if (rel in LICENSE_FILES or not _skipped(rel)) and os.path.getsize(full) <= MAX_FILE:
                    with open(full, "rb") as fh:
                        files[rel] = fh.read()
    licence = next((spdx(files[f].decode("utf-8", "replace")) for f in LICENSE_FILES if f in files), "NOASSERTION")
    return Repo(name, commit, date, licence, files)


def count_repo(repo: Repo, names: OpNames) -> tuple[Counter, Counter, dict[str, int]]:
    """(C++ call sites, Python call sites, file counts) of one repository."""
    cpp, py = Counter(), Counter()
    stats = {"cpp_files": 0, "python_files": 0, "python_unparsed": 0}
    for path in sorted(repo.files):
        if _skipped(path):
            continue
        text = repo.files[path].decode("utf-8", "replace")
        if path.endswith(CPP_EXT):
            stats["cpp_files"] += 1
            cpp.update(count_cpp(text, names))
        else:
            found = count_python(text, names)
            if found is None:
                stats["python_unparsed"] += 1
            else:
                stats["python_files"] += 1
                py.update(found)
    return cpp, py, stats


def derive(mirrors: str, names: OpNames | None = None) -> dict:
    """The data of data/real_use.json from every repository folder in `mirrors`."""
    names = names or op_names()
    repos, ops = [], {}
    folders = sorted(d for d in os.listdir(mirrors) if "+" in d and os.path.isdir(os.path.join(mirrors, d)))
    for folder in folders:
        repo = read_repo(os.path.join(mirrors, folder))
        cpp, py, stats = count_repo(repo, names)
        repos.append({"repo": repo.name, "commit": repo.commit, "date": repo.date, "license": repo.license, **stats})
        for name in set(cpp) | set(py):
            row = ops.setdefault(name, {"cpp": 0, "python": 0, "repos": 0})
            row["cpp"] += cpp[name]
            row["python"] += py[name]
            row["repos"] += 1
    repos.sort(key=lambda r: r["repo"])
    dates = [r["date"] for r in repos if r["date"]]
    return {
        "about": "call sites per aten op name in the repositories' sources (cpp: C++/CUDA, python: .py; repos: how "
                 "many repositories call it); derived by `python -m shimgen.dev real-use --write` "
                 "(shimgen/proofs/real_use.py), never typed",
        "torch": names.release,  # the yaml whose op names were counted
        "date": max(dates) if dates else None,
        "repositories": repos,
        "ops": {k: ops[k] for k in sorted(ops)},
    }


def dumps(data: dict) -> str:
    """The data as deterministic JSON: the header's fields, one line per repository and one per op."""
    lines = ["{"]
    for key in ("about", "torch", "date"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key])},")
    lines.append('  "repositories": [')
    repos = [f"    {json.dumps(r, sort_keys=True)}" for r in data["repositories"]]
    lines.append(",\n".join(repos))
    lines.append("  ],")
    lines.append('  "ops": {')
    lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(data["ops"].items())))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---- reading the data ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def load() -> dict:
    """shimgen's data/real_use.json."""
    return json.loads(package_text(DATA))


def uses(data: dict | None = None) -> dict[str, int]:
    """op name -> call sites (C++ and Python together)."""
    data = data if data is not None else load()
    return {k: v["cpp"] + v["python"] for k, v in data["ops"].items()}


def ranking(data: dict | None = None) -> list[tuple[str, int]]:
    """(op name, call sites), most used first, ties by name."""
    return sorted(uses(data).items(), key=lambda kv: (-kv[1], kv[0]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev real-use", description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", default=os.environ.get("SHIMGEN_MIRRORS", "/work/.mirror"),
                    help="the folder of repository mirrors, one `owner+name` folder each (default: $SHIMGEN_MIRRORS "
                         "or /work/.mirror)")
    ap.add_argument("--write", action="store_true", help=f"write the result to shimgen/{DATA}")
    ap.add_argument("--out", help="write the result to this file instead")
    ap.add_argument("--top", type=int, default=30, help="how many op names to print (default 30)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.mirrors):
        print(f"shimgen: error: --mirrors {args.mirrors}: no such folder", file=sys.stderr)
        return 2
    data = derive(args.mirrors)
    if not data["repositories"]:
        print(f"shimgen: error: --mirrors {args.mirrors} holds no owner+name folder", file=sys.stderr)
        return 2
    for r in data["repositories"]:
        print(f"{r['repo']} {r['commit'] or '(no git)'} {r['date'] or ''} {r['license']}: {r['cpp_files']} C++ "
              f"files, {r['python_files']} Python files ({r['python_unparsed']} unparsed)", file=sys.stderr)
    for name, n in ranking(data)[:args.top]:
        row = data["ops"][name]
        print(f"{n:6d}  {name}  (cpp {row['cpp']}, python {row['python']}, {row['repos']} repos)")
    out = args.out or (OUT if args.write else None)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(dumps(data))
        print(f"wrote {out}: {len(data['ops'])} op names", file=sys.stderr)
    return 0
