"""The prover of kernel `self_dtype_number` (shimgen/generate/routes/kernels/self_dtype_number.py): aten's in-place
Scalar overload against its Tensor overload (`via`) with the number as a 0-dim tensor of self's dtype (made as
scalar.h number_tensor makes it: a float32 tensor, then aten's _to_copy), where the kernel computes; the other calls
are the sibling's (counted refused here: the sibling's own cells prove them).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import sample
from worker_common import Refused, Tally, aten, outcome, run

REDUCED = (torch.bfloat16, torch.float16)
# numbers a reduced dtype rounds (0.1, 1 / 3, 7.7), holds (0.5, 3, True), rounds twice through float (1 + 2**-8 +
# 2**-30: to float it is 1 + 2**-8, a tie bfloat16 rounds to 1.0, where one rounding would give 1 + 2**-7), beyond
# float16's range (70000, 1e30), the specials, a complex one (aten raises writing a complex result into self)
NUMBERS = [0.1, -0.3, 1 / 3, 7.7, 1e-3, 0.5, 3, -2, True, 1 + 2**-8 + 2**-30, 70000.0, 1e30, 3e-8, float("inf"),
           float("nan"), -0.0, 2**40 + 1, 1 + 1j]


def self_dtype_number(s, self, n):
    """kernels/self_dtype_number.py's body: a bfloat16 or float16 CPU self, a real number, autograd not recording:
    via with the number as a 0-dim tensor of self's dtype; else the sibling's (refused here)."""
    computes = self.device.type == "cpu" and self.dtype in REDUCED and not isinstance(n, complex) and not (
        torch.is_grad_enabled() and self.requires_grad)
    if not computes:
        raise Refused("the sibling's")
    number = torch.tensor(float(n), dtype=torch.float32).to(self.dtype)
    return aten(s["rule"]["via"])(self, number)


def prove_self_dtype_number(op, s):
    """aten's op against the kernel on float32, float64, bfloat16, float16 and int64 selves of several shapes (a
    0-dim, an empty, a transposed and a long one: aten's vectorized loop and its tail), every number of NUMBERS, in
    and out of grad mode (a self requiring grad as a non-leaf): the result, self's values afterwards and whether
    the result is self."""
    f = aten(op)
    tally = Tally()
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64):
        for k, shape in enumerate([(2, 3), (), (0, 3), (7, 19), (1000,), (3, 4)]):
            base = sample(shape, dtype, k + 11)
            if shape == (3, 4):
                base = base.t()
            for n in NUMBERS:
                for grad in ((False, True) if dtype.is_floating_point else (False,)):
                    def call(fn, base=base, grad=grad):
                        with torch.set_grad_enabled(grad):
                            leaf = base.clone().requires_grad_(grad)
                            x = leaf * 1 if grad else leaf
                            r = fn(x)
                            return r.detach(), r is x, x.detach().clone()
                    want = run(lambda: call(lambda x: f(x, n)))
                    got = outcome(lambda: call(lambda x: self_dtype_number(s, x, n)))
                    w = (want[0], want[1][0]) if want[0] == "ok" else want
                    g = (got[0], got[1][0]) if got[0] == "ok" else got
                    extra = [want[1][1:] if want[0] == "ok" else None, got[1][1:] if got[0] == "ok" else None]
                    if want[0] == got[0] == "ok":  # self afterwards, bit for bit (as values: NaN where aten's)
                        a, b = want[1][2], got[1][2]
                        extra = [True, bool(want[1][1] == got[1][1] and torch.equal(a.isnan(), b.isnan()) and
                                            torch.equal(a.nan_to_num(), b.nan_to_num()))]
                    tally.compare(f"{dtype} {shape} {n!r} grad {grad}", w, g, *extra)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_self_dtype_number,)}
