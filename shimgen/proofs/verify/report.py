"""What `shimgen --verify` says: the per-op table (stdout), failure details (stderr), the verdict, and the coverage
report (`--report PATH`: Markdown at PATH, the same data as JSON beside it).

Each overload gets one status:
  proven        at least one sample exact, none wrong
  refused       no sample exact, none wrong, the wrapper refused (a `shimgen:` error, or a value its C++ parameter
                cannot hold) where aten returned
  WRONG         a sample differed from aten (a failure); `WRONG (Scalar)` when every wrong sample is explained by
                the Scalar boxing (aten given the wrapper's double agrees with the wrapper)
  unproven      nothing ran to a result on this machine, with the reason: not runnable here (kernels only for
                CUDA, MPS, ...), aten raises on every sample, aten crashes or hangs, no sample could be made
  absent        the runtime's torch lacks the op
  hidden        the build world verified (--world) does not have the wrapper: a compile error there naming what it
                needs (the overlay, or leaky str routes) and why; not called
  ERROR         the runner could not run the op (a failure)
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections import Counter
from typing import Any

import yaml

from shimgen.base.inputs import package_text
from shimgen.proofs.verify.build import Step
from shimgen.proofs.verify.runner_client import new_result

FAILING = ("WRONG", "WRONG (Scalar)", "WRONG (mixed returns)", "ERROR")  # explained ones are still failures


def verdict(r: dict) -> tuple[str, str]:
    """(status, reason) of one op's result."""
    c = r["counts"]
    status = r.get("status")
    if status == "absent":
        return "absent", r["reason"]
    if status == "unrunnable":
        return "unproven", r["reason"]
    if status == "error":
        return "ERROR", r["reason"]
    if c["wrong"]:
        if r["scalar_wrong"] == c["wrong"]:
            return "WRONG (Scalar)", ("every wrong sample is the Scalar boxing's: aten given the wrapper's double agrees "
                                      "with the wrapper")
        if r.get("causes", {}).get("mixed returns") == c["wrong"]:
            return "WRONG (mixed returns)", ("libtorch's torch_call_dispatcher raises converting a mixed-type return "
                                             "tuple: the dispatcher route cannot carry it on this torch")
        return "WRONG", r["failures"][0] if r["failures"] else "a sample differed"
    if c["exact"]:
        return "proven", ""
    if c["refused"]:
        return "refused", _first(r["notes"], "refused") or "the wrapper refused every sample aten ran"
    if c.get("nondeterministic"):
        return "unproven", ("aten is not deterministic here: its values differ between runs on the same input "
                            f"({_first(r['notes'], 'nondeterministic')[:160]})")
    if status == "nosample":
        return "unproven", f"no sample: {r['reason']}"
    if c.get("unreached") and not c["error"]:
        return "unproven", ("round-trip op unreachable: its kernels are registered for CompositeExplicitAutograd, "
                            f"which does not take this input ({_first(r['notes'], 'unreached')[:120]})")
    if c["aten-fails"] and not c["error"]:
        return "unproven", f"aten itself fails on every sample: {_first(r['notes'], 'aten-fails')}"
    if c["error"]:
        return "unproven", "aten raised on every sample (the wrapper raised the same errors)"
    return "unproven", "no sample ran"


def _first(notes: list[str], kind: str) -> str:
    for n in notes:
        if n.startswith(kind + ": "):
            return n[len(kind) + 2:]
    return ""


def category(status: str, reason: str) -> str:
    """The summary line an op counts under."""
    if status != "unproven":
        return status
    if reason.startswith("not runnable"):
        return "unproven: not runnable on this machine"
    if reason.startswith("no sample"):
        return "unproven: no sample could be made"
    if reason.startswith("aten itself"):
        return "unproven: aten itself crashes or hangs"
    if reason.startswith("aten raised"):
        return "unproven: aten raised on every sample"
    if reason.startswith("aten is not deterministic"):
        return "unproven: aten is not deterministic here"
    if reason.startswith("round-trip op unreachable"):
        return "unproven: the round-trip op cannot take this input (nested)"
    return "unproven: " + reason


def _source(r: dict) -> str:
    kinds = sorted(r["sources"])
    return "+".join(kinds) if kinds else "-"


