"""How the whole yaml's wrappers are routed at one target, and what the device route (torch::stable::cpu::,
torch::stable::cuda::) covers of it.

    python benchmarks/count_routes.py [--target 2.13]

Prints the count of wrappers per route of the default surface (`generated_shim` needs shimgen's overlay), the
count of cpu::/cuda:: wrappers at the target, the overlay-routed wrappers that have a cpu shim, and the route of
the overloads real models reach that needed the overlay.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shimgen.generate import routes  # noqa: E402
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate import plan as plan_mod  # noqa: E402
from shimgen.generate.parse import NativeYaml  # noqa: E402
from shimgen.facts.versions import Version  # noqa: E402

REAL_MODEL = ["add.Tensor", "add_.Tensor", "addmm.default", "gelu.default", "gelu_backward.default",
              "threshold_backward.default", "addcmul.default", "pow.Tensor_Scalar"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="2.13")
    args = ap.parse_args()
    level = Version.parse(args.target, "--target")
    p = plan_mod.make(sorted(NativeYaml().by_name))
    ws = sig_cpp.wrappers(p)[0]
    route = {w.op.name: (v.route.name if (v := w.active(level)) else "hidden") for w in ws}
    print(f"whole yaml ({p.release}), target {level}: {len(ws)} wrappers")
    for r, n in sorted(collections.Counter(route.values()).items()):
        print(f"  {r:<15} {n}")
    dev = {d: {w.op.name for w in routes.get(d).wrappers(p, ws) if w.active(level)} for d in ("cpu", "cuda")}
    print(f"device route at {level}: {len(dev['cpu'])} cpu:: and {len(dev['cuda'])} cuda:: wrappers")
    over = sorted(op for op, r in route.items() if r == "generated_shim")
    with_cpu = [op for op in over if op in dev["cpu"]]
    print(f"overlay-routed wrappers with a cpu shim: {len(with_cpu)} of {len(over)}: {', '.join(with_cpu)}")
    for op in REAL_MODEL:
        print(f"  {op:<28} default: {route.get(op, '-'):<15} cpu:: {'yes' if op in dev['cpu'] else 'no':<4} "
              f"cuda:: {'yes' if op in dev['cuda'] else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
