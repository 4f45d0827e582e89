"""`python -m shimgen.dev matrix`: the compatibility matrix. Generated wrappers, built once per targeted
release, run on every torch runtime at or after the target.

    python -m shimgen.dev matrix --ops LIST --targets 2.9,2.10,2.12,2.13 \\
        --runtimes 2.9.1,2.10.0,2.11.0,2.12.1,2.13.0,2.14.1,2.15.0 [--build-dir B] [--json PATH]

1. generate the surface for the op set (B/generated, as `shimgen --ops LIST --out B/generated`)
2. per target T: the round-trip extension (shimgen.proofs.verify.roundtrip) with -DTORCH_TARGET_VERSION=T, from the
   installed torch's stable headers, exercising the variant each wrapper has at T
3. per runtime R: the overlay (the generated C shims the wrappers call at some target <= R and R's libtorch
   lacks), compiled against R's own ATen headers and libraries: the overlay is not ABI-stable. A shim that
   does not compile there is left out (a stub returning an error keeps the extension loadable) and its op
   reported as "no overlay for this runtime"
4. per (T, R), T <= R: the samples runner under R's own interpreter (shimgen.proofs.verify.runtimes), comparing each
   round-trip op with R's aten
5. an ops x (target, runtime) table; exit 1 when a cell is a failure caused by shimgen (ok/FAIL/CRASH/absent/
   load failed/build failed; see LEGEND)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c
from shimgen.generate import pipeline, routes
from shimgen.generate.signatures import c as sig_c
from shimgen.generate.emit.cpp import read_wrapper_headers
from shimgen.base.errors import Refusal, ShimgenError
from shimgen.generate.parse import NativeYaml
from shimgen.generate.plan import WORLDS, Plan, World, world_named
from shimgen.generate.signatures.stage import wrappers
from shimgen.proofs.verify import CHUNK_KERNELS, build, chunks, devices, hidden, overlay, roundtrip, runtimes
from shimgen.proofs.verify import names as world_names
from shimgen.proofs.verify.report import verdict
from shimgen.proofs.verify.runner_client import RunnerFailed, run_samples
from shimgen.facts.versions import Version

DEFAULT_TARGETS = "2.9,2.10,2.12,2.13"
# Cell codes, what they mean, and whether shimgen is to blame.
LEGEND = {
    "ok": ("every sample matched the runtime's aten", False),
    "FAIL": ("a sample differed from aten (details below)", True),
    "CRASH": ("the wrapper crashed the runner", True),
    "absent": ("the wrapper compiles at this target, but the runtime's aten lacks the op (its tag is too old)",
               True),
    "removed": ("aten removed the op in this runtime (newer than the yaml): extensions using it fail here", False),
    "no-ovl": ("generated C shim: no overlay for this runtime (the shim does not compile against its ATen "
               "headers; the overlay is not ABI-stable)", False),
    "refused": ("the wrapper refused every sample aten ran (a `shimgen:` error naming the limitation)", False),
    "n/r": ("not runnable here: aten raised on every sample on this machine (e.g. a CUDA-only op), or no sample "
            "could be made", False),
    "n/t": ("not testable at this target: the round-trip kernel cannot receive or return a type through this "
            "release's dispatcher", False),
    ".": ("hidden at this target: the wrapper does not compile there (by design)", False),
    "hidden": ("hidden in this build world (--world): a compile error there naming what it needs, e.g. the "
               "overlay (by design)", False),
    "load!": ("the round-trip extension or overlay failed to load on this runtime", True),
    "build!": ("the round-trip extension failed to build at this target", True),
}
_DECL_RE = re.compile(r"AOTITorchError (aoti_torch_\w+)\((.*)\);")


@dataclass(frozen=True)
class Cell:
    code: str
    detail: str = ""

    @property
    def blames_shimgen(self) -> bool:
        return LEGEND[self.code][1]


@dataclass
class Target:
    release: Version
    kernels: list[roundtrip.Kernel]
    skipped: dict[str, str]  # op -> why it has no kernel ("hidden at ..." or a Refusal line)
    library: str | None = None
    error: str = ""


@dataclass
class Overlay:
    library: str | None
    missing: dict[str, str]  # op -> why its shim is not in the overlay for this runtime


# ---- building ----------------------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _link_flags(torch: build.Torch) -> list[str]:
    """Link against a torch's libraries without an rpath: the runtime that loads the library provides them."""
    return [f"-L{torch.lib_dir}", "-ltorch", "-ltorch_cpu", "-lc10"]


