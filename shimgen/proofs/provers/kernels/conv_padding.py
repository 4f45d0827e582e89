"""The prover of kernel `conv_padding` (shimgen/generate/routes/kernels/conv_padding.py): conv1d/2d/3d with a padding
string as aten's Convolution.cpp computes them, by the same aten calls.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, weights


def conv_padding(spatial, func, v):
    """The generated wrapper: scalar.h conv_padding_plan's checks and paddings, then unsqueeze, pad ("constant"),
    convolution and squeeze, as the row's `calls` name them."""
    x, w = v["input"], v["weight"]
    unbatched = spatial + 1
    batched = x.dim() == unbatched + 1
    if x.dim() != unbatched and not batched:
        raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to {func}, but got "
                           f"input of size: {list(x.shape)} {ATEN_RAISES}")
    if x.is_complex():
        raise Refused("complex")
    sizes = list(x.shape) if batched else [1, *x.shape]
    padding, stride, dilation, groups = v["padding"], v["stride"], v["dilation"], v["groups"]
    pad = []
    if padding == "valid":
        conv_padding_, output_padding = [0], [0]
    elif padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}' {ATEN_RAISES}")
    else:
        k = w.dim()
        dim = k - 2
        if dim <= 0:
            raise RuntimeError(f"weight should have at least three dimensions {ATEN_RAISES}")
        if groups <= 0:
            raise RuntimeError(f"non-positive groups is not supported {ATEN_RAISES}")
        if k != len(sizes):
            raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight{list(w.shape)}, but got "
                               f"{len(sizes)}-dimensional input of size {sizes} instead {ATEN_RAISES}")
        if len(stride) not in (dim, 1):
            raise RuntimeError(f"stride cannot broadcast to {dim} dimensions {ATEN_RAISES}")
        if len(dilation) not in (dim, 1):
            raise RuntimeError(f"dilation cannot broadcast to {dim} dimensions {ATEN_RAISES}")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"padding='same' is not supported for strided convolutions {ATEN_RAISES}")
        pad = [0] * (2 * dim)
        conv_padding_ = []
        symmetric = True
        for i in range(dim):
            d = dilation[0] if len(dilation) == 1 else dilation[i]
            total = d * (w.shape[i + 2] - 1)
            left, right = total // 2, total - total // 2
            conv_padding_.append(left)
            symmetric = symmetric and left == right
            at = 2 * (dim - 1 - i)
            if right - left > 0:
                pad[at + 1] = right - left
            else:
                pad[at] = right - left
                conv_padding_[i] = right
        if symmetric:
            pad = []
        output_padding = [0] * dim
    t = x if batched else aten("unsqueeze.default")(x, 0)
    if pad:
        t = aten("pad.default")(t, pad, "constant", None)
    out = aten("convolution.default")(t, w, v["bias"], stride, conv_padding_, dilation, False, output_padding, groups)
    return out if batched else aten("squeeze.dim")(out, 0)


def _cases(spatial):
    """(input shape, weight shape, stride, dilation, groups): batched and unbatched inputs, odd and even kernels (the
    even ones pad the input first), dilations, broadcast (size-1) and full lists, groups, and inputs of the wrong
    rank, strides aten refuses for "same", a weight of another rank."""
    n = spatial
    cases = []
    for kernel in (1, 2, 3, 4):
        for dilation in ([1], [2], [3] * n):
            cases.append(((2, 4, *[7] * n), (6, 4, *[kernel] * n), [1] * n, dilation, 1))
    cases += [
        ((4, *[6] * n), (4, 4, *[3] * n), [1], [1] * n, 1),  # unbatched
        ((4, *[5] * n), (6, 2, *[2] * n), [1] * n, [2], 2),  # unbatched, groups
        ((1, 4, *[5 + i for i in range(n)]), (4, 1, *[2 + i for i in range(n)]), [1] * n, [1 + i for i in range(n)],
         4),  # depthwise, a size and a kernel per dimension
        ((2, 4, *[6] * n), (6, 4, *[3] * n), [2] * n, [1] * n, 1),  # strided: "same" refused, "valid" computes
        ((4, *[6] * n)[:n], (6, 4, *[3] * n), [1] * n, [1] * n, 1),  # an input of too few dimensions
        ((2, 4, *[6] * n), (6, 4, *[3] * (n + 1)), [1] * n, [1] * n, 1),  # a weight of another rank
        ((2, 4, *[6] * n), (6, 4, *[3] * n), [1] * n, [1] * n, 0),  # groups 0
        ((2, 4, *[6] * n), (6, 4, *[3] * n), [1] * (n + 1), [1] * n, 1),  # a stride list that cannot broadcast
        ((0, 4, *[6] * n), (6, 4, *[3] * n), [1] * n, [1] * n, 1),  # an empty batch
    ]
    return cases


def prove_conv_padding(op, s):
    """aten's op against conv_padding on every case (_cases) with each padding string ("same", "valid", unknown
    ones) and bias (None, a tensor), in float32, float64, bfloat16, float16, complex64 and int64, a transposed
    (not contiguous) input among them; results, dtypes, strides and errors; float64 gradients of input, weight and
    bias under weighted upstream gradients (aten: CompositeImplicitAutograd, so the same calls' derivatives)."""
    f = aten(op)
    spatial = s["rule"]["spatial"]
    func = op.split(".")[0]
    t = Tally()
    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.complex64, torch.int64):
        for k, (xs, ws, stride, dilation, groups) in enumerate(_cases(spatial)):
            x = sample(xs, d, k)
            if k % 3 == 1 and x.dim() >= 3:
                x = x.transpose(-1, -2).contiguous().transpose(-1, -2)  # the same values, not contiguous
            w = sample(ws, d, k + 40)
            for bias in (None, sample((ws[0],), d, k + 80)):
                for padding in ("same", "valid", "Same", ""):
                    v = {"input": x, "weight": w, "bias": bias, "stride": stride, "padding": padding,
                         "dilation": dilation, "groups": groups}
                    want = run(lambda: f(**v))
                    got = outcome(lambda: conv_padding(spatial, func, v))
                    extra = [r[1].stride() if r[0] == "ok" else None for r in (want, got)]
                    t.compare(f"{d} {xs} {ws} stride {stride} dilation {dilation} groups {groups} bias "
                              f"{bias is not None} {padding!r}", want, got, *extra)
                    if d == torch.float64 and want[0] == "ok" and padding in ("same", "valid") and x.numel():
                        grads = []
                        for fn in (lambda vv: f(**vv), lambda vv: conv_padding(spatial, func, vv)):
                            def backward(fn=fn):
                                leaves = [x.clone().requires_grad_(), w.clone().requires_grad_()]
                                b = bias.clone().requires_grad_() if bias is not None else None
                                r = fn({**v, "input": leaves[0], "weight": leaves[1], "bias": b})
                                (r * weights(r)).sum().backward()
                                return torch.cat([z.grad.flatten() for z in [*leaves, *([b] if b is not None else [])]])
                            grads.append(run(backward))
                        t.compare(f"gradient {xs} {ws} {padding!r} bias {bias is not None}", *grads)
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_conv_padding,)}
