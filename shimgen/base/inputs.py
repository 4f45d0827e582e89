"""Reading input files: bounded, binary-safe and UTF-8 whatever the locale.

Every file shimgen reads (a native_functions.yaml, version.txt, a stamp, a file under `--check`, and its own
package data: the conversion table, the manifest, the verify samples) goes through `read_text`, so

* a file larger than `limit` (`--yaml /dev/zero`, `/dev/full`, a huge file) is an error after reading at most
  `limit` + 1 bytes, never an unbounded read;
* bytes that are not UTF-8, or a NUL byte (a binary file), are an error naming the file and the offset;
* the text is decoded as UTF-8 (a leading byte-order mark dropped), never in the locale's encoding, so
  `LC_ALL=C PYTHONUTF8=0 shimgen` reads what it reads under a UTF-8 locale;
* an OS error (missing file, a directory, no permission) is a one-line `ShimgenError`.
"""

from __future__ import annotations

import os
import stat
from importlib import resources

from shimgen.base import cache
from shimgen.base.errors import ShimgenError

# native_functions.yaml is ~600 KB today; 64 MB leaves room for any real input and stops runaway reads.
LIMIT = 64 * 1024 * 1024
_BOM = "\ufeff"


class NotText(ShimgenError):
    """The file is readable but is not UTF-8 text (undecodable bytes or a NUL byte)."""


def decode(data: bytes, what: str) -> str:
    """UTF-8 text of `data` (a leading byte-order mark dropped), or NotText naming `what` and the offset."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise NotText(f"{what} is a binary file (a NUL byte at offset {nul}), not UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotText(f"{what} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    return text[1:] if text.startswith(_BOM) else text


def read_bytes(path: str, what: str, limit: int = LIMIT) -> bytes:
    """At most `limit` bytes of the file; ShimgenError if it is longer or cannot be read. Opened without
    blocking (O_NONBLOCK): a FIFO or a socket is refused as not a regular file, never waited on; a device reads
    without waiting (`/dev/zero` is too long, a terminal with nothing typed an error)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ShimgenError(f"cannot read {what}: {e.strerror or e}") from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind == "a directory":
            raise ShimgenError(f"cannot read {what}: Is a directory")
        if kind in ("a FIFO", "a socket"):
            raise ShimgenError(f"cannot read {what}: it is {kind}, not a regular file")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 24))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as e:
        raise ShimgenError(f"cannot read {what}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ShimgenError(f"cannot read {what}: larger than {limit // (1024 * 1024)} MB (not an input shimgen reads)")
    return data


def file_kind(mode: int) -> str:
    """What an lstat/fstat mode is, as messages name it: `a regular file`, `a directory`, `a FIFO`, ..."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK,
                       "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def source_files(paths: list[str], suffixes: tuple[str, ...]) -> list[str]:
    """The files named on a command line: a file as given, a folder searched (sorted) for files ending in one of
    `suffixes`. Each must be a regular file (or a link to one): a FIFO, a socket or a device is a ShimgenError
    naming it, never opened; so is a path that does not exist."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            found += sorted(os.path.join(r, f) for r, _, fs in os.walk(p) for f in fs if f.endswith(suffixes))
        elif os.path.lexists(p):
            found.append(p)
        else:
            raise ShimgenError(f"{p}: no such file or folder")
    for f in found:
        try:
            mode = os.stat(f).st_mode
        except OSError as e:
            raise ShimgenError(f"cannot read {f}: {e.strerror or e}") from None
        if not stat.S_ISREG(mode):
            raise ShimgenError(f"cannot read {f}: it is {file_kind(mode)}, not a regular file")
    return found


def read_text(path: str, what: str | None = None, limit: int = LIMIT) -> str:
    """The UTF-8 text of a file, bounded (see the module docstring). `what` names the file in errors."""
    what = what or path
    return decode(read_bytes(path, what, limit), what)


def package_text(relpath: str) -> str:
    """A data file shipped inside the shimgen package (`data/conversion_table.yaml`), as UTF-8 text."""
    ref = resources.files("shimgen").joinpath(relpath)
    try:
        data = ref.read_bytes()
    except OSError as e:
        raise ShimgenError(f"cannot read shimgen's package file {relpath}: {e.strerror or e}") from None
    return decode(data, f"shimgen's package file {relpath}")


def load_yaml(text: str) -> object:
    """PyYAML's safe load of `text` (libyaml's loader where PyYAML has it). yaml is imported here, on first use:
    its import is a tenth of a small run's start-up, and a run whose package data comes from the cache
    (package_yaml) needs no yaml parser."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def package_yaml(relpath: str) -> object:
    """A yaml data file of the package (`data/manifest.yaml`), loaded by load_yaml, from shimgen's cache keyed by
    the file's bytes (shimgen.base.cache): each call returns a new copy, as loading the file does."""
    text = package_text(relpath)
    name = os.path.splitext(os.path.basename(relpath))[0]
    return cache.derived(f"yaml-{name}", [text.encode()], lambda: load_yaml(text))