def roundtrip_steps(plan: Plan, out: str, t: Target, bdir: str, torch: build.Torch, cxx: str,
                    cxx_id: str, device: str | None = None,
                    world: World = WORLDS[0]) -> tuple[list[build.Step], build.Step]:
    """The compile steps (one per chunk of kernels, as `shimgen --verify` splits them: a whole-yaml surface
    compiles in parallel) and the link step of the round-trip extension at target t; with `device`, of the
    device route's wrappers, torch::stable::<device>::. `world`: the build world compiled (its macros)."""
    library, suffix = world_names(world)
    headers = [read_wrapper_headers(out), *(_read(os.path.join(out, h)) for h in emit_c.HEADERS)]
    groups = chunks(t.kernels, CHUNK_KERNELS, lambda k: k.op.name)
    compile_steps = []
    for i, group in enumerate(groups):
        name = roundtrip.SOURCE if len(groups) == 1 else roundtrip.SOURCE.replace(".cpp", f"-{i}.cpp")
        src = os.path.join(bdir, f"target-{t.release}{suffix}", name)
        if device is None:
            _write(src, roundtrip.source(plan, group))
        else:
            _write(src, roundtrip.source(plan, group, roundtrip.device_namespace(device), (routes.get(device).header,)))
        obj = src[: -len(".cpp")] + ".o"
        compile_cmd = [cxx, "-O1", "-fPIC", *torch.stable_flags(out, macros=world.macros),
                       f"-DTORCH_TARGET_VERSION={t.release.hex}", "-c", src, "-o", obj]
        what = f"round-trip extension at {t.release} (compile" + (f" {i + 1}/{len(groups)})" if len(groups) > 1 else ")")
        compile_steps.append(build.Step(what, obj, compile_cmd, [_read(src), *headers, torch.version, cxx_id]))
    lib = os.path.join(bdir, f"target-{t.release}{suffix}", library)
    link_cmd = [cxx, *build.CXX_FLAGS, *(s.output for s in compile_steps), "-o", lib, *_link_flags(torch)]
    if not world.overlay:  # libtorch alone: a symbol it does not export is a link error, not a load failure
        link_cmd.append("-Wl,--no-undefined")
    link_step = build.Step(f"round-trip extension at {t.release} (link)", lib, link_cmd,
                           [s.digest for s in compile_steps])
    return compile_steps, link_step


def exported_shims(torch: build.Torch) -> set[str]:
    """The aoti_torch_aten_* functions a runtime's libtorch exports (read with nm: nothing is loaded)."""
    lib = os.path.join(torch.lib_dir, "libtorch_cpu.so")
    proc = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ShimgenError(f"cannot list the symbols of {lib}: {proc.stderr.strip()[:200]}")
    return {line.split()[-1] for line in proc.stdout.splitlines() if "aoti_torch_aten_" in line}


def _stubs(plan: Plan, ops: list, reason: str) -> str:
    """Definitions that only return an error, for shims that did not compile against this runtime."""
    if not ops:
        return ""
    header = emit_c.declarations(emit_c.emit(resolve(replace(plan, ops=ops, notes=[]))))
    lines = ["", "// Stubs: these shims do not compile against this runtime's ATen headers (" + reason + ").",
             'extern "C" {']
    for name, params in _DECL_RE.findall(header):
        lines.append(f"AOTI_TORCH_EXPORT AOTITorchError {name}({params}) {{ return AOTI_TORCH_FAILURE; }}")
    return "\n".join(lines + ['} // extern "C"', ""])


