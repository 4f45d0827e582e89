"""The prover of kernel `gelu_addmm` (shimgen/generate/routes/kernels/gelu_addmm.py): gelu with approximate "none" on
a contiguous CPU tensor as aten::_addmm_activation with an empty product (aten's CPU C shim of it, in the wrapper),
on a running libtorch before 2.14; every other call is the dispatcher's (aten's op from 2.14, refused before).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import observed, overlaps, prover_module, requires_grad_proxy, shares_memory
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, weights

FLOATING = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def gelu_addmm(x, approximate):
    """The generated wrapper (kernels/gelu_addmm.h gelu_by_addmm, gelu_addmm; then the dispatcher's guarded form)."""
    if RELEASE >= (2, 14):
        return aten("gelu.default")(x, approximate=approximate)
    if _by_addmm(x, approximate):
        return _computed(x)
    raise Refused("the dispatcher's str leaks before libtorch 2.14")


def _by_addmm(x, approximate):
    """kernels/gelu_addmm.h gelu_by_addmm."""
    records = torch.is_grad_enabled() and x.requires_grad
    return approximate == "none" and x.device.type == "cpu" and x.dtype in FLOATING and x.is_contiguous() \
        and not records


def _computed(x):
    """kernels/gelu_addmm.h gelu_addmm: the empty product through aten::_addmm_activation."""
    n = x.numel()
    row = x.as_strided((1, n), (n, 1))
    result = aten("_addmm_activation.default")(row, x.new_empty((1, 0)), x.new_empty((0, n)), beta=1, alpha=1,
                                               use_gelu=True)
    return result.as_strided(x.shape, torch.empty(x.shape).stride())


def gelu_addmm_inplace(x, approximate):
    """The generated gelu_ (the row's `form: inplace`): the same computation, then compositions.h assign_inplace
    (gelu's result dtype is self's; no other input) into self."""
    if RELEASE >= (2, 14):
        return aten("gelu_.default")(x, approximate=approximate)
    if _by_addmm(x, approximate):
        return x.copy_(_computed(x))
    raise Refused("the dispatcher's str leaks before libtorch 2.14")


def gelu_addmm_out(x, approximate, out):
    """The generated gelu.out (the row's `form: out`): on a contiguous out, out_inplace.h check_out_autograd, the
    same computation, then assign_out with gelu's same-dtype check (mirror_common.assign_out's rules)."""
    if RELEASE >= (2, 14):
        return aten("gelu.out")(x, approximate=approximate, out=out)
    if not (_by_addmm(x, approximate) and out.is_contiguous()):
        raise Refused("the dispatcher's str leaks before libtorch 2.14")
    if torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in (out, x)):
        raise RuntimeError(f"out= and an input requires grad {ATEN_RAISES}")
    result = _computed(x)
    if result.dtype != out.dtype:
        raise RuntimeError(f"the result's dtype is not out's {ATEN_RAISES}")
    resize = out.shape != result.shape
    if any(n > 1 and st == 0 for n, st in zip(out.shape, out.stride())):
        raise Refused("out writes an element twice")
    if overlaps(out, x) if resize else shares_memory(out, x):
        raise Refused("overlap")
    if not resize:
        out.copy_(result)
    else:
        aten("where.self_out")(torch.tensor(True), result, result, out=out)
    return out


