"""The per-op table `shimgen --verify` prints, and the verdict."""

from __future__ import annotations

import sys

from shimgen.verify.build import Step


def passed(result: dict) -> bool:
    return not result.get("failures") and result.get("total", 0) > 0


def print_table(spec: dict, results: dict[str, dict], steps: list[Step], build_s: float, run_s: float) -> bool:
    """Print the table to stdout and failure details to stderr; True when every op passed."""
    rows = [("op", "route", "since", "samples", "errors", "result")]
    ok = True
    for op in spec["ops"]:
        r = results.get(op["op"], {"passed": 0, "total": 0, "errors": 0, "failures": ["no result"]})
        good = passed(r)
        ok &= good
        verdict = "ok" if good else ("CRASH" if r.get("crashed") else "FAIL")
        rows.append((op["op"], op["route"], op["since"], f"{r['passed']}/{r['total']}", str(r["errors"]), verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for op, reason in spec.get("skipped", []):
        print(f"not verified: {reason}")
    n_ok = sum(passed(results.get(op["op"], {})) for op in spec["ops"])
    built = ", ".join(f"{s.name} {'reused' if s.reused else f'{s.seconds:.1f}s'}" for s in steps)
    print(f"{n_ok}/{len(spec['ops'])} ops passed; build {build_s:.1f}s ({built}); samples {run_s:.1f}s")
    for op in spec["ops"]:
        r = results.get(op["op"], {})
        if r and not passed(r):
            print(f"shimgen: verify: {op['op']} failed:", file=sys.stderr)
            for f in r.get("failures", []):
                print(f"  {f}", file=sys.stderr)
            if r.get("log"):
                print("  runner stderr (tail):", file=sys.stderr)
                for line in r["log"].splitlines():
                    print(f"    {line}", file=sys.stderr)
    return ok
