"""The provers of kernels `item_scalar`, `first_scalar` (libtorch's aoti_torch_item_<dtype>, called through ctypes)
and `result_type_numbers` (scalar.h's wrapped_numbers_dtype) of shimgen/generate/routes/kernels/item.py.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import DTYPES, wrapped_dtype
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run, same


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


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_item_scalar, prove_result_type_numbers)}
# scalar.h's selects as the hooks call them, named by the spec's `mirror`
MIRRORS = {f.__name__: f for f in (item_scalar_select, first_scalar_select, result_type_numbers_select)}
