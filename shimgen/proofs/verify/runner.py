"""The samples runner of `shimgen --verify`: `python -m shimgen.proofs.verify.runner SPEC.json`, driven by runner_client.

The process loads torch, the overlay library (RTLD_GLOBAL), the round-trip extension and the recorded samples once,
runs nothing itself, and forks one child per op (a command on stdin: {"op": index, "start": k, "exact": n}), so an
op that crashes, hangs or eats memory takes only its child with it. The child runs the op's samples from sample k on
torch.ops.aten and on the round-trip op, and writes one JSON line per sample to the descriptor the process was
started with (libtorch's own output goes to stderr). It publishes the sample and phase it is in through a shared
page; the parent kills it past the time limits and reports where it died:

  {"e": "plan", "op": i, "n": samples known so far, "recorded": r}
  {"e": "s", "op": i, "k": k, "o": outcome, "src": source, ["m": message, "l": label]}
  {"e": "note", "op": i, "status": "absent"|"unrunnable"|"nosample", "m": reason}
  {"e": "exit", "op": i, "how": "done"|"crash"|"timeout", "k": k, "phase": phase, "m": detail}

Outcomes of a sample (the verifier's categories, plus what an input can make aten do):
  exact      aten returned; the wrapper returned the same (values, dtype, shape, strides, aliasing, mutations)
  refused    the wrapper raised an error naming the limitation (`shimgen: ...`) before calling aten: where aten
             returned, or raised an error of its own (a Scalar the route cannot carry, on a bad input)
  wrong      anything else that differs (a failure); `cause: scalar` when aten given the values the round-trip
             boxing hands the wrapper behaves exactly as the wrapper did (the Scalar boxing is the difference)
  error      aten raised; the wrapper raised the same error (an error path reproduced), or, on the sibling
             route, the sibling's own wording of it
  unreached  the round-trip op has no kernel for the input's backend (a nested tensor): the wrapper was not called
  nondeterministic
             both returned; aten's own values differ between runs on the same input (a kernel whose result
             depends on its buffers' addresses, or uninitialised memory) and the wrapper's dtype, shape,
             strides and aliasing agree: the values prove nothing (never exact, never wrong)
  aten-fails aten itself crashed or hung on the input: not the wrapper's failure (a wrapper that crashes or
             hangs where aten raised an error is `wrong`: it should have raised the same error)
"""

from __future__ import annotations

import ctypes
import json
import math
import mmap
import os
import re
import select
import struct
import sys
import time
import warnings
from typing import Any, Callable

from shimgen.base.process import exit_now

PHASES = ("setup", "aten", "wrapper", "wrapper (aten raised)", "compare", "aten with the boxed values")
SETUP, ATEN, WRAPPER, WRAPPER_AFTER_ERROR, COMPARE, ATEN_BOXED = range(6)
REFUSAL_PREFIX = "shimgen: "  # run-time errors generated C++ raises for a limitation start with it
MAX_MESSAGE = 300


class Child:
    """What a forked child writes: events on the result descriptor, its position in the shared page."""

    def __init__(self, fd: int, page: mmap.mmap, op_index: int) -> None:
        self.fd, self.page, self.op = fd, page, op_index

    def emit(self, **event: Any) -> None:
        os.write(self.fd, (json.dumps({**event, "op": self.op}) + "\n").encode())

    def at(self, k: int, phase: int) -> None:
        struct.pack_into("ii", self.page, 0, k, phase)


# ---- what each side gets ----------------------------------------------------------------------------------


class NotBoxable(Exception):
    """The round-trip schema cannot carry the caller's value (the C++ parameter type cannot hold it)."""


def box(arg: dict, v: Any) -> Any:
    """The caller's value as the round-trip op's schema carries it to the wrapper. This is the one place that
    knows how a type is boxed. A `Scalar` travels losslessly, as a 0-dim tensor of the number's own dtype
    (`box_schema: Tensor`; the kernel reads it back into a shimgen::Scalar), so the wrapper gets the very int,
    bool, float or complex the caller wrote; a `Scalar[]` (`box_schema: float[]`) as doubles, as its C++
    parameter type says. aten always gets the caller's own value."""
    if v is None:
        return v
    if _boxed_as_tensor(arg):
        return number_tensor(v)
    if arg["box_schema"].rstrip("?") not in ("float", "float[]") or arg["type"].startswith("float"):
        return v
    if isinstance(v, (list, tuple)):
        return [box({**arg, "box_schema": "float"}, x) for x in v]
    if isinstance(v, complex):
        raise NotBoxable(f"{arg['name']}={v!r}: the wrapper's parameter is a double")
    try:
        import torch

        if isinstance(v, torch.Tensor):  # a 0-dim tensor given for a Scalar: aten reads its item
            v = v.item()
            if isinstance(v, complex):
                raise NotBoxable(f"{arg['name']}={v!r}: the wrapper's parameter is a double")
    except ImportError:
        pass
    return float(v)


def _boxed_as_tensor(arg: dict) -> bool:
    return arg["type"].rstrip("?") == "Scalar" and arg["box_schema"].rstrip("?") == "Tensor"


