"""Run by each runtime's own interpreter (imports torch only): is aten's `op` exactly `via` with the arguments the
equivalence names, where a tensor is floating (the only calls the route takes integers for) and on every tensor for
floating numbers, with operands of one dtype and of two? Reads {op: {"args": [op's argument names], "via": name,
"via_args": {via's argument name: expr}, "refuse_dtypes": [dtype names the route refuses]}}
on stdin, writes {op: {"compared": n, "both_ok": n, "wrong": example or ""}} as JSON (arguments go by name). An
expression is an argument name, or `-name` (the number negated as the double the C shim carries)."""

import json
import sys

import torch

# beside this script: the comparison both provers' workers share (the script's folder is on sys.path)
from worker_common import aten, exit_now, run, same, weights

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8,
          torch.bool, torch.complex64]
# Operands of two dtypes: the result's dtype is promoted, and a route's op may reject one operand's dtype that
# aten's op takes (aten::subtract refuses any Bool operand; aten::add computes Bool + float).
MIXED = [(torch.bool, torch.float32), (torch.float32, torch.bool), (torch.bool, torch.int64),
         (torch.int64, torch.float32), (torch.uint8, torch.float64), (torch.float16, torch.float32),
         (torch.bfloat16, torch.float16), (torch.int32, torch.complex64), (torch.float64, torch.int64)]
PAIRS = [(d, d) for d in DTYPES] + MIXED
SHAPES = [((2, 3), (2, 3)), ((2, 3), ()), ((), (3,)), ((), ())]
NUMBERS = [1, 2, -1, 0, 3, 2**53, 0.5, -2.5, 1e-3, 3.0, -1.0, 1e300, float("inf")]


def tensor(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) * 4
    return t.to(dtype) if dtype != torch.bool else t > 0


def main():
    spec = json.load(sys.stdin)
    out = {}
    for op, e in spec.items():
        f, via = aten(op), aten(e["via"])
        compared, both_ok, wrong = 0, 0, ""
        refused = {getattr(torch, {"Bool": "bool"}.get(d, d.lower())) for d in e.get("refuse_dtypes", [])}
        for da, db in PAIRS:
            floats = [d.is_floating_point or d.is_complex for d in (da, db)]
            cast = e.get("cast_bool") and ((da == torch.bool and floats[1]) or (db == torch.bool and floats[0]))
            if (da in refused or db in refused) and not cast:
                continue  # the route raises a shimgen: error for these (routes/equivalent.py)
            for k, (sa, sb) in enumerate(SHAPES):
                for n in NUMBERS:
                    if not (isinstance(n, float) or any(floats)):
                        continue  # the route refuses an integer where the common dtype is not floating
                    values = {e["args"][0]: tensor(sa, da, k), e["args"][1]: tensor(sb, db, k + 7)}
                    values[e["args"][2]] = n

                    def pick(x):
                        return -float(values[x[1:]]) if x.startswith("-") else values[x]

                    want = run(lambda: f(**{a: values[a] for a in e["args"]}))
                    if cast:  # row key cast_bool: both operands in their common dtype first (equivalent.py)
                        common = torch.result_type(values[e["args"][0]], values[e["args"][1]])
                        values = dict(values, **{a: values[a].to(common) for a in e["args"][:2]})
                    got = run(lambda: via(**{a: pick(x) for a, x in e["via_args"].items()}))
                    compared += 1
                    both_ok += want[0] == got[0] == "ok"
                    if not same(want, got) and not wrong:
                        wrong = f"{da}/{db} {sa} {sb} {n!r}: {want[0]} vs {got[0]}"
                    if da == db == torch.float64 and want[0] == got[0] == "ok":  # gradients too
                        grads = []
                        for fn, mine in ((f, True), (via, False)):
                            leaves = {a: values[a].clone().requires_grad_() for a in e["args"][:2]}
                            vals = dict(values, **leaves)
                            call = {a: vals[a] for a in e["args"]} if mine else {
                                a: -float(vals[x[1:]]) if x.startswith("-") else vals[x]
                                for a, x in e["via_args"].items()}
                            r = fn(**call)
                            (r * weights(r)).sum().backward()
                            grads.append([leaves[a].grad for a in e["args"][:2]])
                        for ga, gb in zip(*grads):
                            if not same(("ok", ga), ("ok", gb)) and not wrong:
                                wrong = f"gradient {da} {sa} {sb} {n!r}"
        out[op] = {"compared": compared, "both_ok": both_ok, "wrong": wrong}
    print(json.dumps(out))


if __name__ == "__main__":
    exit_now(main())
