"""Add a torch release to shimgen, end to end: `python -m shimgen.dev release add X.Y.Z`.

A release touches these facts, each in its one home; this command updates the ones it can derive from the release's
files and names the measurements that need the release's runtime (a venv with its torch):

  1. tests/fixtures/releases/X.Y.Z/   compressed copies of its native_functions.yaml, tags.yaml and the
                                      c_shim_aten.h its wheel ships (the history and golden checks read them)
  2. shimgen/data/history.json        its schemas (python -m shimgen.dev history --add X.Y YAML)
  3. shimgen/data/manifest.yaml       the C shims its libtorch ships that the manifest does not know yet
                                      (`upstream: true, since: X.Y`; a new `_vN` of a known shim: `vN: X.Y`)
  4. shimgen/data/device_shims.json  its c_shim_cpu.h / c_shim_cuda.h declarations (device_shims.extend); which
                                      of them its libtorch exports is measured with the runtime (step 5)
  5. shimgen/data/releases.yaml       X.Y.Z among the runtimes (replacing an older patch of X.Y); .ci/run, the
                                      matrix, the probe and verify.runtimes read it
  5b. shimgen/data/upstream_surface.yaml  what its own torch/csrc/stable/ops.h defines (shimgen.facts.upstream_surface),
                                      from --torch DIR's header or its runtime venv's
  then, with the runtime venv ($SHIMGEN_RUNTIMES/torch-X.Y.Z, which `--venv` creates):
  6. shimgen/data/probe.yaml          python -m shimgen.dev probe --write (the dispatcher probe on every runtime), and
                                      python -m shimgen.dev device-shims ../shared/torch-shims --runtimes DIR (exports)
  6b. shimgen/data/libtorch_exports.json, releases.yaml `libtorch_markers`: python -m shimgen.dev exports --write
                                      (the stable C functions its libtorch exports, which `shimgen audit` reads) and
                                      python -m shimgen.dev markers --write (its first C function, which the generated
                                      running_release looks up)
  7. shimgen/data/scalar_facts.yaml   only when the installed torch moves to X.Y.Z (releases.yaml `installed`,
                                      README's pin): python -m shimgen.dev prove promotion|siblings|int-as-double
  8. tests/golden/, generated/        tests/regen_golden.sh, then review the diff (new shims are new declarations)

The files come from a folder laid out like ../shared (`--shared DIR`: torch-schemas/X.Y.Z/native_functions.yaml,
tags.yaml; torch-shims/X.Y.Z/c_shim_{aten,cpu,cuda}.h) or from an installed torch (`--torch DIR`: a torch package
folder, whose torchgen carries the yaml files and whose include/ the header). `--dry-run` computes every change and
prints it, writing nothing.
"""

from __future__ import annotations

import argparse
import glob
import lzma
import os
import re
import sys
import tempfile

import yaml

from shimgen.facts import libtorch_device_shims as device_shims, history, manifest, upstream_surface
from shimgen.base.errors import ShimgenError
from shimgen.facts.versions import Version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA = os.path.join(ROOT, "shimgen", "data")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "releases")
FIXTURE_FILES = ("native_functions.yaml", "tags.yaml", "c_shim_aten.h")
_DECL = re.compile(r"^AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_(\w+)\(", re.M)
_VN = re.compile(r"^(\w+)_v(\d+)$")


