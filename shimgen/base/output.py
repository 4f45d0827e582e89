"""The output folder as one transaction: stage every file, then switch them all, under a lock, across signals.

A run writes DIR like this (`write`):

1. lock: an advisory `flock` on DIR itself (no lock file), exclusive for a writer, shared for a reader
   (`--check`, `--verify`). A second writer waits for the first (saying so once on stderr) and then writes its
   own complete set: concurrent runs serialize. After SHIMGEN_LOCK_TIMEOUT seconds (default 600; a finite
   number, 0 or more, else an error before anything is written) it gives up with one line and writes nothing.
2. recover: a journal (`DIR/.shimgen-commit`) left by a run killed during its switch (SIGKILL, power loss) is
   rolled forward, completing that run's set; staging files of killed runs (`.shimgen-stage-*`, and the
   `.shimgen-XXXXXXXX` temporaries of shimgen <= 0.1) are removed.
3. stage: every file whose bytes change is written as `.shimgen-stage-<random>-<name>` beside its destination,
   then all are made durable (`_make_durable`: one syncfs(2) of each file system they live on where the kernel
   reports write-back errors through it, else an fsync of each file, several at once); a file that already holds its
   bytes is left alone (its modification time too, so a build that regenerates every time recompiles nothing). Any error
   or interrupt here removes every staged file (and the folders this run created): DIR is untouched.
4. switch: the journal listing every (staged, destination) pair is written and atomically renamed into place
   (the commit point), then each staged file is renamed over its destination, then the journal is removed.
   SIGINT and SIGTERM are deferred for the duration (a few renames) and take effect right after it, so an
   interrupted run leaves the complete old set (interrupted before the commit point) or the complete new one.

Why a journal and not renameat2(RENAME_EXCHANGE) of a staged copy of DIR (the other option considered): an
exchange swaps DIR's inode, so a shell or build whose working directory is DIR, an inotify watch on it, or a
bind mount of it keeps pointing at the old folder (a bind-mounted DIR cannot be renamed at all: EBUSY); files
in DIR that shimgen does not write would have to be copied into the staged tree (and anything created in DIR
meanwhile would be lost); and it exists only on Linux and on filesystems that implement it, so a fallback would
be needed anyway. The journal works with plain rename(2) on any POSIX filesystem, keeps DIR itself, touches only
shimgen's files, and survives SIGKILL (the next run, or `shimgen --check`, sees the journal). Its cost: a reader
that does not take the lock can see a mix during the switch itself (microseconds, a handful of renames);
readers that take it (`shimgen --check`, `--verify`) never do.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import math
import os
import re
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import file_kind, read_text

JOURNAL = ".shimgen-commit"
STAGE_PREFIX = ".shimgen-stage-"
# Staging names: this version's, and the mkstemp names of shimgen <= 0.1 (`.shimgen-` + 8 random characters).
_STALE_RE = re.compile(r"\.shimgen-stage-.*|\.shimgen-[a-z0-9_]{8}")
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or a deferred SIGINT) turned into an exception, so every `finally` runs; the CLI exits 128+signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# Where Python prints an exception and drops it: importlib's module-lock weakref callback, which an import may run
# at any moment ("Exception ignored in: <function _get_module_lock.<locals>.cb>").
_DROPPED_HERE = ("<frozen importlib._bootstrap>", "cb")


def _raise_interrupted(signum: int, frame: object) -> None:
    code = getattr(frame, "f_code", None)
    if code is not None and (code.co_filename, code.co_name) == _DROPPED_HERE:
        # raised here, the interrupt would be lost: raise it a moment later, once the callback has returned
        signal.signal(signal.SIGALRM, lambda _signum, later: _raise_interrupted(signum, later))
        signal.setitimer(signal.ITIMER_REAL, 0.005)
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """SIGTERM raises Interrupted (as SIGINT raises KeyboardInterrupt), so cleanup runs on both; restored after."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _deferred_signals() -> Iterator[None]:
    """Hold SIGINT/SIGTERM until the block ends, then act on the first one received (the switch is not cut)."""
    received: list[int] = []
    try:
        previous = {s: signal.signal(s, lambda signum, frame: received.append(signum)) for s in _SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if received:
        handler = previous[received[0]]
        if callable(handler):
            handler(received[0], None)
        elif handler == signal.SIG_DFL:
            raise Interrupted(received[0])


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM at the OS level for a few statements: creating a file or folder and recording it for
    cleanup happen together, so an interrupt never lands between them (it is delivered when the block ends)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask here: the window stays (a few bytecodes)
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def signals_polled() -> Iterator[Callable[[], None]]:
    """Hold SIGINT/SIGTERM as a flag for a block that runs foreign code calling back into Python (libclang's
    cursor visitors, through ctypes): ctypes prints an exception raised in a callback and drops it, so an interrupt
    handled there would be lost (a traceback, and the run going on). Here the handler only records the signal; the
    block calls the `check` it is given at safe points (between libclang calls), which acts on it as the handler in
    place before would have (SIGINT: KeyboardInterrupt; SIGTERM under the CLI: Interrupted); so does the end of
    the block. An ignored signal stays ignored."""
    received: list[int] = []
    previous: dict[int, object] = {}

    def check() -> None:
        while received:
            signum = received.pop(0)
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                raise Interrupted(signum)

    try:
        for s in _SIGNALS:
            if signal.getsignal(s) not in (signal.SIG_IGN, None):
                previous[s] = signal.signal(s, lambda signum, frame: received.append(signum))
    except ValueError:  # not the main thread: signals are not ours to handle
        yield lambda: None
        return
    try:
        yield check
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    check()


# ---- lock ------------------------------------------------------------------------------------------------------


def _lock_timeout() -> float:
    """SHIMGEN_LOCK_TIMEOUT: seconds to wait for a folder another run holds (default 600); a value that is not a
    finite number of seconds, 0 or more (`nan` or `inf` would wait forever), is an error."""
    text = os.environ.get("SHIMGEN_LOCK_TIMEOUT", "600")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ShimgenError(f"SHIMGEN_LOCK_TIMEOUT={text}: expected a number of seconds, 0 or more (how long to wait "
                           "for a folder another shimgen run holds; default 600)")
    return seconds


@contextlib.contextmanager
def locked(folder: str, exclusive: bool, timeout: float | None = None) -> Iterator[None]:
    """An advisory lock on the folder (which must exist): exclusive for writers, shared for readers. `timeout`:
    seconds to wait for it (default: SHIMGEN_LOCK_TIMEOUT's, checked before anything is done)."""
    timeout = _lock_timeout() if timeout is None else timeout
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise ShimgenError(f"cannot open {folder}: {e.strerror}") from None
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = None
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    print(f"shimgen: note: cannot lock {folder} ({e.strerror}); concurrent runs are not serialized",
                          file=sys.stderr)
                    break
            if deadline is None:
                deadline = time.monotonic() + timeout
                print(f"shimgen: note: waiting for another shimgen run using {folder}", file=sys.stderr)
            elif time.monotonic() > deadline:
                raise ShimgenError(f"{folder} is locked by another shimgen run (waited {timeout:.0f} s)")
            time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


# ---- state left by earlier runs --------------------------------------------------------------------------------


def stale_files(out: str, rels: list[str]) -> list[str]:
    """Staging files of interrupted runs in the folders the output's files live in (paths under out)."""
    found = []
    for d in sorted({os.path.dirname(os.path.join(out, r)) for r in rels} | {out}):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in sorted(names):
            if _STALE_RE.fullmatch(n) and os.path.isfile(os.path.join(d, n)) and not os.path.islink(os.path.join(d, n)):
                found.append(os.path.join(d, n))
    return found


def _read_journal(out: str) -> tuple[list[tuple[str, str]], list[str]] | None:
    """(moves, removals) of an interrupted switch, or None."""
    path = os.path.join(out, JOURNAL)
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_text(path, path, limit=1 << 20))
        moves = [(str(a), str(b)) for a, b in data["moves"]]
        removals = [str(r) for r in data.get("removes", [])]
    except (ValueError, KeyError, TypeError, ShimgenError) as e:
        why = e.reason.removeprefix(f"cannot read {path}: ") if isinstance(e, ShimgenError) else e
        raise ShimgenError(f"cannot read {path}, the journal of an interrupted run ({why}); remove it and rerun") from None
    for rel in [p for m in moves for p in m] + removals:  # only ever within out
        if os.path.isabs(rel) or ".." in rel.split("/"):
            raise ShimgenError(f"{path}: unexpected path {rel!r}; remove it and rerun")
    for tmp, _ in moves:  # only ever moves a staging file
        if not os.path.basename(tmp).startswith(STAGE_PREFIX):
            raise ShimgenError(f"{path}: unexpected staging name {tmp!r}; remove it and rerun")
    return moves, removals


