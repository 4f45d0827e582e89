"""What the provers' workers (equivalents_worker.py, number_rules_worker.py, compositions_worker.py and the kernels'
prover modules it loads) share: they run under each runtime's
own interpreter, which can import torch but not shimgen, and import this file from their own folder. An aten
overload by name, a call's outcome (its result, or the first line of its error), and whether two outcomes are the
same: for errors, aten's own message (the first line of the route's error contains aten's, as the verify harness
asks), and for results the same dtype, shape and values (NaN where NaN is)."""

import os
import sys

import torch


def exit_now(code=None):
    """End the worker once its report is written, skipping Python's finalization (about a second of CPU with torch
    loaded; shimgen.base.process.exit_now, which this interpreter cannot import, says more)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0 if code is None else code)


def aten(name):
    op, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, op), overload or "default")


class Refused(Exception):
    """A route's own refusal (a `shimgen:` error in the wrapper), modelled by a worker: an outcome of its own."""


def outcome(fn):
    """run(), with a modelled route's refusal told apart from aten's errors."""
    try:
        return "ok", fn()
    except Refused as e:
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return "error", str(e).split("\n")[0]


def run(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return "error", str(e).split("\n")[0]


# How a route's own check of a call aten refuses ends its message (scalar.h, routes/composition.py: "shimgen: op:
# <why> (aten raises)"): the models raise it too, and it words any error of aten's. Any other error of the route
# should be aten's own (its first line contains aten's); where it is not, the call still raises as aten's does (a
# call with two faults may name the other first: out='s dtype, or the op's own check), so the outcome is the same
# and the pair is kept here, row by row (ROW), for the prover's report.
ATEN_RAISES = "(aten raises)"
ROW = [None]
TEXT_DIFFERS: dict = {}  # row -> [count, (aten's first line, the route's)]


def same(a, b):
    """Whether outcome b (the route's) is outcome a (aten's): an error for an error, or the same result."""
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        if a[1] not in b[1] and not b[1].endswith(ATEN_RAISES):
            seen = TEXT_DIFFERS.setdefault(ROW[0], [0, (a[1], b[1])])
            seen[0] += 1
        return True
    x, y = a[1], b[1]
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):  # a dtype (result_type), a number
        return type(x) is type(y) and x == y
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.is_complex():
        x, y = torch.view_as_real(x), torch.view_as_real(y)
    if x.is_floating_point():
        return torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(), y.nan_to_num())
    return torch.equal(x, y)


def same_error_text(a, b):
    """same(), and an error must be aten's own or the route's own check (ATEN_RAISES): for the routes whose
    checks are aten's, in aten's order (number-rule kernels, as_double, select kernels)."""
    return same(a, b) and (a[0] != "error" or a[1] in b[1] or b[1].endswith(ATEN_RAISES))


def weights(t):
    """Upstream gradients for a result t: distinct, non-unit values. A gradient of ones hides a backward formula
    that rounds otherwise (x * 1 rounds nothing): sqrt's grad / (2 * sqrt(x)) against pow's grad * (0.5 * x^-0.5)
    agrees on ones and differs on these."""
    return (torch.arange(t.numel(), dtype=t.dtype).view(t.shape) + 1) / 3


class Tally:
    """A prover's count over its samples: calls compared, results equal on both sides, the route's refusals (never
    a difference), and the first difference (`wrong`, with its label). `extra_*`: what the caller sees besides the
    outcome (strides, an out='s state), compared too."""

    def __init__(self):
        self.compared = self.both_ok = self.refused = 0
        self.wrong = ""

    def compare(self, label, want, got, extra_want=None, extra_got=None):
        self.compared += 1
        if got[0] == "refused":
            self.refused += 1
            return
        self.both_ok += want[0] == got[0] == "ok"
        if (not same(want, got) or extra_want != extra_got) and not self.wrong:
            self.wrong = f"{label}: {want[0]} {want[1] if want[0] == 'error' else extra_want} vs {got[0]} " \
                         f"{got[1] if got[0] == 'error' else extra_got}"

    def report(self):
        return {"compared": self.compared, "both_ok": self.both_ok, "refused": self.refused, "wrong": self.wrong}