def sources(release: str, shared: str | None, torch_dir: str | None) -> dict[str, str]:
    """name -> path of the release's native_functions.yaml, tags.yaml, c_shim_aten.h and (where present)
    c_shim_cpu.h, c_shim_cuda.h."""
    if torch_dir:
        found = {
            "native_functions.yaml": os.path.join(torch_dir, "..", "torchgen", "packaged", "ATen", "native",
                                                  "native_functions.yaml"),
            "tags.yaml": os.path.join(torch_dir, "..", "torchgen", "packaged", "ATen", "native", "tags.yaml"),
            "c_shim_aten.h": os.path.join(torch_dir, "include", "torch", "csrc", "inductor", "aoti_torch",
                                          "generated", "c_shim_aten.h"),
        }
    else:  # the yaml files of X.Y.0 and the header of the wheel X.Y.Z: the same minor release, any patch
        base = shared or os.path.join(ROOT, "..", "shared")
        found = {name: os.path.join(_same_minor(os.path.join(base, "torch-schemas"), release), name)
                 for name in ("native_functions.yaml", "tags.yaml")}
        found["c_shim_aten.h"] = os.path.join(_same_minor(os.path.join(base, "torch-shims"), release), "c_shim_aten.h")
    for device in device_shims.DEVICES:  # optional: a CPU wheel ships no c_shim_cuda.h
        path = os.path.join(os.path.dirname(found["c_shim_aten.h"]), f"c_shim_{device}.h")
        if os.path.isfile(path):
            found[f"c_shim_{device}.h"] = path
    missing = [p for p in found.values() if not os.path.isfile(p)]
    if missing:
        raise ShimgenError(f"release {release}: missing {', '.join(os.path.normpath(p) for p in missing)}")
    return {k: os.path.normpath(v) for k, v in found.items()}


def _same_minor(folder: str, release: str) -> str:
    """folder/release, else folder/<the newest patch of release's minor release>."""
    exact = os.path.join(folder, release)
    if os.path.isdir(exact) or not os.path.isdir(folder):
        return exact
    minor = release.rsplit(".", 1)[0]
    patches = sorted((d for d in os.listdir(folder) if d.rsplit(".", 1)[0] == minor and re.fullmatch(r"[\d.]+", d)),
                     key=lambda r: tuple(int(x) for x in r.split(".")))
    return os.path.join(folder, patches[-1]) if patches else exact


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _unambiguous(op: str) -> str:
    """torchgen's OperatorName.unambiguous_name of `name.overload` (`fill_.Scalar` -> `fill__Scalar`)."""
    name, _, overload = op.partition(".")
    return name if overload in ("", "default") else f"{name}_{overload}"


def shipped_shims(header: str, schemas: dict[str, str]) -> dict[str, int]:
    """op (`fill_.Scalar`) -> the newest `_vN` the header declares for it (1: the original name only)."""
    by_shim = {_unambiguous(op): op for op in schemas}
    found: dict[str, int] = {}
    for name in _DECL.findall(header):
        m = _VN.match(name)
        base, n = (m.group(1), int(m.group(2))) if m and m.group(1) in by_shim else (name, 1)
        op = by_shim.get(base)
        if op is None:
            raise ShimgenError(f"the header declares aoti_torch_aten_{name}, which no schema of the release names")
        found[op] = max(found.get(op, 1), n)
    return found


def manifest_changes(shims: dict[str, int], minor: Version, text: str) -> tuple[str, list[str]]:
    """(the manifest's new text, one line per change): new libtorch shims, shimgen shims libtorch adopted, new _vN."""
    current = manifest.load()
    raw = yaml.safe_load(text)
    ops = raw["ops"]
    changes = []
    for op, newest in sorted(shims.items()):
        entry = current.entries.get(op)
        if entry is None:
            ops[op] = {"since": str(minor), "upstream": True}
            changes.append(f"+ {op}: libtorch {minor} ships its C shim")
        elif not entry.upstream:
            ops[op] = {"since": str(minor), "upstream": True}
            changes.append(f"~ {op}: libtorch {minor} adopts the C shim shimgen generated (was shimgen's own)")
        for n in range(2, newest + 1):
            if n not in current.entries.get(op, entry or manifest.Entry(minor, True)).versions and \
                    f"v{n}" not in ops[op]:
                ops[op][f"v{n}"] = str(minor)
                changes.append(f"+ {op}: libtorch {minor} ships aoti_torch_aten_..._v{n}")
    head = text[: text.index("\nops:") + 1]
    lines = ["ops:"]
    for op in sorted(ops):
        fields = ", ".join(f'{k}: "{v}"' if isinstance(v, str) else f"{k}: {str(v).lower()}"
                           for k, v in ops[op].items())
        lines.append(f"  {op}: {{{fields}}}")
    return head + "\n".join(lines) + "\n", changes


