"""Install one built wheel, unchanged, beside each torch runtime and run the example's tests there.

    python examples/stable_ops/run_on_runtimes.py dist/shimgen_example_stable_ops-0.1.0-cp39-abi3-linux_x86_64.whl \
        [--runtimes 2.9.1,2.10.0,2.11.0,2.12.1,2.14.1,2.15.0] [--no-installed]

Runtimes are the venvs `$SHIMGEN_RUNTIMES/torch-X.Y.Z` (default ~/.cache/shimgen/runtimes), plus this
interpreter's torch ("installed"). The wheel goes in with `pip install --no-deps --no-index --target` into a
temporary folder put on PYTHONPATH, so the venvs themselves are not modified. Prints a Markdown table; exits 1
if a runtime at or after the wheel's target failed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = "2.9.1,2.10.0,2.11.0,2.12.1,2.14.1,2.15.0"
TARGET = (2, 10)  # [tool.shimgen] target in pyproject.toml


def runtimes_dir() -> str:
    return os.environ.get("SHIMGEN_RUNTIMES") or os.path.expanduser("~/.cache/shimgen/runtimes")


def run(python: str, wheel: str, work: str) -> tuple[str, str, str]:
    """(torch version, outcome, detail) of the example's tests under `python` with the wheel installed."""
    site = os.path.join(work, "site")
    pip = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", site, wheel],
                         capture_output=True, text=True)
    if pip.returncode:
        return "?", "install failed", pip.stderr.strip().splitlines()[-1:][0] if pip.stderr.strip() else ""
    env = {**os.environ, "PYTHONPATH": site}
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                             text=True, env=env).stdout.strip() or "?"
    tests = subprocess.run([python, "-m", "unittest", "discover", "-s", os.path.join(HERE, "tests"), "-t",
                            os.path.join(HERE, "tests")], capture_output=True, text=True, env=env, cwd=work)
    tail = [line for line in tests.stderr.splitlines() if line.strip()]
    ran = next((line for line in tail if line.startswith("Ran ")), "")
    if tests.returncode == 0:
        return version, "ok", ran
    why = next((line for line in tail if "undefined symbol" in line),
               next((line for line in tail if "Error:" in line), tail[-1] if tail else ""))
    why = why.replace(work + os.sep, "")
    return version, "FAIL", f"{ran}; {why}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel")
    ap.add_argument("--runtimes", default=DEFAULT)
    ap.add_argument("--no-installed", action="store_true", help="skip this interpreter's torch")
    args = ap.parse_args(argv)
    wheel = os.path.abspath(args.wheel)
    rows = []
    pythons = [] if args.no_installed else [("installed", sys.executable)]
    pythons += [(v, os.path.join(runtimes_dir(), f"torch-{v}", "bin", "python")) for v in args.runtimes.split(",")]
    failed = False
    for name, python in pythons:
        if not os.path.exists(python):
            rows.append((name, "-", "missing", python))
            continue
        with tempfile.TemporaryDirectory(prefix="stable-ops-") as work:
            version, outcome, detail = run(python, wheel, work)
        rows.append((name, version, outcome, detail))
        release = tuple(int(p) for p in version.split("+")[0].split(".")[:2]) if version[:1].isdigit() else None
        failed |= outcome != "ok" and release is not None and release >= TARGET
    print("| runtime | torch | result | detail |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