def schema_number(text: str) -> bool | int | float | complex:
    """A number as a schema default spells it (`1`, `-0.5`, `True`, `inf`)."""
    import ast

    if text in ("inf", "-inf", "nan"):
        return float(text)
    value = ast.literal_eval(text)
    if not isinstance(value, (bool, int, float, complex)):
        raise ValueError(f"not a number: {text!r}")
    return value


def number_tensor(v: Any) -> Any:
    """A number (or a 0-dim tensor given for one: aten reads its item) as a 0-dim tensor of its own dtype."""
    import torch

    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, bool):
        return torch.tensor(v, dtype=torch.bool)
    if isinstance(v, int):
        return torch.tensor(v, dtype=torch.int64 if v < 2**63 else torch.uint64)
    if isinstance(v, complex):
        return torch.tensor(v, dtype=torch.complex128)
    return torch.tensor(float(v), dtype=torch.float64)


def unbox_returns(op: dict, result: Any) -> Any:
    """The wrapper's result as the caller gets it: a Scalar return arrives as its 0-dim tensor; read it back."""
    rets = op["returns"]
    scalars = [r["type"] == "Scalar" and r["box_schema"] == "Tensor" for r in rets]
    if not any(scalars):
        return result
    if len(rets) == 1:
        return result.item()
    return type(result)(v.item() if s else v for s, v in zip(scalars, result))


def bind(op: dict, values: dict[str, Any], boxed: bool) -> tuple[list, dict, dict[str, Any]]:
    """(args, kwargs, the values passed by name): positional while none is omitted, the rest by keyword."""
    from shimgen.proofs.verify.samples import OMIT  # start-up order: samples imports torch, which main() imports late

    passed: dict[str, Any] = {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for a in op["args"]:
        v = values.get(a["name"], OMIT)
        if v is OMIT and a["type"].endswith("?") and a["default"] is None and not a["is_out"]:
            v = None  # `T? x` without a default: a C++ caller omits it (`= std::nullopt`), the schema needs None
        # A number with a schema default is `Tensor? x=None` in the round-trip schema (roundtrip.defaulted_number):
        # the wrapper gets aten's default, boxed as a caller's number; the caller passed nothing.
        defaulted = v is OMIT and boxed and _boxed_as_tensor(a) and a["default"] not in (None, "None")
        if defaulted:
            v = schema_number(a["default"])
        if v is OMIT:
            positional = False
            continue
        if not defaulted:
            passed[a["name"]] = v  # the caller's own value (a number stays one)
        if boxed:
            v = box(a, v)
            if not defaulted and a["type"].rstrip("?") != "Scalar":
                passed[a["name"]] = v
        if positional and not a["kwarg_only"]:
            args.append(v)
        else:
            positional = False
            kwargs[a["name"]] = v
    return args, kwargs, passed


def call(fn: Callable, op: dict, values: dict[str, Any], boxed: bool) -> tuple[Any, dict[str, Any]]:
    """Call fn with the sample's values (made afresh for each call). The default generator is seeded first, so
    random ops (randn, dropout) draw the same values on both sides."""
    import torch

    args, kwargs, passed = bind(op, values, boxed)
    torch.default_generator.manual_seed(0)  # not torch.manual_seed: it also queues CUDA seeding (~10 ms)
    result = fn(*args, **kwargs)
    return (unbox_returns(op, result) if boxed else result), passed


# ---- comparing ---------------------------------------------------------------------------------------------


def _flat_tensors(v: Any, path: str) -> list[tuple[str, Any]]:
    import torch

    if isinstance(v, torch.Tensor):
        return [(path, v)]
    if isinstance(v, (list, tuple)):
        out: list[tuple[str, Any]] = []
        for i, x in enumerate(v):
            out += _flat_tensors(x, f"{path}[{i}]")
        return out
    return []


def _storage(t: Any) -> int | None:
    try:
        return t.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):  # sparse, mkldnn, nested: no storage to share
        return None


def alias_pattern(result: Any, passed: dict[str, Any]) -> list[str]:
    """For each returned tensor, which inputs it is (`is`) or shares storage with (`views`)."""
    inputs = [(p, t) for name, v in passed.items() for p, t in _flat_tensors(v, name)]
    pattern = []
    for path, out in _flat_tensors(result, "result"):
        rel = []
        for ipath, inp in inputs:
            if out is inp:
                rel.append(f"{path} is {ipath}")
            elif _storage(out) is not None and _storage(out) == _storage(inp):
                rel.append(f"{path} views {ipath}")
        pattern.append(";".join(rel) or f"{path} is new")
    return pattern


def _same(e: Any, a: Any, values: bool) -> bool:
    if not values or any(n < 0 for n in e.shape):  # aten's full.out makes such shapes: no values
        return True
    return _same_values(e, a)


