"""The prover of kernels `arange_factory` / `range_factory` (shimgen/generate/routes/kernels/ranges.py): aten's range
factories as cumsum of [start, step, step, ...], per number (scalar.h's range_select, mirrored; the factories'
range_out calls it too).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from worker_common import ATEN_RAISES, Refused, aten, outcome, run, same


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


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_range,)}
