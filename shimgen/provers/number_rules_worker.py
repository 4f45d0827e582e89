"""Run by each runtime's own interpreter (imports torch only): for each number rule, is aten's `op` given that
very number exactly `via` (results, dtypes, errors; float64 gradients) on tensors of the dtypes the rule
claims for each number kind (ScalarType names)? Reads {op: [{"args": [op's argument names], "argument", "value", "cells", "via",
"via_args": {via's argument: op's argument}}]} on stdin, writes {op: [{"both_ok": n, "wrong": example or ""}]}."""

import json
import sys

import torch

# beside this script: the comparison both provers' workers share (the script's folder is on sys.path)
from worker_common import aten, run, same

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


def main():
    spec = json.load(sys.stdin)
    out = {}
    for op, rules in spec.items():
        f = aten(op)
        results = []
        for r in rules:
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
                        if dtype == torch.float64 and want[0] == got[0] == "ok":
                            grads = []
                            for fn, mine in ((f, True), (via, False)):
                                leaves = {a: v.clone().requires_grad_() for a, v in values.items()
                                          if isinstance(v, torch.Tensor)}
                                vals = dict(values, **leaves)
                                call = vals if mine else {a: vals[x] for a, x in r["via_args"].items()}
                                fn(**call).sum().backward()
                                grads.append([leaves[a].grad for a in sorted(leaves)])
                            for ga, gb in zip(*grads):
                                if not same(("ok", ga), ("ok", gb)) and not wrong:
                                    wrong = f"gradient {shape} {number!r}"
            results.append({"both_ok": both_ok, "wrong": wrong})
        out[op] = results
    print(json.dumps(out))


if __name__ == "__main__":
    main()
