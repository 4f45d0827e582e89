"""The test run's compiler cache: objects (and passed syntax checks) kept by content, reused by a later compile of
the same content in another temporary folder.

tests/cxx.py puts a folder first on PATH whose g++, c++, gcc, cc, clang++ and x86_64-linux-gnu-* are launchers of
this script (`python -S compile_cache.py NAME ARGS...`), so every compile of the run goes through it: the tests'
own, --verify's, the matrix's and the probe's, setuptools', CMake's and torch.utils.cpp_extension's, in every
subprocess. A command it cannot cache (a link, more than one source, the source on stdin, -E) runs the real
compiler (the next NAME on PATH) untouched.

A compile (-c or -fsyntax-only) is looked up in two steps, as ccache's direct mode does:
- its manifest, keyed by the compiler, the arguments and the source's bytes, lists the headers each earlier
  compile of it read (from the compiler's dependency file), each with its bytes' hash;
- an entry whose headers all still hash the same names the stored result: the object, the compiler's warnings and
  the dependency file, restored in place of compiling.

Paths differ between runs only in the temporary folders (pytest's /tmp/pytest-of-USER/pytest-N[/popen-gwK]) and the
checkout: both are written as placeholders wherever the key, the manifest or a stored text holds a path, and put
back for the compile at hand. A compile that fails is stored as well, with its exit status and diagnostics (the
compiler goes on after an ordinary error, so its dependency file lists every header it read), except a fatal
error (a missing header stops the compiler: no dependency file says where it looked).
ccache cannot serve here: it hashes paths relative to the working folder, and the temporary folders' names change
on every run."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = re.compile(r"/tmp/pytest-of-[^/\s]+/pytest-\d+(?:/popen-gw\d+)?")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".C")
# options whose value is the next argument
TAKES_VALUE = frozenset({"-o", "-MF", "-MT", "-MQ", "-I", "-isystem", "-iquote", "-idirafter", "-include",
                         "-imacros", "-x", "-D", "-U", "-L", "-l", "-Xlinker", "-Xpreprocessor", "-Xassembler",
                         "--param", "-aux-info"})
NOT_CACHED = frozenset({"-E", "-M", "-MM", "-S", "-", "-save-temps", "--version", "-v", "-###"})
KEEP = 1200  # stored results (and as many manifests) kept; the least recently used go first


def real_compiler(name: str) -> str | None:
    """`name` on PATH after the launchers' folder (the launchers name it in SHIMGEN_COMPILE_CACHE_BIN)."""
    ours = os.environ.get("SHIMGEN_COMPILE_CACHE_BIN", "")
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and os.path.realpath(folder) != os.path.realpath(ours or "/nonexistent"):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


class Roots:
    """The run's varying path prefixes: the one temporary root the arguments name, and the checkout."""

    def __init__(self, args: list[str]) -> None:
        found = {m.group(0) for a in [*args, os.getcwd()] for m in TMP.finditer(a)}
        self.ok = len(found) <= 1
        self.tmp = found.pop() if len(found) == 1 else None

    def out(self, text: str) -> str:
        text = TMP.sub("<tmp>", text) if self.tmp else text
        return text.replace(REPO, "<repo>")

    def back(self, text: str) -> str:
        text = text.replace("<repo>", REPO)
        return text.replace("<tmp>", self.tmp) if self.tmp else text


def parse(args: list[str]) -> dict | None:
    """The source, output and dependency-file options of a cacheable compile; None for anything else."""
    if any(a in NOT_CACHED or a.startswith("-fdump") for a in args):
        return None
    mode = "-c" if "-c" in args else "-fsyntax-only" if "-fsyntax-only" in args else None
    if mode is None:
        return None
    sources, out, depfile, target, i = [], None, None, None, 0
    while i < len(args):
        a = args[i]
        if a in TAKES_VALUE:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            if a == "-o":
                out = value
            elif a == "-MF":
                depfile = value
            elif a in ("-MT", "-MQ"):
                target = value
            elif a == "-x" and value not in ("c++", "c"):
                return None
            i += 2
            continue
        if not a.startswith("-") and a.endswith(SOURCE_SUFFIXES):
            sources.append(a)
        i += 1
    if len(sources) != 1 or (mode == "-c" and out is None):
        return None
    wants_deps = any(a in ("-MD", "-MMD") for a in args)
    return {"mode": mode, "source": sources[0], "out": out, "depfile": depfile if wants_deps else None,
            "target": target}


def deps_of(depfile_text: str) -> list[str]:
    """The files a make-style dependency file lists after its target."""
    text = depfile_text.replace("\\\n", " ")
    _, _, rest = text.partition(": ")
    names, cur, i = [], "", 0
    while i < len(rest):
        c = rest[i]
        if c == "\\" and i + 1 < len(rest) and rest[i + 1] == " ":
            cur, i = cur + " ", i + 2
            continue
        if c.isspace():
            if cur:
                names.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        names.append(cur)
    return names


def file_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def write(path: str, data: bytes) -> None:
    fd, stage = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".stage-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(stage, path)  # whole or not at all: concurrent compiles never read half an entry


