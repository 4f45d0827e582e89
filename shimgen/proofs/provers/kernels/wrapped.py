"""The provers of kernels `wrapped_numbers` (an op aten computes as its Tensor overload, its numbers wrapped),
`item_numbers` (an op whose Tensor overload takes each number back with .item(); over an out= overload its entry
names the factories' out= prover) and `as_double` (an op equal to `via` with its number as via's `float?`) of
shimgen/generate/routes/kernels/wrapped.py.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import DTYPES, in_range, natural_tensor, number_tensor, observed, sample, wrapped_dtype
from worker_common import Refused, Tally, aten, outcome, run, same, same_error_text


# ---- kernel `wrapped_numbers`: an op aten computes as its Tensor overload, its numbers wrapped ----

WRAPPED_NUMBERS = [0, 1, -1, 3, 0.5, 0.1, -2.5, 1e-3, 1e10, 1e300, float("inf"), float("nan"), 2**40, 2**53 + 1,
                   16777217, 16777216.5, 300, -129, True, False, 1.5 + 2j]


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


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_wrapped, prove_items, prove_as_double)}