def rows(spec: dict, results: dict[str, dict]) -> list[dict]:
    out = []
    for op in spec["ops"]:
        r = results.get(op["op"])
        if r is None:
            r = new_result(op["op"])
            r["status"], r["reason"] = "error", "no result"
        status, reason = verdict(r)
        out.append({
            "op": op["op"], "route": op["route"], "since": op["since"], "tags": op.get("tags", []),
            "kernels": r.get("kernels", []), "source": _source(r), **{k.replace("-", "_"): v for k, v in
                                                                        r["counts"].items()},
            "scalar_wrong": r["scalar_wrong"], "seconds": r["seconds"], "status": status, "reason": reason,
            "category": category(status, reason), "failures": r["failures"], "notes": r["notes"],
            "aten_error": r.get("aten_error", ""),
        })
        out[-1]["group"] = reason_group(out[-1]) if status not in ("proven", "absent") else ""
    for h in spec.get("hidden", []):  # hidden in the build world verified: reported, never called
        counts = new_result(h["op"])["counts"]
        out.append({
            "op": h["op"], "route": "hidden", "since": h["since"], "tags": [], "kernels": [], "source": "-",
            **{k.replace("-", "_"): 0 for k in counts}, "scalar_wrong": 0, "seconds": 0.0, "status": "hidden",
            "reason": h["reason"], "category": f"hidden in this build: needs {h['needs']}", "failures": [],
            "notes": [], "aten_error": "",
        })
        out[-1]["group"] = reason_group(out[-1])
    return out


@functools.cache
def reason_groups() -> list[dict]:
    """data/verify_reasons.yaml: the groups the report sorts unproven overloads into, in order."""
    return yaml.safe_load(package_text("data/verify_reasons.yaml")) or []


def _matches(when: dict, row: dict) -> bool:
    checks = {
        "category": lambda v: row["category"] == v,
        "op": lambda v: re.search(v, row["op"]) is not None,
        "error": lambda v: re.search(v, row.get("aten_error") or "") is not None,
        "notes": lambda v: any(re.search(v, n) for n in row["notes"]) or re.search(v, row["reason"]) is not None,
        "kernels": lambda v: bool(set(v) & set(row.get("kernels", []))),
    }
    return all(checks[k](v) for k, v in when.items())


def reason_group(row: dict) -> str:
    """The group of an overload not proven (a WRONG one is a failure, not a reason: its own group)."""
    if row["status"] in FAILING:
        return "FAILING: " + row["status"]
    if row["status"] == "hidden":  # by design of the build world verified: its own group
        return row["category"]
    for g in reason_groups():
        if _matches(g.get("when") or {}, row):
            return g["group"]
    return "other"


def summary(table: list[dict]) -> dict[str, Any]:
    cats = Counter(row["category"] for row in table)
    cpu = [row for row in table if row["category"] != "unproven: not runnable on this machine"
           and row["status"] not in ("absent", "hidden")]
    samples = Counter()
    for row in table:
        for k in ("exact", "refused", "wrong", "error", "aten_fails", "unreached", "nondeterministic"):
            samples[k] += row.get(k, 0)
    return {
        "overloads": len(table),
        "runnable": len(cpu),
        "proven": cats.get("proven", 0),
        "proven_share_of_runnable": round(cats.get("proven", 0) / len(cpu), 4) if cpu else 0.0,
        "by_category": dict(sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))),
        "from_opinfo": sum(1 for row in table if "OpInfo" in row["source"]),
        "samples": dict(samples),
        "failing": sum(1 for row in table if row["status"] in FAILING),
        "reason_groups": dict(sorted(Counter(reason_group(row) for row in table if row["status"] != "proven"
                                             and row["status"] != "absent").items(), key=lambda kv: -kv[1])),
    }


