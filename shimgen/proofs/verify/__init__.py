"""`shimgen --verify`: prove the generated files by compiling them against the installed torch and running every
wrapper against torch.ops.aten.

1. overlay: the generated C shim definitions the installed libtorch lacks -> B/libshimgen_overlay.so
2. round-trip extension: every wrapper as torch.ops.shimgen_roundtrip.<op>.<overload>, compiled with stable
   headers only (-DTORCH_STABLE_ONLY, -I DIR ahead of torch's include folder) -> B/libshimgen_roundtrip.so
3. samples runner (a subprocess): each op's samples on aten and on the round-trip op, compared
4. a per-op table; exit 1 on any mismatch, crash or build failure

Build products stay in B and are reused while their sources and flags hash the same.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import zlib
from dataclasses import replace

from shimgen.generate.emit import c as emit_c, cpp as emit_cpp
from shimgen.generate import routes
from shimgen.generate.signatures import cpp as sig_cpp, stage
from shimgen.generate import plan as plan_mod
from shimgen.base.errors import ShimgenError
from shimgen.generate.parse import NativeYaml
from shimgen.generate.templates import render
from shimgen.proofs.verify import build, overlay, record, report, roundtrip
from shimgen.proofs.verify.runner_client import RunnerFailed, run_samples
from shimgen.facts.versions import Version

ROUNDTRIP_LIBRARY = "libshimgen_roundtrip.so"
# The device route's wrappers run here (the cuda:: ones need a GPU: tests compile them, nothing runs them).
RUN_DEVICES = ("cpu",)
HELPER_LIBRARY = "libshimgen_verify_helper.so"
# Per-op limits of the samples runner: a sample that runs longer is killed (a hang) and the op goes on with the
# next; an op stops after op_seconds; each op's process may map memory_mb more than the runner had.
LIMITS = {"sample_seconds": 20, "op_seconds": 60, "memory_mb": 4096}


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


CHUNK_KERNELS = 600  # round-trip kernels per translation unit (its headers cost ~3 s of CPU)
CHUNK_SHIMS = 500  # overlay C shim definitions per translation unit (ATen's headers cost ~8 s each)


def chunks(items: list, size: int, key) -> list[list]:
    """Split items into ceil(n/size) groups by a hash of their name: adding or changing one op recompiles one
    group (while the count of groups stays), and the groups compile in parallel."""
    n = max(1, -(-len(items) // size))
    groups: list[list] = [[] for _ in range(n)]
    for item in items:
        groups[zlib.crc32(key(item).encode()) % n].append(item)
    return [g for g in groups if g]


def names(world: plan_mod.World) -> tuple[str, str]:
    """(the round-trip library's file name, the suffix of the build folder's per-world files) of a build world:
    the widest world keeps the plain names, another builds beside it (both stay reusable)."""
    if world == plan_mod.WORLDS[0]:
        return ROUNDTRIP_LIBRARY, ""
    return ROUNDTRIP_LIBRARY.replace(".so", f"-{world.label}.so"), f"-{world.label}"


def hidden(plan: plan_mod.Plan, world: plan_mod.World, installed: Version) -> list[dict]:
    """The wrappers the widest build serves at the installed release and `world`'s build does not (a compile-error
    template there: docs/routes.md "Stable means libtorch alone"), each with what it needs and the compile error's
    reason (stage.why_hidden). Empty for the widest world."""
    if world == plan_mod.WORLDS[0]:
        return []
    here_plan = plan.in_world(world)
    here = {w.op.name: w for w in sig_cpp.wrappers(here_plan)[0]}
    overlay_world = plan.in_world(plan_mod.World(overlay=True, leaky_str=world.leaky_str))
    result = []
    for w in sig_cpp.wrappers(plan.in_world(plan_mod.WORLDS[0]))[0]:
        if roundtrip.active_variant(w, installed) is None:
            continue
        mine = here.get(w.op.name)
        if mine is not None and roundtrip.active_variant(mine, installed) is not None:
            continue
        needs = ("the overlay" if not world.overlay and stage.active_in(w.op.name, overlay_world, installed)
                 else "leaky str routes (SHIMGEN_LEAKY_STR)")
        result.append({"op": w.op.name, "wrapper": w.name, "since": str(w.since), "needs": needs,
                       "reason": stage.why_hidden(w.op.name, installed, mine, w, here_plan)})
    return result


def _named_op(op: str, why: str) -> str:
    """The op a skipped entry is about: its own, or the one a refusal note names (`op add.out: ...`)."""
    m = re.match(r"op ([^,:\s]+)", why) if op == "?" else None
    return m.group(1) if m else op


def prepare(out: str, build_dir: str, ops: list[str] | None, yaml_path: str | None, since: str | None,
            plan: plan_mod.Plan | None = None, world: plan_mod.World = plan_mod.WORLDS[0]):
    """Generate the overlay, round-trip and helper sources into build_dir; return (compile steps, link steps,
    spec, notes). `plan` is the one the CLI generated DIR from (made again from ops/yaml/since when absent).
    `world`: the build the round-trip extension is compiled as (plan.World: its macros, its wrappers; by default
    the widest, -DSHIMGEN_OVERLAY); the wrappers hidden in it are reported (`hidden`), not called."""
    torch = build.find_torch()
    installed = Version.parse_release(torch.version, "installed torch version")
    plan = plan or plan_mod.make(ops, yaml_path, since)
    wide_plan, plan = plan, plan.in_world(world)
    rt_name, suffix = names(world)
    cxx = build.compiler()
    cxx_id = build.compiler_id(cxx)
    b = os.path.abspath(build_dir)
    os.makedirs(b, exist_ok=True)
    notes: list[str] = []
    compile_steps: list[build.Step] = []
    link_steps: list[build.Step] = []

    kernels, skipped = roundtrip.kernels(plan, installed)
    if not kernels:
        raise ShimgenError("--verify: no wrapper to verify")
    # Only wrappers on the generated-shim route call the overlay (the dispatcher and libtorch's shims need none).
    on_generated = {k.op.name for k in kernels if k.variant.route.overlay}
    ov_plan, ov_notes = overlay.missing_ops(replace(plan, ops=[op for op in plan.ops if op.name in on_generated]),
                                            torch)
    notes += ov_notes
    overlay_lib = None
    if ov_plan.ops:
        groups = chunks(ov_plan.ops, CHUNK_SHIMS, lambda op: op.name)
        objects = []
        for i, group in enumerate(groups):
            src_root = os.path.join(b, "overlay", str(i))
            files = overlay.sources(replace(ov_plan, ops=group), torch.version)
            for rel, text in files.items():
                _write(os.path.join(src_root, rel), text)
            obj = os.path.join(b, "overlay", f"{i}.o")
            cmd = [cxx, *build.OBJECT_FLAGS, *torch.aten_flags(src_root), "-c",
                   os.path.join(src_root, emit_c.SOURCE), "-o", obj]
            compile_steps.append(build.Step(f"overlay {i + 1}/{len(groups)}", obj, cmd,
                                            [*files.values(), torch.version, cxx_id]))
            objects.append(obj)
        overlay_lib = os.path.join(b, overlay.LIBRARY)
        cmd = [cxx, *build.CXX_FLAGS, *objects, "-o", overlay_lib, *torch.link_flags()]
        link_steps.append(build.Step("overlay (link)", overlay_lib, cmd,
                                     [s.digest for s in compile_steps if s.output in objects]))

    out_abs = os.path.abspath(out)
    headers = [emit_cpp.read_wrapper_headers(out_abs), *(_read(os.path.join(out_abs, h)) for h in emit_c.HEADERS)]
    groups = chunks(kernels, CHUNK_KERNELS, lambda k: k.op.name)
    rt_steps = []
    for i, group in enumerate(groups):
        src = os.path.join(b, "roundtrip" + suffix, f"{i}.cpp")
        _write(src, roundtrip.source(plan, group))
        obj = src[: -len(".cpp")] + ".o"
        cmd = [cxx, *build.OBJECT_FLAGS, *torch.stable_flags(out_abs, macros=world.macros), "-c", src, "-o", obj]
        rt_steps.append(build.Step(f"round-trip extension {i + 1}/{len(groups)}", obj, cmd,
                                   [_read(src), *headers, torch.version, cxx_id]))
    device_ops: dict[str, list] = {}
    for device in RUN_DEVICES:  # the device route's wrappers (torch::stable::cpu::), in the same library
        route = routes.get(device)
        dks, left_out = roundtrip.kernels(wide_plan, installed, device=device)
        skipped += left_out
        if not dks:
            continue
        src = os.path.join(b, "roundtrip" + suffix, f"device_{device}.cpp")
        _write(src, roundtrip.source(plan, dks, roundtrip.device_namespace(device), (route.header,)))
        obj = src[: -len(".cpp")] + ".o"
        cmd = [cxx, *build.OBJECT_FLAGS, *torch.stable_flags(out_abs), "-c", src, "-o", obj]  # libtorch's only
        rt_steps.append(build.Step(f"round-trip extension ({device}::)", obj, cmd,
                                   [_read(src), *headers, _read(os.path.join(out_abs, route.header)),
                                    torch.version, cxx_id]))
        device_ops[device] = dks
    compile_steps += rt_steps
    rt_lib = os.path.join(b, rt_name)
    link_cmd = [cxx, *build.CXX_FLAGS, *(s.output for s in rt_steps), "-o", rt_lib]
    if overlay_lib:
        link_cmd += [f"-L{b}", "-lshimgen_overlay", "-Wl,-rpath,$ORIGIN"]
    if not world.overlay:  # libtorch alone: a symbol it does not export is a link error here, not a load failure
        link_cmd.append("-Wl,--no-undefined")
    link_cmd += torch.link_flags()
    link_steps.append(build.Step("round-trip extension (link)", rt_lib, link_cmd,
                                 [s.digest for s in rt_steps] + [s.digest for s in link_steps]))

    helper_src = os.path.join(b, "helper", "verify_helper.cpp")
    _write(helper_src, render("verify_helper.cpp.j2", banner=plan.banner))
    helper_lib = os.path.join(b, HELPER_LIBRARY)
    cmd, link = build.library(cxx, ["-std=c++17", f"-I{torch.include_dirs[0]}"], helper_src, helper_lib,
                              [f"-L{torch.lib_dir}", "-lc10", f"-Wl,-rpath,{torch.lib_dir}"])
    compile_steps.append(build.Step("runner helper", helper_lib, cmd, [_read(helper_src), torch.version, cxx_id],
                                    link))

    native = plan.native or NativeYaml(yaml_path)
    hiding = hidden(wide_plan, world, installed)
    hidden_ops = {h["op"] for h in hiding}
    skipped = [(op, why) for op, why in skipped if _named_op(op, why) not in hidden_ops]  # reported as hidden
    spec = {
        "world": world.label,
        "overlay": overlay_lib,
        "roundtrip": rt_lib,
        "helper": helper_lib,
        "ops": [roundtrip.op_spec(k, plan, native) for k in kernels],
        "skipped": skipped,
        "hidden": hiding,
        "devices": {
            device: {"roundtrip_ns": roundtrip.device_namespace(device),
                     "ops": [{**roundtrip.op_spec(k, plan, native), "wrapper": k.wrapper.name} for k in dks]}
            for device, dks in device_ops.items()
        },
    }
    return compile_steps, link_steps, spec, notes


class Samples:
    """OpInfo's recorded calls for the ops verified, made (or read from the cache) in a background thread while
    shimgen compiles; recording says so on stderr. $SHIMGEN_VERIFY_OPINFO: `off` (shimgen's own samples only),
    `all` (record every op of the corpus), or a comma list of op names to record instead of `ops`."""

    def __init__(self, jobs: int = 2, ops: list[str] | None = None) -> None:
        setting = os.environ.get("SHIMGEN_VERIFY_OPINFO", "").strip()
        self.recording: record.Recording | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        if setting == "off":
            self.recording = record.Recording({}, None, "OpInfo samples off ($SHIMGEN_VERIFY_OPINFO=off)")
            return
        if setting == "all":
            ops = None
        elif setting:
            ops = [s.strip() for s in setting.split(",") if s.strip()]
        self.torch_version = build.find_torch().version
        self._thread = threading.Thread(target=self._record, args=(ops, jobs), daemon=True)
        self._thread.start()

    def _record(self, ops: list[str] | None, jobs: int) -> None:
        try:
            with open(os.devnull, "w") as log:
                self.recording = record.record(self.torch_version, jobs=jobs, ops=ops, log=log, progress=sys.stderr)
        except Exception as e:  # noqa: BLE001 - any failure: verify goes on with shimgen's own samples
            self.recording = record.Recording({}, None, f"recording OpInfo samples failed: {type(e).__name__}: {e}")

    def result(self) -> record.Recording:
        if self._thread is not None:
            self._thread.join()
        assert self.recording is not None
        return self.recording


def op_names(plan: plan_mod.Plan) -> list[str]:
    """The ops (`add`, `add_`) whose overloads a plan holds: what --verify records OpInfo samples for."""
    return sorted({op.name.rpartition(".")[0] for op in plan.ops})


def run(out: str, build_dir: str, ops: list[str] | None, yaml_path: str | None, since: str | None,
        plan: plan_mod.Plan | None = None, jobs: int = 2, report_path: str | None = None,
        samples: Samples | None = None, world: plan_mod.World = plan_mod.WORLDS[0], device: str = "cpu") -> int:
    """`device`: where the samples run (shimgen.proofs.verify.devices); a device route's table (torch::stable::cpu::)
    runs only on its own device's samples."""
    t_start = time.perf_counter()
    samples = samples or Samples(jobs, op_names(plan) if plan is not None else ops)
    _, suffix = names(world)
    try:
        compile_steps, link_steps, spec, notes = prepare(out, build_dir, ops, yaml_path, since, plan, world)
        for n in notes:
            print(f"shimgen: verify: note: {n}", file=sys.stderr)
        print(f"shimgen: verify: building in {os.path.abspath(build_dir)} (build world: {world.label}"
              f"{', ' + ' '.join(world.macros) if world.macros else ', no SHIMGEN_ macro'}) ...", file=sys.stderr)
        t0 = time.perf_counter()
        build.run_steps(compile_steps, jobs)
        for step in link_steps:  # in order: the round-trip extension links against the overlay
            build.run_steps([step])
        build_seconds = time.perf_counter() - t0
    except build.BuildError as e:
        print(f"shimgen: verify: {e.reason}", file=sys.stderr)
        return 1
    steps = [*compile_steps, *link_steps]
    t_wait = time.perf_counter()
    recording = samples.result()
    wait_seconds = time.perf_counter() - t_wait
    extra = []
    if recording.note:
        print(f"shimgen: verify: note: {recording.note}", file=sys.stderr)
        extra.append(f"note: {recording.note}")
    if recording.path:
        how = "cached" if recording.cached else f"recorded in {recording.seconds:.0f}s"
        extra.append(f"OpInfo samples: {len(recording.calls)} overloads ({how}: {recording.path})")
    spec["recorded"] = recording.path
    spec["limits"] = dict(LIMITS)
    spec["device"] = device
    spec_path = os.path.join(os.path.abspath(build_dir), f"verify_ops{suffix}.json")
    _write(spec_path, json.dumps(spec, indent=1) + "\n")
    t1 = time.perf_counter()
    device_ok = True
    try:
        results = run_samples(spec_path, spec, os.path.join(os.path.abspath(build_dir), f"runner{suffix}.log"), jobs)
    except RunnerFailed as e:
        print(f"shimgen: verify: {e}", file=sys.stderr)
        return 1
    devices = spec.pop("devices", {})
    kind = device.partition(":")[0]
    for left_out in sorted(d for d in devices if d != kind):
        note = f"the {left_out}:: device route's table runs on {left_out} samples only (--device {device} here)"
        print(f"shimgen: verify: note: {note}", file=sys.stderr)
        extra.append(f"note: {note}")
    devices = {d: v for d, v in devices.items() if d == kind}
    device_results = {}
    for route_device, dspec in devices.items():  # the device route's wrappers, against the same aten ops
        sub = {**spec, **dspec, "skipped": [], "hidden": []}
        sub_path = os.path.join(os.path.abspath(build_dir), f"verify_ops_{route_device}{suffix}.json")
        _write(sub_path, json.dumps(sub, indent=1) + "\n")
        try:
            device_results[route_device] = (sub, run_samples(
                sub_path, sub, os.path.join(os.path.abspath(build_dir), f"runner_{route_device}{suffix}.log"), jobs))
        except RunnerFailed as e:
            print(f"shimgen: verify: {route_device}:: {e}", file=sys.stderr)
            return 1
    run_seconds = time.perf_counter() - t1
    if wait_seconds > 1:
        extra.append(f"waited {wait_seconds:.0f}s for the OpInfo recording after the build")
    ok, table = report.print_table(spec, results, steps, build_seconds, run_seconds, extra)
    for route_device, (sub, dresults) in device_results.items():
        print(f"\ntorch::stable::{route_device}:: wrappers (the device route: libtorch's {route_device} C shims, "
              "no dispatcher):")
        dok, _ = report.print_table(sub, dresults, [], build_seconds, run_seconds, [])
        device_ok = device_ok and dok
    if report_path:
        info = {"command": "shimgen " + " ".join(sys.argv[1:]) if sys.argv[1:] else "shimgen --verify",
                "torch": build.find_torch().version, "build world": world.label, "device": device, "jobs": jobs,
                "wall seconds (verify)": round(time.perf_counter() - t_start, 1),
                "build seconds": round(build_seconds, 1), "samples seconds": round(run_seconds, 1),
                "OpInfo": extra[-1] if recording.path else (recording.note or "off")}
        for path in report.write(report_path, table, info):
            print(f"shimgen: verify: report: {path}", file=sys.stderr)
    return 0 if ok and device_ok else 1
