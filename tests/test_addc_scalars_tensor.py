"""addcmul / addcdiv and their in-place, out= and _foreach_ forms with libtorch alone (kernel `scalars_tensor`,
shimgen/generate/routes/composition.py): the op as aten::_foreach_addcmul.Tensor (_foreach_addcdiv.Tensor) on
one-element lists with `value` packed in a 1-D tensor of its own type, which aten's CPU kernel reads back as the very
Scalar and hands to aten::addcmul itself; in place as _foreach_addcmul_.Tensor; out= and the _foreach_ Scalar forms over
those.

aten's AVX2/AVX512 addcmul kernel contracts `self + value * t1 * t2` into a fused multiply-add, which no sequence of
separately rounded aten calls reproduces for float32/float64: the float32 samples below would catch a composition
of mul and add. Each call is compared bit for bit with aten given what the caller wrote (Adam's own calls among
them); a call autograd records is refused naming the remedy (that _foreach_ overload has no derivative)."""

from __future__ import annotations

import subprocess

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_addcmul(Tensor s, Tensor a, Tensor b, double v) { return ts::addcmul(s, a, b, v); }
Tensor k_addcmul_int(Tensor s, Tensor a, Tensor b, int64_t v) { return ts::addcmul(s, a, b, v); }
Tensor k_addcmul_bool(Tensor s, Tensor a, Tensor b, bool v) { return ts::addcmul(s, a, b, v); }
Tensor k_addcmul_default(Tensor s, Tensor a, Tensor b) { return ts::addcmul(s, a, b); }
Tensor k_addcmul_complex(Tensor s, Tensor a, Tensor b, double re, double im) {
  return ts::addcmul(s, a, b, std::complex<double>(re, im));
}
Tensor k_addcdiv(Tensor s, Tensor a, Tensor b, double v) { return ts::addcdiv(s, a, b, v); }
Tensor k_addcdiv_default(Tensor s, Tensor a, Tensor b) { return ts::addcdiv(s, a, b); }
Tensor k_addcmul_(Tensor s, Tensor a, Tensor b, double v) { return ts::addcmul_(s, a, b, v); }
Tensor k_addcdiv_(Tensor s, Tensor a, Tensor b, double v) { return ts::addcdiv_(s, a, b, v); }
Tensor k_addcmul_out(Tensor s, Tensor a, Tensor b, double v, Tensor out) {
  ts::addcmul_out(out, s, a, b, v);
  return out;
}
Tensor k_addcdiv_out(Tensor s, Tensor a, Tensor b, double v, Tensor out) {
  ts::addcdiv_out(out, s, a, b, v);
  return out;
}
void k_fe_addcmul(Tensor s0, Tensor s1, Tensor a0, Tensor a1, Tensor b0, Tensor b1, double v) {
  std::vector<Tensor> s{s0, s1};
  std::vector<Tensor> a{a0, a1};
  std::vector<Tensor> b{b0, b1};
  ts::_foreach_addcmul_(s, a, b, shimgen::Scalar(v));
}
void k_fe_addcdiv_list(Tensor s0, Tensor s1, Tensor a0, Tensor a1, Tensor b0, Tensor b1, double v) {
  std::vector<Tensor> s{s0, s1};
  std::vector<Tensor> a{a0, a1};
  std::vector<Tensor> b{b0, b1};
  std::vector<double> values{v, -2 * v};
  ts::_foreach_addcdiv_(s, a, b, values);
}

