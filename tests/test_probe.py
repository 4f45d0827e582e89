"""The conversion table's `ivalue` facts are measured, not believed: data/probe.yaml records the dispatcher probe
(shimgen/proofs/probe/) on each release of the runtime matrix, and every `ivalue` in the table must be the release the
probe results imply. Re-run the probe after changing a row's representation (`cpp`, `stack`) or adding a row:

    python -m shimgen.dev probe --write        # venvs torch-X.Y.Z under $SHIMGEN_RUNTIMES, see docs/releases.md

The last test runs the probe now, on the runtimes this machine has, for a few rows, and compares with the
committed results (CI has 2.10.0 and 2.14.1, and the installed 2.13.0).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from shimgen.generate import table as table_mod
from shimgen.proofs.probe import cases, results
from shimgen.proofs.verify import runtimes
from shimgen.facts.versions import Version

TABLE = table_mod.load()
RESULTS = results.load()
PROBES = cases.probes(TABLE)
HEADERS = Version.parse(RESULTS.headers)


def test_every_row_is_probed_on_every_release_of_the_matrix() -> None:
    assert sorted(RESULTS.rows) == sorted(p.id for p in PROBES)
    for p in PROBES:
        assert list(RESULTS.rows[p.id]) == list(runtimes.RELEASES), p.id
        for rt, by_target in RESULTS.rows[p.id].items():
            top = min(Version.parse(rt), HEADERS)
            assert [Version.parse(t) for t in by_target] == runtimes.targets(top), (p.id, rt)
            assert all(results.outcome(c) in results.OUTCOMES for c in by_target.values()), (p.id, rt)


@pytest.mark.parametrize("rid", sorted(RESULTS.rows), ids=str)
def test_table_ivalue_is_what_the_probe_implies(rid: str) -> None:
    kind, key = rid.split(":", 1)
    row = getattr(TABLE, results.SECTIONS[kind])[key]
    implied = results.facts(RESULTS)[rid]
    assert row.ivalue == implied, (
        f"{rid}: the table says ivalue {row.ivalue}, data/probe.yaml implies {implied}: "
        + "; ".join(f"{rt}: {bt}" for rt, bt in RESULTS.rows[rid].items()))


def test_a_row_the_probe_contradicts_fails() -> None:
    """The check can fail: a table claiming Scalar converts from 2.10, or bool[N] from 2.9, is caught."""
    args = dict(TABLE.arguments)
    args["Scalar"] = replace(args["Scalar"], ivalue=Version(2, 10))
    args["bool[N]"] = replace(args["bool[N]"], ivalue=Version(2, 9))
    wrong = replace(TABLE, arguments=args)
    lines = results.contradictions(wrong, RESULTS)
    assert any(line.startswith("argument:Scalar:") and "probe implies null" in line for line in lines), lines
    assert any(line.startswith("argument:bool[N]:") and "probe implies 2.10" in line for line in lines), lines
    assert results.contradictions(TABLE, RESULTS) == []


def _outcomes(**cells: str) -> dict[str, dict[str, str]]:
    """runtime -> target -> outcome, from `r2_10="-C"`: one letter per target from 2.9 (C/R/W/-)."""
    word = {"C": "converts", "R": "refuses", "W": "wrong", "-": "unbuilt"}
    out = {}
    for name, letters in cells.items():
        rt = name[1:].replace("_", ".") + ".0"
        out[rt] = {f"2.{9 + i}": word[ch] for i, ch in enumerate(letters)}
    return out


@pytest.mark.parametrize(
    "cells, expected",
    [
        (dict(r2_9="C", r2_10="CC", r2_14="CCCCC"), Version(2, 9)),
        (dict(r2_9="-", r2_10="-C", r2_14="-CCCC"), Version(2, 10)),  # headers gate it to 2.10
        (dict(r2_9="R", r2_10="RC", r2_14="RCCCC"), Version(2, 10)),  # old extensions refused: not needed
        (dict(r2_9="C", r2_10="CC", r2_14="CCCCW"), None),  # wrong on the newest runtime: never
        (dict(r2_9="R", r2_10="RR", r2_14="RRRRR"), None),
        (dict(r2_9="C", r2_10="RR", r2_14="CCCCC"), Version(2, 14)),  # a regression in 2.10
    ],
)
def test_ivalue_rule(cells: dict, expected: Version | None) -> None:
    assert results.ivalue(_outcomes(**cells), Version(2, 13)) == expected


def test_the_data_file_is_what_the_writer_writes() -> None:
    """data/probe.yaml is the writer's output (no hand edits): parsing and dumping it gives the same bytes."""
    from importlib import resources

    text = resources.files("shimgen").joinpath(results.PATH).read_text()
    assert results.dump(results.parse(text)) == text