def pending_journal(out: str) -> bool:
    return os.path.lexists(os.path.join(out, JOURNAL))


def journal_problem(out: str) -> str | None:
    """Why the next run cannot complete out's pending journal (what it would answer), or None."""
    try:
        _read_journal(out)
    except ShimgenError as e:
        return e.reason
    return None


def unknown_files(out: str, rels: set[str], owned: tuple[str, ...]) -> list[str]:
    """Files (anything but a folder) in the folders the output's files live in that no run writes: not one of
    `rels`, not the journal or a staging file, not a `.h` an owned folder's run removes (`unwritten`). Paths
    under out."""
    skip = rels | set(unwritten(out, owned, rels))
    found = []
    for d in sorted({os.path.dirname(r) for r in rels}):
        folder = os.path.join(out, d)
        try:
            names = sorted(os.listdir(folder)) if not os.path.islink(folder) else []
        except OSError:
            continue
        for n in names:
            rel = f"{d}/{n}" if d else n
            path = os.path.join(folder, n)
            if rel in skip or n == JOURNAL or _STALE_RE.fullmatch(n) or (os.path.isdir(path) and not os.path.islink(path)):
                continue
            found.append(path)
    return found


def recover(out: str, rels: list[str]) -> None:
    """Roll forward an interrupted switch, then remove staging files of killed runs. Hold the exclusive lock."""
    journal = _read_journal(out)
    if journal is not None:
        moves, removals = journal
        for tmp, dest in moves:
            src = os.path.join(out, tmp)
            if os.path.lexists(src):
                os.replace(src, os.path.join(out, dest))
        for rel in removals:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(out, rel))
        _fsync_dirs(out, [d for _, d in moves] + removals)
        os.unlink(os.path.join(out, JOURNAL))
        _fsync_dir(out)
    for path in stale_files(out, rels):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# ---- the transaction -------------------------------------------------------------------------------------------


