"""Run by each runtime's own interpreter (imports torch only): for each number rule, is aten's `op` given that
very number exactly `via` (results, dtypes, errors; float64 gradients) on tensors of the dtypes the rule
claims for each number kind (ScalarType names)? Reads {op: [{"args": [op's argument names], "argument", "value",
"cells", "via", "via_args": {via's argument: op's argument}, "no_grad": the rule is taken only where autograd records
nothing: no gradient compared}]} on stdin, writes {op: [{"both_ok": n, "wrong": example or ""}]}.
A rule with `kernel` instead of `via` names a scalar.h function (shimgen::detail::<kernel>_select) this script
mirrors call by call (MIRRORS, found by that name), its `via_args` being that function's arguments in order."""

import itertools
import json
import sys

import torch

# beside this script: the comparison both provers' workers share (the script's folder is on sys.path)
from worker_common import aten, exit_now, run, same, same_error_text, weights

# ScalarType enumerator -> torch dtype
DTYPES = {"Bool": torch.bool, "Byte": torch.uint8, "Char": torch.int8, "Short": torch.int16, "Int": torch.int32,
          "Long": torch.int64, "Half": torch.float16, "BFloat16": torch.bfloat16, "Float": torch.float32,
          "Double": torch.float64, "ComplexFloat": torch.complex64, "UInt16": torch.uint16, "UInt32": torch.uint32,
          "UInt64": torch.uint64}
SHAPES = [(5, 7), (), (0,), (3, 1)]


