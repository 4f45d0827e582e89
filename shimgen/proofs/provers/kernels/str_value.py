"""The prover of kernel `str_value` (shimgen/generate/routes/kernels/str_value.py): the op, for each value of its str
argument, as the overload the row names.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import DTYPES, SHAPES, sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, weights


RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def str_value(s, v):
    """The generated wrapper at target 2.10 (kernels/str_value.py): None -> `none_via`, a value of `calls` -> its
    overload, any other aten's error for it; a `refused` value, and a `no_derivative` one where autograd records the
    call, take the dispatcher's guarded form: aten's op (s["op"]) from libtorch 2.14, refused before."""
    r = s["rule"]
    mode = v[r["argument"]]
    args = {a: v[a] for a in r["args"]}

    def dispatched(why):
        if RELEASE < (2, 14):
            raise Refused(why)
        return aten(s["op"])(**v)

    if mode is None:  # a `str?` only (a plain `str` row has no none_via; aten refuses None itself)
        return aten(r["none_via"])(**args)
    if mode in r["calls"]:
        tensors = [t for t in args.values() if isinstance(t, torch.Tensor)]
        if mode in r.get("no_derivative", []) and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return dispatched("autograd")
        return aten(r["calls"][mode])(**args)
    if mode in r.get("composed", {}):
        how = r["composed"][mode]["how"]
        a, b = (args[k] for k in r["args"][:2])
        if not isinstance(b, torch.Tensor):  # a number: the Scalar overload's sibling passes a 0-dim tensor of the
            try:  # result's dtype (its own exact conversions; another number is refused there)
                b = torch.tensor(b, dtype=torch.result_type(a, b))
            except (RuntimeError, OverflowError) as e:
                raise Refused("number") from e
        case = COMPOSED[how][0](a, b)
        if case == 0 or (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)):
            return dispatched("composed")
        return COMPOSED[how][1](case, a, b, r["composed"][mode]["calls"])
    if mode in r.get("refused", []):
        return dispatched("value")
    raise RuntimeError(r["unknown"].replace("{}", mode) + " " + ATEN_RAISES)


INTEGRAL = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def div_trunc_case(a, b):
    """cxx/kernels/div_trunc.h's div_trunc_case: 1 integral, 2 float/double/complex and bfloat16/half by a b of
    several elements, 3 bfloat16/half by a b of one element, 0 refused (another device, bool, a dtype with no
    promotion rule)."""
    if a.device.type != "cpu" or b.device.type != "cpu":
        return 0
    try:
        t = torch.result_type(a, b)
    except RuntimeError:
        return 0
    if t in INTEGRAL:
        return 1
    if t in (torch.bfloat16, torch.float16):
        return 3 if b.numel() == 1 else 2
    return 2 if t in (torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128) else 0


def div_trunc(case, a, b, calls):
    """The statements kernels/str_value.py's _div_trunc emits (`calls`: the row's fmod, sub, floor_divide, trunc, div
    and to overloads, in that order)."""
    fmod, sub, floor, trunc, div, to = (aten(c) for c in calls)
    if case == 1:
        return floor(sub(a, fmod(a, b)), b)
    if case == 3:
        dtype = torch.result_type(a, b)
        return to(trunc(div(to(to(a, dtype), torch.float32), to(b, torch.float32))), dtype)
    return trunc(div(a, b))


# the compositions a row's `composed` values name (`how`): the case helper, then the composition
COMPOSED = {"div_trunc": (div_trunc_case, div_trunc)}

STR_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
              torch.int8, torch.uint8, torch.bool, torch.complex64]
STR_NUMBERS = [0, 1, -1, 2, -3, 0.5, -2.5, 1e300, float("inf"), -float("inf"), float("nan"), True, False, 2**40,
               1 + 1j]


def result_and_grads(call, leaves, grad_mode):
    """call()'s outcome in grad mode `grad_mode`: its result, then the gradients of `leaves` (zeros where unused)
    where the result requires grad, as one flat tensor."""
    with torch.set_grad_enabled(grad_mode):
        got = outcome(call)
    if got[0] != "ok" or not got[1].requires_grad:
        return got if got[0] != "ok" else ("ok", got[1].detach().flatten())
    res = got[1]
    grads = run(lambda: torch.autograd.grad((res * weights(res)).sum(), leaves, allow_unused=True))
    if grads[0] != "ok":
        return grads
    return "ok", torch.cat([res.detach().flatten(), *((g if g is not None else torch.zeros_like(z)).flatten()
                                                      for g, z in zip(grads[1], leaves))])


def str_value_grads(fn, scalar_other, grad_mode, nonleaf, which, out=""):
    """fn's outcome on float64 inputs requiring grad (`which`; non-leaves computed from them where `nonleaf`; an
    out= tensor of their shape where `out` names one): result_and_grads."""
    x0 = sample((5, 7), torch.float64, 3).requires_grad_(which in ("self", "both"))
    y0 = 2.5 if scalar_other else sample((5, 7), torch.float64, 9).requires_grad_(which in ("other", "both"))
    leaves = [z for z in (x0, y0) if isinstance(z, torch.Tensor) and z.requires_grad]
    x = x0 * 1 if nonleaf and x0.requires_grad else x0
    y = y0 * 1 if nonleaf and isinstance(y0, torch.Tensor) and y0.requires_grad else y0
    extra = {out: torch.empty(5, 7, dtype=torch.float64)} if out else {}
    return result_and_grads(lambda: fn(x, y, extra), leaves, grad_mode)


def prove_str_value(op, s):
    """aten's op against str_value: every str value (None, the row's, "trunc", unknown ones), dtype pairs (integral,
    floating, bool, complex: type promotion), shapes (broadcasting, 0-dim, empty, not broadcastable), negative
    operands, zero divisors, inf/nan/-0.0, numbers as `other` (aten's wrapped numbers), out= tensors of several
    dtypes and shapes (resized, cast, refused); each call on its own copies (in-place ops write self). In grad mode
    and not, with float64 inputs that require grad (leaves and non-leaves): the results, and the gradients where the
    result requires grad."""
    f = aten(op)
    s = dict(s, op=op)
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
    # a composed value (`composed`: div's "trunc"), densely: 4,096 quotients a dtype pair at three magnitudes, near
    # integers and around rounding, by a tensor and by a 0-dim tensor (aten's loop over a CPU scalar), 1 and 2 threads
    dense = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int8, torch.uint8, torch.int16,
             torch.int32, torch.int64]
    for mode in r.get("composed", {}) if not scalar_other and not out else ():
        g = torch.Generator().manual_seed(11)
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for d1 in dense:
                for d2 in dense:
                    for scale in (1, 100, 10000):
                        x = torch.randn(4096, generator=g, dtype=torch.float64) * scale
                        y = torch.randn(4096, generator=g, dtype=torch.float64) * 3
                        if not d1.is_floating_point:
                            x = x.round().clamp(0 if d1 == torch.uint8 else -128, 127 if d1 in (torch.int8, torch.uint8)
                                                 else 2**31 - 1)
                        if not d2.is_floating_point:
                            y = y.round().clamp(1 if d2 == torch.uint8 else -128, 127) + (y.round() == 0).double()
                        x, y = x.to(d1), y.to(d2)
                        for other in (y, y[7].clone().reshape(())):
                            want = run(lambda: f(x, other, **{a: mode}))
                            got = outcome(lambda: str_value(s, {"self": x, "other": other, a: mode}))
                            t.compare(f"dense {mode!r} threads {threads} {d1} {d2} {scale} {other.dim()}", want, got)
        torch.set_num_threads(1)
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


def prove_str_value_scatter(op, s):
    """aten's op against str_value for scatter's reduce (`samples: scatter`: self, dim, index, src, and out= or in
    place): every dtype (src of self's dtype and of another), shapes (duplicate indices, index smaller than self or
    src, 0-dim, empty, an index expanded along a dim (aten's fast path for scatter_add), large enough for two
    threads' chunks), dims (negative, out of range), indices out of range and of int32, reduce "add", "multiply",
    unknown ones; self (in place) or out (empty, exact, another dtype, aliasing self) after the call; 1 and 2
    threads. In grad mode and not, with float64 inputs that require grad (leaves and non-leaves): the result, and
    the backward's outcome (aten records scatter.reduce as not implemented)."""
    f = aten(op)
    s = dict(s, op=op)
    t = Tally()
    out = s["out"]
    inplace = op.split(".")[0].endswith("_")
    modes = [*s["rule"]["calls"], *s["rule"].get("refused", []), "Add", "", "sum", "mean"]
    cases = [((3, 4), (2, 3), (3, 4), 1), ((3, 4), (2, 3), (2, 3), 0), ((3, 4), (3, 4), (3, 4), -1),
             ((), (), (), 0), ((5,), (0,), (5,), 0), ((3, 4), (2, 3), (2, 3), 2), ((4, 5), (4, 5), (4, 5), 1),
             ((5, 7), (9, 7), (9, 7), 0), ((5, 7), (5, 30), (6, 30), 1), ((64, 33), (2000, 33), (2000, 33), 0),
             ((5, 7), (7, 9), (9, 9), 0), ((9, 2000), (9, 2000), (9, 2000), 1), ((4, 5), (3, 6), (3, 5), 0)]

    def index_of(k, shape, ishape, dim, dtype=torch.int64):
        g = torch.Generator().manual_seed(k)
        size = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
        if k == 9:  # expanded along dim 1: aten's scatter_add takes its expanded-index path
            return torch.randint(0, size, (ishape[0], 1), generator=g).expand(ishape).to(dtype)
        if k == 10:  # transposed: (7, 9) with strides (1, 7)
            return torch.randint(0, size, ishape[::-1], generator=g).t().to(dtype)
        return torch.randint(0, size + (k == 6), ishape, generator=g).to(dtype)  # case 6: one out of range

    for threads in (1, 2):
        torch.set_num_threads(threads)
        for i, d in enumerate(DTYPES):
            for k, (shape, ishape, sshape, dim) in enumerate(cases):
                if threads == 2 and k not in (7, 9, 11):
                    continue
                index = index_of(k, shape, ishape, dim, torch.int32 if k == 12 else torch.int64)
                for sd in (d, DTYPES[(i + 1) % len(DTYPES)]) if k < 3 else (d,):
                    src = sample(sshape, sd, k + 5)
                    for o in ([None] if not out else [(d, (0,)), (d, shape), (torch.float64, shape), "self"]):
                        for mode in modes:
                            def fresh():
                                v = {"self": sample(shape, d, k), "dim": dim, "index": index, "src": src.clone()}
                                if o == "self":
                                    v[out] = v["self"]
                                elif o is not None:
                                    v[out] = torch.zeros(o[1], dtype=o[0])
                                return v

                            def call(fn):
                                v = fresh()
                                r = fn(v)
                                if inplace:
                                    assert r is v["self"], "self not returned"
                                if out:
                                    assert r is v[out], "out not returned"
                                return r
                            want = run(lambda: call(lambda v: f(**v, reduce=mode)))
                            got = outcome(lambda: call(lambda v: str_value(s, dict(v, reduce=mode))))
                            t.compare(f"threads {threads} {d} {sd} {shape} {ishape} {sshape} {dim} {o} {mode!r}",
                                      want, got)
    torch.set_num_threads(1)
    for mode in modes:
        for grad_mode in (True, False):
            for nonleaf in (False, True):
                for which in ("self", "src", "both"):
                    if inplace and which != "src" and not nonleaf:
                        continue  # a leaf that requires grad written in place: aten's error on both sides

                    def grads(fn):
                        x0 = sample((3, 4), torch.float64, 3).requires_grad_(which in ("self", "both"))
                        y0 = sample((2, 3), torch.float64, 5).requires_grad_(which in ("src", "both"))
                        x = x0 * 1 if nonleaf and x0.requires_grad else x0
                        y = y0 * 1 if nonleaf and y0.requires_grad else y0
                        v = {"self": x, "dim": 0, "index": torch.tensor([[0, 2, 1], [2, 2, 0]]), "src": y,
                             "reduce": mode}
                        if out:
                            v[out] = torch.empty(3, 4, dtype=torch.float64)
                        return result_and_grads(lambda: fn(v), [z for z in (x0, y0) if z.requires_grad], grad_mode)

                    t.compare(f"autograd {mode!r} grad mode {grad_mode} non-leaf {nonleaf} {which}",
                              grads(lambda v: f(**v)), grads(lambda v: str_value(s, v)))
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_str_value, prove_str_value_scatter)}
