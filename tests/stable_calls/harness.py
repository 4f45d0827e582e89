"""Build the corpus of ordinary calls (corpus.yaml) into ONE stable-only extension and run it on torch runtimes.

    python -m tests.stable_calls.harness [--targets 2.13,2.10] [--json PATH]

For one targeted release (-DTORCH_TARGET_VERSION), against headers shimgen generates for the corpus' names:
1. a syntax pass finds the calls that do not compile (each call is one function; an error is the call's when the
   compiler names one of its lines), and repeats without them until the rest compiles;
2. the rest is compiled to an object (-ffunction-sections); following each kernel's relocations through the
   inline wrappers it reaches gives the libtorch C symbols it needs: a call needing one that the runtime's
   libtorch does not export needs shimgen's overlay (an extension linking it loads only with the overlay);
3. the remaining calls are linked into one library with libtorch alone, which each runtime's interpreter loads
   (tests/stable_calls/run_calls.py) to compare every call with its own eager ATen.

Each call ends as one of: exact, refused (a `shimgen:` error at run time), wrong, error (ATen raised too),
needs_overlay, compile_error (with the compiler's first error message for it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import yaml

from shimgen.generate import pipeline
from shimgen.proofs.verify import build, runtimes
from shimgen.facts.versions import Version

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = ["x", "y", "i", "j", "m", "b", "img", "w", "q", "tgt"]
# The runtimes each target runs on: its own release and the newest one at hand (an extension targeting L runs on
# every later libtorch).
RUNS = {"2.13": ["2.13.0", "2.14.1"], "2.10": ["2.10.0", "2.14.1"]}


@dataclass(frozen=True)
class Call:
    index: int
    stable: str
    aten: str
    get0: bool = False

    @property
    def kernel(self) -> str:
        return f"c{self.index:03d}"


def load() -> list[Call]:
    with open(os.path.join(HERE, "corpus.yaml"), encoding="utf-8") as f:
        return [Call(k, **e) for k, e in enumerate(yaml.safe_load(f))]


def names(calls: list[Call]) -> list[str]:
    """The wrapper names the corpus calls (every overload of each is generated)."""
    # an out= form (ts::arange_out) is the op's (no aten op's name ends in _out)
    return sorted({re.sub(r"_outf?$", "", n) for c in calls for n in re.findall(r"ts::(\w+)\(", c.stable)})


def generate(out: str, calls: list[Call], defines: tuple[str, ...] = ()) -> None:
    files, _ = pipeline.generate(names(calls), None, None, out)
    pipeline.write(out, files)


_HEAD = """#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>

#include <tuple>

using torch::stable::Tensor;
using torch::headeronly::ScalarType;
namespace ts = torch::stable;

#define ARGS Tensor x, Tensor y, Tensor i, Tensor j, Tensor m, Tensor b, Tensor img, Tensor w, Tensor q, Tensor tgt
"""


def source(calls: list[Call]) -> tuple[str, dict[int, Call]]:
    """The extension's source, and which call each line belongs to."""
    lines = _HEAD.splitlines()
    owner: dict[int, Call] = {}
    for c in calls:
        expr = f"std::get<0>({c.stable})" if c.get0 else c.stable
        for text in (f'extern "C" Tensor {c.kernel}(ARGS) {{', f"  return {expr};", "}"):
            lines.append(text)
            owner[len(lines)] = c
    schema = ", ".join(f"Tensor {n}" for n in INPUTS)
    lines.append("STABLE_TORCH_LIBRARY(stable_calls, lib) {")
    lines += [f'  lib.def("{c.kernel}({schema}) -> Tensor");' for c in calls]
    lines.append("}")
    lines.append("STABLE_TORCH_LIBRARY_IMPL(stable_calls, CompositeExplicitAutograd, lib) {")
    lines += [f'  lib.impl("{c.kernel}", TORCH_BOX(&{c.kernel}));' for c in calls]
    lines.append("}")
    return "\n".join(lines) + "\n", owner


def _flags(gen: str, target: str, extra: tuple[str, ...]) -> list[str]:
    torch = build.find_torch()
    v = Version.parse(target)
    return [*torch.stable_flags(gen), f"-DTORCH_TARGET_VERSION=0x{v.major:02x}{v.minor:02x}000000000000",
            *(f"-D{d}" for d in extra)]


def compile_errors(calls: list[Call], gen: str, target: str, work: str,
                   extra: tuple[str, ...] = ()) -> dict[str, str]:
    """kernel -> the compiler's first error message for it, for every call that does not compile."""
    errors: dict[str, str] = {}
    left = list(calls)
    for _ in range(40):  # a hidden form's static_assert fires once per instantiation: one call site a pass
        text, owner = source(left)
        src = os.path.join(work, "calls.cpp")
        with open(src, "w") as f:
            f.write(text)
        proc = subprocess.run([build.compiler(), *_flags(gen, target, extra), "-fsyntax-only", "-w", src],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            return errors
        found: dict[str, str] = {}
        last = None  # the corpus line the compiler's current diagnostic is about
        for line in proc.stderr.splitlines():
            m = re.match(r".*calls\.cpp:(\d+):\d+: ", line)
            if m and int(m.group(1)) in owner:
                last = owner[int(m.group(1))]
            err = re.search(r"\berror: (.*)", line)
            if err and last is not None and last.kernel not in found:
                found[last.kernel] = err.group(1).strip()
        if not found:
            raise AssertionError(f"the corpus does not compile outside its calls:\n{proc.stderr[-3000:]}")
        errors.update(found)
        left = [c for c in left if c.kernel not in found]
    raise AssertionError("compile errors did not settle")


def _relocations(obj: str) -> dict[str, set[str]]:
    """function section name -> the symbols its relocations reference."""
    out = subprocess.run(["readelf", "-rW", obj], capture_output=True, text=True, check=True).stdout
    refs: dict[str, set[str]] = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"Relocation section '\.rela(\.text\.\S+)'", line)
        if m:
            current = refs.setdefault(m.group(1)[len(".text."):], set())
            continue
        if line.startswith("Relocation section"):
            current = None
            continue
        parts = line.split()
        if current is not None and len(parts) >= 5 and re.match(r"[0-9a-f]{8,}", parts[0]):
            sym = parts[4]
            current.add(sym[len(".text."):] if sym.startswith(".text.") else sym)
    return refs


