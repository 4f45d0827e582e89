"""The functional _foreach_ ops that take a number (`_foreach_add.List`, `_foreach_mul.Scalar`, `_foreach_norm.Scalar`,
...) at target 2.10 in the default build (kernel `foreach`): no released boxed dispatcher carries their Scalar and a
Tensor[] result has no C shim, so the wrapper computes them as aten's CPU kernel (its slow path) does, the
functional op on each element in order, its results collected. One extension built at target 2.10 is compared with
aten bit for bit, gradients included, on the installed torch and on 2.10.0, 2.14.1 and 2.15.0 where their venvs are
found. A tensor on another device is refused by name: aten's CUDA foreach kernels are fused multi-tensor ones, which
the composition is not proven equal to (no GPU here).

Left out, each for a reason its kernel's docstring or this test names: `_foreach_add.Tensor` (aten's own backward
raises "inconsistent range for TensorList output" once its 0-dim `other` requires grad, where the composition's
would compute), `_foreach_maximum`/`_foreach_minimum` with a number (aten's derivative halves the gradient at a
tie)."""

from __future__ import annotations

import subprocess

import pytest

from shimgen.facts import scalar_facts as scalars
from shimgen.generate import pipeline
from shimgen.generate.routes import kernels
from tests.cxx import build_so

TARGET_2_10 = "0x020a000000000000"
NAMES = ["add", "sub", "mul", "div", "addcdiv", "addcmul", "clamp_max", "clamp_min", "lerp", "pow"]
ROWS = sorted([f"_foreach_{n}.{o}" for n in NAMES for o in ("Scalar", "ScalarList")]
              + ["_foreach_add.List", "_foreach_sub.List", "_foreach_pow.ScalarAndTensor", "_foreach_norm.Scalar"])
IN_PLACE = ["_foreach_mul_.Scalar", "_foreach_add_.List", "_foreach_add_.ScalarList"]

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
using Tensors = std::vector<Tensor>;
using Numbers = std::vector<double>;
namespace ts = torch::stable;

Tensors k_add_list(Tensors a, Tensors b, double alpha) { return ts::_foreach_add(a, b, alpha); }
Tensors k_sub_list(Tensors a, Tensors b, double alpha) { return ts::_foreach_sub(a, b, alpha); }
#define SCALARS(NAME)                                                                \
  Tensors k_##NAME##_scalar(Tensors a, double s) { return ts::_foreach_##NAME(a, s); } \
  Tensors k_##NAME##_scalars(Tensors a, Numbers s) { return ts::_foreach_##NAME(a, s); }
SCALARS(add)
SCALARS(sub)
SCALARS(mul)
SCALARS(div)
SCALARS(clamp_max)
SCALARS(clamp_min)
SCALARS(pow)
Tensors k_addcdiv_scalar(Tensors a, Tensors b, Tensors c, double v) { return ts::_foreach_addcdiv(a, b, c, v); }
Tensors k_addcdiv_scalars(Tensors a, Tensors b, Tensors c, Numbers v) { return ts::_foreach_addcdiv(a, b, c, v); }
Tensors k_addcmul_scalar(Tensors a, Tensors b, Tensors c, double v) { return ts::_foreach_addcmul(a, b, c, v); }
Tensors k_addcmul_scalars(Tensors a, Tensors b, Tensors c, Numbers v) { return ts::_foreach_addcmul(a, b, c, v); }
Tensors k_lerp_scalar(Tensors a, Tensors b, double w) { return ts::_foreach_lerp(a, b, w); }
Tensors k_lerp_scalars(Tensors a, Tensors b, Numbers w) { return ts::_foreach_lerp(a, b, w); }
Tensors k_pow_scalar_tensor(double s, Tensors e) { return ts::_foreach_pow(s, e); }
// an optimizer's step, as authors write it: a plain number where ATen takes a Scalar, a braced list for a Scalar[]
void k_step_(Tensors p, Tensors g, double lr) {
  ts::_foreach_mul_(p, 0.9);
  ts::_foreach_add_(p, g, -lr);
  ts::_foreach_add_(p, {0.5, 0.25});
}
Tensors k_norm(Tensors a) { return ts::_foreach_norm(a); }
Tensors k_norm_ord(Tensors a, double ord) { return ts::_foreach_norm(a, ord); }

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("add_list(Tensor[] a, Tensor[] b, float alpha) -> Tensor[]");
  m.def("sub_list(Tensor[] a, Tensor[] b, float alpha) -> Tensor[]");
  for (const char* name : {"add", "sub", "mul", "div", "clamp_max", "clamp_min", "pow"}) {
    m.def((std::string(name) + "_scalar(Tensor[] a, float s) -> Tensor[]").c_str());
    m.def((std::string(name) + "_scalars(Tensor[] a, float[] s) -> Tensor[]").c_str());
  }
  m.def("addcdiv_scalar(Tensor[] a, Tensor[] b, Tensor[] c, float v) -> Tensor[]");
  m.def("addcdiv_scalars(Tensor[] a, Tensor[] b, Tensor[] c, float[] v) -> Tensor[]");
  m.def("addcmul_scalar(Tensor[] a, Tensor[] b, Tensor[] c, float v) -> Tensor[]");
  m.def("addcmul_scalars(Tensor[] a, Tensor[] b, Tensor[] c, float[] v) -> Tensor[]");
  m.def("lerp_scalar(Tensor[] a, Tensor[] b, float w) -> Tensor[]");
  m.def("lerp_scalars(Tensor[] a, Tensor[] b, float[] w) -> Tensor[]");
  m.def("pow_scalar_tensor(float s, Tensor[] e) -> Tensor[]");
  m.def("norm(Tensor[] a) -> Tensor[]");
  m.def("norm_ord(Tensor[] a, float ord) -> Tensor[]");
  m.def("step_(Tensor(a!)[] p, Tensor[] g, float lr) -> ()");
}

