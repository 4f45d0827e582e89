"""add/sub/subtract/rsub of integral (and, for add, bool) tensors with alpha 1, and add/sub of integral tensors with
any integer alpha, in an extension linked with libtorch alone: the number rules `kernel: integral_add`
(data/scalar_facts.yaml) send them to shimgen::detail::integral_add_select (mul for the result's layout, alpha
converted to the result dtype as aten converts it and multiplied into the other operand, diff of the stacked
operands, copy_), where the subtract shim's double alpha would make aten raise. Each call is compared with ATen
given what the caller wrote: values (overflow wraps), dtype, shape and strides, errors (an alpha out of the result
dtype's range raises aten's own message); add_ and add.out reach it through their functional."""

from __future__ import annotations

import itertools

import pytest
import torch

from shimgen.generate import pipeline
from tests.cxx import build_so

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_add(Tensor a, Tensor b) { return ts::add(a, b); }
Tensor k_add_alpha(Tensor a, Tensor b, int64_t alpha) { return ts::add(a, b, alpha); }
Tensor k_add_double_alpha(Tensor a, Tensor b, double alpha) { return ts::add(a, b, alpha); }
Tensor k_sub(Tensor a, Tensor b) { return ts::sub(a, b); }
Tensor k_sub_alpha(Tensor a, Tensor b, int64_t alpha) { return ts::sub(a, b, alpha); }
Tensor k_subtract_alpha(Tensor a, Tensor b, int64_t alpha) { return ts::subtract(a, b, alpha); }
Tensor k_rsub_alpha(Tensor a, Tensor b, int64_t alpha) { return ts::rsub(a, b, alpha); }
Tensor k_subtract(Tensor a, Tensor b) { return ts::subtract(a, b); }
Tensor k_rsub(Tensor a, Tensor b) { return ts::rsub(a, b); }
Tensor k_add_(Tensor a, Tensor b) { return ts::add_(a, b); }
Tensor k_add_out(Tensor a, Tensor b, Tensor out) {
  ts::add_out(out, a, b);
  return out;
}

STABLE_TORCH_LIBRARY(intadd, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor");
  m.def("add_alpha(Tensor a, Tensor b, int alpha) -> Tensor");
  m.def("add_double_alpha(Tensor a, Tensor b, float alpha) -> Tensor");
  m.def("sub(Tensor a, Tensor b) -> Tensor");
  m.def("sub_alpha(Tensor a, Tensor b, int alpha) -> Tensor");
  m.def("subtract_alpha(Tensor a, Tensor b, int alpha) -> Tensor");
  m.def("rsub_alpha(Tensor a, Tensor b, int alpha) -> Tensor");
  m.def("subtract(Tensor a, Tensor b) -> Tensor");
  m.def("rsub(Tensor a, Tensor b) -> Tensor");
  m.def("add_(Tensor(a!) a, Tensor b) -> Tensor(a!)");
  m.def("add_out(Tensor a, Tensor b, Tensor(a!) out) -> Tensor(a!)");
}