def device_changes(minor: Version, files: dict[str, str], ops: set[str], text: str) -> tuple[str, list[str]]:
    """device_shims.json with the release's c_shim_cpu.h / c_shim_cuda.h added (one line per new, removed or
    re-versioned function); unchanged without those headers."""
    headers = {dev: files[f"c_shim_{dev}.h"] for dev in device_shims.DEVICES if f"c_shim_{dev}.h" in files}
    if not headers:
        return text, []
    known = ops | set(history.load().changes)
    declared = {dev: device_shims.parse_header(_read(path), known, path) for dev, path in headers.items()}
    old = device_shims.loads(text)
    new = device_shims.extend(old, minor, declared)
    changes = [f"+ {fn}" for fn in sorted(set(new.shims) - set(old.shims))]
    changes += [f"- {fn}: not declared from {minor} on" for fn, s in sorted(new.shims.items())
                if s.removed is not None and old.shims.get(fn) is not None and old.shims[fn].removed is None]
    return device_shims.dumps(new), changes


def releases_changes(release: str, text: str) -> tuple[str, list[str]]:
    """releases.yaml with `release` among the runtimes (an older patch of its minor release replaced)."""
    raw = yaml.safe_load(text)
    minor = release.rsplit(".", 1)[0]
    old = [r for r in raw["runtimes"] if r.rsplit(".", 1)[0] == minor]
    if old == [release]:
        return text, []
    runtimes = sorted([r for r in raw["runtimes"] if r not in old] + [release],
                      key=lambda r: tuple(int(x) for x in r.split(".")))
    line = "runtimes: [" + ", ".join(f'"{r}"' for r in runtimes) + "]"
    new = re.sub(r"^runtimes: \[.*\]$", line, text, flags=re.M)
    return new, [f"runtimes: {', '.join(old) or '(none of ' + minor + ')'} -> {release}"]


