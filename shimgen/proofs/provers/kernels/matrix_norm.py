"""The provers of kernels `matrix_norm_two` and `matrix_norm_str` (shimgen/generate/routes/kernels/matrix_norm.py):
aten's linalg_matrix_norm (LinearAlgebra.cpp) for ord = 2 and -2, and for the ord strings "fro" and "nuc" (with
linalg_norm's), as the same calls; the strings' on a running libtorch before 2.14, aten's own op from it.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same, weights


MATRIX_NORM_ORDS = [2, 2.0, -2, -2.0, 1, -1.0, float("inf"), -float("inf"), 3, 0, 0.5, float("nan"), True, 2 + 0j,
                    1j]
MATRIX_NORM_DIMS = [(-2, -1), (-1, -2), (0, 1), (1, 0), (0, 2), (2, 0), (1, -1), (0, -3), (0,), (0, 1, 2), (3, 0),
                    (-1, -1)]


def matrix_norm_pair(A, dim):
    """kernels/matrix_norm.h matrix_norm_pair: two dims, each in range, different once wrapped."""
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. {ATEN_RAISES}")
    n = A.dim()
    wrapped = []
    for d in dim:
        if d < -n or d >= n:
            raise RuntimeError(f"Dimension out of range {ATEN_RAISES}")
        wrapped.append(d + n if d < 0 else d)
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. {ATEN_RAISES}")
    return wrapped


def matrix_norm_two(s, A, ord, dim, keepdim, dtype):
    """kernels/matrix_norm.py: aten's checks (scalar.h matrix_norm_dims, in its order; ord 1, -1, inf
    and -inf refused), then its calls in its order, each the row's `calls` role."""
    c = {role: aten(name) for role, name in s["rule"]["calls"].items()}
    if isinstance(ord, complex):
        raise RuntimeError(f"linalg.matrix_norm: Expected a non-complex scalar as the order of norm. {ATEN_RAISES}")
    size = abs(float(ord))
    if not (size == 2 or size == 1 or size == math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported. {ATEN_RAISES}")
    if size != 2:
        raise Refused("ord")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: at least 2 dimensions {ATEN_RAISES}")
    real = A.dtype in (torch.float32, torch.float64)
    if not real and A.dtype not in (torch.complex64, torch.complex128):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor {ATEN_RAISES}")
    wrapped = matrix_norm_pair(A, dim)
    n = A.dim()
    if dtype is not None:
        allowed = {torch.float32: (torch.float32, torch.float64), torch.float64: (torch.float64,),
                   torch.complex64: (torch.complex64, torch.complex128), torch.complex128: (torch.complex128,)}
        if dtype not in allowed[A.dtype]:
            raise RuntimeError(f"linalg.matrix_norm: dtype {ATEN_RAISES}")
    if float(ord) > 0 and (A.size(wrapped[0]) == 0 or A.size(wrapped[1]) == 0):
        raise Refused("empty matrix")  # aten: an error before 2.10, zeros from 2.10 on
    order = [i for i in range(n) if i not in wrapped] + wrapped
    x = c["cast"](A, dtype) if dtype is not None else A
    values = c["spectrum"](c["order"](x, order))
    result = c["most"](values, [-1], keepdim) if float(ord) > 0 else c["least"](values, [-1], keepdim)
    if keepdim:
        reverse = [0] * n
        for i, o in enumerate(order):
            reverse[o] = i
        result = c["order"](c["grow"](result, -1), reverse)
    return result


def prove_matrix_norm(op, s):
    """aten's op against matrix_norm_two: dtypes (float, double, complex, reduced, integral, bool), shapes (2-D,
    3-D, 4-D, 1-D, 0-dim, empty matrices, one element; not contiguous; inf and nan among the values), dims (every
    pair, negative, equal, out of range, of another length), keepdim, dtype= (wider, narrower, other kind), ords
    (2 and -2 as int and double, 1, inf, others aten refuses, bool, complex); results, dtypes, strides and errors;
    float64 and complex128 gradients under weighted upstream gradients (aten: CompositeImplicitAutograd, so the
    same calls' derivatives)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    for d in (torch.float32, torch.float64, torch.complex64, torch.complex128, torch.float16, torch.bfloat16,
              torch.int64, torch.bool):
        for k, shape in enumerate([(3, 4), (4, 3), (2, 3, 4), (2, 2, 3, 2), (5,), (), (0, 3), (3, 0), (2, 0, 0),
                                   (1, 1), (0, 2, 3)]):
            A = sample(shape, d, k)
            if k != 3 and (d.is_floating_point or d.is_complex):
                A = A.nan_to_num(0.0, 7.0, -7.0)  # finite: a non-finite matrix is k == 3's (svdvals raises there)
            if k == 2:
                A = A.transpose(0, 2)  # not contiguous
            if k == 3 and d.is_floating_point:
                A[0, 0, 0, 0] = float("inf") if d != torch.float64 else float("nan")
            for dim in MATRIX_NORM_DIMS:
                for keepdim in (False, True):
                    for dtype in (None, torch.float64, torch.complex128, torch.float32, torch.float16):
                        for ord in MATRIX_NORM_ORDS:
                            if dtype is not None and not isinstance(ord, int):
                                continue  # dtype= with the ints only: its checks do not depend on ord's kind
                            want = run(lambda: f(A, ord, list(dim), keepdim, dtype=dtype))
                            got = outcome(lambda: matrix_norm_two(s, A, ord, dim, keepdim, dtype))
                            compared += 1
                            if got[0] == "refused":
                                refused += 1
                                continue
                            both_ok += want[0] == got[0] == "ok"
                            strides_differ = want[0] == got[0] == "ok" and want[1].stride() != got[1].stride()
                            if (not same(want, got) or strides_differ) and not wrong:
                                wrong = f"{d} {shape} dim {dim} keepdim {keepdim} dtype {dtype} ord {ord!r}: " \
                                        f"{want[0]} {want[1] if want[0] == 'error' else want[1].stride()} vs " \
                                        f"{got[0]} {got[1] if got[0] == 'error' else got[1].stride()}"
                            if (d in (torch.float64, torch.complex128) and want[0] == got[0] == "ok" and dtype is None
                                    and ord in (2, -2.0) and A.numel() > 0):
                                grads = []
                                for fn in (lambda t: f(t, ord, list(dim), keepdim),
                                           lambda t: matrix_norm_two(s, t, ord, dim, keepdim, None)):
                                    def backward(fn=fn):
                                        t = A.clone().requires_grad_()
                                        r = fn(t)
                                        (r * weights(r)).sum().real.backward()
                                        return t.grad
                                    grads.append(run(backward))
                                if not same(*grads) and not wrong:
                                    wrong = f"gradient {d} {shape} dim {dim} keepdim {keepdim} ord {ord!r}: " \
                                            f"{grads[0][0]} vs {grads[1][0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
FULL = (torch.float32, torch.float64, torch.complex64, torch.complex128)
LOW = (torch.float16, torch.bfloat16, torch.complex32)


def _norm_dtype(t, dtype):
    """aten's check_linalg_norm_dtype (kernels/matrix_norm_str.h linalg_norm_dtype)."""
    if not (dtype.is_floating_point or dtype.is_complex) or t.is_complex != dtype.is_complex:
        return False
    return torch.promote_types(t, dtype) == dtype


def matrix_norm_str(op, s, A, ord, dim, keepdim, dtype):
    """The generated wrapper (kernels/matrix_norm_str.h, routes/kernels/matrix_norm.py _matrix_norm_str_body): before
    2.14 aten's checks in its order, then its calls, each the row's `calls` role; from 2.14 aten's op."""
    if RELEASE >= (2, 14):
        return aten(op)(A, ord, dim, keepdim, dtype=dtype)
    c = {role: aten(name) for role, name in s["rule"]["calls"].items()}
    if s["rule"].get("norm_checks"):  # linalg_norm: its checks, then linalg_matrix_norm's (as aten calls it)
        if dim is not None:
            if len(dim) not in (1, 2):
                raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. {ATEN_RAISES}")
        elif A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"{ATEN_RAISES}")
        dim = list(dim) if dim is not None else [0, 1]
    fro = ord == "fro"
    if not fro and ord != "nuc":
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported. {ATEN_RAISES}")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: at least 2 dimensions {ATEN_RAISES}")
    if not (A.dtype in FULL or (fro and A.dtype in LOW)):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor {ATEN_RAISES}")
    wrapped = matrix_norm_pair(A, dim)
    n = A.dim()
    if dtype is not None and not _norm_dtype(A.dtype, dtype):
        raise RuntimeError(f"linalg.matrix_norm: dtype {ATEN_RAISES}")
    if fro:  # linalg_vector_norm with ord 2: linalg_norm with ord None (kernels/matrix_norm_str.h matrix_norm_fro)
        return c["vector"](A, None, wrapped, keepdim, dtype=dtype)
    order = [i for i in range(n) if i not in wrapped] + wrapped
    x = c["cast"](A, dtype) if dtype is not None else A
    result = c["summed"](c["spectrum"](c["order"](x, order)), [-1], keepdim)
    if keepdim:
        reverse = [0] * n
        for i, o in enumerate(order):
            reverse[o] = i
        result = c["order"](c["grow"](result, -1), reverse)
    return result


