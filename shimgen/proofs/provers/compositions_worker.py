"""Run by each runtime's own interpreter (imports torch only): is aten's overload exactly the kernel composition
the generated wrapper computes (scalar.h's shimgen::detail::<kernel>_select, mirrored step by step below with the
same aten calls), on every dtype, shape (broadcasting, 0-dim, empty; inf, nan, -0.0 among the values) and number
tried, errors included, and in its float64 gradients?

Reads {overload: {"kernel": name, "prover": the hook that proves it, "args": [the overload's argument names],
"bind": [the kernel's arguments in the order of its parameters: the overload's argument names, or numbers], and the
facts of the kernel's registry entry (shimgen/generate/routes/kernels, prover_spec: `mirror`, `nan_gradient`, ...)}} on
stdin, writes {overload: {"compared": n, "both_ok": n, "refused": n, "wrong": example or ""}}. A refusal (the
wrapper's own `shimgen:` error) is counted, never a difference. Each row runs its entry's hook (PROVERS): no kernel
is known here by its name."""

import json
import math
import sys

import torch

from worker_common import (ATEN_RAISES, ROW, TEXT_DIFFERS, Refused, Tally, aten, outcome, run, same,
                           same_error_text, weights)

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool, torch.complex64, torch.uint16]
SHAPES = [((5, 7), (5, 7)), ((5, 7), ()), ((), (3,)), ((2, 1), (1, 3)), ((0,), (0,)), ((3,), (2, 3)), ((), (4,)), ((4,), ())]
NUMBERS = [0, 1, -1, 0.5, 0.1, -2.5, 3, 1e-3, 1e10, 1e300, float("inf"), float("nan"), 2**40, True]
THRESHOLD_KERNEL = {torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                    torch.float32, torch.float64}


def in_range(n, dtype):
    """scalar.h's in_range: exact for an integral or bool dtype, finite within range for a floating one."""
    if dtype.is_complex:  # each part finite within the part's range (the double holds an integer exactly)
        c = complex(n)
        limit = torch.finfo(dtype).max
        exact = not isinstance(n, int) or isinstance(n, bool) or abs(n) <= 2**53
        return exact and all(math.isfinite(p) and abs(p) <= limit for p in (c.real, c.imag))
    if isinstance(n, complex):
        return False
    if dtype == torch.bool:
        return n in (0, 1)
    if not dtype.is_floating_point:
        if isinstance(n, float) and not (math.isfinite(n) and n == int(n)):
            return False
        info = torch.iinfo(dtype)
        return info.min <= int(n) <= info.max
    if isinstance(n, int) and not isinstance(n, bool) and abs(n) > 2**53:
        return False
    return math.isfinite(float(n)) and abs(float(n)) <= torch.finfo(dtype).max


def number_tensor(n, dtype):
    """scalar.h's number_tensor: the C shims' static_cast; half and bfloat16 through a float32 tensor."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.tensor(float(n), dtype=torch.float32).to(dtype)
    return torch.tensor(n, dtype=dtype)


def threshold_select(x, other, threshold, value):
    ct = torch.result_type(x, other)
    if ct not in THRESHOLD_KERNEL:
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(threshold, cmp) or not in_range(value, ct):
        raise Refused("number")
    mask = aten("le.Tensor")(x.to(ct).to(cmp), number_tensor(threshold, cmp))
    return aten("where.self")(mask, number_tensor(value, ct), other.to(ct))


def leaky_relu_select(x, other, negative_slope, self_is_result):
    ct = torch.result_type(x, other)
    if ct not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(negative_slope, cmp):
        raise Refused("number")
    if self_is_result and float(negative_slope) < 0:
        raise RuntimeError(f"in-place backward, negative slope {ATEN_RAISES}")
    mask = aten("gt.Tensor")(x.to(ct).to(cmp), number_tensor(0, cmp))
    o = other.to(ct).to(cmp)
    o = aten("expand_as")(o, aten("where.self")(mask, o, o))  # scalar.h: one reduction of a broadcast gradient
    return aten("where.self")(mask, o, aten("mul.Tensor")(o, number_tensor(negative_slope, cmp))).to(ct)


def hardtanh_backward_select(x, other, min_val, max_val):
    check_broadcast(other, x)  # scalar.h: aten's operand order, grad_output then self
    ct = torch.result_type(other, x)
    if ct not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(min_val, cmp) or not in_range(max_val, cmp):
        raise Refused("number")
    xc = x.to(ct).to(cmp)
    if xc.isnan().any():  # scalar.h's refuse_nan: aten's answer there depends on the element's position
        raise Refused("nan")
    inside = aten("logical_and")(aten("gt.Tensor")(xc, number_tensor(min_val, cmp)),
                                 aten("lt.Tensor")(xc, number_tensor(max_val, cmp)))
    return aten("where.self")(inside, other.to(ct), number_tensor(0, ct))


def clamp_select(x, min_val, max_val):
    """scalar.h's clamp_select (hardtanh): the bounds in x's dtype (truncated to integers first for an integral x),
    `min < x < max ? x : clamp(detach(x), min, max)`."""
    t = x.dtype
    if t not in THRESHOLD_KERNEL:
        raise Refused("dtype")

    def bound(b):
        if not t.is_floating_point:
            if isinstance(b, complex) or not abs(float(b)) < 9.2e18:
                raise Refused("number")
            b = int(b)
        if not in_range(b, t):
            raise Refused("number")
        return number_tensor(b, t)
    lo, hi = bound(min_val), bound(max_val)
    inside = aten("logical_and")(aten("gt.Tensor")(x, lo), aten("lt.Tensor")(x, hi))
    return aten("where.self")(inside, x, aten("clamp.Tensor")(x.detach(), lo, hi))


def hardshrink_select(x, lambd):
    """scalar.h's hardshrink_select: `-lambd <= x <= lambd ? 0 : x` in x's dtype (half and bfloat16 too)."""
    t = x.dtype
    if t not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise Refused("dtype")
    if not in_range(lambd, t):
        raise Refused("number")
    inside = aten("logical_and")(aten("ge.Tensor")(x, number_tensor(-float(lambd), t)),
                                 aten("le.Tensor")(x, number_tensor(lambd, t)))
    return aten("where.self")(inside, number_tensor(0, t), x)


# A row's `nan_gradient` (its registry entry's, shimgen/generate/routes/kernels: clamp, hardshrink): the kernel's aten backward
# (hardtanh_backward, shrink_backward) gives at a NaN input 0 in its vectorized loop and the incoming gradient in its
# scalar loop (the element's position decides, not its value: measured on every runtime): its gradients are compared
# wherever the input is not NaN.


def can_cast(src, dst):
    """scalar.h's can_cast (c10::canCast)."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    return src == torch.bool or dst != torch.bool


def byte_span(t):
    if t.numel() == 0:
        return None
    last = sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()


def shares_memory(a, b):
    """scalar.h's shares_memory: byte spans intersect, and not as the very same view."""
    sa, sb = byte_span(a), byte_span(b)
    if sa is None or sb is None or sa[1] <= sb[0] or sb[1] <= sa[0]:
        return False
    return not (a.data_ptr() == b.data_ptr() and a.dtype == b.dtype and a.shape == b.shape
                and a.stride() == b.stride())


def assign_inplace(via, values, saves_self=False, backward_raises=None, refuse_cast=False):
    """The in-place op as the generated wrapper computes it: `via` (the functional overload) out of place (with
    `saves_self`, where autograd records the call, on a clone of self: scalar.h's saved_self), aten's in-place
    rules (scalar.h's assign_inplace), then copy_ into self."""
    self = values["self"]
    inputs = [v for v in values.values() if isinstance(v, torch.Tensor)]
    recorded = saves_self and torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in inputs)
    saved = aten("clone")(self) if recorded else self
    result = aten(via)(**dict(values, self=saved))
    refuse_backward(backward_raises, [self], values)
    if not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"the result's dtype cannot be cast {ATEN_RAISES}")
    if refuse_cast and result.dtype != self.dtype:  # scalar.h refuse_cast: aten returns a temporary there
        raise Refused("cast")
    for k, v in values.items():
        if k != "self" and isinstance(v, torch.Tensor) and shares_memory(self, v):
            raise Refused("overlap")
    return self.copy_(result)


def inplace_cases(dtypes, tensors=("self", "other")):
    """(label, make) pairs: make() gives fresh tensors each call (in-place ops consume self): {self, other}, or
    {self} for an op of one tensor."""
    cases = []
    if list(tensors) == ["self"]:
        for da in dtypes:
            for k, sa in enumerate([(2, 3), (), (0, 3), (4, 5)]):
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
    return cases


def sample(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    if shape == () and seed >= 18:  # just above 0 and 0.1: rounds onto them in a narrower dtype
        t = torch.tensor(0.1 + 1e-4 if seed % 2 else 1e-30, dtype=torch.float64)
    if t.numel() > 8:  # specials in the vectorized body and in the scalar tail (aten's two paths can differ)
        t.view(-1)[:5] = torch.tensor([float("nan"), float("inf"), -0.0, 0.0, 0.5], dtype=torch.float64)
        t.view(-1)[-1] = float("nan")
    if dtype == torch.bool:
        return t > 0
    if dtype.is_floating_point or dtype.is_complex:
        return t.to(dtype)
    return t.nan_to_num(0.0, 0.0, 0.0).round().clamp(0 if dtype in (torch.uint8, torch.uint16) else -9, 9).to(dtype)


def main():
    spec = json.load(sys.stdin)
    report = {}
    for op, s in spec.items():
        ROW[0] = op  # error texts that differ are kept per row (worker_common.same)
        if s.get("samples"):  # out= / in-place rows over ops with an index or a sorted sequence
            report[op] = prove_indexed(op, s)
            continue
        report[op] = PROVERS[s["prover"]](op, s)  # the kernel's registry entry names its hook
    for op, (n, example) in TEXT_DIFFERS.items():
        report[op].update(text_differs=n, text_example=list(example))
    print(json.dumps(report))


def prove_kernel(op, s):
    """An elementwise kernel (`mirror`: scalar.h's <kernel>_select, mirrored above) against aten's op on every
    dtype pair, shape, number, and in its float64 gradients."""
    f, kernel = aten(op), MIRRORS[s["mirror"]]
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if a not in tensors]
    compared = both_ok = refused = 0
    wrong = ""

    def mine(values):
        return kernel(*(values[b] if isinstance(b, str) else b for b in s["bind"]))

    for da in DTYPES:
        for db in (DTYPES if len(tensors) > 1 else [da]):
            for k, shapes in enumerate(SHAPES):
                for n in NUMBERS:
                    values = {a: sample(sh, d, 3 * k + i)
                              for i, (a, sh, d) in enumerate(zip(tensors, shapes, (da, db)))}
                    for j, name in enumerate(numbers):  # a second number: the first negated (min/max)
                        values[name] = (bool(k % 2) if s["types"].get(name) == "bool" else
                                        -n if j and not isinstance(n, bool) else n)
                    want = run(lambda: f(**values))
                    got = outcome(lambda: mine(values))
                    compared += 1
                    if got[0] == "refused":
                        refused += 1
                        continue
                    both_ok += want[0] == got[0] == "ok"
                    if not same(want, got) and not wrong:
                        wrong = f"{da} {db} {shapes} {n!r}: {want[0]} vs {got[0]}"
                    if da == db == torch.float64 and want[0] == got[0] == "ok":
                        grads = []
                        for fn in (lambda v: f(**v), mine):
                            leaves = {a: values[a].clone().requires_grad_() for a in tensors}
                            r = fn(dict(values, **leaves))
                            (r * weights(r)).sum().backward()
                            # a gradient autograd never reached is zero (aten's formula gives zeros_like)
                            grads.append([leaves[a].grad if leaves[a].grad is not None else
                                          torch.zeros_like(leaves[a]) for a in tensors])
                        for a, ga, gb in zip(tensors, *grads):
                            if s["nan_gradient"]:
                                keep = ~values[a].isnan()
                                ga, gb = ga[keep], gb[keep]
                            if not same(("ok", ga), ("ok", gb)) and not wrong:
                                wrong = f"gradient {shapes} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


def foreach_loop(s, values):
    """The foreach op as the generated wrapper computes it: aten's checks (a non-empty list, lists of one length),
    then `via` on each element in order, as aten's own CPU kernel (the slow path) does."""
    self = values["self"]
    if not self:
        raise RuntimeError(f"Tensor list must have at least one tensor {ATEN_RAISES}")
    lists = [a for a, t in s["types"].items() if t.endswith("[]") and a != "self"]
    for a in lists:
        if len(values[a]) != len(self):
            raise RuntimeError(f"lists of different lengths {ATEN_RAISES}")
    for a, t in s["types"].items():  # a Tensor beside the lists stands for a number: aten requires it 0-dim
        if t == "Tensor" and values[a].dim() != 0:
            raise RuntimeError(f"must be a 0-dim tensor {ATEN_RAISES}")
    refuse_backward(s["rule"].get("backward_raises"), self, values)
    via = aten(s["via"])
    for i in range(len(self)):
        via(**{va: values[fa][i] if fa in lists or fa == "self" else values[fa] for va, fa in s["bind"].items()})


def foreach_samples(s):
    """(label, make) pairs; make() gives fresh arguments (the ops write into self)."""
    types = s["types"]
    numbers = [1, 2, 0.5, -1.5, 0]
    out = []
    for dtypes in ([torch.float32], [torch.float64, torch.float32], [torch.bfloat16, torch.float64], [torch.int64],
                   [torch.float32, torch.int64], []):
        for n in numbers:
            for mismatch in (False, True):
                def make(dtypes=dtypes, n=n, mismatch=mismatch):
                    k = len(dtypes)
                    v = {"self": [sample((2, 3) if i % 2 == 0 else (4,), d, i) for i, d in enumerate(dtypes)]}
                    for a, t in types.items():
                        if a == "self":
                            continue
                        if t == "Tensor[]":
                            v[a] = [sample((2, 3) if i % 2 == 0 else (4,), d, i + 7)
                                    for i, d in enumerate(dtypes[: k - mismatch])]
                        elif t == "Scalar[]":
                            v[a] = [float(n) + i for i in range(k - mismatch)]
                        elif t == "Tensor":
                            v[a] = sample((), torch.float64, 3) if not mismatch else sample((3,), torch.float64, 3)
                        else:
                            v[a] = n
                    return v
                if mismatch and not any(t in ("Tensor[]", "Scalar[]", "Tensor") for a, t in types.items()
                                        if a != "self"):
                    continue
                out.append((f"{dtypes} {n} mismatch={mismatch}", make))
    def aliased():
        t = sample((3,), torch.float32, 1)
        v = foreach_samples_plain(types, [t, t])
        return v
    out.append(("aliased", aliased))
    return out


def foreach_samples_plain(types, self):
    v = {"self": self}
    for a, t in types.items():
        if a == "self":
            continue
        v[a] = ([sample(x.shape, x.dtype, 5) for x in self] if t == "Tensor[]" else [0.5] * len(self)
                if t == "Scalar[]" else sample((), torch.float64, 3) if t == "Tensor" else 2)
    return v


def prove_foreach(op, s):
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""

    def after(fn, v):
        fn(v)
        return torch.cat([t.flatten().to(torch.float64) for t in v["self"]] + [torch.tensor(
            [hash(str(t.dtype)) % 1000 for t in v["self"]], dtype=torch.float64)])

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
                v = foreach_samples_plain(s["types"], [sample((2, 3), torch.float64, i) for i in range(2)])
                v = {a: ([t.requires_grad_() for t in x] if isinstance(x, list) and x and isinstance(x[0], torch.Tensor)
                         else x.requires_grad_() if isinstance(x, torch.Tensor) else x) for a, x in v.items()}
                leaves = [t for a, x in v.items() for t in (x if isinstance(x, list) else [x])
                          if isinstance(t, torch.Tensor)]
                v["self"] = [t * 1 for t in v["self"]]
                for a, t in s["types"].items():
                    if t == "Scalar":
                        v[a] = n
                fn(v)
                sum((t * weights(t)).sum() for t in v["self"]).backward()
                return torch.cat([(t.grad if t.grad is not None else torch.zeros_like(t)).flatten() for t in leaves])
            grads.append(run(backward))
        if not same(*grads) and not wrong:
            wrong = f"gradient {n}: {grads[0][0]} vs {grads[1][0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


def prove_inplace(op, s):
    f = aten(op)
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if s["types"][a] == "Scalar"]
    compared = both_ok = refused = 0
    wrong = ""
    for label, make in inplace_cases([torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32,
                                      torch.bool, torch.complex64], tensors):
        given = s["rule"].get("sample_values")  # the row's values of the op's other arguments (renorm_)
        for n in ([None] if given else [1, 2, 0.5, -1.5, 0] if numbers else [None]):
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


# ---- kernel `wrapped_numbers`: an op aten computes as its Tensor overload, its numbers wrapped ----

WRAPPED_NUMBERS = [0, 1, -1, 3, 0.5, 0.1, -2.5, 1e-3, 1e10, 1e300, float("inf"), float("nan"), 2**40, 2**53 + 1,
                   16777217, 16777216.5, 300, -129, True, False, 1.5 + 2j]


def wrapped_dtype(n):
    """The dtype aten gives a wrapped number in type promotion."""
    if isinstance(n, bool):
        return torch.bool
    if isinstance(n, int):
        return torch.int64
    d = torch.get_default_dtype()
    return d if isinstance(n, float) else {torch.float32: torch.complex64, torch.float64: torch.complex128}[d]


