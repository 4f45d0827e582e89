"""What shimgen derives from its own package data, cached in a form that loads fast (pickle), and the jinja2
templates' compiled bytecode.

A cached value is keyed by the SHA-256 of everything it is derived from: the data file's bytes, the source of the
shimgen modules (the code that derives it), the Python version and the pickle protocol. A change to any of them is a new
key, so a stale entry is never read; the value read is the value `build()` returns (same objects, same output). Files
are written to a temporary name and renamed into place (os.replace), so concurrent runs each read either nothing
or a complete entry; an unreadable, unwritable or corrupt cache is the same as no cache.

Where: $SHIMGEN_CACHE_DIR, else $XDG_CACHE_HOME/shimgen/derived, else ~/.cache/shimgen/derived.
SHIMGEN_CACHE_DIR= (empty) turns caching off; so does a HOME that is empty or relative when no absolute
$XDG_CACHE_HOME applies (a relative XDG_CACHE_HOME is ignored, as the XDG base directory rules say).

Every code or data change makes new keys, so old entries are never read again: after each write the folder is
kept under $SHIMGEN_CACHE_MAX_MB (default 256) by deleting the least recently used entries (a read refreshes an
entry's mtime) until it holds three quarters of that.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
from typing import Callable, TypeVar

T = TypeVar("T")

_PROTOCOL = 5
_DEFAULT_MAX_MB = 256


def directory() -> str | None:
    """The cache folder (not created here), or None when caching is off."""
    explicit = os.environ.get("SHIMGEN_CACHE_DIR")
    if explicit is not None:
        return explicit or None
    base = user_cache_home()
    return os.path.join(base, "shimgen", "derived") if base else None


def user_cache_home() -> str | None:
    """The user's cache folder by the XDG base directory rules: $XDG_CACHE_HOME when absolute (unset, empty or
    relative: ignored), else $HOME/.cache; None when HOME is empty or relative (it names no folder: never /.cache
    or a folder under the working directory)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):
        return base
    home = os.environ["HOME"] if "HOME" in os.environ else os.path.expanduser("~")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    h.update(f"{sys.version}\0{_PROTOCOL}\0".encode() + code())
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:40]


# The layers whose code derives every cached value and defines its classes: the generation stack, which imports
# no proof or tool and holds every use of `derived`, `Memo` and `code` (tests/test_layering.py).
STACK = ("base", "facts", "generate")


@functools.cache
def code() -> bytes:
    """The digest of the generation stack's modules (part of every key: any change to the code that derives a value
    or defines its classes invalidates it; the proofs and the tools, which derive none, do not). Reading them costs
    about a millisecond."""
    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    try:
        for root, dirs, names in (w for layer in STACK for w in os.walk(os.path.join(folder, layer))):
            # every module of the layer: a cached object's class may live in a subpackage
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(n for n in names if n.endswith(".py")):
                with open(os.path.join(root, name), "rb") as f:
                    rel = os.path.relpath(os.path.join(root, name), folder)
                    h.update(rel.encode() + b"\0" + f.read() + b"\0")
    except OSError:
        return os.urandom(16)  # unknown code: a key nobody else has, i.e. no reuse
    return h.digest()


def fits(size: int) -> bool:
    """Can this process write a file of `size` bytes under its file size limit (`ulimit -f`)? Past it a write
    fails with EFBIG, or SIGXFSZ kills the process where that signal is not ignored: a cache write that would
    not fit is not tried."""
    try:
        import resource
    except ImportError:
        return True
    try:
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (OSError, ValueError):
        return True
    return soft == resource.RLIM_INFINITY or size <= soft


def write_atomically(path: str, data: bytes) -> None:
    """data at path via a temporary file in the same folder and a rename; silently nothing if that fails (or
    would: more than the file size limit allows)."""
    folder = os.path.dirname(path)
    if not fits(len(data)):
        return
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    prune(folder)


def prune(folder: str) -> None:
    """Delete the least recently used entries of `folder` while it holds more than $SHIMGEN_CACHE_MAX_MB, down to
    three quarters of it; silently nothing on errors (another process may be pruning too)."""
    try:
        limit = int(float(os.environ.get("SHIMGEN_CACHE_MAX_MB", _DEFAULT_MAX_MB)) * 2**20)
        entries = []
        with os.scandir(folder) as it:
            for e in it:
                if e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
    except (OSError, ValueError):
        return
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return
    for _, size, path in sorted(entries):
        if total <= limit * 3 // 4:
            break
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size


def read(path: str) -> bytes | None:
    """The entry's bytes (its mtime refreshed: prune keeps recently used entries), or None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return data


def derived(name: str, parts: list[bytes], build: Callable[[], T]) -> T:
    """build()'s value, from the cache when an entry for exactly these inputs (parts) exists, else built and
    stored. `name` only names the file."""
    folder = directory()
    if folder is None:
        return build()
    path = os.path.join(folder, f"{name}-{_digest(parts)}.pickle")
    data = read(path)
    if data is not None:
        try:
            return pickle.loads(data)
        except Exception:  # a corrupt entry (disk full, edited by hand) is no entry: rebuild it
            pass
    value = build()
    write_atomically(path, pickle.dumps(value, protocol=_PROTOCOL))
    return value


class Memo:
    """A dict of results of a pure function of text (e.g. the layout of a generated C++ file, shimgen.generate.emit.fmt), kept
    across runs in one file keyed by shimgen's code and `parts` (what else the function depends on): any change to
    them is a new, empty memo. A key is the SHA-256 of the input text, so a stale or foreign value is never read;
    the file is rewritten (atomically) by save() only when this run added entries, keeping at most `limit`
    entries (the newest). Caching off: an empty memo that saves nothing."""

    def __init__(self, name: str, parts: list[bytes] = [], limit: int = 20_000) -> None:  # noqa: B006 (read only)
        folder = directory()
        self.path = os.path.join(folder, f"{name}-{_digest(parts)}.pickle") if folder is not None else None
        self.limit = limit
        self.values: dict[bytes, object] = {}
        self.added = 0
        data = read(self.path) if self.path is not None else None
        if data is not None:
            try:
                values = pickle.loads(data)
                if isinstance(values, dict):
                    self.values = values
            except Exception:  # a corrupt memo is an empty one
                pass

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8")).digest()[:20]

    def get(self, text: str):
        return self.values.get(self.key(text))

    def put(self, text: str, value: object) -> None:
        key = self.key(text)
        self.values.pop(key, None)  # newest last
        self.values[key] = value
        self.added += 1

    def save(self) -> None:
        if self.path is None or not self.added:
            return
        if len(self.values) > self.limit:
            self.values = dict(list(self.values.items())[-self.limit:])
        write_atomically(self.path, pickle.dumps(self.values, protocol=_PROTOCOL))
        self.added = 0  # saved: a later save() writes only what is added after it