def prove_matrix_norm_str(op, s):
    """aten's op against matrix_norm_str: dtypes (float, double, complex, half, bfloat16, complex32, integral, bool),
    shapes (2-D, 3-D, 4-D, 1-D, 0-dim, empty matrices, one element; not contiguous; inf and nan among the values),
    dims (every pair, negative, equal, out of range, of another length; None for linalg_norm), keepdim, dtype=
    (wider, narrower, other kind), ords "fro", "nuc" and others aten refuses; results, dtypes, strides and errors;
    float64 and complex128 gradients under weighted upstream gradients."""
    f = aten(op)
    t = Tally()
    dims = MATRIX_NORM_DIMS + ([None] if s["rule"].get("norm_checks") else [])
    for d in (*FULL, *LOW, torch.int64, torch.bool):
        for k, shape in enumerate([(3, 4), (4, 3), (2, 3, 4), (2, 2, 3, 2), (5,), (), (0, 3), (3, 0), (2, 0, 0),
                                   (1, 1), (0, 2, 3)]):
            A = sample(shape, d if d != torch.complex32 else torch.complex64, k)
            if k != 3 and (A.dtype.is_floating_point or A.dtype.is_complex):
                A = A.nan_to_num(0.0, 7.0, -7.0)  # finite: a non-finite matrix is k == 3's (svdvals raises there)
            if d == torch.complex32:
                A = A.to(d)
            if k == 2:
                A = A.transpose(0, 2)  # not contiguous
            if k == 3 and d.is_floating_point:
                A[0, 0, 0, 0] = float("inf") if d != torch.float64 else float("nan")
            for dim in dims:
                for keepdim in (False, True):
                    for dtype in (None, torch.float64, torch.complex128, torch.float32, torch.float16):
                        for ord in ("fro", "nuc", "inf", "Fro", ""):
                            if dtype is not None and ord not in ("fro", "nuc"):
                                continue
                            want = run(lambda: f(A, ord, list(dim) if dim is not None else None, keepdim,
                                                 dtype=dtype))
                            got = outcome(lambda: matrix_norm_str(op, s, A, ord, dim, keepdim, dtype))
                            extra = [r[1].stride() if r[0] == "ok" else None for r in (want, got)]
                            t.compare(f"{d} {shape} dim {dim} keepdim {keepdim} dtype {dtype} ord {ord!r}", want,
                                      got, *extra)
                            if (d in (torch.float64, torch.complex128) and want[0] == got[0] == "ok"
                                    and dtype is None and A.numel() > 0 and k != 3):
                                grads = []
                                for fn in (lambda x: f(x, ord, list(dim) if dim is not None else None, keepdim),
                                           lambda x: matrix_norm_str(op, s, x, ord, dim, keepdim, None)):
                                    def backward(fn=fn):
                                        x = A.clone().requires_grad_()
                                        r = fn(x)
                                        (r * weights(r)).sum().real.backward()
                                        return x.grad
                                    grads.append(run(backward))
                                t.compare(f"gradient {d} {shape} dim {dim} keepdim {keepdim} ord {ord!r}", *grads)
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_matrix_norm, prove_matrix_norm_str)}
