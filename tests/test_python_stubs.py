"""The typed Python mirror (DIR/python/torch_stable_ops): black-clean, mypy --strict clean, true to the aten
schemas, version-guarded, and returning what torch.ops.aten returns.

Each op set is generated once per module (module-scoped fixtures); mypy runs once per set, with its cache in the
test build cache (tests/cxx.py: `mypy` in ~/.cache/shimgen/test-builds, which a fresh clone reuses too; else
pytest's cache folder, .pytest_cache/d/shimgen-mypy), so only the first run pays for analysing torch.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import keyword
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import black
import pytest
import torch

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import py as emit_py
from shimgen.generate import pipeline, plan
from shimgen.generate.signatures import cpp as sig_cpp
from tests import cxx

TYPED_USAGE = Path(__file__).parent / "typed_usage"
SMALL = ["add", "pad", "amax"]
OVERLOADS = ["sum", "std"]  # C++ overload sets: sum (sum.default, sum.dim_IntList), std, std_out
SETS: dict[str, list[str] | None] = {"small": SMALL, "default": None, "overloads": OVERLOADS}


@dataclass
class Generated:
    name: str
    root: Path  # the shimgen output folder
    module: ModuleType  # the generated __init__.py, imported under a name of its own

    @property
    def python(self) -> Path:
        return self.root / "python"

    @property
    def package(self) -> Path:
        return self.python / emit_py.PACKAGE


def _generate(name: str, ops: list[str] | None, root: Path) -> Generated:
    files = emit_py.emit(resolve(plan.make(ops)))
    pipeline.write(str(root), files)
    init = root / emit_py.MODULE
    spec = importlib.util.spec_from_file_location(f"torch_stable_ops_{name}", init)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Generated(name, root, module)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return _generate("small", SMALL, tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return _generate("default", None, tmp_path_factory.mktemp("default"))


@pytest.fixture(scope="module")
def overloads(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return _generate("overloads", OVERLOADS, tmp_path_factory.mktemp("overloads"))


@pytest.fixture(scope="module", params=list(SETS))
def generated(request: pytest.FixtureRequest) -> Generated:
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def mypy_cache(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = cxx.cache_root()
    if root is not None:
        os.makedirs(os.path.join(root, "mypy"), exist_ok=True)
        return Path(root) / "mypy"
    cache = getattr(pytestconfig, "cache", None)
    return cache.mkdir("shimgen-mypy") if cache is not None else tmp_path_factory.mktemp("mypy-cache")


def _mypy(gen: Generated, cache: Path, extra: list[Path]) -> tuple[int, str]:
    """mypy --strict over the stub, the module itself (a copy under another name: mypy would otherwise see
    the stub only) and `extra` files that import torch_stable_ops (resolved to the stub)."""
    impl = gen.root / "mypy-impl" / f"{emit_py.PACKAGE}_impl.py"
    impl.parent.mkdir(exist_ok=True)
    shutil.copy(gen.package / "__init__.py", impl)
    env = {**os.environ, "MYPYPATH": str(gen.python)}
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), "--no-color-output",
           "--hide-error-context", "--show-error-codes", str(gen.package / "__init__.pyi"), str(impl),
           *map(str, extra)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=gen.root)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def mypy_small(small: Generated, mypy_cache: Path) -> tuple[int, str]:
    return _mypy(small, mypy_cache, [TYPED_USAGE / "ok_usage.py", TYPED_USAGE / "bad_usage.py"])


@pytest.fixture(scope="module", params=["default", "overloads"])
def mypy_other(request: pytest.FixtureRequest, mypy_cache: Path) -> tuple[int, str]:
    return _mypy(request.getfixturevalue(request.param), mypy_cache, [])


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if ": error:" in line]


# ---- files, formatting, determinism -------------------------------------------------------------------------


def test_every_run_writes_the_package(tmp_path: Path) -> None:
    files, _ = pipeline.generate(SMALL, None, None)
    for rel in (emit_py.MODULE, emit_py.STUB, emit_py.MARKER):
        assert rel in files
        assert rel.startswith("python/torch_stable_ops/")
    assert files[emit_py.MARKER].strip()  # not empty: `shimgen --check` then notices a missing marker


def test_black_clean(generated: Generated) -> None:
    py = (generated.package / "__init__.py").read_text()
    pyi = (generated.package / "__init__.pyi").read_text()
    assert black.format_str(py, mode=black.Mode()) == py
    assert black.format_str(pyi, mode=black.Mode(is_pyi=True)) == pyi


def test_deterministic(generated: Generated) -> None:
    again = emit_py.emit(resolve(plan.make(SETS[generated.name])))
    for rel, text in again.items():
        assert (generated.root / rel).read_text() == text, rel


def test_names_are_the_cpp_names(generated: Generated) -> None:
    """One public function per C++ wrapper name (overloads share one): ATen's names, never renamed."""
    ws, _ = sig_cpp.wrappers(plan.make(SETS[generated.name]))
    assert generated.module.__all__ == ["VERSIONS", *sorted({w.name for w in ws})]
    assert generated.module.VERSIONS == {w.op.name: str(w.since) for w in ws}
    if generated.name == "overloads":
        assert {"std", "std_out", "sum", "sum_out"} <= set(generated.module.__all__)
        assert not {"std_default", "std_dim", "std_out_out"} & set(generated.module.__all__)