def _same_values(e: Any, a: Any) -> bool:
    """Exactly equal elements (NaN equals NaN): the wrapper runs aten's own kernel on the same input."""
    import torch

    if e.dtype.is_floating_point or e.dtype.is_complex:
        e_nan, a_nan = torch.isnan(e), torch.isnan(a)
        return bool(torch.equal(e_nan, a_nan) and torch.equal(e[~e_nan], a[~a_nan]))
    return bool(torch.equal(e, a))


def _parts(t: Any) -> tuple[list[tuple[str, Any]], str]:
    """A tensor as plain strided tensors the comparison can read, and what else must match: sparse tensors by
    their index and value tensors (no invariant needed), quantized ones by their integer representation and
    parameters, nested ones by their components, functorch's batched tensors by the tensor they wrap, conjugate
    and negative views by their flags and storage."""
    import torch

    if t.is_nested:
        return [(f"[{i}]", c) for i, c in enumerate(t.unbind())], "nested"
    if torch._C._functorch.is_batchedtensor(t):
        level, bdim = torch._C._functorch.maybe_get_level(t), torch._C._functorch.maybe_get_bdim(t)
        return [("(unwrapped)", torch._C._functorch.get_unwrapped(t))], f"batched level={level} bdim={bdim}"
    if t.is_quantized:
        params = f"{t.qscheme()}"
        if t.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            params += f" scale={t.q_scale()} zero_point={t.q_zero_point()}"
        else:
            params += f" axis={t.q_per_channel_axis()} scales={t.q_per_channel_scales().tolist()}"
            params += f" zero_points={t.q_per_channel_zero_points().tolist()}"
        return [("(int_repr)", t.int_repr())], params
    if t.layout == torch.sparse_coo:
        return [("(indices)", t._indices()), ("(values)", t._values())], f"coalesced={t.is_coalesced()}"
    if t.layout in (torch.sparse_csr, torch.sparse_bsr):
        return [("(crow_indices)", t.crow_indices()), ("(col_indices)", t.col_indices()),
                ("(values)", t.values())], ""
    if t.layout in (torch.sparse_csc, torch.sparse_bsc):
        return [("(ccol_indices)", t.ccol_indices()), ("(row_indices)", t.row_indices()),
                ("(values)", t.values())], ""
    if t.layout != torch.strided:  # mkldnn
        return [("(dense)", t.to_dense())], ""
    if t.is_neg() or t.is_conj():
        flags = f"neg={t.is_neg()} conj={t.is_conj()}"
        raw = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), t.storage_offset(), t.shape, t.stride())
        return [("(storage)", raw)], flags
    if t.dtype == torch.complex32:  # no kernel compares ComplexHalf: compare it widened (exactly)
        return [("", t.to(torch.complex64))], ""
    return [("", t)], ""


def diff(expected: Any, actual: Any, path: str, values: bool | frozenset = True) -> str | None:
    """None when equal: same type, tensors with equal dtype, shape, strides, device, layout and values (all of
    them, none, or all but those at the paths in a frozenset)."""
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{path}: expected a tensor, got {type(actual).__name__}"
        if expected.is_nested or actual.is_nested:
            if expected.is_nested != actual.is_nested:
                return f"{path}: nested {actual.is_nested} != aten's {expected.is_nested}"
            return diff(list(expected.unbind()), list(actual.unbind()), path, values)
        for what in ("dtype", "shape", "device", "layout", "is_quantized"):
            if getattr(expected, what) != getattr(actual, what):
                return f"{path}: {what} {getattr(actual, what)} != aten's {getattr(expected, what)}"
        if expected.layout == torch.strided and expected.numel() > 1 and expected.stride() != actual.stride():
            return f"{path}: strides {actual.stride()} != aten's {expected.stride()}"
        (e_parts, e_params), (a_parts, a_params) = _parts(expected), _parts(actual)
        if e_params != a_params:
            return f"{path}: {a_params} != aten's {e_params}"
        if len(e_parts) != len(a_parts):
            return f"{path}: {len(a_parts)} components != aten's {len(e_parts)}"
        if len(e_parts) == 1 and e_parts[0][1] is expected:  # a plain strided tensor: its values
            # `values` may name the paths whose values aten leaves undefined (verify_samples.yaml `undefined`)
            compare = values if isinstance(values, bool) else path not in values
            return None if _same(expected, actual, compare) else f"{path}: values differ from aten's"
        for (name, e), (_, a) in zip(e_parts, a_parts):
            d = diff(e, a, path + name, values)
            if d:
                return d
        return None
    if isinstance(expected, torch.Generator):  # same state after the call: the same numbers were drawn
        if not isinstance(actual, torch.Generator) or not torch.equal(expected.get_state(), actual.get_state()):
            return f"{path}: generator state differs from aten's"
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return f"{path}: expected a sequence of {len(expected)}, got {_short(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = diff(e, a, f"{path}[{i}]", values)
            if d:
                return d
        return None
    if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{path}: {_short(actual)} != aten's {_short(expected)}"
    return None


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) < 80 else text[:77] + "..."


