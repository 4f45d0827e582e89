"""The prover of kernel `cpu_kernel` (shimgen/generate/routes/kernels/cpu_kernel.py): an op computed on CPU tensors by
aten's CPU kernel through libtorch's CPU C shim of the row's `via`, after the dispatcher's work above it (negative
and conjugate views resolved, autocast's lower-precision cast for the functional form of an op on autocast's list),
a call autograd would record refused; in-place and out= forms by aten::copy_ under aten's rules.

The model calls `via` through the dispatcher on CPU tensors with no gradient recorded, where the dispatcher reaches
the very kernel the shim calls (at::cpu::); what is proven here is everything around it. tests/test_cpu_kernel.py
runs the compiled wrappers themselves on each runtime.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import can_cast, observed, overlaps, requires_grad_proxy, shares_memory
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same

# the functional overload's arguments by `via` (its schema's order): the tensors, then the numbers
TENSORS = {"baddbmm.out": ("self", "batch1", "batch2"), "addmv.default": ("self", "mat", "vec"),
           "histc.default": ("self",), "scatter_reduce.two_out": ("self", "index", "src"),
           "index_reduce.default": ("self", "index", "source"), "searchsorted.Tensor": ("sorted_sequence", "self"),
           "_addmm_activation.default": ("self", "mat1", "mat2")}
# its Scalar arguments (they cross the shim as doubles), by `via`
SCALARS = {"baddbmm.out": ("beta", "alpha"), "addmv.default": ("beta", "alpha"), "histc.default": ("min", "max"),
           "_addmm_activation.default": ("beta", "alpha")}
RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
# the op autocast casts to its lower precision (the row's `lower_precision`: the operand probed)
LOWER = {"baddbmm.default": "batch1", "_addmm_activation.default": "mat1"}


def _exact(n, floating):
    """scalar.h's exactness rule of a double-carrying route for an int_as_double op: a float, the integer 1, or an
    integer a double holds where a tensor is floating."""
    if isinstance(n, float):
        return True
    return n == 1 or (floating and abs(n) <= 2**53)


def cpu_kernel(op, s, args, out=None):
    """The generated wrapper (kernels/cpu_kernel.h and the entry's body): args by name, the functional's."""
    via, form = s["via"], s["form"]
    tensors = [args[n] for n in TENSORS[via]]
    differentiable = not s.get("no_gradient")
    recorded = torch.is_grad_enabled() and any(requires_grad_proxy(t) for t in [*tensors, out] if t is not None)
    if s.get("argument"):  # a str row: the dispatcher's guarded form where the CPU kernel does not serve the call
        given_only = s["rule"].get("given_only") and args.get(s["argument"]) is None  # None: nothing crosses
        if RELEASE >= (2, 14) or given_only:
            return aten(op)(**args, out=out) if form == "out" else aten(op)(**args)
        every = tensors + ([out] if out is not None else [])
        if any(t.device.type != "cpu" for t in every) or (differentiable and recorded):
            raise Refused("the dispatcher's str leaks before libtorch 2.14")
    if form == "out" and differentiable and recorded and not s.get("no_derivative"):
        raise RuntimeError(f"out= and an input requires grad {ATEN_RAISES}")
    probe = LOWER.get(op)
    if probe is not None:  # addbmm_loop.h autocast_target, autocast_like
        p = args[probe]
        if p.is_floating_point() and p.dtype != torch.float64:
            got = aten("mm")(p.new_empty((0, 0)), p.new_empty((0, 0)))
            if got.dtype != p.dtype:
                cast = {k: (v.to(got.dtype) if isinstance(v, torch.Tensor) and v.is_floating_point()
                            and v.dtype != torch.float64 and v.device.type == got.device.type else v)
                        for k, v in args.items()}
                return cpu_kernel(op, s, cast, out)
    if any(t.device.type != "cpu" for t in tensors + ([out] if out is not None else [])):
        raise Refused("device")
    if differentiable and torch.is_grad_enabled() and any(t.requires_grad for t in tensors + ([out] if out is not None
                                                                                           else [])):
        raise Refused("autograd")
    floating = any(t.is_floating_point() for t in tensors)
    numbers = {k: args[k] for k in SCALARS.get(via, ())}
    if numbers and not any(t.is_floating_point() or t.is_complex() for t in tensors):
        raise Refused("integer tensors")  # cpu_kernel.h cpu_kernel_integral
    for k, v in numbers.items():
        if not _exact(v, floating):
            raise Refused(f"{k} as a double")
    resolved = {k: v.resolve_neg().resolve_conj() if isinstance(v, torch.Tensor) and k in TENSORS[via] else v
                for k, v in args.items()}
    doubles = {k: float(v) for k, v in numbers.items()}
    call = {**resolved, **doubles}
    with torch.autocast("cpu", enabled=False):  # the shim calls at::cpu::, beneath autocast (cast above, by LOWER)
        if via.endswith("out") or (form == "inplace" and not args["self"].is_contiguous()):
            return _shim_form(via, form, call, resolved, args, tensors, out)
        with torch.no_grad():  # a functional shim is beneath autograd too: its result records nothing
            result = aten(via)(**call)
        return _shim_form(via, form, call, resolved, args, tensors, out, result)


def _shim_form(via, form, call, resolved, args, tensors, out, result=None):
    """The shim's call and the row's form (in place, out=, functional) around it; `result`: a functional shim's,
    computed beneath autograd."""
    if via.endswith("out"):  # an out= shim (x.out, x.y_out)
        if form == "out":  # the shim into out itself (a negative or conjugate out refused)
            if out.is_neg() or out.is_conj():
                raise Refused("a negative or conjugate out")
            return aten(via)(**call, out=out)
        if form == "inplace":  # in a copy of self, out and self the same tensor (cpu_kernel_copy)
            result = resolved["self"].clone()
            aten(via)(**{**call, "self": result}, out=result)
        else:
            result = resolved["self"].new_empty(0)
            aten(via)(**call, out=result)
    else:
        if form == "inplace" and not args["self"].is_contiguous():
            raise Refused("a strided self")
        if result is None:
            result = aten(via)(**call)
    if form == "inplace":  # compositions.h assign_inplace
        self = args["self"]
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"the result's dtype cannot be cast to self's {ATEN_RAISES}")
        if any(shares_memory(self, t) for t in tensors[1:]):
            raise Refused("self shares memory with an input")
        return self.copy_(result)
    if form == "out":  # cpu_kernel_out_layout, out_inplace.h assign_out (same_dtype)
        if out.shape == result.shape and not out.is_contiguous():
            raise Refused("a strided out")
        if out.device != result.device:
            raise RuntimeError(f"out is on another device than the result {ATEN_RAISES}")
        if result.dtype != out.dtype:
            raise RuntimeError(f"out's dtype differs from the result's {ATEN_RAISES}")
        resize = out.shape != result.shape
        if any(n > 1 and st == 0 for n, st in zip(out.shape, out.stride())):
            raise Refused("out writes an element twice")
        if any(overlaps(out, t) if resize else shares_memory(out, t) for t in tensors):
            raise Refused("overlap")
        if not resize:
            out.copy_(result)
        else:
            aten("where.self_out")(torch.tensor(True), result, result, out=out)
        return out
    return result


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _t(shape, dtype, seed, scale=3.0):
    base = torch.randn(shape, generator=_gen(seed), dtype=torch.float64) * scale
    if dtype.is_floating_point or dtype.is_complex:
        return base.to(dtype)
    return base.round().to(dtype)


def _make(spec, dtype, seed):
    """A case's tensor: a shape (random values of the dtype), ("index", shape, high) (int64 indices below high),
    ("expanded", rows, cols, high) (a column of indices expanded: aten's scatter fast path) or ("sorted", shape)
    (sorted along its last dimension)."""
    if spec and spec[0] == "index":
        return torch.randint(0, spec[2], spec[1], generator=_gen(seed))
    if spec and spec[0] == "expanded":
        return torch.randint(0, spec[3], (spec[1], 1), generator=_gen(seed)).expand(spec[1], spec[2])
    if spec and spec[0] == "sorted":
        t = _t(spec[1], dtype, seed)
        return t if t.is_complex() else t.sort(-1).values  # complex: aten raises (no order)
    return _t(spec, dtype, seed)


def _scatter_reduce_cases():
    """scatter_reduce: every reduction and an unknown one, include_self both ways, along each dimension, duplicate
    indices, aten's expanded-index path, an empty index."""
    shapes = [({"self": (5, 7), "index": ("index", (9, 7), 5), "src": (9, 7)}, 0),
              ({"self": (5, 7), "index": ("index", (5, 30), 7), "src": (5, 30)}, 1),
              ({"self": (64, 33), "index": ("expanded", 2000, 33, 64), "src": (2000, 33)}, 0),
              ({"self": (5, 7), "index": ("index", (0, 7), 5), "src": (0, 7)}, 0)]
    for i, (shape, dim) in enumerate(shapes):
        for j, reduce in enumerate(("sum", "prod", "mean", "amax", "amin", "max")):
            for include_self in (True, False):
                yield f"{shape} dim {dim} {reduce} include_self {include_self}", shape, \
                    {"dim": dim, "reduce": reduce, "include_self": include_self}, i * 31 + j, j == 2


def _index_reduce_cases():
    shapes = [({"self": (5, 7), "index": ("index", (9,), 5), "source": (9, 7)}, 0),
              ({"self": (5, 7), "index": ("index", (12,), 7), "source": (5, 12)}, 1),
              ({"self": (5, 7), "index": ("index", (0,), 5), "source": (0, 7)}, 0)]
    for i, (shape, dim) in enumerate(shapes):
        for j, reduce in enumerate(("prod", "mean", "amax", "amin", "sum")):
            for include_self in (True, False):
                yield f"{shape} dim {dim} {reduce} include_self {include_self}", shape, \
                    {"dim": dim, "reduce": reduce, "include_self": include_self}, i * 31 + j, j == 1


def _searchsorted_cases():
    shapes = [{"sorted_sequence": ("sorted", (4, 10)), "self": (4, 6)}, {"sorted_sequence": ("sorted", (50,)),
                                                                        "self": (7, 3)},
              {"sorted_sequence": ("sorted", (4, 10)), "self": (3, 6)}]
    options = [(False, False, None), (True, False, None), (False, True, None), (False, False, "left"),
               (False, False, "right"), (False, True, "left"), (False, False, "middle")]
    for i, shape in enumerate(shapes):
        for j, (out_int32, right, side) in enumerate(options):
            yield f"{shape} out_int32 {out_int32} right {right} side {side!r}", shape, \
                {"out_int32": out_int32, "right": right, "side": side}, i * 31 + j, j == 1


def _baddbmm_cases():
    """(label, tensors, numbers): broadcast self, the small-product kernel (contraction x rows x cols < 400) and the
    gemm paths, empty batches and contractions, mismatched shapes, transposed batches, a 0-dim self."""
    shapes = [((4, 3, 5), (4, 3, 2), (4, 2, 5)), ((3, 5), (4, 3, 2), (4, 2, 5)), ((5,), (4, 3, 2), (4, 2, 5)),
              ((), (2, 3, 4), (2, 4, 5)), ((6, 20, 30), (6, 20, 40), (6, 40, 30)), ((2, 64, 48), (2, 64, 32),
                                                                                      (2, 32, 48)),
              ((0, 3, 5), (0, 3, 2), (0, 2, 5)), ((2, 3, 5), (2, 3, 0), (2, 0, 5)), ((4, 3, 5), (4, 3, 2), (3, 2, 5)),
              ((4, 3, 5), (4, 3, 2), (4, 3, 5)), ((4, 3, 5), (3, 2), (4, 2, 5))]
    numbers = [(1, 1), (0.5, 2.0), (0, 1), (2, -3), (0.1, 0.125), (0.0, 0.0), (float("nan"), 1), (1, 2**53 + 1)]
    for i, (ss, s1, s2) in enumerate(shapes):
        for j, (beta, alpha) in enumerate(numbers):
            yield f"{ss} {s1} {s2} beta {beta!r} alpha {alpha!r}", {"self": ss, "batch1": s1, "batch2": s2}, \
                {"beta": beta, "alpha": alpha}, i * 31 + j, j % 3 == 1


def _addmv_cases():
    shapes = [((3,), (3, 4), (4,)), ((1,), (3, 4), (4,)), ((), (3, 4), (4,)), ((64,), (64, 48), (48,)),
              ((0,), (0, 4), (4,)), ((3,), (3, 0), (0,)), ((3,), (3, 4), (5,)), ((2, 3), (3, 4), (4,))]
    numbers = [(1, 1), (0.5, 2.0), (0, 1), (2, -3), (0.1, 0.125), (float("nan"), 1), (1, 2**53 + 1)]
    for i, (ss, s1, s2) in enumerate(shapes):
        for j, (beta, alpha) in enumerate(numbers):
            yield f"{ss} {s1} {s2} beta {beta!r} alpha {alpha!r}", {"self": ss, "mat": s1, "vec": s2}, \
                {"beta": beta, "alpha": alpha}, i * 31 + j, j % 3 == 1


def _addmm_activation_cases():
    """addmm's shapes (a broadcast and a 0-dim self, gemm sizes, empty and mismatched operands), relu and gelu."""
    shapes = [((3, 5), (3, 4), (4, 5)), ((5,), (3, 4), (4, 5)), ((), (3, 4), (4, 5)), ((1, 5), (3, 4), (4, 5)),
              ((64, 48), (64, 32), (32, 48)), ((0, 5), (0, 4), (4, 5)), ((3, 5), (3, 0), (0, 5)),
              ((3, 5), (3, 4), (3, 5))]
    numbers = [(1, 1), (0.5, 2.0), (0, 1), (2, -3), (0.1, 0.125), (float("nan"), 1), (1, 2**53 + 1)]
    for i, (ss, s1, s2) in enumerate(shapes):
        for j, (beta, alpha) in enumerate(numbers):
            for gelu in (False, True):
                yield f"{ss} {s1} {s2} beta {beta!r} alpha {alpha!r} gelu {gelu}", \
                    {"self": ss, "mat1": s1, "mat2": s2}, {"beta": beta, "alpha": alpha, "use_gelu": gelu}, \
                    i * 31 + j, j % 3 == 1


def _histc_cases():
    shapes = [(1000,), (7, 9), (), (0,), (4096, 3)]
    numbers = [(100, 0, 0), (10, -2, 2), (7, -1.5, 3.25), (1, 0, 0), (5, 2, -2), (0, 0, 1), (16, 0.1, 0.9),
               (8, -3, 3)]
    for i, shape in enumerate(shapes):
        for j, (bins, lo, hi) in enumerate(numbers):
            yield f"{shape} bins {bins} min {lo!r} max {hi!r}", {"self": shape}, \
                {"bins": bins, "min": lo, "max": hi}, i * 31 + j, False


CASES = {"baddbmm.out": _baddbmm_cases, "addmv.default": _addmv_cases, "histc.default": _histc_cases,
         "scatter_reduce.two_out": _scatter_reduce_cases, "index_reduce.default": _index_reduce_cases,
         "searchsorted.Tensor": _searchsorted_cases, "_addmm_activation.default": _addmm_activation_cases}
DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.complex64, torch.int64)


def prove_cpu_kernel(op, s):
    """aten's overload against the wrapper's model on every case of its family (CASES) in float32, float64,
    bfloat16, float16, complex64 and int64 (and mixed dtypes), a transposed operand in some, negative and conjugate
    views; outside grad mode, in grad mode with an input requiring grad, under CPU autocast (bfloat16): values,
    dtypes, strides, errors; in-place: self afterwards; out=: outs exact, empty, to resize, transposed, of another
    dtype, out the very self."""
    f = aten(op)
    via, form = s["via"], s["form"]
    names = TENSORS[via]
    t = Tally()
    unstable = []  # cases where aten's own two calls differ: not compared

    def call(mine, args, out=None):
        if form == "out":
            r = cpu_kernel(op, s, args, out) if mine else f(**args, out=out)
            return r
        return cpu_kernel(op, s, args) if mine else f(**args)

    for label, shapes, numbers, seed, transpose in CASES[via]():
        for dtype in DTYPES:
            base = {n: _make(shapes[n], dtype, seed + k) for k, n in enumerate(names)}
            if via == "histc.default" and base["self"].numel() > 8:
                base["self"].view(-1)[:3] = torch.tensor([0.0, 2.0, -2.0]).to(dtype)
            if transpose and base[names[1]].dim() >= 2:
                m = base[names[1]]
                base[names[1]] = m.transpose(-1, -2).contiguous().transpose(-1, -2)
                if seed % 2 and base["self"].dim() >= 2:  # a strided self (in place: computed in its layout)
                    base["self"] = base["self"].transpose(-1, -2).contiguous().transpose(-1, -2)
            variants = [("", lambda b: b)]
            if dtype == torch.float32 and transpose:
                variants.append(("neg view", lambda b: {**b, names[-1]: torch._neg_view(b[names[-1]])}))
            if dtype == torch.complex64 and transpose:
                variants.append(("conj view", lambda b: {**b, names[-1]: b[names[-1]].conj()}))
            for vlabel, make in variants:
                for grad in (False, True):
                    if grad and dtype != torch.float64:
                        continue
                    for autocast in (False, True):
                        if autocast and (grad or dtype != torch.float32):
                            continue

                        def one(mine, make=make, grad=grad, autocast=autocast):
                            b = make({k: v.clone() for k, v in base.items()})
                            if grad:
                                b["self"] = b["self"].requires_grad_()
                            args = {**b, **numbers}
                            ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else _Null()
                            with torch.set_grad_enabled(grad), ctx:
                                if form == "inplace":
                                    sl = args["self"] = b["self"] if grad else b["self"].clone()
                                    r = call(mine, args)
                                    return r.detach(), tuple(sl.stride()), r is sl
                                if form == "out":
                                    return _outs(mine, call, args, dtype, _functional(op))
                                r = call(mine, args)
                                return r.detach(), tuple(r.stride()), None

                        if _unset(via, numbers, dtype, autocast):
                            unstable.append(label)
                            continue
                        if form == "out":
                            want = run(lambda: one(False))
                            again = run(lambda: one(False))
                            if want[0] == "ok" and again[0] == "ok" and not all(
                                    same(w1, a1) for (_, w1, _), (_, a1, _) in zip(want[1], again[1])):
                                unstable.append(label)
                                continue
                            got = outcome(lambda: one(True))
                            if want[0] == "ok" and got[0] == "ok":
                                for (kind, w1, w2), (_, g1, g2) in zip(want[1], got[1]):
                                    t.compare(f"{label} {dtype} {vlabel} grad {grad} out {kind}", w1, g1, w2, g2)
                            else:
                                t.compare(f"{label} {dtype} {vlabel} grad {grad} out", want, got)
                            continue
                        want = run(lambda: one(False))
                        again = run(lambda: one(False))
                        w = (want[0], want[1][0]) if want[0] == "ok" else want
                        if not same(w, (again[0], again[1][0]) if again[0] == "ok" else again):
                            unstable.append(label)  # aten differs from itself (bf16 beta=alpha=0: unset memory)
                            continue
                        got = outcome(lambda: one(True))
                        g = (got[0], got[1][0]) if got[0] == "ok" else got
                        t.compare(f"{label} {dtype} {vlabel} grad {grad} autocast {autocast}", w, g,
                                  want[1][1:] if want[0] == "ok" else None, got[1][1:] if got[0] == "ok" else None)
    report = t.report()
    report["aten_unstable"] = len(unstable)
    return report


def _unset(via, numbers, dtype, autocast):
    """Does aten's result hold memory it never wrote? bfloat16 and half baddbmm (autocast's too) with beta 0 and
    alpha 0 takes mkldnn's path, which leaves the output unset: two aten calls differ, or agree by chance, so the
    case is not compared whatever a pair of calls shows."""
    reduced = autocast or dtype in (torch.bfloat16, torch.float16)
    return via == "baddbmm.out" and reduced and numbers.get("beta") == 0 and numbers.get("alpha") == 0


def _functional(op):
    """An out= overload's functional one: x.out -> x.default, x.y_out -> x.y."""
    name, _, overload = op.partition(".")
    return f"{name}.default" if overload == "out" else f"{name}.{overload.removesuffix('_out')}"


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _outs(mine, call, args, dtype, functional):
    """Each out kind's (kind, outcome, what out is left as): outs exact, empty, to resize, transposed, of another
    dtype, and out the very self where the shapes allow."""
    probe = run(lambda: aten(functional)(**args))
    shape = tuple(probe[1].shape) if probe[0] == "ok" else (2, 2)
    kinds = [("exact", lambda: torch.empty(shape, dtype=dtype)), ("empty", lambda: torch.empty(0, dtype=dtype)),
             ("resized", lambda: torch.zeros(7, dtype=dtype)),
             ("other dtype", lambda: torch.zeros(shape, dtype=torch.float64 if dtype != torch.float64
                                                 else torch.float32))]
    if len(shape) >= 2:
        kinds.append(("transposed", lambda: torch.zeros(tuple(reversed(shape)), dtype=dtype).transpose(0, -1)))
    if tuple(args["self"].shape) == shape:
        kinds.append(("self", None))
    results = []
    for kind, make in kinds:
        a = dict(args)
        if make is None:
            a["self"] = o = args["self"].detach().clone()
        else:
            o = make()
        r = observed(lambda: call(mine, a, o), o)
        results.append((kind, r[0], r[1]))
    return results


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_cpu_kernel,)}
