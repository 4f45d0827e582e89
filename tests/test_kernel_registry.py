"""The composition kernels' registry (shimgen/generate/routes/kernels): every `kernel` of data/scalar_facts.yaml's
`kernel_compositions` has one entry and every entry serves a row; the route (shimgen/generate/routes/composition.py) and the
prover (shimgen/proofs/provers/compositions_worker.py and the kernels' prover modules, tests/test_kernel_provers.py)
ask the entry and never compare a kernel's name; a row naming an unknown kernel is one clear error."""

from __future__ import annotations

import ast
import importlib.resources
import json
import os
import subprocess
import sys
import types

import pytest
import yaml

from shimgen.facts import scalar_facts as scalars
from shimgen.base.errors import ShimgenError
from shimgen.proofs.provers.scalars import kernel_compositions_spec
from shimgen.generate.routes import kernels
from shimgen.generate.routes.composition import Composition

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUTE = os.path.join(ROOT, "shimgen", "generate", "routes", "composition.py")
WORKER = os.path.join(ROOT, "shimgen", "proofs", "provers", "compositions_worker.py")


def rows() -> dict[str, dict]:
    """Every row, proven or not (scalars.load keeps the proven ones only)."""
    text = importlib.resources.files("shimgen").joinpath("data/scalar_facts.yaml").read_text()
    return yaml.safe_load(text)["kernel_compositions"]


def test_every_kernel_of_the_data_has_an_entry_and_every_entry_serves_a_row() -> None:
    named = {r["kernel"] for r in rows().values()}
    registered = set(kernels.registry())
    assert named - registered == set(), "kernels without an entry"
    assert registered - named == set(), "entries no row uses"
    assert len(registered) >= 40, len(registered)
    for name, entry in kernels.registry().items():
        assert entry.name == name and kernels.get(name) is entry


def _names_kernel(node: ast.AST) -> bool:
    """The expression reads a kernel's name: x["kernel"], a name or attribute `kernel`."""
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and n.slice.value == "kernel":
            return True
        if isinstance(n, ast.Name) and n.id == "kernel" or isinstance(n, ast.Attribute) and n.attr == "kernel":
            return True
    return False


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def name_comparisons(path: str) -> list[str]:
    """Each place `path` compares a kernel's name (==, !=, in, not in against a literal that is a registered kernel,
    or against a module constant), and each module constant holding a kernel's name."""
    tree = ast.parse(open(path).read())
    names = set(kernels.registry())
    constants = set()
    found = []
    for node in tree.body:  # module constants holding a kernel's name (RANGES = ("arange_factory", ...))
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            held = _strings(node.value) & names
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    constants.add(t.id)
                    if held:
                        found.append(f"line {node.lineno}: constant {t.id} holds {sorted(held)}")
    for compare in ast.walk(tree):
        if not isinstance(compare, ast.Compare):
            continue
        sides = [compare.left, *compare.comparators]
        if not any(_names_kernel(s) for s in sides):
            continue
        for s in sides:
            literal = _strings(s) & names if not _names_kernel(s) else set()
            if literal or isinstance(s, ast.Name) and s.id in constants:
                found.append(f"line {compare.lineno}: {ast.unparse(compare)}")
    return found


def test_the_route_and_the_prover_compare_no_kernel_name() -> None:
    provers = os.path.join(ROOT, "shimgen", "proofs", "provers")
    paths = [os.path.join(provers, "kernels", f"{m}.py") for m in kernels.modules()]
    for path in (ROUTE, WORKER, os.path.join(provers, "mirror_common.py"), *paths):
        assert name_comparisons(path) == [], path


def test_the_check_finds_a_comparison_of_a_kernel_name(tmp_path) -> None:
    """What the AST check above would report, so its silence means something."""
    path = tmp_path / "example.py"
    path.write_text('RANGES = ("arange_factory", "range_factory")\n'
                    'def f(s, rule, kernel):\n'
                    '    return (s["kernel"] == "inplace", rule["kernel"] in RANGES, kernel != "out",\n'
                    '            "out" in s["args"])\n')
    found = name_comparisons(str(path))
    assert len(found) == 4, found  # the constant and three comparisons; an argument named out is no kernel name
    assert not any('"out" in s' in f for f in found)


@pytest.mark.slow
def test_the_worker_proves_rows_on_the_installed_torch() -> None:
    """The worker as prove_kernel_compositions starts it, on rows of hooks that once raised Python errors of their
    own (recorded as differences): addmm_'s in-place model, rrelu_with_noise.out's leaky_relu.out model."""
    ops = ["addmm_.default", "rrelu_with_noise.out", "_assert_scalar.default", "threshold_backward.default"]
    spec = kernel_compositions_spec({op: rows()[op] for op in ops})
    proc = subprocess.run([sys.executable, WORKER], input=json.dumps(spec), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    for op in ops:
        assert report[op]["wrong"] == "" and report[op]["both_ok"] > 0, (op, report[op])


def test_an_unknown_kernel_is_one_clear_error(monkeypatch) -> None:
    with pytest.raises(ShimgenError) as e:
        kernels.get("no_such_kernel", "add.out")
    line = str(e.value)
    assert "\n" not in line and "unknown kernel `no_such_kernel`" in line and "op add.out" in line
    assert "threshold" in line  # the known ones named

    facts = types.SimpleNamespace(kernel_compositions={"add.out": {"kernel": "no_such_kernel", "proven": ["2.13"]}})
    monkeypatch.setattr(scalars, "load", lambda: facts)
    route = Composition("composition", 0, "", False)
    q = types.SimpleNamespace(op=types.SimpleNamespace(name="add.out"))
    with pytest.raises(ShimgenError, match="unknown kernel `no_such_kernel`"):
        route.variant_at(q)  # type: ignore[arg-type]
    assert route.variant_at(types.SimpleNamespace(op=types.SimpleNamespace(name="sub.out"))) is None  # type: ignore