def wrapped_numbers(s, values):
    """scalar.h's wrapped_numbers_dtype / wrapped_number_tensor, then `via`: the numbers as 0-dim tensors of the
    dtype aten gives them as wrapped numbers among the `promote` tensors."""
    numbers = [a for a in s["args"] if s["types"][a] == "Scalar"]
    for n in numbers:  # the row's refuse_kinds (kernels/wrapped.py _refused_kinds)
        kind = "bool" if isinstance(values[n], bool) else "complex" if isinstance(values[n], complex) else ""
        if kind in s.get("refuse_kinds", []):
            raise Refused("kind")
    dtype = None
    for n in numbers:
        dtype = wrapped_dtype(values[n]) if dtype is None else torch.promote_types(dtype, wrapped_dtype(values[n]))
    for t in s["promote"]:
        dtype = torch.result_type(values[t], values[numbers[0]]) if len(numbers) == 1 else None
    unwrapped = s["rule"].get("unwrapped_at")  # kernels/wrapped.py _unwrapped_dtype: aten's sorting path
    if unwrapped and values[unwrapped["tensor"]].numel() >= unwrapped["from"]:
        dtype = natural_tensor(values[numbers[0]]).dtype
    if dtype is None or dtype in (torch.complex32,):
        raise Refused("dtype")
    if str(dtype) in (f"torch.{d.lower()}" for d in s.get("refuse_dtypes", [])):  # the row's refuse_dtypes
        raise Refused("dtype")
    tensors = {}
    for n in numbers:
        if not in_range(values[n], dtype):
            raise Refused("number")
        tensors[n] = number_tensor(values[n], dtype)
    return aten(s["via"])(**{va: tensors.get(fa, values.get(fa)) for va, fa in s["bind"].items() if fa in values})


def wrapped_samples(s):
    """(label, values) pairs: each dtype of the op's tensor (sorted along its last dim: searchsorted and bucketize
    need it), shapes (1-D, 0-dim, empty, 2-D), every number (two for where.Scalar), each bool argument both ways."""
    types = s["types"]
    tensor = next(a for a in s["args"] if types[a] == "Tensor")
    numbers = [a for a in s["args"] if types[a] == "Scalar"]
    flags = [a for a in s["args"] if types[a] == "bool"]
    # `number_limit` (laguerre, legendre: aten's kernel loops n times per element): larger finite numbers left out
    limit = s["rule"].get("number_limit")
    tried = [n for n in WRAPPED_NUMBERS if limit is None or isinstance(n, (bool, complex)) or not math.isfinite(n)
             or abs(n) <= limit]
    out = []
    shapes = [(7,), (), (0,), (3, 4), (40,)]
    if s["rule"].get("unwrapped_at"):  # both sides of the size where aten's kernel changes paths
        shapes += [(9,), (10,), (11,), (40, 1), (3,)]
    for d in DTYPES if tensor != "condition" else [torch.bool, torch.uint8]:
        for k, shape in enumerate(shapes):
            base = sample(shape, d, k)
            if shape in ((40,), (9,), (10,), (3,)) and not (d.is_floating_point or d.is_complex or d == torch.bool):
                base = torch.tensor([1, 16777216, 16777217, 16777218] * 10).to(d)[:shape[0]]  # float32 rounds these
            if shape in ((40, 1), (9,), (11,), (3,)) and d.is_floating_point:  # the numbers in the dtype's rounding
                base = torch.tensor([0.1, 0.5, 16777216, 1e10, -2.5, 3, 1e-3] * 6, dtype=torch.float64).to(d)[
                    :shape[0]].reshape(shape)
            t = base if d.is_complex or base.dim() == 0 else base.sort(dim=-1).values
            for i, n in enumerate(tried):
                for j, flag in enumerate([False, True] if flags else [None]):
                    v = {tensor: t}
                    for m, name in enumerate(numbers):
                        v[name] = n if m == 0 else tried[(i + 5 * (j + 1)) % len(tried)]
                    for q, f in enumerate(flags):
                        v[f] = flag if q == 0 else (i % 2 == 1)
                    out.append((f"{d} {shape} {v}", v))
    return out


def prove_wrapped_out(op, s):
    """An out= overload aten computes as its Tensor out= overload with the numbers wrapped (searchsorted.Scalar_out,
    isin.Scalar_Tensor_out, the polynomials' n_scalar_out): every sample of wrapped_samples with outs of the
    result's dtype (of its shape, empty, non-empty resized), of other dtypes, and in grad mode with the tensor
    requiring grad; out's values, strides, identity, resize warnings and requires_grad compared."""
    f = aten(op)
    tally = Tally()
    tensor = next(a for a in s["args"] if s["types"][a] == "Tensor" and a != s["out"])
    for label, values in wrapped_samples(s):
        r = run(lambda: f(**values, **{s["out"]: torch.empty(0, dtype=torch.int64)}))
        r = r if r[0] == "ok" else run(lambda: f(**values, **{s["out"]: torch.empty(0, dtype=torch.bool)}))
        r = r if r[0] == "ok" else run(lambda: f(**values, **{s["out"]: torch.empty(0, dtype=values[tensor].dtype)}))
        dtype, shape = (r[1].dtype, tuple(r[1].shape)) if r[0] == "ok" else (torch.int64, (0,))
        makers = [("exact", lambda: torch.empty(shape, dtype=dtype)), ("empty", lambda: torch.empty(0, dtype=dtype)),
                  ("non-empty resized", lambda: torch.zeros(7, dtype=dtype))]
        makers += [(f"dtype {o}", lambda o=o: torch.zeros(shape, dtype=o))
                   for o in (torch.int32, torch.bool, torch.float32) if o != dtype]
        for kind, make_out in makers:
            oa, ob = make_out(), make_out()
            want = observed(lambda: f(**values, **{s["out"]: oa}), oa)
            got = observed(lambda: wrapped_numbers(s, {**values, s["out"]: ob}), ob)
            tally.compare(f"{label} out {kind}", want[0], got[0], want[1], got[1])
        if values[tensor].is_floating_point() and values[tensor].dim() > 0:  # grad mode, the tensor requiring grad
            va, vb = dict(values), dict(values)
            va[tensor] = values[tensor].clone().requires_grad_()
            vb[tensor] = values[tensor].clone().requires_grad_()
            oa, ob = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype)
            want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
            got = observed(lambda: wrapped_numbers(s, {**vb, s["out"]: ob}), ob)
            tally.compare(f"{label} requires grad", want[0], got[0], want[1], got[1])
    return tally.report()


def prove_wrapped(op, s):
    if s["out"]:
        return prove_wrapped_out(op, s)
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    for label, values in wrapped_samples(s):
        want = run(lambda: f(**values))
        got = outcome(lambda: wrapped_numbers(s, values))
        compared += 1
        if got[0] == "refused":
            refused += 1
            continue
        both_ok += want[0] == got[0] == "ok"
        if not same(want, got) and not wrong:
            wrong = f"{label}: {want[0]} {want[1] if want[0] == 'error' else want[1].dtype} vs {got[0]} " \
                    f"{got[1] if got[0] == 'error' else got[1].dtype}"
    for default in (torch.float64,):  # the default dtype decides a floating-point number's wrapped dtype
        old = torch.get_default_dtype()
        torch.set_default_dtype(default)
        try:
            for label, values in wrapped_samples(s)[::7]:
                want = run(lambda: f(**values))
                got = outcome(lambda: wrapped_numbers(s, values))
                compared += 1
                if got[0] == "refused":
                    refused += 1
                    continue
                both_ok += want[0] == got[0] == "ok"
                if not same(want, got) and not wrong:
                    wrong = f"default {default} {label}: {want[0]} vs {got[0]}"
        finally:
            torch.set_default_dtype(old)
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `item_numbers`: an op whose Tensor overload takes each number back with .item() ----

def natural_tensor(n):
    """scalar.h's number_tensor(n, natural_type(n)): a 0-dim tensor of the number's own type."""
    dtype = (torch.bool if isinstance(n, bool) else torch.int64 if isinstance(n, int) else
             torch.complex128 if isinstance(n, complex) else torch.float64)
    return torch.tensor(n, dtype=dtype)


def prove_items(op, s):
    """aten's op against `via` with each number as natural_tensor(n): pairs of numbers (ints, doubles, bools,
    complex, specials), steps, dtypes, base; under both default dtypes."""
    f = aten(op)
    numbers = [a for a in s["args"] if s["types"][a] == "Scalar"]
    values_ = [0, 1, -3, 10, 2**40, 2**53 + 1, 0.5, -2.25, 0.1, 1e300, float("inf"), float("nan"), True, 1 + 2j]
    compared = both_ok = refused = 0
    wrong = ""
    for default in (torch.float32, torch.float64):
        old = torch.get_default_dtype()
        torch.set_default_dtype(default)
        try:
            for i, a in enumerate(values_):
                for j, b in enumerate(values_):
                    for k, steps in enumerate([0, 1, 2, 7, 100, -1]):
                        dtype = [None, torch.float32, torch.int64, torch.float16, torch.complex64, torch.uint8][
                            (i + j + k) % 6]
                        v = {numbers[0]: a, numbers[1]: b, "steps": steps, "dtype": dtype}
                        if "base" in s["args"]:
                            v["base"] = [10.0, 2.0, 0.5][(i + k) % 3]
                        want = run(lambda: f(**v))
                        got = outcome(lambda: aten(s["via"])(**{va: natural_tensor(v[fa]) if fa in numbers else
                                                               v[fa] for va, fa in s["bind"].items() if fa in v}))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        if not same(want, got) and not wrong:
                            wrong = f"{default} {v}: {want[0]} {want[1] if want[0] == 'error' else want[1].dtype} " \
                                    f"vs {got[0]} {got[1] if got[0] == 'error' else got[1].dtype}"
        finally:
            torch.set_default_dtype(old)
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `as_double`: an op equal to `via` with its number as via's `float?` ----

def exact_double(n, dtype):
    """scalar.h's exact_double."""
    if isinstance(n, complex) or (isinstance(n, int) and not isinstance(n, bool) and abs(n) > 2**53):
        raise Refused("number")
    if isinstance(n, int) and not isinstance(n, bool) and n < 0 and dtype in (torch.uint8, torch.uint16):
        raise Refused("unsigned")
    return float(n)


def constant_pad_check(self, pad):
    """scalar.h's constant_pad_check: aten::constant_pad_nd's checks of `pad`, with its messages."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if self.dim() < len(pad) // 2:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {self.dim()}dimensions.")


CHECKS = {"constant_pad_check": constant_pad_check}  # row field `check`: the op's own checks, asked first


def prove_as_double(op, s):
    """aten's op against `via` (its `fixed` string arguments, the number as exact_double): every dtype, shapes
    (2-D, 0-dim, empty), pads (growing, shrinking, odd, too long, none), numbers; float64 gradients."""
    f = aten(op)
    number = next(a for a in s["args"] if s["types"][a] == "Scalar")
    compared = both_ok = refused = 0
    wrong = ""

    def mine(v):
        if s["check"]:
            CHECKS[s["check"]["function"]](*(v[a] for a in s["check"]["args"]))
        call = {va: v[fa] for va, fa in s["bind"].items() if fa in v}
        call[number] = exact_double(v[number], v["self"].dtype)
        return aten(s["via"])(**call, **s["fixed"])

    numbers = [0, 1, -1, 2.5, -0.0, 1e300, float("inf"), float("nan"), True, False, 2**53 + 1, 300, -129,
               2**40, 0.1, 1 + 2j]
    for d in DTYPES:
        for k, shape in enumerate([(3, 4), (), (0, 3), (2, 3, 4)]):
            for pad in ([1, 1], [0, 2, 1, 0], [-1, 1], [1, 2, 3], [1] * 8, [], [-2, -1, 0, 1]):
                for n in numbers:
                    v = {"self": sample(shape, d, k), "pad": pad, number: n}
                    want = run(lambda: f(**v))
                    got = outcome(lambda: mine(v))
                    compared += 1
                    if got[0] == "refused":
                        refused += 1
                        continue
                    both_ok += want[0] == got[0] == "ok"
                    # an error must be aten's own: its message, as the verify harness asks
                    if not same_error_text(want, got) and not wrong:
                        wrong = f"{d} {shape} {pad} {n!r}: {want[0]} {want[1] if want[0] == 'error' else ''} vs " \
                                f"{got[0]} {got[1] if got[0] == 'error' else ''}"
                    if d == torch.float64 and want[0] == got[0] == "ok":
                        grads = []
                        for fn in (lambda x: f(**dict(v, self=x)), lambda x: mine(dict(v, self=x))):
                            x = v["self"].clone().requires_grad_()
                            r = fn(x)
                            (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                            grads.append(x.grad if x.grad is not None else torch.zeros_like(x))
                        if not same(("ok", grads[0]), ("ok", grads[1])) and not wrong:
                            wrong = f"gradient {shape} {pad} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `scatter_fill`: scatter with a number as scatter.src of it expanded ----

def scatter_fill_select(self, dim, index, value):
    """scalar.h's scatter_fill_select."""
    if self.dtype in (torch.uint16,) or not in_range(value, self.dtype):
        raise Refused("number")
    return aten("scatter.src")(self, dim, index, number_tensor(value, self.dtype).expand_as(index))


def prove_scatter_fill(op, s):
    """aten's op against scatter_fill_select: every dtype, shapes (index smaller than self, 0-dim, empty), dims
    (negative, out of range), indices out of range, every number; float64 gradients."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    numbers = [0, 1, -1, 2.5, 2.0, 0.1, -0.0, 1e10, 1e300, float("inf"), float("nan"), True, 300, -129, 2**40,
               1 + 2j]
    cases = [((3, 4), (2, 3), 1), ((3, 4), (2, 3), 0), ((3, 4), (3, 4), -1), ((), (), 0), ((5,), (0,), 0),
             ((3, 4), (2, 3), 2), ((4, 5), (4, 5), 1)]
    for d in DTYPES:
        for k, (shape, ishape, dim) in enumerate(cases):
            g = torch.Generator().manual_seed(k)
            size = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
            index = torch.randint(0, size + (k == 6), ishape, generator=g)  # case 6: an index out of range
            for n in numbers:
                v = {"self": sample(shape, d, k), "dim": dim, "index": index, "value": n}
                want = run(lambda: f(**v))
                got = outcome(lambda: scatter_fill_select(**v))
                compared += 1
                if got[0] == "refused":
                    refused += 1
                    continue
                both_ok += want[0] == got[0] == "ok"
                if not same(want, got) and not wrong:
                    wrong = f"{d} {shape} {ishape} {dim} {n!r}: {want[0]} {want[1] if want[0] == 'error' else ''} " \
                            f"vs {got[0]} {got[1] if got[0] == 'error' else ''}"
                if d == torch.float64 and want[0] == got[0] == "ok":
                    grads = []
                    for fn in (lambda x: f(**dict(v, self=x)), lambda x: scatter_fill_select(**dict(v, self=x))):
                        x = v["self"].clone().requires_grad_()
                        r = fn(x)
                        (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                        grads.append(x.grad)
                    if not same(("ok", grads[0]), ("ok", grads[1])) and not wrong:
                        wrong = f"gradient {shape} {ishape} {dim} {n!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `out`: the functional, then aten's out= rules (scalar.h's check_out_autograd and assign_out) ----

def requires_grad_proxy(t):
    """scalar.h's requires_grad_in_grad_mode: an alias of a tensor requiring grad is a recorded view."""
    return not aten("is_leaf")(aten("alias")(t))


def overlaps(a, b):
    sa, sb = byte_span(a), byte_span(b)
    return sa is not None and sb is not None and sa[0] < sb[1] and sb[0] < sa[1]


def assign_out(s, values, out):
    """The out= op as the generated wrapper computes it (scalar.h's check_out_autograd, assign_out)."""
    inputs = [v for k, v in values.items() if isinstance(v, torch.Tensor)]
    if torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in [out, *inputs]):
        if s.get("rule", {}).get("no_derivative"):  # scalar.h refuse_recorded_out
            raise Refused("autograd")
        raise RuntimeError(f"out= and an input requires grad {ATEN_RAISES}")
    result = aten(s["via"])(**values)
    if s.get("rule", {}).get("refuse_cast") and result.dtype != out.dtype and can_cast(result.dtype, out.dtype):
        raise Refused("cast")  # scalar.h refuse_cast: aten returns a temporary of the result's dtype there
    if out.device != result.device:
        raise RuntimeError(f"out is on another device than the result {ATEN_RAISES}")
    if (result.dtype != out.dtype) if s.get("same_dtype") else not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"the result's dtype cannot be cast {ATEN_RAISES}")
    if s.get("rule", {}).get("empty_first"):  # scalar.h empty_out_first: aten's meta sizes out [0] first
        if any(n > 1 and st == 0 for n, st in zip(out.shape, out.stride())):
            raise Refused("out writes an element twice")
        if tuple(out.shape) != (0,):
            none = result.unsqueeze(0)[0:0]
            aten("where.self_out")(torch.tensor(True), none, none, out=out)
    resize = out.shape != result.shape
    if any(n > 1 and st == 0 for n, st in zip(out.shape, out.stride())):
        raise Refused("out writes an element twice")
    for t in inputs:
        if (overlaps(out, t) if resize else shares_memory(out, t)):
            raise Refused("overlap")
    if not resize:
        out.copy_(result)
    else:
        r = result.to(out.dtype)
        aten("where.self_out")(torch.tensor(True), r, r, out=out)
    return out


def assign_composite_out(s, values, out):
    """Row key `composite: true` (scalar.h check_out_device, assign_composite_out): aten's out= of a
    CompositeImplicitAutograd op: out's device, the functional, its dtype, out resized (where.self_out of a detached
    contiguous copy: resize_output's warning and strides; refused for an out autograd records), then copy_."""
    self = next(v for v in values.values() if isinstance(v, torch.Tensor))
    if out.device != self.device:
        raise RuntimeError(f"out is on another device than the input {ATEN_RAISES}")
    result = aten(s["via"])(**values)
    if result.dtype != out.dtype:
        raise RuntimeError(f"expected out tensor dtype to be the result's {ATEN_RAISES}")
    if out.shape != result.shape:
        if torch.is_grad_enabled() and requires_grad_proxy(out):
            raise Refused("resizing an out autograd records")
        value = aten("clone")(aten("detach")(result), memory_format=torch.contiguous_format)
        aten("where.self_out")(torch.tensor(True), value, value, out=out)
    out.copy_(result)
    return out


