"""Routes that compute an op as other ops (pow's number rules: pow(x, 2) as x * x, ...; dist as norm(a - b); renorm's
kernel) under an autocast that casts the op itself: CUDA's autocast computes aten::pow, aten::dist and aten::renorm
in float32 from float16 and bfloat16 inputs, and x * x would stay in bfloat16. No GPU here, so the test gives CPU's
autocast that policy for aten::pow, aten::dist and aten::renorm (kernels registered for AutocastCPU, in a child process so that no other test sees them),
and compares the wrappers with aten under it: dtype and values, as the caller wrote the call."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.children import quick_exit
from tests.cxx import load_extension

CALLS = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

using torch::stable::Tensor;
namespace ts = torch::stable;

Tensor k_pow(Tensor x, double e) { return ts::pow(x, e); }
Tensor k_pow_int(Tensor x, int64_t e) { return ts::pow(x, e); }
Tensor k_dist(Tensor a, Tensor b) { return ts::dist(a, b); }
Tensor k_renorm(Tensor a) { return ts::renorm(a, 2, 0, 1.0); }

STABLE_TORCH_LIBRARY(autocast_ext, m) {
  m.def("pow(Tensor x, float e) -> Tensor");
  m.def("pow_int(Tensor x, int e) -> Tensor");
  m.def("dist(Tensor a, Tensor b) -> Tensor");
  m.def("renorm(Tensor a) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(autocast_ext, CompositeExplicitAutograd, m) {
  m.impl("pow", TORCH_BOX(&k_pow));
  m.impl("pow_int", TORCH_BOX(&k_pow_int));
  m.impl("dist", TORCH_BOX(&k_dist));
  m.impl("renorm", TORCH_BOX(&k_renorm));
}
"""

CHILD = textwrap.dedent("""
    import sys
    import torch

    torch.ops.load_library(sys.argv[1])
    lib = torch.library.Library("aten", "IMPL")
    AUTOCAST = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def fp32_policy(op):  # autocast's float32 policy (CUDA's for pow and dist): cast, then run below autocast
        def kernel(*args):
            cast = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() and a.dtype != torch.float64
                    else a for a in args]
            with torch._C._ExcludeDispatchKeyGuard(AUTOCAST):
                return op(*cast)
        return kernel

    for name, op in (("pow.Tensor_Scalar", torch.ops.aten.pow.Tensor_Scalar),
                     ("pow.Tensor_Tensor", torch.ops.aten.pow.Tensor_Tensor),
                     ("dist", torch.ops.aten.dist.default),
                     ("renorm", torch.ops.aten.renorm.default)):
        lib.impl(name, fp32_policy(op), "AutocastCPU")

    def same(got, want):
        return got.dtype == want.dtype and bool(((got == want) | (got.isnan() & want.isnan())).all())

    def refused(call):  # a number no libtorch route carries for the float32 tensor autocast computes in
        try:
            call()
        except RuntimeError as e:
            return str(e).startswith("shimgen:")
        return False

    failures = []
    g = torch.Generator().manual_seed(0)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        x = (torch.randn(4, 5, generator=g) * 3).to(dtype)
        y = (torch.randn(4, 5, generator=g) * 3).to(dtype)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for e in (2.0, 0.5, -0.5, -1.0, 3.0, 1.7, 2, 3, -1, 4):
                call = torch.ops.autocast_ext.pow if isinstance(e, float) else torch.ops.autocast_ext.pow_int
                if e in (1.7, 4) and refused(lambda: call(x.float(), e)):  # refused in float32 outside autocast too
                    if not refused(lambda: call(x, e)):
                        failures.append(f"pow {dtype} {e}: served under autocast, refused in float32")
                    continue
                want, got = torch.pow(x, e), call(x, e)
                if not same(got, want):
                    failures.append(f"pow {dtype} {e!r}: {got.dtype} vs {want.dtype}")
            want, got = torch.dist(x, y), torch.ops.autocast_ext.dist(x, y)
            if not same(got, want):
                failures.append(f"dist {dtype}: {got.dtype} vs {want.dtype}")
            want, got = torch.renorm(x, 2, 0, 1.0), torch.ops.autocast_ext.renorm(x)
            if not same(got, want):
                failures.append(f"renorm {dtype}: {got.dtype} vs {want.dtype}")
            if dtype != torch.float32 and torch.pow(x, 2.0).dtype != torch.float32:
                failures.append("the policy did not take: aten's pow stayed in " + str(torch.pow(x, 2.0).dtype))
    print("\\n".join(failures) or "ok")
""")


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> str:
    # libtorch alone: no overlay
    return load_extension(tmp_path_factory.mktemp("autocast"), "autocast_ext", ["pow", "dist", "renorm"], CALLS)


def test_rules_follow_an_autocast_that_casts_the_op(lib) -> None:
    proc = subprocess.run([sys.executable, "-c", quick_exit(CHILD), lib], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok", proc.stdout
