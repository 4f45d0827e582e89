"""The samples runner of `shimgen --verify`, run as `python -m shimgen.verify.runner SPEC.json` so that a crash
in a wrapper is reported instead of killing shimgen.

It loads the overlay library (RTLD_GLOBAL) and the round-trip extension, then runs every op's samples on
torch.ops.aten and torch.ops.shimgen_roundtrip and compares them. It writes one JSON object per line to its
standard output (the descriptor it was started with; libtorch's own output goes to stderr):
  {"event": "start", "op": ...}   before an op's first sample
  {"event": "sample", "op": ..., "label": ...}   before each sample (the last one names a crash's culprit)
  {"event": "done", "op": ..., "passed": n, "total": n, "errors": n, "failures": [...]}
  {"event": "end"}
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import re
import sys
import warnings
from typing import Any, Callable

MAX_FAILURES = 5  # failure messages reported per op
VERBOSE = bool(os.environ.get("SHIMGEN_VERIFY_VERBOSE"))  # log every sample's outcome to runner.log


def _emit(stream, **event: Any) -> None:
    stream.write(json.dumps(event) + "\n")
    stream.flush()


# ---- calling -----------------------------------------------------------------------------------------------


def _as_boxed(arg: dict, v: Any, shimgen_definition: bool = False) -> Any:
    """The value as the round-trip op's schema carries it (a Scalar arrives as a float): aten gets the same.

    shimgen's own C shim definitions pass a Scalar equal to an integral schema default as that integer default
    (conversion table: Scalar `aten_default`); aten then gets the integer too."""
    if v is None or not arg["box_schema"].startswith("float") or arg["type"].startswith("float"):
        return v
    if isinstance(v, list):
        return [float(x) for x in v]
    if shimgen_definition and _int_default(arg) is not None and float(v) == _int_default(arg):
        return _int_default(arg)
    return float(v)


def _int_default(arg: dict) -> int | None:
    default = arg.get("default")
    return int(default) if isinstance(default, str) and re.fullmatch(r"-?\d+", default) else None


def _lossy_default(arg: dict) -> bool:
    """A Scalar default the round-trip schema carries as a float: pass it explicitly, so aten sees the value the
    wrapper does (for libtorch's own C shims, which pass the double)."""
    return arg["box_schema"] == "float" and arg["type"] != "float" and arg["default"] not in (None, "None")


def _returns_as_boxed(op: dict, result: Any) -> Any:
    """aten's result as the round-trip schema carries it (a Scalar return arrives as a float)."""
    rets = op["returns"]
    if len(rets) == 1:
        return _as_boxed(rets[0], result)
    if isinstance(result, (tuple, list)) and len(result) == len(rets):
        return type(result)(_as_boxed(r, v) for r, v in zip(rets, result))
    return result


def call(fn: Callable, op: dict, values: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Call fn with the sample's values (built afresh for each call): positional arguments in order while none
    is omitted, the rest by keyword. Returns (result, the values passed) so aliasing and mutation can be
    checked. The default generator is seeded first, so random ops (randn, dropout) draw the same values on both."""
    import torch

    from shimgen.verify.samples import OMIT

    passed: dict[str, Any] = {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    shimgen_definition = op["route"] != "shim"  # "shim": libtorch's own C shim definition runs
    for a in op["args"]:
        v = values.get(a["name"], OMIT)
        if v is OMIT and not shimgen_definition and _lossy_default(a):
            v = float(a["default"])  # aten's own default would be an int Scalar; libtorch's shim passes a double
        if v is OMIT:
            positional = False
            continue
        v = _as_boxed(a, v, shimgen_definition)
        passed[a["name"]] = v
        if positional and not a["kwarg_only"]:
            args.append(v)
        else:
            positional = False
            kwargs[a["name"]] = v
    torch.manual_seed(0)
    return fn(*args, **kwargs), passed


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


def _storage(t: Any) -> int:
    return t.untyped_storage()._cdata


def alias_pattern(result: Any, passed: dict[str, Any]) -> list[str]:
    """For each returned tensor, which inputs it is (`is`) or shares storage with (`view`)."""
    inputs = [(p, t) for name, v in passed.items() for p, t in _flat_tensors(v, name)]
    pattern = []
    for path, out in _flat_tensors(result, "result"):
        rel = []
        for ipath, inp in inputs:
            if out is inp:
                rel.append(f"{path} is {ipath}")
            elif _storage(out) == _storage(inp):
                rel.append(f"{path} views {ipath}")
        pattern.append(";".join(rel) or f"{path} is new")
    return pattern


def diff(expected: Any, actual: Any, path: str, values: bool = True) -> str | None:
    """None when equal: same type, tensors with equal dtype, shape, strides, device, layout and values."""
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{path}: expected a tensor, got {type(actual).__name__}"
        for what in ("dtype", "shape", "device", "layout"):
            if getattr(expected, what) != getattr(actual, what):
                return f"{path}: {what} {getattr(actual, what)} != aten's {getattr(expected, what)}"
        if expected.numel() > 1 and expected.stride() != actual.stride():
            return f"{path}: strides {actual.stride()} != aten's {expected.stride()}"
        if not values or any(n < 0 for n in expected.shape):  # aten's full.out makes such shapes: no values
            return None
        if expected.dtype.is_floating_point or expected.dtype.is_complex:
            same = torch.allclose(expected, actual, equal_nan=True)
        else:
            same = torch.equal(expected, actual)
        return None if same else f"{path}: values differ from aten's"
    if isinstance(expected, torch.Generator):  # same state after the call: the same numbers were drawn
        if not isinstance(actual, torch.Generator) or not torch.equal(expected.get_state(), actual.get_state()):
            return f"{path}: generator state differs from aten's"
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return f"{path}: expected a sequence of {len(expected)}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = diff(e, a, f"{path}[{i}]", values)
            if d:
                return d
        return None
    if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{path}: {actual!r} != aten's {expected!r}"
    return None


def _message(e: BaseException) -> str:
    return " ".join(str(e).split())


_PY_TYPE = re.compile(r"\btorch\.(cuda\.)?(sparse\.)?(\w+)Tensor\b")
_CPP_TYPE = re.compile(r"\b(?:Variable\[)?(Sparse)?(CPU|CUDA)(\w+)Type\]?")


def _normalize(message: str) -> str:
    """The message with tensor type names spelled one way: torch's Python error translation (processErrorMsg)
    turns `CPUFloatType` into `torch.FloatTensor` in errors raised by aten's own kernels, not in errors that
    reach Python through the stable ABI."""
    message = _PY_TYPE.sub(lambda m: f"{'Sparse' if m[2] else ''}{'CUDA' if m[1] else 'CPU'}{m[3]}Type", message)
    return _CPP_TYPE.sub(lambda m: f"{m[1] or ''}{m[2]}{m[3]}Type", message)


def check(op: dict, aten: Callable, rt: Callable, make: Callable[[], dict], compare_values: bool) -> tuple[
    str | None, bool
]:
    """Run one sample on both; (failure message or None, whether aten raised)."""
    try:
        expected, exp_passed = call(aten, op, make())
        aten_error = None
    except Exception as e:  # noqa: BLE001 - any libtorch error is an expected outcome to reproduce
        aten_error = e
    try:
        actual, act_passed = call(rt, op, make())
        rt_error = None
    except Exception as e:  # noqa: BLE001
        rt_error = e
    if aten_error is not None:
        if rt_error is None:
            return f"aten raised {type(aten_error).__name__}({_message(aten_error)!r}); the wrapper returned", True
        if not isinstance(rt_error, RuntimeError):
            return f"expected RuntimeError, got {type(rt_error).__name__}: {_message(rt_error)}", True
        want = _message(aten_error)
        # Below 2.13 a stable extension cannot read libtorch's message (spec "error_text": false): it raised.
        if op.get("error_text", True) and _normalize(want) not in _normalize(_message(rt_error)):
            return f"error message {_message(rt_error)!r} lacks aten's {want!r}", True
        return None, True
    if rt_error is not None:
        return f"aten returned; the wrapper raised {type(rt_error).__name__}: {_message(rt_error)}", False
    expected = _returns_as_boxed(op, expected)
    d = diff(expected, actual, "result", compare_values)
    if d:
        return d, False
    for name in exp_passed:  # arguments after the call: mutated ones (self, out=) must match, others unchanged
        d = diff(exp_passed[name], act_passed[name], f"argument {name} after the call", compare_values)
        if d:
            return d, False
    e_alias, a_alias = alias_pattern(expected, exp_passed), alias_pattern(actual, act_passed)
    if e_alias != a_alias:
        return f"aliasing {a_alias} != aten's {e_alias}", False
    return None, False


# ---- ops ---------------------------------------------------------------------------------------------------


def run_op(op: dict, stream) -> dict:
    import torch

    from shimgen.verify import samples, targeted

    result = {"event": "done", "op": op["op"], "passed": 0, "total": 0, "errors": 0, "failures": []}
    op, adapt_rt = targeted.adapt(op)  # a variant that takes fewer arguments; a target that cannot carry lists
    rt = adapt_rt(getattr(getattr(torch.ops.shimgen_roundtrip, op["name"]), op["overload"]))
    missing = targeted.absent(torch, op)  # the yaml's op may not exist in the running torch
    if missing is not None:
        return {**result, "absent": missing, "wrapper_error": targeted.wrapper_error(rt, op, samples, call)}
    ov = samples.override_for(op)
    aten = getattr(getattr(torch.ops.aten, op["name"]), op["overload"])
    functional = None
    if op.get("functional"):
        fname, _, fover = op["functional"].partition(".")
        functional = targeted.aten_overload(torch, fname, fover)
    try:
        cases = samples.generate(op, functional)
    except samples.NoSample as e:
        result["failures"].append(str(e))
        return result
    except Exception as e:  # noqa: BLE001 - e.g. an override expression that fails for one dtype
        result["failures"].append(f"making the samples failed: {type(e).__name__}: {_message(e)}")
        return result
    ran_ok = 0
    for s in cases:
        _emit(stream, event="sample", op=op["op"], label=s.label)
        result["total"] += 1
        try:
            failure, raised = check(op, aten, rt, s.make, ov.get("values", True) and s.values)
        except Exception as e:  # noqa: BLE001 - comparing failed: report it against the sample
            failure, raised = f"comparing the results failed: {type(e).__name__}: {_message(e)}", False
        if VERBOSE:
            print(f"[{op['op']}] {s.label}: {failure or ('ok, raised' if raised else 'ok')}", file=sys.stderr)
        if failure is None:
            result["passed"] += 1
            result["errors"] += raised
            ran_ok += not raised
        elif len(result["failures"]) < MAX_FAILURES:
            result["failures"].append(f"{s.label}: {failure}")
    if ran_ok == 0:
        result["failures"].append("no sample ran without error (add values to data/verify_samples.yaml)")
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        spec = json.load(f)
    skip = set(argv[1].split(",")) if len(argv) > 1 and argv[1] else set()
    # Results go to the descriptor we were started with; anything else printing to stdout goes to stderr.
    stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    import torch

    if spec.get("overlay"):
        ctypes.CDLL(spec["overlay"], mode=ctypes.RTLD_GLOBAL)
    torch.ops.load_library(spec["roundtrip"])
    for op in spec["ops"]:
        if op["op"] in skip:
            continue
        _emit(stream, event="start", op=op["op"])
        _emit(stream, **run_op(op, stream))
    _emit(stream, event="end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
