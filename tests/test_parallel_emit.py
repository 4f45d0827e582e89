"""pipeline.generate runs the Python emitter in a forked process beside the C++ emitters when many ops are
generated (pipeline._Beside): the files are the same bytes either way, and an error there is the same error."""

from __future__ import annotations

import os
import sys

import pytest

from shimgen import emit_py, pipeline
from shimgen.errors import ShimgenError
from shimgen.parse import NativeYaml

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork is made on Linux only")


def _names(n: int) -> list[str]:
    return list(dict.fromkeys(op.split(".")[0] for op in NativeYaml(None).all_op_names()))[:n]


def test_forked_python_emitter_gives_the_same_files(monkeypatch) -> None:
    names = _names(300)
    forks = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_OPS", 1)
    forked, _ = pipeline.generate(names, None, None, None)
    assert len(forks) == 1
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_OPS", 10**9)
    inline, _ = pipeline.generate(names, None, None, None)
    assert len(forks) == 1
    assert forked == inline
    assert any(path.endswith(".py") for path in forked)


def test_an_error_in_the_forked_emitter_is_raised_as_without_it(monkeypatch) -> None:
    def broken(plan, formatter=False):
        raise ShimgenError("the Python function x would shadow a name", "x.default")

    monkeypatch.setattr(emit_py, "emit", broken)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_OPS", 1)
    with pytest.raises(ShimgenError, match="would shadow a name"):
        pipeline.generate(["add", "pad"], None, None, None)


def test_an_error_beside_the_fork_ends_the_copy(monkeypatch) -> None:
    """The C++ emitters fail while the copy runs: it is ended and reaped (no process left behind)."""
    from shimgen import emit_cpp

    made = []
    real = pipeline._Beside.__init__

    def init(self, compute, parallel):
        real(self, compute, parallel)
        made.append((self, self.pid))

    def broken(plan):
        raise ShimgenError("broken on purpose", "add.Tensor")

    monkeypatch.setattr(pipeline._Beside, "__init__", init)
    monkeypatch.setattr(emit_cpp, "emit", broken)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_OPS", 1)
    with pytest.raises(ShimgenError, match="broken on purpose"):
        pipeline.generate(["add", "pad"], None, None, None)
    (beside, pid), = made
    assert pid is not None and beside.pid is None  # forked, then ended
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # and reaped
