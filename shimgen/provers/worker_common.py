"""What the provers' workers (equivalents_worker.py, number_rules_worker.py) share: they run under each runtime's
own interpreter, which can import torch but not shimgen, and import this file from their own folder. An aten
overload by name, a call's outcome (its result, or the first line of its error), and whether two outcomes are the
same: the same error-or-not, and for results the same dtype, shape and values (NaN where NaN is)."""

import torch


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


def same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return True
    x, y = a[1], b[1]
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.is_complex():
        x, y = torch.view_as_real(x), torch.view_as_real(y)
    if x.is_floating_point():
        return torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(), y.nan_to_num())
    return torch.equal(x, y)


def same_error_text(a, b):
    """same(), and an error must be aten's own: b's message contains a's (as the verify harness asks)."""
    return same(a, b) and (a[0] != "error" or a[1] in b[1])
