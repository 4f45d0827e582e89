"""Which wrappers need shimgen's overlay: those an extension targeting a release can call only with SHIMGEN_OVERLAY
defined (and libshimgen_overlay linked), each with the reason no libtorch route carries it.

    python -m shimgen.overlay_needs [--ops LIST] [--target 2.13] [--readme README.md]

Without --readme it prints the list and the count; with it, it rewrites the README's section between the
`<!-- overlay-needs -->` markers (the list is generated, never typed)."""

from __future__ import annotations

import argparse
import re
import sys

from shimgen import emit_cpp, plan as plan_mod, sig_cpp
from shimgen.parse import NativeYaml
from shimgen.plan import DEFAULT_WORLD, WORLDS
from shimgen.versions import Version

BEGIN, END = "<!-- overlay-needs -->", "<!-- /overlay-needs -->"


def needs(plan: plan_mod.Plan, level: Version) -> list[tuple[str, str]]:
    """(aten overload, reason) for every wrapper available at `level` with the overlay but not without it."""
    wide = plan.in_world(WORLDS[0])
    default = plan.in_world(DEFAULT_WORLD)
    here = {w.op.name: w for w in sig_cpp.wrappers(default)[0]}
    result = []
    for w in sig_cpp.wrappers(wide)[0]:
        if sig_cpp.active(w, level) is None:
            continue
        mine = here.get(w.op.name)
        if mine is not None and sig_cpp.active(mine, level) is not None:
            continue
        result.append((w.op.name, emit_cpp.why_hidden(w.op.name, level, mine, w, default)))
    return sorted(result)


def _every_op() -> list[str]:
    return sorted(NativeYaml().by_name)


def section(rows: list[tuple[str, str]], level: Version, what: str) -> str:
    lines = [BEGIN, "", f"{len(rows)} wrappers of {what} need the overlay at target {level} "
             f"(`python -m shimgen.overlay_needs --target {level} --readme README.md`):", "",
             "| aten overload | why no libtorch route carries it |", "|---|---|"]
    for op, why in rows:
        why = re.sub(r"^aten::\S+ ", "", why).replace("|", "\\|")
        lines.append(f"| `{op}` | {why} |")
    return "\n".join([*lines, "", END])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", help="a list (default: every op of the installed torch's yaml)")
    ap.add_argument("--target", default="2.13")
    ap.add_argument("--readme", help="rewrite this file's generated section")
    args = ap.parse_args(argv)
    level = Version.parse(args.target)
    ops = args.ops.split(",") if args.ops else _every_op()
    plan = plan_mod.make(ops, additive=True)
    rows = needs(plan, level)
    what = args.ops or "the whole yaml"
    if args.readme:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
        if BEGIN not in text or END not in text:
            print(f"shimgen: {args.readme} has no {BEGIN} ... {END} section", file=sys.stderr)
            return 2
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(head + section(rows, level, what) + tail)
    else:
        for op, why in rows:
            print(f"{op}: {why}")
    print(f"{len(rows)} wrappers need the overlay at target {level}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