def observed(fn, out, texts=("was resized since it had shape",)):
    """fn()'s outcome with what an out= call leaves: out's strides, whether it returned out, how many of aten's
    resize warnings it gave (aten::X calls warn through c10's handler, on stderr, read from fd 2; or from 2.15 as
    Python warnings) and whether out
    requires grad."""
    import os
    import tempfile
    import warnings

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # 2.15 hands them to Python's warnings
        os.dup2(err.fileno(), 2)
        try:
            o = outcome(fn)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        text = err.read().decode(errors="replace") + "".join(str(w.message) for w in caught)
        warned = sum(text.count(t) for t in texts)
    if o[0] != "ok":
        return o, None
    return o, (tuple(out.stride()), o[1] is out, warned, out.requires_grad)


def prove_out(op, s):
    f = aten(op)
    names = [a for a in s["args"] if a != s["out"]]
    tensors = [a for a in names if s["types"][a] == "Tensor"]
    numbers = [a for a in names if s["types"][a] == "Scalar"]
    bools = [a for a in names if s["types"][a] == "bool"]
    compared = both_ok = refused = 0
    wrong = ""
    dtypes = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool,
              torch.complex64]
    shapes = ([((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((), ()), ((0, 3), (3,)), ((2, 3, 4, 5), (5,))]
              if len(tensors) > 1 else [((2, 3),), ((),), ((0, 3),), ((2, 3, 4, 5),)])

    def inputs(da, db, sh, n, k, channels_last=False):
        sh = tuple(sh) + tuple(sh[:1]) * (len(tensors) - len(sh))  # a third tensor (addcmul.out): the first's
        v = {a: sample(x, d, 3 * k + i) for i, (a, x, d) in enumerate(zip(tensors, sh, (da, db, da)))}
        if channels_last:
            v = {a: t.to(memory_format=torch.channels_last) if t.dim() == 4 else t for a, t in v.items()}
        for j, a in enumerate(numbers):
            v[a] = -n if j and not isinstance(n, bool) else n
        for a in bools:
            v[a] = bool(k % 2) and n >= 0
        v.update(s["rule"].get("sample_values", {}))  # the row's values of the op's other arguments (renorm.out)
        return v

    def outs(result_dtype, shape):
        yield "exact", lambda: torch.empty(shape, dtype=result_dtype)
        yield "empty", lambda: torch.empty(0, dtype=result_dtype)
        yield "non-empty resized", lambda: torch.zeros(7, dtype=result_dtype)
        if len(shape) >= 2:
            yield "transposed", lambda: torch.zeros(tuple(reversed(shape)), dtype=result_dtype).t() \
                if len(shape) == 2 else torch.zeros(shape, dtype=result_dtype).transpose(0, 1).contiguous() \
                .transpose(0, 1)
            yield "expanded", lambda: torch.zeros((1, *shape[1:]), dtype=result_dtype).expand(shape)
        for d in (torch.float32, torch.float64, torch.int64, torch.bool, torch.float16, torch.complex64):
            if d != result_dtype:
                yield f"dtype {d}", lambda d=d: torch.zeros(shape, dtype=d)

    def compare(label, make_values, make_out, grad_mode=False):
        nonlocal compared, both_ok, refused, wrong
        with torch.set_grad_enabled(grad_mode):
            va, oa = make_values(), make_out()
            want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
            vb, ob = make_values(), make_out()
            assign = assign_composite_out if s["rule"].get("composite") else assign_out
            got = observed(lambda: assign(s, vb, ob), ob)
        compared += 1
        if got[0][0] == "refused":
            refused += 1
            return
        both_ok += want[0][0] == got[0][0] == "ok"
        if (not same(want[0], got[0]) or want[1] != got[1]) and not wrong:
            wrong = f"{label}: {want[0][0]} {want[0][1] if want[0][0] == 'error' else want[1]} vs {got[0][0]} " \
                    f"{got[0][1] if got[0][0] == 'error' else got[1]}"

    for da in dtypes:
        for db in (dtypes if len(tensors) > 1 else [da]):
            for k, sh in enumerate(shapes):
                for n in ([0.5, -1.5, 2] if numbers or bools else [None]):
                    mk = (lambda da=da, db=db, sh=sh, n=n, k=k: inputs(da, db, sh, n, k))
                    r = run(lambda: aten(s["via"])(**mk()))
                    if r[0] != "ok":
                        compare(f"{da} {db} {sh} {n!r} (via raises)", mk, lambda: torch.empty(0, dtype=da))
                        continue
                    for kind, make_out in outs(r[1].dtype, tuple(r[1].shape)):
                        compare(f"{da} {db} {sh} {n!r} out {kind}", mk, make_out)
                    if len(sh[0]) == 4:  # channels_last inputs: a resized out gets their strides
                        mcl = (lambda da=da, db=db, sh=sh, n=n, k=k: inputs(da, db, sh, n, k, True))
                        compare(f"{da} {db} {sh} {n!r} channels_last, out empty", mcl,
                                lambda d=r[1].dtype: torch.empty(0, dtype=d))
    # aliasing: out is an input (same view; resized), partly overlaps one
    for n in ([0.5, -1.5] if numbers or bools else [None]):
        for target in tensors:
            for shape in ((2, 3), (3,)):
                box = {}

                def mk(shape=shape, target=target, n=n, box=box):
                    v = inputs(torch.float32, torch.float32, ((shape, (2, 3)) if len(tensors) > 1 else (shape,)), n, 5)
                    box["v"] = v
                    return v
                # out is the very tensor passed as `target` (the out tensor is made after the inputs)
                compare(f"out is {target} {shape} {n!r}", mk, lambda box=box, target=target: box["v"][target])
            base_box = {}

            def mk_partial(target=target, n=n, box=base_box):
                base = sample((3, 4), torch.float32, 9)
                v = inputs(torch.float32, torch.float32, tuple((3, 3) for _ in tensors), n, 6)
                v[target] = base[:, :3]
                box["base"] = base
                return v
            compare(f"out overlaps {target} {n!r}", mk_partial, lambda box=base_box: box["base"][:, 1:])
    # autograd: in grad mode no argument may require grad; without it aten computes. The number is the first of
    # the samples' for which `via` computes (linalg_matrix_norm raises for 0.5, which hid its grad-mode out= case)
    computes = [n for n in [0.5, -1.5, 2] if run(lambda: aten(s["via"])(**inputs(
        torch.float64, torch.float64, tuple((2, 3) for _ in tensors), n, 7)))[0] == "ok"]
    for n in (computes[:1] or [0.5] if numbers or bools else [None]):
        for who in [*tensors, "out"]:
            for grad_mode in (True, False):
                for nonleaf in (False, True):
                    box = {}

                    def mk_grad(who=who, n=n, nonleaf=nonleaf, box=box):
                        v = inputs(torch.float64, torch.float64, tuple((2, 3) for _ in tensors), n, 7)
                        if who != "out":
                            leaf = v[who].clone().requires_grad_()
                            v[who] = leaf * 1 if nonleaf else leaf
                        return v

                    def mk_out(who=who, nonleaf=nonleaf):
                        o = torch.zeros(2, 3, dtype=torch.float64)
                        if who == "out":
                            with torch.enable_grad():
                                o = o.requires_grad_() if not nonleaf else o.requires_grad_() * 1
                        return o
                    compare(f"{who} requires grad (non-leaf {nonleaf}), grad mode {grad_mode}", mk_grad, mk_out,
                            grad_mode)
    # the proxy itself: in grad mode, requires_grad of leaves, views, non-leaves, integer tensors
    with torch.enable_grad():
        leaf = torch.randn(3, dtype=torch.float64, requires_grad=True)
        for t in (leaf, leaf * 2, leaf[1:], leaf.detach(), torch.ones(3), torch.ones(3, dtype=torch.int64),
                  torch.randn(3)[1:]):
            if requires_grad_proxy(t) != t.requires_grad and not wrong:
                wrong = f"the requires_grad proxy differs for {t!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `arange_factory` / `range_factory`: aten's range factories as cumsum of [start, step, step, ...], per number ----

RANGE_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                torch.float32, torch.float64]
# a floating dtype's significand bits and the binary places of its least subnormal
PRECISION = {torch.float64: (53, 1074), torch.float32: (24, 149), torch.float16: (11, 24), torch.bfloat16: (8, 133)}
FLOAT32_MAX = 3.4028234663852886e38


def to_float32(x):
    """static_cast<float>(double): rounded to nearest, beyond float's range to an infinity."""
    return torch.tensor(x, dtype=torch.float64).to(torch.float32).item()


def binary_places(x):
    """scalar.h's binary_places: the least e >= 0 with x * 2^e whole (x finite)."""
    e = 0
    while x != math.floor(x):
        x *= 2
        e += 1
    return e


def trunc_div(a, b):
    """C++'s int64 division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def range_size(inclusive, numbers, dtype):
    """scalar.h's range_size: the numbers as aten's accumulate type holds them, aten's checks (an error), and the
    number of elements, where every release 2.9-2.15 agrees (their checks run in double or in the accumulate
    type, arange's int64 size in integers or in double): otherwise refused."""
    start, end, step = numbers
    d = [float(n) for n in numbers]
    integral = not dtype.is_floating_point
    if integral:
        acc = []
        for n in numbers:
            if isinstance(n, float) and not (math.isfinite(n) and -2.0 ** 63 < n < 2.0 ** 63):
                raise Refused("number")
            acc.append(int(n))
    else:
        if any(isinstance(n, int) and not isinstance(n, bool) and abs(n) > 2 ** 53 for n in numbers):
            raise Refused("number")
        if dtype in (torch.float16, torch.bfloat16):  # aten's float accumulate type: beyond its range aten raises
            if any(math.isfinite(x) and abs(x) > FLOAT32_MAX for x in d):
                raise Refused("number")
            acc = [to_float32(x) for x in d]
        else:
            acc = d

    def failing(s, e, t):
        return not (t > 0 or t < 0) or not (math.isfinite(s) and math.isfinite(e)) or \
            not ((t > 0 and e >= s) or (t < 0 and e <= s))
    if failing(*d) != failing(*acc):
        raise Refused("check")
    if failing(*d):
        raise RuntimeError(f"step 0, start or end not finite, or a wrong sign {ATEN_RAISES}")
    if math.isinf(d[2]):  # 2.15 raises (step must be finite), earlier releases give an empty or NaN range
        raise Refused("step")
    if inclusive:  # range: its end included
        if integral:
            diff = acc[1] - acc[0]
            if not -2 ** 63 <= diff < 2 ** 63 or not trunc_div(diff, acc[2]) + 1 < 2 ** 63:
                raise Refused("overflow")
            size_a = float(trunc_div(diff, acc[2]) + 1)
        elif dtype in (torch.float16, torch.bfloat16):
            size_a = to_float32(to_float32(to_float32(acc[1] - acc[0]) / acc[2]) + 1)
        else:
            size_a = (acc[1] - acc[0]) / acc[2] + 1
        size_d = (d[1] - d[0]) / d[2] + 1
        if not (math.isfinite(size_a) and math.isfinite(size_d) and size_a < 2.0 ** 63 and size_d < 2.0 ** 63):
            raise Refused("size")
        if int(size_a) != int(size_d):
            raise Refused("size")
        return int(size_a), acc
    size_d = math.ceil((d[1] - d[0]) / d[2]) if math.isfinite((d[1] - d[0]) / d[2]) else (d[1] - d[0]) / d[2]
    if dtype == torch.int64:
        sgn = (acc[2] > 0) - (acc[2] < 0)
        partial = [acc[1] - acc[0], acc[1] - acc[0] + acc[2], acc[1] - acc[0] + acc[2] - sgn]
        if any(not -2 ** 63 <= x < 2 ** 63 for x in partial) or (partial[2] == -2 ** 63 and acc[2] == -1):
            raise Refused("overflow")
        size_i = float(trunc_div(partial[2], acc[2]))
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers) and size_i != size_d:
            raise Refused("size")
        size_d = size_i
    if not (size_d >= 0 and size_d <= 2.0 ** 63):
        raise RuntimeError("invalid size, possible overflow?")
    if size_d >= 2.0 ** 63:
        raise Refused("size")
    return int(size_d), acc


def range_select(inclusive, start, end, step, dtype=None, layout=None, device=None, pin_memory=None):
    """scalar.h's range_select: [start, step, step, ...] in int64 (an integral dtype: the numbers truncated, as
    aten's int64 accumulate type holds them) or float64, aten::cumsum, then aten::_to_copy to the dtype; where
    every element is exact in the dtype and in aten's arithmetic (a floating dtype), or no int64 overflows;
    otherwise refused."""
    numbers = (start, end, step)
    if any(isinstance(n, complex) or (isinstance(n, int) and not isinstance(n, bool) and not -2 ** 63 <= n < 2 ** 63)
           for n in numbers):
        raise Refused("number")
    if layout not in (None, torch.strided) or pin_memory:
        raise Refused("options")
    if dtype is None:
        dtype = (torch.int64 if not inclusive and all(isinstance(n, int) for n in numbers)
                 else torch.get_default_dtype())
    if dtype not in RANGE_DTYPES:
        raise Refused("dtype")
    size, acc = range_size(inclusive, numbers, dtype)
    device = torch.device(device) if device is not None else torch.device("cpu")
    if size == 0:
        return torch.empty_strided((0,), (1,), dtype=dtype, device=device)
    first, step_ = acc[0], acc[2]
    if not dtype.is_floating_point:
        if abs(first) >= 2 ** 62 or (size > 1 and abs(step_) > (2 ** 62 - abs(first)) // (size - 1)):
            raise Refused("overflow")
        work = torch.empty_strided((size,), (1,), dtype=torch.int64, device=device)
    else:
        if not math.isfinite(step_) or (first == 0 and math.copysign(1, first) < 0 and step_ < 0):
            raise Refused("number")
        bits, places = PRECISION[dtype]
        e = max(binary_places(first), binary_places(step_) if size > 1 else 0)
        if e > places:
            raise Refused("exact")
        s_, t_, n = math.ldexp(first, e), math.ldexp(step_, e), size - 1
        if abs(s_) >= 2.0 ** bits:
            raise Refused("exact")
        if n and (abs(t_) >= 2.0 ** bits or n >= 2 ** bits or n * abs(t_) >= 2.0 ** bits
                  or abs(s_ + n * t_) >= 2.0 ** bits):
            raise Refused("exact")
        work = torch.empty_strided((size,), (1,), dtype=torch.float64, device=device)
    aten("fill_.Tensor")(work, torch.tensor(step_, dtype=work.dtype))
    aten("fill_.Tensor")(aten("narrow")(work, 0, 0, 1), torch.tensor(first, dtype=work.dtype))
    return aten("_to_copy")(aten("cumsum")(work, 0), dtype=dtype)


def range_same(want, got):
    """Outcomes equal, and for results also the device and each zero's sign."""
    if want[0] != "ok" or got[0] != "ok":
        return same(want, got)
    x, y = want[1], got[1]
    if (x.device, x.dtype, x.shape, x.stride(), x.requires_grad) != (y.device, y.dtype, y.shape, y.stride(),
                                                                      y.requires_grad):
        return False
    if x.device.type == "meta":
        return True
    return same(want, got) and (not x.is_floating_point() or torch.equal(x.signbit(), y.signbit()))


def range_samples(s):
    """(label, values): triples of numbers (ints, doubles, bools, specials, beyond 2^53, negative zero), every
    dtype, the options; a call whose size lies between 2e5 and int64's limit is left out (it would allocate)."""
    ints = [0, 1, 3, 10, -5, 7, 40000, 2 ** 40, 2 ** 53 + 1, 2 ** 62, -2 ** 63]
    doubles = [0.0, -0.0, 0.25, 0.5, 1.0, 2.5, 0.1, -1.5, 1e-3, 16777217.0, 1e300, float("inf"), float("nan"), 3.0,
               2.0 ** -30, 65504.0, -7.75]
    steps = [1, 2, -1, 3, 0, 0.25, -0.5, 0.1, 1e-10, float("inf"), float("nan"), 7, -3, True, 2.0 ** -20, 0.0]
    starts = ints[:6] + doubles + [True, False]
    ends = ints + doubles + [True]
    dtypes = [None, torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
              torch.int8, torch.uint8, torch.bool, torch.complex64]
    names = [a for a in s["args"] if s["types"][a] == "Scalar"]
    out = []
    i = 0
    for a in starts if "start" in names else [0]:
        for b in ends:
            for c in steps if "step" in names else [1]:
                i += 1
                dtype = dtypes[i % len(dtypes)]
                try:
                    approx = abs((float(b) - float(a)) / float(c))
                except ZeroDivisionError:
                    approx = 0.0
                if approx == approx and 2e5 < approx < 1e19:
                    continue
                v = {"start": a, "end": b, "step": c, "dtype": dtype}
                out.append((f"{v}", {k: x for k, x in v.items() if k in names or k == "dtype"}))
    for label, v in list(out[::13]):  # every dtype on a few
        for dtype in dtypes:
            out.append((f"{label} {dtype}", dict(v, dtype=dtype)))
    for opts in ({"device": "meta"}, {"device": "cpu"}, {"layout": torch.strided}, {"layout": torch.sparse_coo},
                 {"pin_memory": False}, {"pin_memory": True}):
        for v in ({"start": 0, "end": 10, "step": 1}, {"start": 0.0, "end": 1.0, "step": 0.25},
                  {"start": 3, "end": 3, "step": 1}):
            out.append((f"{v} {opts}", dict({k: x for k, x in v.items() if k in names}, **opts)))
    if "start" in names:  # at each floating dtype's precision limit, where aten's vectorized body rounds its base
        for first, dtype in ((2 ** 24 - 40, torch.float32), (2 ** 11 - 40, torch.float16), (2 ** 8 - 40, torch.bfloat16),
                             (2 ** 53 - 40, torch.float64), (2.0 ** 24 - 40, torch.float32), (-(2 ** 24) - 3, None),
                             (0.1, torch.float32), (1 / 3, torch.float64), (0.5 ** 140, torch.float32)):
            for step in (1, 0.5, 3, 0.1):
                if "step" in names or step == 1:
                    out.append((f"limit {first} {step} {dtype}", dict(
                        {"start": first, "end": first + 100 * step, "dtype": dtype},
                        **({"step": step} if "step" in names else {}))))
                    if "step" in names and isinstance(first, int) and first > 0:  # down from just beyond the limit
                        out.append((f"limit {first + 49} {-step} {dtype}", dict(
                            {"start": first + 49, "end": first - 100 * step, "step": -step, "dtype": dtype})))
    for n in (40000, 70001):  # beyond aten's grain size and vector width: parallel chunks, the scalar tail
        for dtype in (None, torch.float32, torch.float16, torch.int8):
            out.append((f"{n} {dtype}", dict({"end": n, "dtype": dtype}, **({"start": -3} if "start" in names else {}))))
    return out


def prove_range(op, s):
    """aten's op against range_select on every sample, under both default dtypes."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    for default in (torch.float32, torch.float64):
        old = torch.get_default_dtype()
        torch.set_default_dtype(default)
        try:
            for label, v in range_samples(s):
                got = outcome(lambda: range_select(s["inclusive"], v.get("start", 0), v["end"], v.get("step", 1),
                                                   v.get("dtype"), v.get("layout"), v.get("device"),
                                                   v.get("pin_memory")))
                compared += 1
                if got[0] == "refused":  # aten is not called: an int64 overflow in its size can raise SIGFPE
                    refused += 1
                    continue
                want = run(lambda: f(**v))
                both_ok += want[0] == got[0] == "ok"
                if not range_same(want, got) and not wrong:
                    wrong = f"default {default} {label}: {want[0]} " \
                            f"{want[1] if want[0] == 'error' else (want[1].dtype, want[1][:8])} vs {got[0]} " \
                            f"{got[1] if got[0] == 'error' else (got[1].dtype, got[1][:8])}"
        finally:
            torch.set_default_dtype(old)
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `number_as_none`: the op as `via` with its number as via's `Scalar?` None, for one value ----

def number_as_none(s, v):
    """The generated wrapper (kernels/number_as_none.py): the rule's one value (int or double) or refused; an
    optional int list of the lengths `lengths` allows, or refused; then `via` with None for the number."""
    r = s["rule"]
    n = v[r["argument"]]
    if not ((type(n) is int and n == int(r["value"])) or (type(n) is float and n == float(r["value"]))):
        raise Refused("number")
    for name, lengths in r.get("lengths", {}).items():
        if v.get(name) is not None and len(v[name]) not in lengths:
            raise Refused("length")
    operand = r.get("operand")
    if operand:  # dist: `operand`'s op on the op's tensors first (aten's self - other)
        v = dict(v, **{operand["as"]: aten(operand["via"])(*(v[a] for a in operand["args"]))})
    return aten(r["via"])(**{va: v[fa] for va, fa in r["args"].items()}, **{r["none"]: None}, **r.get("fixed", {}))


def prove_number_as_none(op, s):
    """aten's op against number_as_none: dtypes (floating, complex, integral, bool), shapes (2-D, 0-dim, empty,
    3-D), dims (None, one, two, none, three, out of range), keepdim, dtype=, numbers (the value as int and double,
    others); float64 and complex128 gradients (zeros, inf and nan among the values)."""
    f = aten(op)
    r = s["rule"]
    compared = both_ok = refused = 0
    wrong = ""
    numbers = [2, 2.0, 1, 0, float("inf"), -float("inf"), 3, -2, 0.5, True, 2 + 0j]
    has = set(s["args"])  # only the arguments the op takes (norm.Scalar: self and p)
    others = [("other", (5, 7)), ("other", ()), ("other", (7,)), ("other", (3, 1))] if "other" in has else [None]
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool):
        for k, shape in enumerate([(5, 7), (), (0,), (3, 4, 5), (0, 3), (40, 3)]):
            for dim in ((None, [1], [-1], [0, 1], [], [0, 1, 2], [3], [0]) if "dim" in has else [None]):
                for keepdim in ((False, True) if "keepdim" in has else [False]):
                    for dtype in ((None, torch.float64, torch.complex128) if "dtype" in has else [None]):
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
                            if d in (torch.float64, torch.complex64) and dtype is None and want[0] == got[0] == "ok":
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


# ---- kernels `softshrink`, `shrink_grad`, `hardtanh_backward`: scalar.h's softshrink_select,
# shrink_grad_select, hardtanh_backward_select ----

FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def softshrink_select(x, lambd):
    """scalar.h's softshrink_select: in x's dtype (float for half and bfloat16, lambd a float), `x > lambd ? x - lambd
    : x < -lambd ? x - (-lambd) : 0`, the subtractions by aten::sub.Tensor (its wrapper's route)."""
    t = x.dtype
    if t not in FLOATING:
        raise Refused("dtype")
    if isinstance(lambd, complex):
        raise Refused("number")
    if not float(lambd) >= 0:  # scalar.h: a `shimgen:` error (aten raises, worded by release)
        raise Refused("negative lambd")
    compute = torch.float32 if t in (torch.float16, torch.bfloat16) else t
    if not in_range(lambd, t):  # self's dtype: aten checks lambd against its range (from 2.10)
        raise Refused("number")
    if compute != t and not reduced_holds(float(lambd), t):  # aten's kernel changed in 2.14
        raise Refused("number")
    xc = x.to(compute)
    hi, lo = number_tensor(lambd, compute), number_tensor(-float(lambd), compute)
    inside = aten("logical_and")(aten("ge.Tensor")(xc, lo), aten("le.Tensor")(xc, hi))
    sub = aten("sub.Tensor")
    shrunk = aten("where.self")(aten("gt.Tensor")(xc, hi), sub(xc, hi), sub(xc, lo))
    return aten("where.self")(inside, number_tensor(0, compute), shrunk).to(t)


def reduced_holds(v, t):
    """scalar.h's reduced_holds: does half (bfloat16) hold v exactly (bfloat16: normal numbers only)?"""
    a = abs(v)
    if a == 0:
        return True
    half = t == torch.float16
    if not math.isfinite(a) or a > (65504.0 if half else 3.3895313892515355e38):
        return False
    if half and a < 6.103515625e-05:
        return math.ldexp(a, 24) == math.floor(math.ldexp(a, 24))
    if not half and a < math.ldexp(1.0, -126):
        return False
    s = math.ldexp(math.frexp(a)[0], 11 if half else 8)
    return s == math.floor(s)


def check_broadcast(a, b):
    """scalar.h's check_broadcast: aten's infer_size over (a, b), with its message."""
    n = max(a.dim(), b.dim())
    for i in range(n - 1, -1, -1):
        da, db = a.dim() - n + i, b.dim() - n + i
        sa, sb = a.shape[da] if da >= 0 else 1, b.shape[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")


def shrink_grad_select(grad_output, x, lambd):
    """scalar.h's shrink_grad_select: `-lambd <= x <= lambd ? 0 : grad_output` over the common dtype, lambd in
    it; a NaN in x refused."""
    check_broadcast(grad_output, x)
    ct = torch.result_type(grad_output, x)
    if ct not in FLOATING:
        raise Refused("dtype")
    if not in_range(lambd, ct):
        raise Refused("number")
    xc = x.to(ct)
    if xc.isnan().any():
        raise Refused("nan")
    inside = aten("logical_and")(aten("ge.Tensor")(xc, number_tensor(-float(lambd), ct)),
                                 aten("le.Tensor")(xc, number_tensor(lambd, ct)))
    return aten("where.self")(inside, number_tensor(0, ct), grad_output.to(ct))




def nan_free(t):
    """t without NaN (inf, -0.0 kept): a backward kernel refuses a NaN self, so these samples reach its vectorized
    body."""
    return t.nan_to_num(0.25, float("inf"), float("-inf")) if t.is_floating_point() else t


def prove_select(op, s):
    """main's comparison for the kernels of this section, on the samples main uses and on the same samples without
    NaN and larger ((6, 40): the vectorized body and the scalar tail of every dtype), errors included; float64
    gradients (compared where the input is not NaN for softshrink, as a row's `nan_gradient`)."""
    f, kernel = aten(op), MIRRORS[s["mirror"]]
    tensors = [a for a in s["args"] if s["types"][a] == "Tensor"]
    numbers = [a for a in s["args"] if a not in tensors]
    compared = both_ok = refused = 0
    wrong = ""

    def mine(values):
        return kernel(*(values[b] if isinstance(b, str) else b for b in s["bind"]))

    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((7,), (2, 3)), ((2, 3), (7,))]  # mismatched: errors
    for clean in (False, True):
        for da in DTYPES:
            for db in (DTYPES if len(tensors) > 1 else [da]):
                for k, sh in enumerate(shapes):
                    for n in NUMBERS:
                        values = {a: sample(x, d, 3 * k + i) for i, (a, x, d) in enumerate(zip(tensors, sh, (da, db)))}
                        if clean:
                            values = {a: nan_free(v) for a, v in values.items()}
                        for j, name in enumerate(numbers):  # a second number: the first negated (min/max)
                            values[name] = -n if j and not isinstance(n, bool) else n
                        if len(numbers) == 2 and clean:  # bounds in order: a non-empty interval
                            values[numbers[0]], values[numbers[1]] = (-n, n) if not isinstance(n, bool) else (0, n)
                        want = run(lambda: f(**values))
                        got = outcome(lambda: mine(values))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        # an error must be aten's own: its message, as the verify harness asks
                        if not same_error_text(want, got) and not wrong:
                            wrong = f"{da} {db} {sh} {n!r} clean={clean}: {want[0]} " \
                                    f"{want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                                    f"{got[1] if got[0] == 'error' else ''}"
                        if da == db == torch.float64 and want[0] == got[0] == "ok":
                            grads = []
                            for fn in (lambda v: f(**v), mine):
                                leaves = {a: values[a].clone().requires_grad_() for a in tensors}
                                r = fn(dict(values, **leaves))
                                (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                                grads.append([leaves[a].grad if leaves[a].grad is not None else
                                              torch.zeros_like(leaves[a]) for a in tensors])
                            for a, ga, gb in zip(tensors, *grads):
                                if s["nan_gradient"]:
                                    keep = ~values[a].isnan()
                                    ga, gb = ga[keep], gb[keep]
                                if not same(("ok", ga), ("ok", gb)) and not wrong:
                                    wrong = f"gradient {sh} {n!r} clean={clean}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- rows of kernels `out` and `inplace` over ops with an index or a sorted sequence (`samples: scatter`,
# `samples: searchsorted`): prove_out / prove_inplace with arguments those ops accept ----

def indexed_samples(s, d):
    """(label, make) pairs of the row's `samples` kind in dtype d; make() gives fresh arguments (in-place ops write
    into self)."""
    out = []
    if s["samples"] == "scatter":
        cases = [((3, 4), (2, 3), 1), ((3, 4), (2, 3), 0), ((3, 4), (3, 4), -1), ((), (), 0), ((5,), (0,), 0),
                 ((3, 4), (2, 3), 2), ((4, 5), (4, 5), 1)]
        for k, (shape, ishape, dim) in enumerate(cases):
            g = torch.Generator().manual_seed(k)
            size = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
            index = torch.randint(0, size + (k == 6), ishape, generator=g)  # case 6: an index out of range
            for n in (0, 1.5, -1, True, 2**40):
                out.append((f"{d} {shape} {ishape} {dim} {n!r}", lambda shape=shape, dim=dim, index=index, n=n, k=k: {
                    "self": sample(shape, d, k), "dim": dim, "index": index.clone(), "value": n}))
        return out
    for k, shape in enumerate([(7,), (3, 4), (), (0,)]):
        base = sample(shape, d, k)
        seq = base if d.is_complex or base.dim() == 0 else base.sort(dim=-1).values
        for n in (0, 2.5, -1, 16777217, True):
            for out_int32, right, side in ((False, False, None), (True, False, None), (False, True, None),
                                           (False, False, "right"), (False, True, "left")):
                out.append((f"{d} {shape} {n!r} {out_int32} {right} {side}", lambda seq=seq, n=n, o=out_int32, r=right,
                            sd=side: {"sorted_sequence": seq.clone(), "self": n, "out_int32": o, "right": r,
                                      "side": sd, "sorter": None}))
    return out


def prove_indexed(op, s):
    if s["samples"] == "matmul":  # (section at the end)
        return prove_matmul_inplace(op, s)
    f = aten(op)
    tally = Tally()
    compare = tally.compare

    dtypes = [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool,
              torch.complex64]
    for d in dtypes:
        for label, make in indexed_samples(s, d):
            if s.get("writes_self"):
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
                continue
            r = run(lambda: aten(s["via"])(**make()))
            shapes = [tuple(r[1].shape)] if r[0] == "ok" else [(0,)]
            rdtype = r[1].dtype if r[0] == "ok" else d
            makers = [("exact", lambda: torch.empty(shapes[0], dtype=rdtype)),
                      ("empty", lambda: torch.empty(0, dtype=rdtype)),
                      ("non-empty resized", lambda: torch.zeros(7, dtype=rdtype))]
            makers += [(f"dtype {o}", lambda o=o: torch.zeros(shapes[0], dtype=o))
                       for o in (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool) if o != rdtype]
            for kind, make_out in makers:
                for grad_mode in (False, True):
                    with torch.set_grad_enabled(grad_mode):
                        va, oa = make(), make_out()
                        want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
                        vb, ob = make(), make_out()
                        got = observed(lambda: assign_out(s, vb, ob), ob)
                    compare(f"{label} out {kind} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
    if s.get("writes_out"):  # out is the first tensor argument itself; an argument requiring grad in grad mode
        first = next(a for a in s["args"] if s["types"][a] == "Tensor")
        for label, make in indexed_samples(s, torch.float64)[:12]:
            for grad_mode in (False, True):
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = observed(lambda: f(**va, **{s["out"]: va[first]}), va[first])
                    got = observed(lambda: assign_out(s, vb, vb[first]), vb[first])
                    compare(f"out is {first} {label} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
                    va, vb = make(), make()
                    va[first].requires_grad_()
                    vb[first].requires_grad_()
                    oa, ob = torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.float64)
                    want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
                    got = observed(lambda: assign_out(s, vb, ob), ob)
                    compare(f"{first} requires grad {label} grad mode {grad_mode}", want[0], got[0])
    return tally.report()


# ---- `backward_raises` (rows of kernels `inplace`, `foreach`): scalar.h's records_inplace / refuse_backward ----

def refuse_backward(raises, selves, values):
    """A call autograd records (grad mode, a self not a leaf) whose backward aten raises for: always (True), or
    where the number `raises` names is negative or NaN (not >= 0): refused."""
    if not raises or not torch.is_grad_enabled() or all(t.is_leaf for t in selves):
        return
    if raises is True or not float(values[raises]) >= 0:
        raise Refused("backward")


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


# ---- kernel `rrelu_eval` (rrelu, rrelu_, rrelu_with_noise .default/.out/_, rrelu_with_noise_backward): scalar.h's
# rrelu_slope / rrelu_backward_slope, rrelu_noise_check, contiguous_result around `via`'s composition (leaky_relu,
# leaky_relu_ with `backward_raises`, leaky_relu.out, leaky_relu_backward) ----

def rrelu_slope(s, lower, upper, training):
    if s["rule"].get("finite_bounds") and not all(math.isfinite(complex(n).real) and not isinstance(n, complex)
                                                  for n in (lower, upper)):
        raise Refused("bounds")  # 2.15 raises (a bound must be finite), earlier releases compute
    if s["rule"].get("check_bounds") and not (isinstance(lower, complex) or isinstance(upper, complex)) \
            and not float(lower) <= float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        raise Refused("training")
    if s["rule"].get("slope") == "backward":
        if isinstance(lower, complex) or isinstance(upper, complex):
            raise Refused("complex")
        return (float(lower) + float(upper)) / 2.0
    for n in (lower, upper):
        if isinstance(n, (bool, complex)) or (isinstance(n, int) and abs(n) > 2**53):
            raise Refused("number")
    if not (isinstance(lower, float) or isinstance(upper, float)):
        raise Refused("integers")
    return (float(lower) + float(upper)) / 2


def contiguous_result(r):
    want, step = [], 1
    for n in reversed(r.shape):
        want.insert(0, step)
        step *= max(n, 1)
    if list(r.stride()) == want:
        return r
    out = torch.empty_strided(r.shape, want, dtype=r.dtype)
    return out.copy_(r)


LEAKY_OUT = {"via": "leaky_relu.default", "same_dtype": True}


def rrelu_mine(s, v):
    """The wrapper: the noise check, the slope, then `via`'s composition as its own row computes it."""
    if "noise" in v and s["rule"].get("slope") != "backward" and v["noise"].shape != v["self"].shape:
        raise RuntimeError(f"noise tensor shape must match self tensor shape {ATEN_RAISES}")
    slope = rrelu_slope(s, v.get("lower", 0.125), v.get("upper", 1 / 3), v.get("training", False))
    via = s["via"]
    if via == "leaky_relu.default":
        r = aten(via)(v["self"], slope)
        return contiguous_result(r) if s["rule"].get("contiguous_result") else r
    if via == "leaky_relu_.default":
        refuse_backward(s["rule"].get("backward_raises") and "slope", [v["self"]], {"slope": slope})
        values = {"self": v["self"], "negative_slope": slope}
        return assign_inplace("leaky_relu.default", values, True, "negative_slope")
    if via == "leaky_relu.out":
        return assign_out(LEAKY_OUT, {"self": v["self"], "negative_slope": slope}, v["out"])
    return aten(via)(v["grad_output"], v["self"], slope, v["self_is_result"])


RRELU_BOUNDS = [(0.125, 1 / 3), (0.1, 0.3), (-0.5, -0.25), (0.2, 0.1), (0, 0.5), (0.5, 1), (0, 1), (True, 0.5),
                (0.5, 2**60), (float("nan"), 0.5), (1e300, 1e300), (0.3, 0.3), (-3, 0.5)]


def rrelu_samples(s, d):
    """(label, make) pairs: make() gives fresh arguments (in-place and out= ops write)."""
    args = set(s["args"])
    out = []
    for k, (shape, layout) in enumerate([((5, 7), None), ((), None), ((0,), None), ((4, 3), "t"),
                                         ((2, 3, 4, 5), "channels_last"), ((3, 1), "column")]):
        for lower, upper in RRELU_BOUNDS:
            for training in (False, True):
                for extra in ([{}] if "self_is_result" not in args else [{"self_is_result": False},
                                                                          {"self_is_result": True}]):
                    def make(shape=shape, layout=layout, lower=lower, upper=upper, training=training, extra=extra,
                             k=k):
                        x = sample(shape[::-1] if layout == "t" else shape, d, k)
                        if layout == "t":
                            x = x.t()
                        elif layout == "channels_last" and d not in (torch.bool,) and not d.is_complex:
                            x = x.contiguous(memory_format=torch.channels_last)
                        elif layout == "column":
                            x = sample((3, 4), d, k)[:, :1]
                        v = {"self": x, "lower": lower, "upper": upper, "training": training, **extra}
                        if "noise" in args:
                            v["noise"] = torch.zeros_like(x) if k != 3 else torch.zeros(x.numel() + 1, dtype=x.dtype)
                        if "grad_output" in args:
                            v["grad_output"] = sample(x.shape, d, k + 20)
                        if "out" in args:  # aten's training kernel writes past an out of another size (crashes)
                            v["out"] = (torch.empty(0, dtype=x.dtype) if k % 2 and not training else
                                        torch.zeros(x.shape, dtype=x.dtype))
                        if "generator" in args:
                            v["generator"] = None
                        return v
                    out.append((f"{d} {shape} {layout} {lower!r} {upper!r} {training} {extra}", make))
    return out


def prove_rrelu(op, s):
    f = aten(op)
    tally = Tally()
    compare = tally.compare

    def state(fn, v):
        """fn(v)'s outcome, with what the caller sees besides the values: the result's strides, the noise and self
        after the call, whether an out= call returned out and left it resized with aten's strides."""
        if "out" in v:
            o, extra = observed(lambda: fn(v), v["out"])
            return o, extra
        o = outcome(lambda: fn(v))
        if o[0] != "ok":
            return o, None
        extra = (tuple(o[1].stride()), o[1] is v["self"],
                 tuple(v["noise"].flatten().tolist()) if "noise" in v else None)
        return o, extra

    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.complex64):
        for label, make in rrelu_samples(s, d):
            for grad_mode in (False, True):
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = state(lambda v: f(**v), va)
                    got = state(lambda v: rrelu_mine(s, v), vb)
                    if want[0][0] == "error":  # aten's training draws random slopes: an error is what it is
                        pass
                    elif va.get("training") and want[0][0] == "ok" and got[0][0] == "refused":
                        compare(label, want[0], got[0])
                        continue
                compare(f"{label} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
            if d != torch.float64 or want[0][0] != "ok" or "out" in s["args"]:
                continue
            # float64 gradients: self (a non-leaf for the in-place ops) and grad_output
            tensors = [a for a in ("self", "grad_output") if a in s["args"]]

            def backward(fn):
                v = make()
                leaves = {a: v[a].detach().clone().requires_grad_() for a in tensors}
                call = dict(v, **leaves)
                if s["via"] == "leaky_relu_.default":
                    call["self"] = leaves["self"] * 1
                r = fn(call)
                (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                return torch.cat([leaves[a].grad.flatten() if leaves[a].grad is not None
                                  else torch.zeros(leaves[a].numel(), dtype=torch.float64) for a in tensors])
            compare(f"gradient {label}", run(lambda: backward(lambda v: f(**v))),
                    outcome(lambda: backward(lambda v: rrelu_mine(s, v))))
            if s["via"] == "leaky_relu_.default":  # in place on a leaf requiring grad: aten's own error
                va, vb = make(), make()
                va["self"].requires_grad_()
                vb["self"].requires_grad_()
                compare(f"leaf {label}", run(lambda: f(**va)), outcome(lambda: rrelu_mine(s, vb)))
    return tally.report()


# ---- kernel `scalars_tensor`: the op as its _foreach_ sibling's `.Tensor` overload on one-element lists, the
# number packed in a 1-D tensor of its own type (scalar.h scalars_tensor, check_scalars_route) ----

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


# ---- kernel `item_scalar` (item, _local_scalar_dense): libtorch's aoti_torch_item_<dtype>, through ctypes ----

def _item_shims():
    """dtype -> (aoti_torch_item_<dtype>, its C type, the number from what it wrote), as scalar.h's
    item_scalar_select calls them; complex128 and the rest have none (refused)."""
    import ctypes
    import os
    import struct

    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))

    def bits(fmt, v):
        return struct.unpack(fmt, struct.pack("<H", v))[0]

    c = ctypes
    return lib, {
        torch.bool: ("bool", c.c_bool, bool), torch.uint8: ("uint8", c.c_uint8, int),
        torch.int8: ("int8", c.c_int8, int), torch.int16: ("int16", c.c_int16, int),
        torch.int32: ("int32", c.c_int32, int), torch.int64: ("int64", c.c_int64, int),
        torch.uint16: ("uint16", c.c_uint16, int), torch.uint32: ("uint32", c.c_uint32, int),
        torch.uint64: ("uint64", c.c_uint64, int),
        torch.float16: ("float16", c.c_uint16, lambda v: bits("<e", v)),
        torch.bfloat16: ("bfloat16", c.c_uint16, lambda v: struct.unpack("<f", struct.pack("<I", v << 16))[0]),
        torch.float32: ("float32", c.c_float, float), torch.float64: ("float64", c.c_double, float),
        torch.complex64: ("complex64", c.c_float * 2, lambda v: complex(v[0], v[1])),
    }


def item_scalar_select(lib, shims, op, self):
    """scalar.h's item_scalar_select: the shim of self's dtype; its failure is libtorch's message (2.13 on),
    before that the wrapper's `libtorch logged the reason on stderr`."""
    import ctypes

    if self.dtype not in shims:
        raise Refused(f"shimgen: {op}: libtorch has no item C shim for this dtype")
    name, ctype, number = shims[self.dtype]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    h = ctypes.c_void_p(get(torch._C._aoti.unsafe_alloc_void_ptr_from_tensor(self), None))
    value = ctype()
    fn = getattr(lib, f"aoti_torch_item_{name}")
    fn.restype = ctypes.c_int32
    if fn(h, ctypes.byref(value)) != 0:
        what = getattr(lib, "torch_exception_get_what_without_backtrace", None)
        if what is None:
            raise RuntimeError("libtorch logged the reason on stderr")
        what.restype = ctypes.c_char_p
        raise RuntimeError(what().decode())
    return number(value if isinstance(value, ctypes.Array) else value.value)


def same_number(want, got):
    """Outcomes of a Tensor -> Scalar op: an error for an error (worker_common.same on its text), or the same
    number of the same Python type (the kind aten's Scalar has), NaN for NaN, -0.0 for -0.0."""
    if want[0] != "ok" or got[0] != "ok":
        return same(want, got)
    a, b = want[1], got[1]
    if type(a) is not type(b):
        return False
    parts = (lambda z: [z.real, z.imag]) if isinstance(a, complex) else (lambda z: [z])
    for x, y in zip(parts(a), parts(b)):
        if isinstance(x, float):
            if not ((math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))):
                return False
        elif x != y:
            return False
    return True


def item_samples():
    """Every dtype, its extremes, specials (nan, inf, -0.0), a one-element view at an offset, shapes () (1,)
    (1, 1), and the shapes aten refuses (empty, two elements)."""
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
              torch.uint32, torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64,
              torch.complex64, torch.complex128]
    for d in dtypes:
        if d == torch.bool:
            values = [True, False]
        elif d.is_floating_point:
            fi = torch.finfo(d)
            values = [0.0, -0.0, 1.5, -2.25, fi.max, fi.min, fi.tiny, float("inf"), float("-inf"), float("nan"), 0.1]
        elif d.is_complex:
            values = [complex(1.5, -2.0), complex(float("nan"), 0.0), complex(0.1, float("inf"))]
        else:
            ii = torch.iinfo(d)
            values = [0, 1, ii.max, ii.min, ii.max // 3]
        for v in values:
            base = torch.tensor(v, dtype=d)
            yield f"{d} {v!r} ()", base
            yield f"{d} {v!r} (1,)", base.reshape(1)
            yield f"{d} {v!r} (1, 1)", base.reshape(1, 1)
            yield f"{d} {v!r} view", torch.stack([base, base, base])[2:]
        yield f"{d} (0,)", torch.zeros(0, dtype=d)
        yield f"{d} (2,)", torch.zeros(2, dtype=d)
        many = torch.tensor(values[-2:] * 6, dtype=d)
        yield f"{d} (3, 4)", many.view(3, 4)
        yield f"{d} (3, 4) transposed", many.view(3, 4).t()
        yield f"{d} (3, 4)[1:, 2:]", many.view(3, 4)[1:, 2:]
    t = torch.tensor(2.5, dtype=torch.float64, requires_grad=True)
    yield "float64 requires_grad", t


def first_scalar_select(lib, shims, op, self):
    """scalar.h's first_scalar_select: aten's check of an empty self, then item_scalar_select of the element at
    index (0, ..., 0)."""
    if self.numel() == 0:
        raise RuntimeError(f"shimgen: {op}: _local_scalar_dense: Empty tensor not supported {ATEN_RAISES}")
    return item_scalar_select(lib, shims, op, aten("select.int")(aten("flatten.using_ints")(self, 0, -1), 0, 0))


def prove_item_scalar(op, s):
    f = aten(op)
    lib, shims = _item_shims()
    mine = MIRRORS[s["mirror"]]
    compared = both_ok = refused = 0
    wrong = ""
    for label, t in item_samples():
        want = run(lambda: f(t))
        got = outcome(lambda: mine(lib, shims, op, t))
        compared += 1
        if got[0] == "refused":
            refused += 1
            continue
        both_ok += want[0] == got[0] == "ok"
        if not same_number(want, got) and not wrong:
            wrong = f"{label}: {want[0]} {want[1]!r} vs {got[0]} {got[1]!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `result_type_numbers` (result_type.Scalar_Tensor, .Scalar_Scalar): scalar.h's wrapped_numbers_dtype ----

REFUSED = "refused"  # scalar.h's kRefused: torch refuses to promote the pair


def rt_promote(a, b):
    """scalar.h's promote: the promotion table (torch.promote_types), None undefined."""
    if REFUSED in (a, b):
        return REFUSED
    if a is None or b is None:
        return b if a is None else a
    try:
        return torch.promote_types(a, b)
    except RuntimeError:
        return REFUSED


def rt_to_complex(t):
    return {torch.float16: torch.complex32, torch.float32: torch.complex64,
            torch.float64: torch.complex128}.get(t, REFUSED)


def rt_combine(higher, lower):
    """scalar.h's combine_categories."""
    if REFUSED in (higher, lower):
        return REFUSED
    if higher is not None and higher.is_complex:
        return higher
    if lower is not None and lower.is_complex:
        return rt_to_complex(higher) if higher is not None and higher.is_floating_point else lower
    if higher is not None and higher.is_floating_point:
        return higher
    if higher == torch.bool or (lower is not None and lower.is_floating_point):
        return rt_promote(higher, lower)
    return higher if higher is not None else lower


def result_type_numbers_select(tensors, numbers):
    """scalar.h's result_type_numbers_select: a complex number with a bfloat16 tensor refused (aten's answer
    changed in 2.14), else wrapped_numbers_dtype: the dimensioned tensors, the 0-dim ones and the wrapped numbers
    (the default dtype for a floating-point one) promoted apart, then combined by category."""
    if any(isinstance(n, complex) for n in numbers) and any(t.dtype == torch.bfloat16 for t in tensors):
        raise Refused("complex with bfloat16")
    dim = zero = wrapped = None
    for t in tensors:
        if t.dim() == 0:
            zero = rt_promote(zero, t.dtype)
        else:
            dim = rt_promote(dim, t.dtype)
    for n in numbers:
        wrapped = rt_promote(wrapped, wrapped_dtype(n))
    r = rt_combine(dim, rt_combine(zero, wrapped))
    if r in (REFUSED, None):
        raise RuntimeError(f"shimgen: no dtype promotion for these arguments {ATEN_RAISES}")
    return r


def prove_result_type_numbers(op, s):
    """Every dtype of the tensor (0-dim and 1-D) against every number, or every pair of numbers, under both
    default dtypes: the dtype (aten's int enumerator read back as a torch.dtype) or the error."""
    f = aten(op)
    numbers = [0, -1, 3, 2**40, 2**62, 0.5, 1e300, float("nan"), True, False, 1.5 + 2j]
    dtypes = DTYPES + [torch.uint32, torch.uint64, torch.complex128, torch.complex32]
    tally = Tally()
    for default in (torch.float32, torch.float64):
        old = torch.get_default_dtype()
        torch.set_default_dtype(default)
        try:
            if s["types"].get("tensor") == "Tensor":
                cases = [((torch.zeros(shape, dtype=d),), (n,), f"{d} {shape} {n!r}")
                         for d in dtypes for shape in [(), (3,)] for n in numbers]
            else:
                cases = [((), (a, b), f"{a!r} {b!r}") for a in numbers for b in numbers]
            for tensors, nums, label in cases:
                args = dict(zip([a for a in s["args"] if s["types"][a] == "Tensor"], tensors))
                args.update(zip([a for a in s["args"] if s["types"][a] == "Scalar"], nums))
                want = run(lambda: f(**args))
                if want[0] == "ok" and isinstance(want[1], int):  # the ScalarType as its enumerator
                    want = ("ok", RT_DTYPES.get(want[1], f"ScalarType {want[1]}"))
                got = outcome(lambda: result_type_numbers_select(tensors, nums))
                tally.compare(f"default {default} {label}", want, got)
        finally:
            torch.set_default_dtype(old)
    return tally.report()


# c10::ScalarType enumerators (a result_type op's int) -> torch dtypes
RT_DTYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 5: torch.float16,
             6: torch.float32, 7: torch.float64, 8: torch.complex32, 9: torch.complex64, 10: torch.complex128,
             11: torch.bool, 15: torch.bfloat16, 27: torch.uint16, 28: torch.uint32, 29: torch.uint64}


# ---- kernels `trapezoid_dx` / `cumulative_trapezoid_dx`: aten's Integration.cpp as the same aten calls ----

TRAPEZOID_NUMBERS = [1, 0.5, 0.1, -2.5, 3, 0, 1e-3, 2**53 + 1, 1e300, float("inf"), float("nan"), True, 1 + 2j, -0.0]


def trapezoid_dx(cumulative, y, dx, dim):
    """shimgen/generate/routes/kernels/trapezoid.py's body: aten's checks (scalar.h trapezoid_check), then its calls in its
    order (`cumulative`: cumulative_trapezoid)."""
    name = "cumulative_trapezoid" if cumulative else "trapezoid"
    if not cumulative and y.size(dim) == 0:  # zeros of y's options, before the checks
        n = y.dim()
        return aten("new_zeros.default")(y, [y.size(i) for i in range(n) if i != (dim + n if dim < 0 else dim)])
    if y.dtype == torch.bool:
        raise RuntimeError(f"{name}: received a bool input for `y` {ATEN_RAISES}")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number {ATEN_RAISES}")
    d = float(dx)  # shimgen::Scalar::to_double, as aten's dx.toDouble()
    if not cumulative:
        ends = aten("add.Tensor")(aten("select.int")(y, dim, 0), aten("select.int")(y, dim, -1))
        inner = aten("sub.Tensor")(aten("sum.dim_IntList")(y, [dim]), aten("mul.Scalar")(ends, 0.5))
        return aten("mul.Scalar")(inner, d)
    left, right = aten("slice.Tensor")(y, dim, 0, -1), aten("slice.Tensor")(y, dim, 1)
    return aten("cumsum.default")(aten("mul.Scalar")(aten("add.Tensor")(left, right), d / 2.0), dim)


def prove_trapezoid(op, s):
    """aten's op against trapezoid_dx: dtypes (floating, reduced, integral, bool, complex), shapes (2-D, 3-D, 1-D,
    0-dim, empty dims, one element), dims (in and out of range, negative), numbers (int, double, huge, non-finite,
    bool, complex); results, dtypes, strides and errors; float64 and complex128 gradients under weighted upstream
    gradients (aten: CompositeImplicitAutograd, so the same calls' derivatives)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
              torch.bool, torch.complex64):
        for k, shape in enumerate([(5, 7), (2, 3, 4), (9,), (), (0, 3), (3, 0), (1, 4), (40,)]):
            y = sample(shape, d, k)
            if k == 1:
                y = y.transpose(0, 2)  # not contiguous
            for dim in (-1, 0, 1, 2, -3, 5):
                for dx in TRAPEZOID_NUMBERS:
                    want = run(lambda: f(y, dx=dx, dim=dim))
                    got = outcome(lambda: trapezoid_dx(s["cumulative"], y, dx, dim))
                    compared += 1
                    if got[0] == "refused":
                        refused += 1
                        continue
                    both_ok += want[0] == got[0] == "ok"
                    strides_differ = want[0] == got[0] == "ok" and want[1].stride() != got[1].stride()
                    if (not same(want, got) or strides_differ) and not wrong:
                        wrong = f"{d} {shape} dim {dim} dx {dx!r}: {want[0]} " \
                                f"{want[1] if want[0] == 'error' else (want[1].dtype, want[1].stride())} vs " \
                                f"{got[0]} {got[1] if got[0] == 'error' else (got[1].dtype, got[1].stride())}"
                    if d in (torch.float64, torch.complex64) and want[0] == got[0] == "ok" and dx in (0.5, 3, -2.5):
                        grads = []
                        for fn in (lambda t: f(t, dx=dx, dim=dim), lambda t: trapezoid_dx(s["cumulative"], t, dx, dim)):
                            def backward(fn=fn):
                                t = y.to(torch.complex128 if d.is_complex else d).clone().requires_grad_()
                                r = fn(t)
                                if not r.requires_grad:  # the zeros of an empty dim: no graph on either side
                                    return torch.zeros(0)
                                (r * weights(r)).sum().real.backward()
                                return t.grad
                            grads.append(run(backward))
                        if not same(*grads) and not wrong:
                            wrong = f"gradient {d} {shape} dim {dim} dx {dx!r}: {grads[0][0]} vs {grads[1][0]}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `elu_grad`: scalar.h's elu_grad_operands / elu_grad_select (is_result=true), its addition
# by aten::sub.Tensor (`via`) ----

def elu_grad_select(grad_output, alpha, scale, input_scale, is_result, x):
    """scalar.h's elu_grad_operands and elu_grad_select, step by step."""
    if any(isinstance(n, complex) for n in (alpha, scale, input_scale)):
        raise Refused("complex")
    if is_result and not float(alpha) >= 0:
        raise RuntimeError(f"In-place elu backward calculation is triggered with a negative slope {ATEN_RAISES}")
    if not is_result:
        raise Refused("is_result=false")
    check_broadcast(grad_output, x)
    ct = torch.result_type(grad_output, x)
    if ct not in FLOATING:
        raise Refused("dtype")
    compute = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not all(in_range(n, compute) for n in (alpha, scale, input_scale)):
        raise Refused("number")
    if torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in (grad_output, x)):
        raise Refused("autograd")
    xc = x.to(ct).to(compute)
    if xc.isnan().any():
        raise Refused("nan")
    negcoef = aten("mul.Tensor")(number_tensor(alpha, compute), number_tensor(scale, compute))
    g = grad_output.to(ct).to(compute)
    shifted = aten("sub.Tensor")(xc, aten("neg")(negcoef))
    negative = aten("mul.Tensor")(aten("mul.Tensor")(g, number_tensor(input_scale, compute)), shifted)
    positive = aten("mul.Tensor")(g, number_tensor(scale, compute))
    mask = aten("le.Tensor")(xc, number_tensor(0, compute))
    return aten("where.self_out")(mask, negative, positive, out=negative).to(ct)  # in negative's layout: aten's


