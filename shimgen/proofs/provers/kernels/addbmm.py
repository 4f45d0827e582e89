"""The prover of kernel `addbmm_loop` (shimgen/generate/routes/kernels/addbmm.py): scalar.h's addbmm_loop, each
addmm_ by addmm.out's legacy shim wrapper.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run


def legacy_addmm_out(out, self, m1, m2, beta, alpha):
    """addmm.out's wrapper (data/legacy_shims.yaml addmm.out): floating or complex `self`, numbers an int or a
    float that a C float holds, then aoti_torch_addmm_out with them as floats."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise Refused("cells")
    for n in (beta, alpha):
        if isinstance(n, (bool, complex)) or not isinstance(n, (int, float)):
            raise Refused("kind")
        if isinstance(n, int) and abs(n) > 2**53:
            raise Refused("float")
        if float(torch.tensor(float(n), dtype=torch.float32).item()) != float(n) and not math.isnan(float(n)):
            raise Refused("float")
    return aten("addmm.out")(self, m1, m2, beta=float(beta), alpha=float(alpha), out=out)


def addbmm_loop(op, self, batch1, batch2, beta, alpha, out=None, in_place=False):
    if out is None and not in_place and batch1.dtype.is_floating_point and batch1.dtype != torch.float64:
        # scalar.h autocast_target / autocast_like: the functional form under autocast casts its operands first
        probe = aten("mm")(batch1.new_empty((0, 0)), batch1.new_empty((0, 0)))
        if probe.dtype != batch1.dtype:
            self, batch1, batch2 = (t.to(probe.dtype) if t.is_floating_point() and t.dtype != torch.float64
                                    and t.device.type == probe.device.type else t for t in (self, batch1, batch2))
    tensors = [self, batch1, batch2] + ([out] if out is not None else [])
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise Refused("autograd")
    rows, cols = aten("size.int")(batch1, 1), aten("size.int")(batch2, 2)
    expanded = aten("expand")(self, [rows, cols])
    if batch1.dim() != 3:
        raise RuntimeError(f"shimgen: {op}: batch1 must be a 3D tensor {ATEN_RAISES}")
    if batch2.dim() != 3:
        raise RuntimeError(f"shimgen: {op}: batch2 must be a 3D tensor {ATEN_RAISES}")
    if batch1.size(0) != batch2.size(0):
        raise RuntimeError(f"shimgen: {op}: batch1 and batch2 must have same number of batches, got "
                           f"{batch1.size(0)} and {batch2.size(0)} {ATEN_RAISES}")
    if batch1.size(2) != batch2.size(1):
        raise RuntimeError(f"shimgen: {op}: Incompatible matrix sizes for bmm ({batch1.size(1)}x{batch1.size(2)} and "
                           f"{batch2.size(1)}x{batch2.size(2)}) {ATEN_RAISES}")
    if in_place and (self.dim() != 2 or tuple(self.shape) != (rows, cols)):
        raise Refused("in-place shape")
    result = out if out is not None else self if in_place else aten("new_empty")(self, [0])
    aten("resize_as_")(result, expanded)
    beta_zero = complex(beta) == 0
    if not beta_zero and not in_place:
        result.copy_(expanded)
    if batch1.size(0) == 0:
        if beta_zero:
            result.zero_()
        elif complex(beta) != 1:
            raise Refused("no batch, beta")
        return result
    for b in range(batch1.size(0)):
        legacy_addmm_out(result, result, batch1.select(0, b), batch2.select(0, b), beta if b == 0 else 1, alpha)
    return result