def _message(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


_FIXED_LIST = re.compile(r"expected a list of \d+ elements, got \d+")
_UNREACHED = re.compile(r"Could not run 'shimgen_roundtrip::")
# no \b before `torch`: the translation also rewrites inside a longer name (MkldnnCPUFloatType ->
# Mkldnntorch.FloatTensor)
_PY_TYPE = re.compile(r"torch\.(cuda\.)?(sparse\.)?(\w+)Tensor\b")
_CPP_TYPE = re.compile(r"\b(?:Variable\[)?(Sparse)?(CPU|CUDA)(\w+)Type\]?")


def _normalize(message: str) -> str:
    """The message with tensor type names spelled one way: torch's Python error translation (processErrorMsg)
    turns `CPUFloatType` into `torch.FloatTensor` in errors raised by aten's own kernels, not in errors that
    reach Python through the stable ABI."""
    message = _PY_TYPE.sub(lambda m: f"{'Sparse' if m[2] else ''}{'CUDA' if m[1] else 'CPU'}{m[3]}Type", message)
    return _CPP_TYPE.sub(lambda m: f"{m[1] or ''}{m[2]}{m[3]}Type", message)


def _same_error(want: BaseException, got: BaseException) -> bool:
    return _normalize(_message(want)) in _normalize(_message(got)) or _normalize(str(want)) in _normalize(str(got))


# What SHIMGEN_CHECK (templates/ops_check.h.j2) raises when libtorch reports a failed call: libtorch's error, not
# a refusal (before 2.13 an extension cannot read libtorch's message, so this is all it says).
LIBTORCH_FAILED = "shimgen: libtorch call failed"


# The stable ABI's own refusal of a value it cannot carry (torch/csrc/stable/stableivalue_conversions.h): a
# ScalarType outside its list (the quantized dtypes quint8, qint8, qint32, ...) raises this, naming the value.
_ABI_REFUSAL = re.compile(r"Not yet supported ScalarType \w+")


def _refusal(error: BaseException) -> bool:
    text = str(error).lstrip()
    if isinstance(error, RuntimeError) and _ABI_REFUSAL.search(text):
        return True
    return isinstance(error, RuntimeError) and text.startswith(REFUSAL_PREFIX) and not text.startswith(LIBTORCH_FAILED)


def _outcome(exp: tuple, act: tuple, values: bool) -> tuple[str, str | None]:
    """(outcome, message) from (result, passed, error) of aten and of the wrapper."""
    (expected, exp_passed, aten_error), (actual, act_passed, rt_error) = exp, act
    if rt_error is not None and _UNREACHED.search(str(rt_error)):
        # The round-trip extension registers its kernels for CompositeExplicitAutograd, which does not cover this
        # input's backend (a nested tensor): the wrapper was never called, so the sample proves nothing either way.
        return "unreached", _message(rt_error)
    if rt_error is not None and _FIXED_LIST.search(str(rt_error)):
        # The round-trip kernel could not hand the list to the wrapper's std::array parameter: no C++ caller can
        # pass this value (it does not compile), so the sample says nothing about the wrapper.
        return ("error", None) if aten_error is not None else ("refused", f"cannot be passed: {_message(rt_error)}")
    if aten_error is not None:
        if rt_error is None:
            return "wrong", f"aten raised {type(aten_error).__name__}({_message(aten_error)!r}); the wrapper returned"
        if not isinstance(rt_error, type(aten_error)) and not isinstance(rt_error, RuntimeError):
            return "wrong", f"aten raised {type(aten_error).__name__}, the wrapper {type(rt_error).__name__}: " \
                            f"{_message(rt_error)}"
        if _refusal(rt_error):  # the number was refused before aten could raise its own error
            return "refused", _message(rt_error)
        if not _same_error(aten_error, rt_error):
            return "wrong", f"error message {_message(rt_error)!r} lacks aten's {_message(aten_error)!r}"
        return "error", _message(aten_error)[:300]  # aten's reason: the report groups unproven ops by it
    if rt_error is not None:
        if isinstance(rt_error, NotBoxable):
            return "refused", f"cannot be passed: {rt_error}"
        if _refusal(rt_error):
            return "refused", _message(rt_error)
        return "wrong", f"aten returned; the wrapper raised {type(rt_error).__name__}: {_message(rt_error)}"
    d = diff(expected, actual, "result", values)
    if d:
        return "wrong", d
    for name in exp_passed:  # tensor arguments after the call: mutated ones (self, out=) must match, others
        if not _flat_tensors(exp_passed[name], name):  # unchanged (other values differ by the boxing only)
            continue
        d = diff(exp_passed[name], act_passed[name], f"argument {name} after the call", values)
        if d:
            return "wrong", d
    e_alias, a_alias = alias_pattern(expected, exp_passed), alias_pattern(actual, act_passed)
    if e_alias != a_alias:
        return "wrong", f"aliasing {a_alias} != aten's {e_alias}"
    return "exact", None


def guard_breach(passed: dict[str, Any]) -> str | None:
    """The argument whose guard values (samples.guarded_overlapping: the buffer around an overlapping out=
    tensor's memory) a call overwrote, or None."""
    from shimgen.proofs.verify.samples import GUARD_ATTR  # start-up order: samples imports torch (see main)

    for name, v in passed.items():
        for path, t in _flat_tensors(v, name):
            n = getattr(t, GUARD_ATTR, None)
            if n is None:
                continue
            import torch

            whole = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (2 * n + 1,), (1,))
            guard = torch.cat([whole[:n], whole[n + 1:]])
            if not bool((guard == torch.full_like(guard, 7)).all()):
                return path
    return None


