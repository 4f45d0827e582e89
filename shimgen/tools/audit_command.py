"""The `shimgen audit PATH...` command (shimgen.tools.audit judges the binaries; shimgen.tools.link_audit is the
check the build integrations run after linking, which `--after-link` prints as the CMake package runs it)."""

from __future__ import annotations

import json
import sys

from shimgen.base.errors import ShimgenError
from shimgen.facts import libtorch_exports, releases
from shimgen.facts.versions import Version
from shimgen.tools import binaries, link_audit, project
from shimgen.tools.audit import as_json, classify, text
from shimgen.tools.console import Parser, write_lines


def _target(text_value: str | None, recorded: tuple[Version, ...]) -> Version | None:
    target: Version | None
    if text_value is not None:
        target = releases.parse(text_value, "--target")
    else:
        found = project.current()
        target = found.target if found else None
    if target is not None and target > recorded[-1]:
        raise ShimgenError(f"target {target} is newer than the newest release whose exports shimgen records "
                           f"({recorded[-1]}: shimgen/{libtorch_exports.DATA})")
    return target


def main(argv: list[str]) -> int:
    ap = Parser(prog="shimgen audit", description="Which torch releases built extensions load on: each binary's "
                "undefined symbols against the stable C functions each release's libtorch exports.")
    ap.add_argument("paths", nargs="+", metavar="PATH", help="shared objects (.so), wheels (.whl), or folders "
                    "holding them")
    ap.add_argument("--target", metavar="X.Y", help="the oldest torch release the binaries must load on "
                    "(default: [tool.shimgen]'s target, else the oldest release each loads on)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON (docs/audit.md)")
    ap.add_argument("--symbols", action="store_true", help="list every symbol of each binary with its releases")
    ap.add_argument("--after-link", action="store_true", help="as the CMake package runs it after linking: one "
                    "line per binary, the target from --target only; skipped when SHIMGEN_AUDIT=0 "
                    "(shimgen.tools.link_audit)")
    args = ap.parse_args(argv)
    if args.after_link:
        return _after_link(args)
    exports = libtorch_exports.load()
    target = _target(args.target, exports.releases)
    with binaries.opened(args.paths) as found:
        reports = [classify(b, target, exports) for b in found]
    if args.json:
        write_lines([json.dumps(as_json(reports, exports.releases), indent=1)])
    else:
        write_lines(text(reports, args.symbols))
    return 0 if all(r.ok for r in reports) else 1


def _after_link(args) -> int:
    """--after-link: the verdict of each binary on one line (stdout), a failure on stderr naming the opt-out;
    exit status 1 when one fails."""
    if args.json or args.symbols:
        raise ShimgenError("--after-link prints one line per binary: drop --json and --symbols")
    if not link_audit.enabled():
        return 0
    target = releases.parse(args.target, "--target") if args.target is not None else None
    status = 0
    for path in args.paths:
        outcome = link_audit.check(path, target)
        if outcome.ok:
            write_lines([f"shimgen audit: {outcome.line}"])
        else:
            sys.stderr.write(f"shimgen: {link_audit.failure(outcome, 'cmake')}\n")
            status = 1
    return status
