"""The prover of kernel `subcmul` (shimgen/generate/routes/kernels/subcmul.py): aten's `self - (other * alpha)` as the
same aten calls.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import DTYPES, NUMBERS, SHAPES, sample
from worker_common import Tally, aten, outcome, run, same, weights


SUBCMUL_NUMBERS = NUMBERS + [-0.0, 2**53 + 1, 2**63 - 1, -(2**63), 300, -129, 1 + 2j, False]


def subcmul(calls, self, other, alpha):
    """kernels/subcmul.py: mul.Scalar's wrapper on (other, alpha), then sub.Tensor's with its default
    alpha (each wrapper proven equal to its aten overload; a number mul's wrapper refuses is refused there)."""
    return aten(calls["minus"])(self, aten(calls["times"])(other, alpha))


def prove_subcmul(op, s):
    """aten's op against the composition on every dtype pair (DTYPES), broadcasting, 0-dim and empty shapes,
    numbers of every kind (huge integers, non-finite, bool, complex) and the default alpha; results, dtypes,
    strides and errors; float64 and complex128 gradients of both tensors under weighted upstream gradients."""
    f, calls = aten(op), s["rule"]["calls"]
    tally = Tally()
    for da in DTYPES:
        for db in DTYPES:
            for k, (sa, sb) in enumerate(SHAPES):
                a, b = sample(sa, da, 3 * k), sample(sb, db, 3 * k + 1)
                if k == 0:
                    b = sample((7, 5), db, 1).t()  # not contiguous
                for n in SUBCMUL_NUMBERS + [None]:
                    extra = {} if n is None else {"alpha": n}
                    want = run(lambda: f(a, b, **extra))
                    got = outcome(lambda: subcmul(calls, a, b, 1 if n is None else n))
                    ws = tuple(want[1].stride()) if want[0] == "ok" else None
                    gs = tuple(got[1].stride()) if got[0] == "ok" else None
                    tally.compare(f"{da} {db} {sa} {sb} {n!r}", want, got, ws, gs)
                    grad_dtype = {torch.float64: torch.float64, torch.complex64: torch.complex128}.get(da)
                    if (grad_dtype is None or db != da or want[0] != "ok" or got[0] != "ok"
                            or n not in (0.5, -2.5, 3, None, 1 + 2j)):
                        continue
                    grads = []
                    for fn in (lambda x, y: f(x, y, **extra), lambda x, y: subcmul(calls, x, y, 1 if n is None else n)):
                        def backward(fn=fn):
                            x = a.to(grad_dtype).clone().requires_grad_()
                            y = b.to(grad_dtype).clone().requires_grad_()
                            r = fn(x, y)
                            (r * weights(r)).sum().real.backward()
                            return torch.cat([x.grad.reshape(-1), y.grad.reshape(-1)])
                        grads.append(run(backward))
                    if not same(*grads) and not tally.wrong:
                        tally.wrong = f"gradient {da} {sa} {sb} {n!r}: {grads[0][0]} vs {grads[1][0]}"
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_subcmul,)}
