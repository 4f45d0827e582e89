"""The provers' comparison of outcomes (shimgen/proofs/provers/worker_common.py, run by each runtime's own interpreter):
an error is aten's error; its text is aten's, the route's own check ("(aten raises)"), or kept per row for the
prover's report; results compare dtype, shape and values with NaN where NaN; upstream gradients are non-unit."""

from __future__ import annotations

import subprocess
import sys

import torch

from shimgen.proofs.provers import worker_common as wc


def test_errors_compare_by_kind_and_keep_text_that_differs() -> None:
    wc.TEXT_DIFFERS.clear()
    wc.ROW[0] = "row.a"
    assert wc.same(("error", "size mismatch"), ("error", "shimgen: x: size mismatch, more"))
    assert wc.same(("error", "size mismatch"), ("error", "shimgen: x: out's dtype (aten raises)"))
    assert wc.TEXT_DIFFERS == {}
    assert wc.same(("error", "size mismatch"), ("error", "index out of bounds"))  # the same outcome: an error
    assert wc.TEXT_DIFFERS == {"row.a": [1, ("size mismatch", "index out of bounds")]}
    assert not wc.same_error_text(("error", "size mismatch"), ("error", "index out of bounds"))
    assert wc.same_error_text(("error", "size mismatch"), ("error", "shimgen: x (aten raises)"))
    assert not wc.same(("error", "e"), ("ok", torch.zeros(1)))
    wc.TEXT_DIFFERS.clear()


def test_results_compare_dtype_shape_and_values() -> None:
    x = torch.tensor([1.0, float("nan"), -0.0])
    assert wc.same(("ok", x), ("ok", x.clone()))
    assert not wc.same(("ok", x), ("ok", x.double()))
    assert not wc.same(("ok", x), ("ok", x[:2]))
    assert not wc.same(("ok", x), ("ok", torch.tensor([1.0, 2.0, 0.0])))


def test_upstream_gradients_are_distinct_and_not_one() -> None:
    w = wc.weights(torch.zeros(2, 3, dtype=torch.float64))
    assert w.shape == (2, 3) and w.dtype == torch.float64
    assert len(set(w.flatten().tolist())) == 6 and 1.0 not in w.flatten().tolist()[:2]


def test_only_names_rows_that_exist() -> None:
    proc = subprocess.run([sys.executable, "-m", "shimgen.dev", "prove", "kernel-compositions", "--only",
                           "no_such.row"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["shimgen: --only: no kernel composition row no_such.row"]
