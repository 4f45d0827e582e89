"""The prover of kernel `number_as_none` (shimgen/generate/routes/kernels/number_as_none.py): the op as `via` with
its number as via's `Scalar?` None, for one value.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import OTHERWISE, is_value, sample
from worker_common import Refused, aten, outcome, run, same


def number_as_none(s, v):
    """The generated wrapper (kernels/number_as_none.py): the rule's one value (int or double), else the row's
    `otherwise` (vector_norm_cpu; with `operand`, over its result) or refused; an optional int list of the lengths `lengths` allows, or refused;
    then `via` with None for the number."""
    r = s["rule"]
    n = v[r["argument"]]
    operand = r.get("operand")
    if operand:  # dist: `operand`'s op on the op's tensors first (aten's self - other)
        v = dict(v, **{operand["as"]: aten(operand["via"])(*(v[a] for a in operand["args"]))})
    if not is_value(r, n):
        if "otherwise" in r:  # with `operand`, over its result
            return OTHERWISE[r["otherwise"]](dict(v, self=v[operand["as"]]) if operand else v, r["argument"])
        raise Refused("number")
    for name, lengths in r.get("lengths", {}).items():
        if v.get(name) is not None and len(v[name]) not in lengths:
            raise Refused("length")
    return aten(r["via"])(**{va: v[fa] for va, fa in r["args"].items()}, **{r["none"]: None}, **r.get("fixed", {}))


def prove_number_as_none(op, s):
    """aten's op against number_as_none: dtypes (floating, complex, integral, bool), shapes (2-D, 0-dim, empty,
    3-D), dims (None, one, two, none, three, out of range), keepdim, dtype=, numbers (the value as int and double,
    others); float64 and complex128 gradients (zeros, inf and nan among the values)."""
    f = aten(op)
    r = s["rule"]
    compared = both_ok = refused = 0
    wrong = ""
    numbers = [2, 2.0, 1, 0, float("inf"), -float("inf"), 3, -2, 0.5, True, 2 + 0j, 1.5, -0.75, 4, 7.25,
               float("nan"), 1e-3]
    has = set(s["args"])  # only the arguments the op takes (norm.Scalar: self and p)
    others = [("other", (5, 7)), ("other", ()), ("other", (7,)), ("other", (3, 1))] if "other" in has else [None]
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool):
        for k, shape in enumerate([(5, 7), (), (0,), (3, 4, 5), (0, 3), (40, 3)]):
            for dim in ((None, [1], [-1], [0, 1], [], [0, 1, 2], [3], [0]) if "dim" in has else [None]):
                for keepdim in ((False, True) if "keepdim" in has else [False]):
                    for dtype in ((None, torch.float32, torch.float64, torch.complex128) if "dtype" in has else [None]):
                        for n, o in ((n, o) for n in numbers for o in others):
                            v = {"self": sample(shape, d, k), r["argument"]: n, "dim": dim, "keepdim": keepdim,
                                 "dtype": dtype}
                            v = {a: x for a, x in v.items() if a in has}
                            if o is not None:  # dist: a second tensor (broadcasting or not), of d and of float64
                                v["other"] = sample(o[1], d if k % 2 == 0 else torch.float64, k + 11)
                            got = outcome(lambda: number_as_none(s, v))
                            compared += 1
                            if got[0] == "refused":
                                refused += 1
                                continue
                            want = run(lambda: f(**v))
                            both_ok += want[0] == got[0] == "ok"
                            if not same(want, got) and not wrong:
                                wrong = f"{d} {shape} {dim} {keepdim} {dtype} {n!r}: {want[0]} " \
                                        f"{want[1] if want[0] == 'error' else want[1].dtype} vs {got[0]} " \
                                        f"{got[1] if got[0] == 'error' else got[1].dtype}"
                            if d in (torch.float64, torch.complex64) and dtype is None and want[0] == got[0] == "ok" \
                                    and is_value(r, n):  # the CPU kernel of another value refuses autograd
                                grads = []
                                for fn in (lambda x, y: f(**dict(v, self=x, **y)),
                                           lambda x, y: number_as_none(s, dict(v, self=x, **y))):
                                    x = v["self"].to(torch.complex128 if d.is_complex else d).clone()
                                    if k == 0:
                                        x[0] = 0  # a zero row: the norm's gradient there
                                    x.requires_grad_()
                                    y = ({"other": v["other"].to(x.dtype).clone().requires_grad_()}
                                         if "other" in v else {})
                                    res = fn(x, y)
                                    (res * torch.arange(1, res.numel() + 1, dtype=res.dtype).view(res.shape)
                                     ).sum().backward()
                                    grads.append(torch.cat([x.grad.flatten(), *(t.grad.flatten() for t in y.values())]))
                                if not same(("ok", grads[0]), ("ok", grads[1])) and not wrong:
                                    wrong = f"gradient {d} {shape} {dim} {keepdim} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_number_as_none,)}