def _fsync_dir(d: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_dirs(out: str, rels: list[str]) -> None:
    for d in sorted({os.path.dirname(os.path.join(out, r)) for r in rels}):
        _fsync_dir(d)


def _makedirs(path: str, created: list[str]) -> None:
    """os.makedirs, recording every folder it creates (outermost first) so a failed run can remove them."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.isdir(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            with _signals_blocked():  # made and recorded together: an interrupt cannot leave it unrecorded
                os.mkdir(d)
                created.append(d)
        except FileExistsError:
            if not os.path.isdir(d):
                kind = file_kind(os.lstat(d).st_mode)
                shown = "it" if d == os.path.abspath(path) else _shown_path(d)
                raise ShimgenError(f"cannot write {path}: {shown} is {kind}, not a directory") from None


def _shown_path(path: str) -> str:
    """An absolute path as a message shows it: relative to the working directory when it lies under it."""
    rel = os.path.relpath(path)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def _stage(out: str, rel: str, text: str | bytes, umask: int, staged: dict[str, str], token: str,
           keep: os.stat_result | None = None) -> None:
    """Write `text` to a new staging file beside rel's destination, recorded in `staged` the moment it exists (an
    interrupt from then on removes it with the others: tests/test_hardening.py's interrupt trials). Its name is
    `.shimgen-stage-<token>-<name>`, the token random per run, created exclusively (O_EXCL) with an ordinary
    file's mode: one open per file, where mkstemp drew a random name per file and needed a chmod after it. A
    name already taken (never, but for a clash of tokens) falls back to mkstemp. `keep`: the stat of the file this
    one replaces (a source `shimgen port --fix` rewrites), whose permission bits (and owner, where the process may
    set it) the staging file takes before any byte is written."""
    path = os.path.join(out, rel)
    folder, name = os.path.split(path)
    with _signals_blocked():
        try:
            tmp = os.path.join(folder, f"{STAGE_PREFIX}{token}-{name}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o600 if keep is not None else 0o666)
            mode = None  # the umask applies, as to any new file
        except FileExistsError:
            fd, tmp = tempfile.mkstemp(prefix=STAGE_PREFIX, suffix="-" + name, dir=folder)
            mode = 0o666 & ~umask  # mkstemp creates 0600: give an ordinary file's mode
        staged[rel] = tmp
    try:
        try:
            if keep is not None:
                if (keep.st_uid, keep.st_gid) != (os.getuid(), os.getgid()):
                    with contextlib.suppress(OSError):  # only root (or a member of the group) may
                        os.fchown(fd, keep.st_uid, keep.st_gid)
                mode = stat.S_IMODE(keep.st_mode)
            if mode is not None:
                os.fchmod(fd, mode)
            data = memoryview(text.encode("utf-8") if isinstance(text, str) else text)
            while data:  # one write(2) for a whole file, unless the kernel takes less
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _unchanged(path: str, text: str) -> bool:
    """Does `path` already hold exactly `text` (a regular file, not a link)? Then the run leaves it alone, so a
    build that regenerates on every run sees unchanged headers keep their modification time (no rebuild)."""
    data = text.encode("utf-8")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # a link fails (O_NOFOLLOW); a FIFO opens without waiting (O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        chunks, left = [], len(data) + 1  # one byte more: a file that grew meanwhile differs
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks) == data
    except OSError:
        return False
    finally:
        os.close(fd)


def _fsync_all(paths: list[str]) -> None:
    """fsync every staged file before the commit point, several at once: the waits for the disk overlap (one
    fsync after another cost 3-4 ms a file here, most of a whole-yaml run's wall time)."""

    def one(path: str) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    if len(paths) < 4:
        for path in paths:
            one(path)
        return
    from concurrent.futures import ThreadPoolExecutor  # imported here: a run that stages few files never needs it

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one, paths))


