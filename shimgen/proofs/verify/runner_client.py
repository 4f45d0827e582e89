"""Drive the samples runners: up to `jobs` runner processes (python -m shimgen.proofs.verify.runner), one op at a time
each, results collected per op. One runner starts; another starts while the work left (the ops queued, at the time
the ops so far took, shared by the runners there are) would take more than twice what the first runner took to
start (importing torch, loading the libraries: 2-4 s): a few quick ops never pay for a second interpreter. A child
that crashes or passes a time limit loses one sample: the op goes on from the next one (until its own time limit);
where it died (aten, or the wrapper) says whose failure it was. A runner process that dies itself is restarted.

Per op the result is a dict:
  counts      {"exact": n, "refused": n, "wrong": n, "error": n, "aten-fails": n}
  sources     {source: samples}
  failures    ["label: message", ...] (the first few wrong samples), scalar_wrong: wrong samples the Scalar boxing
              explains, notes: aten-fails and refused details
  status      "absent" | "unrunnable" | "nosample" | "error" | None, with reason
  seconds     time in the runner
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass, field

from shimgen.base.process import module_command

LOG_TAIL = 15  # lines of the runner's stderr kept with a runner failure
MAX_DETAILS = 5  # messages kept per op and kind
OUTCOMES = ("exact", "refused", "wrong", "error", "aten-fails", "unreached", "nondeterministic")
CAUSES = {  # what a wrong sample's cause adds to its message
    "scalar": " [Scalar boxing: aten given the wrapper's double agrees with the wrapper]",
    "mixed returns": " [libtorch: torch_call_dispatcher cannot return this mix of types; the dispatcher route is the"
                     " wrong route for this overload]",
}


class Progress:
    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.tty = sys.stderr.isatty()
        self.every = 1 if total <= 100 else max(total // 20, 1)

    def show(self, op: str) -> None:
        text = f"shimgen: verify [{self.done + 1}/{self.total}] {op}"
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
        elif self.done % self.every == 0:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def new_result(name: str) -> dict:
    return {"op": name, "counts": dict.fromkeys(OUTCOMES, 0), "sources": {}, "failures": [], "scalar_wrong": 0,
            "causes": {},
            "notes": [], "status": None, "reason": None, "seconds": 0.0, "samples": 0}


def _add_detail(lst: list, text: str) -> None:
    if len(lst) < MAX_DETAILS:
        lst.append(text)


@dataclass
class Running:
    index: int
    started: float
    exact: int = 0
    last_k: int = -1
    recorded: int = 0
    attempts: int = 0
    check: tuple | None = None  # (k, what, phase, detail): aten is being run alone on sample k


@dataclass
class Worker:
    proc: subprocess.Popen
    started: float = field(default_factory=time.monotonic)
    sel_key: object = None
    buf: bytes = b""
    job: Running | None = None
    ready: bool = False
    log: list[str] = field(default_factory=list)


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-LOG_TAIL:])


class Pool:
    def __init__(self, spec_path: str, spec: dict, log_path: str, jobs: int, python: str) -> None:
        self.spec_path, self.spec, self.log_path, self.python = spec_path, spec, log_path, python
        self.jobs = max(1, min(jobs, len(spec["ops"])))
        self.limits = spec.get("limits", {})
        self.op_limit = float(self.limits.get("op_seconds", 60))
        self.sel = selectors.DefaultSelector()
        self.results: dict[str, dict] = {}
        self.queue = list(range(len(spec["ops"])))
        self.workers: list[Worker] = []
        self.progress = Progress(len(spec["ops"]))
        self.restarts = 0
        self.startup: float | None = None  # seconds the first runner took to be ready
        self.op_seconds = 0.0  # time the finished ops took, and how many
        self.ops_done = 0
        self.log = open(log_path, "w")

    # -- processes --

    def _start(self) -> Worker:
        proc = subprocess.Popen(module_command(self.python, "shimgen.proofs.verify.runner", self.spec_path),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        w = Worker(proc)
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        w.sel_key = self.sel.register(proc.stdout, selectors.EVENT_READ, w)
        self.workers.append(w)
        return w

    def _stop(self, w: Worker) -> None:
        self.sel.unregister(w.proc.stdout)
        try:
            w.proc.kill()
        except OSError:
            pass
        w.proc.wait()
        self.workers.remove(w)

    def _send(self, w: Worker, job: Running, start: int, aten_only: int | None = None) -> None:
        w.job = job
        job.attempts += 1
        cmd = {"op": job.index, "start": start, "exact": job.exact, "aten_only": aten_only}
        assert w.proc.stdin is not None
        w.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        w.proc.stdin.flush()

    def _next(self, w: Worker) -> None:
        if not self.queue:
            w.job = None
            return
        index = self.queue.pop(0)
        op = self.spec["ops"][index]["op"]
        self.results[op] = new_result(op)
        self.progress.show(op)
        self._send(w, Running(index, time.monotonic()), 0)

    # -- events --

    def _result(self, job: Running) -> dict:
        return self.results[self.spec["ops"][job.index]["op"]]

    def _on_event(self, w: Worker, ev: dict) -> None:
        kind = ev.get("e")
        if kind == "ready":
            w.ready = True
            if self.startup is None:
                self.startup = time.monotonic() - w.started
            self._next(w)
            return
        job = w.job
        if job is None or ev.get("op") != job.index:
            return
        r = self._result(job)
        if kind == "plan":
            job.recorded = ev.get("recorded", 0)
            if "keys" in ev:
                r["kernels"] = ev["keys"]
        elif kind == "s":
            o = ev["o"]
            job.last_k = ev["k"]
            r["counts"][o] += 1
            r["samples"] += 1
            r["sources"][_source_kind(ev["src"])] = r["sources"].get(_source_kind(ev["src"]), 0) + 1
            job.exact += o == "exact"
            if o == "wrong":
                cause = ev.get("cause")
                if cause:
                    r["causes"][cause] = r["causes"].get(cause, 0) + 1
                if cause == "scalar":
                    r["scalar_wrong"] += 1
                _add_detail(r["failures"], f"{ev.get('l', '')}: {ev.get('m', '')}" + CAUSES.get(cause, ""))
            elif o == "nondeterministic":
                _add_detail(r["notes"], f"nondeterministic: {ev.get('l', '')}: {ev.get('m', '')} (compared dtype, "
                                        "shape, strides and aliasing there)")
            elif o == "error" and ev.get("m") and "aten_error" not in r:
                r["aten_error"] = f"{ev.get('l', '')[:120]}: {ev['m']}"  # the first: what aten said it lacks
            elif o in ("refused", "aten-fails", "unreached"):
                _add_detail(r["notes"], f"{o}: {ev.get('l', '')}: {ev.get('m', '')}")
        elif kind == "note":
            r["status"], r["reason"] = ev["status"], ev["m"]
        elif kind == "exit":
            self._on_exit(w, job, r, ev)

    def _on_exit(self, w: Worker, job: Running, r: dict, ev: dict) -> None:
        elapsed = time.monotonic() - job.started
        if ev["how"] == "done" and job.check is None:
            r["seconds"] = round(elapsed, 3)
            self._finished(elapsed)
            self._next(w)
            return
        k, phase = ev["k"], ev["phase"]
        what = "crashed" if ev["how"] == "crash" else "hung"
        detail = ev.get("m", "")
        if job.check is not None:  # aten ran alone on the sample the wrapper side crashed or hung on
            k, what, phase, detail = job.check
            job.check = None
            r["samples"] += 1
            if ev["how"] == "done":
                aten_did = "raised an error" if phase == "wrapper (aten raised)" else "returned"
                r["counts"]["wrong"] += 1
                _add_detail(r["failures"], f"sample {k}: the wrapper {what} ({detail}) in phase `{phase}`; aten "
                                           f"{aten_did} on this input, and runs alone without trouble")
            else:
                r["counts"]["aten-fails"] += 1
                _add_detail(r["notes"], f"aten-fails: sample {k}: the process {what} ({detail}) in phase `{phase}`"
                                        f", and aten alone {'crashes' if ev['how'] == 'crash' else 'hangs'} on this"
                                        " input too (e.g. it corrupts memory): not the wrapper's failure")
        elif k < 0:  # before any sample (making them, or the checks at the start)
            r["status"] = "nosample"
            r["reason"] = f"making the samples {what} ({detail}) (they call the functional overload for out= shapes)"
        elif phase in ("aten", "setup"):
            who = f"aten itself {what} on this input" if phase == "aten" else f"making the sample {what}"
            r["counts"]["aten-fails"] += 1
            r["samples"] += 1
            _add_detail(r["notes"], f"aten-fails: sample {k}: {who} ({detail}): not the wrapper's failure")
        else:  # the wrapper (or comparing what it returned) crashed or hung: does aten alone do that too?
            job.check = (k, what, phase, detail)
            self._send(w, job, k, aten_only=k)
            return
        if elapsed < self.op_limit and k >= 0 and job.attempts < 50:
            self._send(w, job, k + 1)
            return
        if k >= 0:
            _add_detail(r["notes"], f"the op's remaining samples were not run (time limit {self.op_limit:g} s)")
        r["seconds"] = round(elapsed, 3)
        self._finished(elapsed)
        self._next(w)

    def _finished(self, elapsed: float) -> None:
        self.progress.done += 1
        self.op_seconds += elapsed
        self.ops_done += 1

    def _grow(self) -> None:
        """Start another runner when it pays for its start: when the work left (the ops queued, each taking what
        the ops finished and running took so far), shared by the runners there are, would take more than twice what
        the first runner took to start. The run then ends at least half a start sooner; a few quick ops never pay
        for a second interpreter."""
        if len(self.workers) >= self.jobs or not self.queue or self.startup is None:
            return
        now = time.monotonic()
        running = [now - w.job.started for w in self.workers if w.job is not None]
        seen = self.ops_done + len(running)
        if not seen:
            return
        left = len(self.queue) * (self.op_seconds + sum(running)) / seen / len(self.workers)
        if left > 2 * self.startup:
            self._start()

    def _on_runner_death(self, w: Worker) -> None:
        """The runner process itself died (not a child): report the op it had and start a new runner."""
        job = w.job
        self._stop(w)
        self.restarts += 1
        if job is not None:
            r = self._result(job)
            r["status"] = "error"
            r["reason"] = f"the runner process died (exit {w.proc.returncode}); log tail:\n{_tail(self.log_path)}"
            self.progress.done += 1
        if self.restarts > 3 * self.jobs + 3 or (not w.ready and self.restarts > self.jobs):
            raise RunnerFailed(f"the samples runner keeps dying; see {self.log_path}:\n{_tail(self.log_path)}")
        if self.queue:
            self._start()

    def run(self) -> dict[str, dict]:
        try:
            self._start()
            while self.workers:
                for key, _ in self.sel.select(timeout=5):
                    w: Worker = key.data
                    try:
                        data = os.read(w.proc.stdout.fileno(), 1 << 16)
                    except BlockingIOError:
                        continue
                    if not data:
                        self._on_runner_death(w)
                        continue
                    w.buf += data
                    *lines, w.buf = w.buf.split(b"\n")
                    for line in lines:
                        try:
                            ev = json.loads(line)
                        except json.JSONDecodeError:
                            continue
                        self._on_event(w, ev)
                for w in list(self.workers):  # idle with nothing left: close its stdin, it exits
                    if w.ready and w.job is None and not self.queue:
                        assert w.proc.stdin is not None
                        w.proc.stdin.close()
                        self.sel.unregister(w.proc.stdout)
                        w.proc.wait()
                        self.workers.remove(w)
                    elif not w.ready and not self.queue:  # started for work another runner took: never needed
                        self._stop(w)
                self._grow()
        finally:
            for w in list(self.workers):
                self._stop(w)
            self.progress.finish()
            self.log.close()
        return self.results


class RunnerFailed(Exception):
    pass


def _source_kind(source: str) -> str:
    """The corpus a sample came from: OpInfo, ModuleInfo, common_nn, nn.functional (recorded) or shimgen."""
    return source.split(" ", 1)[0]


def run_samples(spec_path: str, spec: dict, log_path: str, jobs: int = 2, python: str | None = None) -> dict:
    """Results per op name (see the module docstring)."""
    return Pool(spec_path, spec, log_path, jobs, python or sys.executable).run()