def sample(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 6
    t = torch.cat([t.flatten(), torch.tensor([0.0, -0.0, float("inf"), float("nan"), 1e300])])[: t.numel()].view(t.shape) \
        if t.numel() > 8 else t
    if dtype == torch.bool:
        return t > 0
    return t.to(dtype) if (dtype.is_floating_point or dtype.is_complex) else t.round().clamp(-100, 100).to(dtype)


# ---- kernel rules: scalar.h's shimgen::detail::<kernel>_select, call by call ----

A = torch.ops.aten


def broadcast_as(t, like):
    """scalar.h's broadcast_as: `t` itself where it has `like`'s dtype and sizes."""
    if t.dtype == like.dtype and t.shape == like.shape:
        return t
    return A.type_as.default(A.expand_as.default(t, like), like)


ALPHA_RANGES = {torch.uint8: ("uint8_t", -255, 255), torch.int8: ("int8_t", -128, 127),
                torch.int16: ("int16_t", -32768, 32767), torch.int32: ("int", -2**31, 2**31 - 1),
                torch.int64: ("int64_t", -2**63, 2**63 - 1)}


def wrap64(v):
    """An integer's 64 bits as int64 (two's complement)."""
    return (v + 2**63) % 2**64 - 2**63


def integral_alpha_fits(alpha, dtype, negated):
    """compositions.h's integral_alpha_fits: aten's conversion of alpha (sub: -alpha, negated in 64 bits, wrapping)
    to the result dtype (c10's overflows)."""
    name, lo, hi = ALPHA_RANGES[dtype]
    v = wrap64(-wrap64(alpha)) if negated else alpha
    if not lo <= v <= hi:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def integral_add_select(a, b, subtract, alpha=1):
    """compositions.h's integral_add_select: mul for the result's layout, alpha converted and multiplied into b
    where it is not 1, diff of the stacked operands, copy_."""
    result = A.mul.Tensor(a, b)
    if result.dtype == torch.bool:
        return A.logical_or.default(a, b)
    x = broadcast_as(a, result)
    y = broadcast_as(b, result)
    if alpha != 1:
        integral_alpha_fits(alpha, result.dtype, subtract)
        y = A.mul.Tensor(y, torch.tensor(wrap64(alpha), dtype=torch.int64).to(result.dtype))
    if not subtract:
        y = A.neg.default(y)
    d = A.diff.default(A.unsqueeze.default(x, 0), 1, 0, A.unsqueeze.default(y, 0), None)
    return A.copy_.default(result, A.squeeze.dim(d, 0), False)


def cube_select(x):
    """scalar.h's cube_select: (x * x) * x."""
    return A.mul.Tensor(A.mul.Tensor(x, x), x)


# the mirrors, found by a rule's `kernel` as scalar.h names them (<kernel>_select)
MIRRORS = {f.__name__: f for f in (integral_add_select, cube_select)}
# how a mirror is sampled: "pairs" of operands over every dtype pair and layout (these), or one operand per claimed
# (number kind, dtype) cell, as a `via` rule (the others)
SAMPLED_IN_PAIRS = {integral_add_select}


def mirror(r):
    """The mirror of the rule's `kernel`."""
    return MIRRORS[f"{r['kernel']}_select"]


def layout_sample(shape, dtype, seed, layout):
    """Values over the dtype's whole range (its extremes first: overflow wraps), contiguous, transposed or
    channels-last."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(-2**62, 2**62, shape[::-1] if layout == "t" else shape, generator=g, dtype=torch.int64)
    if t.numel():
        t.view(-1)[0] = torch.iinfo(torch.int64).max
        t.view(-1)[-1] = torch.iinfo(torch.int64).min
    t = t > 0 if dtype == torch.bool else t.to(dtype)
    if layout == "t" and t.dim() == 2:
        t = t.t()
    if layout == "cl" and t.dim() == 4:
        t = t.contiguous(memory_format=torch.channels_last)
    return t


def prove_kernel_rule(f, r):
    """The kernel against aten's op on every pair of the claimed dtypes (mixed ones promote), broadcasting, 0-dim
    and empty shapes, mismatched shapes (aten's error), transposed and channels-last layouts: values, dtype, shape
    and strides, errors with aten's message."""
    kernel = mirror(r)
    dtypes = sorted({DTYPES[d] for cats in r["cells"].values() for d in cats}, key=str)
    # `value: integer`: any integer, sampled across every dtype's range and beyond it
    numbers = INTEGERS if r["value"] == "integer" else [int(r["value"])]
    both_ok, wrong = 0, ""
    shapes = [((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3, 4)), ((3, 4), ()), ((2, 3, 4, 5), (2, 3, 4, 5)),
              ((2, 3, 4, 5), (5,)), ((0, 3), (3,)), ((3, 4), (5,))]
    for number in numbers:
        layouts = [("c", "c"), ("t", "c"), ("cl", "cl"), ("c", "cl")] if number in numbers[:3] else [("c", "c")]
        for da, db in itertools.product(dtypes, dtypes):
            for (sa, sb), (la, lb) in itertools.product(shapes, layouts):
                values = {"self": layout_sample(sa, da, 1, la), "other": layout_sample(sb, db, 2, lb),
                          r["argument"]: number}
                want = run(lambda: f(**values))
                got = run(lambda: kernel(*(values[a] if isinstance(a, str) else a for a in r["via_args"])))
                both_ok += want[0] == got[0] == "ok"
                agree = same_error_text(want, got) and (want[0] != "ok" or want[1].stride() == got[1].stride())
                if not agree and not wrong:
                    wrong = f"{da} {db} {sa} {sb} {la}/{lb} {number}: {want[0]} " \
                            f"{want[1] if want[0] == 'error' else ''} vs {got[0]} {got[1] if got[0] == 'error' else ''}"
    return {"both_ok": both_ok, "wrong": wrong}


# the integers a `value: integer` rule is proven on: small ones first (every layout), then each dtype's bounds, one
# past them, an unsigned byte's negative range, int64's extremes and unsigned 64-bit ones (a uint64 Scalar)
INTEGERS = [3, -2, 0, 2, -1, 7, 127, 128, -128, -129, 255, 256, -255, -256, 32767, 32768, -32768, -32769,
            2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**40 + 3, 2**63 - 1, -2**63, 2**63, 2**64 - 1]


def main():
    spec = json.load(sys.stdin)
    out = {}
    for op, rules in spec.items():
        f = aten(op)
        results = []
        for r in rules:
            if r.get("kernel") and mirror(r) in SAMPLED_IN_PAIRS:
                results.append(prove_kernel_rule(f, r))
                continue
            if r.get("kernel"):  # a kernel's arguments in order, named as op's
                kernel = mirror(r)
                r = dict(r, via_args={f"_{k}": a for k, a in enumerate(r["via_args"])})

                def via(**kw):
                    return kernel(*(kw[f"_{k}"] for k in range(len(kw))))
            else:
                via = aten(r["via"])
            both_ok, wrong = 0, ""
            for kind, cats in r["cells"].items():
                number = int(r["value"]) if kind == "int" else float(r["value"])
                for dtype in [DTYPES[d] for d in cats]:
                    for k, shape in enumerate(SHAPES):
                        values = {a: sample(shape, dtype, k) for a in r["args"] if a != r["argument"]}
                        values[r["argument"]] = number
                        want = run(lambda: f(**values))
                        got = run(lambda: via(**{a: values[x] for a, x in r["via_args"].items()}))
                        both_ok += want[0] == got[0] == "ok"
                        if not same(want, got) and not wrong:
                            wrong = f"{dtype} {shape} {number!r}: {want[0]} vs {got[0]}"
                        if dtype == torch.float64 and want[0] == got[0] == "ok" and not r["no_grad"]:
                            grads = []
                            for fn, mine in ((f, True), (via, False)):
                                leaves = {a: v.clone().requires_grad_() for a, v in values.items()
                                          if isinstance(v, torch.Tensor)}
                                vals = dict(values, **leaves)
                                call = vals if mine else {a: vals[x] for a, x in r["via_args"].items()}
                                result = fn(**call)  # weighted: a gradient of ones hides rounding
                                (result * weights(result)).sum().backward()
                                grads.append([leaves[a].grad for a in sorted(leaves)])
                            for ga, gb in zip(*grads):
                                if not same(("ok", ga), ("ok", gb)) and not wrong:
                                    wrong = f"gradient {shape} {number!r}"
            results.append({"both_ok": both_ok, "wrong": wrong})
        out[op] = results
    print(json.dumps(out))


if __name__ == "__main__":
    exit_now(main())
