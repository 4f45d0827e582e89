"""Why elu, celu, softplus, softplus_backward and elu_backward(is_result=false) have no exact kernel composition:
aten's CPU kernels against the same arithmetic through dispatching ops (expm1 / exp / log1p, mul, div, comparisons,
where; half and bfloat16 in float, as aten's kernels), on the installed torch. Prints, per dtype and layout, how many
elements differ and by how many ulps at most.

    python benchmarks/activation_composition_gap.py

aten computes expm1 / exp / log1p with Sleef in its vectorized body and with libm in its scalar tail and in every
strided loop; aten::expm1 / exp / log1p use their vectorized function on every element (and may use another
library), so no composition follows aten element by element. elu_backward with is_result=true has no such function
and is a kernel composition (data/scalar_facts.yaml, kernel `elu_grad`)."""

from __future__ import annotations

import torch

F = torch.nn.functional
BITS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16, torch.bfloat16: torch.int16}


def gap(want: torch.Tensor, got: torch.Tensor) -> str:
    differ = (want != got) & ~(want.isnan() & got.isnan())
    if not differ.any():
        return "0"
    a = want[differ].contiguous().view(BITS[want.dtype]).long()
    b = got[differ].contiguous().view(BITS[want.dtype]).long()
    return f"{int(differ.sum())} ({int((a - b).abs().max())} ulp)"


def compute(t: torch.Tensor) -> torch.Tensor:
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


def elu(x, alpha=1.0, input_scale=1.0):
    xc = compute(x)
    return torch.where(xc < 0, torch.expm1(xc * input_scale) * alpha, xc * 1.0).to(x.dtype)


def softplus(x):
    xc = compute(x)
    return torch.where(xc * 1 > 20, xc, torch.log1p(torch.exp(xc * 1)) / 1).to(x.dtype)


def softplus_backward(g, x):
    xc, gc = compute(x), compute(g)
    z = torch.exp(xc * 1)
    return torch.where(xc * 1 > 20, gc, gc * z / (z + 1)).to(x.dtype)


def elu_backward(g, x):
    xc, gc = compute(x), compute(g)
    return torch.where(xc <= 0, gc * 1 * 1 * torch.exp(xc * 1), gc * 1).to(x.dtype)


def sample(seed: int, strided: bool) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if strided:
        return (torch.randn(300, 301, generator=g, dtype=torch.float64) * 3)[:, ::2]
    return torch.randn(100003, generator=g, dtype=torch.float64) * 3


def main() -> int:
    print(f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}, {torch.get_num_threads()} threads")
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for strided in (False, True):
            x, g = sample(1, strided).to(d), (sample(2, strided) / 3).to(d)
            print(f"{str(d):<15} {'strided 300x150' if strided else 'contiguous 100003':<18}"
                  f" elu {gap(F.elu(x), elu(x))}, celu(0.5) {gap(F.celu(x, 0.5), elu(x, 0.5, 2.0))},"
                  f" softplus {gap(F.softplus(x), softplus(x))},"
                  f" softplus_backward {gap(torch.ops.aten.softplus_backward(g, x, 1, 20), softplus_backward(g, x))},"
                  f" elu_backward(is_result=false) "
                  f"{gap(torch.ops.aten.elu_backward(g, 1, 1, 1, False, x), elu_backward(g, x))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
