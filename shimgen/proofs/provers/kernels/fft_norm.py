"""The prover of kernel `fft_norm` (shimgen/generate/routes/kernels/fft_norm.py): the one-dimensional fft ops with a
`norm` string (fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft) as aten's CompositeImplicitAutograd
SpectralOps.cpp computes them (fft_c2c, fft_r2c, fft_c2r): the input promoted, resized to n, then aten::_fft_c2c,
_fft_r2c or _fft_c2r with the normalization as a number, on a running libtorch before 2.14; from 2.14 aten's op.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, weights

RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
NONE, BY_ROOT_N, BY_N = 0, 1, 2  # aten's fft_norm_mode


def _fail(text):
    raise RuntimeError(f"{text} {ATEN_RAISES}")


def norm_mode(norm, forward):
    """kernels/fft_norm.h fft_norm_mode: aten's norm_from_string."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    _fail(f'Invalid normalization mode: "{norm}"')


def promoted(x, complex_):
    """kernels/fft_norm.h fft_promoted: aten's promote_tensor_fft for the dtypes the wrapper computes (a half or
    bfloat16 input, whose promotion depends on the device and the release, is the dispatcher's)."""
    t = x.dtype
    if t.is_complex:
        return x
    if t in (torch.float16, torch.bfloat16):
        raise Refused("half")
    if not t.is_floating_point:
        t = torch.get_default_dtype()
    if complex_:
        t = {torch.float32: torch.complex64, torch.float64: torch.complex128}[t]
    return x if t == x.dtype else aten("to.dtype")(x, t)