def test_stub_declares_the_module_signatures(generated: Generated) -> None:
    """The .pyi's public functions are the module's: same overloads, same signatures, same __all__."""

    def public(path: Path) -> tuple[dict[str, list[str]], list[str]]:
        tree = ast.parse(path.read_text())
        sigs: dict[str, list[str]] = {}
        overloaded: set[str] = set()
        names: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if any(ast.unparse(d) == "overload" for d in node.decorator_list):
                    overloaded.add(node.name)
                elif node.name in overloaded:
                    continue  # the implementation of an overload set: `(*args, **kwargs)`, not declared
                returns = ast.unparse(node.returns) if node.returns else None
                sigs.setdefault(node.name, []).append(f"({ast.unparse(node.args)}) -> {returns}")
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
                names = list(ast.literal_eval(node.value))
        return sigs, names

    py_sigs, py_all = public(generated.package / "__init__.py")
    pyi_sigs, pyi_all = public(generated.package / "__init__.pyi")
    assert py_sigs == pyi_sigs
    assert py_all == pyi_all == ["VERSIONS", *sorted(pyi_sigs)]


# ---- mypy -----------------------------------------------------------------------------------------------------


def test_mypy_strict_clean_small(mypy_small: tuple[int, str]) -> None:
    _, output = mypy_small
    unexpected = [e for e in _errors(output) if "bad_usage.py" not in e]
    assert not unexpected, output


def test_mypy_strict_clean(mypy_other: tuple[int, str]) -> None:
    rc, output = mypy_other
    assert rc == 0 and not _errors(output), output


def test_mypy_rejects_wrong_calls(mypy_small: tuple[int, str]) -> None:
    rc, output = mypy_small
    assert rc != 0, output
    lines = (TYPED_USAGE / "bad_usage.py").read_text().splitlines()
    marks = [(n, re.search(r"  # expect-error: ([a-z][a-z-]*)$", line)) for n, line in enumerate(lines, 1)]
    expected = {n: m.group(1) for n, m in marks if m}
    assert len(expected) >= 5
    got: dict[int, set[str]] = {}
    for e in _errors(output):
        m = re.match(r".*bad_usage\.py:(\d+): error: .*\[([\w-]+)\]$", e)
        if m:
            got.setdefault(int(m.group(1)), set()).add(m.group(2))
    for n, code in expected.items():
        assert code in got.get(n, set()), f"bad_usage.py:{n}: expected a [{code}] error:\n{output}"
    assert set(got) == set(expected), f"errors on unmarked lines:\n{output}"
    assert re.search(r'bad_usage\.py:\d+: error: Argument 1 to "pad" has incompatible type "str"; expected "Tensor"',
                     output)  # fmt: skip


# ---- schema conformance ---------------------------------------------------------------------------------------