def _attempt(fn: Callable, op: dict, make: Callable[[], dict], boxed: bool) -> tuple:
    try:
        result, passed = call(fn, op, make(), boxed)
        return result, passed, None
    except Exception as e:  # noqa: BLE001 - any libtorch error is an outcome to compare
        return None, {}, e


def _boxing_changes(op: dict, values: dict[str, Any]) -> bool:
    """Whether the round-trip boxing hands the wrapper something other than what the caller wrote."""
    from shimgen.proofs.verify.samples import OMIT  # start-up order: samples imports torch, which main() imports late

    for a in op["args"]:
        if values.get(a["name"], OMIT) is not OMIT:
            v = values[a["name"]]
            try:
                b = box(a, v)
            except NotBoxable:
                return True
            if b is not v and not (type(b) is type(v) and b == v):
                return True
    return False


# aten's extra runs (only where the wrapper differed) before its values count as defined, within a time budget
# (the sample limit is 20 s). Measured on MKL's gelsy (linalg_lstsq float32 2x3), the wrapper calling aten itself:
# 26 of 300 samples wrong with 3 scribbled reruns, 2 of 600 with 64 scribbled ones, none of 600 with 64 reruns of
# which every other one follows the last with the heap untouched (plain repeated calls give four different values,
# the commonest in 82% of calls).
SELF_AGREEMENT_RUNS = 64
SELF_AGREEMENT_SECONDS = 3.0


