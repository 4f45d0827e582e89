"""The prover of kernels `trapezoid_dx` / `cumulative_trapezoid_dx` (shimgen/generate/routes/kernels/trapezoid.py):
aten's Integration.cpp as the same aten calls.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import sample
from worker_common import ATEN_RAISES, aten, outcome, run, same, weights


TRAPEZOID_NUMBERS = [1, 0.5, 0.1, -2.5, 3, 0, 1e-3, 2**53 + 1, 1e300, float("inf"), float("nan"), True, 1 + 2j, -0.0]


def trapezoid_dx(cumulative, y, dx, dim):
    """shimgen/generate/routes/kernels/trapezoid.py's body: aten's checks (scalar.h trapezoid_check), then its calls in its
    order (`cumulative`: cumulative_trapezoid)."""
    name = "cumulative_trapezoid" if cumulative else "trapezoid"
    if not cumulative and y.size(dim) == 0:  # zeros of y's options, before the checks
        n = y.dim()
        return aten("new_zeros.default")(y, [y.size(i) for i in range(n) if i != (dim + n if dim < 0 else dim)])
    if y.dtype == torch.bool:
        raise RuntimeError(f"{name}: received a bool input for `y` {ATEN_RAISES}")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number {ATEN_RAISES}")
    d = float(dx)  # shimgen::Scalar::to_double, as aten's dx.toDouble()
    if not cumulative:
        ends = aten("add.Tensor")(aten("select.int")(y, dim, 0), aten("select.int")(y, dim, -1))
        inner = aten("sub.Tensor")(aten("sum.dim_IntList")(y, [dim]), aten("mul.Scalar")(ends, 0.5))
        return aten("mul.Scalar")(inner, d)
    left, right = aten("slice.Tensor")(y, dim, 0, -1), aten("slice.Tensor")(y, dim, 1)
    return aten("cumsum.default")(aten("mul.Scalar")(aten("add.Tensor")(left, right), d / 2.0), dim)


def prove_trapezoid(op, s):
    """aten's op against trapezoid_dx: dtypes (floating, reduced, integral, bool, complex), shapes (2-D, 3-D, 1-D,
    0-dim, empty dims, one element), dims (in and out of range, negative), numbers (int, double, huge, non-finite,
    bool, complex); results, dtypes, strides and errors; float64 and complex128 gradients under weighted upstream
    gradients (aten: CompositeImplicitAutograd, so the same calls' derivatives)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
              torch.bool, torch.complex64):
        for k, shape in enumerate([(5, 7), (2, 3, 4), (9,), (), (0, 3), (3, 0), (1, 4), (40,)]):
            y = sample(shape, d, k)
            if k == 1:
                y = y.transpose(0, 2)  # not contiguous
            for dim in (-1, 0, 1, 2, -3, 5):
                for dx in TRAPEZOID_NUMBERS:
                    want = run(lambda: f(y, dx=dx, dim=dim))
                    got = outcome(lambda: trapezoid_dx(s["cumulative"], y, dx, dim))
                    compared += 1
                    if got[0] == "refused":
                        refused += 1
                        continue
                    both_ok += want[0] == got[0] == "ok"
                    strides_differ = want[0] == got[0] == "ok" and want[1].stride() != got[1].stride()
                    if (not same(want, got) or strides_differ) and not wrong:
                        wrong = f"{d} {shape} dim {dim} dx {dx!r}: {want[0]} " \
                                f"{want[1] if want[0] == 'error' else (want[1].dtype, want[1].stride())} vs " \
                                f"{got[0]} {got[1] if got[0] == 'error' else (got[1].dtype, got[1].stride())}"
                    if d in (torch.float64, torch.complex64) and want[0] == got[0] == "ok" and dx in (0.5, 3, -2.5):
                        grads = []
                        for fn in (lambda t: f(t, dx=dx, dim=dim), lambda t: trapezoid_dx(s["cumulative"], t, dx, dim)):
                            def backward(fn=fn):
                                t = y.to(torch.complex128 if d.is_complex else d).clone().requires_grad_()
                                r = fn(t)
                                if not r.requires_grad:  # the zeros of an empty dim: no graph on either side
                                    return torch.zeros(0)
                                (r * weights(r)).sum().real.backward()
                                return t.grad
                            grads.append(run(backward))
                        if not same(*grads) and not wrong:
                            wrong = f"gradient {d} {shape} dim {dim} dx {dx!r}: {grads[0][0]} vs {grads[1][0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_trapezoid,)}