def _ops_in_errors(log: str, source: str, path: str, ops: list) -> set[str]:
    """The ops whose definition (or per-operator include) the compiler's errors point at."""
    lines = source.splitlines()
    where: dict[int, str] = {}  # line number -> op
    by_schema = {f"// aten::{op.schema}": op.name for op in ops}
    by_root: dict[str, list[str]] = {}
    for op in ops:
        by_root.setdefault(op.f.root_name, []).append(op.name)
    current = None
    for i, text in enumerate(lines, 1):
        m = re.match(r"#include <ATen/ops/(\w+)\.h>", text)
        if m:
            for name in by_root.get(m.group(1), []):
                where[i] = name  # an include line blames every op of that root (the last one here)
            continue
        if text.startswith("// aten::"):
            current = by_schema.get(text.strip())
        if current:
            where[i] = current
    blamed = set()
    base = os.path.basename(path)
    for m in re.finditer(re.escape(base) + r":(\d+):", log):
        n = int(m.group(1))
        if n in where:
            blamed.add(where[n])
            if lines[n - 1].startswith("#include"):
                root = re.match(r"#include <ATen/ops/(\w+)\.h>", lines[n - 1]).group(1)
                blamed.update(by_root.get(root, []))
    return blamed


def build_overlay(plan: Plan, runtime: runtimes.Runtime, needed: list, bdir: str, cxx: str, cxx_id: str,
                  jobs: int) -> Overlay:
    """The overlay for one runtime: the needed ops' generated shims its libtorch lacks, built against its headers.
    Ops whose shim does not compile there are dropped (one retry per batch of errors) and stubbed."""
    exported = exported_shims(runtime.torch)
    ops = []
    for op in needed:
        try:
            sig_c.build(op, plan.table)
        except Refusal:
            continue
        if plan.manifest.upstream_shim(op.name, runtime.release) or sig_c.shim_name(op) in exported:
            continue
        ops.append(op)
    if not ops:
        return Overlay(None, {})
    root = os.path.join(bdir, f"overlay-{runtime.name}")
    lib = os.path.join(root, overlay.LIBRARY)
    dropped: dict[str, str] = {}
    while True:
        kept = [op for op in ops if op.name not in dropped]
        files = overlay.sources(replace(plan, ops=kept, notes=[]), runtime.torch.version) if kept else {
            emit_c.HEADER: "", emit_c.SOURCE: "#include <torch/csrc/inductor/aoti_torch/c/shim.h>\n"}
        stub_ops = [op for op in ops if op.name in dropped]
        source = files[emit_c.SOURCE] + _stubs(plan, stub_ops, f"torch {runtime.name}")
        src = os.path.join(root, "src", emit_c.SOURCE)
        for rel, text in {**files, emit_c.SOURCE: source}.items():
            if rel == emit_c.HEADER and not text:
                continue
            _write(os.path.join(root, "src", rel), text)
        cmd, link = build.library(cxx, runtime.torch.aten_flags(os.path.join(root, "src")), src, lib,
                                  _link_flags(runtime.torch))
        step = build.Step(f"overlay for torch {runtime.name}", lib, cmd, [source, runtime.torch.version, cxx_id], link)
        if not build.run_steps([step], jobs=jobs, check=False):
            return Overlay(lib, dropped)
        blamed = _ops_in_errors(step.log, source, src, kept) or {op.name for op in kept}
        first = next((ln for ln in step.log.splitlines() if "error" in ln), "").split("error:", 1)[-1].strip()
        for name in blamed:
            dropped[name] = f"its C shim does not compile against torch {runtime.name}'s headers: {first[:200]}"
        if not kept:
            return Overlay(None, dropped)


# ---- running -----------------------------------------------------------------------------------------------


