"""The prover of kernel `scalars_tensor` (shimgen/generate/routes/kernels/scalars_tensor.py): the op as its _foreach_
sibling's `.Tensor` overload on one-element lists, the number packed in a 1-D tensor of its own type (scalar.h
scalars_tensor, check_scalars_route).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import DTYPES, requires_grad_proxy, sample
from worker_common import Refused, aten, outcome, same_error_text


SCALARS_NUMBERS = [0, 1, -1, 0.5, 0.1, -2.5, 3, -7, 1e-3, 1e10, 1e300, float("inf"), float("nan"), -0.0, 2**40,
                   2**63 - 1, 2**64, True, False, 1 + 2j, complex(0.5, 0)]
SCALARS_SHAPES = [((5, 7), (5, 7), (5, 7)), ((5, 7), (7,), ()), ((), (3,), (2, 1)), ((2, 1), (1, 3), (2, 3)),
                  ((0,), (0,), ()), ((3,), (2, 3), (3,)), ((6, 40), (6, 40), (6, 40)), ((6, 40), (40,), (6, 1)),
                  ((5, 7), (3,), (7,)), ((5, 7), (7,), (3, 1, 1)), ((), (), ())]


def packed_number(n):
    """scalar.h's scalars_tensor: [n] as a 1-D tensor of n's own type; an unsigned number above int64's range (a
    C++ uint64) refused."""
    if isinstance(n, bool):
        return torch.tensor([n], dtype=torch.bool)
    if isinstance(n, int):
        if not -2**63 <= n < 2**63:
            raise Refused("uint64")
        return torch.tensor([n], dtype=torch.int64)
    if isinstance(n, complex):
        return torch.tensor([n], dtype=torch.complex128)
    return torch.tensor([n], dtype=torch.float64)


def scalars_tensor_call(s, values):
    """The op as the generated wrapper computes it: the route's refusals (a tensor not on the CPU; a call autograd
    records), then `via` with each tensor as a one-element list and the number packed; its one result, or self
    for an in-place `via`."""
    tensors = [values[a] for a in s["args"] if s["types"][a] == "Tensor"]
    if any(t.device.type != "cpu" for t in tensors):
        raise Refused("device")
    if torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in tensors):
        raise Refused("autograd")
    kwargs = {va: packed_number(values[fa]) if s["types"][fa] == "Scalar" else [values[fa]]
              for va, fa in s["bind"].items()}
    r = aten(s["via"])(**kwargs)
    return values["self"] if r is None else r[0]


def scalars_samples(s):
    """(label, make) pairs; make() gives fresh arguments (an in-place op writes into self): dtype pairs over the
    three tensors, broadcasting, 0-dim, empty and mismatched shapes, transposed inputs, every kind of number;
    in-place aliasing (self as an input, partly overlapping one, an input expanded from self)."""
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    number = next(a for a in s["args"] if s["types"][a] == "Scalar")
    out = []
    for i, da in enumerate(DTYPES):
        for j, db in enumerate(DTYPES):
            dc = DTYPES[(i + j) % len(DTYPES)] if (i + j) % 3 == 0 else db
            for k, shapes in enumerate(SCALARS_SHAPES):
                for n in (SCALARS_NUMBERS if k in (0, 1, 6) or (i == j) else SCALARS_NUMBERS[:4] + [True]):
                    def make(da=da, db=db, dc=dc, shapes=shapes, k=k, n=n):
                        v = {a: sample(sh, d, 3 * k + m) for m, (a, sh, d) in
                             enumerate(zip(tensors, shapes, (da, db, dc)))}
                        v[number] = n
                        return v
                    out.append((f"{da} {db} {dc} {shapes} {n!r}", make))
    for d in (torch.float32, torch.float64, torch.bfloat16, torch.int64):
        for n in (1, 0.1, -3):
            def transposed(d=d, n=n):
                return {tensors[0]: sample((4, 3), d, 1).t(), tensors[1]: sample((3, 4), d, 2),
                        tensors[2]: sample((4, 3), d, 3).t(), number: n}

            def aliased(d=d, n=n):
                base = sample((3, 4), d, 4)
                return {tensors[0]: base, tensors[1]: base, tensors[2]: base, number: n}

            def partial(d=d, n=n):
                base = sample((3, 5), d, 5)
                return {tensors[0]: base[:, :4], tensors[1]: base[:, 1:], tensors[2]: sample((3, 4), d, 6),
                        number: n}

            def expanded(d=d, n=n):
                base = sample((3, 4), d, 7)
                return {tensors[0]: base, tensors[1]: base[:1].expand(3, 4), tensors[2]: base.t().t(), number: n}

            def meta(d=d, n=n):
                return {a: torch.empty((2, 3), dtype=d, device="meta") for a in tensors} | {number: n}
            for label, fn in (("transposed", transposed), ("aliased", aliased), ("partial overlap", partial),
                              ("expanded from self", expanded), ("meta", meta)):
                out.append((f"{d} {label} {n!r}", fn))
    return out


def prove_scalars_tensor(op, s):
    """The op against aten's on every sample (values, dtype, shape, strides, errors with aten's message; an in-place
    op: self's values and the returned tensor being self), outside grad mode, in grad mode with no input requiring
    grad, under no_grad with inputs requiring grad, and in grad mode with one requiring grad (refused: that
    overload has no derivative; the refusal is counted, never compared)."""
    f = aten(op)
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    inplace = aten(s["via"])._schema.returns == []
    compared = both_ok = refused = 0
    wrong = ""

    def result(fn, v):
        r = fn(v)
        if inplace:
            return torch.cat([r.flatten(), torch.tensor([float(r is v["self"])], dtype=r.dtype)]
                             if r.dtype != torch.bool else [r.flatten(), torch.tensor([r is v["self"]])]), r.stride()
        return r, (r.stride(), r.requires_grad)

    def compare(label, make, grad_mode, requires_grad=None):
        nonlocal compared, both_ok, refused, wrong
        outs = []
        for fn in (lambda v: f(**v), lambda v: scalars_tensor_call(s, v)):
            v = make()
            if requires_grad is not None and v[requires_grad].is_floating_point():
                leaf = v[requires_grad].clone().requires_grad_()
                v[requires_grad] = leaf * 1 if inplace and requires_grad == tensors[0] else leaf
            with torch.set_grad_enabled(grad_mode):
                o = outcome(lambda: result(fn, v))
            outs.append(o)
        want, got = outs
        compared += 1
        if got[0] == "refused":
            refused += 1
            return
        if want[0] == "refused":  # aten never refuses: a sample error
            want = ("error", want[1])
        both_ok += want[0] == got[0] == "ok"
        w = (want[0], want[1][0]) if want[0] == "ok" else want
        g = (got[0], got[1][0]) if got[0] == "ok" else got
        if (not same_error_text(w, g) or (want[0] == got[0] == "ok" and want[1][1] != got[1][1])) and not wrong:
            wrong = f"{label} grad mode {grad_mode} requires grad {requires_grad}: {want[0]} " \
                    f"{want[1] if want[0] == 'error' else want[1][1]} vs {got[0]} " \
                    f"{got[1] if got[0] != 'ok' else got[1][1]}"

    for label, make in scalars_samples(s):
        compare(label, make, False)
        if label.startswith(("torch.float64 torch.float64", "torch.float32 torch.float32")):
            compare(label, make, True)
            for a in tensors:
                compare(label, make, False, a)  # no_grad, an input requiring grad: aten records nothing either
                compare(label, make, True, a)  # recorded: refused
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_scalars_tensor,)}