def aten_disagrees(op: dict, aten: Callable, make: Callable[[], dict], exp: tuple,
                   at: Callable[[int], None]) -> str | None:
    """What differs when aten, run again on the same values, returns other values than its first run (with the
    same properties); None when every run agrees (or a run raised)."""
    at(ATEN)
    patterns = (1234.5678, 0.0, -7.25e30, 1.0, float("nan"), -1.0)
    keep = []
    try:
        deadline = time.monotonic() + SELF_AGREEMENT_SECONDS
        for i in range(SELF_AGREEMENT_RUNS):
            if i >= 3 and time.monotonic() > deadline:
                return None
            if i % 2:  # every other run as the caller's would go: right after the last, heap untouched
                _scribble_heap(patterns[i // 2 % len(patterns)])
            keep[:] = [_torch_block(i * 13 + 3)] if i % 2 else []  # shift where the next blocks land
            again = _attempt(aten, op, make, boxed=False)
            if again[2] is not None:
                return None
            if _outcome(exp, again, True)[0] == "wrong":
                if _outcome(exp, again, False)[0] != "exact":
                    return None
                return _outcome(exp, again, True)[1]
        return None
    finally:
        del keep
        at(COMPARE)


def _torch_block(n: int) -> Any:
    import torch

    return torch.empty(n, dtype=torch.float32)


def check(op: dict, aten: Callable, rt: Callable, make: Callable[[], dict], values: bool,
          at: Callable[[int], None]) -> tuple[str, str | None, str | None]:
    """Run one sample on both sides; (outcome, message, cause)."""
    at(ATEN)
    exp = _attempt(aten, op, make, boxed=False)
    breach = guard_breach(exp[1])
    if breach:  # aten wrote outside the caller's tensor: the wrapper would corrupt the heap the same way
        return "aten-fails", f"aten writes past the memory of {breach} (it ignores the out= tensor's strides)", None
    at(WRAPPER if exp[2] is None else WRAPPER_AFTER_ERROR)
    act = _attempt(rt, op, make, boxed=True)
    at(COMPARE)
    breach = guard_breach(act[1])
    if breach:
        return "wrong", f"the wrapper writes past the memory of {breach}; aten does not", None
    outcome, message = _outcome(exp, act, values)
    if outcome == "wrong" and exp[2] is not None and act[2] is not None and not op.get("error_text", True):
        outcome, message = "error", None  # built for a release before 2.13: the extension cannot read the text
    if outcome == "wrong" and exp[2] is not None and act[2] is not None and op.get("lowers"):
        # Both raised; the wrapper called the Tensor sibling, whose own check words the same error otherwise
        # (clamp.out's "Found dtype Long but expected Float" is clamp.Tensor_out's "result type Float can't be
        # cast to the desired output type Long"): an error path reproduced, not a value.
        outcome, message = "error", None
    if outcome == "wrong" and values and exp[2] is None and act[2] is None:
        # Does aten agree with itself? More runs, after the freed heap is overwritten with patterns and the
        # allocator's blocks are shifted, show values aten leaves undefined: uninitialised memory, or a kernel
        # whose result depends on its buffers' addresses (MKL's gelsy on float32 differs in its last bits in
        # about half of its calls). Then the wrapper's values prove nothing: the sample is `nondeterministic`
        # when the properties agree (never exact, never wrong), and wrong when they do not.
        again = aten_disagrees(op, aten, make, exp, at)
        if again is not None:
            props, props_message = _outcome(exp, act, False)
            if props == "exact":
                return "nondeterministic", f"aten is not deterministic here: {again}", None
            outcome, message = props, props_message
    if outcome == "wrong" and exp[2] is None and act[2] is None and _boxed_returns(op, exp[0]) is not exp[0]:
        if _outcome((_boxed_returns(op, exp[0]), exp[1], None), act, values)[0] == "exact":
            return outcome, message, "scalar"  # a Scalar return carried as a double (item, _local_scalar_dense)
    if outcome == "wrong" and _mixed_dispatcher_returns(op, exp, act):
        return outcome, message, "mixed returns"
    if outcome != "wrong" or not _boxing_changes(op, make()):
        return outcome, message, None
    at(ATEN_BOXED)  # is the boxing the whole difference? aten given what the wrapper was given
    for integral in (False, True):
        boxed_ref = _attempt(aten, op, lambda: _as_wrapper_sees(op, make(), integral), boxed=False)
        if not isinstance(boxed_ref[2], NotBoxable) and _outcome(boxed_ref, act, values)[0] in ("exact", "error"):
            at(COMPARE)
            return outcome, message, "scalar"
    at(COMPARE)
    return outcome, message, None


def _mixed_dispatcher_returns(op: dict, exp: tuple, act: tuple) -> bool:
    """libtorch's own failure on the dispatcher route: aten returned values of mixed types ((float, int),
    (Tensor, Tensor[]), (Tensor, ..., int)) and torch_call_dispatcher raised a type error converting them (every
    such overload fails so on 2.13, every all-Tensor tuple passes)."""
    kinds = {re.sub(r"\(\w!?\)", "", r["type"]) for r in op["returns"]}
    return (op.get("boxed", False) and len(kinds) > 1 and exp[2] is None and act[2] is not None
            and "torch_call_dispatcher" in str(act[2])
            and re.search(r"Expected \w+ but got \w+|expected (double|int|bool)", str(act[2])) is not None)


def _boxed_returns(op: dict, result: Any) -> Any:
    """aten's result as the round-trip schema carries it back (a Scalar return as a double); the same object
    when nothing changes."""
    rets = op["returns"]
    changed = [r["box_schema"] != r["type"] for r in rets]
    if not any(changed):
        return result
    try:
        if len(rets) == 1:
            return box({"name": "return", "type": rets[0]["type"], "box_schema": rets[0]["box_schema"]}, result)
        return type(result)(box({"name": "return", "type": r["type"], "box_schema": r["box_schema"]}, v)
                            for r, v in zip(rets, result))
    except (NotBoxable, TypeError, ValueError):
        return result


def _scribble_heap(pattern: float = 1234.5678) -> None:
    """Allocate and free blocks of many sizes filled with a pattern, so that memory a kernel leaves unwritten
    reads differently on the next call."""
    import torch

    blocks = []
    for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096, 16384, 32768):
        blocks.append(torch.full((n,), pattern, dtype=torch.float64))
        blocks.append(torch.full((n,), pattern, dtype=torch.float32))
    del blocks


def _as_wrapper_sees(op: dict, values: dict[str, Any], integral: bool) -> dict[str, Any]:
    """The values as boxed for the wrapper; with `integral`, a boxed Scalar that is a whole number as an int
    (shimgen's C shims pass a double equal to an integral schema default as that integer)."""
    from shimgen.proofs.verify.samples import OMIT  # start-up order: samples imports torch, which main() imports late

    out = dict(values)
    for a in op["args"]:
        v = values.get(a["name"], OMIT)
        if v is OMIT:
            continue
        b = box(a, v)
        if integral and isinstance(b, float) and b.is_integer():
            b = int(b)
        out[a["name"]] = b
    return out


# ---- one op, in a forked child ------------------------------------------------------------------------------

CPU_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")
OTHER_CPU_KEYS = ("SparseCPU", "SparseCsrCPU", "QuantizedCPU", "MkldnnCPU", "NestedTensorCPU")


def qualified(op: dict) -> str:
    return "aten::" + op["name"] + ("" if op["overload"] == "default" else "." + op["overload"])


def runnability(op: dict) -> str | None:
    """None when some kernel can run the op on this machine's CPU, else why not (the dispatch keys it has)."""
    import torch

    q = qualified(op)
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    if any(has(q, k) for k in CPU_KEYS) or any(has(q, k) for k in OTHER_CPU_KEYS):
        return None
    if torch._C._dispatch_has_computed_kernel_for_dispatch_key(q, "CPU"):
        return None
    keys = [k for k in ("CUDA", "MPS", "XPU", "HIP", "Meta", "SparseCUDA", "QuantizedCUDA", "NestedTensorCUDA",
                        "MTIA", "HPU", "PrivateUse1") if has(q, k)]
    if keys:
        return f"not runnable on this machine: kernels only for {', '.join(keys)}"
    return "not runnable on this machine: no kernel for a CPU tensor"


def _layout(op: dict) -> str | None:
    """The input layout an op needs when it has no kernel for strided CPU tensors (SparseCPU, QuantizedCPU, ...)."""
    keys = kernel_keys(op)
    if any(k in keys for k in CPU_KEYS):
        return None
    return next((k for k in OTHER_CPU_KEYS if k in keys), None)


def kernel_keys(op: dict) -> list[str]:
    """The CPU-side dispatch keys with a kernel (reported: a SparseCPU-only op needs sparse inputs)."""
    import torch

    q = qualified(op)
    return [k for k in (*CPU_KEYS, *OTHER_CPU_KEYS) if torch._C._dispatch_has_kernel_for_dispatch_key(q, k)]


def reference(op: dict, namespace: str) -> Callable | None:
    """The op in `namespace` (aten), or None when this runtime lacks it."""
    import torch

    try:
        return getattr(getattr(getattr(torch.ops, namespace), op["name"]), op["overload"])
    except (AttributeError, RuntimeError):
        return None


def aten_alone(op: dict, aten: Callable, make: Callable[[], dict], k: int, child: Child) -> None:
    """Run sample k on aten only, twice, with the freed heap scribbled over in between: a crash or hang here is
    aten's own (the client asks for this after the wrapper side crashed or hung on the sample)."""
    import gc

    child.at(k, ATEN)
    _attempt(aten, op, make, boxed=False)
    _scribble_heap()
    _attempt(aten, op, make, boxed=False)
    gc.collect()
    _scribble_heap()
    child.emit(e="checked", k=k)


def run_op(spec: dict, index: int, start: int, exact_before: int, child: Child, recorded: dict,
           aten_only: int | None = None) -> None:
    from shimgen.proofs.verify import devices, samples, targeted  # start-up order: they import torch (see main)

    op = spec["ops"][index]
    child.at(-1, SETUP)
    aten = reference(op, spec.get("reference", "aten"))
    if aten is None:
        import torch

        release = torch.__version__.split("+")[0]
        child.emit(e="note", status="absent", m=f"{qualified(op)} does not exist in torch {release} (not in torch.ops)")
        return
    rt = reference(op, spec.get("roundtrip_ns", "shimgen_roundtrip"))
    if rt is None:
        child.emit(e="note", status="absent", m="the round-trip extension lacks this op")
        return
    # A round-trip extension built for an older target (shimgen.proofs.verify.matrix): its kernel may take fewer
    # arguments, and lists the target's dispatcher cannot carry arrive encoded as tensors.
    op, adapt_rt = targeted.adapt(op)
    rt = adapt_rt(rt)
    import torch

    # In torch.ops (a TorchScript builtin) but not in the dispatcher:
    missing = targeted.absent(torch, op, spec.get("reference", "aten"))
    if missing is not None:
        child.emit(e="note", status="absent", m=missing)
        return
    if spec.get("reference", "aten") == "aten":
        why = runnability(op)
        if why:
            child.emit(e="note", status="unrunnable", m=why)
            return
    functional = reference({**op, "name": op["functional"].partition(".")[0],
                            "overload": op["functional"].partition(".")[2]}, "aten") if op.get("functional") else None
    ov = samples.override_for(op)
    # values compared: all, none (`values: false`), or all but the results aten leaves undefined (`undefined`)
    compare_values = frozenset(ov["undefined"]) if ov.get("undefined") else ov.get("values", True)
    cases = samples.recorded_samples(op, recorded, functional)
    is_aten = spec.get("reference", "aten") == "aten"
    # --device: each sample's tensors move there before either side runs (shimgen.proofs.verify.devices)
    device = torch.device(spec["device"]) if spec.get("device", "cpu") != "cpu" else None
    child.emit(e="plan", n=len(cases), recorded=len(cases), keys=kernel_keys(op) if is_aten else [])
    exact = exact_before
    k = 0
    own_done = False
    while True:
        if k >= len(cases):
            if own_done or (exact > 0 and cases and (aten_only is None or aten_only < len(cases))):
                break
            own_done = True
            try:
                own = samples.generate(op, functional, layout=_layout(op) if is_aten else None)
            except samples.NoSample as e:
                if not cases:
                    child.emit(e="note", status="nosample", m=str(e))
                break
            except Exception as e:  # noqa: BLE001 - e.g. an override expression that fails for one dtype
                child.emit(e="note", status="nosample", m=f"making the samples failed: {type(e).__name__}: "
                                                          f"{_message(e)}")
                break
            cases += own
            child.emit(e="plan", n=len(cases), recorded=len(cases) - len(own))
            continue
        s = cases[k]
        make = s.make if device is None else (lambda s=s: devices.move(s.make(), device))
        if aten_only is not None:
            if k == aten_only:
                aten_alone(op, aten, make, k, child)
                return
        elif k >= start:
            child.at(k, SETUP)
            try:
                outcome, message, cause = check(op, aten, rt, make, compare_values if s.values else False,
                                                lambda phase, k=k: child.at(k, phase))
            except Exception as e:  # noqa: BLE001 - making the values or comparing failed
                outcome, message, cause = "wrong", f"comparing the results failed: {type(e).__name__}: " \
                                                   f"{_message(e)}", None
            event: dict[str, Any] = {"e": "s", "k": k, "o": outcome, "src": s.source}
            if message:
                event.update(m=message, l=s.label[:200])
            if cause:
                event["cause"] = cause
            child.emit(**event)
            exact += outcome == "exact"
        k += 1


# ---- the process --------------------------------------------------------------------------------------------


def _limit_memory(megabytes: int) -> None:
    """Cap the child's address space at what it maps now plus `megabytes`: an op that would eat the machine gets
    an allocation error instead."""
    import resource

    try:
        with open("/proc/self/statm") as f:
            vm_pages = int(f.read().split()[0])
        limit = vm_pages * os.sysconf("SC_PAGE_SIZE") + megabytes * (1 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError, resource.error):
        pass


def _wait(pid: int, page: mmap.mmap, sample_limit: float, op_limit: float) -> tuple[str, int, int, str]:
    """Wait for the child; (how, sample, phase, detail). Kills it past a limit."""
    import signal

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    start = time.monotonic()
    last_k, since = None, start
    try:
        while True:
            if pidfd is not None:
                select.select([pidfd], [], [], 0.25)
            else:
                time.sleep(0.005)
            done, status = os.waitpid(pid, os.WNOHANG)
            k, phase = struct.unpack_from("ii", page, 0)
            if done:
                if os.WIFSIGNALED(status):
                    sig = os.WTERMSIG(status)
                    try:
                        name = signal.Signals(sig).name
                    except ValueError:
                        name = f"signal {sig}"
                    return "crash", k, phase, f"killed by {name}"
                code = os.WEXITSTATUS(status)
                return ("done", k, phase, "") if code == 0 else ("crash", k, phase, f"exit status {code}")
            now = time.monotonic()
            if k != last_k:
                last_k, since = k, now
            over = None
            if now - since > sample_limit:
                over = f"a sample ran past the {sample_limit:g} s limit"
            elif now - start > op_limit:
                over = f"the op ran past its {op_limit:g} s limit"
            if over:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", k, phase, over
    finally:
        if pidfd is not None:
            os.close(pidfd)


def load_recorded(path: str | None) -> dict:
    if not path:
        return {}
    from shimgen.proofs.verify import serial  # start-up order: imported where the recorded calls are read (see main)

    with open(path, "rb") as f:
        data = serial.loads(f.read())
    return data.get("calls", {}) if isinstance(data, dict) else {}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        spec = json.load(f)
    # Results go to the descriptor we were started with; anything else printing to stdout goes to stderr.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    import torch

    torch.set_num_threads(1)
    if spec.get("helper"):
        ctypes.CDLL(spec["helper"]).shimgen_verify_quiet_backtraces()
    for path in spec.get("preload", []):  # Python files that define ops (the tests' fixtures)
        import runpy

        runpy.run_path(path)
    if spec.get("overlay"):
        ctypes.CDLL(spec["overlay"], mode=ctypes.RTLD_GLOBAL)
    if spec.get("roundtrip"):
        torch.ops.load_library(spec["roundtrip"])
    recorded = load_recorded(spec.get("recorded"))
    # Start-up order: samples imports torch, which this process imports only after silencing warnings and
    # redirecting stdout (above); the module's other functions import it where they run, for the same reason.
    from shimgen.proofs.verify import samples

    samples.overrides()  # read once here, not in every child

    limits = spec.get("limits", {})
    sample_limit = float(limits.get("sample_seconds", 20))
    op_limit = float(limits.get("op_seconds", 60))
    memory = int(limits.get("memory_mb", 4096))
    page = mmap.mmap(-1, 8)
    os.write(out_fd, b'{"e": "ready"}\n')
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        index = cmd["op"]
        struct.pack_into("ii", page, 0, -1, SETUP)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _limit_memory(memory)
                run_op(spec, index, cmd.get("start", 0), cmd.get("exact", 0), Child(out_fd, page, index), recorded,
                       cmd.get("aten_only"))
            except BaseException as e:  # noqa: BLE001 - report, never let the child return into the loop
                try:
                    Child(out_fd, page, index).emit(e="note", status="error", m=f"{type(e).__name__}: {_message(e)}")
                except BaseException:  # noqa: BLE001
                    code = 1
            os._exit(code)
        slack = 3 if cmd.get("aten_only") is not None else 1  # aten run alone: only a real hang may count
        how, k, phase, detail = _wait(pid, page, slack * sample_limit, slack * op_limit)
        event = {"e": "exit", "op": index, "how": how, "k": k, "phase": PHASES[phase] if 0 <= phase < 6 else "?",
                 "m": detail}
        os.write(out_fd, (json.dumps(event) + "\n").encode())
    return 0


if __name__ == "__main__":
    exit_now(main())
