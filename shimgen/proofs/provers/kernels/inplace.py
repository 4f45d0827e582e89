"""The prover of kernel `inplace` (shimgen/generate/routes/kernels/inplace.py): the functional overload (`via`) out
of place, then aten's in-place rules and copy_ into self (mirror_common.assign_inplace); a row over an op with an
index or a matrix product (`samples`) is tried on arguments that op accepts.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import INDEXED_DTYPES, assign_inplace, can_cast, indexed_samples, overlaps, sample, shares_memory
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same, same_error_text, weights


def inplace_cases(dtypes, tensors=("self", "other")):
    """(label, make) pairs: make() gives fresh tensors each call (in-place ops consume self): {self, other} (the
    second tensor under its name in `tensors`), or {self} for an op of one tensor."""
    cases = []
    if list(tensors) == ["self"]:
        for da in dtypes:
            for k, sa in enumerate([(2, 3), (), (0, 3), (4, 5), (7, 19)]):  # (7, 19): vectors and a tail
                cases.append((f"{da} {da} {sa}", lambda da=da, sa=sa, k=k: {"self": sample(sa, da, k + 11)}))
            cases.append((f"{da} transposed", lambda da=da: {"self": sample((3, 4), da, 3).t()}))
        return cases
    for da in dtypes:
        for db in dtypes:
            for k, (sa, sb) in enumerate([((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), ()), ((3,), (2, 3)),
                                          ((), ()), ((0, 3), (3,))]):
                cases.append((f"{da} {db} {sa} {sb}", lambda da=da, db=db, sa=sa, sb=sb, k=k: {
                    "self": sample(sa, da, k), "other": sample(sb, db, k + 5)}))
        def overlapping(kind, da=da):
            base = sample((3, 4), da, 9)
            if kind == "same":
                return {"self": base, "other": base}
            if kind == "partial":
                return {"self": base[:, :3], "other": base[:, 1:]}
            if kind == "transposed":
                sq = sample((3, 3), da, 4)
                return {"self": sq, "other": sq.t()}
            if kind == "disjoint":
                return {"self": base[:, :2], "other": base[:, 2:]}
            return {"self": sample((3, 1), da, 2).expand(3, 4), "other": base}  # internal overlap
        for kind in ("same", "partial", "transposed", "disjoint", "expanded"):
            cases.append((f"{da} overlap {kind}", lambda kind=kind, o=overlapping: o(kind)))
    second = tensors[1]  # the second tensor's name (lerp_: end)
    if second == "other":
        return cases
    return [(label, lambda make=make: {second if k == "other" else k: t for k, t in make().items()})
            for label, make in cases]


def prove_inplace(op, s):
    if s.get("samples"):  # an op with an index or a matrix product: its own samples
        return prove_indexed(op, s)
    f = aten(op)
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if s["types"][a] == "Scalar"]
    compared = both_ok = refused = 0
    wrong = ""
    for label, make in inplace_cases([torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64,
                                      torch.int32, torch.bool, torch.complex64], tensors):
        given = s["rule"].get("sample_values")  # the row's values of the op's other arguments (renorm_)
        # numbers a reduced dtype holds exactly and numbers it rounds (aten computes with those in float)
        for n in ([None] if given else [1, 2, 0.5, -1.5, 0, 0.1, -0.3, 3.7e-3] if numbers else [None]):
            extra = dict(given) if given else {a: (-n if j else n) for j, a in enumerate(numbers)}  # a second
            # number: the first negated
            for grad_mode in (False, True):  # the composition clones self in grad mode: both forms compared
                with torch.set_grad_enabled(grad_mode):
                    want = run(lambda: f(**make(), **extra))
                    got = outcome(lambda: assign_inplace(s["via"], dict(make(), **extra), s["saves_self"],
                                                        s["rule"].get("backward_raises"),
                                                        s["rule"].get("refuse_cast", False)))
                compared += 1
                if got[0] == "refused":
                    refused += 1
                    continue
                both_ok += want[0] == got[0] == "ok"
                if not same(want, got) and not wrong:
                    wrong = f"{label} {n!r} grad mode {grad_mode}: {want[0]} {want[1] if want[0] == 'error' else ''} " \
                            f"vs {got[0]}"
            if label.startswith("torch.float64 torch.float64") and want[0] == got[0] == "ok":
                # self a non-leaf requiring grad; and (with other tensors) self requiring none, the others grad
                for self_grad in ((True, False) if len(tensors) > 1 else (True,)):
                    grads = []
                    for fn in (lambda v: f(**v, **extra),
                               lambda v: assign_inplace(s["via"], dict(v, **extra), s["saves_self"],
                                                        s["rule"].get("backward_raises"))):
                        v = make()
                        leaves = {k: t.clone().requires_grad_() for k, t in v.items() if k != "self" or self_grad}
                        call = dict(v, **leaves)
                        call["self"] = leaves["self"] * 1 if self_grad else v["self"].clone()  # self: not a leaf

                        def backward(fn=fn, call=call, leaves=leaves):
                            r = fn(call)
                            (r * weights(r)).sum().backward()
                            return torch.cat([leaves[k].grad.flatten() for k in sorted(leaves)])
                        grads.append(run(backward))
                    if not same(*grads) and not wrong:
                        wrong = f"gradient {label} {n!r} self requires grad {self_grad}: {grads[0][0]} " \
                                f"{grads[0][1] if grads[0][0] == 'error' else ''} vs {grads[1][0]} " \
                                f"{grads[1][1] if grads[1][0] == 'error' else ''}"
                leaf = make()["self"].requires_grad_()  # in place on a leaf that requires grad: both raise
                rest = {k: t for k, t in make().items() if k != "self"}
                a = run(lambda: f(self=leaf, **rest, **extra))
                b = outcome(lambda: assign_inplace(s["via"], dict(self=leaf, **rest, **extra), s["saves_self"],
                                                   s["rule"].get("backward_raises")))
                if not same(a, b) and not wrong:
                    wrong = f"leaf requiring grad {label}: {a[0]} vs {b[0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- rows over ops with an index (`samples: scatter`) or a matrix product (`samples: matmul`) ----

def prove_indexed(op, s):
    """prove_inplace over an op with an index (`samples: scatter`) or a matrix product (`samples: matmul`), on
    arguments those ops accept."""
    if s["samples"] == "matmul":  # (section below)
        return prove_matmul_inplace(op, s)
    f = aten(op)
    tally = Tally()
    compare = tally.compare

    for d in INDEXED_DTYPES:
        for label, make in indexed_samples(s, d):
            for grad_mode in (False, True):
                with torch.set_grad_enabled(grad_mode):
                    want = run(lambda: f(**make()))
                    got = outcome(lambda: assign_inplace(s["via"], make(), s["saves_self"]))
                compare(f"{label} grad mode {grad_mode}", want, got)
            if d == torch.float64 and want[0] == got[0] == "ok":
                grads = []
                for fn in (lambda v: f(**v), lambda v: assign_inplace(s["via"], v, s["saves_self"])):
                    def backward(fn=fn):
                        v = make()
                        leaf = v["self"].clone().requires_grad_()
                        r = fn(dict(v, self=leaf * 1))
                        (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                        return leaf.grad
                    grads.append(run(backward))
                compare(f"gradient {label}", grads[0], grads[1])
                leaf = make()["self"].requires_grad_()  # in place on a leaf requiring grad: both raise
                rest = {k: v for k, v in make().items() if k != "self"}
                compare(f"leaf {label}", run(lambda: f(self=leaf, **rest)),
                        outcome(lambda: assign_inplace(s["via"], dict(rest, self=leaf), s["saves_self"])))
    return tally.report()


# ---- `samples: matmul` (addmm_ over addmm.default: row keys `refuse_aliased`, `autograd: refused`): scalar.h's
# inplace_leaf_check, `via`'s legacy out= route (autograd refuses it where an input requires grad in grad mode),
# refuse_aliased, then assign_inplace ----

def matmul_inplace(s, values):
    self = values["self"]
    tensors = [v for v in values.values() if isinstance(v, torch.Tensor)]
    if s["rule"].get("autograd") == "refused" and torch.is_grad_enabled():
        if self.is_leaf and self.requires_grad:
            aten("copy_")(self, self)  # raises aten's in-place error
        if any(t.requires_grad for t in tensors):
            raise Refused("autograd")
    result = aten(s["via"])(**values)
    if s["rule"].get("refuse_strides") and self.shape != result.shape:
        raise RuntimeError("Bad in-place call: input tensor size and output tensor size should match")
    if s["rule"].get("refuse_strides") and self.shape == result.shape and self.stride() != result.stride():
        raise Refused("strides")
    if s["rule"].get("refuse_aliased"):
        for k, v in values.items():
            if k != "self" and isinstance(v, torch.Tensor) and overlaps(self, v):
                raise Refused("aliased")
    return _assign(self, result, values, s["rule"].get("refuse_cast", False))


def _assign(self, result, values, refuse_cast=False):
    if not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"the result's dtype cannot be cast {ATEN_RAISES}")
    if refuse_cast and result.dtype != self.dtype:  # scalar.h refuse_cast: aten returns a temporary there
        raise Refused("cast")
    for k, v in values.items():
        if k != "self" and isinstance(v, torch.Tensor) and shares_memory(self, v):
            raise Refused("overlap")
    return self.copy_(result)


def matmul_samples(d):
    """(label, make): {self, mat1, mat2}; shapes aten accepts or refuses, broadcast selves, aliases."""
    out = []
    shapes = [((2, 3), (2, 4), (4, 3)), ((3,), (2, 4), (4, 3)), ((1, 3), (1, 4), (4, 3)), ((2, 1), (2, 4), (4, 3)),
              ((), (2, 4), (4, 3)), ((2, 3), (2, 0), (0, 3)), ((0, 3), (0, 4), (4, 3)), ((2, 3), (2, 5), (4, 3)),
              ((2, 3, 1), (2, 4), (4, 3))]
    for k, (a, b, c) in enumerate(shapes):
        out.append((f"{d} {a} {b} {c}", lambda a=a, b=b, c=c, k=k: {
            "self": sample(a, d, k), "mat1": sample(b, d, k + 1), "mat2": sample(c, d, k + 2)}))
    for other in (torch.float64, torch.float32, torch.int64):
        if other != d:
            out.append((f"{d} mats {other}", lambda other=other: {
                "self": sample((2, 3), d, 1), "mat1": sample((2, 4), other, 2), "mat2": sample((4, 3), other, 3)}))
            out.append((f"{other} self, mats {d}", lambda other=other: {
                "self": sample((2, 3), other, 1), "mat1": sample((2, 4), d, 2), "mat2": sample((4, 3), d, 3)}))

    def aliased(kind):
        sq, m = sample((3, 3), d, 4), sample((3, 3), d, 5)
        if kind == "self is mat1":
            return {"self": sq, "mat1": sq, "mat2": m}
        if kind == "self is mat2":
            return {"self": sq, "mat1": m, "mat2": sq}
        if kind == "transposed mat1":
            return {"self": sq, "mat1": sq.t(), "mat2": m}
        if kind == "transposed self":
            return {"self": sample((3, 2), d, 6).t(), "mat1": sample((2, 4), d, 7), "mat2": sample((4, 3), d, 8)}
        base = sample((3, 5), d, 9)
        if kind == "partial":
            return {"self": base[:, :3], "mat1": base[:, 2:], "mat2": m}
        if kind == "row slice":
            return {"self": base[:2, :3], "mat1": sample((2, 4), d, 7), "mat2": sample((4, 3), d, 8)}
        if kind == "column":
            return {"self": sample((3, 5), d, 10)[:, :1], "mat1": sample((3, 4), d, 7), "mat2": sample((4, 1), d, 8)}
        return {"self": base[:, :3].clone(), "mat1": base[:, 2:], "mat2": m}  # disjoint
    for kind in ("self is mat1", "self is mat2", "transposed mat1", "transposed self", "partial", "disjoint",
                 "row slice", "column"):
        out.append((f"{d} {kind}", lambda kind=kind: aliased(kind)))
    return out


def prove_matmul_inplace(op, s):
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""

    def compare(label, want, got, text=False):
        nonlocal compared, both_ok, refused, wrong
        compared += 1
        if got[0] == "refused":
            refused += 1
            return
        both_ok += want[0] == got[0] == "ok"
        if not (same_error_text(want, got) if text else same(want, got)) and not wrong:
            wrong = f"{label}: {want[0]} {want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                    f"{got[1] if got[0] == 'error' else ''}"

    numbers = [(1, 1), (0, 1), (0.5, 2), (2, -1.5), (0, 0), (1, 3)]
    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
              torch.bool, torch.complex64):
        for label, make in matmul_samples(d):
            for beta, alpha in numbers:
                n = {"beta": beta, "alpha": alpha}
                for grad_mode in (False, True):
                    with torch.set_grad_enabled(grad_mode):
                        want = run(lambda: f(**make(), **n))
                        got = outcome(lambda: matmul_inplace(s, dict(make(), **n)))
                    compare(f"{label} {beta} {alpha} grad mode {grad_mode}", want, got)
                if d != torch.float64 or want[0] != "ok":
                    continue
                def backward(fn, who):
                    v = make()
                    leaves = {k: t.clone().requires_grad_() for k, t in v.items() if k == who or who == "both"}
                    call = dict(v, **leaves)
                    if "self" in leaves:
                        call["self"] = leaves["self"] * 1  # not a leaf
                    (fn(call) * 3).sum().backward()
                    return torch.cat([leaves[k].grad.flatten() for k in sorted(leaves)])

                for who in ("self", "mat1", "both"):  # autograd records the call: aten's gradient, or a refusal
                    want = run(lambda: backward(lambda v: f(**v, **n), who))
                    got = outcome(lambda: backward(lambda v: matmul_inplace(s, dict(v, **n)), who))
                    compare(f"gradient {who} {label} {beta} {alpha}", want, got)
                leaf = make()["self"].requires_grad_()  # in place on a leaf requiring grad: aten's own error
                rest = {k: t for k, t in make().items() if k != "self"}
                compare(f"leaf {label}", run(lambda: f(self=leaf, **rest, **n)),
                        outcome(lambda: matmul_inplace(s, dict(rest, self=leaf, **n))), text=True)
                with torch.no_grad():  # no grad mode: inputs requiring grad, computed
                    v = make()
                    leaves = {k: t.clone().requires_grad_() for k, t in v.items() if k != "self"}
                    compare(f"no_grad {label}", run(lambda: f(**dict(make(), **leaves), **n)),
                            outcome(lambda: matmul_inplace(s, dict(make(), **leaves, **n))))
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_inplace,)}
