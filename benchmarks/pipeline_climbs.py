"""How often one generation climbs back up the pipeline: a small run (pipeline.generate of a few ops, cache off)
traced by module.

    SHIMGEN_CACHE_DIR= python benchmarks/pipeline_climbs.py [--ops add,pad,amax,sort,full,mul.Scalar] [--list]

Every distinct call from a function of one shimgen module into a function of another is a move; a move into a
module earlier in the pipeline order (ORDER: pipeline, plan, the signature stage, the routes, C shim signatures,
overloads, the emitters, the templates and layouts, then parse and the table, the facts, base) is a climb. The
second count leaves out calls into the values handed down (Plan, the cpp_model classes) and the cache's
callbacks: what remains are the stages asking an earlier stage again. --list prints them by module pair.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ORDER = ["generate.pipeline", "generate.plan", "generate.signatures.stage", "generate.signatures.cpp",
         "generate.routes", "generate.routes.aten_shim", "generate.routes.overlay_shim", "generate.routes.dispatcher",
         "generate.routes.sibling", "generate.routes.equivalent", "generate.routes.legacy_shim",
         "generate.routes.device_shim", "generate.routes.composition", "generate.signatures.c",
         "generate.overloads", "generate.cpp_model", "generate.emit.c", "generate.emit.cpp", "generate.kernel_sections",
         "generate.emit.py", "generate.templates", "generate.emit.fmt", "generate.emit.cpp_layout",
         "generate.emit.py_layout", "generate.stamp", "generate.parse", "generate.validate", "generate.table"]
VALUES = ("generate.plan", "generate.cpp_model")  # the values handed down: calling their methods is no climb


def rank(module: str) -> int:
    if module in ORDER:
        return ORDER.index(module)
    return len(ORDER) + (0 if module.startswith("facts.") else 1)


def trace(ops: list[str]) -> list[tuple[str, str, str, str]]:
    """(caller module, caller function, callee module, callee function) of each distinct cross-module call."""
    from shimgen.generate import pipeline

    seen: set[tuple[str, str, str, str]] = set()
    order = []

    def profile(frame, event, arg):  # noqa: ANN001
        if event != "call" or frame.f_back is None:
            return
        callee, caller = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
        if callee.startswith("shimgen.") and caller.startswith("shimgen.") and callee != caller:
            edge = (caller[8:], frame.f_back.f_code.co_qualname, callee[8:], frame.f_code.co_qualname)
            if edge not in seen:
                seen.add(edge)
                order.append(edge)

    sys.setprofile(profile)
    try:
        pipeline.generate(ops, None, None)
    finally:
        sys.setprofile(None)
    return order


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default="add,pad,amax,sort,full,mul.Scalar")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    moves = trace(args.ops.split(","))
    climbs = [e for e in moves if rank(e[2]) < rank(e[0])]
    stages = [e for e in climbs if e[2] not in VALUES and not e[0].startswith(("base.", "facts."))]
    modules = {e[0] for e in moves} | {e[2] for e in moves}
    print(f"modules {len(modules)}, moves {len(moves)}, climbs {len(climbs)}; "
          f"stage to earlier stage: {len(stages)} over {len({(e[0], e[2]) for e in stages})} module pairs; "
          f"moves into generate.signatures.cpp: {sum(e[2] == 'generate.signatures.cpp' for e in moves)}")
    if args.list:
        pairs: dict[tuple[str, str], list[str]] = {}
        for e in stages:
            pairs.setdefault((e[0], e[2]), []).append(f"{e[1]} -> {e[3]}")
        for (a, b), calls in sorted(pairs.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(calls):3d} {a} -> {b}: {'; '.join(calls)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
