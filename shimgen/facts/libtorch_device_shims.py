"""libtorch's device C shims (data/device_shims.json): AOTInductor's `aoti_torch_cpu_*` / `aoti_torch_cuda_*`
functions, which release first declares each, with which C signature and `_vN` version, behind which header gate,
and whether each runtime's libtorch actually exports it.

The data is produced by this module's command from the shipped headers (and, with --runtimes, from `nm -D
--defined-only` of each runtime's libtorch_cpu.so / libtorch_cuda.so) and committed; shimgen reads only its own
copy at run time:

    python -m shimgen.dev device-shims ../shared/torch-shims --runtimes ~/.cache/shimgen/runtimes
    python -m shimgen.dev device-shims ../shared/torch-shims --check     # exit 1 if the data differs from the headers

A device shim calls one backend's kernel directly (`at::cpu::add`, `at::cuda::add`): it opts out of the
dispatcher, so autograd, autocast, functionalization, fake tensors, vmap and Python dispatch modes do not see the
call. A declared shim that a runtime's libtorch does not export is no route on that runtime.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from shimgen.facts import history
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import package_text, read_text
from shimgen.facts.versions import Version

DATA = "data/device_shims.json"
DEVICES = ("cpu", "cuda")
LIBRARY = {"cpu": "libtorch_cpu.so", "cuda": "libtorch_cuda.so"}
_DECL_RE = re.compile(r"^AOTI_TORCH_EXPORT AOTITorchError (aoti_torch_(cpu|cuda)_([A-Za-z0-9_]+))\((.*)\);$")
_GATE_RE = re.compile(r"^#if TORCH_FEATURE_VERSION >= TORCH_VERSION_(\d+)_(\d+)_0$")
_RELEASE_DIR_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_VN_RE = re.compile(r"^(.*)_v([2-9]|[1-9][0-9]+)$")


# ---- the data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shim:
    function: str  # aoti_torch_cpu_add_Tensor, aoti_torch_cuda_foo_v2
    device: str
    op: str  # the aten overload: add.Tensor (`autogen:<name>` for an overload torchgen derives, not in the yaml)
    version: int  # N of `_vN` (1: the original name)
    since: Version  # the first release whose header declares it
    gate: Version | None  # the TORCH_FEATURE_VERSION gate around the newest declaration (None: ungated)
    params: tuple[str, ...]  # the C parameters, as the newest header declares them (types never change: checked)
    removed: Version | None = None  # the first release whose header no longer declares it


@dataclass(frozen=True)
class DeviceShims:
    releases: tuple[Version, ...]  # header releases the data covers
    shims: dict[str, Shim]  # by function name
    # runtime (X.Y.Z as installed) -> device -> functions of the data its library does not export; a device
    # absent from a runtime: that wheel has no such library (the CPU wheel has no libtorch_cuda.so)
    exports: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)

    def of(self, op: str, device: str) -> list[Shim]:
        """The shims of one aten overload on one device, oldest version first."""
        return list(self._by_op_device.get((op, device), ()))

    @functools.cached_property
    def _by_op_device(self) -> dict[tuple[str, str], tuple[Shim, ...]]:
        """Every shim by (aten overload, device), oldest version first: built once, where a scan of every shim
        per question cost a whole yaml's run 5,000 scans of ~340 shims."""
        index: dict[tuple[str, str], list[Shim]] = {}
        for s in self.shims.values():
            index.setdefault((s.op, s.device), []).append(s)
        return {k: tuple(sorted(v, key=lambda s: s.version)) for k, v in index.items()}

    def usable(self, function: str, level: Version) -> bool:
        """May an extension targeting `level` call the function: declared (and not removed) in `level`'s header
        and every later one the data covers, and exported by every measured runtime from `level` on."""
        s = self.shims[function]
        if s.since > level or (s.removed is not None and s.removed <= max(self.releases)):
            return False
        for rt, devices in self.exports.items():
            if Version.parse(rt) >= level and s.device in devices and function in devices[s.device]:
                return False
        return True


