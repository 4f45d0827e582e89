"""The prover of kernel `add_relu` (shimgen/generate/routes/kernels/add_relu.py): scalar.h's add_relu_operands /
add_relu_select around add.Tensor's wrapper (`via`), mirrored call by call.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import SHAPES, check_broadcast, in_range, nan_free, number_tensor, requires_grad_proxy, sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same_error_text


ADD_RELU_LIMITS = {torch.int8: 2**7 - 1, torch.int16: 2**15 - 1, torch.int32: 2**31 - 1, torch.int64: 2**63 - 1,
                   torch.float32: torch.finfo(torch.float32).max, torch.float64: torch.finfo(torch.float64).max}
ADD_RELU_KERNEL = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32, torch.float64)


def add_relu_select(self, other, alpha=1):
    """scalar.h's add_relu_operands and add_relu_select, step by step."""
    check_broadcast(self, other)
    if self.dtype not in ADD_RELU_LIMITS:
        raise RuntimeError(f"Unsupported datatype for add_relu {ATEN_RAISES}")
    limit = ADD_RELU_LIMITS[self.dtype]
    t = torch.result_type(self, other)
    if t not in ADD_RELU_KERNEL:
        raise Refused("dtype")  # scalar.h: no_kernel (aten raises)
    floating = t.is_floating_point
    if self.dtype.is_floating_point:
        if t == torch.float32 and limit > torch.finfo(torch.float32).max:
            raise RuntimeError(f"value cannot be converted to type float without overflow {ATEN_RAISES}")
        hi = float(limit)
    elif floating:
        hi = float(torch.tensor(limit, dtype=torch.int64).to(t)) if t == torch.float32 else float(limit)
    else:
        hi = limit
        if not in_range(hi, t):
            raise RuntimeError(f"value cannot be converted without overflow {ATEN_RAISES}")
    if isinstance(alpha, complex) or float(alpha) != 1:
        raise Refused("alpha")
    if torch.is_grad_enabled() and any(requires_grad_proxy(x) for x in (self, other)):
        raise Refused("autograd")
    total = aten("add.Tensor")(self, other)  # add.Tensor's wrapper: proven equal to aten's add (its own rows)
    lo = number_tensor(0, t)
    if floating and (aten("logical_or")(aten("isnan")(total), aten("logical_and")(
            aten("eq.Tensor")(total, lo), aten("signbit")(total)))).any():
        raise Refused("nan or -0.0")
    return aten("clamp.Tensor")(total, lo, number_tensor(hi, t))


ADD_RELU_DTYPES = [(a, b) for a in (torch.float32, torch.float64, torch.int64, torch.int32, torch.int8, torch.int16)
                   for b in (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8)] + [
    (torch.uint8, torch.uint8), (torch.bool, torch.bool), (torch.float16, torch.float16),
    (torch.bfloat16, torch.float32), (torch.int32, torch.float16), (torch.complex64, torch.complex64),
    (torch.int32, torch.uint16)]


def add_relu_pairs(sa, sb, da, db, k):
    """(label, self, other) with layouts aten's loop treats apart; values with sums that overflow the
    dtypes' bounds (int8 + int8, float32 near its largest value) and exact -0.0 + -0.0."""
    a, b = sample(sa, da, 3 * k), sample(sb, db, 3 * k + 1)
    yield "", a, b
    if len(sa) == 2 and sa == sb and sa[0] > 1:
        yield " transposed", sample(sa[::-1], da, k).t(), sample(sa[::-1], db, k + 2).t()
        yield " transposed self", sample(sa[::-1], da, k).t(), b
        yield " strided", sample((sa[0], 2 * sa[1]), da, k)[:, ::2], sample((sa[0], 2 * sa[1]), db, k + 1)[:, 1::2]
    if len(sa) == 4:
        yield " channels_last", a.to(memory_format=torch.channels_last), b
    if da in (torch.int8, torch.int16, torch.int32, torch.int64) and db == da and a.numel() > 2:
        big = torch.iinfo(da).max
        yield " overflow", torch.full(sa, big, dtype=da), torch.full(sb, 2, dtype=db)  # wraps, then clamps
    if da in (torch.float32, torch.float64) and db in (torch.float32, torch.float64) and a.numel() > 2:
        yield " near max", torch.full(sa, torch.finfo(da).max, dtype=da), torch.full(
            sb, torch.finfo(torch.float32).max / 2, dtype=db)


def prove_add_relu(op, s):
    """aten::_add_relu.Tensor against the model: dtype pairs, shapes (40, 1001 and 100003 elements: the vectorized
    body and the scalar tail), layouts, alphas, with and without NaN; values, dtype and strides, errors; then
    autograd (refused where aten records the call; computed under no_grad)."""
    f = aten(op)
    tally = Tally()
    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((3, 1001), (3, 1001)), ((100003,), (100003,)),
                       ((2, 3, 4, 5), (2, 3, 4, 5)), ((7,), (2, 3))]

    def result(fn):
        o = outcome(fn)
        return o, (tuple(o[1].stride()) if o[0] == "ok" else None)

    for da, db in ADD_RELU_DTYPES:
        for k, (sa, sb) in enumerate(shapes):
            for clean in (False, True):
                for label, a, b in add_relu_pairs(sa, sb, da, db, k):
                    if clean:
                        a, b = nan_free(a), nan_free(b)
                    for alpha in ((1, 1.0, True, 2, 0.5) if not clean else (1,)):
                        want, ws = result(lambda: f(a, b, alpha=alpha))
                        got, gs = result(lambda: add_relu_select(a, b, alpha))
                        label_ = f"{da} {db} {sa} {sb}{label} alpha={alpha!r} clean={clean}"
                        if want[0] == got[0] == "error" and not same_error_text(want, got) and not tally.wrong:
                            tally.wrong = f"{label_}: {want[1]} vs {got[1]}"
                        tally.compare(label_, want, got, ws, gs)
    for who in (0, 1):
        for nonleaf in (False, True):
            for grad_mode in (True, False):
                def make(who=who, nonleaf=nonleaf):
                    v = [nan_free(sample((6, 40), torch.float64, 5)), nan_free(sample((6, 40), torch.float64, 6))]
                    leaf = v[who].clone().requires_grad_()
                    v[who] = leaf * 1 if nonleaf else leaf
                    return v
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = run(lambda: f(*va))
                    got = outcome(lambda: add_relu_select(*vb))
                if grad_mode:  # aten records a node whose backward raises; the route must refuse
                    if got[0] != "refused" and not tally.wrong:
                        tally.wrong = f"autograd input {who} non-leaf {nonleaf}: not refused"
                    tally.compare(f"autograd {who}", want, got)
                else:
                    tally.compare(f"no_grad {who} non-leaf {nonleaf}", ("ok", want[1].detach()) if want[0] == "ok"
                                  else want, got)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_add_relu,)}