STABLE_TORCH_LIBRARY(NS, m) {
  m.def("addcmul(Tensor s, Tensor a, Tensor b, float v) -> Tensor");
  m.def("addcmul_int(Tensor s, Tensor a, Tensor b, int v) -> Tensor");
  m.def("addcmul_bool(Tensor s, Tensor a, Tensor b, bool v) -> Tensor");
  m.def("addcmul_default(Tensor s, Tensor a, Tensor b) -> Tensor");
  m.def("addcmul_complex(Tensor s, Tensor a, Tensor b, float re, float im) -> Tensor");
  m.def("addcdiv(Tensor s, Tensor a, Tensor b, float v) -> Tensor");
  m.def("addcdiv_default(Tensor s, Tensor a, Tensor b) -> Tensor");
  m.def("addcmul_(Tensor(a!) s, Tensor a, Tensor b, float v) -> Tensor(a!)");
  m.def("addcdiv_(Tensor(a!) s, Tensor a, Tensor b, float v) -> Tensor(a!)");
  m.def("addcmul_out(Tensor s, Tensor a, Tensor b, float v, Tensor(a!) out) -> Tensor(a!)");
  m.def("addcdiv_out(Tensor s, Tensor a, Tensor b, float v, Tensor(a!) out) -> Tensor(a!)");
  m.def("fe_addcmul(Tensor(a!) s0, Tensor(b!) s1, Tensor a0, Tensor a1, Tensor b0, Tensor b1, float v) -> ()");
  m.def("fe_addcdiv_list(Tensor(a!) s0, Tensor(b!) s1, Tensor a0, Tensor a1, Tensor b0, Tensor b1, float v) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(NS, CPU, m) {
  m.impl("addcmul", TORCH_BOX(&k_addcmul));
  m.impl("addcmul_int", TORCH_BOX(&k_addcmul_int));
  m.impl("addcmul_bool", TORCH_BOX(&k_addcmul_bool));
  m.impl("addcmul_default", TORCH_BOX(&k_addcmul_default));
  m.impl("addcmul_complex", TORCH_BOX(&k_addcmul_complex));
  m.impl("addcdiv", TORCH_BOX(&k_addcdiv));
  m.impl("addcdiv_default", TORCH_BOX(&k_addcdiv_default));
  m.impl("addcmul_", TORCH_BOX(&k_addcmul_));
  m.impl("addcdiv_", TORCH_BOX(&k_addcdiv_));
  m.impl("addcmul_out", TORCH_BOX(&k_addcmul_out));
  m.impl("addcdiv_out", TORCH_BOX(&k_addcdiv_out));
  m.impl("fe_addcmul", TORCH_BOX(&k_fe_addcmul));
  m.impl("fe_addcdiv_list", TORCH_BOX(&k_fe_addcdiv_list));
}
"""

OPS = ["addcmul", "addcdiv", "addcmul_", "addcdiv_", "_foreach_addcmul_", "_foreach_addcdiv_"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    root = tmp_path_factory.mktemp("addc")
    files, _ = pipeline.generate(OPS, None, None, str(root / "gen"), only=True)
    pipeline.write(str(root / "gen"), files)
    src = root / "addc.cpp"
    src.write_text(CALLS.replace("NS", "addc_ext"))
    lib = str(root / "addc.so")
    build_so(str(src), lib, str(root / "gen"))  # libtorch alone: no SHIMGEN_OVERLAY
    torch.ops.load_library(lib)
    return torch.ops.addc_ext, lib


def _sample(shape, dtype, seed):
    t = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
    if t.numel() > 4:
        t.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -0.0, 0.1])
    return t.to(dtype) if dtype.is_floating_point or dtype.is_complex else t.nan_to_num(0, 0, 0).round().to(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit for bit: dtype, shape, strides and every value (NaN where NaN is)."""
    if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


def test_the_extension_needs_libtorch_alone(ext) -> None:
    _, lib = ext
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True).stdout
    assert "addc" not in out  # no aoti_torch_aten_addcmul / aoti_torch_cpu_addcmul: libtorch exports neither


SHAPES = [((6, 40), (6, 40), (6, 40)), ((6, 40), (40,), ()), ((), (3,), (2, 1)), ((0, 3), (3,), ())]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64,
                                   torch.int8, torch.complex64])
def test_addcmul_and_addcdiv_are_atens(ext, dtype) -> None:
    ops, _ = ext
    for k, shapes in enumerate(SHAPES):
        s, a, b = (_sample(sh, dtype, 3 * k + i) for i, sh in enumerate(shapes))
        for v in (1, 0.5, 0.1, -3.0):
            if dtype.is_floating_point or dtype.is_complex or v == int(v):
                assert _same(ops.addcmul(s, a, b, v), torch.addcmul(s, a, b, value=v)), (dtype, shapes, v)
            if dtype.is_floating_point or dtype.is_complex:
                assert _same(ops.addcdiv(s, a, b, v), torch.addcdiv(s, a, b, value=v)), (dtype, shapes, v)
        assert _same(ops.addcmul_default(s, a, b), torch.addcmul(s, a, b))
        if dtype == torch.int64:
            assert _same(ops.addcmul_int(s, a, b, 2**40), torch.addcmul(s, a, b, value=2**40))
        if dtype.is_floating_point or dtype.is_complex:
            assert _same(ops.addcdiv_default(s, a, b), torch.addcdiv(s, a, b))


def test_addcmul_keeps_atens_fused_multiply_add(ext) -> None:
    """float32 samples where a composition of mul and add (rounding value * t1 * t2 before adding self) differs
    from aten on a CPU whose kernel uses FMA: the route still gives aten's bits."""
    ops, _ = ext
    g = torch.Generator().manual_seed(0)
    s, a, b = (torch.randn(4096, generator=g) for _ in range(3))
    want = torch.addcmul(s, a, b, value=0.3)
    assert _same(ops.addcmul(s, a, b, 0.3), want)
    if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):  # aten's vectorized kernel fuses there
        assert not torch.equal(s + torch.tensor(0.3) * a * b, want)


def test_numbers_of_every_kind_reach_aten_unchanged(ext) -> None:
    ops, _ = ext
    i = _sample((4, 5), torch.int64, 1)
    assert _same(ops.addcmul_bool(i, i, i, True), torch.addcmul(i, i, i, value=True))
    assert _same(ops.addcmul_int(i, i, i, 2**62 + 1), torch.addcmul(i, i, i, value=2**62 + 1))
    c = _sample((4, 5), torch.complex64, 2)
    assert _same(ops.addcmul_complex(c, c, c, 0.5, -2.0), torch.addcmul(c, c, c, value=0.5 - 2j))
    x = _sample((4, 5), torch.float32, 3)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        ops.addcmul(x, x, x, 1e300)  # aten's own check, through its own kernel
    with pytest.raises(RuntimeError, match="value cannot be converted"):
        ops.addcmul_complex(x, x, x, 1.0, 2.0)