# (alpha, scale, input_scale): elu's default, selu's constants, celu's (1, 1/alpha), integers, a bool, zeros, a
# negative alpha (aten raises with is_result), out of float's range, inf, nan
ELU_NUMBERS = [(1, 1, 1), (1.0, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1), (0.5, 1, 2.0),
               (2.5, 1, 0.4), (0.1, 0.3, 0.7), (3, 2, -1), (True, 1, 1), (0, 1, 1), (1, 0, 0), (-1, 1, 1),
               (1, -2.5, 1e-3), (1e300, 1, 1), (1, 1e39, 1), (float("inf"), 1, 1), (1, 1, float("nan")),
               (2**40, 1, 1), (2**53 + 1, 1, 1)]
ELU_DTYPES = [(a, b) for a in FLOATING for b in FLOATING] + [
    (torch.int64, torch.float32), (torch.float32, torch.int64), (torch.int64, torch.int64),
    (torch.bool, torch.bool), (torch.complex64, torch.complex64), (torch.float32, torch.complex64),
    (torch.uint8, torch.float16), (torch.int32, torch.bfloat16)]


def elu_layouts(grad_shape, x_shape, dg, dx, k):
    """(label, grad_output, self_or_result) with the layouts aten's loop treats apart: contiguous, transposed,
    strided (no vectorized body), channels_last, broadcast."""
    g, x = sample(grad_shape, dg, 3 * k), sample(x_shape, dx, 3 * k + 1)
    yield "", g, x
    if len(grad_shape) == 2 and grad_shape == x_shape and grad_shape[0] > 1:
        gt, xt = sample(grad_shape[::-1], dg, 3 * k + 2), sample(grad_shape[::-1], dx, 3 * k)
        yield " transposed", gt.t(), xt.t()
        yield " transposed grad", gt.t(), x
        gs, xs = sample((grad_shape[0], 2 * grad_shape[1]), dg, k), sample((grad_shape[0], 2 * grad_shape[1]), dx, k + 1)
        yield " strided", gs[:, ::2], xs[:, ::2]
        yield " strided self", g, xs[:, 1::2]
    if len(grad_shape) == 4:
        yield " channels_last", g.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
        yield " channels_last self", g, x.to(memory_format=torch.channels_last)


