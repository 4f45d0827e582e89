"""The prover of kernel `renorm_two` (shimgen/generate/routes/kernels/renorm.py): aten's structured renorm for p = 2
as the calls its kernel makes.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import requires_grad_proxy, sample
from worker_common import ATEN_RAISES, Refused, aten, outcome, run, same


RENORM_PS = [2, 2.0, 1, 3, 0, -1, float("inf"), float("nan"), True, 2 + 0j]
RENORM_MAXNORMS = [0, 0.5, 1, 1e-9, 5, 100.0, 1e10, 1e40, float("inf"), float("nan"), -1, 2 + 0j, True]
RENORM_DTYPES = (torch.float32, torch.float64, torch.complex64, torch.complex128, torch.float16, torch.bfloat16)


def renorm_two(s, self, p, dim, maxnorm):
    """kernels/renorm.py: aten's checks (scalar.h renorm_dims, in its order), this route's refusals, then
    its calls in its order, each the row's `calls` role; the factor kernel on 0-dim tensors of the norm's dtype."""
    c = {role: aten(name) for role, name in s["rule"]["calls"].items()}
    if isinstance(p, complex):
        raise RuntimeError(f"renorm: p must be real-valued {ATEN_RAISES}")
    if not float(p) > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported {ATEN_RAISES}")
    if isinstance(maxnorm, complex):
        raise RuntimeError(f"renorm: maxnorm must be real-valued {ATEN_RAISES}")
    if not float(maxnorm) >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 {ATEN_RAISES}")
    n = self.dim()
    if n <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions {ATEN_RAISES}")
    if dim < -n or dim >= n:
        raise RuntimeError(f"Dimension out of range {ATEN_RAISES}")
    if float(p) != 2:
        raise Refused("p")
    if n > 3:
        raise Refused("dims")
    if self.dtype not in RENORM_DTYPES:
        raise Refused("dtype")
    if torch.is_grad_enabled() and requires_grad_proxy(self):
        raise Refused("autograd")
    wrapped = dim + n if dim < 0 else dim
    reduce = [i for i in range(n) if i != wrapped]
    acc = torch.float32 if self.dtype in (torch.float16, torch.bfloat16) else None
    norm = c["length"](self, float(p), reduce, True, dtype=acc)
    common = norm.dtype
    limit = torch.tensor(float(maxnorm), dtype=torch.float64).to(common)  # static_cast<scalar_t>(maxnorm)
    eps = torch.tensor(1e-7, dtype=torch.float64).to(common)
    one = torch.tensor(1.0, dtype=common)
    factor = c["pick"](c["above"](norm, limit), c["over"](limit, c["plus"](norm, eps)), one)
    if factor.dtype != self.dtype:
        factor = factor.to(self.dtype)
    result = c["times"](self, factor)
    expected, canonical = 1, True
    for i in reversed(range(result.dim())):
        canonical = canonical and result.stride(i) == expected
        expected *= max(result.size(i), 1)
    return result if canonical else c["compact"](result, memory_format=torch.contiguous_format)


def prove_renorm(op, s):
    """aten's op against renorm_two: dtypes (float, double, complex, half, bfloat16, integral, bool), shapes (2-D,
    3-D, 4-D, 1-D, 0-dim, empty, size-1 dims; transposed; inf and nan among the values), dims (every one, negative,
    out of range), p (2 as int and double, others aten computes or refuses, bool, complex), maxnorm (above and
    below the norms, 0, tiny, huge, out of float's range, inf, nan, negative, int, bool, complex); results, dtypes,
    strides and errors; inputs requiring grad with grad mode off (computed) and on (refused)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    shapes = [(3, 4), (4, 3), (2, 3, 4), (5,), (), (0, 3), (3, 0), (2, 3, 4, 5), (1, 4), (4, 1), (6, 5)]
    for d in (*RENORM_DTYPES, torch.int64, torch.bool):
        for k, shape in enumerate(shapes):
            x = sample(shape, d, k)
            if k == 1:
                x = x.t()  # not contiguous
            if k == 10 and (d.is_floating_point or d.is_complex):
                x = x.nan_to_num(0.0, 7.0, -7.0)  # finite rows: the factor of a finite norm
            for dim in (-1, 0, 1, 2, -3, 5):
                for p in RENORM_PS:
                    for maxnorm in RENORM_MAXNORMS:
                        want = run(lambda: f(x, p, dim, maxnorm))
                        got = outcome(lambda: renorm_two(s, x, p, dim, maxnorm))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        strides_differ = want[0] == got[0] == "ok" and want[1].stride() != got[1].stride()
                        if (not same(want, got) or strides_differ) and not wrong:
                            wrong = f"{d} {shape} dim {dim} p {p!r} maxnorm {maxnorm!r}: {want[0]} " \
                                    f"{want[1] if want[0] == 'error' else (want[1].dtype, want[1].stride())} vs " \
                                    f"{got[0]} {got[1] if got[0] == 'error' else (got[1].dtype, got[1].stride())}"
    # inputs requiring grad: computed with grad mode off (aten records nothing), refused with it on
    for grad_mode in (False, True):
        for nonleaf in (False, True):
            with torch.enable_grad():
                leaf = sample((4, 3), torch.float64, 5).nan_to_num(0.0, 7.0, -7.0).requires_grad_()
                x = leaf * 1 if nonleaf else leaf
            with torch.set_grad_enabled(grad_mode):
                want = run(lambda: f(x, 2, 0, 1.5))
                got = outcome(lambda: renorm_two(s, x, 2, 0, 1.5))
            compared += 1
            if got[0] == "refused":
                refused += 1
                continue
            both_ok += want[0] == got[0] == "ok"
            if not same(want, got) and not wrong:
                wrong = f"requires grad (non-leaf {nonleaf}), grad mode {grad_mode}: {want[0]} vs {got[0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_renorm,)}