SYNCFS_MIN_FILES = 4  # fewer staged files are fsync'd one by one (as cheap, and no libc lookup)


@functools.cache
def _syncfs():
    """libc's syncfs(2) where it can stand in for an fsync of each staged file, else None.

    syncfs(fd) writes back every dirty page and inode of the file system holding fd and waits for the device
    (ext4, xfs, btrfs: a journal commit and a cache flush), so every staged file on it is as durable as after its
    own fsync. What fsync also gives is the error: since Linux 5.8 syncfs returns a write-back error (EIO,
    ENOSPC...) of any file of that file system that happened after fd was opened (the superblock's error
    sequence); before 5.8 it always returns 0, so older kernels, and systems without syncfs, keep the fsync of
    each file. (An error older than the fd that nobody has seen is reported too: a failed run, never a silent
    one.) Measured here (whole 2.13 yaml, 2,067 staged files): fsync of each, 8 threads, 0.2-0.45 s; one syncfs
    0.03 s."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", os.uname().release).groups())
    except (AttributeError, ValueError):
        return None
    if (major, minor) < (5, 8):
        return None
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (ImportError, OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


class _Durability:
    """Makes the staged files durable before the commit point (`done`): one syncfs of each file system they are
    on (`_syncfs`), through a descriptor of a folder on it opened before the first file staged there (so a
    write-back error of the staged files is reported), or, where syncfs cannot stand in, an fsync of each."""

    def __init__(self) -> None:
        self.fds: dict[int, int] = {}  # st_dev -> a descriptor of a folder on that file system
        self.folders: set[str] = set()
        self.paths: list[str] = []

    def before_staging_in(self, folder: str) -> None:
        if folder in self.folders:
            return
        self.folders.add(folder)
        if _syncfs() is None:
            return
        dev = os.stat(folder).st_dev
        if dev not in self.fds:
            self.fds[dev] = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))

    def done(self, paths: list[str]) -> None:
        syncfs = _syncfs()
        if syncfs is None or len(paths) < SYNCFS_MIN_FILES:
            _fsync_all(paths)
            return
        import ctypes  # loaded already by _syncfs

        for _, fd in sorted(self.fds.items()):
            if syncfs(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err))

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


def write(out: str, files: dict[str, str], before_switch=None, owned: tuple[str, ...] = ()) -> list[str]:
    """Write `files` (path relative to out -> text) into out as one transaction; return the paths written.
    `before_switch(paths)` runs once everything is staged, just before the switch: raising there aborts it.
    `owned`: folders (relative to out, ending in "/") whose every `.h` file is the tool's: one this run does not
    write (a per-op header of an op no longer selected) is removed in the same switch."""
    timeout = _lock_timeout()  # a bad SHIMGEN_LOCK_TIMEOUT is an error before out is created
    umask = os.umask(0)
    os.umask(umask)
    rels = list(files)
    outer: list[str] = []  # out and the parents this run created (removed again if the run fails and they are empty)
    inner: list[str] = []  # folders created inside out
    staged: dict[str, str] = {}  # rel -> staging path
    committed: list[bool] = []  # set at the commit point: from then on the journal completes the switch
    token = os.urandom(4).hex()  # this run's staging names (_stage)
    durability = _Durability()
    try:
        try:
            _makedirs(out, outer)
        except OSError as e:
            raise ShimgenError(f"cannot write {out}: {e.strerror}") from None
        with locked(out, exclusive=True, timeout=timeout):
            try:
                recover(out, rels)
                made: dict[str, bool] = {}  # folder -> created by this run (under the lock: empty but for it)
                for rel in rels:
                    path = os.path.join(out, rel)
                    folder = os.path.dirname(path)
                    fresh = made.get(folder)
                    if fresh is None:
                        before = len(inner)
                        _makedirs(folder, inner)
                        fresh = made[folder] = len(inner) > before
                    # In a folder this run created, nothing is there to check (a stat or three a file).
                    if not fresh and os.path.isdir(path) and not os.path.islink(path):  # a rename would fail
                        raise ShimgenError(f"cannot write {path}: it is a directory")
                    if not fresh and _unchanged(path, files[rel]):  # already what this run writes: no stage
                        continue
                    durability.before_staging_in(folder)
                    _stage(out, rel, files[rel], umask, staged, token)
                durability.done(list(staged.values()))
                if before_switch is not None:
                    before_switch([os.path.join(out, rel) for rel in rels])
                removals = unwritten(out, owned, set(rels))
                if staged or removals:
                    _switch(out, staged, committed, removals)
            except OSError as e:
                name = f" {e.filename}" if getattr(e, "filename", None) else ""
                if committed:
                    raise ShimgenError(f"cannot finish writing {out}:{name} {e.strerror}; the journal {JOURNAL} "
                                       "stays, and the next shimgen run into this folder completes it") from None
                raise ShimgenError(f"cannot write {out}:{name} {e.strerror}") from None
            finally:
                if not committed:  # an error or an interrupt before the commit point: out stays as it was
                    _remove(list(staged.values()), inner)
    finally:
        durability.close()
        if not committed:
            _remove([], outer)
    return [os.path.join(out, rel) for rel in rels]


def _remove(files: list[str], folders: list[str]) -> None:
    """Remove the files, then the folders (innermost first) that are empty."""
    for path in files:
        with contextlib.suppress(OSError):
            os.unlink(path)
    for d in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(d)  # only if empty


def unwritten(out: str, owned: tuple[str, ...], rels: set[str]) -> list[str]:
    """The `.h` files in the owned folders that this run does not write."""
    found = []
    for d in owned:
        with contextlib.suppress(OSError):
            for n in sorted(os.listdir(os.path.join(out, d))):
                rel = d + n
                if n.endswith(".h") and rel not in rels and os.path.isfile(os.path.join(out, rel)):
                    found.append(rel)
    return found


def _switch(out: str, staged: dict[str, str], committed: list[bool], removals: list[str]) -> None:
    moves = [(os.path.relpath(tmp, out).replace(os.sep, "/"), rel) for rel, tmp in staged.items()]
    with _deferred_signals():
        fd, tmp = tempfile.mkstemp(prefix=STAGE_PREFIX, suffix="-commit", dir=out)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"moves": moves, "removes": removals}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, os.path.join(out, JOURNAL))  # the commit point
            committed.append(True)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(out)
        for staged_rel, rel in moves:
            os.replace(os.path.join(out, staged_rel), os.path.join(out, rel))
        for rel in removals:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(out, rel))
        _fsync_dirs(out, [rel for _, rel in moves] + removals)
        os.unlink(os.path.join(out, JOURNAL))
        _fsync_dir(out)


# ---- single files (reports) ------------------------------------------------------------------------------------


def check_destinations(files: list[tuple[str, str]]) -> None:
    """Refuse, before any work, what write_files would refuse of these destinations ((path, label)): one that is not
    a regular file, two naming the same file, a folder that does not exist. What only writing finds (a full disk,
    a read-only folder) is left to write_files, which says it in the same words."""
    labels: dict[str, str] = {}
    for path, label in files:
        with contextlib.suppress(OSError):  # a FIFO, a device, /dev/stdout: refused, never opened
            if not stat.S_ISREG(mode := os.stat(path).st_mode):
                raise ShimgenError(f"cannot write {label}: it is {file_kind(mode)}, not a regular file")
        dest = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
        if dest in labels:
            raise ShimgenError(f"cannot write {label}: {labels[dest]} names the same file")
        labels[dest] = label
        if os.path.lexists(dest) and not stat.S_ISREG(mode := os.lstat(dest).st_mode):
            raise ShimgenError(f"cannot write {label}: it is {file_kind(mode)}, not a regular file")
        try:
            folder = os.stat(os.path.dirname(dest)).st_mode
        except OSError as e:
            raise ShimgenError(f"cannot write {label}: {e.strerror or e}") from None
        if not stat.S_ISDIR(folder):
            raise ShimgenError(f"cannot write {label}: {os.strerror(errno.ENOTDIR)}")


def write_files(files: list[tuple], before_switch=None) -> None:
    """Write a few standalone files as the output folder's files are written, as one transaction. Each entry is
    (path, label naming it in errors such as `--json r.json`, text) for a report, or (path, label, bytes, original)
    for a file rewritten in place (`shimgen port --fix`): `original` is the bytes read from it, and the file keeps
    its permission bits (and owner where the process may set it).

    Every file is staged beside its destination and made durable; a rewritten file whose bytes are no longer
    `original` (edited since it was read) refuses the whole run, naming it; then `before_switch()` (raising there
    aborts); then, after a last check of the rewritten files, all are renamed into place with SIGINT and SIGTERM
    held (they take effect after the last rename). An error or an interrupt before the renames leaves every
    destination as it was and no staging file; a rename that fails midway (never seen: each is within a folder the
    run has just written to) puts the rewritten files already renamed back to their original bytes. A destination
    that is a link is written through (its target replaced, the link kept); one that is not a regular file (a
    folder, a FIFO, a device) is refused."""
    umask = os.umask(0)
    os.umask(umask)
    token = os.urandom(4).hex()
    staged: dict[str, str] = {}  # destination -> staging path
    labels: dict[str, str] = {}
    originals: dict[str, bytes] = {}  # destination -> the bytes it must still hold (rewrites only)
    label = ""
    check_destinations([(entry[0], entry[1]) for entry in files])
    try:
        try:
            for path, label, text, *rest in files:
                dest = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
                labels[dest] = label
                keep = None
                if rest and rest[0] is not None:
                    originals[dest] = rest[0]
                    keep = os.stat(dest)
                mine: dict[str, str] = {}
                try:
                    _stage(os.path.dirname(dest), os.path.basename(dest), text, umask, mine, token, keep)
                finally:
                    staged.update({dest: tmp for tmp in mine.values()})
            for dest, tmp in staged.items():
                label = labels[dest]
                _fsync_all([tmp])
            _check_unchanged(originals, labels)
            if before_switch is not None:
                before_switch()
            done: list[str] = []
            with _deferred_signals():
                _check_unchanged(originals, labels)
                try:
                    for dest, tmp in list(staged.items()):
                        label = labels[dest]
                        os.replace(tmp, dest)
                        del staged[dest]
                        done.append(dest)
                except BaseException:
                    _put_back([d for d in done if d in originals], originals, umask, token)
                    raise
            for folder in sorted({os.path.dirname(d) for d in labels}):
                _fsync_dir(folder)
        except OSError as e:
            raise ShimgenError(f"cannot write {label}: {e.strerror or e}" + ("; no file was changed" if originals
                                                                             else "")) from None
    finally:
        _remove(list(staged.values()), [])


def _check_unchanged(originals: dict[str, bytes], labels: dict[str, str]) -> None:
    """Refuse the run if a file to be rewritten no longer holds the bytes it was read with (an editor saved it, a
    checkout changed it): its edit would be lost."""
    for dest, data in originals.items():
        try:
            now = read_bytes_exactly(dest, len(data))
        except OSError as e:
            raise ShimgenError(f"{labels[dest]}: cannot read it again before rewriting it ({e.strerror or e}); "
                               "no file was changed") from None
        if now != data:
            raise ShimgenError(f"{labels[dest]} changed since it was read; no file was changed (run again to "
                               "rewrite the new contents)")


def read_bytes_exactly(path: str, size: int) -> bytes | None:
    """The file's bytes if it holds `size` of them (one more is read: a longer file differs), else None."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks, left = [], size + 1
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if len(data) == size else None


def _put_back(dests: list[str], originals: dict[str, bytes], umask: int, token: str) -> None:
    """Best effort after a failed switch: each rewritten file already renamed gets its original bytes again."""
    for dest in dests:
        mine: dict[str, str] = {}
        with contextlib.suppress(OSError):
            try:
                _stage(os.path.dirname(dest), os.path.basename(dest), originals[dest], umask, mine, "back-" + token,
                       os.stat(dest))
                os.replace(mine.pop(os.path.basename(dest)), dest)
            finally:
                _remove(list(mine.values()), [])
