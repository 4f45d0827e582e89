"""Run by each runtime's own interpreter (imports torch only): does libtorch's legacy C shim (shim.h, called here
through ctypes exactly as the generated wrapper calls it) give what aten's overload gives, for every overload the
shim serves (its out= and functional forms), on the number cells the route claims?

Reads {overload: {"function", "c_args": [C parameter names], "form": out|functional, "args": [the
overload's argument names], "numbers": [its Scalar argument names], "like": [the tensor whose category the cells
name, and the probe's second input], "probe": the aten op the functional form's result comes from, "cells": {tensor
category: [number kinds]}, "samples": [[shape per tensor argument]]}} on stdin, writes {overload: {"compared": n,
"both_ok": n, "refused": n, "wrong": example or ""}} as JSON.

What is compared: results (dtype, shape, values, NaN where NaN), errors as errors, on the dtypes below and the
numbers the cells admit; the same calls under autocast (bfloat16 and float16: the functional form casts the
operands as autocast's policy does, and must equal aten); float64 inputs that require grad, in grad mode (the shim is an
out= call, which autograd refuses: the route may refuse, never differ) and under no_grad (equal). A refusal (the route's
own `shimgen:` error where aten gives a result) is counted, never a difference."""

import ctypes
import json
import os
import sys

import torch

from worker_common import ATEN_RAISES, Refused, aten, exit_now, outcome, run, same

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
          torch.complex64, torch.bool]
NUMBERS = [1, 0, 2, -3, 2**24, 2**24 + 1, 2**53 + 1, 1.0, 0.5, -2.5, 0.0, 0.1, 1e300, float("inf"), float("nan"),
           True, 1 + 2j]
LIB = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
_get = ctypes.pythonapi.PyCapsule_GetPointer
_get.restype, _get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def handle(t):
    """A new AtenTensorHandle (at::Tensor*) for t, as the stable Tensor holds one."""
    return ctypes.c_void_p(_get(torch._C._aoti.unsafe_alloc_void_ptr_from_tensor(t), None))


def category(dtype):
    if dtype == torch.bool:
        return "bool"
    return "complex" if dtype.is_complex else "floating" if dtype.is_floating_point else "integral"


def kind(n):
    return "bool" if isinstance(n, bool) else "int" if isinstance(n, int) else \
        "float" if isinstance(n, float) else "complex"


def fits_float(n):
    """What the wrapper checks per call (shimgen::detail::fits_float): the float carries the number exactly."""
    if isinstance(n, bool) or isinstance(n, complex):
        return False
    if isinstance(n, int) and abs(n) > 2**53:
        return False
    return float(ctypes.c_float(n).value) == float(n)


def sample(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    if t.numel() > 4:
        t.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -0.0], dtype=torch.float64)
    if dtype == torch.bool:
        return t > 0
    if dtype.is_floating_point or dtype.is_complex:
        return t.to(dtype)
    return t.nan_to_num(0.0, 0.0, 0.0).round().clamp(-9, 9).to(dtype)


def route(spec, values):
    """The generated wrapper's call, step by step."""
    cat = category(values[spec["like"][0]].dtype)
    for name in spec["numbers"]:
        n = values[name]
        if not fits_float(n) or kind(n) not in spec["cells"].get(cat, []):
            raise Refused(name)
    if spec["form"] == "functional":
        # the result's dtype and device as aten's dispatch (autocast included) gives mat1 @ mat2
        a, b = (values[x] for x in spec["like"])
        out = aten(spec["probe"].split("::")[1])(torch.empty((0, 0), dtype=a.dtype, device=a.device),
                         torch.empty((0, 0), dtype=b.dtype, device=b.device))
        if out.dtype != a.dtype:
            # autocast computes the op in out's dtype: the operands cast as its policy casts them (scalar.h
            # autocast_like: floating, not float64, on out's device type)
            values = {k: v.to(out.dtype) if isinstance(v, torch.Tensor) and v.is_floating_point()
                      and v.dtype != torch.float64 and v.device.type == out.device.type else v
                      for k, v in values.items()}
    else:
        out = values["out"]
    fn = getattr(LIB, spec["function"])
    args = []
    for c in spec["c_args"]:
        v = out if c == "out" else values[c]
        args.append(handle(v) if isinstance(v, torch.Tensor) else ctypes.c_float(v))
    fn.restype = ctypes.c_int32
    if fn(*args) != 0:
        # the wrapper's error names the remedy where autograd refused the out= call (an input requires grad)
        if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in values.values()):
            raise Refused("autograd")
        raise RuntimeError(failure_text(spec["function"]))
    return out


def failure_text(function):
    """The message the wrapper throws (ops_check.h's throw_failed_call): from 2.13 libtorch's own text, which must
    be aten's; before, libtorch only logs it and the wrapper names the call, which stands for any error of aten's."""
    what = getattr(LIB, "torch_exception_get_what_without_backtrace", None)
    if what is None:
        return f"shimgen: libtorch call failed: {function} {ATEN_RAISES}"
    what.restype = ctypes.c_char_p
    return what().decode().split("\n")[0]


def call_aten(op, spec, values):
    vals = dict(values)
    if spec["form"] == "out":
        out = vals.pop("out")
        aten(op)(**vals, out=out)
        return out
    return aten(op)(**vals)


def main():
    spec = json.load(sys.stdin)
    report = {}
    for op, s in spec.items():
        tensors = [a for a in s["args"] if a not in s["numbers"]]
        compared = both_ok = refused = 0
        wrong = ""
        cells = {}

        def check(label, values, ctx, grads=False):
            nonlocal compared, both_ok, refused, wrong
            mine = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in values.items()}
            theirs = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in values.items()}
            if grads:
                for d in (mine, theirs):
                    for k in tensors:
                        if k != "out" and d[k].is_floating_point():
                            d[k] = d[k].detach().requires_grad_()
            with ctx():
                want = run(lambda: call_aten(op, s, theirs))
                got = outcome(lambda: route(s, mine))
            compared += 1
            if got[0] == "refused":
                refused += 1
                return
            if want[0] == got[0] == "ok":
                both_ok += 1
            if not same(want, got):
                cells.setdefault(label.split(" ")[0] + " " + kind(values[label.split("=")[0].split(" ")[-1]]) if "=" in label else label, label)
            if not same(want, got) and not wrong:
                wrong = f"{label}: aten {want[0]} {want[1] if want[0] == 'error' else want[1].dtype} vs route " \
                        f"{got[0]} {got[1] if got[0] == 'error' else got[1].dtype}"

        for dtype in DTYPES:
            for k, shapes in enumerate(s["samples"]):
                base = {a: sample(shape, dtype, 10 * k + i) for i, (a, shape) in enumerate(zip(tensors, shapes))}
                for name in s["numbers"]:
                    for n in NUMBERS:
                        values = dict(base, **{x: 1 for x in s["numbers"]})
                        values[name] = n
                        label = f"{dtype} {shapes} {name}={n!r}"
                        check(label, values, torch.enable_grad)
                        if dtype == torch.float32 and n in (1, 0.5):
                            for low in (torch.bfloat16, torch.float16):
                                check(f"autocast {low} {label}", values,
                                      lambda low=low: torch.autocast("cpu", dtype=low))
                        if dtype == torch.float64 and n in (1, 0.5, -2.5):
                            check(f"requires_grad {label}", values, torch.enable_grad, grads=True)
                            check(f"requires_grad no_grad {label}", values, torch.no_grad, grads=True)
        report[op] = {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong,
                    "cells_wrong": cells}
    print(json.dumps(report))


if __name__ == "__main__":
    exit_now(main())
