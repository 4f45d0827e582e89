"""The prover of kernel `none_value` (shimgen/generate/routes/kernels/none_value.py): the op through the dispatcher with
its number pushed as None where it is None or the row's value, the row's `otherwise` (mirror_common's model of that
helper) for another.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import OTHERWISE, is_value, sample
from worker_common import aten, outcome, run, same


def none_value(s, v):
    """The generated wrapper (kernels/none_value.py): the number None or the rule's value, aten's op with None (the
    dispatcher's call); another, the row's `otherwise` (mirror_common's model of it) over the op's dims."""
    r = s["rule"]
    n = v[r["argument"]]
    if n is None or is_value(r, n):
        return aten(s["op"])(**dict(v, **{r["argument"]: None}))
    return OTHERWISE[r["otherwise"]](v, r["argument"])


def prove_none_value(op, s):
    """aten's op against none_value: dtypes (floating, complex, integral, bool), shapes (2-D, 0-dim, empty, 3-D),
    dims (one, two, empty, three, out of range), keepdim, numbers (None, the value as int and double, others); float64
    and complex128 gradients (a zero row) where the number is None or the value."""
    f = aten(op)
    s = dict(s, op=op)
    compared = both_ok = refused = 0
    wrong = ""
    numbers = [None, 2, 2.0, 1, 0, float("inf"), -float("inf"), 3, -2, 0.5, True, 2 + 0j, 1.5, -0.75, float("nan")]
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool):
        for k, shape in enumerate([(5, 7), (), (0,), (3, 4, 5), (0, 3), (40, 3)]):
            for dim in ([1], [-1], [0, 1], [], [0, 1, 2], [3], [0]):
                for keepdim in (False, True):
                    for n in numbers:
                        v = {"self": sample(shape, d, k), s["rule"]["argument"]: n, "dim": dim, "keepdim": keepdim}
                        got = outcome(lambda: none_value(s, v))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        want = run(lambda: f(**v))
                        both_ok += want[0] == got[0] == "ok"
                        if not same(want, got) and not wrong:
                            wrong = f"{d} {shape} {dim} {keepdim} {n!r}: {want[0]} " \
                                    f"{want[1] if want[0] == 'error' else want[1].dtype} vs {got[0]} " \
                                    f"{got[1] if got[0] == 'error' else got[1].dtype}"
                        if d in (torch.float64, torch.complex64) and want[0] == got[0] == "ok" and (
                                n is None or is_value(s["rule"], n)):
                            grads = []
                            for fn in (lambda x: f(**dict(v, self=x)), lambda x: none_value(s, dict(v, self=x))):
                                x = v["self"].to(torch.complex128 if d.is_complex else d).clone()
                                if k == 0:
                                    x[0] = 0  # a zero row: the norm's gradient there
                                x.requires_grad_()
                                res = fn(x)
                                (res * torch.arange(1, res.numel() + 1, dtype=res.dtype).view(res.shape)).sum().backward()
                                grads.append(x.grad)
                            if not same(("ok", grads[0]), ("ok", grads[1])) and not wrong:
                                wrong = f"gradient {d} {shape} {dim} {keepdim} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_none_value,)}
