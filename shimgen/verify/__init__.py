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
import sys
import time
from dataclasses import replace

from shimgen import plan as plan_mod
from shimgen.errors import ShimgenError
from shimgen.parse import NativeYaml
from shimgen.verify import build, overlay, report, roundtrip
from shimgen.verify.runner_client import run_samples
from shimgen.versions import Version

ROUNDTRIP_LIBRARY = "libshimgen_roundtrip.so"


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


def prepare(out: str, build_dir: str, ops: list[str] | None, yaml_path: str | None, since: str | None,
            plan: plan_mod.Plan | None = None):
    """Generate the overlay and round-trip sources into build_dir; return (steps, spec, notes). `plan` is the
    one the CLI generated DIR from (made again from ops/yaml/since when absent)."""
    from shimgen import emit_c, emit_cpp

    torch = build.find_torch()
    installed = Version.parse_release(torch.version, "installed torch version")
    plan = plan or plan_mod.make(ops, yaml_path, since)
    cxx = build.compiler()
    cxx_id = build.compiler_id(cxx)
    b = os.path.abspath(build_dir)
    os.makedirs(b, exist_ok=True)
    notes: list[str] = []

    kernels, skipped = roundtrip.kernels(plan, installed)
    if not kernels:
        raise ShimgenError("--verify: no wrapper to verify")
    # Only wrappers on the generated-shim route call the overlay (the dispatcher and libtorch's shims need none).
    on_generated = {k.op.name for k in kernels if k.variant.route == "generated_shim"}
    ov_plan, ov_notes = overlay.missing_ops(replace(plan, ops=[op for op in plan.ops if op.name in on_generated]),
                                            torch)
    notes += ov_notes
    steps: list[build.Step] = []
    overlay_lib = None
    if ov_plan.ops:
        src_root = os.path.join(b, "overlay")
        files = overlay.sources(ov_plan)
        for rel, text in files.items():
            _write(os.path.join(src_root, rel), text)
        overlay_lib = os.path.join(b, overlay.LIBRARY)
        cmd = [cxx, *build.CXX_FLAGS, *torch.aten_flags(src_root), os.path.join(src_root, emit_c.SOURCE),
               "-o", overlay_lib, *torch.link_flags()]
        steps.append(build.Step("overlay", overlay_lib, cmd, [*files.values(), torch.version, cxx_id]))

    rt_src = os.path.join(b, "roundtrip", roundtrip.SOURCE)
    _write(rt_src, roundtrip.source(plan, kernels))
    rt_obj = rt_src[: -len(".cpp")] + ".o"
    out_abs = os.path.abspath(out)
    headers = [_read(os.path.join(out_abs, emit_cpp.HEADER)), _read(os.path.join(out_abs, emit_c.HEADER))]
    compile_cmd = [cxx, "-O1", "-fPIC", *torch.stable_flags(out_abs), "-c", rt_src, "-o", rt_obj]
    compile_step = build.Step("round-trip extension (compile)", rt_obj, compile_cmd,
                              [_read(rt_src), *headers, torch.version, cxx_id])
    rt_lib = os.path.join(b, ROUNDTRIP_LIBRARY)
    link_cmd = [cxx, *build.CXX_FLAGS, rt_obj, "-o", rt_lib]
    if overlay_lib:
        link_cmd += [f"-L{b}", "-lshimgen_overlay", "-Wl,-rpath,$ORIGIN"]
    link_cmd += torch.link_flags()
    link_step = build.Step("round-trip extension (link)", rt_lib, link_cmd, [compile_step.digest] +
                           [s.digest for s in steps])
    native = plan.native or NativeYaml(yaml_path)
    spec = {
        "overlay": overlay_lib,
        "roundtrip": rt_lib,
        "ops": [roundtrip.op_spec(k, plan, native) for k in kernels],
        "skipped": skipped,
    }
    return [*steps, compile_step], link_step, spec, notes


def run(out: str, build_dir: str, ops: list[str] | None, yaml_path: str | None, since: str | None,
        plan: plan_mod.Plan | None = None) -> int:
    try:
        compile_steps, link_step, spec, notes = prepare(out, build_dir, ops, yaml_path, since, plan)
        for n in notes:
            print(f"shimgen: verify: note: {n}", file=sys.stderr)
        print(f"shimgen: verify: building in {os.path.abspath(build_dir)} ...", file=sys.stderr)
        t0 = time.perf_counter()
        build.run_steps(compile_steps)
        build.run_steps([link_step])
        build_seconds = time.perf_counter() - t0
    except build.BuildError as e:
        print(f"shimgen: verify: {e.reason}", file=sys.stderr)
        return 1
    steps = [*compile_steps, link_step]
    spec_path = os.path.join(os.path.abspath(build_dir), "verify_ops.json")
    _write(spec_path, json.dumps(spec, indent=1) + "\n")
    t1 = time.perf_counter()
    results = run_samples(spec_path, spec, os.path.join(os.path.abspath(build_dir), "runner.log"))
    run_seconds = time.perf_counter() - t1
    ok = report.print_table(spec, results, steps, build_seconds, run_seconds)
    return 0 if ok else 1
