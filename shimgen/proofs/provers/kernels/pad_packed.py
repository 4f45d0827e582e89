"""The prover of kernel `pad_packed` (shimgen/generate/routes/kernels/pad_packed.py): aten's _pad_packed_sequence
(PackedSequence.cpp) as the same aten calls.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same, weights


PAD_BATCHES = [[3, 2, 1], [3, 3, 1], [2, 2, 2], [1], [4, 2, 2, 1, 1], [3, 0], [0], [0, 0], [5, 5, 4, 4, 4, 2],
               [1, 2], [3, -1], [-1], [2, 3, 1]]
PAD_NUMBERS = [0, 0.0, 1, -1.5, float("nan"), float("inf"), True, 2**40, 1 + 2j, 1e300, -0.0]


def pad_packed(calls, data, batch_sizes, batch_first, padding_value, total_length):
    """kernels/pad_packed.py and scalar.h's pad_packed_* helpers, step by step."""
    sizes_t = aten(calls["dense"])(batch_sizes)
    if not (sizes_t.dim() == 1 and sizes_t.device.type == "cpu" and sizes_t.dtype == torch.int64):
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor {ATEN_RAISES}")
    if sizes_t.numel() == 0:
        raise RuntimeError(f"batch_sizes can not be empty {ATEN_RAISES}")
    sizes = sizes_t.tolist()
    max_batch_size, n = sizes[0], len(sizes)
    if 0 < total_length < n:
        raise RuntimeError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                           f"got total_length={total_length} and max sequence length being {n} {ATEN_RAISES}")
    length = total_length if total_length > 0 else n
    if data.dim() == 0:
        raise RuntimeError(f"ArrayRef: invalid slice, N = 1; size = 0 {ATEN_RAISES}")
    view_size = [length, max_batch_size, *data.shape[1:]]
    output = aten(calls["fill"])(view_size, padding_value, dtype=data.dtype, layout=data.layout, device=data.device)
    lengths = aten(calls["blank"])(sizes_t, [max_batch_size])
    if any(b < 0 for b in sizes) or any(b > a for a, b in zip(sizes, sizes[1:])):
        raise Refused("batch sizes that grow or are negative")
    part = aten(calls["part"])
    offset, prev_batch_size, prev_i = 0, max_batch_size, 0
    for i in range(n + 1):
        batch_size = sizes[i] if i != n else 0
        if batch_size != prev_batch_size:
            rows = prev_batch_size * (i - prev_i)
            tmp = part(data, 0, offset, offset + rows)
            view_size[0], view_size[1] = i - prev_i, prev_batch_size
            target = part(part(output, 0, prev_i, i), 1, 0, prev_batch_size)
            aten(calls["write"])(target, aten(calls["shape"])(tmp, view_size))
            offset += rows
            prev_i = i
        prev_batch_size = batch_size
    written, before = [], sizes[0]  # scalar.h pad_packed_lengths: from the last element down
    for i in range(n + 1):
        batch = sizes[i] if i != n else 0
        written += [i] * max(before - batch, 0)
        before = batch
    with torch.no_grad():
        lengths.copy_(torch.tensor(written[::-1], dtype=torch.int64))
    if batch_first:
        output = aten(calls["swap"])(output, 0, 1)
    return output, lengths


def prove_pad_packed(op, s):
    """aten's op against the composition: data dtypes and shapes (1-D to 3-D, 0-dim, fewer and more rows than the
    batch sizes add up to), batch sizes (runs, zeros, one step, growing or negative: refused, int32, 2-D, strided,
    empty), batch_first both ways, padding values of every kind, total_length (0, negative, equal, longer, shorter);
    both results' values, dtypes and strides, errors; float64 and complex128 gradients of data under weighted upstream
    gradients. An empty batch_sizes is not run on aten before 2.10, which reads its first element unchecked."""
    f, calls = aten(op), s["rule"]["calls"]
    tally = Tally()
    checked_empty = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 10)

    def compare(label, want, got):
        """Both results (output and lengths): values, dtypes, shapes and strides; or the same error."""
        tally.compared += 1
        if got[0] == "refused":
            tally.refused += 1
            return
        if want[0] == got[0] == "ok":
            tally.both_ok += 1
            ok = all(same(("ok", a), ("ok", b)) and a.stride() == b.stride() for a, b in zip(want[1], got[1]))
        else:
            ok = same(want, got)
        if not ok and not tally.wrong:
            tally.wrong = f"{label}: {want[0]} {want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                          f"{got[1] if got[0] == 'error' else ''}"

    batches = [torch.tensor(b, dtype=torch.int64) for b in PAD_BATCHES]
    batches += [torch.tensor([3, 2, 1], dtype=torch.int32), torch.tensor([[3, 2, 1]]),
                torch.tensor([3, 9, 2, 9, 1, 9])[::2], torch.tensor([], dtype=torch.int64)]
    for d in (torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64, torch.float16):
        for k, bs in enumerate(batches):
            total = max(int(bs.clamp(min=0).sum()), 0) if bs.dtype == torch.int64 else 6
            for rows, tail in ((total, (2,)), (total, ()), (total, (2, 3)), (total + 2, (2,)), (max(total - 1, 0), (2,)),
                               (None, ())):
                data = sample(() if rows is None else (rows, *tail), d, k)
                for batch_first in (False, True):
                    for n in PAD_NUMBERS:
                        for total_length in (0, -1, bs.numel() if bs.dim() == 1 else 1, 7, 1):
                            label = f"{d} {bs.tolist()} rows {rows} {tail} {batch_first} {n!r} {total_length}"
                            got = outcome(lambda: pad_packed(calls, data, bs, batch_first, n, total_length))
                            if bs.numel() == 0 and not checked_empty:
                                compare(label, ("error", ""), ("refused", "not run on aten"))
                                continue
                            if got[0] == "refused":  # aten writes out of bounds there: not run
                                compare(label, ("error", ""), got)
                                continue
                            want = run(lambda: f(data, bs, batch_first, n, total_length))
                            compare(label, want, got)
                            if (d not in (torch.float64, torch.complex64) or want[0] != "ok" or got[0] != "ok"
                                    or n not in (0.0, -1.5) or total_length not in (0, 7)):
                                continue
                            grads = []
                            for fn in (lambda x: f(x, bs, batch_first, n, total_length),
                                       lambda x: pad_packed(calls, x, bs, batch_first, n, total_length)):
                                def backward(fn=fn):
                                    x = data.to(torch.complex128 if d.is_complex else d).clone().requires_grad_()
                                    r = fn(x)[0]
                                    if not r.requires_grad:
                                        return torch.zeros(0)
                                    (r * weights(r)).sum().real.backward()
                                    return x.grad if x.grad is not None else torch.zeros_like(x)
                                grads.append(run(backward))
                            if not same(*grads) and not tally.wrong:
                                tally.wrong = f"gradient {label}: {grads[0][0]} vs {grads[1][0]}"
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_pad_packed,)}
