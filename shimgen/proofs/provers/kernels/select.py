"""The provers of the elementwise select kernels (shimgen/generate/routes/kernels/select.py): scalar.h's
<kernel>_select mirrored call by call (`MIRRORS`, named by the spec's `mirror`), proven by prove_kernel
(threshold, leaky_relu, clamp, hardshrink), prove_scatter_fill, and prove_select (softshrink and the backward
kernels, whose samples leave NaN out).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import DTYPES, FLOATING, NUMBERS, SHAPES, check_broadcast, in_range, nan_free, number_tensor, sample
from worker_common import ATEN_RAISES, Refused, aten, outcome, run, same, same_error_text, weights


# ---- kernels `threshold`, `leaky_relu`, `clamp`, `hardshrink` (prove_kernel): scalar.h's <kernel>_select ----

THRESHOLD_KERNEL = {torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                    torch.float32, torch.float64}


def threshold_select(x, other, threshold, value):
    ct = torch.result_type(x, other)
    if ct not in THRESHOLD_KERNEL:
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(threshold, cmp) or not in_range(value, ct):
        raise Refused("number")
    mask = aten("le.Tensor")(x.to(ct).to(cmp), number_tensor(threshold, cmp))
    return aten("where.self")(mask, number_tensor(value, ct), other.to(ct))


def leaky_relu_select(x, other, negative_slope, self_is_result):
    ct = torch.result_type(x, other)
    if ct not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(negative_slope, cmp):
        raise Refused("number")
    if self_is_result and float(negative_slope) < 0:
        raise RuntimeError(f"in-place backward, negative slope {ATEN_RAISES}")
    mask = aten("gt.Tensor")(x.to(ct).to(cmp), number_tensor(0, cmp))
    o = other.to(ct).to(cmp)
    o = aten("expand_as")(o, aten("where.self")(mask, o, o))  # scalar.h: one reduction of a broadcast gradient
    return aten("where.self")(mask, o, aten("mul.Tensor")(o, number_tensor(negative_slope, cmp))).to(ct)


def hardtanh_backward_select(x, other, min_val, max_val):
    check_broadcast(other, x)  # scalar.h: aten's operand order, grad_output then self
    ct = torch.result_type(other, x)
    if ct not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(min_val, cmp) or not in_range(max_val, cmp):
        raise Refused("number")
    xc = x.to(ct).to(cmp)
    if xc.isnan().any():  # scalar.h's refuse_nan: aten's answer there depends on the element's position
        raise Refused("nan")
    inside = aten("logical_and")(aten("gt.Tensor")(xc, number_tensor(min_val, cmp)),
                                 aten("lt.Tensor")(xc, number_tensor(max_val, cmp)))
    return aten("where.self")(inside, other.to(ct), number_tensor(0, ct))


def clamp_select(x, min_val, max_val):
    """scalar.h's clamp_select (hardtanh): the bounds in x's dtype (truncated to integers first for an integral x),
    `min < x < max ? x : clamp(detach(x), min, max)`."""
    t = x.dtype
    if t not in THRESHOLD_KERNEL:
        raise Refused("dtype")

    def bound(b):
        if not t.is_floating_point:
            if isinstance(b, complex) or not abs(float(b)) < 9.2e18:
                raise Refused("number")
            b = int(b)
        if not in_range(b, t):
            raise Refused("number")
        return number_tensor(b, t)
    lo, hi = bound(min_val), bound(max_val)
    inside = aten("logical_and")(aten("gt.Tensor")(x, lo), aten("lt.Tensor")(x, hi))
    return aten("where.self")(inside, x, aten("clamp.Tensor")(x.detach(), lo, hi))


def hardshrink_select(x, lambd):
    """scalar.h's hardshrink_select: `-lambd <= x <= lambd ? 0 : x` in x's dtype (half and bfloat16 too)."""
    t = x.dtype
    if t not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    if not in_range(lambd, t):
        raise Refused("number")
    inside = aten("logical_and")(aten("ge.Tensor")(x, number_tensor(-float(lambd), t)),
                                 aten("le.Tensor")(x, number_tensor(lambd, t)))
    return aten("where.self")(inside, number_tensor(0, t), x)


# A row's `nan_gradient` (its registry entry's, shimgen/generate/routes/kernels/select.py: clamp, hardshrink): the
# kernel's aten backward (hardtanh_backward, shrink_backward) gives at a NaN input 0 in its vectorized loop and the
# incoming gradient in its scalar loop (the element's position decides, not its value: measured on every runtime):
# its gradients are compared wherever the input is not NaN.

def prove_kernel(op, s):
    """An elementwise kernel (`mirror`: scalar.h's <kernel>_select, mirrored above) against aten's op on every
    dtype pair, shape, number, and in its float64 gradients."""
    f, kernel = aten(op), MIRRORS[s["mirror"]]
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if a not in tensors]
    compared = both_ok = refused = 0
    wrong = ""

    def mine(values):
        return kernel(*(values[b] if isinstance(b, str) else b for b in s["bind"]))

    for da in DTYPES:
        for db in (DTYPES if len(tensors) > 1 else [da]):
            for k, shapes in enumerate(SHAPES):
                for n in NUMBERS:
                    values = {a: sample(sh, d, 3 * k + i)
                              for i, (a, sh, d) in enumerate(zip(tensors, shapes, (da, db)))}
                    for j, name in enumerate(numbers):  # a second number: the first negated (min/max)
                        values[name] = (bool(k % 2) if s["types"].get(name) == "bool" else
                                        -n if j and not isinstance(n, bool) else n)
                    want = run(lambda: f(**values))
                    got = outcome(lambda: mine(values))
                    compared += 1
                    if got[0] == "refused":
                        refused += 1
                        continue
                    both_ok += want[0] == got[0] == "ok"
                    if not same(want, got) and not wrong:
                        wrong = f"{da} {db} {shapes} {n!r}: {want[0]} vs {got[0]}"
                    if da == db == torch.float64 and want[0] == got[0] == "ok":
                        grads = []
                        for fn in (lambda v: f(**v), mine):
                            leaves = {a: values[a].clone().requires_grad_() for a in tensors}
                            r = fn(dict(values, **leaves))
                            (r * weights(r)).sum().backward()
                            # a gradient autograd never reached is zero (aten's formula gives zeros_like)
                            grads.append([leaves[a].grad if leaves[a].grad is not None else
                                          torch.zeros_like(leaves[a]) for a in tensors])
                        for a, ga, gb in zip(tensors, *grads):
                            if s["nan_gradient"]:
                                keep = ~values[a].isnan()
                                ga, gb = ga[keep], gb[keep]
                            if not same(("ok", ga), ("ok", gb)) and not wrong:
                                wrong = f"gradient {shapes} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `scatter_fill`: scatter with a number as scatter.src of it expanded ----

def scatter_fill_select(self, dim, index, value):
    """scalar.h's scatter_fill_select."""
    if self.dtype in (torch.uint16,) or not in_range(value, self.dtype):
        raise Refused("number")
    return aten("scatter.src")(self, dim, index, number_tensor(value, self.dtype).expand_as(index))


def prove_scatter_fill(op, s):
    """aten's op against scatter_fill_select: every dtype, shapes (index smaller than self, 0-dim, empty), dims
    (negative, out of range), indices out of range, every number; float64 gradients."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    numbers = [0, 1, -1, 2.5, 2.0, 0.1, -0.0, 1e10, 1e300, float("inf"), float("nan"), True, 300, -129, 2**40,
               1 + 2j]
    cases = [((3, 4), (2, 3), 1), ((3, 4), (2, 3), 0), ((3, 4), (3, 4), -1), ((), (), 0), ((5,), (0,), 0),
             ((3, 4), (2, 3), 2), ((4, 5), (4, 5), 1)]
    for d in DTYPES:
        for k, (shape, ishape, dim) in enumerate(cases):
            g = torch.Generator().manual_seed(k)
            size = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
            index = torch.randint(0, size + (k == 6), ishape, generator=g)  # case 6: an index out of range
            for n in numbers:
                v = {"self": sample(shape, d, k), "dim": dim, "index": index, "value": n}
                want = run(lambda: f(**v))
                got = outcome(lambda: scatter_fill_select(**v))
                compared += 1
                if got[0] == "refused":
                    refused += 1
                    continue
                both_ok += want[0] == got[0] == "ok"
                if not same(want, got) and not wrong:
                    wrong = f"{d} {shape} {ishape} {dim} {n!r}: {want[0]} {want[1] if want[0] == 'error' else ''} " \
                            f"vs {got[0]} {got[1] if got[0] == 'error' else ''}"
                if d == torch.float64 and want[0] == got[0] == "ok":
                    grads = []
                    for fn in (lambda x: f(**dict(v, self=x)), lambda x: scatter_fill_select(**dict(v, self=x))):
                        x = v["self"].clone().requires_grad_()
                        r = fn(x)
                        (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                        grads.append(x.grad)
                    if not same(("ok", grads[0]), ("ok", grads[1])) and not wrong:
                        wrong = f"gradient {shape} {ishape} {dim} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernels `softshrink`, `shrink_grad`, `hardtanh_backward` (prove_select): scalar.h's softshrink_select,
# shrink_grad_select, hardtanh_backward_select ----

def softshrink_select(x, lambd):
    """scalar.h's softshrink_select: in x's dtype (float for half and bfloat16, lambd a float), `x > lambd ? x - lambd
    : x < -lambd ? x - (-lambd) : 0`, the subtractions by aten::sub.Tensor (its wrapper's route)."""
    t = x.dtype
    if t not in FLOATING:
        raise Refused("dtype")
    if isinstance(lambd, complex):
        raise Refused("number")
    if not float(lambd) >= 0:  # scalar.h: a `shimgen:` error (aten raises, worded by release)
        raise Refused("negative lambd")
    compute = torch.float32 if t in (torch.float16, torch.bfloat16) else t
    if not in_range(lambd, t):  # self's dtype: aten checks lambd against its range (from 2.10)
        raise Refused("number")
    if compute != t and not reduced_holds(float(lambd), t):  # aten's kernel changed in 2.14
        raise Refused("number")
    xc = x.to(compute)
    hi, lo = number_tensor(lambd, compute), number_tensor(-float(lambd), compute)
    inside = aten("logical_and")(aten("ge.Tensor")(xc, lo), aten("le.Tensor")(xc, hi))
    sub = aten("sub.Tensor")
    shrunk = aten("where.self")(aten("gt.Tensor")(xc, hi), sub(xc, hi), sub(xc, lo))
    return aten("where.self")(inside, number_tensor(0, compute), shrunk).to(t)


def reduced_holds(v, t):
    """scalar.h's reduced_holds: does half (bfloat16) hold v exactly (bfloat16: normal numbers only)?"""
    a = abs(v)
    if a == 0:
        return True
    half = t == torch.float16
    if not math.isfinite(a) or a > (65504.0 if half else 3.3895313892515355e38):
        return False
    if half and a < 6.103515625e-05:
        return math.ldexp(a, 24) == math.floor(math.ldexp(a, 24))
    if not half and a < math.ldexp(1.0, -126):
        return False
    s = math.ldexp(math.frexp(a)[0], 11 if half else 8)
    return s == math.floor(s)


def shrink_grad_select(grad_output, x, lambd):
    """scalar.h's shrink_grad_select: `-lambd <= x <= lambd ? 0 : grad_output` over the common dtype, lambd in
    it; a NaN in x refused."""
    check_broadcast(grad_output, x)
    ct = torch.result_type(grad_output, x)
    if ct not in FLOATING:
        raise Refused("dtype")
    if not in_range(lambd, ct):
        raise Refused("number")
    xc = x.to(ct)
    if xc.isnan().any():
        raise Refused("nan")
    inside = aten("logical_and")(aten("ge.Tensor")(xc, number_tensor(-float(lambd), ct)),
                                 aten("le.Tensor")(xc, number_tensor(lambd, ct)))
    return aten("where.self")(inside, number_tensor(0, ct), grad_output.to(ct))


def prove_select(op, s):
    """main's comparison for the kernels of this section, on the samples main uses and on the same samples without
    NaN and larger ((6, 40): the vectorized body and the scalar tail of every dtype), errors included; float64
    gradients (compared where the input is not NaN for softshrink, as a row's `nan_gradient`)."""
    f, kernel = aten(op), MIRRORS[s["mirror"]]
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if a not in tensors]
    compared = both_ok = refused = 0
    wrong = ""

    def mine(values):
        return kernel(*(values[b] if isinstance(b, str) else b for b in s["bind"]))

    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((7,), (2, 3)), ((2, 3), (7,))]  # mismatched: errors
    for clean in (False, True):
        for da in DTYPES:
            for db in (DTYPES if len(tensors) > 1 else [da]):
                for k, sh in enumerate(shapes):
                    for n in NUMBERS:
                        values = {a: sample(x, d, 3 * k + i) for i, (a, x, d) in enumerate(zip(tensors, sh, (da, db)))}
                        if clean:
                            values = {a: nan_free(v) for a, v in values.items()}
                        for j, name in enumerate(numbers):  # a second number: the first negated (min/max)
                            values[name] = -n if j and not isinstance(n, bool) else n
                        if len(numbers) == 2 and clean:  # bounds in order: a non-empty interval
                            values[numbers[0]], values[numbers[1]] = (-n, n) if not isinstance(n, bool) else (0, n)
                        want = run(lambda: f(**values))
                        got = outcome(lambda: mine(values))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        # an error must be aten's own: its message, as the verify harness asks
                        if not same_error_text(want, got) and not wrong:
                            wrong = f"{da} {db} {sh} {n!r} clean={clean}: {want[0]} " \
                                    f"{want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                                    f"{got[1] if got[0] == 'error' else ''}"
                        if da == db == torch.float64 and want[0] == got[0] == "ok":
                            grads = []
                            for fn in (lambda v: f(**v), mine):
                                leaves = {a: values[a].clone().requires_grad_() for a in tensors}
                                r = fn(dict(values, **leaves))
                                (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                                grads.append([leaves[a].grad if leaves[a].grad is not None else
                                              torch.zeros_like(leaves[a]) for a in tensors])
                            for a, ga, gb in zip(tensors, *grads):
                                if s["nan_gradient"]:
                                    keep = ~values[a].isnan()
                                    ga, gb = ga[keep], gb[keep]
                                if not same(("ok", ga), ("ok", gb)) and not wrong:
                                    wrong = f"gradient {sh} {n!r} clean={clean}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_kernel, prove_scatter_fill, prove_select)}
# scalar.h's selects as the hooks call them, named by the spec's `mirror`
MIRRORS = {f.__name__: f for f in (
    threshold_select, leaky_relu_select, hardtanh_backward_select, clamp_select, hardshrink_select, scatter_fill_select,
    softshrink_select, shrink_grad_select)}