def _fixture(files: dict[str, str]) -> dict[str, bytes]:
    """Compressed copies, each under the release folder it came from (as make_release_yamls.py lays them out)."""
    out = {}
    for name, path in files.items():
        data = lzma.compress(open(path, "rb").read(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)
        dst = os.path.join(FIXTURES, os.path.basename(os.path.dirname(path)), name + ".xz")
        if not (os.path.isfile(dst) and open(dst, "rb").read() == data):
            out[dst] = data
    return out


def add(release: str, shared: str | None, torch_dir: str | None, dry_run: bool, out=sys.stdout) -> int:
    if not re.fullmatch(r"\d+\.\d+\.\d+", release):
        raise ShimgenError(f"bad release {release!r}: expected X.Y.Z such as 2.16.0")
    minor = Version.parse(release)
    files = sources(release, shared, torch_dir)
    schemas = history.schemas_of(_read(files["native_functions.yaml"]))
    writes: dict[str, str | bytes] = dict(_fixture({k: v for k, v in files.items() if k in FIXTURE_FILES}))
    say = [f"release {release} from " + ", ".join(sorted({os.path.dirname(p) for p in files.values()})),
           f"1. fixtures: {len(writes)} new or changed files under {os.path.relpath(FIXTURES, ROOT)}"]

    hist_path = history.data_path()
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "history.json")
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(_read(hist_path))
        with open(os.devnull, "w") as null:
            sys_stdout, sys.stdout = sys.stdout, null
            try:
                status = history.main(["--add", str(minor), files["native_functions.yaml"], "--out", out_path])
            finally:
                sys.stdout = sys_stdout
        if status != 0:
            raise ShimgenError(f"python -m shimgen.dev history --add {minor} failed")
        new_history = _read(out_path)
    before, after = history.loads(_read(hist_path)), history.loads(new_history)
    changed = sum(1 for op, pts in after.changes.items() if before.changes.get(op) != pts)
    say.append(f"2. history: {len(after.changes)} overloads over {', '.join(map(str, after.releases))}; "
               f"{changed} overloads' entries change")
    if new_history != _read(hist_path):
        writes[hist_path] = new_history

    man_path = os.path.join(DATA, "manifest.yaml")
    man_text, man_changes = manifest_changes(shipped_shims(_read(files["c_shim_aten.h"]), schemas), minor,
                                             _read(man_path))
    say.append(f"3. manifest: {len(man_changes)} changes" + "".join(f"\n     {c}" for c in man_changes))
    if man_changes:
        writes[man_path] = man_text

    dev_path = device_shims.data_path()
    dev_text, dev_changes = device_changes(minor, files, set(schemas), _read(dev_path))
    say.append(f"4. device shims: {len(dev_changes)} changes" + "".join(f"\n     {c}" for c in dev_changes))
    if dev_text != _read(dev_path):
        writes[dev_path] = dev_text

    rel_path = os.path.join(DATA, "releases.yaml")
    rel_text, rel_changes = releases_changes(release, _read(rel_path))
    say.append(f"5. releases.yaml: {'; '.join(rel_changes) or 'already listed'}")
    if rel_changes:
        writes[rel_path] = rel_text

    venv = os.path.join(os.path.expanduser(os.environ.get("SHIMGEN_RUNTIMES") or "~/.cache/shimgen/runtimes"),
                        f"torch-{release}")
    # upstream's surface: the release's own stable ops.h (--torch DIR's, else its runtime venv's)
    ops_h = [p for p in ([os.path.join(torch_dir, "include")] if torch_dir else []) +
             glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "torch", "include"))
             if os.path.isfile(os.path.join(p, "torch", "csrc", "stable", "ops.h"))]
    if ops_h:
        surf_path = upstream_surface.DATA
        surf_text, found = upstream_surface.recorded(
            release, os.path.join(ops_h[0], "torch", "csrc", "stable", "ops.h"), sorted(schemas), _read(surf_path))
        say.append(f"5b. upstream surface: {len(found['ops'])} aten overloads, {len(found['functions'])} functions")
        if surf_text != _read(surf_path):
            writes[surf_path] = surf_text
    else:
        say.append(f"5b. upstream surface: no ops.h of {release} (--torch DIR, or the runtime venv below; then "
                   f"python -m shimgen.dev upstream-surface record {minor} OPS_H)")
    say += [
        f"then (the runtime {venv}: python -m venv {venv} && {venv}/bin/python -m pip install torch=={release} "
        "pyyaml numpy):",
        "6. python -m shimgen.dev probe --write          # data/probe.yaml gets the new runtime's column (~20 min)",
        f"   python -m shimgen.dev device-shims ../shared/torch-shims --runtimes {os.path.dirname(venv)}  "
        "# which device shims its libtorch exports",
        "6b. python -m shimgen.dev exports --write; python -m shimgen.dev markers --write  "
        "# the C functions its libtorch exports (shimgen audit) and its first one (running_release)",
        "7. only if CI's torch moves to this release (releases.yaml `installed`, README's pip pin): "
        "python -m shimgen.dev prove promotion; ... siblings; ... int-as-double",
        "8. tests/regen_golden.sh, review `git diff tests/golden generated`, then python -m pytest -q",
    ]
    for path, data in sorted(writes.items()):
        rel = os.path.relpath(path, ROOT)
        if dry_run:
            say.append(f"dry run: would write {rel}")
            continue
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        say.append(f"wrote {rel}")
    print("\n".join(say), file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev release", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("add", help="add a torch release X.Y.Z")
    a.add_argument("release", metavar="X.Y.Z")
    a.add_argument("--shared", metavar="DIR", help="folder laid out like ../shared (default: ../shared)")
    a.add_argument("--torch", metavar="DIR", help="an installed torch package folder to read the files from")
    a.add_argument("--dry-run", action="store_true", help="print every change, write nothing")
    args = ap.parse_args(argv)
    try:
        return add(args.release, args.shared, args.torch, args.dry_run)
    except ShimgenError as e:
        print(f"shimgen.dev release: error: {e.line()}", file=sys.stderr)
        return 2
