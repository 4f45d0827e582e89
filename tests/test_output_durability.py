"""How shimgen.base.output makes staged files durable before the commit point: one syncfs(2) per file system where
the kernel reports write-back errors through it (Linux >= 5.8), else an fsync of each staged file."""

from __future__ import annotations

import errno
import os

import pytest

from shimgen.base import output
from shimgen.base.errors import ShimgenError

FILES = {f"torch/csrc/stable/ops/op{k}.h": f"// op {k}\n" for k in range(12)} | {"python/stub.py": "x = 1\n"}


def _listing(folder) -> dict[str, bytes]:
    found = {}
    for root, _, names in os.walk(folder):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


@pytest.fixture
def calls(monkeypatch):
    """Records the syncfs and fsync calls of a write (both still performed)."""
    seen: dict[str, list[int]] = {"syncfs": [], "fsync": []}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        seen["fsync"].append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    real = output._syncfs()
    if real is not None:
        def syncfs(fd: int) -> int:
            seen["syncfs"].append(fd)
            return real(fd)

        monkeypatch.setattr(output, "_syncfs", lambda: syncfs)
    return seen


def test_syncfs_stands_in_for_each_fsync_where_the_kernel_reports_errors(tmp_path, calls) -> None:
    if output._syncfs() is None:
        pytest.skip("no syncfs that reports write-back errors here (not Linux >= 5.8): each file is fsync'd")
    written = output.write(str(tmp_path / "out"), FILES)
    assert len(written) == len(FILES)
    assert _listing(tmp_path / "out") == {k: v.encode() for k, v in FILES.items()}
    assert len(calls["syncfs"]) == 1  # one file system: one syncfs for all 13 staged files
    # the journal and the folders are still fsync'd one by one, the staged files never
    assert len(calls["fsync"]) < len(FILES)


def test_without_syncfs_every_staged_file_is_fsynced(tmp_path, monkeypatch, calls) -> None:
    monkeypatch.setattr(output, "_syncfs", lambda: None)
    output.write(str(tmp_path / "out"), FILES)
    assert _listing(tmp_path / "out") == {k: v.encode() for k, v in FILES.items()}
    assert len(calls["fsync"]) >= len(FILES)


def test_a_failed_syncfs_aborts_before_the_commit_point(tmp_path, monkeypatch) -> None:
    """A write-back error reported by syncfs is a failed run: the folder keeps its old files, no staging file
    stays behind."""
    if output._syncfs() is None:
        pytest.skip("no syncfs that reports write-back errors here (not Linux >= 5.8)")
    out = tmp_path / "out"
    output.write(str(out), {"torch/a.h": "old\n"})
    before = _listing(out)

    def failing(fd: int) -> int:
        import ctypes

        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(output, "_syncfs", lambda: failing)
    with pytest.raises(ShimgenError, match="Input/output error"):
        output.write(str(out), {**FILES, "torch/a.h": "new\n"})
    assert _listing(out) == before


def test_the_old_kernel_check(monkeypatch) -> None:
    """syncfs before Linux 5.8 returns 0 whatever happened to the data: never used there."""
    output._syncfs.cache_clear()
    try:
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", "5.7.19", "#1", "x86_64")))
        monkeypatch.setattr(output.sys, "platform", "linux")
        assert output._syncfs() is None
        output._syncfs.cache_clear()
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", "5.8.0-1-generic", "#1", "x86_64")))
        assert output._syncfs() is not None
    finally:
        output._syncfs.cache_clear()


def test_sigterm_inside_an_import_callback_is_raised_after_it() -> None:
    """A SIGTERM landing in importlib's module-lock weakref callback, where Python would print the exception and drop
    it, is raised a moment later instead: the run is still interrupted, and no "Exception ignored" is printed."""
    import signal
    import time
    import types

    from shimgen.base import output as out

    code = compile("pass", "<frozen importlib._bootstrap>", "exec").replace(co_name="cb")
    previous = signal.getsignal(signal.SIGALRM)
    try:
        out._raise_interrupted(signal.SIGTERM, types.SimpleNamespace(f_code=code))  # returns: not raised in the callback
        with pytest.raises(out.Interrupted) as raised:
            time.sleep(1)
        assert raised.value.signum == signal.SIGTERM
        with pytest.raises(out.Interrupted):  # anywhere else, at once
            out._raise_interrupted(signal.SIGTERM, types.SimpleNamespace(f_code=compile("pass", "x.py", "exec")))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