def test_every_row_has_probe_cases() -> None:
    probed = {p.key for p in PROBES if p.kind == "argument"}
    assert probed == {k for k, r in TABLE.arguments.items() if not r.refuse}
    assert {p.key for p in PROBES if p.kind == "return"} == {k for k, r in TABLE.returns.items() if not r.refuse}


# A few rows, chosen for their outcomes: unbuilt at 2.9 and converting after (bool[N], via its `stack` column),
# converting from 2.9 only with the widening `stack` (DeviceIndex), refused everywhere (Scalar), unbuilt at 2.9
# though the byte-copying catch-all would carry it (Layout).
RERUN_ROWS = ["bool[N]", "DeviceIndex", "Scalar", "Layout"]
RERUN_RUNTIMES = ["2.10.0", "2.13.0", "2.14.1"]


@pytest.mark.slow
def test_the_probe_reproduces_the_committed_results(tmp_path) -> None:
    found, missing = runtimes.resolve(RERUN_RUNTIMES)
    if missing and os.environ.get("CI") == "true":
        pytest.fail(runtimes.missing_reason(missing))
    if not found:
        pytest.skip(runtimes.missing_reason(missing))
    out = tmp_path / "probe.yaml"
    cmd = [sys.executable, "-m", "shimgen.dev", "probe", "--rows", ",".join(RERUN_ROWS),
           "--runtimes", ",".join(r.name for r in found), "--build-dir", str(tmp_path / "build"), "--write", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    now = results.parse(out.read_text())
    for p in cases.probes(TABLE, RERUN_ROWS):
        for r in found:
            assert now.rows[p.id][r.name] == RESULTS.rows[p.id][r.name], (p.id, r.name)


# What the probe proves is used: the backward ops that needed the overlay only for their bool[3] output_mask take
# the dispatcher route from the release bool[N] converts from, and `--verify` proves them against aten.
BOOL_MASK_OPS = ["convolution_backward.default", "native_batch_norm_backward.default",
                 "native_layer_norm_backward.default", "native_group_norm_backward.default"]


def test_bool_mask_ops_take_the_dispatcher_route_from_the_probed_release() -> None:
    from shimgen.generate import plan as plan_mod
    from shimgen.generate.signatures import cpp as sig_cpp

    first = TABLE.arguments["bool[N]"].ivalue
    assert first == Version(2, 10)
    ws = {w.op.name: w for w in sig_cpp.wrappers(plan_mod.make(BOOL_MASK_OPS))[0]}
    for op in BOOL_MASK_OPS:
        v = ws[op].variants
        assert v[0].start == first and all(x.route.name == "dispatcher" for x in v), (op, v)


@pytest.mark.slow
def test_bool_mask_ops_verify_without_an_overlay(tmp_path) -> None:
    from shimgen.proofs.verify import overlay

    build = tmp_path / "build"
    cmd = [sys.executable, "-m", "shimgen", "--ops", ",".join(BOOL_MASK_OPS), "--only", "--out", str(tmp_path / "out"),
           "--verify", "--build-dir", str(build)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "SHIMGEN_VERIFY_OPINFO": "off"})  # shimgen's own samples
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    for op in BOOL_MASK_OPS:
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith(op + " "))
        route, since, source, exact, refused, wrong, errors, _, verdict = line.split()[1:10]
        assert (route, since, verdict) == ("dispatcher", "2.10", "proven"), line
        assert refused == wrong == "0" and int(exact) >= 5, line
    assert not (build / overlay.LIBRARY).exists()  # nothing needed shimgen's C shims


def test_design_doc_route_table_is_the_table() -> None:
    """docs/design.md's per-type table (section "Which releases carry each type, measured") states the table's
    facts."""
    import re

    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "design.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("### Which releases carry each type, measured", 1)[1].split("\n\n| schema types", 1)[1]
    rows = [line for line in section.split("\n\n", 1)[0].splitlines() if line.startswith("| ") and "`" in line]
    seen = set()
    for line in rows:
        types, dispatcher, shim = [c.strip() for c in line.strip("|").split("|")]
        kind = "returns" if types.startswith("return") else "arguments"
        for key in re.findall(r"`([^`]+)`", types):
            row = getattr(TABLE, kind)[key]
            want_d = str(row.ivalue) if row.ivalue else "none"
            want_s = str(row.since) if row.c else "none"
            assert dispatcher.split()[0] == want_d, (key, dispatcher, want_d)
            assert shim.split()[0] == want_s, (key, shim, want_s)
            seen.add((kind, key))
    assert seen == {(k, key) for k in ("arguments", "returns") for key, r in getattr(TABLE, k).items()
                    if not r.refuse}, "every row appears once"
