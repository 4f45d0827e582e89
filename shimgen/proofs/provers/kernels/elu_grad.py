"""The prover of kernel `elu_grad` (shimgen/generate/routes/kernels/elu_grad.py): scalar.h's elu_grad_operands /
elu_grad_select (is_result=true), its addition by aten::sub.Tensor (`via`).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import (FLOATING, SHAPES, check_broadcast, in_range, nan_free, number_tensor, requires_grad_proxy,
                           sample)
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same_error_text


def elu_grad_select(grad_output, alpha, scale, input_scale, is_result, x):
    """scalar.h's elu_grad_operands and elu_grad_select, step by step."""
    if any(isinstance(n, complex) for n in (alpha, scale, input_scale)):
        raise Refused("complex")
    if is_result and not float(alpha) >= 0:
        raise RuntimeError(f"In-place elu backward calculation is triggered with a negative slope {ATEN_RAISES}")
    if not is_result:
        raise Refused("is_result=false")
    check_broadcast(grad_output, x)
    ct = torch.result_type(grad_output, x)
    if ct not in FLOATING:
        raise Refused("dtype")
    compute = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not all(in_range(n, compute) for n in (alpha, scale, input_scale)):
        raise Refused("number")
    if torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in (grad_output, x)):
        raise Refused("autograd")
    xc = x.to(ct).to(compute)
    if xc.isnan().any():
        raise Refused("nan")
    negcoef = aten("mul.Tensor")(number_tensor(alpha, compute), number_tensor(scale, compute))
    g = grad_output.to(ct).to(compute)
    shifted = aten("sub.Tensor")(xc, aten("neg")(negcoef))
    negative = aten("mul.Tensor")(aten("mul.Tensor")(g, number_tensor(input_scale, compute)), shifted)
    positive = aten("mul.Tensor")(g, number_tensor(scale, compute))
    mask = aten("le.Tensor")(xc, number_tensor(0, compute))
    return aten("where.self_out")(mask, negative, positive, out=negative).to(ct)  # in negative's layout: aten's


# (alpha, scale, input_scale): elu's default, selu's constants, celu's (1, 1/alpha), integers, a bool, zeros, a
# negative alpha (aten raises with is_result), out of float's range, inf, nan
ELU_NUMBERS = [(1, 1, 1), (1.0, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1), (0.5, 1, 2.0),
               (2.5, 1, 0.4), (0.1, 0.3, 0.7), (3, 2, -1), (True, 1, 1), (0, 1, 1), (1, 0, 0), (-1, 1, 1),
               (1, -2.5, 1e-3), (1e300, 1, 1), (1, 1e39, 1), (float("inf"), 1, 1), (1, 1, float("nan")),
               (2**40, 1, 1), (2**53 + 1, 1, 1)]
ELU_DTYPES = [(a, b) for a in FLOATING for b in FLOATING] + [
    (torch.int64, torch.float32), (torch.float32, torch.int64), (torch.int64, torch.int64),
    (torch.bool, torch.bool), (torch.complex64, torch.complex64), (torch.float32, torch.complex64),
    (torch.uint8, torch.float16), (torch.int32, torch.bfloat16)]


def elu_layouts(grad_shape, x_shape, dg, dx, k):
    """(label, grad_output, self_or_result) with the layouts aten's loop treats apart: contiguous, transposed,
    strided (no vectorized body), channels_last, broadcast."""
    g, x = sample(grad_shape, dg, 3 * k), sample(x_shape, dx, 3 * k + 1)
    yield "", g, x
    if len(grad_shape) == 2 and grad_shape == x_shape and grad_shape[0] > 1:
        gt, xt = sample(grad_shape[::-1], dg, 3 * k + 2), sample(grad_shape[::-1], dx, 3 * k)
        yield " transposed", gt.t(), xt.t()
        yield " transposed grad", gt.t(), x
        gs, xs = sample((grad_shape[0], 2 * grad_shape[1]), dg, k), sample((grad_shape[0], 2 * grad_shape[1]), dx, k + 1)
        yield " strided", gs[:, ::2], xs[:, ::2]
        yield " strided self", g, xs[:, 1::2]
    if len(grad_shape) == 4:
        yield " channels_last", g.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
        yield " channels_last self", g, x.to(memory_format=torch.channels_last)


def prove_elu_backward(op, s):
    """aten::elu_backward against the model on dtype pairs, shapes (the vectorized body and the scalar tail: 40,
    1001 and 100003 elements), layouts, numbers and is_result both ways, with and without NaN in self_or_result;
    results, dtypes, strides and errors; then autograd: in grad mode with an input requiring grad (refused), and
    under no_grad (computed)."""
    f = aten(op)
    tally = Tally()
    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((3, 1001), (3, 1001)), ((100003,), (100003,)),
                       ((2, 3, 4, 5), (2, 3, 4, 5)), ((7,), (2, 3)), ((2, 3), (7,))]

    def call(fn, g, x, n, is_result):
        return fn(g, n[0], n[1], n[2], is_result, x)

    def result(fn):
        o = outcome(fn)
        return o, (tuple(o[1].stride()) if o[0] == "ok" else None)

    for dg, dx in ELU_DTYPES:
        for k, (sg, sx) in enumerate(shapes):
            big = max(math.prod(sg), math.prod(sx)) > 1000
            for clean in (False, True):
                for label, g, x in elu_layouts(sg, sx, dg, dx, k):
                    if clean:
                        x = nan_free(x)
                    for n in (ELU_NUMBERS[:3] + ELU_NUMBERS[10:11] if big else ELU_NUMBERS):
                        for is_result in (True, False):
                            want, ws = result(lambda: call(f, g, x, n, is_result))
                            got, gs = result(lambda: call(elu_grad_select, g, x, n, is_result))
                            if want[0] == got[0] == "error" and not same_error_text(want, got) and not tally.wrong:
                                tally.wrong = f"{dg} {dx} {sg} {sx}{label} {n} {is_result}: {want[1]} vs {got[1]}"
                            tally.compare(f"{dg} {dx} {sg} {sx}{label} {n!r} is_result={is_result} clean={clean}",
                                          want, got, ws, gs)
    # autograd: aten records the call (elu_double_backward); the route refuses it, and computes it under no_grad
    for who in ("grad_output", "self_or_result"):
        for nonleaf in (False, True):
            for grad_mode in (True, False):
                def make(who=who, nonleaf=nonleaf):
                    v = {"grad_output": sample((6, 40), torch.float64, 5),
                         "self_or_result": nan_free(sample((6, 40), torch.float64, 6))}
                    leaf = v[who].clone().requires_grad_()
                    v[who] = leaf * 1 if nonleaf else leaf
                    return v
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = run(lambda: f(va["grad_output"], 1.5, 1.25, 0.5, True, va["self_or_result"]))
                    got = outcome(lambda: elu_grad_select(vb["grad_output"], 1.5, 1.25, 0.5, True,
                                                              vb["self_or_result"]))
                if grad_mode:  # the route must refuse: it would differentiate itself, not as aten does
                    if got[0] != "refused" and not tally.wrong:
                        tally.wrong = f"autograd {who} non-leaf {nonleaf}: not refused"
                    tally.compare(f"autograd {who}", want, got)
                else:
                    if want[0] == "ok":  # a result without history, as aten's under no_grad
                        want = ("ok", want[1].detach())
                    tally.compare(f"no_grad {who} non-leaf {nonleaf}", want, got)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_elu_backward,)}
