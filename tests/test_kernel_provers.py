"""The kernels' prover modules (shimgen/proofs/provers/kernels): one per registry entry module, paired by file name
(kernels/renorm.py proves the entries of shimgen/generate/routes/kernels/renorm.py); each declares the hooks it offers
(`PROVERS`) and the mirrors its hooks look up (`MIRRORS`), and every hook and mirror a row's spec names is there. The
compositions worker is the driver only: it loads the module a spec names by its path and runs the hook, and names no
kernel, hook or module itself. The prover modules run in each runtime's venv with torch alone: they import only the
standard library, torch and the workers' shared modules beside the driver. The number rules' worker finds a kernel's
mirror as the rule names it, without a table keyed by kernel names."""

from __future__ import annotations

import ast
import importlib.resources
import json
import os
import subprocess
import sys

import pytest
import yaml

from shimgen.generate.routes import kernels
from shimgen.proofs.provers.scalars import kernel_compositions_spec
from tests.test_kernel_registry import name_comparisons

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROVERS_DIR = os.path.join(ROOT, "shimgen", "proofs", "provers")
KERNELS_DIR = os.path.join(PROVERS_DIR, "kernels")
WORKER = os.path.join(PROVERS_DIR, "compositions_worker.py")
NUMBER_RULES_WORKER = os.path.join(PROVERS_DIR, "number_rules_worker.py")
SHARED = {"mirror_common", "worker_common"}  # the workers' shared modules, beside the driver


def data() -> dict:
    return yaml.safe_load(importlib.resources.files("shimgen").joinpath("data/scalar_facts.yaml").read_text())


def prover_modules() -> list[str]:
    return sorted(f[:-3] for f in os.listdir(KERNELS_DIR) if f.endswith(".py") and f != "__init__.py")


def _tree(name: str) -> ast.Module:
    return ast.parse(open(os.path.join(KERNELS_DIR, f"{name}.py"), encoding="utf-8").read())


def declared(name: str, table: str) -> dict[str, int]:
    """The functions the prover module `name` lists in its module dict `table` ({f.__name__: f for f in (...)}),
    each with the line of its definition in that module (0: not defined there)."""
    tree = _tree(name)
    defined = {n.name: n.lineno for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == table for t in node.targets):
            listed = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id != "f"}
            return {f: defined.get(f, 0) for f in listed}
    return {}


def test_every_entry_module_has_its_prover_module_and_every_prover_module_its_entry_module() -> None:
    assert prover_modules() == kernels.modules()
    assert len(prover_modules()) >= 20


def test_every_entry_names_its_own_module_as_its_prover_module() -> None:
    for name, entry in kernels.registry().items():
        assert entry.prover_module in kernels.modules(), (name, entry.prover_module)
        assert f"shimgen.generate.routes.kernels.{entry.prover_module}" == type(entry).__module__, name


def test_every_hook_and_mirror_a_spec_names_is_declared_in_the_module_it_names() -> None:
    spec = kernel_compositions_spec(data()["kernel_compositions"])
    used: set[tuple[str, str]] = set()
    for op, s in spec.items():
        hooks = declared(s["module"], "PROVERS")
        assert hooks.get(s["prover"]), (op, s["module"], s["prover"], sorted(hooks))
        used.add((s["module"], s["prover"]))
        if s.get("mirror"):
            mirrors = declared(s["module"], "MIRRORS")
            assert mirrors.get(s["mirror"]), (op, s["module"], s["mirror"], sorted(mirrors))
    # every module offers hooks, each defined there and proving a row
    for name in prover_modules():
        hooks = declared(name, "PROVERS")
        assert hooks and all(hooks.values()), (name, hooks)
        assert {(name, h) for h in hooks} <= used, (name, sorted(set(hooks) - {h for m, h in used if m == name}))
        assert all(declared(name, "MIRRORS").values()), name


def test_the_driver_knows_no_kernel_hook_or_module_by_name() -> None:
    tree = ast.parse(open(WORKER, encoding="utf-8").read())
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    hooks = {h for m in prover_modules() for h in declared(m, "PROVERS")}
    assert not strings & (set(kernels.registry()) | set(prover_modules()) | hooks)
    assert {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} == {"main"}
    assert not [n for n in tree.body if isinstance(n, ast.Assign)]  # no table of hooks or mirrors
    assert name_comparisons(WORKER) == []


def _imports(path: str) -> set[str]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}


def test_the_prover_modules_import_only_the_standard_library_torch_and_the_shared_modules() -> None:
    """They run in each runtime's venv with torch alone (the driver loads them by path; no shimgen, yaml, numpy)."""
    allowed = set(sys.stdlib_module_names) | {"torch"} | SHARED
    paths = [os.path.join(KERNELS_DIR, f"{m}.py") for m in prover_modules()]
    paths += [WORKER, NUMBER_RULES_WORKER] + [os.path.join(PROVERS_DIR, f"{m}.py") for m in SHARED]
    for path in paths:
        assert _imports(path) <= allowed, (path, _imports(path) - allowed)
    assert "select" in sys.stdlib_module_names  # why the driver loads kernels/select.py under another name


def test_each_prover_module_loads_as_the_driver_loads_it() -> None:
    """Loaded by path in a fresh interpreter with only the driver's folder on the path (as the worker runs):
    each module's PROVERS and MIRRORS are its functions, under their own names; the standard library's `select`
    is not shadowed by kernels/select.py."""
    code = (
        "import sys, json, select\n"
        f"sys.path.insert(0, {PROVERS_DIR!r})\n"
        "import mirror_common\n"
        f"out = {{}}\n"
        f"for name in {prover_modules()!r}:\n"
        "    m = mirror_common.prover_module(name)\n"
        "    out[name] = sorted(k for t in ('PROVERS', 'MIRRORS') for k, f in getattr(m, t, {}).items()\n"
        "                       if f.__name__ == k and getattr(m, k) is f)\n"
        "assert hasattr(select, 'select') and 'shimgen' not in sys.modules\n"
        "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = json.loads(proc.stdout)
    for name in prover_modules():
        assert loaded[name] == sorted({**declared(name, "PROVERS"), **declared(name, "MIRRORS")}), name


def test_the_number_rules_worker_finds_a_kernels_mirror_by_the_rules_name() -> None:
    """Every number rule's `kernel` names a mirror (<kernel>_select) the worker declares; no kernel's name is
    written in the worker."""
    tree = ast.parse(open(NUMBER_RULES_WORKER, encoding="utf-8").read())
    mirrors = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MIRRORS" for t in node.targets):
            mirrors = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id != "f"}
    named = {r["kernel"] for rs in data()["number_rules"].values() for r in rs if r.get("kernel")}
    assert named and {f"{k}_select" for k in named} <= mirrors, (named, mirrors)
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not strings & named, strings & named


@pytest.mark.slow
def test_the_worker_loads_a_hook_another_module_names_and_a_module_loading_another() -> None:
    """item_numbers over an out= overload runs the factories' hook (its entry names that module); range_out's
    mirror is the range kernels' (kernels/factories.py loads kernels/ranges.py); scatter.value_out runs the out
    hook's indexed samples."""
    rows = data()["kernel_compositions"]
    ops = ["linspace.out", "arange.out", "scatter.value_out"]
    spec = kernel_compositions_spec({op: rows[op] for op in ops})
    assert spec["linspace.out"]["module"] == "factories" and spec["arange.out"]["module"] == "factories"
    proc = subprocess.run([sys.executable, WORKER], input=json.dumps(spec), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    for op in ops:
        assert report[op]["wrong"] == "" and report[op]["both_ok"] > 0, (op, report[op])
