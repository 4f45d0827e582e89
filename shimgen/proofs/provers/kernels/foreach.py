"""The prover of kernel `foreach` (shimgen/generate/routes/kernels/foreach.py): the foreach op as `via` on each
element in order, after aten's checks, as aten's own CPU kernel (the slow path) computes it.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import refuse_backward, sample
from worker_common import ATEN_RAISES, Refused, aten, outcome, run, same, weights


def first_list(s):
    """The op's first Tensor[] argument (self, or exponent for _foreach_pow.ScalarAndTensor): aten checks it."""
    return next(a for a, t in s["types"].items() if t == "Tensor[]")


def inplace(op):
    return op.split(".")[0].endswith("_")


def foreach_loop(s, values):
    """The foreach op as the generated wrapper computes it: aten's checks (a non-empty list, lists of one length),
    then `via` on each element in order, as aten's own CPU kernel (the slow path) does; a functional op returns
    via's results in order."""
    first = first_list(s)
    self = values[first]
    if not self:
        raise RuntimeError(f"Tensor list must have at least one tensor {ATEN_RAISES}")
    lists = [a for a, t in s["types"].items() if t.endswith("[]")]
    for a in lists:
        if len(values[a]) != len(self):
            raise RuntimeError(f"lists of different lengths {ATEN_RAISES}")
    for a, t in s["types"].items():  # a Tensor beside the lists stands for a number: aten requires it 0-dim
        if t == "Tensor" and values[a].dim() != 0:
            raise RuntimeError(f"must be a 0-dim tensor {ATEN_RAISES}")
    every = [t for a, t_ in s["types"].items() if t_ in ("Tensor[]", "Tensor")
             for t in (values[a] if t_ == "Tensor[]" else [values[a]])]
    if any(t.device.type != "cpu" for t in every):  # kernels/foreach.h foreach_on_cpu
        raise Refused("a tensor not on the CPU")
    refuse_backward(s["rule"].get("backward_raises"), self, values)
    via = aten(s["via"])
    return [via(**{va: values[fa][i] if fa in lists else values[fa] for va, fa in s["bind"].items()})
            for i in range(len(self))]


def foreach_samples(s):
    """(label, make) pairs; make() gives fresh arguments (the ops write into self)."""
    types = s["types"]
    first = first_list(s)
    numbers = [1, 2, 0.5, -1.5, 0]
    out = []
    for dtypes in ([torch.float32], [torch.float64, torch.float32], [torch.bfloat16, torch.float64], [torch.int64],
                   [torch.float32, torch.int64], []):
        for n in numbers:
            for mismatch in (False, True):
                def make(dtypes=dtypes, n=n, mismatch=mismatch):
                    k = len(dtypes)
                    v = {first: [sample((2, 3) if i % 2 == 0 else (4,), d, i) for i, d in enumerate(dtypes)]}
                    for a, t in types.items():
                        if a == first:
                            continue
                        if t == "Tensor[]":
                            v[a] = [sample((2, 3) if i % 2 == 0 else (4,), d, i + 7)
                                    for i, d in enumerate(dtypes[: k - mismatch])]
                        elif t == "Scalar[]":
                            v[a] = [float(n) + i for i in range(k - mismatch)]
                        elif t == "Tensor":
                            v[a] = sample((), torch.float64, 3) if not mismatch else sample((3,), torch.float64, 3)
                        elif t == "ScalarType":  # _foreach_norm's dtype: aten's default, or float64
                            v[a] = torch.float64 if n == 2 else None
                        else:
                            v[a] = n
                    return v
                if mismatch and not any(t in ("Tensor[]", "Scalar[]", "Tensor") for a, t in types.items()
                                        if a != first):
                    continue
                out.append((f"{dtypes} {n} mismatch={mismatch}", make))
    def aliased():
        t = sample((3,), torch.float32, 1)
        return foreach_samples_plain(types, first, [t, t])
    out.append(("aliased", aliased))
    return out


def foreach_samples_plain(types, first, self):
    v = {first: self}
    for a, t in types.items():
        if a == first:
            continue
        v[a] = ([sample(x.shape, x.dtype, 5) for x in self] if t == "Tensor[]" else [0.5] * len(self)
                if t == "Scalar[]" else sample((), torch.float64, 3) if t == "Tensor" else None
                if t == "ScalarType" else 2)
    return v


def prove_foreach(op, s):
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""

    first = first_list(s)

    def after(fn, v):
        results = fn(v)
        if inplace(op):  # what it leaves in self
            results = v[first]
        return torch.cat([t.flatten().to(torch.float64) for t in results] + [torch.tensor(
            [hash(str(t.dtype)) % 1000 for t in results], dtype=torch.float64)])

    for label, make in foreach_samples(s):
        want = run(lambda: after(lambda v: f(**v), make()))
        got = outcome(lambda: after(lambda v: foreach_loop(s, v), make()))
        compared += 1
        if got[0] == "refused":
            refused += 1
            continue
        both_ok += want[0] == got[0] == "ok"
        if not same(want, got) and not wrong:
            wrong = f"{label}: {want[0]} {want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                    f"{got[1] if got[0] == 'error' else ''}"
    # float64 gradients: self not a leaf, the other tensors leaves
    for n in (2, 0.5):
        grads = []
        for fn in (lambda v: f(**v), lambda v: foreach_loop(s, v)):
            def backward(fn=fn):
                v = foreach_samples_plain(s["types"], first, [sample((2, 3), torch.float64, i) for i in range(2)])
                v = {a: ([t.requires_grad_() for t in x] if isinstance(x, list) and x and isinstance(x[0], torch.Tensor)
                         else x.requires_grad_() if isinstance(x, torch.Tensor) else x) for a, x in v.items()}
                leaves = [t for a, x in v.items() for t in (x if isinstance(x, list) else [x])
                          if isinstance(t, torch.Tensor)]
                if inplace(op):  # an in-place op writes into self: not a leaf
                    v[first] = [t * 1 for t in v[first]]
                for a, t in s["types"].items():
                    if t == "Scalar":
                        v[a] = n
                results = fn(v)
                if inplace(op):
                    results = v[first]
                sum((t * weights(t)).sum() for t in results).backward()
                return torch.cat([(t.grad if t.grad is not None else torch.zeros_like(t)).flatten() for t in leaves])
            grads.append(run(backward))
        if not same(*grads) and not wrong:
            wrong = f"gradient {n}: {grads[0][0]} vs {grads[1][0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_foreach,)}
