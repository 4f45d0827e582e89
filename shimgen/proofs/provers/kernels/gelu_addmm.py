"""The prover of kernel `gelu_addmm` (shimgen/generate/routes/kernels/gelu_addmm.py): gelu with approximate "none" on
a contiguous CPU tensor as aten::_addmm_activation with an empty product (aten's CPU C shim of it, in the wrapper),
on a running libtorch before 2.14; every other call is the dispatcher's (aten's op from 2.14, refused before).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import prover_module
from worker_common import Refused, Tally, aten, outcome, run, weights

FLOATING = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def gelu_addmm(x, approximate):
    """The generated wrapper (kernels/gelu_addmm.h gelu_by_addmm, gelu_addmm; then the dispatcher's guarded form)."""
    if RELEASE >= (2, 14):
        return aten("gelu.default")(x, approximate=approximate)
    records = torch.is_grad_enabled() and x.requires_grad
    if approximate == "none" and x.device.type == "cpu" and x.dtype in FLOATING and x.is_contiguous() \
            and not records:
        n = x.numel()
        row = x.as_strided((1, n), (n, 1))
        result = aten("_addmm_activation.default")(row, x.new_empty((1, 0)), x.new_empty((0, n)), beta=1, alpha=1,
                                                   use_gelu=True)
        return result.as_strided(x.shape, torch.empty(x.shape).stride())
    raise Refused("the dispatcher's str leaks before libtorch 2.14")


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
    report = t.report()
    if s.get("library"):  # the value kernels: the wrapper itself at each capability and thread count
        value = prover_module("cpu_activation").prove_cpu_activation(op, s)
        if not value.get("skipped"):  # a runtime older than the target: the wrapper does not load there
            for k in ("compared", "both_ok", "refused"):
                report[k] += value[k]
            report["wrong"] = report["wrong"] or value["wrong"]
    return report


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_gelu_addmm,)}