def wrap(dim, ndim):
    if ndim == 0:
        _fail(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        _fail(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def resized(x, dim, n):
    """kernels/fft_norm.h fft_resized: aten's resize_fft_input for one dim: sliced, or zero-padded at its end."""
    return fftn_resized(x, [dim], [n])


def fft_norm(op, s, x, n, dim, norm):
    """The generated wrapper: the row's `transform` (c2c: real to complex for a real input), `forward`, `onesided`."""
    if RELEASE >= (2, 14) or norm is None:  # a norm left None converts nothing: the dispatcher, aten's op
        return aten(op)(x, n, dim, norm)
    rule = s["rule"]
    transform, forward, onesided = rule["transform"], rule["forward"], rule["onesided"]
    if transform == "c2c" and not x.dtype.is_complex:
        transform = "r2c"
    if transform == "c2c":
        d = wrap(dim, x.dim())
        size = x.shape[d] if n is None else n
        if size < 1:
            _fail(f"Invalid number of data points ({size}) specified")
        if n is not None:
            x = resized(x, d, n)
        return aten("_fft_c2c.default")(x, [d], norm_mode(norm, forward), forward)
    if transform == "r2c":
        if x.dtype.is_complex:
            raise TypeError(f"{op} expects a real input tensor, but got {x.dtype} {ATEN_RAISES}")
        x = promoted(x, False)
        d = wrap(dim, x.dim())
        size = x.shape[d] if n is None else n
        if size < 1:
            _fail(f"Invalid number of data points ({size}) specified")
        if n is not None:
            x = resized(x, d, n)
        r = aten("_fft_r2c.default")(x, [d], norm_mode(norm, forward), onesided)
        return r if forward else aten("conj.default")(r)
    x = promoted(x, True)  # c2r
    d = wrap(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    if size < 1:
        _fail(f"Invalid number of data points ({size}) specified")
    if n is not None:
        x = resized(x, d, n // 2 + 1)
    mode = norm_mode(norm, forward)
    if forward:
        x = aten("conj.default")(x)
    return aten("_fft_c2r.default")(x, [d], mode, size)


def _resolved(r):
    """An outcome with a conj view's values materialized (compared with aten's; whether it is a view, apart)."""
    return (r[0], r[1].resolve_conj()) if r[0] == "ok" else r


def prove_fft_norm(op, s):
    """aten's op against the wrapper's model: float32, float64, complex64, complex128, int64 (promoted), half and
    bfloat16 (the dispatcher's) and bool inputs; 1-D to 3-D, 0-dim; n None, smaller, larger, 1 and 0; each dim and
    out of range; norm None, "backward", "forward", "ortho" and an unknown one; values (NaN where NaN), dtypes,
    shapes, whether the result is a conj view, errors; float64 and complex128 gradients."""
    f = aten(op)
    t = Tally()
    g = torch.Generator().manual_seed(6)
    shapes = [(8,), (7,), (3, 6), (2, 3, 5), (1,), ()]
    for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64, torch.float16,
                  torch.bool):
        for shape in shapes:
            base = torch.randn(shape, generator=g, dtype=torch.float64) * 3
            x = base.to(dtype) if not dtype.is_complex else torch.complex(base, base.flip(-1) if base.dim() else
                                                                          base).to(dtype)
            dims = [-1, 0, 1, -3, 3] if x.dim() else [0, -1]
            for dim in dims:
                for n in (None, 4, 11, 1, 0):
                    for norm in (None, "backward", "forward", "ortho", "Ortho"):
                        want = run(lambda: f(x, n, dim, norm))
                        got = outcome(lambda: fft_norm(op, s, x, n, dim, norm))
                        extra = [r[1].is_conj() if r[0] == "ok" else None for r in (want, got)]
                        t.compare(f"{dtype} {shape} dim={dim} n={n} norm={norm!r}", _resolved(want),
                                  _resolved(got), *extra)
    for dtype in (torch.float64, torch.complex128):
        for norm in (None, "forward", "ortho"):
            for n in (None, 5):
                grads = []
                for fn in (lambda v: f(v, n, -1, norm), lambda v: fft_norm(op, s, v, n, -1, norm)):
                    def backward(fn=fn):
                        leaf = torch.randn(3, 6, generator=torch.Generator().manual_seed(2), dtype=dtype)
                        leaf.requires_grad_()
                        r = fn(leaf)
                        r = torch.view_as_real(r.resolve_conj()) if r.is_complex() else r
                        (r * weights(r)).sum().backward()
                        return leaf.grad.resolve_conj()
                    grads.append(outcome(backward))
                t.compare(f"gradient {dtype} norm={norm!r} n={n}", *grads)
    return t.report()


def _listed(v):
    return None if v is None else list(v)


def fftn_dims(x, s, dim):
    """kernels/fft_norm.h fftn_dims: aten's canonicalize_fft_shape_and_dim_args."""
    rank = x.dim()
    dims = []
    if dim is not None:
        dims = [wrap(d, rank) for d in dim]
        if len(set(dims)) != len(dims):
            _fail("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            _fail("When given, dim and shape arguments must have the same length")
        if len(s) > rank:
            _fail(f"Got shape with {len(s)} values but input tensor only has {rank} dimensions.")
        if dim is None:
            dims = list(range(rank - len(s), rank))
        shape = [x.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    else:
        if dim is None:
            dims = list(range(rank))
        shape = [x.shape[d] for d in dims]
    for n in shape:
        if n < 1:
            _fail(f"Invalid number of data points ({n}) specified")
    return dims, shape


def fftn_resized(x, dims, sizes):
    """kernels/fft_norm.h fftn_resized: aten's resize_fft_input over several dims."""
    pad = [0] * (2 * x.dim())
    padded = False
    base = x
    for d, n in zip(dims, sizes):
        size = base.shape[d]
        if size < n:
            padded = True
            pad[len(pad) - 2 * d - 1] = n - size
        if size > n:
            x = aten("slice.Tensor")(x, d, 0, n, 1)
    return aten("constant_pad_nd.default")(x, pad) if padded else x


def fftn_norm(op, s, x, shape_arg, dim_arg, norm):
    """The generated wrapper of an n-dimensional row (`multi_dim`; kernels/fft_norm.h fftn_norm_compute)."""
    if RELEASE >= (2, 14) or norm is None:  # a norm left None converts nothing: the dispatcher, aten's op
        return aten(op)(x, shape_arg, dim_arg, norm)
    if x.dtype in (torch.float16, torch.bfloat16):
        raise Refused("half")
    rule = s["rule"]
    transform, forward = rule["transform"], rule["forward"]
    name = op.split(".")[0]
    sv, dv = _listed(shape_arg), _listed(dim_arg)
    if transform == "r2c" and x.dtype.is_complex:
        _fail(f"{name} expects a real-valued input tensor")
    dims, shape = fftn_dims(x, sv, dv)
    if transform != "c2c" and not shape:
        _fail(f"{name} must transform at least one axis")
    last = 0
    if transform in ("c2r", "hfft"):
        last = shape[-1] if sv is not None and sv[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
        if last < 1:
            _fail(f"Invalid number of data points ({last}) specified")
        shape[-1] = last // 2 + 1
    y = fftn_resized(promoted(x, transform in ("c2c", "c2r", "hfft")), dims, shape)
    mode = norm_mode(norm, forward)
    if transform == "c2c":
        return aten("_fft_c2c.default")(y, dims, mode, forward)
    if transform == "r2c":
        return aten("_fft_r2c.default")(y, dims, mode, True)
    if transform == "c2r":
        return aten("_fft_c2r.default")(y, dims, mode, last)
    if transform == "hfft":
        c2c = aten("_fft_c2c.default")(y, dims[:-1], mode, True) if len(dims) > 1 else y
        return aten("_fft_c2r.default")(aten("conj.default")(c2c), [dims[-1]], mode, last)
    r2c = aten("_fft_r2c.default")(y, [dims[-1]], mode, True)
    if len(dims) == 1:
        return aten("conj.default")(r2c)
    return aten("_fft_c2c.default")(aten("conj_physical.default")(r2c), dims[:-1], mode, False)


def prove_fftn_norm(op, s):
    """aten's n-dimensional op against the wrapper's model (fftn_norm): float32, float64, complex64, complex128, int64
    (promoted), half (the dispatcher's) and bool inputs; 0-dim to 3-D; s None, smaller, larger, with -1, longer than
    the rank, with 0; dim None (the 2-D ops: their default), one, two, three, negative, repeated, out of range, and
    of another length than s; norm None, "backward", "forward", "ortho" and an unknown one: values (NaN where NaN),
    dtypes, shapes, whether the result is a conj view, errors; float64 and complex128 gradients."""
    f = aten(op)
    t = Tally()
    g = torch.Generator().manual_seed(7)
    two = "2" in op.split(".")[0]
    shapes = [(4, 6), (3, 5), (2, 3, 4), (5,), ()]
    sizes = [None, [3, 4], [8, 7], [-1, 5], [2], [1, 2, 3, 4], [0, 3], [4, 3, 2]]
    dim_lists = ([-2, -1], [0, 1], [1, 0], [-1], [0, 0], [0, 5], [2, 0, 1]) if two else \
        (None, [-2, -1], [0], [1, 0], [-1], [0, 0], [0, 5], [2, 0, 1])
    for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64, torch.float16,
                  torch.bool):
        for shape in shapes:
            base = torch.randn(shape, generator=g, dtype=torch.float64) * 3
            x = base.to(dtype) if not dtype.is_complex else torch.complex(base, base.flip(-1) if base.dim() else
                                                                          base).to(dtype)
            for dim in dim_lists:
                for size in sizes:
                    for norm in (None, "backward", "forward", "ortho", "Ortho"):
                        if dtype in (torch.int64, torch.bool, torch.float16) and norm not in (None, "ortho"):
                            continue
                        want = run(lambda: f(x, size, dim, norm))
                        got = outcome(lambda: fftn_norm(op, s, x, size, dim, norm))
                        extra = [r[1].is_conj() if r[0] == "ok" else None for r in (want, got)]
                        t.compare(f"{dtype} {shape} s={size} dim={dim} norm={norm!r}", _resolved(want),
                                  _resolved(got), *extra)
    for dtype in (torch.float64, torch.complex128):
        for norm in (None, "forward", "ortho"):
            for size in (None, [3, 5]):
                grads = []
                for fn in (lambda v: f(v, size, [-2, -1], norm), lambda v: fftn_norm(op, s, v, size, [-2, -1], norm)):
                    def backward(fn=fn):
                        leaf = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(2), dtype=dtype)
                        leaf.requires_grad_()
                        r = fn(leaf)
                        r = torch.view_as_real(r.resolve_conj()) if r.is_complex() else r
                        (r * weights(r)).sum().backward()
                        return leaf.grad.resolve_conj()
                    grads.append(outcome(backward))
                t.compare(f"gradient {dtype} norm={norm!r} s={size}", *grads)
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_fft_norm, prove_fftn_norm)}
