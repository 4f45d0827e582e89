"""The prover of kernel `celu` (shimgen/generate/routes/kernels/celu.py): aten's celu as its own
CompositeExplicitAutograd body, elu with alpha, scale 1.0 and input_scale 1 / alpha after the zero check.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import DTYPES, SHAPES, sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run

CELU_NUMBERS = [1.0, 0.5, 0.3, 2, 1, -1.5, 1e-3, 7.25, 0, 0.0, -0.0, float("inf"), float("nan"), True, 3e38]


def celu(s, self, alpha):
    """kernels/celu.py: the zero check, then elu's wrapper (its refusal where autograd records the call)."""
    if not float(alpha) != 0:
        raise RuntimeError(f"ZeroDivisionError: alpha cannot be 0 for CELU {ATEN_RAISES}")
    if torch.is_grad_enabled() and self.requires_grad:
        raise Refused("autograd records the call: elu's wrapper refuses it")
    return aten(s["rule"]["calls"]["base"])(self, alpha, 1.0, 1.0 / float(alpha))


def prove_celu(op, s):
    """aten's op against the composition on every dtype (DTYPES), broadcast, 0-dim and empty shapes, a transposed
    self, and alphas of every kind (0, -0.0, inf, NaN, bool, an integer, one not exact in float); results, dtypes,
    strides and errors, in and out of grad mode."""
    f = aten(op)
    tally = Tally()
    for dtype in DTYPES:
        for k, shape in enumerate(sorted({a for a, _ in SHAPES})):
            for transposed in (False, True):
                base = sample(shape, dtype, k)
                if transposed and base.dim() == 2:
                    base = base.t().contiguous().t()
                for alpha in CELU_NUMBERS:
                    for grad in (False, True):
                        if grad and dtype != torch.float64:
                            continue

                        def make(base=base, grad=grad):
                            x = base.clone()
                            return x.requires_grad_() if grad else x

                        def call(fn, make=make, grad=grad):
                            with torch.set_grad_enabled(grad):
                                x = make()
                                if op.startswith("celu_"):
                                    x = x * 1 if grad else x  # in place on a non-leaf, as a caller would
                                r = fn(x)
                                return r.detach(), tuple(r.stride())
                        want = run(lambda: call(lambda x: f(x, alpha)))
                        got = outcome(lambda: call(lambda x: celu(s, x, alpha)))
                        w = (want[0], want[1][0]) if want[0] == "ok" else want
                        g = (got[0], got[1][0]) if got[0] == "ok" else got
                        tally.compare(f"{dtype} {shape} {transposed} {alpha!r} grad {grad}", w, g,
                                      want[1][1] if want[0] == "ok" else None, got[1][1] if got[0] == "ok" else None)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_celu,)}