def needed_symbols(calls: list[Call], gen: str, target: str, work: str,
                   extra: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """kernel -> the C API symbols (aoti_torch_*, torch_*) it reaches, through every inline wrapper it calls."""
    text, _ = source(calls)
    src, obj = os.path.join(work, "calls.cpp"), os.path.join(work, "calls.o")
    with open(src, "w") as f:
        f.write(text)
    subprocess.run([build.compiler(), *_flags(gen, target, extra), *build.OBJECT_FLAGS, "-ffunction-sections", "-w",
                    "-c", src, "-o", obj], check=True, capture_output=True, text=True)
    refs = _relocations(obj)
    result = {}
    for c in calls:
        seen, todo, found = set(), [c.kernel], set()
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            for s in refs.get(f, ()):
                if s.startswith(("aoti_torch_", "torch_")):
                    found.add(s)
                elif s in refs:
                    todo.append(s)
        result[c.kernel] = found
    return result


def exports(rt: runtimes.Runtime) -> set[str]:
    """Every dynamic symbol the runtime's libtorch libraries define."""
    libs = [os.path.join(rt.torch.lib_dir, n) for n in ("libtorch_cpu.so", "libtorch.so", "libc10.so")]
    out = subprocess.run(["nm", "-D", "--defined-only", *[p for p in libs if os.path.exists(p)]],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}


def link(calls: list[Call], gen: str, target: str, work: str, extra: tuple[str, ...] = ()) -> str:
    text, _ = source(calls)
    src, lib = os.path.join(work, "calls.cpp"), os.path.join(work, f"calls_{target}.so")
    with open(src, "w") as f:
        f.write(text)
    torch = build.find_torch()
    for cmd in build.library(build.compiler(), [*_flags(gen, target, extra), "-w"], src, lib, torch.link_flags()):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
    return lib


def run(lib: str, calls: list[Call], rt: runtimes.Runtime, work: str) -> dict[str, list[str]]:
    spec = os.path.join(work, "calls.json")
    with open(spec, "w") as f:
        json.dump([[c.kernel, c.aten] for c in calls], f)
    proc = subprocess.run([rt.python, os.path.join(HERE, "run_calls.py"), lib, spec], capture_output=True, text=True)
    assert proc.returncode == 0, f"{rt.name}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])["results"]


def measure(target: str, rts: list[runtimes.Runtime], work: str, calls: list[Call] | None = None,
            extra: tuple[str, ...] = ()) -> dict[str, dict[str, list[str]]]:
    """runtime name -> kernel -> [outcome, detail], for the corpus built at `target`."""
    calls = calls or load()
    gen = os.path.join(work, "gen")
    if not os.path.isdir(gen):
        generate(gen, calls)
    errors = compile_errors(calls, gen, target, work, extra)
    ok = [c for c in calls if c.kernel not in errors]
    needs = needed_symbols(ok, gen, target, work, extra)
    missing = {rt.name: {k: sorted(s - exp) for k, s in needs.items()} for rt, exp in ((r, exports(r)) for r in rts)}
    overlay = {k for m in missing.values() for k, s in m.items() if s}
    runnable = [c for c in ok if c.kernel not in overlay]
    lib = link(runnable, gen, target, work, extra)
    results = {}
    for rt in rts:
        got = run(lib, runnable, rt, work)
        per = {}
        for c in calls:
            if c.kernel in errors:
                per[c.kernel] = ["compile_error", errors[c.kernel]]
            elif missing[rt.name][c.kernel]:
                per[c.kernel] = ["needs_overlay", " ".join(missing[rt.name][c.kernel])]
            elif c.kernel in overlay:
                per[c.kernel] = ["needs_overlay", "(on another runtime of this target)"]
            else:
                per[c.kernel] = got[c.kernel]
        results[rt.name] = per
    return results


def counts(per: dict[str, list[str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for outcome, _ in per.values():
        out[outcome] = out.get(outcome, 0) + 1
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="2.13,2.10")
    ap.add_argument("--json")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="extra -D for the extension")
    ap.add_argument("-v", action="store_true", help="print every call that is not exact")
    args = ap.parse_args(argv)
    calls = load()
    report = {}
    with tempfile.TemporaryDirectory() as work:
        for target in args.targets.split(","):
            rts, missing = runtimes.resolve(RUNS[target])
            if missing:
                print(f"target {target}: runtimes {missing} not found, skipped", file=sys.stderr)
            res = measure(target, rts, work, calls, tuple(args.defines))
            for rt, per in res.items():
                report[f"target {target} on {rt}"] = per
                print(f"target {target} on torch {rt}: {len(calls)} calls: {counts(per)}")
                if args.v:
                    by = {c.kernel: c for c in calls}
                    for k, (o, d) in per.items():
                        if o != "exact":
                            print(f"  {o:14} {by[k].stable}: {d[:160]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
