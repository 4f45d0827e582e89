"""Drive the samples runner subprocess: show progress on stderr, collect per-op results, and survive crashes
(the op that was running is reported as crashed and the runner restarts after it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

LOG_TAIL = 15  # lines of the runner's stderr shown with a crash


class Progress:
    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.tty = sys.stderr.isatty()

    def show(self, op: str) -> None:
        text = f"shimgen: verify [{self.done + 1}/{self.total}] {op}"
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-LOG_TAIL:])


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def run_samples(spec_path: str, spec: dict, log_path: str, python: str | None = None) -> dict[str, dict]:
    """Results per op name: passed/total/errors/failures, plus `crashed` for an op that killed the runner.
    `python`: another torch's interpreter (shimgen.verify.runtimes) runs the runner, with this shimgen."""
    names = [op["op"] for op in spec["ops"]]
    results: dict[str, dict] = {}
    progress = Progress(len(names))
    with open(log_path, "w"):
        pass
    while len(results) < len(names):
        done = [n for n in names if n in results]
        cmd = [python or sys.executable, "-m", "shimgen.verify.runner", spec_path, ",".join(done)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if python:
            env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        with open(log_path, "a") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
            current, label, ended = None, None, False
            assert proc.stdout is not None
            for line in proc.stdout:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                kind = event.get("event")
                if kind == "start":
                    current, label = event["op"], None
                    progress.show(current)
                elif kind == "sample":
                    label = event["label"]
                elif kind == "done":
                    results[event["op"]] = event
                    progress.done += 1
                    current = None
                elif kind == "end":
                    ended = True
            code = proc.wait()
        if ended and code == 0:
            break
        culprit = current or next((n for n in names if n not in results), None)
        if culprit is None:
            break
        where = f" during sample {label}" if label else " before its first sample"
        results[culprit] = {
            "op": culprit, "passed": 0, "total": 0, "errors": 0,
            "failures": [f"the runner crashed ({_describe_exit(code)}){where}"],
            "crashed": True, "log": _tail(log_path),
        }
        progress.done += 1
        if current is None:  # the runner died before any op started (e.g. loading the libraries)
            for n in names:
                results.setdefault(n, {"op": n, "passed": 0, "total": 0, "errors": 0,
                                       "failures": ["not run: the runner failed to start"], "crashed": True})
            break
    progress.finish()
    return results
