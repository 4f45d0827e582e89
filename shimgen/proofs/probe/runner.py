"""The probe's runtime side, run by a runtime's own interpreter as `python -m shimgen.proofs.probe.runner SPEC.json [DONE]`
(stdlib and torch only, so it runs on every release).

It defines the shimgen_probe ops in Python, loads each probe extension with ctypes and calls every case,
capturing what libtorch logs on stderr meanwhile. One JSON object per line on its standard output:
  {"event": "start", "case": id}           before a case (the last one names a crash's culprit)
  {"event": "done", "case": id, "outcome": ..., "detail": ...}
  {"event": "end"}
Case ids are `<kind>:<row>@<target>#<index>`; DONE (comma-separated ids) are skipped after a restart.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import tempfile
import warnings
from typing import Any

from shimgen.base.process import exit_now

MSG_SIZE = 4096
_ATEN_ERROR = re.compile(r"Exception in aoti_torch: (.*)")


def _emit(stream, **event: Any) -> None:
    stream.write(json.dumps(event) + "\n")
    stream.flush()


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def libtorch_error(torch: Any, log: str) -> str:
    """The error behind an error code: what libtorch logged (before 2.13), or its last exception's message
    (torch_exception_get_what_without_backtrace, from 2.13)."""
    m = _ATEN_ERROR.search(log)
    if m:
        return _short(m.group(1))
    lines = [ln for ln in log.splitlines() if ln.strip()]
    if lines:
        return _short(lines[0])
    try:
        lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
        what = lib.torch_exception_get_what_without_backtrace
    except (OSError, AttributeError):
        return "libtorch returned an error code and logged nothing"
    what.restype = ctypes.c_char_p
    text = what()
    return _short(text.decode(errors="replace")) if text else "libtorch returned an error code without a message"


class _CapturedStderr:
    """Redirects file descriptor 2 (where libtorch logs) to a temporary file for the duration."""

    def __enter__(self) -> _CapturedStderr:
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


def define_ops(torch: Any, rows: list[dict], received: dict) -> tuple[Any, dict[str, str]]:
    """The shimgen_probe library: make_generator, arg_<row> (records its argument) and ret_<row>_<i>. Returns it
    (keep it alive) and, per row id, why this runtime rejected the row's schema."""
    lib = torch.library.Library("shimgen_probe", "DEF")
    key = "CompositeExplicitAutograd"
    lib.define("make_generator() -> Generator")
    lib.impl("make_generator", lambda: torch.Generator().manual_seed(7), key)
    rejected: dict[str, str] = {}

    def record(x: Any) -> None:
        received["x"] = x

    for row in rows:
        try:
            if row["kind"] == "argument":
                lib.define(f"{row['op']}({row['schema_type']} x) -> ()")
                lib.impl(row["op"], record, key)
            else:
                for i, case in enumerate(row["cases"]):
                    value = case["py"]
                    lib.define(f"{row['op']}_{i}() -> {row['schema_type']}")
                    lib.impl(f"{row['op']}_{i}", lambda v=value: eval(v, {"torch": torch}), key)  # noqa: S307
        except Exception as e:  # noqa: BLE001 - a schema this release cannot parse is a result
            rejected[row["id"]] = f"this runtime rejects the schema type {row['schema_type']}: {_short(e)}"
    return lib, rejected


def run_case(torch: Any, fn: Any, row: dict, case: dict, received: dict) -> tuple[str, str]:
    """(outcome, detail) of one case."""
    msg = ctypes.create_string_buffer(MSG_SIZE)
    received.clear()
    with _CapturedStderr() as err:
        rc = fn(msg, MSG_SIZE)
    text = msg.value.decode(errors="replace")
    if rc == 1:
        return "refuses", libtorch_error(torch, err.text)
    if rc == 2:
        return "refuses", f"the extension threw: {_short(text)}"
    if rc == 3:
        return "wrong", f"returned {case['py']}, read back {_short(text)}"
    if rc != 0:
        return "wrong", f"unexpected status {rc}"
    if row["kind"] == "return":
        return "converts", ""
    if "x" not in received:
        return "wrong", "the call succeeded but the kernel never ran"
    x = received["x"]
    try:
        ok = bool(eval(case["py"], {"torch": torch, "x": x}))  # noqa: S307 - shimgen's own data file
    except Exception as e:  # noqa: BLE001
        ok, x = False, f"{x!r} ({type(e).__name__}: {e})"
    return ("converts", "") if ok else ("wrong", f"sent {case['cpp']}, received {_short(repr(x))}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        spec = json.load(f)
    done = set(argv[1].split(",")) if len(argv) > 1 and argv[1] else set()
    stream = os.fdopen(os.dup(1), "w")  # results; anything else printing to stdout goes to stderr
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    import torch

    received: dict = {}
    lib, rejected = define_ops(torch, spec["rows"], received)
    loaded: dict[str, Any] = {}
    for row in spec["rows"]:
        for target, path in row["libs"].items():
            for i, case in enumerate(row["cases"]):
                cid = f"{row['id']}@{target}#{i}"
                if cid in done:
                    continue
                _emit(stream, event="start", case=cid)
                if path is None:
                    outcome, detail = "unbuilt", row["unbuilt"][target]
                elif row["id"] in rejected:
                    outcome, detail = "refuses", rejected[row["id"]]
                else:
                    try:
                        if path not in loaded:
                            loaded[path] = ctypes.CDLL(path)
                        fn = getattr(loaded[path], f"shimgen_probe_case_{i}")
                        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_int64]
                        outcome, detail = run_case(torch, fn, row, case, received)
                    except OSError as e:
                        outcome, detail = "refuses", f"the extension does not load here: {_short(e)}"
                _emit(stream, event="done", case=cid, outcome=outcome, detail=detail)
    _emit(stream, event="end")
    del lib
    return 0


if __name__ == "__main__":
    exit_now(main())
