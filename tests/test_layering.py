"""The package reads as the pipeline (docs/design.md, "Layout"): shimgen.base, then shimgen.facts, then the
generation core shimgen.generate, each importing only the layers before it; the proofs (shimgen.proofs) and the
user's tools (shimgen.tools, shimgen.setuptools, shimgen.dev) come last. The generation core never imports a proof
or a tool, at import time or inside a function: it is imported and run in a fresh interpreter in which those
packages cannot be imported at all, and the source is also read for imports of them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from shimgen.generate.routes.kernels import modules, registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "shimgen")

# The layers in import order: a module imports (at import time) only its own layer and the ones before it.
LAYERS = ["base", "facts", "generate"]
LAST = ["proofs", "tools"]  # callers of the stack
ENTRY = {"__init__", "__main__", "cli", "setuptools", "dev"}  # the public entry points, at the top
FORBIDDEN = ("shimgen.proofs", "shimgen.tools", "shimgen.tools.cli", "shimgen.setuptools", "shimgen.dev")


def _modules(layer: str) -> list[str]:
    """Every module of a layer (its subpackages included), dotted under shimgen."""
    found = []
    for dirpath, dirs, files in os.walk(os.path.join(PKG, layer)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), PKG)[:-3].replace(os.sep, ".")
                found.append(rel[: -len(".__init__")] if rel.endswith(".__init__") else rel)
    return found


def _path(module: str) -> str:
    path = os.path.join(PKG, *module.split(".")) + ".py"
    return path if os.path.exists(path) else os.path.join(PKG, *module.split("."), "__init__.py")


STACK = [m for layer in LAYERS for m in _modules(layer)]

_BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in {forbidden!r} or name.startswith(tuple(f + "." for f in {forbidden!r})):
            raise ImportError(f"{{name}} is not importable in this test")
sys.meta_path.insert(0, Block())
"""


def test_every_module_has_a_layer() -> None:
    """A module of shimgen/ lives in a layer's folder; only the entry points stand at the top."""
    top = {f[:-3] for f in os.listdir(PKG) if f.endswith(".py")}
    assert top == ENTRY
    folders = {d for d in os.listdir(PKG) if os.path.exists(os.path.join(PKG, d, "__init__.py"))}
    assert folders == set(LAYERS + LAST)
    assert len(STACK) > 40 and "generate.routes.composition" in STACK


