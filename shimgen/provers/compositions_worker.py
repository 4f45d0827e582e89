"""Run by each runtime's own interpreter (imports torch only): is aten's overload exactly the kernel composition
the generated wrapper computes (scalar.h's shimgen::detail::<kernel>_select, mirrored step by step below with the
same aten calls), on every dtype, shape (broadcasting, 0-dim, empty; inf, nan, -0.0 among the values) and number
tried, errors included, and in its float64 gradients?

Reads {overload: {"kernel": name, "args": [the overload's argument names], "bind": [the kernel's arguments in the
order of its parameters: the overload's argument names, or numbers]}} on stdin, writes {overload: {"compared": n, "both_ok": n, "refused": n,
"wrong": example or ""}}. A refusal (the wrapper's own `shimgen:` error) is counted, never a difference."""

import json
import math
import sys

import torch

from worker_common import aten, run, same

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool, torch.complex64, torch.uint16]
SHAPES = [((5, 7), (5, 7)), ((5, 7), ()), ((), (3,)), ((2, 1), (1, 3)), ((0,), (0,)), ((3,), (2, 3))]
NUMBERS = [0, 1, -1, 0.5, 0.1, -2.5, 3, 1e-3, 1e10, 1e300, float("inf"), float("nan"), 2**40, True]
THRESHOLD_KERNEL = {torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                    torch.float32, torch.float64}


class Refused(Exception):
    pass


def in_range(n, dtype):
    """scalar.h's in_range: exact for an integral or bool dtype, finite within range for a floating one."""
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


def threshold_select(x, other, threshold, value):
    ct = torch.result_type(x, other)
    if ct not in THRESHOLD_KERNEL:
        raise Refused("dtype")
    cmp = torch.float32 if ct in (torch.float16, torch.bfloat16) else ct
    if not in_range(threshold, cmp) or not in_range(value, ct):
        raise Refused("number")
    mask = aten("le.Tensor")(x.to(cmp), number_tensor(threshold, cmp))
    return aten("where.self")(mask, number_tensor(value, ct), other.to(ct))


KERNELS = {"threshold": threshold_select}


def sample(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    if t.numel() > 8:
        t.view(-1)[:5] = torch.tensor([float("nan"), float("inf"), -0.0, 0.0, 0.5], dtype=torch.float64)
    if dtype == torch.bool:
        return t > 0
    if dtype.is_floating_point or dtype.is_complex:
        return t.to(dtype)
    return t.nan_to_num(0.0, 0.0, 0.0).round().clamp(0 if dtype in (torch.uint8, torch.uint16) else -9, 9).to(dtype)


def outcome(fn):
    try:
        return "ok", fn()
    except Refused as e:
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return "error", str(e).split("\n")[0]


def main():
    spec = json.load(sys.stdin)
    report = {}
    for op, s in spec.items():
        f, kernel = aten(op), KERNELS[s["kernel"]]
        tensors = [a for a in s["args"] if a in s["bind"][:2]]  # every kernel's first two parameters: x, other
        numbers = [a for a in s["args"] if a not in tensors]
        compared = both_ok = refused = 0
        wrong = ""

        def mine(values):
            return kernel(*(values[b] if isinstance(b, str) else b for b in s["bind"]))

        for da in DTYPES:
            for db in (DTYPES if len(tensors) > 1 else [da]):
                for k, shapes in enumerate(SHAPES):
                    for n in NUMBERS:
                        values = {a: sample(sh, d, 3 * k + i)
                                  for i, (a, sh, d) in enumerate(zip(tensors, shapes, (da, db)))}
                        for name in numbers:
                            values[name] = n
                        want = run(lambda: f(**values))
                        got = outcome(lambda: mine(values))
                        compared += 1
                        if got[0] == "refused":
                            refused += 1
                            continue
                        both_ok += want[0] == got[0] == "ok"
                        if not same(want, got) and not wrong:
                            wrong = f"{da} {db} {shapes} {n!r}: {want[0]} vs {got[0]}"
                        if da == db == torch.float64 and want[0] == got[0] == "ok":
                            grads = []
                            for fn in (lambda v: f(**v), mine):
                                leaves = {a: values[a].clone().requires_grad_() for a in tensors}
                                r = fn(dict(values, **leaves))
                                r.sum().backward()
                                # a gradient autograd never reached is zero (aten's formula gives zeros_like)
                                grads.append([leaves[a].grad if leaves[a].grad is not None else
                                              torch.zeros_like(leaves[a]) for a in tensors])
                            for ga, gb in zip(*grads):
                                if not same(("ok", ga), ("ok", gb)) and not wrong:
                                    wrong = f"gradient {shapes} {n!r}"
        report[op] = {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
