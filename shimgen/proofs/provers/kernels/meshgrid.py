"""The prover of kernel `meshgrid` (shimgen/generate/routes/kernels/meshgrid.py): meshgrid with an indexing string as
aten's TensorShape.cpp computes it, by the same views.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from worker_common import ATEN_RAISES, Tally, aten, outcome, run, weights


def meshgrid(tensors, indexing):
    """The generated wrapper (kernels/meshgrid.h meshgrid_compute)."""
    size = len(tensors)
    if size == 0:
        raise RuntimeError(f"meshgrid expects a non-empty TensorList {ATEN_RAISES}")
    for i in range(size - 1):
        if tensors[i].dtype != tensors[i + 1].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype {ATEN_RAISES}")
        if tensors[i].device != tensors[i + 1].device:
            raise RuntimeError(f"meshgrid expects all tensors to have the same device {ATEN_RAISES}")
    inputs = list(tensors)
    swapped = False
    if indexing == "xy":
        swapped = size >= 2
        if swapped:
            inputs[0], inputs[1] = inputs[1], inputs[0]
    elif indexing != "ij":
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing} '
                           f"{ATEN_RAISES}")
    shape = []
    for t in inputs:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got one of {t.dim()} "
                               f"dimensions {ATEN_RAISES}")
        shape.append(t.numel())
    grids = []
    view_shape = [1] * size
    for i in range(size):
        view_shape[i] = -1
        grids.append(aten("expand.default")(aten("view.default")(inputs[i], view_shape), shape))
        view_shape[i] = 1
    if swapped:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def _stack(r):
    """A list of grids as one outcome: their values flat, and their shapes and strides (views: strides matter)."""
    if r[0] != "ok":
        return r, None
    grids = r[1]
    return ("ok", torch.cat([g.reshape(-1) for g in grids]) if grids else torch.zeros(0)), \
        [(tuple(g.shape), g.stride(), g.storage_offset()) for g in grids]


def prove_meshgrid(op, s):
    """aten::meshgrid.indexing against the wrapper's model: one to four inputs of sizes 0-5 and 0-D, "ij", "xy" and
    unknown strings, six dtypes, mixed dtypes, a 2-D input, no input, strided (sliced) inputs; results, shapes,
    strides and storage offsets of the views, errors; float64 gradients through every grid."""
    f = aten(op)
    t = Tally()
    g = torch.Generator().manual_seed(9)
    cases = [[(3,)], [(3,), (4,)], [(2,), (0,), (5,)], [(), (3,)], [(3,), ()], [(1,), (1,), (2,), (3,)], [(4,), (4,)],
             [(2, 2)], [(3,), (2, 2)], []]
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool, torch.complex64):
        for k, shapes in enumerate(cases):
            xs = [(torch.randn(sh, generator=g, dtype=torch.float64) * 3).to(dtype) for sh in shapes]
            if k % 2 and xs and xs[0].dim() == 1 and xs[0].numel() >= 2:
                xs[0] = torch.randn(2 * xs[0].numel(), generator=g).to(dtype)[::2]  # strided
            for indexing in ("ij", "xy", "IJ", ""):
                want, want_meta = _stack(run(lambda: f(xs, indexing=indexing)))
                got, got_meta = _stack(outcome(lambda: meshgrid(xs, indexing)))
                t.compare(f"{dtype} {shapes} {indexing!r}", want, got, want_meta, got_meta)
    mixed = [torch.zeros(3), torch.zeros(2, dtype=torch.float64)]
    t.compare("mixed dtypes", run(lambda: f(mixed, indexing="ij")), outcome(lambda: meshgrid(mixed, "ij")))
    for shapes in ([(3,), (4,)], [(2,), (3,), (4,)]):
        for indexing in ("ij", "xy"):
            grads = []
            for fn in (lambda v: f(v, indexing=indexing), lambda v: meshgrid(v, indexing)):
                def backward(fn=fn):
                    gg = torch.Generator().manual_seed(4)
                    leaves = [torch.randn(sh, generator=gg, dtype=torch.float64).requires_grad_() for sh in shapes]
                    total = sum((r * weights(r)).sum() for r in fn(leaves))
                    total.backward()
                    return torch.cat([x.grad.flatten() for x in leaves])
                grads.append(run(backward))
            t.compare(f"gradient {shapes} {indexing}", *grads)
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_meshgrid,)}