def dumps(d: DeviceShims) -> str:
    """The data file's text: one shim per line, sorted, so a new release diffs line by line."""
    lines = ["{", f' "releases": {json.dumps([str(r) for r in d.releases])},', ' "exports": {']
    rts = sorted(d.exports, key=lambda r: tuple(int(x) for x in r.split(".")))
    for i, rt in enumerate(rts):
        missing = {dev: sorted(d.exports[rt][dev]) for dev in sorted(d.exports[rt])}
        lines.append(f"  {json.dumps(rt)}: {json.dumps(missing)}{',' if i + 1 < len(rts) else ''}")
    lines += [" },", ' "shims": {']
    items = sorted(d.shims.items())
    for i, (fn, s) in enumerate(items):
        value = {"op": s.op, "v": s.version, "since": str(s.since), "gate": str(s.gate) if s.gate else None,
                 "removed": str(s.removed) if s.removed else None, "params": ", ".join(s.params)}
        lines.append(f"  {json.dumps(fn)}: {json.dumps(value)}{',' if i + 1 < len(items) else ''}")
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def loads(text: str) -> DeviceShims:
    raw = json.loads(text)
    shims = {}
    for fn, v in raw["shims"].items():
        device = "cuda" if fn.startswith("aoti_torch_cuda_") else "cpu"
        shims[fn] = Shim(fn, device, v["op"], v["v"], Version.parse(v["since"]),
                         Version.parse(v["gate"]) if v["gate"] else None,
                         tuple(p.strip() for p in v["params"].split(",")) if v["params"] else (),
                         Version.parse(v["removed"]) if v["removed"] else None)
    exports = {rt: {dev: tuple(fns) for dev, fns in devs.items()} for rt, devs in raw["exports"].items()}
    return DeviceShims(tuple(Version.parse(r) for r in raw["releases"]), shims, exports)


@functools.cache
def load() -> DeviceShims:
    return loads(package_text(DATA))


# ---- reading a header ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    function: str
    device: str
    op: str
    version: int
    gate: Version | None
    params: tuple[str, ...]


def parse_header(text: str, known_ops: set[str], what: str = "header") -> list[Declared]:
    """The declarations of a c_shim_<device>.h, each resolved to its aten overload (`known_ops`: `add.Tensor`...).
    torchgen names a shim `aoti_torch_<device>_<unambiguous name>[_v<N>]`; the unambiguous name is `name` for
    the default overload, else `name_overload`."""
    by_unambiguous = {}
    for op in known_ops:
        name, overload = op.split(".", 1)
        by_unambiguous[name if overload == "default" else f"{name}_{overload}"] = op
    found: list[Declared] = []
    gate: Version | None = None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if m := _GATE_RE.match(line):
            gate = Version(int(m.group(1)), int(m.group(2)))
            continue
        if line.startswith("#endif") and gate is not None:
            gate = None
            continue
        if not line.startswith("AOTI_TORCH_EXPORT"):
            continue
        m = _DECL_RE.match(line)
        if not m:
            raise ShimgenError(f"{what}:{n}: a declaration this command cannot read: {line[:80]}")
        function, device, rest, params = m.groups()
        version, op = 1, by_unambiguous.get(rest)
        vm = _VN_RE.match(rest)
        if vm and vm.group(1) in by_unambiguous:
            version, op = int(vm.group(2)), by_unambiguous[vm.group(1)]
        if op is None:  # an `autogen:` overload (functional/out variants torchgen derives): not in the yaml
            op = f"autogen:{rest}"
        found.append(Declared(function, device, op, version, gate,
                              tuple(p.strip() for p in params.split(",")) if params.strip() else ()))
    return found