def classify(result: dict | None, yaml_release: Version | None, runtime: runtimes.Runtime) -> Cell:
    """One cell from the samples runner's result for an op (as `shimgen --verify` judges it: report.verdict)."""
    if result is None:
        return Cell("CRASH", "no result")
    status, reason = verdict(result)
    if status == "absent":
        if yaml_release is not None and runtime.release > yaml_release:
            return Cell("removed", reason)
        return Cell("absent", reason)
    if status == "proven":
        return Cell("ok")
    if status == "refused":
        return Cell("refused", reason[:300])
    if status == "ERROR":
        return Cell("CRASH", reason[-300:])
    if status.startswith("WRONG"):
        crashed = [f for f in result.get("failures", []) if "the wrapper crashed" in f or "the wrapper hung" in f]
        return Cell("CRASH", "; ".join(crashed)[:300]) if crashed else Cell("FAIL", "; ".join(result["failures"])[:600])
    return Cell("n/r", reason[:300])  # unproven: nothing ran to a result on this machine


@dataclass
class Matrix:
    ops: list[str]
    pairs: list[tuple[Version, runtimes.Runtime]]
    cells: dict[tuple[str, str, str], Cell]  # (op, target, runtime) -> cell

    def failures(self) -> list[tuple[str, str, str, Cell]]:
        return [(op, t, r, c) for (op, t, r), c in self.cells.items() if c.blames_shimgen]

    def to_json(self) -> dict:
        return {
            "ops": self.ops,
            "pairs": [[str(t), r.name] for t, r in self.pairs],
            "cells": {op: {f"{t}/{r}": {"code": c.code, "detail": c.detail}
                           for (o, t, r), c in self.cells.items() if o == op} for op in self.ops},
        }


