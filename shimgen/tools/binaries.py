"""The binaries `shimgen audit` reads: shared objects named on the command line, inside wheels, or found in folders,
and what each one asks of the libraries it loads with (its undefined dynamic symbols and the symbol versions it
needs), read with binutils (`nm -D --undefined-only`, `readelf -V`, `c++filt`).

Every problem with an input (a path that does not exist, a FIFO, a file that is not an ELF shared object, a corrupt
or truncated wheel, a folder without a binary) is a ShimgenError naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import file_kind

_SO_NAME = re.compile(r"\.so(\.\d+)*$")
_ELF_MAGIC = b"\x7fELF"
_ZIP_MAGIC = b"PK\x03\x04"
_ET_DYN = 3
_NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
_VERSION_NAME = re.compile(r"\bName: (\S+)")
_VERSION_FAMILY = re.compile(r"^([A-Za-z_]*?)_?(\d+(?:\.\d+)*)$")


@dataclass(frozen=True)
class Binary:
    path: str  # as named (the .so, or the wheel holding it)
    member: str | None  # the .so's name inside the wheel
    file: str  # where it can be read now (a temporary copy for a wheel's member)

    @property
    def name(self) -> str:
        return f"{self.path}!{self.member}" if self.member else self.path


@dataclass(frozen=True)
class Undefined:
    name: str  # without its @version
    weak: bool  # `w`: the loader resolves it to null when no library defines it
    version: str | None  # GLIBC_2.14, where nm shows it


def is_shared_object_name(name: str) -> bool:
    return bool(_SO_NAME.search(os.path.basename(name)))


def _head(path: str, n: int = 64) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ShimgenError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind != "a regular file":
            raise ShimgenError(f"{path}: it is {kind}, not a shared object or a wheel")
        return os.read(fd, n)
    except OSError as e:
        raise ShimgenError(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def check_elf(head: bytes, what: str) -> None:
    """A shared object's first bytes: ELF, and of type ET_DYN (a relocatable .o or an executable is refused)."""
    if not head:
        raise ShimgenError(f"{what}: an empty file, not a shared object")
    if not head.startswith(_ELF_MAGIC):
        raise ShimgenError(f"{what}: not an ELF shared object (it does not start with the ELF magic bytes)")
    if len(head) < 18:
        raise ShimgenError(f"{what}: a truncated ELF file ({len(head)} bytes)")
    e_type = int.from_bytes(head[16:18], "little" if head[5] == 1 else "big")
    if e_type != _ET_DYN:
        kind = {1: "a relocatable object (.o)", 2: "an executable", 4: "a core dump"}.get(e_type, f"ELF type {e_type}")
        raise ShimgenError(f"{what}: {kind}, not a shared object")


def _candidates(path: str) -> list[str]:
    """The files a command-line path names: itself, or a folder's shared objects and wheels (sorted; links to files
    in the folder are skipped: the file itself is audited)."""
    if not os.path.lexists(path):
        raise ShimgenError(f"{path}: no such file or folder")
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(root, f)
            if (is_shared_object_name(f) or f.endswith(".whl")) and not os.path.islink(full):
                found.append(full)
    if not found:
        raise ShimgenError(f"{path}: a folder with no shared object (*.so) or wheel (*.whl) in it")
    return found


@contextlib.contextmanager
def opened(paths: list[str]) -> Iterator[list[Binary]]:
    """The binaries the paths name, every one checked before any is audited; a wheel's shared objects are copied
    into a temporary folder, removed on exit."""
    tmp = tempfile.mkdtemp(prefix="shimgen-audit-")
    try:
        binaries: list[Binary] = []
        for path in paths:
            for f in _candidates(path):
                head = _head(f)
                if f.endswith(".whl") or head.startswith(_ZIP_MAGIC):
                    binaries += _wheel(f, os.path.join(tmp, str(len(binaries))))
                else:
                    check_elf(head, f)
                    binaries.append(Binary(f, None, f))
        yield binaries
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _wheel(path: str, into: str) -> list[Binary]:
    """The shared objects of a wheel, each checked and copied under `into`."""
    try:
        with zipfile.ZipFile(path) as z:
            members = sorted((i for i in z.infolist() if not i.is_dir() and is_shared_object_name(i.filename)),
                             key=lambda i: i.filename)
            if not members:
                raise ShimgenError(f"{path}: a wheel with no shared object (*.so) in it")
            found = []
            for i, info in enumerate(members):
                dest = os.path.join(into, str(i), os.path.basename(info.filename))
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with z.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
                with open(dest, "rb") as f:
                    check_elf(f.read(64), f"{path}!{info.filename}")
                found.append(Binary(path, info.filename, dest))
            return found
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise ShimgenError(f"{path}: a corrupt or truncated wheel ({e})") from None
    except OSError as e:
        raise ShimgenError(f"{path}: cannot read the wheel: {e.strerror or e}") from None


def _tool(args: list[str], what: str) -> str:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise ShimgenError(f"{what}: cannot run {args[0]} (binutils): {e.strerror or e}") from None
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise ShimgenError(f"{what}: a corrupt ELF file ({args[0]}: {reason.split(': ')[-1]})")
    return proc.stdout


def undefined(binary: Binary) -> list[Undefined]:
    """The binary's undefined dynamic symbols, sorted by name (`nm -D --undefined-only`)."""
    found = []
    for line in _tool(["nm", "-D", "--undefined-only", binary.file], binary.name).splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, symbol = parts[-2], parts[-1]
        name, _, version = symbol.partition("@")
        found.append(Undefined(name, kind in ("w", "v"), version.lstrip("@") or None))
    return sorted(found, key=lambda u: u.name)


def needed_libraries(binary: Binary) -> list[str]:
    """The libraries the binary names as needed (`readelf -d`'s NEEDED entries), in its order: where the loader
    looks for its undefined symbols (with what those need in turn)."""
    text = _tool(["readelf", "-d", "--wide", binary.file], binary.name)
    return [m.group(1) for m in _NEEDED.finditer(text)]


def needed_versions(binary: Binary) -> dict[str, str]:
    """family -> the highest version of it the binary needs (`readelf -V`'s version needs): {"GLIBC": "2.14",
    "GLIBCXX": "3.4.21"}."""
    text = _tool(["readelf", "-V", "--wide", binary.file], binary.name)
    section = text.split(".gnu.version_r", 1)[1] if ".gnu.version_r" in text else ""
    best: dict[str, tuple[int, ...]] = {}
    for m in _VERSION_NAME.finditer(section):
        vm = _VERSION_FAMILY.match(m.group(1))
        if vm is None:
            continue
        family, number = vm.group(1), tuple(int(x) for x in vm.group(2).split("."))
        if number > best.get(family, ()):
            best[family] = number
    return {f: ".".join(map(str, v)) for f, v in sorted(best.items())}


def demangle(names: list[str]) -> dict[str, str]:
    """mangled -> its C++ name (`c++filt`); a name it cannot read stays as it is."""
    if not names:
        return {}
    try:
        proc = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True,
                              errors="replace")
        shown = proc.stdout.splitlines() if proc.returncode == 0 else []
    except OSError:
        shown = []
    if len(shown) != len(names):
        return {n: n for n in names}
    return dict(zip(names, shown))