#define IMPL_SCALARS(NAME)                                   \
  m.impl(#NAME "_scalar", TORCH_BOX(&k_##NAME##_scalar));    \
  m.impl(#NAME "_scalars", TORCH_BOX(&k_##NAME##_scalars));

STABLE_TORCH_LIBRARY_IMPL(NS, CompositeImplicitAutograd, m) {
  m.impl("add_list", TORCH_BOX(&k_add_list));
  m.impl("sub_list", TORCH_BOX(&k_sub_list));
  IMPL_SCALARS(add)
  IMPL_SCALARS(sub)
  IMPL_SCALARS(mul)
  IMPL_SCALARS(div)
  IMPL_SCALARS(clamp_max)
  IMPL_SCALARS(clamp_min)
  IMPL_SCALARS(pow)
  IMPL_SCALARS(addcdiv)
  IMPL_SCALARS(addcmul)
  IMPL_SCALARS(lerp)
  m.impl("pow_scalar_tensor", TORCH_BOX(&k_pow_scalar_tensor));
  m.impl("norm", TORCH_BOX(&k_norm));
  m.impl("norm_ord", TORCH_BOX(&k_norm_ord));
  m.impl("step_", TORCH_BOX(&k_step_));
}
"""


def test_the_rows_name_the_foreach_kernel_and_are_proven() -> None:
    facts = scalars.load().kernel_compositions
    entry = kernels.get("foreach")
    for op in ROWS:
        row = facts.get(op)
        assert row is not None, f"{op}: no proven kernel_compositions row"
        assert kernels.get(row["kernel"], op) is entry
        assert {"2.10.0", "2.13.0", "2.14.1", "2.15.0"} <= set(row["proven"]), op
    assert "_foreach_add.Tensor" not in facts and "_foreach_maximum.Scalar" not in facts


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("foreach")
    files, _ = pipeline.generate(ROWS + IN_PLACE, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "foreach.cpp"
    src.write_text(CALLS.replace("NS", "foreach_functional"))
    lib = str(root / "foreach.so")
    build_so(str(src), lib, str(root / "gen"), [f"TORCH_TARGET_VERSION={TARGET_2_10}"])
    return lib


# Run by each runtime's interpreter: every op bit-equal to aten's (values, dtypes, shapes) over mixed-dtype lists,
# float64 gradients equal to aten's, aten's errors kept (an empty list, lists of different lengths).
ON_RUNTIME = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.foreach_functional
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])

def same(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        assert torch.equal(x.view(-1).view(torch.uint8) if x.numel() else x,
                           y.view(-1).view(torch.uint8) if y.numel() else y), (x, y)

def check(mine, theirs):  # aten's result, bit for bit, or aten's own error where aten raises
    try:
        want = theirs()
    except RuntimeError as e:
        try:
            raises(mine, str(e).splitlines()[0])
        except AssertionError:  # before 2.13 a failing C shim's message is on stderr only, and the error says so
            assert release < (2, 13)
            raises(mine, "(libtorch logged the reason on stderr)")
        return
    same(mine(), want)

def raises(call, text):
    try:
        call()
    except RuntimeError as e:
        assert text in str(e), e
        return
    raise AssertionError("no error")

def lists(dtypes, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for i, d in enumerate(dtypes):
        t = torch.randn((3, 4) if i % 2 == 0 else (5,), generator=g, dtype=torch.float64) * 3
        t.view(-1)[:2] = torch.tensor([float("nan"), -0.0])
        out.append(t.abs().to(d) if d.is_floating_point else (t * 4).to(d))
    return out

computed, refused = [], []
for dtypes in ([torch.float32], [torch.float32, torch.float64], [torch.bfloat16, torch.float16], [torch.int64]):
    a, b, c = lists(dtypes, 0), lists(dtypes, 1), lists(dtypes, 2)
    c = [x + 1 for x in c]  # addcdiv's divisor
    for alpha in (1.0, 0.5, -2.0):
        check(lambda: ops.add_list(a, b, alpha), lambda: torch._foreach_add(a, b, alpha=alpha))
        if dtypes != [torch.int64]:
            check(lambda: ops.sub_list(a, b, alpha), lambda: torch._foreach_sub(a, b, alpha=alpha))
    for n in (0.5, 2.0, -1.5, 3.0):
        ns = [n + i for i in range(len(a))]
        for name in ("add", "sub", "mul", "div", "clamp_max", "clamp_min", "pow"):
            if name == "pow":  # pow's own wrapper refuses by value, named, an exponent it has not proven
                for mine, theirs in ((lambda: ops.pow_scalar(a, n), lambda: torch._foreach_pow(a, n)),
                                     (lambda: ops.pow_scalars(a, [n] * len(a)),
                                      lambda: torch._foreach_pow(a, [n] * len(a)))):
                    try:
                        got = mine()
                    except RuntimeError as e:
                        assert "shimgen: pow.Tensor_Scalar: exponent=" in str(e), e
                        refused.append((dtypes, n))
                        continue
                    same(got, theirs())
                    computed.append((dtypes, n))
                continue
            check(lambda: getattr(ops, name + "_scalar")(a, n), lambda: getattr(torch, "_foreach_" + name)(a, n))
            check(lambda: getattr(ops, name + "_scalars")(a, ns), lambda: getattr(torch, "_foreach_" + name)(a, ns))
        if dtypes != [torch.int64]:
            check(lambda: ops.addcdiv_scalar(a, b, c, n), lambda: torch._foreach_addcdiv(a, b, c, n))
            check(lambda: ops.addcdiv_scalars(a, b, c, ns), lambda: torch._foreach_addcdiv(a, b, c, ns))
            check(lambda: ops.lerp_scalar(a, b, n), lambda: torch._foreach_lerp(a, b, n))
            check(lambda: ops.lerp_scalars(a, b, ns), lambda: torch._foreach_lerp(a, b, ns))
        check(lambda: ops.addcmul_scalar(a, b, c, n), lambda: torch._foreach_addcmul(a, b, c, n))
        check(lambda: ops.addcmul_scalars(a, b, c, ns), lambda: torch._foreach_addcmul(a, b, c, ns))
        check(lambda: ops.pow_scalar_tensor(n, a), lambda: torch._foreach_pow(n, a))
    if dtypes != [torch.int64]:
        check(lambda: ops.norm(a), lambda: torch._foreach_norm(a))
        check(lambda: ops.norm_ord(a, 2.0), lambda: torch._foreach_norm(a, 2.0))
        if set(dtypes) <= {torch.float32, torch.float64}:  # linalg_vector_norm's CPU kernel, float and double
            check(lambda: ops.norm_ord(a, 1.0), lambda: torch._foreach_norm(a, 1.0))

p, g = lists([torch.float32, torch.float64], 7), lists([torch.float32, torch.float64], 8)
want = [t.clone() for t in p]
torch._foreach_mul_(want, 0.9)
torch._foreach_add_(want, g, alpha=-0.01)
torch._foreach_add_(want, [0.5, 0.25])
ops.step_(p, g, 0.01)
same(p, want)
# pow's own wrapper: a floating tensor's every exponent (kernel cpu_number), an integer one's float exponent refused
assert ([torch.float32], -1.5) in computed and ([torch.int64], -1.5) in refused, (computed, refused)

# errors: aten's own checks come first, and a number only aten's own norm computes is named
raises(lambda: ops.add_scalar([], 1.0), "at least one tensor")
raises(lambda: torch._foreach_add([], 1.0), "at least one tensor")
a = lists([torch.float32, torch.float32], 3)
raises(lambda: ops.add_list(a, a[:1], 1.0), "as many elements")
same(ops.norm_ord(a, 3.0), torch._foreach_norm(a, 3.0))  # another ord: linalg_vector_norm's CPU kernel replicated
h = [t.half() for t in a]
same(ops.norm_ord(h, 3.0), torch._foreach_norm(h, 3.0))  # half too (accumulated in float)
raises(lambda: ops.norm_ord([t.to(torch.complex64) for t in a], 3.0), "shimgen:")
# another device (meta here; CUDA alike): aten's CUDA foreach kernels are fused ones, not proven equal
m = [torch.empty(3, device="meta")]
raises(lambda: ops.add_scalar(m, 1.0), "shimgen: _foreach_add.Scalar: a tensor is not on the CPU")
raises(lambda: ops.step_(m, m, 0.01), "shimgen: _foreach_mul_.Scalar: a tensor is not on the CPU")

# gradients: float64 leaves through the composition equal aten's
def grads(call, n):
    a = [t.requires_grad_() for t in lists([torch.float64, torch.float64], 4)]
    b = [t.abs().add(1).requires_grad_() for t in lists([torch.float64, torch.float64], 5)]
    c = [t.abs().add(1).requires_grad_() for t in lists([torch.float64, torch.float64], 6)]
    out = call(a, b, c, n)
    sum((t * torch.arange(t.numel(), dtype=t.dtype).view(t.shape)).nansum() for t in out).backward()
    return [x.grad if x.grad is not None else torch.zeros_like(x) for x in a + b + c]

for n in (0.5, 2.0):
    pairs = [
        (lambda a, b, c, n: ops.add_list(a, b, n), lambda a, b, c, n: torch._foreach_add(a, b, alpha=n)),
        (lambda a, b, c, n: ops.mul_scalar(a, n), lambda a, b, c, n: torch._foreach_mul(a, n)),
        (lambda a, b, c, n: ops.pow_scalars(a, [2.0, 2.0]), lambda a, b, c, n: torch._foreach_pow(a, [2.0, 2.0])),
        (lambda a, b, c, n: ops.lerp_scalars(a, b, [n, -n]), lambda a, b, c, n: torch._foreach_lerp(a, b, [n, -n])),
        (lambda a, b, c, n: ops.pow_scalar_tensor(n, b), lambda a, b, c, n: torch._foreach_pow(n, b)),
        (lambda a, b, c, n: ops.norm(c), lambda a, b, c, n: torch._foreach_norm(c)),
    ]
    for mine, theirs in pairs:
        same(grads(mine, n), grads(theirs, n))
    # addcdiv's own wrapper at 2.10 (its _foreach_ kernel on one-element lists) records no gradient: named
    raises(lambda: grads(lambda a, b, c, n: ops.addcdiv_scalar(a, b, c, n), n), "shimgen: addcdiv.default: an input "
           "requires grad in grad mode")
print("ok")
"""


@pytest.mark.slow
def test_the_extension_needs_libtorch_alone(ext) -> None:
    """Every C function it names is one libtorch 2.10 exports (data/libtorch_exports.json)."""
    from shimgen.facts import libtorch_exports
    from shimgen.facts.versions import Version

    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True, check=True).stdout
    named = {line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith(("aoti_", "torch_"))}
    exported = set().union(*libtorch_exports.load().exported_by(Version(2, 10)).values())
    assert named and named <= exported, sorted(named - exported)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["installed", "2.10.0", "2.14.1", "2.15.0"])
def test_equal_to_aten_on_every_runtime(ext, name) -> None:
    """One target-2.10 binary: every op equal to aten's bit for bit, gradients included, on each runtime."""
    from tests.children import run_on

    proc = run_on(name, ON_RUNTIME, ext)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