def render(m: Matrix) -> str:
    head1 = ["target"] + [str(t) for t, _ in m.pairs]
    head2 = ["op \\ runtime"] + [r.name for _, r in m.pairs]
    rows = [[op] + [m.cells[(op, str(t), r.name)].code for t, r in m.pairs] for op in m.ops]
    table = [head1, head2, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head1))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(2, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += [f"{code:>7}  {text}{'  [shimgen failure]' if blame else ''}" for code, (text, blame) in LEGEND.items()]
    details = [(op, t, r, c) for (op, t, r), c in m.cells.items() if c.code not in ("ok", ".") and c.detail]
    if details:
        lines += ["", "details:"]
        for op, t, r, c in sorted(details, key=lambda x: (not x[3].blames_shimgen, x[0], Version.parse(x[1]))):
            lines.append(f"  {op} at {t} on {r}: {c.code}: {c.detail}")
    lines += ["", *counts(m)]
    n_fail = len(m.failures())
    n_cells = sum(1 for c in m.cells.values() if c.code != ".")
    lines += ["", f"{n_cells} cells, {n_fail} failures caused by shimgen"]
    return "\n".join(lines)


def counts(m: Matrix) -> list[str]:
    """How many wrappers each cell code has per (target, runtime) column: the whole-surface run's summary."""
    head = ["cell \\ target/runtime"] + [f"{t}/{r.name}" for t, r in m.pairs] + ["shimgen's fault"]
    table = [head]
    for code, (_, blame) in LEGEND.items():
        row = [sum(1 for op in m.ops if m.cells.get((op, str(t), r.name), Cell(".")).code == code) for t, r in m.pairs]
        if any(row):
            table.append([code, *map(str, row), "yes" if blame else "no"])
    table.append(["total", *(str(len(m.ops)) for _ in m.pairs), ""])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in table]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def run_matrix(ops: list[str] | None, targets: list[Version], runtime_names: list[str], bdir: str,
               yaml_path: str | None = None, since: str | None = None, jobs: int = 2,
               log=sys.stderr, device: str | None = None, recorded: str | None = None,
               world: World = WORLDS[0], samples_device: str = "cpu") -> Matrix:
    """`device`: run the torch::stable::<device>:: wrappers (the device route) instead of the default ones.
    `samples_device`: where the samples run (shimgen.proofs.verify.devices: cpu, cuda, cuda:N); each runtime is asked
    first whether it has that device.
    `world`: the build world the round-trip extensions are compiled as (default: with SHIMGEN_OVERLAY); a wrapper
    hidden in it at a target is a `hidden` cell there.
    `recorded`: a recording of PyTorch's test corpora (shimgen.proofs.verify.record) whose calls every runtime also
    runs, before shimgen's own samples (aten of each runtime is still the reference)."""
    found, missing = runtimes.resolve(runtime_names)
    if missing:
        raise ShimgenError(runtimes.missing_reason(missing))
    for r in found:
        devices.require(samples_device, r.python)
    torch = build.find_torch()
    headers = Version.parse_release(torch.version)
    for t in targets:
        if t > headers:
            raise ShimgenError(f"target {t} is newer than the installed torch's headers ({headers})")
    bdir = os.path.abspath(bdir)
    out = os.path.join(bdir, "generated")
    files, wide = pipeline.generate(ops, yaml_path, since, out)
    pipeline.write(out, files)
    plan = wide.in_world(world)
    ws, _ = wrappers(wide)
    names = [w.op.name for w in (routes.get(device).wrappers(wide) if device else ws)]
    cxx = build.compiler()
    cxx_id = build.compiler_id(cxx)

    tgts = []
    for t in targets:
        ks, skipped = roundtrip.kernels(wide if device else plan, headers, t, device)
        by_world = {} if device else {h["op"]: f"hidden in this build: needs {h['needs']}: {h['reason']}"
                                      for h in hidden(wide, world, t)}
        # A wrapper this world does not build at all (a refusal note) that the widest hides at t is hidden here too
        hidden_wide = {w.op.name: f"hidden at {t}" for w in ws if roundtrip.active_variant(w, t) is None}
        tgts.append(Target(t, ks, {**hidden_wide, **{op: why for op, why in skipped}, **by_world}))
    steps = {t.release: roundtrip_steps(plan, out, t, bdir, torch, cxx, cxx_id, device, world)
             for t in tgts if t.kernels}
    print(f"shimgen: matrix: building the round-trip extension for {len(steps)} targets in {bdir}", file=log)
    failed = build.run_steps([s for compiles, _ in steps.values() for s in compiles], jobs=jobs, check=False)
    for t in tgts:
        if t.release not in steps:
            continue
        compile_steps, link_step = steps[t.release]
        broken = [s for s in compile_steps if s in failed]
        if broken:
            t.error = "\n".join(broken[0].log.strip().splitlines()[-20:])
            continue
        if build.run_steps([link_step], check=False):
            t.error = link_step.log.strip()[-2000:]
            continue
        t.library = link_step.output

    by_name = {op.name: op for op in plan.ops}
    overlays: dict[str, Overlay] = {}
    for r in found:
        needed = sorted({k.op.name for t in tgts if t.release <= r.release for k in t.kernels
                         if k.variant.route.overlay})
        if needed:
            print(f"shimgen: matrix: building the overlay for torch {r.name} ({len(needed)} ops)", file=log)
        overlays[r.name] = build_overlay(plan, r, [by_name[n] for n in needed], bdir, cxx, cxx_id, jobs)

    native = plan.native or NativeYaml(yaml_path)
    pairs = [(t.release, r) for t in tgts for r in found if t.release <= r.release]
    cells: dict[tuple[str, str, str], Cell] = {}
    for t in tgts:
        specs = {k.op.name: {**roundtrip.op_spec(k, plan, native), "wrapper": k.wrapper.name} for k in t.kernels}
        for r in found:
            if t.release > r.release:
                continue
            key = lambda op: (op, str(t.release), r.name)  # noqa: E731
            ov = overlays[r.name]
            run_ops = []
            for op in names:
                if op not in specs:
                    why = t.skipped.get(op, "")
                    cells[key(op)] = (Cell("hidden", why) if why.startswith("hidden in this build") else
                                      Cell(".", "") if why.startswith("hidden") else Cell("n/t", why))
                elif t.library is None:
                    cells[key(op)] = Cell("build!", t.error[-600:])
                elif specs[op]["overlay"] and op in ov.missing:
                    cells[key(op)] = Cell("no-ovl", ov.missing[op])
                else:
                    run_ops.append(specs[op])
            if not run_ops:
                continue
            if recorded and not os.path.isfile(recorded):
                print(f"shimgen: matrix: note: no recording at {recorded}: shimgen's own samples only", file=log)
                recorded = None
            spec = {"overlay": ov.library, "roundtrip": t.library, "ops": run_ops, "skipped": [],
                    "recorded": recorded, "device": samples_device}
            if device:
                spec["roundtrip_ns"] = roundtrip.device_namespace(device)
            work = os.path.join(bdir, f"run-{t.release}-on-{r.name}{world_names(world)[1]}")
            os.makedirs(work, exist_ok=True)
            spec_path = os.path.join(work, "verify_ops.json")
            _write(spec_path, json.dumps(spec, indent=1) + "\n")
            print(f"shimgen: matrix: target {t.release} on torch {r.name} ({len(run_ops)} ops)", file=log)
            try:
                results = run_samples(spec_path, spec, os.path.join(work, "runner.log"), python=r.python)
            except RunnerFailed as e:
                for s in run_ops:
                    cells[key(s["op"])] = Cell("load!", str(e)[-300:])
                continue
            for s in run_ops:
                cells[key(s["op"])] = classify(results.get(s["op"]), plan.release, r)
    return Matrix(names, pairs, cells)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev matrix", description=__doc__.splitlines()[0])
    ap.add_argument("--ops", metavar="LIST", help="comma-separated ops, as shimgen --ops (default: the manifest's)")
    ap.add_argument("--targets", default=DEFAULT_TARGETS, metavar="LIST",
                    help=f"targeted releases X.Y (default {DEFAULT_TARGETS})")
    ap.add_argument("--runtimes", default=",".join(runtimes.RELEASES), metavar="LIST",
                    help="torch runtimes X.Y.Z: venvs torch-X.Y.Z under $SHIMGEN_RUNTIMES (default: all)")
    ap.add_argument("--build-dir", metavar="B", default=os.path.join(tempfile.gettempdir(), "shimgen-matrix"))
    ap.add_argument("--yaml", metavar="PATH")
    ap.add_argument("--since", metavar="X.Y")
    ap.add_argument("--json", metavar="PATH", help="also write the cells as JSON")
    ap.add_argument("--route", choices=["cpu"],
                    help="run the device route's torch::stable::<route>:: wrappers instead of the default ones")
    ap.add_argument("--device", default="cpu", metavar="D",
                    help="where the samples run: cpu (default), cuda or cuda:N (every sample's tensors move there)")
    ap.add_argument("--recorded", default="none", metavar="PATH",
                    help="recorded OpInfo/common_nn calls each runtime also runs before shimgen's own samples: a "
                         "recording file, `auto` (the installed torch's cached recording, made by `shimgen "
                         "--verify`, when there is one) or `none` (default)")
    ap.add_argument("--world", default=WORLDS[0].label, choices=[w.label for w in WORLDS],
                    help="the build the round-trip extensions are compiled as: `overlay` (default, -DSHIMGEN_OVERLAY)"
                         ", `default` (no macro: libtorch alone; wrappers hidden there are `hidden` cells), ...")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel compiles (default 2)")
    args = ap.parse_args(argv)
    try:
        ops = [o.strip() for o in args.ops.split(",") if o.strip()] if args.ops else None
        targets = [Version.parse(t, "--targets entry") for t in args.targets.split(",") if t.strip()]
        names = [n.strip() for n in args.runtimes.split(",") if n.strip()]
        recorded = None if args.recorded == "none" else args.recorded
        if args.recorded == "auto":
            from shimgen.proofs.verify import record  # start-up: the recorder imports torch's test corpora

            path = record.cache_path(build.find_torch().version)
            recorded = path if record.load(path) is not None else None
        samples_device = devices.parse(args.device)
        if args.route and args.route != samples_device.partition(":")[0]:
            raise ShimgenError(f"--route {args.route} runs on {args.route} samples, not --device {args.device}")
        m = run_matrix(ops, targets, names, args.build_dir, args.yaml, args.since, args.jobs, device=args.route,
                       recorded=recorded, world=world_named(args.world), samples_device=samples_device)
    except ShimgenError as e:
        print(f"shimgen: error: {e.line()}", file=sys.stderr)
        return 2
    print(render(m))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(m.to_json(), f, indent=1)
    return 1 if m.failures() else 0
