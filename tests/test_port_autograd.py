"""`shimgen port --fix` on torch::autograd::Function classes (tests/port_forms/autograd.cpp, written for this test:
two classes with saved_data of a double and an int, save_for_backward, mark_non_differentiable,
any_variable_requires_grad and Variable(), registered through TORCH_LIBRARY's m.def with a kernel and through
torch::RegisterOperators, and a kernel without autograd beside them).

The stable ABI has no C++ autograd. The port keeps each class as written over torch/csrc/stable/shimgen/autograd.h's
stand-ins (the using-declarations and the base rewritten), registers its forward and backward as two ops of the
library (`shimgen::autograd::def<F>` / `impl<F>`, CompositeExplicitAutograd), registers the kernels that call
F::apply CompositeImplicitAutograd (above autograd, as ATen's catch-all), leaves the others at the catch-all's key,
writes shimgen_autograd.py (torch.library.register_autograd of each forward op) and names it in the checklist.

The rewrite is checked as text (fast: one scan), then built as a stable library at target 2.10 against libtorch
alone and loaded with the module into the installed torch: values, gradients (gradcheck), a gradient left out where
an input needs none, and torch.jit.script through the ops."""

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
    assert ('STABLE_TORCH_LIBRARY(autograd_forms, m) {\n  m.def("scaled_mul(Tensor x, Tensor w, float scale) -> '
            'Tensor");\n  m.def("plain_add(Tensor x, Tensor y) -> Tensor");\n  shimgen::autograd::def<ScaledMul>(m, '
            '"autograd_forms::ScaledMul");\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeImplicitAutograd, m) {\n  m.impl("scaled_mul", '
            'TORCH_BOX(&scaled_mul));\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeExplicitAutograd, m) {\n  m.impl("plain_add", '
            'TORCH_BOX(&plain_add));\n  shimgen::autograd::impl<ScaledMul>(m, "ScaledMul");\n}') in text
    # RegisterOperators
    assert ('STABLE_TORCH_LIBRARY_FRAGMENT(autograd_forms, m) {\n  m.def("int_pow(Tensor x, int k) -> Tensor");\n'
            '  shimgen::autograd::def<IntPow>(m, "autograd_forms::IntPow");\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeImplicitAutograd, m) {\n  m.impl("int_pow", '
            'TORCH_BOX(&int_pow));\n}') in text
    assert ('STABLE_TORCH_LIBRARY_IMPL(autograd_forms, CompositeExplicitAutograd, m) {\n  '
            'shimgen::autograd::impl<IntPow>(m, "IntPow");\n}') in text


def test_the_module_and_its_checklist_line(ported):
    src, _, checklist = ported
    assert checklist == ["shimgen_autograd.py: the autograd of autograd_forms::ScaledMul, autograd_forms::IntPow "
                         "(torch::autograd::Function, written by shimgen port --fix): copy it into the Python package "
                         "and import it after the libraries are loaded (torch.ops.load_library)"]
    module = (src / "shimgen_autograd.py").read_text()
    assert "OPS = ['autograd_forms::ScaledMul', 'autograd_forms::IntPow']" in module
    compile(module, "shimgen_autograd.py", "exec")


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
