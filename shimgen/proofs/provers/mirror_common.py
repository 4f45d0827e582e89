"""What the kernels' prover modules (kernels/<entry module>.py beside this file) share, run like them by each
runtime's own interpreter, which imports torch but not shimgen: the samples several hooks try, scalar.h's number
conversions, checks and in-place/out= assignments mirrored step by step (each used by more than one family of
kernels), and `prover_module`, which loads a prover module by its path (the compositions worker, for the module a
row's spec names; a prover module, for another's mirror).

Each prover module is paired by file name with its registry entry module (shimgen/generate/routes/kernels/<name>.py,
whose entries' prover_spec names its hooks) and declares the hooks it offers (`PROVERS`) and, where its hooks look
one up by the spec's `mirror`, its Python mirrors of scalar.h's selects (`MIRRORS`)."""

import ctypes
import ctypes.util
import importlib.util
import math
import os
import sys

import torch

from worker_common import ATEN_RAISES, Refused, aten, outcome

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")


def prover_module(name):
    """kernels/<name>.py, loaded by its path once. It is imported as `kernel_prover_<name>`, never by its file name
    from a folder on sys.path: `select` is the standard library's."""
    key = f"kernel_prover_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, os.path.join(KERNELS, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


# ---- the samples the kernels' hooks share: dtypes, shapes and numbers of the elementwise kernels, a tensor of a shape
# and dtype (inf, nan, -0.0 among its values), the arguments of the ops with an index or a sorted sequence ----

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool, torch.complex64, torch.uint16]
SHAPES = [((5, 7), (5, 7)), ((5, 7), ()), ((), (3,)), ((2, 1), (1, 3)), ((0,), (0,)), ((3,), (2, 3)), ((), (4,)), ((4,), ())]
NUMBERS = [0, 1, -1, 0.5, 0.1, -2.5, 3, 1e-3, 1e10, 1e300, float("inf"), float("nan"), 2**40, True]
FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


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


def nan_free(t):
    """t without NaN (inf, -0.0 kept): a backward kernel refuses a NaN self, so these samples reach its vectorized
    body."""
    return t.nan_to_num(0.25, float("inf"), float("-inf")) if t.is_floating_point() else t


# the dtypes the rows over ops with an index or a sorted sequence are tried in
INDEXED_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool,
                  torch.complex64]


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
    if s["samples"] == "quantile":  # quantile's out= forms: q a number (`.scalar_out`) or a tensor of self's dtype
        cases = [((7,), None, False, "linear"), ((3, 4), 1, False, "midpoint"), ((3, 4), 0, True, "lower"),
                 ((), None, False, "nearest"), ((2, 3, 4), -1, False, "higher"), ((0,), None, False, "linear"),
                 ((3, 4), 2, False, "linear"), ((5,), 0, True, "Linear")]
        for k, (shape, dim, keepdim, mode) in enumerate(cases):
            for q in (0.3, 1.0, [0.1, 0.5, 0.9], 1.5):
                if s["types"]["q"] == "float" and isinstance(q, list):
                    continue
                out.append((f"{d} {shape} q={q} {dim} {keepdim} {mode}", lambda shape=shape, dim=dim, keepdim=keepdim,
                            mode=mode, q=q, k=k: {
                                "self": sample(shape, d, k),
                                "q": q if s["types"]["q"] == "float" else torch.tensor(q, dtype=d),
                                "dim": dim, "keepdim": keepdim, "interpolation": mode}))
        return out
    if s["samples"] == "matrix_norm_str":  # linalg_matrix_norm and linalg_norm with an ord string, out=
        cases = [((3, 4), "fro", [-2, -1], False), ((3, 4), "nuc", [0, 1], True), ((2, 3, 4), "fro", [2, 0], False),
                 ((2, 3, 4), "nuc", [1, 2], False), ((5,), "fro", [0], False), ((3, 4), "inf", [0, 1], False),
                 ((0, 3), "nuc", [0, 1], False), ((3, 4), "fro", None, True)]
        for k, (shape, ord, dim, keepdim) in enumerate(cases):
            if dim is None and s["types"]["dim"] == "int[]":
                continue  # linalg_matrix_norm's dim is not optional
            out.append((f"{d} {shape} {ord!r} {dim} {keepdim}", lambda shape=shape, ord=ord, dim=dim, keepdim=keepdim,
                        k=k: {"self": sample(shape, d, k).nan_to_num(0.0, 7.0, -7.0) if d.is_floating_point or
                              d.is_complex else sample(shape, d, k), "ord": ord, "dim": dim, "keepdim": keepdim,
                              "dtype": None}))
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



# ---- scalar.h's numbers: in a dtype's range, as a 0-dim tensor of a dtype or of its own type, a wrapped number's dtype
# ----

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


def natural_tensor(n):
    """scalar.h's number_tensor(n, natural_type(n)): a 0-dim tensor of the number's own type."""
    dtype = (torch.bool if isinstance(n, bool) else torch.int64 if isinstance(n, int) else
             torch.complex128 if isinstance(n, complex) else torch.float64)
    return torch.tensor(n, dtype=dtype)


def wrapped_dtype(n):
    """The dtype aten gives a wrapped number in type promotion."""
    if isinstance(n, bool):
        return torch.bool
    if isinstance(n, int):
        return torch.int64
    d = torch.get_default_dtype()
    return d if isinstance(n, float) else {torch.float32: torch.complex64, torch.float64: torch.complex128}[d]



