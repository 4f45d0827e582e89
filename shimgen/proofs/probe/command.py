"""`python -m shimgen.dev probe`: run the dispatcher probe on torch runtimes and print (or --write) the results.

    python -m shimgen.dev probe [--runtimes 2.9.1,...] [--rows bool[N],return:Scalar] [--build-dir B] [--write [PATH]]

Runtimes are venvs named torch-X.Y.Z under $SHIMGEN_RUNTIMES (shimgen/proofs/verify/runtimes.py); the default is the
whole release matrix. Each runtime runs every probe extension built for a target at or before it (targets
2.9 up to the installed torch's headers). --write merges the runtimes probed into PATH (default: the package's
data/probe.yaml); the table's `ivalue` facts must then agree with it (tests/test_probe.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from importlib import resources

import shimgen
from shimgen.generate import table as table_mod
from shimgen.base.errors import ShimgenError
from shimgen.proofs.probe import build, cases, results
from shimgen.proofs.verify import runtimes as rt_mod
from shimgen.proofs.verify.build import find_torch
from shimgen.facts.versions import Version

LETTERS = {"converts": "C", "refuses": "R", "wrong": "W", "unbuilt": "-"}


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(shimgen.__file__)))


def run_events(python: str, module: str, spec_path: str, log_path: str, key: str = "case") -> dict[str, dict]:
    """Run `python -m module SPEC DONE` until it reports "end", restarting after a crash: the item that was
    running is reported as {"outcome": "wrong", "detail": "crashed ..."}. Results by item id."""
    found: dict[str, dict] = {}
    env = {**os.environ, "PYTHONPATH": repo_root(), "PYTHONUNBUFFERED": "1"}
    while True:
        cmd = [python, "-m", module, spec_path, ",".join(found)]
        with open(log_path, "a") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
            current, ended = None, False
            assert proc.stdout is not None
            for line in proc.stdout:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if event.get("event") == "start":
                    current = event[key]
                elif event.get("event") == "done":
                    found[event[key]] = event
                    current = None
                elif event.get("event") == "end":
                    ended = True
            code = proc.wait()
        if ended and code == 0:
            return found
        if current is None:
            raise ShimgenError(f"{python} -m {module} failed ({_exit(code)}) before its first item; see {log_path}")
        found[current] = {key: current, "outcome": "wrong", "detail": f"the process crashed ({_exit(code)})"}


def _exit(code: int) -> str:
    import signal

    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def probe_runtime(runtime: rt_mod.Runtime, probes: list[cases.Probe], built: dict, headers: Version,
                  work: str) -> results.Results:
    """Run every case on one runtime; its results (the worst case per row and target)."""
    top = min(runtime.release, headers)
    rows = []
    for p in probes:
        targets = sorted(t for (pid, t) in built if pid == p.id and t <= top)
        rows.append({
            "id": p.id, "kind": p.kind, "op": p.op, "schema_type": p.schema_type,
            "cases": [{"cpp": c.cpp, "py": c.py} for c in p.cases],
            "libs": {str(t): built[(p.id, t)].library for t in targets},
            "unbuilt": {str(t): built[(p.id, t)].error for t in targets},
        })
    spec_path = os.path.join(work, f"probe-{runtime.name}.json")
    with open(spec_path, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    log = os.path.join(work, f"probe-{runtime.name}.log")
    open(log, "w").close()
    events = run_events(runtime.python, "shimgen.proofs.probe.runner", spec_path, log)
    res = results.Results(str(find_torch().version).split("+")[0])
    for row in rows:
        by_target = {}
        for t in row["libs"]:
            cells = []
            for i in range(len(row["cases"])):
                e = events.get(f"{row['id']}@{t}#{i}", {"outcome": "wrong", "detail": "no result"})
                cells.append(e["outcome"] + (f": {e['detail']}" if e.get("detail") else ""))
            by_target[t] = results.worst(cells)
        res.rows[row["id"]] = {runtime.name: by_target}
    return res


def table_text(res: results.Results, headers: Version) -> str:
    """Rows x runtimes; each cell one letter per target from 2.9 (C converts, R refuses, W wrong, - unbuilt)."""
    rts = res.runtimes
    head = ["row"] + rts + ["ivalue"]
    lines = [head]
    derived = results.facts(res)
    for rid in sorted(res.rows, key=results.row_order):
        cells = []
        for rt in rts:
            by_target = res.rows[rid].get(rt, {})
            cells.append("".join(LETTERS[results.outcome(by_target[t])]
                                 for t in sorted(by_target, key=lambda x: Version.parse(x))) or "?")
        d = derived[rid]
        lines.append([rid] + cells + [str(d) if d else "null"])
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    out.append(f"cells: one letter per targeted release from 2.9 up to min(runtime, {headers}): C converts, "
               "R refuses, W wrong, - unbuilt (no conversion in the headers at that target)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev probe", description=__doc__.splitlines()[0])
    ap.add_argument("--runtimes", default=",".join(rt_mod.RELEASES), help="comma-separated X.Y.Z (default: all)")
    ap.add_argument("--rows", help="comma-separated table rows (`bool[N]`, `return:Scalar`); default: all")
    ap.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "shimgen-probe"))
    ap.add_argument("--write", nargs="?", const="", metavar="PATH", help="merge the results into PATH "
                    "(default: shimgen/data/probe.yaml)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel compiles (default 2)")
    args = ap.parse_args(argv)
    try:
        table = table_mod.load()
        probes = cases.probes(table, [r for r in args.rows.split(",") if r] if args.rows else None)
        found, missing = rt_mod.resolve([n for n in args.runtimes.split(",") if n])
        if missing:
            raise ShimgenError(rt_mod.missing_reason(missing))
        headers = Version.parse_release(find_torch().version)
        newest = max(r.release for r in found)
        targets = [t for t in rt_mod.targets(headers) if t <= newest]
        work = os.path.abspath(args.build_dir)
        os.makedirs(work, exist_ok=True)
        print(f"shimgen: probe: building {len(probes)} rows x {len(targets)} targets in {work}", file=sys.stderr)
        built = build.build_all(probes, targets, work, "shimgen dispatcher probe", jobs=args.jobs)
        res = results.Results(find_torch().version.split("+")[0])
        for r in found:
            print(f"shimgen: probe: running on torch {r.name} ({r.python})", file=sys.stderr)
            res = res.merge(probe_runtime(r, probes, built, headers, work))
    except ShimgenError as e:
        print(f"shimgen: error: {e.line()}", file=sys.stderr)
        return 2
    print(table_text(res, headers))
    if args.write is not None:
        path = args.write or str(resources.files("shimgen").joinpath(results.PATH))
        old = results.parse(open(path).read()) if os.path.isfile(path) else results.Results(res.headers)
        merged = old.merge(res)
        with open(path, "w") as f:
            f.write(results.dump(merged))
        print(f"wrote {path}", file=sys.stderr)
        res = merged
    bad = results.contradictions(table, res) if args.write is not None else []
    for line in bad:
        print(f"shimgen: probe: the table disagrees: {line}", file=sys.stderr)
    return 0
