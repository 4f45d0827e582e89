"""Run the corpus' calls through a built stable extension and through eager ATen, in the interpreter of one torch
runtime (it imports torch only): `python run_calls.py LIB CORPUS_JSON` prints one JSON object, call -> outcome.

Outcomes: exact (same dtype, shape and values, NaN where aten has NaN), refused (the wrapper raised a `shimgen:`
error), error (both raised), wrong (anything else; with a detail)."""

import json
import os
import sys

import torch
import torch.nn.functional as F  # noqa: F401 - used by the corpus' expressions


def inputs():
    g = torch.Generator().manual_seed(0)
    return {
        "x": torch.randn(4, 5, generator=g),
        "y": torch.randn(4, 5, generator=g),
        "i": torch.randint(-5, 6, (4, 5), generator=g),
        "j": torch.randint(1, 5, (4, 5), generator=g),
        "m": torch.randn(5, 3, generator=g),
        "b": torch.randn(4, 3, generator=g),
        "img": torch.randn(2, 3, 8, 8, generator=g),
        "w": torch.randn(4, 3, 3, 3, generator=g),
        "q": torch.randn(2, 2, 4, 8, generator=g),
        "tgt": torch.randint(0, 4, (4,), generator=g),
    }


ORDER = ["x", "y", "i", "j", "m", "b", "img", "w", "q", "tgt"]


def same(a, b):
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return False
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    return torch.equal(a, b)


def main():
    lib, corpus_path = sys.argv[1], sys.argv[2]
    with open(corpus_path) as f:
        calls = json.load(f)  # [[kernel name, aten expression], ...]
    torch.ops.load_library(lib)
    ns = torch.ops.stable_calls
    result = {}
    for kernel, expr in calls:
        values = inputs()
        try:
            want = ("ok", eval(expr, {"torch": torch, "F": torch.nn.functional}, dict(values)))
        except Exception as e:  # noqa: BLE001
            want = ("error", str(e).split("\n")[0])
        values = inputs()
        try:
            got = ("ok", getattr(ns, kernel)(*[values[k] for k in ORDER]))
        except Exception as e:  # noqa: BLE001
            got = ("error", str(e).split("\n")[0])
        if got[0] == "error" and got[1].startswith("shimgen: "):
            result[kernel] = ["refused", got[1][:300]]
        elif want[0] == got[0] == "error":
            result[kernel] = ["error", want[1][:300]]
        elif want[0] == got[0] == "ok" and same(want[1], got[1]):
            result[kernel] = ["exact", ""]
        else:
            def show(o):
                return o[1][:200] if o[0] == "error" else f"{o[1].dtype} {tuple(o[1].shape)}"
            result[kernel] = ["wrong", f"aten {show(want)}; wrapper {show(got)}"]
    print(json.dumps({"torch": torch.__version__, "results": result}))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # no finalization with torch loaded (a second of CPU): tests/children.py