STABLE_TORCH_LIBRARY_IMPL(intadd, CPU, m) {
  m.impl("add", TORCH_BOX(&k_add));
  m.impl("add_alpha", TORCH_BOX(&k_add_alpha));
  m.impl("add_double_alpha", TORCH_BOX(&k_add_double_alpha));
  m.impl("sub", TORCH_BOX(&k_sub));
  m.impl("sub_alpha", TORCH_BOX(&k_sub_alpha));
  m.impl("subtract_alpha", TORCH_BOX(&k_subtract_alpha));
  m.impl("rsub_alpha", TORCH_BOX(&k_rsub_alpha));
  m.impl("subtract", TORCH_BOX(&k_subtract));
  m.impl("rsub", TORCH_BOX(&k_rsub));
  m.impl("add_", TORCH_BOX(&k_add_));
  m.impl("add_out", TORCH_BOX(&k_add_out));
}
"""

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@pytest.fixture(scope="module")
def ext(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("intadd")
    gen = str(root / "gen")
    files, _ = pipeline.generate(["add", "sub", "subtract", "rsub", "add_"], None, None, gen, only=True)
    pipeline.write(gen, files)
    src = root / "intadd.cpp"
    src.write_text(CALLS)
    lib = str(root / "intadd.so")
    build_so(str(src), lib, gen)  # libtorch alone
    torch.ops.load_library(lib)
    return gen


def _sample(shape, dtype, seed, transposed=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(-2**62, 2**62, shape[::-1] if transposed else shape, generator=g, dtype=torch.int64)
    if t.numel():
        t.view(-1)[0] = torch.iinfo(torch.int64).max  # wraps in every dtype
    t = t > 0 if dtype == torch.bool else t.to(dtype)
    return t.t() if transposed else t


def _outcome(fn):
    try:
        return "ok", fn()
    except RuntimeError as e:
        return "error", str(e).splitlines()[0]


def _agree(want, got) -> bool:
    if want[0] != got[0]:
        return False
    if want[0] == "error":
        return want[1] in got[1]
    a, b = want[1], got[1]
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and torch.equal(a, b)


def test_the_rule_is_in_the_wrapper(ext) -> None:
    text = open(f"{ext}/torch/csrc/stable/ops/add.h").read()
    assert "shimgen::detail::integral_add_select(self, other, false)" in text
    assert "shimgen::detail::integral_add_select(self, other, false, alpha)" in text
    doc = " ".join(line.strip()[4:] for line in text.splitlines() if line.strip().startswith("/// "))  # unwrapped
    assert "alpha = 1 on Bool, Byte, Char, Short, Int, Long tensors goes to" in doc
    assert "alpha = an integer on Byte, Char, Short, Int, Long tensors goes to" in doc


@pytest.mark.parametrize("da,db", list(itertools.product(INTS + [torch.bool], INTS + [torch.bool])))
def test_integral_add_and_sub_are_atens(ext, da, db) -> None:
    ops = torch.ops.intadd
    for sa, sb, transposed in [((3, 4), (3, 4), False), ((3, 4), (4,), False), ((), (3, 4), False),
                               ((4, 3), (4, 3), True), ((0, 3), (3,), False), ((3, 4), (5,), False)]:
        a, b = _sample(sa, da, 1, transposed), _sample(sb, db, 2)
        for mine, theirs in ((ops.add, lambda: torch.add(a, b)), (ops.sub, lambda: torch.sub(a, b)),
                             (ops.subtract, lambda: torch.subtract(a, b)), (ops.rsub, lambda: torch.rsub(a, b))):
            want = _outcome(theirs)
            got = _outcome(lambda: mine(a, b))
            if torch.bool in (da, db) and mine is not ops.add and want[0] == "error":
                # the rule does not take a bool operand: the subtract shim's route raises aten's own error
                # where libtorch hands it over (2.13+)
                assert got[0] == "error", (mine, da, db, sa, sb)
                continue
            assert _agree(want, got), (mine, da, db, sa, sb, transposed, want[0], got[0])


ALPHAS = [2, -3, 0, 127, 128, -128, -129, 255, -255, 256, 2**31, 2**40 + 3, 2**63 - 1, -2**63]


@pytest.mark.parametrize("da,db", list(itertools.product(INTS, INTS)))
def test_integer_alphas_are_atens(ext, da, db) -> None:
    """Any integer alpha: aten's values (the product and the sum wrap), or aten's own overflow error where the result
    dtype cannot hold alpha (sub: -alpha, so 128 fits int8 there)."""
    ops = torch.ops.intadd
    for (sa, sb, transposed), alpha in itertools.product(
            [((3, 4), (3, 4), False), ((3, 4), (4,), False), ((), (3, 4), False), ((4, 3), (4, 3), True)], ALPHAS):
        a, b = _sample(sa, da, 1, transposed), _sample(sb, db, 2)
        for mine, theirs in ((ops.add_alpha, torch.add), (ops.sub_alpha, torch.sub),
                             (ops.subtract_alpha, torch.subtract), (ops.rsub_alpha, torch.rsub)):
            want = _outcome(lambda: theirs(a, b, alpha=alpha))
            got = _outcome(lambda: mine(a, b, alpha))
            assert _agree(want, got), (mine, da, db, sa, sb, transposed, alpha, want, got[0])


def test_other_alphas_keep_their_routes(ext) -> None:
    a, b = _sample((3, 4), torch.int64, 1), _sample((3, 4), torch.int64, 2)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):  # aten's own error
        torch.ops.intadd.add_double_alpha(a, b, 1.0)
    t, u = _sample((3, 4), torch.bool, 1), _sample((3, 4), torch.int64, 2)
    with pytest.raises(RuntimeError, match=r"shimgen: add.Tensor: a Bool tensor"):  # bool keeps alpha 1 only
        torch.ops.intadd.add_alpha(t, u, 2)
    x, y = _sample((3, 4), torch.float32, 1), _sample((3, 4), torch.float32, 2)
    assert torch.equal(torch.ops.intadd.add_alpha(x, y, 1), torch.add(x, y))  # floating: the subtract shim
    assert torch.equal(torch.ops.intadd.add_alpha(x, y, 3), torch.add(x, y, alpha=3))


def test_add_inplace_and_out_reach_it(ext) -> None:
    a, b = _sample((3, 4), torch.int32, 1), _sample((4,), torch.int8, 2)
    want = a.clone().add_(b)
    assert torch.equal(torch.ops.intadd.add_(a.clone(), b), want)
    out = torch.empty(3, 4, dtype=torch.int32)
    torch.ops.intadd.add_out(a, b, out)
    assert torch.equal(out, torch.add(a, b))


def test_scalar_type_values_are_the_headers() -> None:
    """The bits of a number rule's dtype mask (emit_cpp.SCALAR_TYPE_VALUES) are ScalarType's enumerator values, as
    the installed torch's headeronly/core/ScalarType.h numbers them."""
    import os
    import re

    from shimgen.generate.emit.cpp import SCALAR_TYPE_VALUES

    header = os.path.join(os.path.dirname(torch.__file__), "include", "torch", "headeronly", "core", "ScalarType.h")
    values = {name: int(n) for name, n in re.findall(r"_\([^,]+, (\w+)\) /\* (\d+) \*/", open(header).read())}
    assert SCALAR_TYPE_VALUES == {name: values[name] for name in SCALAR_TYPE_VALUES}
