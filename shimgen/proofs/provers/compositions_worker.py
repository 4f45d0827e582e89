"""Run by each runtime's own interpreter (imports torch only): is aten's overload exactly the kernel composition
the generated wrapper computes (scalar.h's shimgen::detail::<kernel>_select, mirrored step by step with the same
aten calls), on every dtype, shape (broadcasting, 0-dim, empty; inf, nan, -0.0 among the values) and number tried,
errors included, and in its float64 gradients?

Reads {overload: {"kernel": name, "module": the kernel's prover module, "prover": the hook that proves it, "args":
[the overload's argument names], "bind": [the kernel's arguments in the order of its parameters: the overload's
argument names, or numbers], and the facts of the kernel's registry entry (shimgen/generate/routes/kernels,
prover_spec: `mirror`, `nan_gradient`, ...)}} on stdin, writes {overload: {"compared": n, "both_ok": n, "refused":
n, "wrong": example or ""}}. A refusal (the wrapper's own `shimgen:` error) is counted, never a difference.

This file is the driver only: each row runs the hook its entry names (`prover`) from the prover module its entry
names (`module`: kernels/<module>.py, paired by file name with the entry's module, loaded by its path), which holds
that kernel's hooks, mirrors, samples and constants; what several share is mirror_common.py. No kernel is known
here by its name."""

import json
import sys

# beside this script (its folder is on sys.path): the comparison the provers' workers share, the kernels' shared
# mirrors and the loader of their prover modules
from mirror_common import prover_module
from worker_common import ROW, TEXT_DIFFERS, exit_now


def main():
    spec = json.load(sys.stdin)
    report = {}
    for op, s in spec.items():
        ROW[0] = op  # error texts that differ are kept per row (worker_common.same)
        report[op] = prover_module(s["module"]).PROVERS[s["prover"]](op, s)  # the kernel's registry entry names both
    for op, (n, example) in TEXT_DIFFERS.items():
        report[op].update(text_differs=n, text_example=list(example))
    print(json.dumps(report))


if __name__ == "__main__":
    exit_now(main())
