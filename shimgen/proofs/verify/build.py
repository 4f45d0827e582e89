"""Compiling for --verify: the installed torch's include and library folders, g++ invocations, and reuse of
build products (a library is rebuilt only when the hash of its sources and flags changes)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata

from shimgen.base.errors import ShimgenError

CXX_FLAGS = ("-O1", "-shared", "-fPIC")
OBJECT_FLAGS = ("-O1", "-fPIC")
STABLE_FLAGS = ("-std=c++17", "-DTORCH_STABLE_ONLY")  # extension code: stable headers only, as users build
ATEN_FLAGS = ("-std=c++20", "-DAT_PER_OPERATOR_HEADERS")  # C shim definitions: ATen's headers want C++20


@dataclass(frozen=True)
class Torch:
    """The installed torch wheel, found without importing it."""

    root: str
    version: str

    @property
    def include_dirs(self) -> list[str]:
        inc = os.path.join(self.root, "include")
        return [inc, os.path.join(inc, "torch", "csrc", "api", "include")]

    @property
    def lib_dir(self) -> str:
        return os.path.join(self.root, "lib")

    def stable_flags(self, generated: str | None = None, overlay: bool = False,
                     macros: tuple[str, ...] | list[str] = ()) -> list[str]:
        """Compile flags for a stable-ABI TU; a shimgen output folder goes first so its headers shadow torch's.
        `overlay`: the TU opts in to shimgen's overlay routes (-DSHIMGEN_OVERLAY; it links libshimgen_overlay).
        `macros`: a build world's own -D flags instead (plan.World.macros; none: the default build)."""
        return [*STABLE_FLAGS, *(["-DSHIMGEN_OVERLAY"] if overlay else []), *macros,
                *([f"-I{generated}"] if generated else []), f"-I{self.include_dirs[0]}"]

    def aten_flags(self, generated: str | None = None) -> list[str]:
        """Compile flags for code that uses ATen (the C shim definitions libtorch would carry)."""
        return [*ATEN_FLAGS, *([f"-I{generated}"] if generated else []), *(f"-I{d}" for d in self.include_dirs)]

    def link_flags(self) -> list[str]:
        return [f"-L{self.lib_dir}", "-ltorch", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{self.lib_dir}"]


def find_torch() -> Torch:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ShimgenError("--verify needs the torch package installed")
    root = list(spec.submodule_search_locations)[0]
    if not os.path.isdir(os.path.join(root, "include")):
        raise ShimgenError(f"--verify needs torch's C++ headers; {root}/include is missing")
    return Torch(root, metadata.version("torch"))


def compiler() -> str:
    """The C++ compiler: $CXX (a path, or a command on PATH), else g++ or c++ on PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        if shutil.which(cxx) is None:
            raise ShimgenError(f"CXX={cxx}: no such compiler (not an executable file, nor a command on PATH)")
        return cxx
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise ShimgenError("--verify needs a C++ compiler (g++); none found (set CXX)")
    return cxx


def compiler_id(cxx: str) -> str:
    """`cxx --version`: part of every build hash, so a compiler upgrade rebuilds. A compiler that cannot run it
    is an error (one line naming the compiler and what it said)."""
    try:
        proc = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    except OSError as e:
        raise ShimgenError(f"cannot run the C++ compiler {cxx}: {e.strerror}") from None
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise ShimgenError(f"the C++ compiler {cxx} does not run: `{cxx} --version` ended with exit status "
                           f"{proc.returncode}: {said}")
    return proc.stdout


@dataclass
class Step:
    """One build product: its compile command and, once run, whether it was reused and how long it took."""

    name: str  # e.g. "overlay"
    output: str  # path of the product
    command: list[str]
    inputs: list[str]  # texts whose change forces a rebuild (sources, headers they include)
    link: list[str] = field(default_factory=list)  # run after `command` when it compiles an object (library())
    seconds: float = 0.0
    reused: bool = False
    log: str = field(default="", repr=False)
    ran: list[str] = field(default_factory=list, repr=False)  # the last command run: the one that failed, if any

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for part in [*self.command, *self.link, *self.inputs]:
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    @property
    def stamp(self) -> str:
        return self.output + ".hash"

    def up_to_date(self) -> bool:
        if not (os.path.isfile(self.output) and os.path.isfile(self.stamp)):
            return False
        with open(self.stamp) as f:
            return f.read().strip() == self.digest


def library(cxx: str, flags: list[str], source: str, out: str, link: list[str]) -> tuple[list[str], list[str]]:
    """The two commands that build the shared library `out` from one source: compile to the object `out`.o, then
    link it. Split so that a compiler cache (ccache, where the builder has one) can reuse the object: a compile and
    link in one command is never cached."""
    obj = out + ".o"
    return [cxx, *OBJECT_FLAGS, *flags, "-c", source, "-o", obj], [cxx, *CXX_FLAGS, obj, "-o", out, *link]


def _run(step: Step) -> None:
    start = time.perf_counter()
    for cmd in [step.command, step.link] if step.link else [step.command]:
        step.ran = cmd
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            break
    step.seconds = time.perf_counter() - start
    step.log = proc.stdout
    if proc.returncode == 0:
        with open(step.stamp, "w") as f:
            f.write(step.digest + "\n")


def run_steps(steps: list[Step], jobs: int | None = None, check: bool = True) -> list[Step]:
    """Run the steps that are not up to date, concurrently (each is one compiler process; at most `jobs` at
    once, default all); raise on the first failure with the compiler's output, or with check=False return the
    steps that failed (their output in .log)."""
    pending = []
    for s in steps:
        if s.up_to_date():
            s.reused = True
            continue
        if os.path.exists(s.stamp):
            os.unlink(s.stamp)
        pending.append(s)
    if pending:
        with ThreadPoolExecutor(max_workers=min(jobs or len(pending), len(pending))) as pool:
            list(pool.map(_run, pending))
    failed = [s for s in pending if not os.path.isfile(s.stamp)]
    if failed and not check:
        return failed
    if failed:
        s = failed[0]
        tail = "\n".join(s.log.strip().splitlines()[-40:])
        raise BuildError(f"building {s.name} failed:\n$ {' '.join(s.ran)}\n{tail}")
    return []


class BuildError(ShimgenError):
    """A compile or link failed; the message carries the command and the compiler's output (several lines)."""

    def line(self) -> str:  # keep the compiler output readable
        return self.reason
