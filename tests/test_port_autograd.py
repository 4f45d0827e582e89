"""`shimgen port --fix` on torch::autograd::Function classes (tests/port_forms/autograd.cpp, written for this test:
three classes with saved_data of a double, an int and a size list, save_for_backward of inputs and of a computed
tensor, mark_non_differentiable, mark_dirty of an optional argument the forward writes into,
any_variable_requires_grad and Variable(), registered through TORCH_LIBRARY's m.def with a kernel and through
torch::RegisterOperators, and kernels without autograd beside them).

The stable ABI has no C++ autograd. The port keeps each class as written over torch/csrc/stable/shimgen/autograd.h's
stand-ins (the using-declarations and the base rewritten), registers three ops of the library for it
(`shimgen::autograd::def<F>` / `impl<F>`, CompositeExplicitAutograd: F, F_forward returning what the context saved,
F_backward reading it), registers the kernels that call F::apply CompositeImplicitAutograd (above autograd, as
ATen's catch-all) with the argument F's forward marks dirty written `Tensor(a!)?` in the schema, leaves the others at
the catch-all's key, writes shimgen_autograd.py (a torch.autograd.Function per class, installed as F's Autograd
kernel) black-clean and names it in the checklist.

The rewrite is checked as text (fast: one scan), then built as a stable library at target 2.10 against libtorch
alone and loaded with the module into the installed torch: values, gradients (gradcheck), a gradient left out where
an input needs none, a backward that runs no forward, an argument written into (marked dirty: in the graph after),
and torch.jit.script through the ops (a call whose result is unused kept: it writes into its argument)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("clang.cindex", reason="shimgen port --fix needs libclang (the `port` extra)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCE = os.path.join(HERE, "port_forms", "autograd.cpp")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    src = tmp_path_factory.mktemp("autograd")
    shutil.copy(SOURCE, src / "autograd.cpp")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = _run([sys.executable, "-m", "shimgen", "port", "autograd.cpp", "--target", "2.10", "--fix", "--toml",
                 "ops.toml"], cwd=src, env=env)
    checklist = [line[len("- [ ] "):] for line in proc.stdout.splitlines() if line.startswith("- [ ] ")]
    return src, (src / "autograd.cpp").read_text(), checklist


def test_the_classes_stay_over_the_stand_ins(ported):
    _, text, _ = ported
    for name in ("AutogradContext", "Variable", "variable_list"):
        assert f"using shimgen::autograd::{name};" in text
    assert not [line for line in text.splitlines() if "torch::autograd" in line and not line.startswith("//")]
    assert "class ScaledMul : public shimgen::autograd::Function<ScaledMul>" in text
    assert "shimgen::autograd::any_variable_requires_grad({w})" in text
    assert "#include <torch/csrc/stable/shimgen/autograd.h>" in text
    assert "ScaledMul::apply(torch::stable::contiguous(x), w, scale)" in text  # apply stays: the stand-in's


def test_forward_and_backward_registered_as_ops(ported):
    _, text, _ = ported
    # TORCH_LIBRARY: the def in the library's block, the impl in a CompositeExplicitAutograd block; the kernel that
    # calls apply above autograd, the one that does not at the catch-all's key
    # (exp_into's optional_out is the argument ExpInto's forward marks dirty: written into)
    assert ('STABLE_TORCH_LIBRARY(autograd_forms, m) {\n  m.def("scaled_mul(Tensor x, Tensor w, float scale) -> '
            'Tensor");\n  m.def("plain_add(Tensor x, Tensor y) -> Tensor");\n  m.def("exp_into(Tensor x, '
            'Tensor(a!)? optional_out) -> Tensor");\n  m.def("exp_forward_calls() -> int");\n  '
            'shimgen::autograd::def<ScaledMul>(m, "autograd_forms::ScaledMul");\n  shimgen::autograd::def<ExpInto>(m, '
            '"autograd_forms::ExpInto");\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeImplicitAutograd, m) {\n  m.impl("scaled_mul", '
            'TORCH_BOX(&scaled_mul));\n  m.impl("exp_into", TORCH_BOX(&exp_into));\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeExplicitAutograd, m) {\n  m.impl("plain_add", '
            'TORCH_BOX(&plain_add));\n  m.impl("exp_forward_calls", TORCH_BOX(&exp_forward_calls));\n  '
            'shimgen::autograd::impl<ScaledMul>(m, "ScaledMul");\n  shimgen::autograd::impl<ExpInto>(m, '
            '"ExpInto");\n}') in text
    # RegisterOperators
    assert ('STABLE_TORCH_LIBRARY_FRAGMENT(autograd_forms, m) {\n  m.def("int_pow(Tensor x, int k) -> Tensor");\n'
            '  shimgen::autograd::def<IntPow>(m, "autograd_forms::IntPow");\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeImplicitAutograd, m) {\n  m.impl("int_pow", '
            'TORCH_BOX(&int_pow));\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeExplicitAutograd, m) {\n  '
            'shimgen::autograd::impl<IntPow>(m, "IntPow");\n}') in text


def test_the_module_and_its_checklist_line(ported):
    src, _, checklist = ported
    assert checklist == ["shimgen_autograd.py: the autograd of autograd_forms::ScaledMul, autograd_forms::ExpInto, "
                         "autograd_forms::IntPow "
                         "(torch::autograd::Function, written by shimgen port --fix): copy it into the Python package "
                         "and import it after the libraries are loaded (torch.ops.load_library)"]
    module = (src / "shimgen_autograd.py").read_text()
    assert 'OPS = ["autograd_forms::ScaledMul", "autograd_forms::ExpInto", "autograd_forms::IntPow"]' in module
    compile(module, "shimgen_autograd.py", "exec")
    import black

    assert black.format_str(module, mode=black.Mode()) == module  # black-clean


_CHECK = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
sys.path.insert(0, sys.argv[2])
import shimgen_autograd  # noqa: F401
from torch.autograd import gradcheck
ops = torch.ops.autograd_forms
x = torch.rand(3, 4, dtype=torch.double, requires_grad=True)
w = torch.rand(3, 4, dtype=torch.double, requires_grad=True)
assert torch.allclose(ops.scaled_mul(x, w, 2.5), x * w * 2.5)
assert gradcheck(lambda a, b: ops.scaled_mul(a, b, 2.5), (x, w))
assert gradcheck(lambda a: ops.int_pow(a, 3), (x,))
assert torch.allclose(ops.int_pow(x, 3), x ** 3)
# w needs no gradient: the class's backward leaves it out (any_variable_requires_grad), x's is right
w2 = w.detach()
ops.scaled_mul(x, w2, 2.0).sum().backward()
assert torch.allclose(x.grad, w2 * 2.0) and w2.grad is None
# no input needs a gradient: no graph
y = ops.scaled_mul(x.detach(), w2, 2.0)
assert not y.requires_grad
assert torch.equal(ops.plain_add(x.detach(), w2), x.detach() + w2)
# TorchScript through the ops
def scripted(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.ops.autograd_forms.scaled_mul(a, b, 3.0)
f = torch.jit.script(scripted)
assert torch.allclose(f(x.detach(), w2), x.detach() * w2 * 3.0)
# a non-differentiable output (mark_non_differentiable)
count = ops.ScaledMul(x, w, 1.0)[1]
assert not count.requires_grad
# the backward reads what the forward saved (a computed output, a size list): the forward runs once
a = torch.rand(2, 3, dtype=torch.double, requires_grad=True)
before = ops.exp_forward_calls()
y = ops.exp_into(a, None)
y.sum().backward()
assert ops.exp_forward_calls() == before + 1, (before, ops.exp_forward_calls())
assert torch.allclose(a.grad, a.detach().exp())
assert gradcheck(lambda t: ops.exp_into(t, None), (a,))
# written into an argument (mark_dirty): the argument holds the result and is the graph's output after
a.grad = None
out = torch.zeros(2, 3, dtype=torch.double)
y = ops.exp_into(a, out)
assert torch.allclose(out, a.detach().exp()) and out.grad_fn is not None
out.sum().backward()
assert torch.allclose(a.grad, a.detach().exp())
# under no_grad and in inference mode (ExpInto's own kernel, no Python)
with torch.inference_mode():
    assert torch.allclose(ops.exp_into(a.detach(), None), a.detach().exp())
# TorchScript keeps a call whose result is unused: its schema says it writes into optional_out
def into(t: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
    torch.ops.autograd_forms.exp_into(t, o)
    return o
g = torch.jit.script(into)
o = torch.zeros(2, 3, dtype=torch.double)
assert torch.allclose(g(a.detach(), o), a.detach().exp())
print("ok")
"""


@pytest.mark.slow
def test_the_port_computes_and_differentiates(ported, tmp_path):
    pytest.importorskip("torch")
    from shimgen.generate import pipeline
    from shimgen.setuptools import stable_flags
    from tests.cxx import CXX, TORCH

    src, _, _ = ported
    line = (src / "ops.toml").read_text().splitlines()[1]
    ops = [o.strip().strip('"') for o in line.split("=", 1)[1].strip().strip("[]").split(",")]
    gen = str(tmp_path / "gen")
    files, _ = pipeline.generate(ops, None, None, gen, only=True)
    pipeline.write(gen, files)
    lib = str(tmp_path / "autograd_forms.so")
    _run([CXX, *TORCH.stable_flags(gen), *stable_flags("2.10")[1:], "-O1", "-shared", "-fPIC",
          str(src / "autograd.cpp"), "-o", lib, *TORCH.link_flags()])
    (tmp_path / "check.py").write_text(_CHECK)  # a file: TorchScript reads the lambda's source
    out = _run([sys.executable, str(tmp_path / "check.py"), lib, str(src)])
    assert out.stdout.strip().endswith("ok"), out.stdout + out.stderr