def prove_elu_backward(op, s):
    """aten::elu_backward against the model on dtype pairs, shapes (the vectorized body and the scalar tail: 40,
    1001 and 100003 elements), layouts, numbers and is_result both ways, with and without NaN in self_or_result;
    results, dtypes, strides and errors; then autograd: in grad mode with an input requiring grad (refused), and
    under no_grad (computed)."""
    f = aten(op)
    tally = Tally()
    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((3, 1001), (3, 1001)), ((100003,), (100003,)),
                       ((2, 3, 4, 5), (2, 3, 4, 5)), ((7,), (2, 3)), ((2, 3), (7,))]

    def call(fn, g, x, n, is_result):
        return fn(g, n[0], n[1], n[2], is_result, x)

    def result(fn):
        o = outcome(fn)
        return o, (tuple(o[1].stride()) if o[0] == "ok" else None)

    for dg, dx in ELU_DTYPES:
        for k, (sg, sx) in enumerate(shapes):
            big = max(math.prod(sg), math.prod(sx)) > 1000
            for clean in (False, True):
                for label, g, x in elu_layouts(sg, sx, dg, dx, k):
                    if clean:
                        x = nan_free(x)
                    for n in (ELU_NUMBERS[:3] + ELU_NUMBERS[10:11] if big else ELU_NUMBERS):
                        for is_result in (True, False):
                            want, ws = result(lambda: call(f, g, x, n, is_result))
                            got, gs = result(lambda: call(elu_grad_select, g, x, n, is_result))
                            if want[0] == got[0] == "error" and not same_error_text(want, got) and not tally.wrong:
                                tally.wrong = f"{dg} {dx} {sg} {sx}{label} {n} {is_result}: {want[1]} vs {got[1]}"
                            tally.compare(f"{dg} {dx} {sg} {sx}{label} {n!r} is_result={is_result} clean={clean}",
                                          want, got, ws, gs)
    # autograd: aten records the call (elu_double_backward); the route refuses it, and computes it under no_grad
    for who in ("grad_output", "self_or_result"):
        for nonleaf in (False, True):
            for grad_mode in (True, False):
                def make(who=who, nonleaf=nonleaf):
                    v = {"grad_output": sample((6, 40), torch.float64, 5),
                         "self_or_result": nan_free(sample((6, 40), torch.float64, 6))}
                    leaf = v[who].clone().requires_grad_()
                    v[who] = leaf * 1 if nonleaf else leaf
                    return v
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = run(lambda: f(va["grad_output"], 1.5, 1.25, 0.5, True, va["self_or_result"]))
                    got = outcome(lambda: elu_grad_select(vb["grad_output"], 1.5, 1.25, 0.5, True,
                                                              vb["self_or_result"]))
                if grad_mode:  # the route must refuse: it would differentiate itself, not as aten does
                    if got[0] != "refused" and not tally.wrong:
                        tally.wrong = f"autograd {who} non-leaf {nonleaf}: not refused"
                    tally.compare(f"autograd {who}", want, got)
                else:
                    if want[0] == "ok":  # a result without history, as aten's under no_grad
                        want = ("ok", want[1].detach())
                    tally.compare(f"no_grad {who} non-leaf {nonleaf}", want, got)
    return tally.report()