def _functions(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """Every function that calls one aten overload, by overload (`add.Tensor`), found by its docstring."""
    found = {}
    for value in vars(module).values():
        doc = getattr(value, "__doc__", None) or ""
        if inspect.isfunction(value) and doc.startswith("aten::"):
            op = doc[len("aten::") :].split("(")[0]
            found[op if "." in op else op + ".default"] = value
    return found


def _aten(op: str) -> Any:
    name, overload = op.split(".")
    return getattr(getattr(torch.ops.aten, name), overload)


_ENUM_DEFAULTS = {"torch.contiguous_format": 0, "torch.int64": 4}  # as torch's schema reports them


def test_signatures_follow_the_aten_schema(generated: Generated) -> None:
    fns = _functions(generated.module)
    assert sorted(fns) == sorted(generated.module.VERSIONS)
    for op, fn in fns.items():
        schema = _aten(op)._schema
        params = list(inspect.signature(fn).parameters.values())
        want = [a.name + "_" if keyword.iskeyword(a.name) else a.name for a in schema.arguments]  # `from_`
        assert [p.name for p in params] == want, op
        for p, a in zip(params, schema.arguments):
            kind = inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            assert p.kind == kind, (op, p.name)
            if a.is_out:
                assert p.default is inspect.Parameter.empty, (op, p.name)
            elif a.has_default_value():
                got = p.default
                if isinstance(got, (torch.memory_format, torch.dtype)):
                    got = _ENUM_DEFAULTS[str(got)]
                if isinstance(a.default_value, list) and not isinstance(got, list):
                    got = [got] * len(a.default_value)  # `int[2] stride=1`
                assert got == a.default_value, (op, p.name, got, a.default_value)
            elif p.default is not inspect.Parameter.empty:  # synthesized: an optional the C++ lets callers omit
                assert p.default is None and str(a.type).startswith("Optional"), (op, p.name)


def test_docstrings_and_versions(small: Generated) -> None:
    mod = small.module
    assert mod.VERSIONS == {
        "add.Scalar": "2.10",  # add.Tensor's equivalent route (libtorch's subtract.Tensor shim) from 2.10
        "add.Tensor": "2.10",
        "add.out": "2.10",  # the out= composition over add.Tensor (its equivalent route from 2.10)
        "amax.default": "2.9",
        "amax.out": "2.10",
        "pad.default": "2.9",
        "subtract.Tensor": "2.10",  # generated with add.Tensor, whose equivalent route calls its shim
    }
    schemas = {op.name: f"aten::{op.schema}" for op in plan.make(SMALL).ops}
    fns = _functions(mod)
    assert sorted(fns) == sorted(schemas)
    for op, fn in fns.items():
        doc = fn.__doc__ or ""
        assert doc.splitlines()[0] == schemas[op], op
        assert f"Minimum compatible version: PyTorch {mod.VERSIONS[op]}." in doc, op
    assert "aten::add.Scalar" in (mod.add.__doc__ or "") and "aten::add.Tensor" in (mod.add.__doc__ or "")


# ---- versions ---------------------------------------------------------------------------------------------------


def test_parse_version(small: Generated) -> None:
    parse = small.module._parse_version
    assert parse("2.13.0+cpu") == (2, 13)
    assert parse("2.10.0a0+git1234567") == (2, 10)
    assert parse("3.0") == (3, 0)
    assert small.module._RUNNING == parse(torch.__version__)


def test_too_new_raises_a_clear_error(small: Generated, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = small.module
    x = torch.ones(2, 3)
    monkeypatch.setattr(mod, "_RUNNING", (2, 9))
    assert torch.equal(mod.amax(x), torch.ops.aten.amax.default(x))  # 2.9: fine on 2.9
    with pytest.raises(RuntimeError) as e:
        mod.add(x, x)
    text = str(e.value)
    for part in ("torch_stable_ops.add()", "aten::add.Tensor", "PyTorch 2.10 or newer", "running torch is 2.9"):
        assert part in text, text
    with pytest.raises(RuntimeError, match=r"aten::add\.Scalar"):  # the overload picked for a Scalar `other`
        mod.add(x, 2)
    monkeypatch.setattr(mod, "_RUNNING", (2, 9))
    with pytest.raises(RuntimeError, match=r"torch_stable_ops\.amax_out\(\) calls aten::amax\.out, which needs "
                       r"PyTorch 2\.10 or newer; the running torch is 2\.9"):  # fmt: skip
        mod.amax_out(x, out=torch.empty(3))
    monkeypatch.setattr(mod, "_RUNNING", (2, 8))
    with pytest.raises(RuntimeError, match=r"torch_stable_ops\.pad\(\) calls aten::pad\.default, which needs "
                       r"PyTorch 2\.9"):  # fmt: skip
        mod.pad(x, [1, 1])


def test_overload_dispatch(small: Generated) -> None:
    mod = small.module
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(mod.add(x, x, alpha=2), torch.ops.aten.add.Tensor(x, x, alpha=2))
    assert torch.equal(mod.add(x, 2, 3), torch.ops.aten.add.Scalar(x, 2, 3))
    assert torch.equal(mod.add(self=x, other=1.5), torch.ops.aten.add.Scalar(x, 1.5))
    with pytest.raises(TypeError, match=r"torch_stable_ops\.add\(\): no overload accepts these arguments"):
        mod.add(x, "2")
    with pytest.raises(TypeError, match="no overload"):
        mod.add(x, x, 2)  # add.Tensor's alpha is keyword-only, add.Scalar's `other` is not a Tensor


# ---- same results as torch.ops.aten ----------------------------------------------------------------------------

Sample = Callable[[torch.Generator], tuple[tuple[Any, ...], dict[str, Any]]]


def _t(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


# One call per aten overload of both op sets: (args, kwargs) built from a seeded generator.
SAMPLES: dict[str, Sample] = {
    "add.Tensor": lambda g: ((_t(g, 2, 3), _t(g, 2, 3)), {"alpha": 2}),
    "add.Scalar": lambda g: ((_t(g, 2, 3), 3.5, 2), {}),
    "add.out": lambda g: ((_t(g, 2, 3), _t(g, 1, 3)), {"alpha": 0.5, "out": torch.empty(2, 3)}),
    "amax.default": lambda g: ((_t(g, 2, 3, 4), [0, 2], True), {}),
    "amax.out": lambda g: ((_t(g, 2, 3), 1), {"out": torch.empty(2)}),
    "pad.default": lambda g: ((_t(g, 1, 2, 3), [1, 2]), {"value": 0.5}),
    "clone.default": lambda g: ((_t(g, 2, 3).t(),), {"memory_format": torch.contiguous_format}),
    "contiguous.default": lambda g: ((_t(g, 2, 3).t(),), {}),
    "copy_.default": lambda g: ((torch.zeros(2, 3), _t(g, 2, 3)), {}),
    "empty.memory_format": lambda g: (([2, 3],), {"dtype": torch.float64}),
    "empty_like.default": lambda g: ((_t(g, 2, 3),), {"dtype": torch.int32}),
    "fill_.Scalar": lambda g: ((_t(g, 2, 3), 2.5), {}),
    "fill_.Tensor": lambda g: ((_t(g, 2, 3), torch.tensor(7)), {}),
    "flatten.using_ints": lambda g: ((_t(g, 2, 3, 4), 1), {}),
    "full.default": lambda g: (([2, 3], 1.5), {"dtype": torch.float64}),
    "matmul.default": lambda g: ((_t(g, 2, 3), _t(g, 3, 4)), {}),
    "narrow.default": lambda g: ((_t(g, 3, 4), 1, 1, 2), {}),
    "new_empty.default": lambda g: ((_t(g, 2, 3), [4]), {"dtype": torch.int64}),
    "new_zeros.default": lambda g: ((_t(g, 2, 3), [2, 2]), {"dtype": torch.int64}),
    "reshape.default": lambda g: ((_t(g, 3, 4), [4, 3]), {}),
    "select.int": lambda g: ((_t(g, 3, 4), 0, 1), {}),
    "squeeze.dim": lambda g: ((_t(g, 3, 1, 4), 1), {}),
    "subtract.Tensor": lambda g: ((_t(g, 2, 3), _t(g, 2, 3)), {"alpha": 0.5}),
    "sum.IntList_out": lambda g: ((_t(g, 2, 3), [1]), {"out": torch.empty(2)}),
    "sum.dim_IntList": lambda g: ((_t(g, 2, 3), [0], True), {"dtype": torch.float64}),
    "to.dtype_layout": lambda g: ((_t(g, 2, 3),), {"dtype": torch.float64}),
    "transpose.int": lambda g: ((_t(g, 2, 3), 0, 1), {}),
    "unsqueeze.default": lambda g: ((_t(g, 2, 3), 1), {}),
    "view.default": lambda g: ((_t(g, 2, 3), [3, 2]), {}),
    "zero_.default": lambda g: ((_t(g, 2, 3),), {}),
    "sum.default": lambda g: ((_t(g, 2, 3),), {"dtype": torch.float64}),
    "std.correction": lambda g: ((_t(g, 2, 5), [1]), {"correction": 0}),
    "std.correction_out": lambda g: ((_t(g, 2, 5), [1]), {"correction": 2, "out": torch.empty(2)}),
    "std.default": lambda g: ((_t(g, 2, 5), False), {}),
    "std.dim": lambda g: ((_t(g, 2, 5), [0], True, True), {}),
    "std.out": lambda g: ((_t(g, 2, 5), [1]), {"out": torch.empty(2)}),
}
# Calls relying on defaults, the synthesized `dim=None` included: torch.ops.aten gets the schema's values.
# (Where sum is an overload set, sum(x) is sum.default: the same values.)
DEFAULTED: dict[str, tuple[Sample, Sample]] = {
    "sum.dim_IntList": (lambda g: ((_t(g, 2, 3),), {}), lambda g: ((_t(g, 2, 3), None), {})),
    "std.correction": (lambda g: ((_t(g, 2, 5),), {}), lambda g: ((_t(g, 2, 5),), {})),
    "amax.default": (lambda g: ((_t(g, 2, 3),), {}), lambda g: ((_t(g, 2, 3),), {})),
    "pad.default": (lambda g: ((_t(g, 2, 3), [1, 1]), {}), lambda g: ((_t(g, 2, 3), [1, 1], "constant"), {})),
}
UNINITIALIZED = {"empty.memory_format", "empty_like.default", "new_empty.default"}


def _same(got: Any, want: Any, values: bool, where: str) -> None:
    assert type(got) is type(want) or (isinstance(got, tuple) and isinstance(want, tuple)), where
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for a, b in zip(got, want):
            _same(a, b, values, where)
    elif isinstance(want, torch.Tensor):
        assert got.shape == want.shape and got.dtype == want.dtype and got.device == want.device, where
        if values:
            assert torch.equal(got, want), where
    else:
        assert got == want, where


def _check(gen: Generated, op: str, sample: Sample, reference: Sample) -> None:
    fn = getattr(gen.module, _public_name(gen, op))
    args, kwargs = sample(torch.Generator().manual_seed(0))
    ref_args, ref_kwargs = reference(torch.Generator().manual_seed(0))
    got = fn(*args, **kwargs)
    want = _aten(op)(*ref_args, **ref_kwargs)
    _same(got, want, op not in UNINITIALIZED, op)
    name = op.split(".")[0]
    if "out" in kwargs:  # out= returns the caller's out tensor, written
        assert got is kwargs["out"], op
        assert torch.equal(kwargs["out"], ref_kwargs["out"]), op
    elif name.endswith("_") and not name.startswith("__"):  # in-place returns self, written
        assert got is args[0], op
        assert torch.equal(args[0], ref_args[0]), op


def _public_name(gen: Generated, op: str) -> str:
    """The public function that reaches `op`: the module's own name for it (from its docstring)."""
    for name in gen.module.__all__:
        if f"aten::{op.removesuffix('.default')}(" in (getattr(gen.module, name).__doc__ or ""):
            return str(name)
    raise AssertionError(f"no public function documents {op}")


def test_same_results_as_aten(generated: Generated) -> None:
    ops = sorted(generated.module.VERSIONS)
    missing = [op for op in ops if op not in SAMPLES]
    assert not missing, f"add samples for {missing}"
    for op in ops:
        _check(generated, op, SAMPLES[op], SAMPLES[op])
        if op in DEFAULTED:
            _check(generated, op, *DEFAULTED[op])


def test_overload_dispatch_follows_the_cpp_overloads(overloads: Generated, monkeypatch: pytest.MonkeyPatch) -> None:
    """sum.default (2.9) and sum.dim_IntList (2.10) share `sum`: at 2.9 only the first may be picked."""
    mod = overloads.module
    x = torch.arange(6.0).reshape(2, 3)
    monkeypatch.setattr(mod, "_RUNNING", (2, 9))
    assert torch.equal(mod.sum(x), torch.ops.aten.sum.default(x))
    assert mod.sum(x, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(RuntimeError, match=r"torch_stable_ops\.sum\(\) calls aten::sum\.dim_IntList"):
        mod.sum(x, [0])
    with pytest.raises(RuntimeError, match=r"aten::sum\.dim_IntList"):
        mod.sum(x, None, True)  # dim has no default in this overload set (as in the C++), but takes None
    with pytest.raises(RuntimeError, match=r"torch_stable_ops\.std\(\) calls aten::std\.dim"):
        mod.std(x, [0], True, True)  # std.correction takes correction and keepdim by keyword only
    monkeypatch.setattr(mod, "_RUNNING", (2, 13))
    assert torch.equal(mod.std(x, False), torch.ops.aten.std.default(x, False))  # bool unbiased, as in C++
    assert torch.equal(mod.std(x, 0), torch.ops.aten.std.correction(x, [0]))  # an int is a dim