def test_stack_imports_and_generates_without_the_tools(tmp_path) -> None:
    code = _BLOCK.format(forbidden=FORBIDDEN) + f"""
import importlib
for m in {STACK!r}:
    importlib.import_module("shimgen." + m)
from shimgen.generate import pipeline
files, plan = pipeline.generate(["add", "mul.Scalar", "sort", "full"], None, None)
pipeline.write({str(tmp_path)!r}, files)
assert not [m for m in sys.modules if m.startswith({FORBIDDEN!r})]
print(len(files))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout) > 10


def _imports(path: str) -> list[tuple[int, str, bool]]:
    """(line, imported module, inside a function) of every import in a file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    found = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((child.lineno, a.name, local) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                base = child.module if child.level == 0 else "shimgen." + child.module
                found.extend((child.lineno, f"{base}.{a.name}", local) for a in child.names)
            visit(child, inner)

    visit(tree, False)
    return found


def test_no_stack_module_names_a_tool_even_inside_a_function() -> None:
    bad = []
    for m in STACK:
        for line, name, _ in _imports(_path(m)):
            if name.startswith(FORBIDDEN):
                bad.append(f"shimgen/{m}: line {line}: {name}")
    assert not bad, bad


def test_each_layer_imports_only_the_layers_before_it() -> None:
    """At import time; a function-local import of a later layer (a fact's recording command parsing the yaml)
    says why, as every function-local import does (the test below)."""
    bad = []
    for i, layer in enumerate(LAYERS):
        allowed = tuple(f"shimgen.{earlier}" for earlier in LAYERS[: i + 1])
        for m in _modules(layer):
            for line, name, local in _imports(_path(m)):
                if name.startswith("shimgen") and not local and not name.startswith(allowed):
                    bad.append(f"shimgen/{m}: line {line}: {name}")
    assert not bad, "\n".join(bad)


def test_function_local_imports_of_shimgen_say_why() -> None:
    """A function-local import of a shimgen module breaks a real cycle or saves measured start-up time, and the
    line before it (or the line itself) says which."""
    unexplained = []
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            # verify/samples.py: its two imports of verify.serial are left to the move of its per-type rules into
            # the table.
            if not f.endswith(".py") or os.path.join(dirpath, f) == os.path.join(PKG, "proofs", "verify", "samples.py"):
                continue
            path = os.path.join(dirpath, f)
            lines = open(path, encoding="utf-8").read().splitlines()
            for line, name, local in _imports(path):
                if not local or not name.startswith("shimgen"):
                    continue
                context = " ".join(lines[max(0, line - 3) : line]).lower()
                if not any(w in context for w in ("cycle", "start-up", "startup", "lazily", "typing only")):
                    unexplained.append(f"{os.path.relpath(path, ROOT)}:{line}: {name}")
    assert not unexplained, "\n".join(unexplained)


# Words that are aten op names and also keys of shimgen's own data: `fill` (a composition's fill op), `to` (a
# sibling's target), `complex` (a number kind), `size` (a fixed-size list's length).
_DATA_KEYS = {"fill", "to", "complex", "size"}


def test_no_aten_op_name_in_quotes_in_the_stack() -> None:
    """Op names live in data (the manifest, data/c_shim.yaml, scalar_facts.yaml...), never in shimgen/*.py."""
    from shimgen.generate.parse import NativeYaml

    names = set()
    for op in NativeYaml(None).all_op_names():
        names |= {op, op.split(".")[0]}
    # a composition kernel's name (the rows' `kernel` value its registry entry serves) may be an op's (threshold)
    exempt = _DATA_KEYS | set(registry())
    found = []
    # the stack, the entry points and the user's tools (not the proofs, whose samples name ops)
    modules = STACK + sorted(ENTRY) + [m for m in _modules("tools") if not m.startswith("tools.porting")]
    for f in [os.path.relpath(_path(m), PKG) for m in modules] + ["proofs/overlay_needs.py"]:
        for node in ast.walk(ast.parse(open(os.path.join(PKG, f), encoding="utf-8").read())):
            if isinstance(node, ast.Constant) and node.value in names and node.value not in exempt:
                found.append(f"shimgen/{f}:{node.lineno}: {node.value!r}")
    assert not found, found


def _private_uses(path: str) -> list[str]:
    """`from shimgen.x import _y` and `x._y` where x names a shimgen module imported into the file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shimgen"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("shimgen")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    """What one module of shimgen uses of another is that module's public name: a private one is free to change."""
    bad = []
    for dirpath, _, files in os.walk(PKG):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                bad += [f"{os.path.relpath(path, ROOT)}:{use}" for use in _private_uses(path)]
    assert not bad, "\n".join(bad)


def test_the_tools_do_not_import_the_command_line() -> None:
    """`shimgen port` and the command line share their parser and output (shimgen.tools.console): no import circle."""
    for tool in ("tools/port", "tools/project", "setuptools", "proofs/overlay_needs", "tools/console"):
        names = [name for _, name, _ in _imports(os.path.join(PKG, f"{tool}.py"))]
        assert not [n for n in names if n.startswith(("shimgen.tools.cli", "shimgen.tools.cli"))], (tool, names)


def _switch_flips(path: str) -> list[str]:
    """`x.y = ...` (or +=, or setattr(x, ...)) where x names a shimgen module imported into the file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shimgen"):
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("shimgen")}
    found = []
    for node in ast.walk(tree):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in modules:
                found.append(f"{node.lineno}: {t.value.id}.{t.attr}")
    return found


def test_no_module_sets_another_modules_switch() -> None:
    """A module that wants another to behave differently passes it a parameter: no shimgen module assigns a name
    of another (a module-level switch flipped from outside changes every caller's result)."""
    bad = []
    for dirpath, _, files in os.walk(PKG):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                bad += [f"{os.path.relpath(path, ROOT)}:{use}" for use in _switch_flips(path)]
    assert not bad, "\n".join(bad)


def test_generation_climbs_back_up_at_most_three_times() -> None:
    """Routes are decided in one place: following the calls of one generation (benchmarks/pipeline_climbs.py), a
    stage asks an earlier stage again at most three times; the emitters only lay out what the signature stage
    decided (signatures.stage.resolve) and the routes get what they ask of other wrappers from the values handed
    to them (Plan.wrapper_of, Wrapper.active, cpp_model.Query)."""
    env = {**os.environ, "SHIMGEN_CACHE_DIR": "", "PYTHONPATH": ROOT}
    res = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "pipeline_climbs.py"), "--list"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    head = res.stdout.splitlines()[0]
    climbs = int(head.split("stage to earlier stage: ")[1].split()[0])
    assert climbs <= 3, res.stdout
    assert "-> generate.signatures" not in res.stdout.replace("generate.signatures.c:", ""), res.stdout


def test_routes_and_emitters_do_not_import_the_signature_stage() -> None:
    """The routes and composition kernels get what they ask of other wrappers from the values handed to them, and
    the emitters lay out what the stage decided (signatures.stage.resolve): none imports signatures/cpp.py or
    signatures/stage.py, even inside a function (signatures/c.py, the C shim rules, is below the routes)."""
    stage = ("shimgen.generate.signatures.cpp", "shimgen.generate.signatures.stage")
    bad = []
    for module in STACK:
        if not module.startswith(("generate.routes", "generate.emit")):
            continue
        for line, name, _ in _imports(_path(module)):
            if name.startswith(stage) or name in ("shimgen.generate.signatures", "shimgen.generate.signatures.*"):
                bad.append(f"{module}:{line}: {name}")
    assert not bad, bad


def _named_modules(path: str, module: str, known: set[str]) -> set[str]:
    """The shimgen modules a file names in an import, wherever the import stands: at the top, under
    `if TYPE_CHECKING:` or inside a function (each is an edge of the import graph). `from a.b import c` names
    a.b.c where that is a module, else a.b; a package's own __init__ is not implied by importing its modules."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([base] if base else []))
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    return {m for m in found if m in known and m != module}


def import_graph() -> dict[str, set[str]]:
    """shimgen.X -> the shimgen modules it imports (_named_modules), over every module of shimgen/."""
    paths = {}
    for dirpath, dirs, files in os.walk(PKG):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].replace(os.sep, ".")
                paths[rel.removesuffix(".__init__")] = os.path.join(dirpath, f)
    return {m: _named_modules(p, m, set(paths)) for m, p in paths.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each is a circle of
    modules that import one another, directly or through the others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_import_circles_are_found(tmp_path) -> None:
    """The circle finder sees a circle through a type-only import and one through a function-local import."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}, "g": set()}
    assert import_circles(graph) == [["a", "b", "c"], ["e", "f"]]
    known = {"shimgen.x", "shimgen.y", "shimgen.y.z"}
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shimgen.y import z\n"
              "def f():\n    from shimgen import x\n    import shimgen.y\n")
    path = tmp_path / "w.py"
    path.write_text(source, encoding="utf-8")
    assert _named_modules(str(path), "shimgen.w", known) == {"shimgen.x", "shimgen.y", "shimgen.y.z"}


def test_no_import_circles() -> None:
    """No two modules of shimgen/ import each other, directly or around a circle, counting every import: those
    under `if TYPE_CHECKING:` and those inside a function too. A type two layers share lives in the lower one
    (the porting model in shimgen.tools.porting, under the `port` command; the values handed down in
    generate/cpp_model.py, under the routes that build them and above the plan)."""
    circles = import_circles(import_graph())
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_the_cache_key_covers_every_module_that_derives_a_cached_value() -> None:
    """shimgen.base.cache keys its values by the source of the stack's modules only (cache.STACK): so only they
    derive a cached value (`derived`, `Memo`) or read the digest (`code`); a proof or a tool asks none."""
    from shimgen.base import cache

    assert cache.STACK == tuple(LAYERS)
    outside = [m for layer in LAST for m in _modules(layer)] + sorted(ENTRY)
    found = []
    for m in outside:
        text = open(_path(m), encoding="utf-8").read()
        found += [f"shimgen/{m}: {use}" for use in ("cache.derived(", "cache.Memo(", "cache.code(") if use in text]
    assert not found, found