def prune(folder: str) -> None:
    for suffix in (".result", ".manifest"):
        entries = [e for e in os.scandir(folder) if e.name.endswith(suffix)]
        if len(entries) <= KEEP:
            continue
        for e in sorted(entries, key=lambda e: e.stat().st_mtime)[: len(entries) - KEEP]:
            for path in (e.path, e.path[: -len(suffix)] + ".o") if suffix == ".result" else (e.path,):
                try:
                    os.remove(path)
                except OSError:
                    pass  # another compile removed it first


def log(event: str, args: list[str]) -> None:
    """With SHIMGEN_COMPILE_CACHE_LOG set, one line per compile: hit, miss, or pass (not cacheable)."""
    path = os.environ.get("SHIMGEN_COMPILE_CACHE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{event} {os.getcwd()} {' '.join(args)}\n")


def compile_cached(name: str, compiler: str, args: list[str], folder: str) -> int:
    spec = parse(args)
    roots = Roots(args)
    if spec is None or not roots.ok:
        log("pass", args)
        return subprocess.call([compiler, *args])
    cwd = os.getcwd()
    source = os.path.join(cwd, spec["source"])
    src_hash = file_hash(source)
    if src_hash is None:
        return subprocess.call([compiler, *args])
    st = os.stat(compiler)
    key = hashlib.sha256()
    for part in [name, os.path.realpath(compiler), str(st.st_size), str(int(st.st_mtime)), roots.out(cwd),
                 *(roots.out(a) for a in args), src_hash]:
        key.update(part.encode() + b"\0")
    manifest_path = os.path.join(folder, key.hexdigest() + ".manifest")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = []
    for entry in manifest:
        if all(file_hash(roots.back(path)) == digest for path, digest in entry["deps"]):
            status = restore(os.path.join(folder, entry["result"] + ".result"), spec, roots, cwd)
            if status is not None:
                os.utime(manifest_path)
                log("hit", args)
                return status
    log("miss", args)
    # a miss: compile, with a dependency file of our own unless the command asks for one
    own_depfile = None
    extra = []
    if spec["depfile"] is None:
        fd, own_depfile = tempfile.mkstemp(suffix=".d")
        os.close(fd)
        extra = ["-MD", "-MF", own_depfile]
    proc = subprocess.run([compiler, *args, *extra], stderr=subprocess.PIPE)
    sys.stderr.buffer.write(proc.stderr)
    depfile = own_depfile or os.path.join(cwd, spec["depfile"])
    failed = proc.returncode != 0
    try:
        if failed and (b"fatal error" in proc.stderr or b"compilation terminated" in proc.stderr):
            return proc.returncode
        try:
            with open(depfile, encoding="utf-8") as f:
                dep_text = f.read()
        except OSError:
            return proc.returncode  # no dependency file (a failure the compiler wrote none for): nothing stored
        deps = []
        for path in deps_of(dep_text):
            absolute = os.path.normpath(os.path.join(cwd, path))
            digest = file_hash(absolute)
            if digest is None:
                return proc.returncode  # a header gone already: nothing stored
            deps.append([roots.out(absolute), digest])
        result = hashlib.sha256(key.digest() + json.dumps(deps).encode()).hexdigest()
        os.makedirs(folder, exist_ok=True)
        if spec["mode"] == "-c" and not failed:
            with open(os.path.join(cwd, spec["out"]), "rb") as f:
                write(os.path.join(folder, result + ".o"), f.read())
        stored = {"returncode": proc.returncode, "stderr": roots.out(proc.stderr.decode(errors="replace")),
                  "depfile": None if own_depfile else roots.out(dep_text)}
        write(os.path.join(folder, result + ".result"), json.dumps(stored).encode())  # after its object
        manifest = [e for e in manifest if e["result"] != result][-7:] + [{"deps": deps, "result": result}]
        write(manifest_path, json.dumps(manifest).encode())
        prune(folder)
        return proc.returncode
    finally:
        if own_depfile:
            os.unlink(own_depfile)


def restore(path: str, spec: dict, roots: Roots, cwd: str) -> int | None:
    """The stored compile put back: its exit status, or None when the entry is gone or incomplete."""
    try:
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return None
    status = stored.get("returncode", 0)
    if spec["mode"] == "-c" and status == 0:
        try:
            with open(path[: -len(".result")] + ".o", "rb") as f:
                obj = f.read()
        except OSError:
            return None
        write(os.path.join(cwd, spec["out"]), obj)
    if spec["depfile"] is not None and stored["depfile"] is not None:
        write(os.path.join(cwd, spec["depfile"]), roots.back(stored["depfile"]).encode())
    sys.stderr.write(roots.back(stored["stderr"]))
    os.utime(path)
    return status


def main(argv: list[str]) -> int:
    name, args = os.path.basename(argv[0]), argv[1:]
    compiler = real_compiler(name)
    if compiler is None:
        print(f"compile_cache: no {name} on PATH after {os.environ.get('SHIMGEN_COMPILE_CACHE_BIN')}",
              file=sys.stderr)
        return 127
    folder = os.environ.get("SHIMGEN_COMPILE_CACHE")
    if not folder:
        return subprocess.call([compiler, *args])
    return compile_cached(name, compiler, args, folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