def build(headers: dict[Version, dict[str, list[Declared]]]) -> DeviceShims:
    """The data from every release's parsed headers (release -> device -> declarations)."""
    releases = tuple(sorted(headers))
    shims: dict[str, Shim] = {}
    for r in releases:
        for device in DEVICES:
            for d in headers[r].get(device, []):
                old = shims.get(d.function)
                if old is None:
                    shims[d.function] = Shim(d.function, device, d.op, d.version, r, d.gate, d.params)
                elif c_types(old.params) == c_types(d.params):
                    shims[d.function] = Shim(d.function, device, d.op, d.version, old.since, d.gate or old.gate, d.params)
                else:
                    raise ShimgenError(f"{d.function}: its C signature changed in {r} (an ABI break): "
                                       f"({', '.join(old.params)}) -> ({', '.join(d.params)})")
    for fn, s in list(shims.items()):
        later = [r for r in releases if r > s.since]
        gone = next((r for r in later if fn not in {d.function for d in headers[r].get(s.device, [])}), None)
        if gone is not None:
            shims[fn] = Shim(s.function, s.device, s.op, s.version, s.since, s.gate, s.params, gone)
    return DeviceShims(releases, shims)


def extend(data: DeviceShims, release: Version, declared: dict[str, list[Declared]]) -> DeviceShims:
    """The data with one newer release's parsed headers (device -> declarations) added: what `build` gives over
    every release's headers, from the committed data and the new release's headers alone (how
    `python -m shimgen.dev release add` keeps the data current). A device whose header is absent keeps its
    shims. Re-adding a covered release changes nothing when its headers agree with the data."""
    if release in data.releases:
        live = {fn for fn, s in data.shims.items()
                if s.device in declared and s.since <= release and (s.removed is None or s.removed > release)}
        if live != {d.function for decls in declared.values() for d in decls}:
            raise ShimgenError(f"the c_shim_{{cpu,cuda}}.h of {release} differ from data/device_shims.json: rebuild "
                               "it from every release's headers (python -m shimgen.dev device-shims <folder>)")
        return data
    if data.releases and release < max(data.releases):
        raise ShimgenError(f"{release} is older than the newest release of data/device_shims.json: rebuild it from "
                           "every release's headers (python -m shimgen.dev device-shims <folder>)")
    shims = dict(data.shims)
    for device, decls in declared.items():
        names = {d.function for d in decls}
        for fn, s in data.shims.items():
            if s.device == device and s.removed is None and fn not in names:
                shims[fn] = Shim(s.function, s.device, s.op, s.version, s.since, s.gate, s.params, release)
        for d in decls:
            old = shims.get(d.function)
            if old is None:
                shims[d.function] = Shim(d.function, device, d.op, d.version, release, d.gate, d.params)
            elif c_types(old.params) == c_types(d.params):  # as `build`: a removal stays the first release without it
                shims[d.function] = Shim(d.function, device, d.op, d.version, old.since, d.gate or old.gate, d.params,
                                         old.removed)
            else:
                raise ShimgenError(f"{d.function}: its C signature changed in {release} (an ABI break): "
                                   f"({', '.join(old.params)}) -> ({', '.join(d.params)})")
    return DeviceShims(tuple(sorted((*data.releases, release))), shims, data.exports)


def c_types(params: tuple[str, ...]) -> tuple[str, ...]:
    """The C types of parameters (names dropped: a renamed parameter keeps the ABI)."""
    return tuple(re.sub(r"\s*[A-Za-z_][A-Za-z0-9_]*$", "", p) for p in params)


def header_releases(folder: str) -> dict[Version, dict[str, str]]:
    """`<folder>/<X.Y.Z>/c_shim_<device>.h` paths, by release and device."""
    found: dict[Version, dict[str, str]] = {}
    for entry in sorted(os.listdir(folder)):
        if not _RELEASE_DIR_RE.match(entry):
            continue
        paths = {dev: os.path.join(folder, entry, f"c_shim_{dev}.h") for dev in DEVICES}
        found[Version.parse(entry)] = {dev: p for dev, p in paths.items() if os.path.isfile(p)}
    if not found:
        raise ShimgenError(f"no <X.Y.Z>/c_shim_cpu.h under {folder}")
    return found


def known_ops() -> set[str]:
    return set(history.load().changes)


