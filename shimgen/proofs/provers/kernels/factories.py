"""The provers of the factories (shimgen/generate/routes/kernels/factories.py): kernels `range_out`, `full_out`,
`scalar_full` (and `item_numbers` rows over out= overloads: the factories' out= forms as the generated wrapper
computes them, range_out by the range kernels' mirror, kernels/ranges.py), `fill_diagonal`, `scatter_value_reduce`
and `index_add_one`.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import (DTYPES, in_range, natural_tensor, number_tensor, observed, overlaps, prover_module,
                           requires_grad_proxy, sample)
from worker_common import ATEN_RAISES, Refused, aten, outcome, run, same, weights

ranges = prover_module("ranges")  # range_out computes as the range factories do: their mirror


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
    result = ranges.range_select(bool(rule.get("inclusive")), v.get("start", 0), v["end"], v.get("step", 1),
                                 out.dtype, device=out.device)
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
    if not ranges.range_same(want[0], got[0]):
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
        for label, v in ranges.range_samples(s):
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
                            if not ranges.range_same(want, mine) and not wrong:
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


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_factory, prove_fill_diagonal, prove_scatter_value_reduce, prove_index_add)}