def print_table(spec: dict, results: dict[str, dict], steps: list[Step], build_s: float, run_s: float,
                extra: list[str] | None = None) -> tuple[bool, list[dict]]:
    """Print the table to stdout and failure details to stderr; (True when nothing failed, the rows)."""
    table = rows(spec, results)
    head = ("op", "route", "since", "source", "exact", "refused", "wrong", "errors", "time", "result")
    lines = [head]
    for row in table:
        lines.append((row["op"], row["route"], row["since"], row["source"], str(row["exact"]), str(row["refused"]),
                      str(row["wrong"]), str(row["error"]), f"{row['seconds']:.2f}s", row["status"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for i, line in enumerate(lines):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for row in table:
        if row["status"] not in ("proven",):
            print(f"{row['op']}: {row['status']}: {row['reason']}")
    for _, reason in spec.get("skipped", []):
        print(f"not verified: {reason}")
    s = summary(table)
    built = ", ".join(f"{st.name} {'reused' if st.reused else f'{st.seconds:.1f}s'}" for st in steps)
    print(f"{s['proven']}/{s['overloads']} overloads proven ({s['runnable']} runnable here); "
          + ", ".join(f"{n} {c}" for c, n in s["by_category"].items() if c != "proven"))
    print(f"build {build_s:.1f}s ({built}); samples {run_s:.1f}s")
    for line in extra or []:
        print(line)
    for row in table:
        if row["status"] in FAILING:
            print(f"shimgen: verify: {row['op']} failed:", file=sys.stderr)
            for f in row["failures"] or [row["reason"]]:
                print(f"  {f}", file=sys.stderr)
    return s["failing"] == 0, table


# ---- the coverage report ------------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(table: list[dict], info: dict[str, Any]) -> str:
    s = summary(table)
    out = ["# shimgen --verify coverage", ""]
    out += [f"- {k}: {v}" for k, v in info.items()]
    out += [f"- overloads: {s['overloads']}; runnable on this machine: {s['runnable']}; proven: {s['proven']} "
            f"({100 * s['proven_share_of_runnable']:.1f}% of runnable); with OpInfo samples: {s['from_opinfo']}",
            f"- samples: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in s["samples"].items()), ""]
    out += ["## Summary", "", "| category | overloads |", "|---|---|"]
    out += [f"| {c} | {n} |" for c, n in s["by_category"].items()]
    routes = sorted({row["route"] for row in table})
    cats = list(s["by_category"])
    out += ["", "## By route", "", "| route | " + " | ".join(cats) + " |", "|---|" + "---|" * len(cats)]
    for route in routes:
        counts = Counter(row["category"] for row in table if row["route"] == route)
        out.append(f"| {route} | " + " | ".join(str(counts.get(c, 0)) for c in cats) + " |")
    unproven = [row for row in table if row["status"] != "proven"]
    actions = {g["group"]: g.get("action", "") for g in reason_groups()}
    out += ["", "## Not proven, by reason", "", "| reason | overloads | what a maintainer can do |", "|---|---|---|"]
    out += [f"| {g} | {n} | {_md_escape(actions.get(g, ''))} |" for g, n in s["reason_groups"].items()]
    for g in s["reason_groups"]:
        members = [row for row in unproven if row.get("group") == g]
        out += ["", f"### {g} ({len(members)})", "", "| op | route | status | reason | aten's first error |",
                "|---|---|---|---|---|"]
        out += [f"| {row['op']} | {row['route']} | {row['status']} | {_md_escape(row['reason'][:200])} | "
                f"{_md_escape(row.get('aten_error', '')[:200])} |" for row in members]
    out += ["", "## Every overload", "",
            "| op | route | since | tags | source | exact | refused | wrong | errors | aten fails | time | status |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in table:
        out.append(f"| {row['op']} | {row['route']} | {row['since']} | {', '.join(row['tags'])} | {row['source']} | "
                   f"{row['exact']} | {row['refused']} | {row['wrong']} | {row['error']} | {row['aten_fails']} | "
                   f"{row['seconds']:.2f}s | {row['status']} |")
    return "\n".join(out) + "\n"


def write(path: str, table: list[dict], info: dict[str, Any]) -> list[str]:
    """Write PATH (Markdown) and PATH's .json sibling; returns both paths."""
    base, ext = os.path.splitext(path)
    json_path = base + ".json" if ext.lower() != ".json" else base + ".report.json"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(markdown(table, info))
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump({"info": info, "summary": summary(table), "ops": table}, f, indent=1)
        f.write("\n")
    return [path, json_path]