def from_headers(folder: str) -> DeviceShims:
    ops = known_ops()
    headers = {r: {dev: parse_header(read_text(p), ops, p) for dev, p in paths.items()}
               for r, paths in header_releases(folder).items()}
    return build(headers)


# ---- what a runtime's libtorch exports ----------------------------------------------------------------------


def exported_symbols(library: str) -> set[str]:
    """The dynamic symbols a shared library defines (`nm -D --defined-only`)."""
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ShimgenError(f"nm -D --defined-only {library} failed: {e}") from None
    return {parts[-1] for parts in (line.split() for line in out.stdout.splitlines()) if parts}


def missing_exports(data: DeviceShims, torch_lib: str, release: Version) -> dict[str, tuple[str, ...]]:
    """device -> the data's functions that `release`'s header declares but the libraries under `torch_lib` do not
    export; a device whose library is absent is left out."""
    result = {}
    for device in DEVICES:
        lib = os.path.join(torch_lib, LIBRARY[device])
        if not os.path.isfile(lib):
            continue
        have = exported_symbols(lib)
        declared = [s.function for s in data.shims.values()
                    if s.device == device and s.since <= release and (s.removed is None or s.removed > release)]
        result[device] = tuple(sorted(f for f in declared if f not in have))
    return result


def runtime_libs(runtimes: str) -> dict[str, str]:
    """`torch-X.Y.Z` venvs under `runtimes` -> their torch/lib folder, by X.Y.Z."""
    found = {}
    for entry in sorted(os.listdir(runtimes)):
        m = re.fullmatch(r"torch-(\d+\.\d+\.\d+)", entry)
        if not m:
            continue
        for root, dirs, files in os.walk(os.path.join(runtimes, entry)):
            if root.endswith(os.path.join("site-packages", "torch", "lib")) and "libtorch_cpu.so" in files:
                found[m.group(1)] = root
                break
            dirs[:] = [d for d in dirs if d in ("lib", "lib64") or d.startswith("python") or d in
                       ("site-packages", "torch")]
    return found


def data_path() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DATA)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m shimgen.dev device-shims", description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="folder holding <X.Y.Z>/c_shim_{cpu,cuda}.h (every release)")
    p.add_argument("--runtimes", action="append", default=[],
                   help="a folder of torch-X.Y.Z venvs whose libraries to measure (repeatable); runtimes measured "
                        "before and not given again are kept")
    p.add_argument("--torch-lib", nargs=2, action="append", default=[], metavar=("X.Y.Z", "DIR"),
                   help="one more runtime: its version and torch/lib folder (e.g. the installed torch's)")
    p.add_argument("--out", default=data_path(), help="the data file to write (default: shimgen's own)")
    p.add_argument("--check", action="store_true", help="compare the headers' facts with --out; exit 1 on a difference")
    args = p.parse_args(argv)
    try:
        data = from_headers(args.folder)
        old = loads(read_text(args.out)) if os.path.isfile(args.out) else None
        libs = {rt: lib for folder in args.runtimes for rt, lib in runtime_libs(folder).items()}
        libs.update(dict(args.torch_lib))
        exports = dict(old.exports) if old else {}
        for rt, lib in sorted(libs.items()):
            exports[rt] = missing_exports(data, lib, Version.parse(rt))
        text = dumps(DeviceShims(data.releases, data.shims, exports))
    except ShimgenError as e:
        print(f"shimgen.dev device-shims: error: {e.line()}", file=sys.stderr)
        return 2
    if args.check:
        same = old is not None and dumps(DeviceShims(old.releases, old.shims, {})) == dumps(
            DeviceShims(data.releases, data.shims, {}))
        print(f"{args.out}: {'in sync with' if same else 'DIFFERS from'} the headers under {args.folder}")
        return 0 if same else 1
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    d = loads(text)
    per = {dev: sum(1 for s in d.shims.values() if s.device == dev) for dev in DEVICES}
    print(f"{args.out}: {per['cpu']} cpu and {per['cuda']} cuda shims over {', '.join(map(str, d.releases))}; "
          f"exports measured on {', '.join(sorted(d.exports)) or 'no runtime'}")
    return 0
