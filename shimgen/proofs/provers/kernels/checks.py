"""The prover of kernels `assert_scalar`, `constrain_range`, `constrain_range_for_size` and their `functional_` forms
(shimgen/generate/routes/kernels/checks.py): the runtime checks as the generated wrapper makes them.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run


INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def runtime_check_select(s, op, v):
    """scalar.h's <kernel>_select, step by step (the row's `asserts`, `for_size`, `token`: its entry's)."""
    if s["asserts"]:
        n = v["self"]
        if not bool(n):  # NaN is true
            raise RuntimeError(f"shimgen: {op}: {v['assert_msg']} {ATEN_RAISES}")
    else:
        size, lo, hi = v["size"], v.get("min"), v.get("max")
        if s["for_size"]:
            if hi is not None and hi <= 2:
                raise RuntimeError(f"shimgen: {op}: Max value to constrain_range_for_size must be greater than 2. "
                                   f"got: {hi} {ATEN_RAISES}")
            lo = 0 if lo is None else lo
        if not isinstance(size, int):  # bool is an int
            raise Refused("size")
        lo = INT64_MIN if lo is None else lo
        hi = INT64_MAX if hi is None else hi
        if hi < lo:
            raise RuntimeError(f"shimgen: {op}: Max must be greater than or equal to min. Got min={lo} max={hi} "
                               f"{ATEN_RAISES}")
        if not lo <= int(size) <= hi:
            raise RuntimeError(f"shimgen: {op}: Invalid value range for {int(size)} between [{lo}, {hi}]. "
                               f"{ATEN_RAISES}")
    return aten("clone")(v["dep_token"]) if s["token"] else None


def prove_runtime_checks(op, s):
    """Numbers of every kind (zero, NaN, complex, int64's extremes), messages, bounds absent or given (max below
    min, max 2 for _for_size): the outcome and, for a _functional_ form, the token's clone."""
    f = aten(op)
    numbers = [True, False, 0, 1, -1, 5, 10, 11, 2**62, -2**63, 0.0, 2.5, float("nan"), 1 + 2j, 0j]
    bounds = [None, -3, 0, 2, 3, 6, 10]
    token = torch.arange(3.0)
    tally = Tally()
    for i, n in enumerate(numbers):
        if s["asserts"]:
            cases = [{"self": n, "assert_msg": f"check {i} failed"}]
        else:
            cases = [{"size": n, "min": lo, "max": hi} for lo in bounds for hi in bounds]
        for v in cases:
            if s["token"]:
                v = dict(v, dep_token=token)
            want = run(lambda: f(**v))
            got = outcome(lambda: runtime_check_select(s, op, v))
            tally.compare(f"{v}", want, got)
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_runtime_checks,)}
