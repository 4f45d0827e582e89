"""The probe extensions: one small stable-ABI library per (row, targeted release), from templates/probe.cpp.j2,
compiled with the installed torch's stable headers and -DTORCH_TARGET_VERSION. A compile failure is a result
(the headers offer no conversion at that target), remembered like a success until the source or flags change."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from shimgen.generate.emit.fmt import clang_format
from shimgen.proofs.probe.cases import Probe
from shimgen.generate.templates import render
from shimgen.proofs.verify import build as vbuild
from shimgen.facts.versions import Version

_ERROR_RE = re.compile(r"error: (.*)")


@dataclass(frozen=True)
class Built:
    library: str | None  # None: did not compile
    error: str  # the compiler's first error (for an unbuilt library)


def source(p: Probe, banner: str) -> str:
    return clang_format(render("probe.cpp.j2", banner=banner, kind=p.kind, key=p.key, schema_type=p.schema_type,
                               cpp_type=p.cpp_type, stack=p.stack, stack_decl=p.stack_decl, op=p.op,
                               cases=p.cases))


def first_error(log: str) -> str:
    """The compiler's first error line, without the path (e.g. a static_assert naming the missing release)."""
    log = log.replace("\u2018", "'").replace("\u2019", "'")
    m = _ERROR_RE.search(log)
    text = " ".join((m.group(1) if m else log.strip().splitlines()[-1] if log.strip() else "no output").split())
    if re.search(r"(incomplete type|after instantiation).*(From|To)Impl<|(From|To)Impl<.*after instantiation", text):
        # the check at the end of templates/probe.cpp.j2
        text = f"the headers have no conversion of their own for this type at this target, only a byte copy ({text})"
    return text


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isfile(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def build_all(probes: list[Probe], targets: list[Version], build_dir: str, banner: str,
              jobs: int = 2) -> dict[tuple[str, Version], Built]:
    """Build every probe at every target (reusing unchanged products, failed ones included)."""
    torch = vbuild.find_torch()
    cxx = vbuild.compiler()
    cxx_id = vbuild.compiler_id(cxx)
    steps: dict[tuple[str, Version], vbuild.Step] = {}
    for p in probes:
        text = source(p, banner)
        src = os.path.join(build_dir, "src", f"{p.kind}_{p.op}.cpp")
        _write(src, text)
        for t in targets:
            out = os.path.join(build_dir, t.macro.lower(), f"lib{p.kind}_{p.op}.so")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            cmd, link = vbuild.library(cxx, [*torch.stable_flags(), f"-DTORCH_TARGET_VERSION={t.hex}"], src, out,
                                       torch.link_flags())
            steps[(p.id, t)] = vbuild.Step(f"probe {p.id} at {t}", out, cmd, [text, torch.version, cxx_id], link)
    failed_before = {k: _read_failure(s) for k, s in steps.items()}
    todo = [s for k, s in steps.items() if failed_before[k] is None]
    failed = {id(s) for s in vbuild.run_steps(todo, jobs=jobs, check=False)}
    result = {}
    for k, s in steps.items():
        if failed_before[k] is not None:
            result[k] = Built(None, failed_before[k])
        elif id(s) in failed:
            _write(s.output + ".failed", s.digest + "\n" + s.log)
            result[k] = Built(None, first_error(s.log))
        else:
            if os.path.exists(s.output + ".failed"):
                os.unlink(s.output + ".failed")
            result[k] = Built(s.output, "")
    return result


def _read_failure(step: vbuild.Step) -> str | None:
    """The first error of a remembered failed build of exactly this step, or None."""
    try:
        with open(step.output + ".failed") as f:
            digest, _, log = f.read().partition("\n")
    except OSError:
        return None
    return first_error(log) if digest == step.digest else None
