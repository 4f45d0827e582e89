"""The prover of kernel `quantile` (shimgen/generate/routes/kernels/quantile.py): quantile and nanquantile with an
interpolation string as aten's CompositeImplicitAutograd Sorting.cpp computes them on libtorch 2.9-2.13 (ranks in
the input's dtype, a sort and two gathers), by the same calls in the same order, on a running libtorch before 2.14;
from 2.14 (which computes ranks in float64 and selects without sorting on CPU) the dispatcher's form: aten's own op.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from worker_common import ATEN_RAISES, Tally, aten, outcome, run, weights

RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
MODES = ("linear", "lower", "higher", "midpoint", "nearest")
# the rows' overloads -> (ignore_nan, q is a number)
FORMS = {"quantile.default": (False, False), "quantile.scalar": (False, True),
         "nanquantile.default": (True, False), "nanquantile.scalar": (True, True)}


def _fail(text):
    raise RuntimeError(f"{text} {ATEN_RAISES}")


def quantile_checks(self, q):
    """kernels/quantile.h quantile_checks: aten's quantile_checks, in its order."""
    if self.numel() == 0:
        _fail("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        _fail("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (torch.float32, torch.float64):
        _fail("quantile() input tensor must be either float or double dtype")
    if self.dtype != q.dtype:
        _fail("quantile() q tensor must be same dtype as the input tensor")
    if self.device != q.device:
        _fail("quantile() q tensor must be on the same device as the input tensor")


def quantile_compute(self, q, dim, keepdim, interpolation, ignore_nan):
    """kernels/quantile.h quantile_compute: the mode, the checks, the output shape, then aten's calls."""
    if interpolation not in MODES:
        _fail("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got "
              f"{interpolation}")
    quantile_checks(self, q)
    n = max(self.dim(), 1)
    d = 0 if dim is None else dim
    if d < -n or d >= n:
        _fail(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    wrapped = d + n if d < 0 else d
    out_shape = []
    if dim is not None and self.dim() > 0:
        out_shape = list(self.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    elif keepdim:
        out_shape = [1] * self.dim()
    if q.dim() > 0:
        out_shape.insert(0, q.numel())
    if self.device.type == "cpu":
        inside = aten("logical_and_.default")(aten("ge.Scalar")(q, 0), aten("le.Scalar")(q, 1))
        if not aten("all.default")(inside).item():
            _fail("quantile() q values must be in the range [0, 1]")
    if dim is None:
        sorted_ = aten("sort.default")(aten("flatten.using_ints")(self, 0, -1), -1, False)[0]
    elif wrapped == self.dim() - 1:
        sorted_ = aten("sort.default")(self, -1, False)[0]
    else:
        moved = aten("transpose.int")(aten("unsqueeze.default")(self, -1), wrapped, -1)
        sorted_ = aten("sort.default")(moved, -1, False)[0]
    if q.dim() == 0:
        out_shape.insert(0, q.numel())
    in_shape = out_shape[1:] + [0]
    in_shape[-1] = sorted_.shape[-1]
    sorted_ = aten("view.default")(sorted_, in_shape)
    if sorted_.shape[-1] > 2 ** 24:
        _fail("quantile() input tensor is too large")
    if ignore_nan:
        valid = aten("sum.dim_IntList")(aten("logical_not_.default")(aten("isnan.default")(sorted_)), [-1], True)
        ranks = aten("mul.Tensor")(q, aten("sub.Scalar")(valid, 1))
        aten("masked_fill_.Scalar")(ranks, aten("lt.Scalar")(ranks, 0), 0)
    else:
        last = sorted_.shape[-1] - 1
        tl = aten("broadcast_tensors.default")([aten("mul.Scalar")(q, last),
                                                aten("any.dim")(aten("isnan.default")(sorted_), -1, True)])
        ranks = aten("masked_fill.Scalar")(tl[0], tl[1], last)
    if interpolation == "lower":
        aten("floor_.default")(ranks)
    elif interpolation == "higher":
        aten("ceil_.default")(ranks)
    elif interpolation == "nearest":
        aten("round_.default")(ranks)
    below = aten("to.dtype")(ranks, torch.int64)
    values = aten("gather.default")(sorted_, -1, below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weight = aten("full_like.default")(ranks, 0.5)
        else:
            weight = aten("sub.Tensor")(ranks, below)
        above = aten("to.dtype")(aten("ceil_.default")(ranks), torch.int64)
        aten("lerp_.Tensor")(values, aten("gather.default")(sorted_, -1, above), weight)
    if q.dim() == 0:
        return aten("squeeze_.dim")(values, -1)
    return aten("squeeze_.dim")(aten("transpose_.default")(aten("unsqueeze_.default")(values, 0), 0, -1), -1)


def quantile(op, self, q, dim, keepdim, interpolation):
    """The generated wrapper: before 2.14 the composition (a number q checked, then aten::scalar_tensor of self's
    dtype and device), from 2.14 aten's op (the dispatcher's guarded form)."""
    if RELEASE >= (2, 14):
        return aten(op)(self, q, dim, keepdim, interpolation=interpolation)
    ignore_nan, number = FORMS[op]
    if number:
        if not (q >= 0 and q <= 1):
            _fail(f"quantile() q must be in the range [0, 1] but got {q:g}")
        q = aten("scalar_tensor.default")(q, dtype=self.dtype, device=self.device)
    return quantile_compute(self, q, dim, keepdim, interpolation, ignore_nan)


def _samples(g):
    """(label, tensor): 0-dim, 1-D of 1 to 17 elements, 2-D and 3-D, with ties, NaNs (none, some, a whole row),
    infinities, -0.0, and a transposed input."""
    yield "0-dim", torch.tensor(1.5, dtype=torch.float64)
    for n in (1, 2, 3, 5, 10, 17):
        yield f"[{n}]", torch.randn(n, generator=g, dtype=torch.float64)
    yield "ties", torch.tensor([2.0, 1.0, 2.0, 2.0, 0.5, 1.0, 2.0], dtype=torch.float64)
    yield "specials", torch.tensor([float("inf"), -0.0, 0.0, -float("inf"), 3.0, -2.0], dtype=torch.float64)
    m = torch.randn(4, 6, generator=g, dtype=torch.float64).round(decimals=1)
    yield "[4, 6]", m
    nan = m.clone()
    nan[1, 2] = float("nan")
    nan[3, :] = float("nan")
    yield "[4, 6] nan", nan
    yield "[3, 4, 5]", torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    yield "transposed", torch.randn(5, 3, generator=g, dtype=torch.float64).t()


def prove_quantile(op, s):
    """aten's quantile and nanquantile (each overload) against the wrapper's model on the samples (_samples) in
    float32 and float64, q a number or a 0-dim or 1-D tensor (0, 1, values between, ranks that round differently in
    float32 and float64), each dim and None, keepdim, every interpolation and an unknown one; errors: q outside
    [0, 1], q of another dtype or 2-D, an empty or integer input, a dim out of range. Gradients (float64, with
    respect to the input and to a tensor q) where the interpolation has them."""
    f = aten(op)
    t = Tally()
    ignore_nan, number = FORMS[op]
    g = torch.Generator().manual_seed(5)
    numbers = [0.0, 1.0, 0.5, 0.3, 0.1, 0.7, 0.999, 1 / 3]
    for dtype in (torch.float32, torch.float64):
        for label, base in _samples(g):
            x = base.to(dtype)
            qs = numbers if number else [torch.tensor(v, dtype=dtype) for v in numbers[:4]] + [
                torch.tensor(numbers, dtype=dtype), torch.rand(3, generator=g, dtype=torch.float64).to(dtype)]
            dims = [None, *range(-x.dim(), x.dim())] if x.dim() else [None, 0, -1]
            for q in qs:
                for dim in dims:
                    for keepdim in (False, True):
                        for mode in MODES:
                            want = run(lambda: f(x, q, dim, keepdim, interpolation=mode))
                            got = outcome(lambda: quantile(op, x, q, dim, keepdim, mode))
                            t.compare(f"{dtype} {label} q={q} dim={dim} keepdim={keepdim} {mode}", want, got)
    x = torch.randn(3, 4, generator=g)
    bad = [("unknown mode", x, 0.5 if number else torch.tensor(0.5), 0, "Linear"),
           ("q above 1", x, 1.5 if number else torch.tensor([0.5, 1.5]), 0, "linear"),
           ("q below 0", x, -0.1 if number else torch.tensor(-0.1), None, "linear"),
           ("q NaN", x, float("nan") if number else torch.tensor(float("nan")), None, "linear"),
           ("empty", torch.empty(0, 3), 0.5 if number else torch.tensor(0.5), None, "linear"),
           ("integer", torch.arange(6), 0.5 if number else torch.tensor(0.5), None, "linear"),
           ("dim out of range", x, 0.5 if number else torch.tensor(0.5), 2, "linear"),
           ("0-dim dim 1", torch.tensor(2.0), 0.5 if number else torch.tensor(0.5), 1, "linear")]
    if not number:
        bad += [("q float64", x, torch.tensor(0.5, dtype=torch.float64), None, "linear"),
                ("q 2-D", x, torch.full((1, 1), 0.5), None, "linear")]
    for label, xx, q, dim, mode in bad:
        t.compare(label, run(lambda: f(xx, q, dim, False, interpolation=mode)),
                  outcome(lambda: quantile(op, xx, q, dim, False, mode)))
    for mode in MODES:
        for dim in (None, 1):
            grads = []
            for fn in (lambda v, w: f(v, w, dim, False, interpolation=mode),
                       lambda v, w: quantile(op, v, w, dim, False, mode)):
                def backward(fn=fn):
                    gg = torch.Generator().manual_seed(4)
                    leaf = torch.randn(3, 5, generator=gg, dtype=torch.float64).round(decimals=0).requires_grad_()
                    qleaf = torch.tensor([0.25, 0.6], dtype=torch.float64).requires_grad_()
                    r = fn(leaf, 0.6 if number else qleaf)
                    (r * weights(r)).sum().backward()
                    grads = [r.detach().flatten(), leaf.grad.flatten()]
                    if not number and qleaf.grad is not None:
                        grads.append(qleaf.grad)
                    return torch.cat(grads)
                grads.append(outcome(backward))
            t.compare(f"gradient {mode} dim={dim}", *grads)
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_quantile,)}