def prove_addbmm_loop(op, s):
    """Shapes (broadcast self, no batch, empty matrices, mismatched ones, wrong dims), dtypes (float32, float64,
    complex64, bfloat16, int64, mixed), numbers (int, float, 0, 1, bool, complex, NaN, beyond a float), layouts
    (transposed batches, a strided out), outside and in grad mode: values, dtype, strides, errors."""
    f = aten(op)
    kind = "out" if op.endswith(".out") else "inplace" if op.split(".")[0].endswith("_") else "functional"
    shapes = [((3, 5), (4, 3, 2), (4, 2, 5)), ((5,), (4, 3, 2), (4, 2, 5)), ((3, 5), (0, 3, 2), (0, 2, 5)),
              ((3, 5), (2, 3, 0), (2, 0, 5)), ((3, 5), (4, 3, 2), (3, 2, 5)), ((3, 5), (4, 3, 2), (4, 3, 5)),
              ((3, 5), (3, 2), (4, 2, 5)), ((3, 5), (4, 3, 2), (2, 5)), ((1, 1), (2, 1, 7), (2, 7, 1)),
              ((4, 5), (4, 3, 2), (4, 2, 5)), ((), (2, 3, 4), (2, 4, 5)), ((20, 30), (6, 20, 40), (6, 40, 30))]
    dtypes = [(torch.float32,) * 3, (torch.float64,) * 3, (torch.complex64,) * 3, (torch.bfloat16,) * 3,
              (torch.int64,) * 3, (torch.float32, torch.float64, torch.float64)]
    numbers = [(1, 1), (0.5, 2.0), (0, 1), (2, -3), (0.1, 1), (1, 0.1), (True, 1), (1 + 1j, 1), (float("nan"), 1),
               (1, 2**30 + 1), (0.0, 0.0)]
    tally = Tally()
    for i, (ss, s1, s2) in enumerate(shapes):
        for j, (d0, d1, d2) in enumerate(dtypes):
            for k, (beta, alpha) in enumerate(numbers):
                if (i + j + k) % 2 and (beta, alpha) != (1, 1):
                    continue
                g = torch.Generator().manual_seed(97 * i + 13 * j + k)
                base = [torch.randn(sh, generator=g, dtype=torch.float64) for sh in (ss, s1, s2)]
                self_, b1, b2 = [t.to(d) if d.is_floating_point or d.is_complex else t.mul(3).round().to(d)
                                 for t, d in zip(base, (d0, d1, d2))]
                if k % 3 == 1 and b1.dim() == 3:
                    b1 = b1.transpose(1, 2).contiguous().transpose(1, 2)
                for grad in (False, True):
                    if grad and not (d0 == torch.float64 and j == 1 and k < 3):
                        continue

                    def call(mine):
                        sl = self_.clone().requires_grad_(grad) if grad else self_.clone()
                        with torch.set_grad_enabled(grad):
                            if kind == "out":
                                o = torch.empty((5, 3), dtype=d0).t() if k % 2 else torch.empty(0, dtype=d0)
                                r = (addbmm_loop(op, sl, b1, b2, beta, alpha, out=o) if mine else
                                     f(sl, b1, b2, beta=beta, alpha=alpha, out=o))
                                return r, tuple(o.stride()), r is o
                            if kind == "inplace":
                                r = (addbmm_loop(op, sl, b1, b2, beta, alpha, in_place=True) if mine else
                                     f(sl, b1, b2, beta=beta, alpha=alpha))
                                return r, tuple(sl.stride()), r is sl
                            r = (addbmm_loop(op, sl, b1, b2, beta, alpha) if mine else
                                 f(sl, b1, b2, beta=beta, alpha=alpha))
                            return r, tuple(r.stride()), None
                    want = run(lambda: call(False))
                    got = outcome(lambda: call(True))
                    w = (want[0], want[1][0].detach()) if want[0] == "ok" else want
                    gt = (got[0], got[1][0].detach()) if got[0] == "ok" else got
                    tally.compare(f"{ss} {s1} {s2} {d0} {d1} {d2} beta {beta!r} alpha {alpha!r} grad {grad}", w, gt,
                                  want[1][1:] if want[0] == "ok" else None, got[1][1:] if got[0] == "ok" else None)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_addbmm_loop,)}