# ---- scalar.h's checks of operands and results: broadcasting, casts, memory shared, autograd ----

def check_broadcast(a, b):
    """scalar.h's check_broadcast: aten's infer_size over (a, b), with its message."""
    n = max(a.dim(), b.dim())
    for i in range(n - 1, -1, -1):
        da, db = a.dim() - n + i, b.dim() - n + i
        sa, sb = a.shape[da] if da >= 0 else 1, b.shape[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")


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


def overlaps(a, b):
    sa, sb = byte_span(a), byte_span(b)
    return sa is not None and sb is not None and sa[0] < sb[1] and sb[0] < sa[1]


def requires_grad_proxy(t):
    """scalar.h's requires_grad_in_grad_mode: an alias of a tensor requiring grad is a recorded view."""
    return not aten("is_leaf")(aten("alias")(t))


def refuse_backward(raises, selves, values):
    """A call autograd records (grad mode, a self not a leaf) whose backward aten raises for: always (True), or
    where the number `raises` names is negative or NaN (not >= 0): refused."""
    if not raises or not torch.is_grad_enabled() or all(t.is_leaf for t in selves):
        return
    if raises is True or not float(values[raises]) >= 0:
        raise Refused("backward")



# ---- in-place and out= results as the generated wrappers assign them (scalar.h's assign_inplace, check_out_autograd
# and assign_out), and what an out= call leaves ----

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


# ---- the number a row names (`value`), and the helpers a row's `otherwise` names, by name ----


def is_value(r, n):
    """Is the number the rule's value (an int or a double equal to it; a bool is neither)?"""
    return (type(n) is int and n == int(r["value"])) or (type(n) is float and n == float(r["value"]))


def _libm_pow(dtype):
    """libm's pow of the accumulate type (powf for float32), which aten's NormOps calls (std::pow) and the C++ too."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fn, c = (libm.powf, ctypes.c_float) if dtype == torch.float32 else (libm.pow, ctypes.c_double)
    fn.restype, fn.argtypes = c, [c, c]
    return lambda a, b: torch.tensor(fn(float(a), float(b)), dtype=dtype)


def vector_norm_cpu(v, argument):
    """cxx/kernels/vector_norm_cpu.h: a real ord on a contiguous floating CPU tensor outside autograd, as aten's
    CPU kernel accumulates it (each output's elements one at a time in memory order, in the accumulate type: 0-dim
    tensors here, so each step is rounded as the C++ rounds it; another ord's |x| ** p and the root by libm's pow, as
    the C++ and aten call it), |x| where every reduced dim has size 1; the rest refused. The samples stay below aten's
    grain of 32768, where no output is split among threads."""
    n, x = v[argument], v["self"]
    if isinstance(n, complex) or x.device.type != "cpu" or not x.dtype.is_floating_point:
        raise Refused("number")
    p = float(n)
    kind = {0.0: 0, 1.0: 1, float("inf"): 2, -float("inf"): 3}.get(p, 4)
    into = v.get("dtype") or x.dtype  # the result's dtype: the tensor's or a wider one, read as it first
    narrow = x.dtype in (torch.bfloat16, torch.float16)
    if into != x.dtype and not (into == torch.float64 or (into == torch.float32 and narrow)):
        raise Refused("dtype")
    acc_dtype = torch.float64 if into == torch.float64 else torch.float32  # float for bfloat16 and float16
    x = x.resolve_neg()
    if not x.is_contiguous() or x.numel() == 0:
        raise Refused("layout")
    dim, nd = v.get("dim"), x.dim()
    reduced = list(range(nd))
    if dim:
        wrapped = [d + nd if d < 0 else d for d in dim]
        if any(not 0 <= d < nd for d in wrapped) or len(set(wrapped)) != len(wrapped):
            raise Refused("dim")
        reduced = sorted(wrapped)
    if torch.is_grad_enabled() and x.requires_grad:
        raise Refused("autograd")
    kept = [d for d in range(x.dim()) if d not in reduced]
    outputs = torch.Size([x.shape[d] for d in kept]).numel()
    rows = x.permute(kept + reduced).reshape(outputs, -1).to(acc_dtype)
    if kind == 4 and rows.shape[1] == 1:
        kind = 1  # every reduced dim of size 1: aten's |x|
    pow_ = _libm_pow(acc_dtype)
    p_t = torch.tensor(p, dtype=acc_dtype)
    root = torch.tensor(1.0, dtype=acc_dtype) / p_t
    out = []
    for row in rows:
        acc = torch.tensor(float("inf") if kind == 3 else 0.0, dtype=acc_dtype)
        for e in row:
            a = e.abs()
            if kind == 0:
                acc = acc + (0.0 if e == 0 else 1.0)
            elif kind == 1:
                acc = acc + a
            elif kind == 4:
                acc = acc + pow_(a, p_t)
            elif a.isnan() or (acc < a if kind == 2 else a < acc):
                acc = a
        out.append(pow_(acc, root) if kind == 4 else acc)
    shape = [1 if d in reduced else x.shape[d] for d in range(x.dim())] if v.get("keepdim") else \
        [x.shape[d] for d in kept]
    return torch.stack(out).reshape(shape).contiguous().to(into)  # bfloat16, float16: rounded from float


OTHERWISE = {f.__name__: f for f in (vector_norm_cpu,)}
