"""`python -m shimgen.dev COMMAND [ARGS...]`: the developer commands that measure or record shimgen's facts.

Each command is one module's `main(argv)`, imported only when named, so `--help` starts nothing heavy. The
processes these commands start inside other torch runtimes (the probe's runner, the provers' and the verifier's
workers) keep their own `python -m` entry; a person never types those.
"""

from __future__ import annotations

import importlib
import sys

# name -> (module whose main(argv) runs it, one line of help)
COMMANDS: dict[str, tuple[str, str]] = {
    "probe": ("shimgen.proofs.probe.command",
              "run the dispatcher probe on the torch runtimes; --write records data/probe.yaml"),
    "matrix": ("shimgen.proofs.verify.matrix",
               "the compatibility matrix: wrappers built for older targets, run against later runtimes"),
    "prove": ("shimgen.proofs.provers.scalars",
              "measure the Scalar facts; prove compositions, equivalents, number rules, legacy shims against aten"),
    "release": ("shimgen.proofs.provers.release", "add a torch release end to end (`release add X.Y.Z`)"),
    "history": ("shimgen.facts.history", "derive data/history.json: aten's schemas of every release"),
    "upstream-surface": ("shimgen.facts.upstream_surface",
                         "record a release's upstream ops.h surface into data/upstream_surface.yaml"),
    "device-shims": ("shimgen.facts.libtorch_device_shims",
                     "derive data/device_shims.json from libtorch's device C shim headers"),
    "overlay-needs": ("shimgen.proofs.overlay_needs",
                      "the wrappers that need shimgen's overlay at a target; --doc rewrites docs/routes.md's list"),
    "real-use": ("shimgen.proofs.real_use",
                 "count each aten op's call sites in real extensions and models; --write records data/real_use.json"),
    "overlay-build": ("shimgen.proofs.verify.overlay", "build libshimgen_overlay.so for the installed torch"),
    "markers": ("shimgen.proofs.libtorch_markers",
                "derive data/releases.yaml's libtorch_markers (each release's first C function) and check the exports"),
    "exports": ("shimgen.proofs.libtorch_exports",
                "measure the stable C functions each runtime's libtorch exports; --write records data/libtorch_exports.json"),
    "derive-members": ("shimgen.tools.porting.derive_members",
                       "derive data/stable_tensor_members.json from the runtimes' stable headers"),
}

PROG = "python -m shimgen.dev"


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"usage: {PROG} COMMAND [ARGS...]   ({PROG} COMMAND --help: the command's options)", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        sys.stderr.write(f"{PROG}: unknown command {name!r} (one of: {', '.join(COMMANDS)})\n")
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