def test_errors_are_atens(ext) -> None:
    ops, _ = ext
    i, x = torch.ones(3, dtype=torch.int64), torch.ones(3)
    cases = [(ops.addcdiv, torch.addcdiv, (x, i, i), 1.0),  # integer division refused
             (ops.addcmul_bool, torch.addcmul, (i > 0, i > 0, i > 0), True),  # no kernel for bool
             (ops.addcmul, torch.addcmul, (torch.ones(5, 7), torch.ones(7), torch.ones(3)), 1.0),  # broadcast
             (ops.addcmul_, torch.Tensor.addcmul_, (torch.ones(3), torch.ones(2, 3), torch.ones(3)), 1.0),
             (ops.addcmul_, torch.Tensor.addcmul_, (i.clone(), x, x), 1.0)]  # float result into int64 self
    for mine, aten, args, v in cases:
        with pytest.raises(RuntimeError) as want:
            aten(*args, value=v)
        with pytest.raises(RuntimeError) as got:
            mine(*args, v)
        assert str(want.value).splitlines()[0] in str(got.value), (aten, str(got.value)[:300])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_inplace_and_out_are_atens(ext, dtype) -> None:
    ops, _ = ext
    s, a, b = (_sample((6, 40), dtype, i) for i in range(3))
    for v in (1.0, -0.01, 0.999):
        for name in ("addcmul", "addcdiv"):
            mine, want = s.clone(), s.clone()
            r = getattr(ops, name + "_")(mine, a, b, v)
            getattr(want, name + "_")(a, b, value=v)
            assert r.data_ptr() == mine.data_ptr() and _same(mine, want), (name, v)
            shared, want = s.clone(), s.clone()  # self is tensor1 as well: aten computes it element by element
            getattr(ops, name + "_")(shared, shared, b, v)
            getattr(want, name + "_")(want, b, value=v)
            assert _same(shared, want), (name, v)
            for out_shape in ((6, 40), (0,)):
                mine, want = torch.empty(out_shape, dtype=dtype), torch.empty(out_shape, dtype=dtype)
                getattr(ops, name + "_out")(s, a, b, v, mine)
                getattr(torch, name)(s, a, b, value=v, out=want)
                assert _same(mine, want), (name, v, out_shape)


def test_adam_step_is_atens(ext) -> None:
    """Adam's update of two parameters, as torch.optim.Adam(foreach=True) computes it on CPU: the second moment
    with _foreach_addcmul_ (value 1 - beta2), the step with _foreach_addcdiv_ (a ScalarList of step sizes)."""
    ops, _ = ext
    shapes = [(6, 40), (7,)]
    grads = [_sample(sh, torch.float32, 10 + k).nan_to_num(0.5, 2.0, -2.0) for k, sh in enumerate(shapes)]
    params = [_sample(sh, torch.float32, 20 + k).nan_to_num(0.5, 2.0, -2.0) for k, sh in enumerate(shapes)]
    sq_mine, sq_want = [torch.rand(sh) for sh in shapes], None
    sq_want = [t.clone() for t in sq_mine]
    ops.fe_addcmul(*sq_mine, *grads, *grads, 1 - 0.999)
    torch._foreach_addcmul_(sq_want, grads, grads, value=1 - 0.999)
    assert all(_same(m, w) for m, w in zip(sq_mine, sq_want))
    denom = [t.sqrt() + 1e-8 for t in sq_want]
    mine, want = [p.clone() for p in params], [p.clone() for p in params]
    ops.fe_addcdiv_list(*mine, *grads, *denom, -1e-3)
    torch._foreach_addcdiv_(want, grads, denom, [-1e-3, 2e-3])
    assert all(_same(m, w) for m, w in zip(mine, want))


def test_a_call_autograd_records_is_refused_naming_the_remedy(ext) -> None:
    ops, _ = ext
    x = torch.randn(4, 5, dtype=torch.float64)
    leaf = x.clone().requires_grad_()
    for fn in (ops.addcmul, ops.addcdiv):
        name = fn._qualified_op_name.split("::")[1]
        with pytest.raises(RuntimeError, match=rf"shimgen: {name}.default: an input requires grad .*SHIMGEN_OVERLAY"):
            fn(x, leaf, x, 0.5)
        with torch.no_grad():  # nothing records: aten's result, which requires no grad
            r = fn(x, leaf, x, 0.5)
        assert _same(r, getattr(torch, name)(x, x, x, value=0.5)) and not r.requires_grad
    with pytest.raises(RuntimeError, match=r"shimgen: addcmul_.default: an input requires grad"):
        ops.addcmul_(leaf * 1, x, x, 0.5)
