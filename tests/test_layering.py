"""The generation stack stands on its own: no module of it imports shimgen.verify, shimgen.probe, shimgen.provers
or shimgen.cli, at import time or inside a function. The stack is imported and run in a fresh
interpreter in which those packages cannot be imported at all; the source is also read for imports of them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from shimgen.routes.kernels import modules, registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "shimgen")

# The generation stack (docs/design.md, "Layout"): what the command line, a build integration and --verify call.
STACK = ["parse", "table", "manifest", "history", "versions", "releases", "plan", "scalars", "device_checks", "cpp_model",
         "routes",
         "routes.aten_shim", "routes.dispatcher", "routes.sibling", "routes.overlay_shim", "routes.device_shim",
         "routes.equivalent", "routes.legacy_shim", "routes.composition",
         "routes.kernels", *(f"routes.kernels.{m}" for m in ("common", *modules())),
         "device_shims", "sig_c", "sig_cpp",
         "signatures", "overloads", "emit_c", "emit_cpp", "kernel_sections", "emit_py", "layout", "fmt", "templates",
         "validate",
         "drift", "output", "stamp", "inputs", "errors", "pipeline", "cache", "cpp_layout", "upstream_surface"]
FORBIDDEN = ("shimgen.verify", "shimgen.probe", "shimgen.provers", "shimgen.cli")

_BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in {forbidden!r} or name.startswith(tuple(f + "." for f in {forbidden!r})):
            raise ImportError(f"{{name}} is not importable in this test")
sys.meta_path.insert(0, Block())
"""


def test_every_stack_module_is_listed() -> None:
    """A new module of shimgen/ (outside the tools) is either in the stack or a tool: decide, then list it."""
    tools = {"cli", "console", "__main__", "scalar_model", "__init__", "project", "setuptools", "port", "overlay_needs",
             "cuda_toolkit"}  # callers of the stack (cuda_toolkit: the setuptools integration finds nvcc)
    found = {f[:-3] for f in os.listdir(PKG) if f.endswith(".py")} | {
        f"routes.{f[:-3]}" for f in os.listdir(os.path.join(PKG, "routes")) if f.endswith(".py") and f != "__init__.py"
    } | {"routes"} | {
        f"routes.kernels.{f[:-3]}" for f in os.listdir(os.path.join(PKG, "routes", "kernels"))
        if f.endswith(".py") and f != "__init__.py"
    } | {"routes.kernels"}
    assert found - tools == set(STACK)


def test_stack_imports_and_generates_without_the_tools(tmp_path) -> None:
    code = _BLOCK.format(forbidden=FORBIDDEN) + f"""
import importlib
for m in {STACK!r}:
    importlib.import_module("shimgen." + m)
from shimgen import pipeline
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
        path = os.path.join(PKG, *m.split(".")) + ".py"
        if not os.path.exists(path):
            path = os.path.join(PKG, *m.split("."), "__init__.py")
        for line, name, _ in _imports(path):
            if name.startswith(FORBIDDEN) or name in ("shimgen.verify", "shimgen.probe", "shimgen.cli"):
                bad.append(f"shimgen/{m}: line {line}: {name}")
    assert not bad, bad


def test_function_local_imports_of_shimgen_say_why() -> None:
    """A function-local import of a shimgen module breaks a real cycle or saves measured start-up time, and the
    line before it (or the line itself) says which."""
    unexplained = []
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            # verify/samples.py: its two imports of verify.serial are left to the move of its per-type rules into
            # the table.
            if not f.endswith(".py") or os.path.join(dirpath, f) == os.path.join(PKG, "verify", "samples.py"):
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
    from shimgen.parse import NativeYaml

    names = set()
    for op in NativeYaml(None).all_op_names():
        names |= {op, op.split(".")[0]}
    # a composition kernel's name (the rows' `kernel` value its registry entry serves) may be an op's (threshold)
    exempt = _DATA_KEYS | set(registry())
    found = []
    for f in sorted(os.listdir(PKG)) + [f"routes/{f}" for f in sorted(os.listdir(os.path.join(PKG, "routes")))] + [
            f"routes/kernels/{f}" for f in sorted(os.listdir(os.path.join(PKG, "routes", "kernels")))]:
        if not f.endswith(".py"):
            continue
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
    """`shimgen port` and the command line share their parser and output (shimgen.console): no import circle."""
    for tool in ("port", "project", "setuptools", "overlay_needs", "console"):
        names = [name for _, name, _ in _imports(os.path.join(PKG, f"{tool}.py"))]
        assert not [n for n in names if n == "shimgen.cli" or n.startswith("shimgen.cli.")], (tool, names)