# ---- kernel `add_relu`: scalar.h's add_relu_operands / add_relu_select around add.Tensor's wrapper (`via`) ----

ADD_RELU_LIMITS = {torch.int8: 2**7 - 1, torch.int16: 2**15 - 1, torch.int32: 2**31 - 1, torch.int64: 2**63 - 1,
                   torch.float32: torch.finfo(torch.float32).max, torch.float64: torch.finfo(torch.float64).max}
ADD_RELU_KERNEL = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32, torch.float64)


def add_relu_select(self, other, alpha=1):
    """scalar.h's add_relu_operands and add_relu_select, step by step."""
    check_broadcast(self, other)
    if self.dtype not in ADD_RELU_LIMITS:
        raise RuntimeError(f"Unsupported datatype for add_relu {ATEN_RAISES}")
    limit = ADD_RELU_LIMITS[self.dtype]
    t = torch.result_type(self, other)
    if t not in ADD_RELU_KERNEL:
        raise Refused("dtype")  # scalar.h: no_kernel (aten raises)
    floating = t.is_floating_point
    if self.dtype.is_floating_point:
        if t == torch.float32 and limit > torch.finfo(torch.float32).max:
            raise RuntimeError(f"value cannot be converted to type float without overflow {ATEN_RAISES}")
        hi = float(limit)
    elif floating:
        hi = float(torch.tensor(limit, dtype=torch.int64).to(t)) if t == torch.float32 else float(limit)
    else:
        hi = limit
        if not in_range(hi, t):
            raise RuntimeError(f"value cannot be converted without overflow {ATEN_RAISES}")
    if isinstance(alpha, complex) or float(alpha) != 1:
        raise Refused("alpha")
    if torch.is_grad_enabled() and any(requires_grad_proxy(x) for x in (self, other)):
        raise Refused("autograd")
    total = aten("add.Tensor")(self, other)  # add.Tensor's wrapper: proven equal to aten's add (its own rows)
    lo = number_tensor(0, t)
    if floating and (aten("logical_or")(aten("isnan")(total), aten("logical_and")(
            aten("eq.Tensor")(total, lo), aten("signbit")(total)))).any():
        raise Refused("nan or -0.0")
    return aten("clamp.Tensor")(total, lo, number_tensor(hi, t))


ADD_RELU_DTYPES = [(a, b) for a in (torch.float32, torch.float64, torch.int64, torch.int32, torch.int8, torch.int16)
                   for b in (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8)] + [
    (torch.uint8, torch.uint8), (torch.bool, torch.bool), (torch.float16, torch.float16),
    (torch.bfloat16, torch.float32), (torch.int32, torch.float16), (torch.complex64, torch.complex64),
    (torch.int32, torch.uint16)]


def add_relu_pairs(sa, sb, da, db, k):
    """(label, self, other) with layouts aten's loop treats apart; values with sums that overflow the
    dtypes' bounds (int8 + int8, float32 near its largest value) and exact -0.0 + -0.0."""
    a, b = sample(sa, da, 3 * k), sample(sb, db, 3 * k + 1)
    yield "", a, b
    if len(sa) == 2 and sa == sb and sa[0] > 1:
        yield " transposed", sample(sa[::-1], da, k).t(), sample(sa[::-1], db, k + 2).t()
        yield " transposed self", sample(sa[::-1], da, k).t(), b
        yield " strided", sample((sa[0], 2 * sa[1]), da, k)[:, ::2], sample((sa[0], 2 * sa[1]), db, k + 1)[:, 1::2]
    if len(sa) == 4:
        yield " channels_last", a.to(memory_format=torch.channels_last), b
    if da in (torch.int8, torch.int16, torch.int32, torch.int64) and db == da and a.numel() > 2:
        big = torch.iinfo(da).max
        yield " overflow", torch.full(sa, big, dtype=da), torch.full(sb, 2, dtype=db)  # wraps, then clamps
    if da in (torch.float32, torch.float64) and db in (torch.float32, torch.float64) and a.numel() > 2:
        yield " near max", torch.full(sa, torch.finfo(da).max, dtype=da), torch.full(
            sb, torch.finfo(torch.float32).max / 2, dtype=db)


def prove_add_relu(op, s):
    """aten::_add_relu.Tensor against the model: dtype pairs, shapes (40, 1001 and 100003 elements: the vectorized
    body and the scalar tail), layouts, alphas, with and without NaN; values, dtype and strides, errors; then
    autograd (refused where aten records the call; computed under no_grad)."""
    f = aten(op)
    tally = Tally()
    shapes = SHAPES + [((6, 40), (6, 40)), ((6, 40), ()), ((3, 1001), (3, 1001)), ((100003,), (100003,)),
                       ((2, 3, 4, 5), (2, 3, 4, 5)), ((7,), (2, 3))]

    def result(fn):
        o = outcome(fn)
        return o, (tuple(o[1].stride()) if o[0] == "ok" else None)

    for da, db in ADD_RELU_DTYPES:
        for k, (sa, sb) in enumerate(shapes):
            for clean in (False, True):
                for label, a, b in add_relu_pairs(sa, sb, da, db, k):
                    if clean:
                        a, b = nan_free(a), nan_free(b)
                    for alpha in ((1, 1.0, True, 2, 0.5) if not clean else (1,)):
                        want, ws = result(lambda: f(a, b, alpha=alpha))
                        got, gs = result(lambda: add_relu_select(a, b, alpha))
                        label_ = f"{da} {db} {sa} {sb}{label} alpha={alpha!r} clean={clean}"
                        if want[0] == got[0] == "error" and not same_error_text(want, got) and not tally.wrong:
                            tally.wrong = f"{label_}: {want[1]} vs {got[1]}"
                        tally.compare(label_, want, got, ws, gs)
    for who in (0, 1):
        for nonleaf in (False, True):
            for grad_mode in (True, False):
                def make(who=who, nonleaf=nonleaf):
                    v = [nan_free(sample((6, 40), torch.float64, 5)), nan_free(sample((6, 40), torch.float64, 6))]
                    leaf = v[who].clone().requires_grad_()
                    v[who] = leaf * 1 if nonleaf else leaf
                    return v
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = run(lambda: f(*va))
                    got = outcome(lambda: add_relu_select(*vb))
                if grad_mode:  # aten records a node whose backward raises; the route must refuse
                    if got[0] != "refused" and not tally.wrong:
                        tally.wrong = f"autograd input {who} non-leaf {nonleaf}: not refused"
                    tally.compare(f"autograd {who}", want, got)
                else:
                    tally.compare(f"no_grad {who} non-leaf {nonleaf}", ("ok", want[1].detach()) if want[0] == "ok"
                                  else want, got)
    return tally.report()



# ---- kernels `range_out`, `full_out`, `scalar_full`, and `item_numbers` rows over out= overloads: the factories'
# out= forms (and scalar_tensor) as the generated wrapper computes them ----

# aten's resize warnings: resize_output's (TensorIterator, full_out) and arange_out's own, which the route's
# resize_output warning stands for (its text differs)
RESIZE_TEXTS = ("was resized since it had shape", "will be resized to a tensor of shape")


def written_twice(t):
    return any(n > 1 and st == 0 for n, st in zip(t.shape, t.stride()))


def resize_through_where(out, result):
    """scalar.h's resize_through_where: TensorIterator's resize_output of out, writing result."""
    aten("where.self_out")(torch.tensor(True), result, result, out=out)


def factory_out(s, v, out):
    """The generated wrapper of a factory's out= form (shimgen/generate/routes/kernels/factories.py, scalar.h
    range_out_assign, resize_output) by the row's `factory` (its entry's): `ranged` (range_out), `filled` (full_out);
    `items` (an item_numbers row): `via` (X.Tensor_Tensor_out) with the numbers as 0-dim tensors."""
    if out.device.type != "cpu" and s["factory"] not in ("items", "filled"):  # scalar.h refuse_not_cpu
        raise Refused("not cpu")
    if out.device.type == "meta" and s["factory"] == "items":  # scalar.h refuse_meta_out
        raise Refused("meta")
    if s["factory"] != "items" and torch.is_grad_enabled() and requires_grad_proxy(out):
        if aten("is_leaf")(out):  # scalar.h check_factory_out_autograd
            raise RuntimeError(f"out= and an input requires grad {ATEN_RAISES}")
        raise Refused("grad_fn")
    if s["factory"] == "items":
        args = {va: natural_tensor(v[fa]) if s["types"].get(fa) == "Scalar" else v[fa]
                for va, fa in s["bind"].items() if fa in v and fa != s["out"]}
        return aten(s["via"])(**args, out=out)
    rule = s["rule"]
    if s["factory"] == "filled":
        size = list(v["size"])
        if list(out.shape) != size:  # aten's full_out: out.resize_(size), quiet
            if out.requires_grad:
                raise Refused("requires grad")
            aten("resize_as_")(out, torch.empty(size, dtype=out.dtype, device=out.device))
        aten("fill_.Scalar")(out, v["fill_value"])  # the fill_ wrapper's route (proven equal to it)
        return out
    result = range_select(bool(rule.get("inclusive")), v.get("start", 0), v["end"], v.get("step", 1), out.dtype, device=out.device)
    if out.numel() != result.numel():
        if rule.get("warns"):
            if written_twice(out):
                raise Refused("twice")
            resize_through_where(out, result)
            return out
        if out.requires_grad:
            raise Refused("requires grad")
        aten("resize_as_")(out, result)
    shaped = result if out.shape == result.shape else aten("view_as")(result, out)
    aten("copy_")(out, shaped)
    return out