def _inputs(dtype):
    """(label, tensor): lengths around the vectorized body's steps and the thread pool's split (aten's gelu splits
    above 16,384 elements), specials in the body and in the tail, a 0-dim and an empty tensor, contiguous tensors of
    several shapes (one with a storage offset), and strided ones (left to the dispatcher)."""
    g = torch.Generator().manual_seed(11)
    for numel in (0, 1, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 1000, 16383, 16384, 16385, 20000, 32768,
                  32769, 40001, 100003):
        t = torch.randn(numel, generator=g, dtype=torch.float64) * 4
        if numel > 8:
            t[:6] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30], dtype=torch.float64)
            t[-1] = float("nan")
            t[numel // 2] = -8.5
        yield f"[{numel}]", t.to(dtype)
    yield "0-dim", torch.tensor(-0.75, dtype=dtype)
    base = (torch.randn(6, 5, 4, generator=g, dtype=torch.float64) * 3).to(dtype)
    yield "[6, 5, 4]", base
    yield "offset", torch.empty(50, dtype=dtype)[7:37].view(5, 6).copy_(base.flatten()[:30].view(5, 6))
    yield "transposed", base.transpose(0, 2)
    yield "sliced", base[:, :3]


def prove_gelu_addmm(op, s):
    """aten::gelu against the wrapper's model on every input (_inputs) in float32, float64, bfloat16, float16 and
    int64, approximate "none", "tanh" and an unknown string; results, dtypes, strides and errors; in grad mode on a
    leaf and a non-leaf that require grad (refused before 2.14: aten::_addmm_activation has no derivative; from 2.14
    aten's op, whose float64 gradients are compared)."""
    f = aten(op)
    t = Tally()
    for dtype in (*FLOATING, torch.int64):
        for label, x in _inputs(dtype):
            # "tanh" with a value kernel (the row's `value_kernels`): the compiled wrapper, below (cpu_activation)
            for approximate in ("none", "exact") if s.get("library") else ("none", "tanh", "exact"):
                want = run(lambda: f(x, approximate=approximate))
                got = outcome(lambda: gelu_addmm(x, approximate))
                extra = [r[1].stride() if r[0] == "ok" else None for r in (want, got)]
                t.compare(f"{dtype} {label} {approximate!r}", want, got, *extra)
    for nonleaf in (False, True):
        grads = []
        for fn in (lambda v: f(v, approximate="none"), lambda v: gelu_addmm(v, "none")):
            def backward(fn=fn):
                g = torch.Generator().manual_seed(3)
                leaf = (torch.randn(7, 9, generator=g, dtype=torch.float64) * 3).requires_grad_()
                v = leaf * 1 if nonleaf else leaf
                r = fn(v)
                (r * weights(r)).sum().backward()
                return torch.cat([r.detach().flatten(), leaf.grad.flatten()])
            grads.append(outcome(backward))
        t.compare(f"gradient nonleaf {nonleaf}", *grads)
    return _with_value_kernels(op, s, t.report())


def _with_value_kernels(op, s, report):
    """The report with the row's value kernels' (its `library`: the wrapper itself at each capability and thread
    count, kernels/cpu_activation.h; the row's `form` runs its overload's own cases) added."""
    if s.get("library"):
        value = prover_module("cpu_activation").prove_cpu_activation(op, s)
        if not value.get("skipped"):  # a runtime older than the target: the wrapper does not load there
            for k in ("compared", "both_ok", "refused"):
                report[k] += value[k]
            report["wrong"] = report["wrong"] or value["wrong"]
    return report


def prove_gelu_addmm_inplace(op, s):
    """aten::gelu_ against the wrapper's model (gelu_addmm_inplace) on the functional's inputs (_inputs) in each
    dtype and approximate string, in and out of grad mode; self a leaf and a non-leaf requiring grad (float64
    gradients where both compute): values, self's strides afterwards, errors."""
    f = aten(op)
    t = Tally()
    for dtype in (*FLOATING, torch.int64):
        for label, x in _inputs(dtype):
            # "tanh" with a value kernel (the row's `value_kernels`): the compiled wrapper (_with_value_kernels)
            for approximate in ("none", "exact") if s.get("library") else ("none", "tanh", "exact"):
                a, b = x.clone(memory_format=torch.preserve_format), x.clone(memory_format=torch.preserve_format)
                if not x.is_contiguous():  # the very layout: a strided self
                    a = torch.empty_strided(x.shape, x.stride(), dtype=dtype).copy_(x)
                    b = torch.empty_strided(x.shape, x.stride(), dtype=dtype).copy_(x)
                want = run(lambda: f(a, approximate=approximate))
                got = outcome(lambda: gelu_addmm_inplace(b, approximate))
                extra = [(r[1] is s_, s_.stride()) if r[0] == "ok" else None for r, s_ in ((want, a), (got, b))]
                t.compare(f"{dtype} {label} {approximate!r}", want, got, *extra)
    for nonleaf in (False, True):
        for grad_mode in (False, True):
            outs = []
            for fn in (lambda v: f(v, approximate="none"), lambda v: gelu_addmm_inplace(v, "none")):
                def call(fn=fn):
                    g = torch.Generator().manual_seed(3)
                    leaf = (torch.randn(7, 9, generator=g, dtype=torch.float64) * 3).requires_grad_()
                    with torch.set_grad_enabled(grad_mode):
                        v = leaf * 1 if nonleaf else leaf
                        r = fn(v)
                    if grad_mode and nonleaf:
                        (r * weights(r)).sum().backward()
                        return torch.cat([r.detach().flatten(), leaf.grad.flatten()])
                    return r.detach().clone()
                outs.append(outcome(call))
            t.compare(f"self requires grad, non-leaf {nonleaf}, grad mode {grad_mode}", *outs)
    return _with_value_kernels(op, s, t.report())


def prove_gelu_addmm_out(op, s):
    """aten::gelu.out against the wrapper's model (gelu_addmm_out) on the functional's inputs in each dtype and
    approximate string, with outs of the result's sizes, empty, non-empty to be resized (aten's warning), transposed,
    expanded, of other dtypes, and out the input itself; an input or out requiring grad in and out of grad mode:
    values, out's strides afterwards, whether out is returned, the warnings, errors."""
    f = aten(op)
    t = Tally()

    def outs(x):
        shape, d = tuple(x.shape), x.dtype
        yield "exact", lambda: torch.empty(shape, dtype=d)
        yield "empty", lambda: torch.empty(0, dtype=d)
        yield "non-empty resized", lambda: torch.zeros(7, dtype=d)
        if len(shape) >= 2:
            yield "transposed", lambda: torch.zeros(tuple(reversed(shape)), dtype=d).transpose(0, len(shape) - 1)
            yield "expanded", lambda: torch.zeros((1, *shape[1:]), dtype=d).expand(shape)
        for other in (torch.float32, torch.float64, torch.int64):
            if other != d:
                yield f"dtype {other}", lambda other=other: torch.zeros(shape, dtype=other)

    for dtype in (*FLOATING, torch.int64):
        for label, x in _inputs(dtype):
            if x.numel() > 40001:
                continue
            for approximate in ("none",) if s.get("library") else ("none", "tanh"):
                for kind, make in outs(x):
                    oa, ob = make(), make()
                    want = observed(lambda: f(x, approximate=approximate, out=oa), oa)
                    got = observed(lambda: gelu_addmm_out(x, approximate, ob), ob)
                    t.compare(f"{dtype} {label} {approximate!r} out {kind}", want[0], got[0], want[1], got[1])
    for shape in ((2, 3), (5,)):  # out is the input itself (the very same view)
        a = torch.randn(shape)
        b = a.clone()
        want = observed(lambda: f(a, approximate="none", out=a), a)
        got = observed(lambda: gelu_addmm_out(b, "none", b), b)
        t.compare(f"out is self {shape}", want[0], got[0], want[1], got[1])
    for who in ("self", "out"):
        for grad_mode in (True, False):
            def made(which):
                x = torch.randn(2, 3, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
                o = torch.zeros(2, 3, dtype=torch.float64)
                with torch.enable_grad():
                    if who == "self":
                        x = x.requires_grad_() * 1
                    else:
                        o = o.requires_grad_()
                return x, o
            (xa, oa), (xb, ob) = made(0), made(1)
            with torch.set_grad_enabled(grad_mode):
                want = observed(lambda: f(xa, approximate="none", out=oa), oa)
                got = observed(lambda: gelu_addmm_out(xb, "none", ob), ob)
            t.compare(f"{who} requires grad, grad mode {grad_mode}", want[0], got[0], want[1], got[1])
    return _with_value_kernels(op, s, t.report())


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_gelu_addmm, prove_gelu_addmm_inplace, prove_gelu_addmm_out)}