def scalar_full(v):
    """The generated scalar_tensor wrapper: full.default with size [] and the default dtype for None."""
    kw = {k: x for k, x in v.items() if k != "s"}
    if kw.get("layout") not in (None, torch.strided):  # aten's scalar_tensor answers strided: refused
        raise Refused("layout")
    kw["dtype"] = kw.get("dtype") or torch.get_default_dtype()
    return aten("full.default")([], v["s"], **kw)


def factory_same(want, got):
    """Outcomes equal (results: values, dtype, shape, strides, device, each zero's sign), and what the call left
    in out (strides, out returned, resize warnings, requires_grad)."""
    if not range_same(want[0], got[0]):
        return False
    return want[1] == got[1]


def factory_outs(dtype, n):
    """(label, make): out tensors of `dtype` for a result of n elements: new, of n elements (contiguous, another
    shape, transposed, expanded), of others (empty, non-empty), on meta."""
    yield "empty", lambda: torch.empty(0, dtype=dtype)
    yield "exact", lambda: torch.zeros(n, dtype=dtype)
    yield "non-empty", lambda: torch.zeros(7, dtype=dtype)
    if n and n % 2 == 0:
        yield "2-D", lambda: torch.zeros(2, n // 2, dtype=dtype)
        yield "transposed", lambda: torch.zeros(n // 2, 2, dtype=dtype).t()
    if n:
        yield "strided", lambda: torch.zeros(2 * n, dtype=dtype)[::2]
    yield "expanded", lambda: torch.zeros(1, dtype=dtype).expand(max(n, 2))
    yield "meta", lambda: torch.empty(0, dtype=dtype, device="meta")


def factory_samples(s):
    """(label, values, out dtype, n): the calls tried, each with an out dtype and the aten result's length."""
    names = [a for a in s["args"] if a != s["out"]]
    samples = []
    if s["factory"] == "ranged":
        for label, v in range_samples(s):
            if any(k not in names for k in v if k != "dtype"):
                continue  # the factory's options (device, layout, pin_memory): out= takes none
            dtype = v.pop("dtype", None) or torch.get_default_dtype()
            samples.append((label, v, dtype))
    elif s["factory"] == "filled":
        for size in ([3], [2, 3], [], [0], [4, 1]):
            for n in (0, 2.5, -1, 2**40, 300, 1e300, float("nan"), True, 1 + 2j, 0.1, -0.0):
                for dtype in (torch.float32, torch.float64, torch.int64, torch.uint8, torch.float16, torch.bool,
                              torch.complex64, torch.bfloat16):
                    samples.append((f"{size} {n!r}", {"size": size, "fill_value": n}, dtype))
    else:  # linspace.out, logspace.out
        numbers = [0, 1, -3, 10, 2**40, 0.5, -2.25, 0.1, float("inf"), float("nan"), True, 1 + 2j]
        for i, a in enumerate(numbers):
            for j, b in enumerate(numbers):
                for k, steps in enumerate([0, 1, 2, 7, 100, -1]):
                    dtype = [torch.float32, torch.float64, torch.int64, torch.float16, torch.complex64, torch.uint8,
                             torch.bfloat16, torch.int32][(i + j + k) % 8]
                    v = {"start": a, "end": b, "steps": steps}
                    if "base" in names:
                        v["base"] = [10.0, 2.0, 0.5][(i + k) % 3]
                    samples.append((f"{v}", v, dtype))
    return samples


def prove_factory(op, s):
    """aten's op against the generated wrapper's model, under both default dtypes: every sample with a new out of
    its dtype, every fifth with each kind of out (factory_outs), and out requiring grad in and out of grad mode."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""

    def compare(label, call_aten, call_mine, make_out, grad_mode=False):
        nonlocal compared, both_ok, refused, wrong
        with torch.set_grad_enabled(grad_mode):
            oa, ob = make_out(), make_out()
            got = observed(lambda: call_mine(ob), ob, RESIZE_TEXTS)
            compared += 1
            if got[0][0] == "refused":
                refused += 1  # aten is not called: an int64 overflow in its size can raise SIGFPE
                return
            want = observed(lambda: call_aten(oa), oa, RESIZE_TEXTS)
        both_ok += want[0][0] == got[0][0] == "ok"
        if not factory_same(want, got) and not wrong:
            wrong = f"{label}: {want[0][0]} {want[0][1] if want[0][0] == 'error' else (want[0][1], want[1])} vs " \
                    f"{got[0][0]} {got[0][1] if got[0][0] == 'error' else (got[0][1], got[1])}"

    for default in (torch.float32, torch.float64):
        old = torch.get_default_dtype()
        torch.set_default_dtype(default)
        try:
            if s["factory"] == "scalar":
                numbers = [0, 1, -3, 2**40, 2**63 - 1, 0.5, 0.1, 1e300, float("inf"), float("nan"), True, False,
                           1 + 2j, -0.0, 300, -1]
                dtypes = [None, torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                          torch.int32, torch.uint8, torch.int8, torch.bool, torch.complex64, torch.complex128,
                          torch.uint16]
                options = [{}, {"device": "cpu"}, {"device": "meta"}, {"layout": torch.strided},
                           {"layout": torch.sparse_coo}, {"pin_memory": False}]
                for n in numbers:
                    for dtype in dtypes:
                        for opts in options:
                            v = dict({"s": n}, **({"dtype": dtype} if dtype is not None else {}), **opts)
                            mine = outcome(lambda: scalar_full(v))
                            want = run(lambda: f(**v))
                            compared += 1
                            if mine[0] == "refused":
                                refused += 1
                                continue
                            both_ok += want[0] == mine[0] == "ok"
                            if not range_same(want, mine) and not wrong:
                                wrong = f"{default} {v}: {want} vs {mine}"
                continue
            for i, (label, v, dtype) in enumerate(factory_samples(s)):
                def mine(o, v=v):
                    return factory_out(s, v, o)

                def theirs(o, v=v):
                    return f(**v, **{s["out"]: o})
                probe = outcome(lambda: mine(torch.empty(0, dtype=dtype)))
                if probe[0] == "refused":  # aten is not called: an int64 overflow in its size can raise SIGFPE
                    compared += 1
                    refused += 1
                    continue
                n = probe[1].numel() if probe[0] == "ok" else 3
                kinds = (list(factory_outs(dtype, n)) if i % 5 == 0 else
                         [("empty", lambda d=dtype: torch.empty(0, dtype=d))])
                for kind, make in kinds:
                    compare(f"default {default} {label} out {dtype} {kind}", theirs, mine, make)
        finally:
            torch.set_default_dtype(old)
    if s["factory"] != "scalar":  # out requiring grad (leaf, non-leaf), of the result's length or not
        if s["factory"] == "ranged":
            v = {"end": 6} if "start" not in s["args"] else {"start": 0, "end": 6}
        else:
            v = factory_samples(s)[3][1]
        for grad_mode in (True, False):
            for nonleaf in (False, True):
                for length in (0, 3, 6, 7, 10):
                    def make(nonleaf=nonleaf, length=length):
                        with torch.enable_grad():
                            o = torch.zeros(length, dtype=torch.float64).requires_grad_()
                            return o * 1 if nonleaf else o
                    compare(f"{v} out requires grad (non-leaf {nonleaf}, {length}) grad mode {grad_mode}",
                            lambda o, v=v: f(**v, **{s["out"]: o}), lambda o, v=v: factory_out(s, v, o), make,
                            grad_mode)
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `fill_diagonal`: aten's fill_diagonal_ composite (as_strided views, fill_) ----

def fill_diagonal_model(self, fill_value, wrap=False):
    """kernels/factories.py FillDiagonal / scalar.h fill_diagonal_views: aten's checks, then fill_ (the fill_
    wrapper's route, proven equal to fill_.Scalar) on as_strided views of the diagonal and its wrapped part."""
    dims = self.dim()
    if dims < 2:
        raise RuntimeError(f"dimensions must larger than 1 {ATEN_RAISES}")
    h, w = self.shape[0], self.shape[1]
    if dims > 2 and any(self.shape[d] != h for d in range(1, dims)):
        raise RuntimeError(f"all dimensions of input must be of equal length {ATEN_RAISES}")
    stride, size, offset = sum(self.stride()), min(h, w), self.storage_offset()
    aten("fill_.Scalar")(aten("as_strided")(self, [size], [stride], offset), fill_value)
    if wrap and dims == 2 and h > w + 1:
        step = w + 1
        wrap_size = (h * w + step - 1) // step - size
        aten("fill_.Scalar")(aten("as_strided")(self, [wrap_size], [stride], offset + self.stride(0) * (w + 1)),
                             fill_value)
    return self


def prove_fill_diagonal(op, s):
    """aten's fill_diagonal_ against the model: dtypes, shapes (square, tall, wide, wrapping, 3-D, unequal,
    1-D, 0-dim, empty, transposed, offset views), numbers, wrap; self after the call; float64 gradients through a
    non-leaf self, and a leaf (aten's in-place error)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    dtypes = [torch.float32, torch.float64, torch.int64, torch.uint8, torch.bool, torch.float16, torch.complex64,
              torch.bfloat16]
    shapes = [(3, 3), (5, 3), (3, 5), (7, 2), (9, 3), (4, 4, 4), (4, 4, 3), (3,), (), (0, 0), (0, 3), (1, 1)]
    numbers = [0, 1.5, -1, float("nan"), float("inf"), True, 2**40, 1e300, 1 + 2j, 300, -0.0]
    views = ["plain", "transposed", "offset"]

    def make(shape, dtype, view, k):
        if view == "transposed" and len(shape) == 2:
            return sample(tuple(reversed(shape)), dtype, k).t()
        if view == "offset" and len(shape) >= 1:
            return sample((shape[0] + 2, *shape[1:]), dtype, k)[2:]
        return sample(shape, dtype, k)

    for k, shape in enumerate(shapes):
        for dtype in dtypes:
            for n in numbers:
                for wrap in (False, True):
                    for view in views:
                        a = make(shape, dtype, view, k)
                        b = a.clone() if view == "plain" else make(shape, dtype, view, k)
                        want = run(lambda: f(a, n, wrap))
                        got = outcome(lambda: fill_diagonal_model(b, n, wrap))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        ok = same(want, got) and (want[0] != "ok" or (want[1] is a and got[1] is b and
                                                                        same(("ok", a), ("ok", b))))
                        if not ok and not wrong:
                            wrong = f"{shape} {dtype} {n!r} wrap={wrap} {view}: {want[0]} vs {got[0]}"
    for shape in ((3, 3), (7, 2), (4, 4, 4)):  # gradients through a non-leaf self, and a leaf self
        for wrap in (False, True):
            grads = []
            for fn in (lambda x, n: f(x, n, wrap), lambda x, n: fill_diagonal_model(x, n, wrap)):
                leaf = sample(shape, torch.float64, 5).requires_grad_()
                r = fn(leaf * 1, 2.5)
                (r * weights(r)).sum().backward()
                grads.append(leaf.grad)
            compared += 1
            if same(("ok", grads[0]), ("ok", grads[1])):
                both_ok += 1
            elif not wrong:
                wrong = f"gradient {shape} wrap={wrap}"
            leaf = sample(shape, torch.float64, 6).requires_grad_()
            want = run(lambda: f(leaf, 2.5, wrap))
            got = outcome(lambda: fill_diagonal_model(leaf, 2.5, wrap))
            compared += 1
            if not same(want, got) and not wrong:
                wrong = f"leaf {shape}: {want} vs {got}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `scatter_value_reduce`: scatter's number with reduce as scatter.reduce with an expanded src ----

def scatter_value_reduce_model(s, v):
    """kernels/factories.py / scalar.h scatter_value_src: the number as a 0-dim tensor of self's dtype expanded to
    index's shape, then `via` (scatter.reduce, scatter_.reduce, scatter.reduce_out)."""
    self = v["self"]
    if self.device.type != "cpu":
        raise Refused("not cpu")
    if self.dtype == torch.uint16 or not in_range(v["value"], self.dtype):
        raise Refused("number")
    src = number_tensor(v["value"], self.dtype).expand_as(v["index"])
    return aten(s["via"])(**{("src" if k == "value" else k): (src if k == "value" else x) for k, x in v.items()})


def prove_scatter_value_reduce(op, s):
    """aten's op against the model: every dtype, shapes (duplicate indices, index smaller than self, 0-dim, empty,
    transposed index), dims (negative, out of range), indices out of range, reduce add/multiply/invalid, every
    number; self (in place) or out (new, exact, another dtype) after the call; the backward (raises in both)."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    inplace = op.split(".")[0].endswith("_")
    numbers = [0, 1, -1, 2.5, 2.0, 0.1, -0.0, 1e10, 1e300, float("inf"), float("nan"), True, 300, -129, 2**40,
               1 + 2j]
    cases = [((3, 4), (2, 3), 1), ((3, 4), (2, 3), 0), ((3, 4), (3, 4), -1), ((), (), 0), ((5,), (0,), 0),
             ((3, 4), (2, 3), 2), ((4, 5), (4, 5), 1), ((5, 7), (9, 7), 0), ((5, 7), (5, 30), 1), ((5, 7), (7, 9), 0)]

    def call(fn, v, out_dtype=None):
        v = dict(v, self=v["self"].clone())
        if s["out"]:
            o = torch.empty(0, dtype=out_dtype or v["self"].dtype)
            r = fn(dict(v, out=o))
            assert r is o, "out not returned"
            return r
        r = fn(v)
        assert r is v["self"] or not inplace, "self not returned"
        return r

    for d in DTYPES:
        for k, (shape, ishape, dim) in enumerate(cases):
            g = torch.Generator().manual_seed(k)
            size = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
            index = torch.randint(0, size + (k == 6), ishape, generator=g)  # case 6: an index out of range
            if k == 9:
                index = torch.randint(0, size, ishape[::-1], generator=g).t()  # transposed: (7, 9) strides (1, 7)
            for n in numbers:
                for reduce in ("add", "multiply", "mean"):
                    for out_dtype in ([None, torch.float64] if s["out"] and k < 2 else [None]):
                        v = {"self": sample(shape, d, k), "dim": dim, "index": index, "value": n, "reduce": reduce}
                        got = outcome(lambda: call(lambda x: scatter_value_reduce_model(s, x), v, out_dtype))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        want = run(lambda: call(lambda x: f(**x), v, out_dtype))
                        both_ok += want[0] == got[0] == "ok"
                        if not same(want, got) and not wrong:
                            wrong = f"{d} {shape} {ishape} {dim} {n!r} {reduce} {out_dtype}: {want[0]} " \
                                    f"{want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                                    f"{got[1] if got[0] == 'error' else ''}"
                        if d == torch.float64 and want[0] == got[0] == "ok" and not s["out"]:
                            outs = []
                            for fn in (lambda x: f(**x), lambda x: scatter_value_reduce_model(s, x)):
                                x = v["self"].clone().requires_grad_()
                                r = fn(dict(v, self=x * 1 if inplace else x))
                                outs.append(run(lambda: (r * weights(r)).sum().backward()))
                            if outs[0][0] != outs[1][0] and not wrong:
                                wrong = f"backward {shape} {ishape} {dim} {n!r} {reduce}: {outs}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernel `index_add_one`: index_add with alpha 1 as scatter_add over index expanded to source's shape ----

def index_add_index(written, self, dim, index, source, alpha):
    """scalar.h's index_add_index: the route's refusals, aten's index_add checks, the expanded contiguous index."""
    if not ((isinstance(alpha, int) and not isinstance(alpha, bool) and alpha == 1) or
            (isinstance(alpha, float) and alpha == 1.0)):
        raise Refused("alpha")
    if self.dtype in (torch.float16, torch.bfloat16) or self.dtype.is_complex:
        raise Refused("dtype")
    if any(t.device.type != "cpu" for t in (self, index, source)):
        raise Refused("device")
    sdim = max(self.dim(), 1)
    if not -sdim <= dim < sdim:
        raise RuntimeError(f"Dimension out of range {ATEN_RAISES}")
    d = dim % sdim
    if index.dim() > 1:
        raise RuntimeError(f"Index is supposed to be a vector {ATEN_RAISES}")
    if index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"Expected dtype int32/int64 for index {ATEN_RAISES}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"same scalar type {ATEN_RAISES}")
    if not (d == 0 or d < source.dim()):
        raise RuntimeError(f"Indexing dim out of bounds {ATEN_RAISES}")
    if index.numel() != (1 if source.dim() == 0 else source.shape[d]):
        raise RuntimeError(f"Number of indices {ATEN_RAISES}")
    xs, ss = list(self.shape), list(source.shape)
    if xs and ss:
        del xs[d]
        del ss[d]
    if xs != ss:
        raise RuntimeError(f"source slice shape mismatch {ATEN_RAISES}")
    if written is not None and overlaps(written, index):
        raise Refused("overlap")
    idx = index.to(torch.int64)
    if source.dim() == 0:
        if idx.dim() == 1:
            idx = aten("squeeze")(idx)
    else:
        if idx.dim() == 0:
            idx = aten("unsqueeze")(idx, 0)
        for _ in range(d):
            idx = aten("unsqueeze")(idx, 0)
        for _ in range(d + 1, source.dim()):
            idx = aten("unsqueeze")(idx, -1)
        idx = aten("expand_as")(idx, source)
    return aten("clone")(idx)


def index_add_model(s, v):
    inplace = s["via"].startswith("scatter_add_")
    written = v.get("out") if s["out"] else v["self"] if inplace else None
    idx = index_add_index(written, v["self"], v["dim"], v["index"], v["source"], v.get("alpha", 1))
    args = {"self": v["self"], "dim": v["dim"], "index": idx, "src": v["source"]}
    if s["out"]:
        args["out"] = v["out"]
    return aten(s["via"])(**args)


def prove_index_add(op, s):
    """aten's op against the model: dtypes, shapes (2-D and 3-D along each dim, 1-D, 0-dim, empty, duplicate
    indices, int32 indices, a transposed self), errors (dims, index shape and dtype, source dtype and shape, indices
    out of range), alpha values; self or out after the call; float64 gradients."""
    f = aten(op)
    compared = both_ok = refused = 0
    wrong = ""
    inplace = s["via"].startswith("scatter_add_")
    dtypes = [torch.float32, torch.float64, torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool,
              torch.complex64, torch.float16, torch.bfloat16]
    # (self shape, dim, source shape, index length or None for a 0-dim index, index upper bound offset)
    cases = [((5, 7), 0, (9, 7), 9, 0), ((5, 7), 1, (5, 30), 30, 0), ((5, 7), -1, (5, 3), 3, 0),
             ((4, 3, 5), 1, (4, 8, 5), 8, 0), ((4, 3, 5), 2, (4, 3, 6), 6, 0), ((6,), 0, (20,), 20, 0),
             ((), 0, (), None, 0), ((), 0, (1,), 1, 0), ((5, 7), 0, (0, 7), 0, 0), ((5, 7), 0, (9, 7), 9, 1),
             ((5, 7), 2, (9, 7), 9, 0), ((5, 7), 0, (9, 6), 9, 0), ((5, 7), 0, (8, 7), 9, 0), ((5, 7), 1, (7,), 7, 0),
             ((5, 7), 0, (), None, 0), ((40, 64), 0, (100, 64), 100, 0)]
    for dt in dtypes:
        for k, (xs, dim, ss, n, over) in enumerate(cases):
            g = torch.Generator().manual_seed(k)
            size = xs[dim] if xs and -len(xs) <= dim < len(xs) else 1
            for it in (torch.int64, torch.int32, torch.float32):
                if it == torch.float32 and k > 2:
                    continue
                index = (torch.randint(0, size + over, (n,) if n is not None else (), generator=g)).to(it)
                for alpha in ([1, 1.0, 2, 0.5] if k == 0 else [1]):
                    for layout in (["plain", "transposed"] if len(xs) == 2 and k < 3 else ["plain"]):
                        def make(dt=dt, xs=xs, ss=ss, k=k, layout=layout):
                            x = sample(xs[::-1], dt, k).t() if layout == "transposed" else sample(xs, dt, k)
                            return {"self": x, "source": sample(ss, dt, k + 50)}
                        base = {"dim": dim, "index": index}
                        if alpha != 1 or isinstance(alpha, float):
                            base["alpha"] = alpha
                        for out_kind in (["new", "exact", "other dtype"] if s["out"] and k < 2 else ["new"]):
                            def call(fn, make=make, base=base, out_kind=out_kind):
                                v = dict(make(), **base)
                                if s["out"]:
                                    od = torch.float64 if out_kind == "other dtype" else v["self"].dtype
                                    v["out"] = torch.empty(v["self"].shape if out_kind == "exact" else 0, dtype=od)
                                    r = fn(v)
                                    assert r is v["out"], "out not returned"
                                    return r
                                r = fn(v)
                                assert r is v["self"] or not inplace, "self not returned"
                                return r
                            got = outcome(lambda: call(lambda v: index_add_model(s, v)))
                            compared += 1
                            if got[0] == "refused":
                                refused += 1
                                continue
                            want = run(lambda: call(lambda v: f(**v)))
                            both_ok += want[0] == got[0] == "ok"
                            if not (same(want, got) and (want[0] != "ok" or want[1].stride() == got[1].stride())) \
                                    and not wrong:
                                wrong = f"{dt} {xs} {dim} {ss} {n} {it} {alpha} {layout} {out_kind}: {want[0]} " \
                                        f"{want[1] if want[0] == 'error' else ''} vs {got[0]} " \
                                        f"{got[1] if got[0] == 'error' else ''}"
                            if dt == torch.float64 and want[0] == got[0] == "ok" and not s["out"]:
                                grads = []
                                for fn in (lambda v: f(**v), lambda v: index_add_model(s, v)):
                                    v = dict(make(), **base)
                                    x = v["self"].clone().requires_grad_()
                                    src = v["source"].clone().requires_grad_()
                                    r = fn(dict(v, self=x * 1 if inplace else x, source=src))
                                    (r * weights(r)).sum().backward()
                                    grads.append([t.grad if t.grad is not None else torch.zeros_like(t)
                                                  for t in (x, src)])
                                for ga, gb in zip(*grads):
                                    if not same(("ok", ga), ("ok", gb)) and not wrong:
                                        wrong = f"gradient {xs} {dim} {ss} {layout}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- kernels `assert_scalar`, `constrain_range`, `constrain_range_for_size` and their `functional_` forms ----

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def runtime_check_select(s, op, v):
    """scalar.h's <kernel>_select, step by step (the row's `asserts`, `for_size`, `token`: its entry's)."""
    if s["asserts"]:
        n = v["self"]
        if not bool(n):  # NaN is true
            raise RuntimeError(f"shimgen: {op}: {v['assert_msg']} {ATEN_RAISES}")
    else:
        size, lo, hi = v["size"], v.get("min"), v.get("max")
        if s["for_size"]:
            if hi is not None and hi <= 2:
                raise RuntimeError(f"shimgen: {op}: Max value to constrain_range_for_size must be greater than 2. "
                                   f"got: {hi} {ATEN_RAISES}")
            lo = 0 if lo is None else lo
        if not isinstance(size, int):  # bool is an int
            raise Refused("size")
        lo = INT64_MIN if lo is None else lo
        hi = INT64_MAX if hi is None else hi
        if hi < lo:
            raise RuntimeError(f"shimgen: {op}: Max must be greater than or equal to min. Got min={lo} max={hi} "
                               f"{ATEN_RAISES}")
        if not lo <= int(size) <= hi:
            raise RuntimeError(f"shimgen: {op}: Invalid value range for {int(size)} between [{lo}, {hi}]. "
                               f"{ATEN_RAISES}")
    return aten("clone")(v["dep_token"]) if s["token"] else None


def prove_runtime_checks(op, s):
    """Numbers of every kind (zero, NaN, complex, int64's extremes), messages, bounds absent or given (max below
    min, max 2 for _for_size): the outcome and, for a _functional_ form, the token's clone."""
    f = aten(op)
    numbers = [True, False, 0, 1, -1, 5, 10, 11, 2**62, -2**63, 0.0, 2.5, float("nan"), 1 + 2j, 0j]
    bounds = [None, -3, 0, 2, 3, 6, 10]
    token = torch.arange(3.0)
    tally = Tally()
    for i, n in enumerate(numbers):
        if s["asserts"]:
            cases = [{"self": n, "assert_msg": f"check {i} failed"}]
        else:
            cases = [{"size": n, "min": lo, "max": hi} for lo in bounds for hi in bounds]
        for v in cases:
            if s["token"]:
                v = dict(v, dep_token=token)
            want = run(lambda: f(**v))
            got = outcome(lambda: runtime_check_select(s, op, v))
            tally.compare(f"{v}", want, got)
    return tally.report()


# ---- kernel `addbmm_loop`: scalar.h's addbmm_loop, each addmm_ by addmm.out's legacy shim wrapper ----

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


# ---- kernel `subcmul`: aten's `self - (other * alpha)` as the same aten calls (kernels/subcmul.py) ----

SUBCMUL_NUMBERS = NUMBERS + [-0.0, 2**53 + 1, 2**63 - 1, -(2**63), 300, -129, 1 + 2j, False]


def subcmul(calls, self, other, alpha):
    """kernels/subcmul.py: mul.Scalar's wrapper on (other, alpha), then sub.Tensor's with its default
    alpha (each wrapper proven equal to its aten overload; a number mul's wrapper refuses is refused there)."""
    return aten(calls["minus"])(self, aten(calls["times"])(other, alpha))


def prove_subcmul(op, s):
    """aten's op against the composition on every dtype pair (DTYPES), broadcasting, 0-dim and empty shapes,
    numbers of every kind (huge integers, non-finite, bool, complex) and the default alpha; results, dtypes,
    strides and errors; float64 and complex128 gradients of both tensors under weighted upstream gradients."""
    f, calls = aten(op), s["rule"]["calls"]
    tally = Tally()
    for da in DTYPES:
        for db in DTYPES:
            for k, (sa, sb) in enumerate(SHAPES):
                a, b = sample(sa, da, 3 * k), sample(sb, db, 3 * k + 1)
                if k == 0:
                    b = sample((7, 5), db, 1).t()  # not contiguous
                for n in SUBCMUL_NUMBERS + [None]:
                    extra = {} if n is None else {"alpha": n}
                    want = run(lambda: f(a, b, **extra))
                    got = outcome(lambda: subcmul(calls, a, b, 1 if n is None else n))
                    ws = tuple(want[1].stride()) if want[0] == "ok" else None
                    gs = tuple(got[1].stride()) if got[0] == "ok" else None
                    tally.compare(f"{da} {db} {sa} {sb} {n!r}", want, got, ws, gs)
                    grad_dtype = {torch.float64: torch.float64, torch.complex64: torch.complex128}.get(da)
                    if (grad_dtype is None or db != da or want[0] != "ok" or got[0] != "ok"
                            or n not in (0.5, -2.5, 3, None, 1 + 2j)):
                        continue
                    grads = []
                    for fn in (lambda x, y: f(x, y, **extra), lambda x, y: subcmul(calls, x, y, 1 if n is None else n)):
                        def backward(fn=fn):
                            x = a.to(grad_dtype).clone().requires_grad_()
                            y = b.to(grad_dtype).clone().requires_grad_()
                            r = fn(x, y)
                            (r * weights(r)).sum().real.backward()
                            return torch.cat([x.grad.reshape(-1), y.grad.reshape(-1)])
                        grads.append(run(backward))
                    if not same(*grads) and not tally.wrong:
                        tally.wrong = f"gradient {da} {sa} {sb} {n!r}: {grads[0][0]} vs {grads[1][0]}"
    return tally.report()


# ---- kernel `pad_packed`: aten's _pad_packed_sequence (PackedSequence.cpp) as the same aten calls ----

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


# ---- kernel `matrix_norm_two`: aten's linalg_matrix_norm (LinearAlgebra.cpp) for ord = 2 and -2 as the same calls ----

MATRIX_NORM_ORDS = [2, 2.0, -2, -2.0, 1, -1.0, float("inf"), -float("inf"), 3, 0, 0.5, float("nan"), True, 2 + 0j,
                    1j]
MATRIX_NORM_DIMS = [(-2, -1), (-1, -2), (0, 1), (1, 0), (0, 2), (2, 0), (1, -1), (0, -3), (0,), (0, 1, 2), (3, 0),
                    (-1, -1)]


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


# ---- kernel `renorm_two`: aten's structured renorm for p = 2 as the calls its kernel makes ----

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


# ---- kernel `str_value`: the op, for each value of its str argument, as the overload the row names ----

def str_value(s, v):
    """The generated wrapper (kernels/str_value.py): None -> `none_via`, a value of `calls` -> its overload (refused
    where autograd records the call and the value is `no_derivative`), a `refused` value refused, any other aten's
    error for it."""
    r = s["rule"]
    mode = v[r["argument"]]
    args = {a: v[a] for a in r["args"]}
    if mode is None:
        return aten(r["none_via"])(**args)
    if mode in r["calls"]:
        tensors = [t for t in args.values() if isinstance(t, torch.Tensor)]
        if mode in r.get("no_derivative", []) and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            raise Refused("autograd")
        return aten(r["calls"][mode])(**args)
    if mode in r.get("refused", []):
        raise Refused("value")
    raise RuntimeError(r["unknown"].replace("{}", mode) + " " + ATEN_RAISES)


STR_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool, torch.complex64]
STR_NUMBERS = [0, 1, -1, 2, -3, 0.5, -2.5, 1e300, float("inf"), -float("inf"), float("nan"), True, False, 2**40,
               1 + 1j]


def str_value_grads(fn, scalar_other, grad_mode, nonleaf, which, out=""):
    """fn's outcome on float64 inputs requiring grad (`which`; non-leaves computed from them where `nonleaf`; an
    out= tensor of their shape where `out` names one): its result, then the gradients of the leaves (zeros where
    unused) where the result requires grad, as one flat tensor."""
    x0 = sample((5, 7), torch.float64, 3).requires_grad_(which in ("self", "both"))
    y0 = 2.5 if scalar_other else sample((5, 7), torch.float64, 9).requires_grad_(which in ("other", "both"))
    leaves = [z for z in (x0, y0) if isinstance(z, torch.Tensor) and z.requires_grad]
    x = x0 * 1 if nonleaf and x0.requires_grad else x0
    y = y0 * 1 if nonleaf and isinstance(y0, torch.Tensor) and y0.requires_grad else y0
    extra = {out: torch.empty(5, 7, dtype=torch.float64)} if out else {}
    with torch.set_grad_enabled(grad_mode):
        got = outcome(lambda: fn(x, y, extra))
    if got[0] != "ok" or not got[1].requires_grad:
        return got if got[0] != "ok" else ("ok", got[1].detach().flatten())
    res = got[1]
    grads = run(lambda: torch.autograd.grad((res * weights(res)).sum(), leaves, allow_unused=True))
    if grads[0] != "ok":
        return grads
    return "ok", torch.cat([res.detach().flatten(), *((g if g is not None else torch.zeros_like(z)).flatten()
                                                      for g, z in zip(grads[1], leaves))])


def prove_str_value(op, s):
    """aten's op against str_value: every str value (None, the row's, "trunc", unknown ones), dtype pairs (integral,
    floating, bool, complex: type promotion), shapes (broadcasting, 0-dim, empty, not broadcastable), negative
    operands, zero divisors, inf/nan/-0.0, numbers as `other` (aten's wrapped numbers), out= tensors of several
    dtypes and shapes (resized, cast, refused); each call on its own copies (in-place ops write self). In grad mode
    and not, with float64 inputs that require grad (leaves and non-leaves): the results, and the gradients where the
    result requires grad."""
    f = aten(op)
    r = s["rule"]
    a = r["argument"]
    t = Tally()
    scalar_other = s["types"].get("other") == "Scalar"
    out = s["out"]
    modes = [None, *r["calls"], *r.get("refused", []), "Floor", "", "bad"]
    outs = [None] if not out else [(torch.float32, (0,)), (torch.float64, (5, 7)), (torch.int64, (5, 7)),
                                  (torch.int32, (3,))]
    for i, d1 in enumerate(STR_DTYPES):
        for j, d2 in enumerate(STR_DTYPES):
            others = STR_NUMBERS if scalar_other else [None]
            for k, (s1, s2) in enumerate(SHAPES + [((2, 3), (4,))]):
                if scalar_other and (j or k > 3):  # a number: its own list, once per self dtype
                    continue
                if out and (i + j + k) % 3:  # out= rows: a third of the pairs, each with every out=
                    continue
                x = sample(s1, d1, k + i)
                for n in others:
                    y = n if scalar_other else sample(s2, d2, k + j + 7)
                    for o in outs:
                        for mode in modes:
                            def fresh():
                                v = {"self": x.clone(), "other": y.clone() if isinstance(y, torch.Tensor) else y}
                                if o is not None:
                                    v[out] = torch.zeros(o[1], dtype=o[0])
                                return v
                            want = run(lambda: f(**fresh(), **{a: mode}))
                            got = outcome(lambda: str_value(s, dict(fresh(), **{a: mode})))
                            t.compare(f"{d1} {d2 if not scalar_other else repr(n)} {s1} {s2} {o} {mode!r}", want, got)
    if not scalar_other:  # a Python number as `other`: aten's wrapped number, on both sides
        for i, d1 in enumerate(STR_DTYPES):
            x = sample((5, 7), d1, i)
            for n in STR_NUMBERS:
                for o in outs:
                    for mode in modes:
                        def fresh():
                            v = {"self": x.clone(), "other": n}
                            if o is not None:
                                v[out] = torch.zeros(o[1], dtype=o[0])
                            return v
                        want = run(lambda: f(**fresh(), **{a: mode}))
                        got = outcome(lambda: str_value(s, dict(fresh(), **{a: mode})))
                        t.compare(f"{d1} wrapped {n!r} {o} {mode!r}", want, got)
    for mode in modes:
        for grad_mode in (True, False):
            for nonleaf in (False, True):
                for which in ("self", "other", "both"):
                    if scalar_other and which != "self":
                        continue
                    t.compare(f"autograd {mode!r} grad mode {grad_mode} non-leaf {nonleaf} {which}",
                              str_value_grads(lambda x, y, e: f(x, y, **e, **{a: mode}), scalar_other, grad_mode,
                                              nonleaf, which, out),
                              str_value_grads(lambda x, y, e: str_value(s, {"self": x, "other": y, a: mode, **e}),
                                              scalar_other, grad_mode, nonleaf, which, out))
    return t.report()


# ---- the hooks and mirrors the kernels' registry entries name (shimgen/generate/routes/kernels, prover_spec: `prover`, the
# function that proves a row of the kernel; `mirror`, scalar.h's select as the hook calls it) ----

PROVERS = {f.__name__: f for f in (
    prove_kernel, prove_foreach, prove_inplace, prove_wrapped, prove_items, prove_as_double, prove_scatter_fill,
    prove_out, prove_range, prove_number_as_none, prove_select, prove_rrelu, prove_scalars_tensor, prove_item_scalar,
    prove_result_type_numbers, prove_trapezoid, prove_elu_backward, prove_add_relu, prove_factory, prove_fill_diagonal,
    prove_scatter_value_reduce, prove_index_add, prove_runtime_checks, prove_addbmm_loop, prove_subcmul,
    prove_pad_packed, prove_matrix_norm, prove_renorm, prove_str_value)}
MIRRORS = {f.__name__: f for f in (
    threshold_select, leaky_relu_select, hardtanh_backward_select, clamp_select, hardshrink_select,
    scatter_fill_select, softshrink_select, shrink_grad_select, item_scalar_select, first_scalar_select,
    result_type_numbers_select)}


if __name__ == "__main__":
    main()
