"""`shimgen`: the command line. It parses arguments, calls the generation pipeline (shimgen.generate.pipeline: generate in
memory, then write the output folder as one transaction, or compare it) and prints. Every failure is one line on stderr
and exit status 2 (1: `--check` found a difference); never a traceback, and the output folder is never left
half-written."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import sys

from shimgen.base import output
from shimgen.tools import project
from shimgen.facts import releases
from shimgen.tools.console import Parser, silence_stdout, write_lines
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import file_kind

# Start-up: `import shimgen.tools.cli` takes 0.09 s, the generation stack (shimgen.generate.pipeline: torchgen, jinja2)
# 0.52 s and shimgen.proofs.verify 0.46 s (best of 5, this machine): --help and usage errors answer before either is
# imported, so the functions below import them where they are first needed.


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="shimgen",
        description="Generate PyTorch stable-ABI C shims, torch::stable C++ wrappers and typed Python stubs "
        "from native_functions.yaml. Without --ops, the project's [tool.shimgen] table (pyproject.toml) applies.",
        epilog="shimgen port SRC...: which ATen calls of existing C++/CUDA sources the stable surface covers "
        "(shimgen port --help). shimgen audit PATH...: which torch releases built extensions (.so, wheels) load on "
        "(shimgen audit --help).",
    )
    p.add_argument("--ops", metavar="LIST", help="comma-separated ops: name (every overload), name.overload, "
                   "name.default, generated in addition to the manifest's op set (upstream's surface). "
                   "Default: the manifest's op set; with --check, the set recorded in DIR/shimgen.yaml")
    p.add_argument("--only", action="store_true", help="generate only the --ops, without the manifest's op set "
                   "(the output then no longer stands in for upstream's ops.h)")
    p.add_argument("--out", metavar="DIR", help="output folder, laid out like torch's include tree (default: "
                   "[tool.shimgen]'s `out` in pyproject.toml, else generated/)")
    p.add_argument("--yaml", metavar="PATH", help="native_functions.yaml to read (default: the installed torch's)")
    p.add_argument("--since", metavar="X.Y", help="version tag for ops the manifest does not know "
                   "(default: the release of the yaml)")
    p.add_argument("--check", action="store_true", help="compare DIR with what would be generated; exit 1 on "
                   "a difference")
    p.add_argument("--drift", metavar="OLD_YAML", help="compare the schemas of the selected ops (default: the "
                   "manifest's) in OLD_YAML with --yaml's and name each change, as PyTorch's linters would; exit 1 "
                   "on an ABI break or a removed manifest op")
    p.add_argument("--verify", action="store_true", help="compile the output against the installed torch and "
                   "run every wrapper against torch.ops.aten")
    p.add_argument("--build-dir", metavar="B", help="where --verify builds and leaves its libraries "
                   "(default: DIR/../.shimgen-build)")
    p.add_argument("--report", metavar="PATH", help="with --verify: write the coverage report to PATH (Markdown) "
                   "and beside it as JSON")
    p.add_argument("--world", metavar="W", help="with --verify: the build the round-trip extension is compiled "
                   "as: `overlay-leaky-str` (default: -DSHIMGEN_OVERLAY -DSHIMGEN_LEAKY_STR, the widest), `overlay` "
                   "(-DSHIMGEN_OVERLAY, linking shimgen's overlay), `default` (no macro: libtorch alone, what an "
                   "extension gets; wrappers hidden there are reported, not called), `leaky-str`")
    p.add_argument("--device", metavar="D", help="with --verify: where the samples run: cpu (default), cuda or "
                   "cuda:N (every sample's tensors move there; needs a CUDA build of torch and a GPU)")
    p.add_argument("--jobs", metavar="N", type=int, default=2, help="with --verify: compilers and sample runners "
                   "at once (default: 2)")
    p.add_argument("--project", metavar="PATH", help="read [tool.shimgen] from PATH (a pyproject.toml or its "
                   "folder) and apply it whatever --out is (default: the pyproject.toml at or above the working "
                   "directory, when its `out` is the folder written)")
    p.add_argument("--version", action=_VersionAction)
    p.add_argument("--cmake-dir", action="store_true", help="print the folder holding shimgen's CMake package "
                   "(ShimgenConfig.cmake: pass it as -DShimgen_DIR) and exit")
    p.add_argument("--cmake-info", action="store_true", help=argparse.SUPPRESS)  # for ShimgenConfig.cmake
    p.add_argument("--cmake-target", help=argparse.SUPPRESS)  # with --cmake-info: shimgen_generate's TARGET_VERSION
    return p


def _cmake_info(args: argparse.Namespace) -> list[str]:
    """key=value lines ShimgenConfig.cmake reads at configure time: shimgen's version, the installed torch's
    folder, and with --project the table's target release (with --cmake-target, that release, checked)."""
    from shimgen.proofs.verify import build  # start-up (see the top)

    lines = [f"version={_version()}", f"torch={build.find_torch().root}"]
    if args.project:
        path = os.path.join(args.project, project.PYPROJECT) if os.path.isdir(args.project) else args.project
        found = project.load(path) if os.path.isfile(path) else None
        if found is None:
            raise ShimgenError(f"--project {args.project}: no [tool.shimgen] table there")
        lines.append(f"target={found.target or ''}")
    if args.cmake_target is not None:  # checked as every release a person writes (shimgen.facts.releases)
        lines.append(f"target={releases.parse(args.cmake_target, 'TARGET_VERSION')}")
    return lines


class _VersionAction(argparse.Action):
    """--version: shimgen's version, looked up only when asked (importlib.metadata scans every installed
    distribution: a cost every run would pay if the parser computed it up front)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default,
                         help=help or "show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"shimgen {_version()}\n", sys.stdout)
        parser.exit()


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("shimgen")
    except metadata.PackageNotFoundError:
        return "unknown"


def _split_ops(text: str | None) -> list[str] | None:
    if text is None:
        return None
    ops = list(dict.fromkeys(o.strip() for o in text.split(",") if o.strip()))  # a name given twice is one op
    if not ops:
        raise ShimgenError("--ops is empty")
    return ops


def check(out: str, files: dict[str, str], update_hint: str, manifest_ops: frozenset[str] = frozenset()) -> int:
    """`--check`: print how out differs from `files` (pipeline.compare); 1 on any difference, 0 if identical."""
    from shimgen.generate import pipeline  # start-up (see the top)

    found = pipeline.compare(out, files, manifest_ops)
    if not found.summary:
        write_lines([f"shimgen: {out} is up to date ({len(files)} files)"])
        return 0
    write_lines([d if d.endswith("\n") else d + "\n" for d in found.diff], raw=True)
    _err([f"shimgen: {out} is out of sync with the tool:", *("  " + s for s in found.summary),
          f"To update: {update_hint}"])
    return 1


def _check_without_stamp(out: str) -> int:
    """`--check --out DIR` where DIR has contents but no stamp: which ops DIR was generated with is unknown, so
    nothing is compared (the manifest's set would report the user's ops as removals); say what to run."""
    from shimgen.generate import stamp  # start-up (see the top)

    path = os.path.join(out, stamp.STAMP)
    _err([f"shimgen: {out} is out of sync with the tool:",
          f"  missing: {path} (the stamp recording the ops {out} was generated with; without it there is "
          "nothing to compare it with)",
          f"To update: rerun the command that generated it (shimgen --ops OPS [--only] --out {out}), or check it "
          f"against its ops: shimgen --check --ops OPS [--only] --out {out}"])
    return 1


# ---- the process: output streams, signals, exit status ----------------------------------------------------------


def _err(lines: list[str]) -> None:
    """Write to stderr; if even that fails there is nowhere left to report it."""
    try:
        if sys.stderr is not None:
            sys.stderr.writelines(line + "\n" for line in lines)
            sys.stderr.flush()
    except (OSError, UnicodeEncodeError):
        pass


def _verify_setup(out: str, build_dir: str | None) -> str:
    """Everything --verify needs that can be checked before the output is written: torch's headers, a compiler
    that runs, a build folder that can be written (created later, by the build: a run refused before it writes
    creates none). Returns the build folder."""
    from shimgen.proofs.verify import build  # start-up (see the top)

    build.find_torch()
    build.compiler_id(build.compiler())  # found, and answering --version
    build_dir = build_dir or os.path.join(os.path.dirname(os.path.abspath(out)), ".shimgen-build")
    if os.path.lexists(build_dir) and not os.path.isdir(build_dir):
        raise ShimgenError(f"--build-dir {build_dir} is not a directory")
    existing = os.path.abspath(build_dir)
    while not os.path.isdir(existing):  # the folder, or the nearest one above it that exists
        if os.path.lexists(existing):
            raise ShimgenError(f"cannot create --build-dir {build_dir}: {existing} is not a directory")
        existing = os.path.dirname(existing)
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "is not writable" if existing == os.path.abspath(build_dir) else f"cannot be created in {existing}"
        raise ShimgenError(f"--build-dir {build_dir} {what}")
    return build_dir


def _drift(old_yaml: str, new_yaml: str | None, ops: list[str] | None) -> int:
    """`--drift OLD_YAML`: print the schema changes pipeline.drift finds; 1 on an error finding."""
    from shimgen.generate import pipeline  # start-up (see the top)

    findings, compared = pipeline.drift(old_yaml, new_yaml, ops)
    write_lines([f"shimgen: drift: {f.line()}" for f in findings])
    errors = sum(f.severity == "error" for f in findings)
    _err([f"shimgen: drift: {compared} ops compared, {len(findings)} changed, {errors} errors"])
    return 1 if errors else 0


def _with_project(args: argparse.Namespace) -> None:
    """Fill in what the command line leaves open from [tool.shimgen] (shimgen.tools.project), when it describes the
    folder this run writes or checks: `shimgen` alone (re)generates the project's headers, `shimgen --check`
    verifies them, `shimgen --ops ...` regenerates its folder with other ops. An --out elsewhere is not the
    project's: there the stamp (with --check) or the defaults apply, as without a project."""
    if args.out == "":
        raise ShimgenError("--out is empty")
    if args.project is not None:
        path = os.path.join(args.project, project.PYPROJECT) if os.path.isdir(args.project) else args.project
        if not os.path.isfile(path):
            raise ShimgenError(f"--project {args.project}: no such file")
        found = project.load(path)
        if found is None:
            raise ShimgenError(f"--project {args.project}: {path} has no [tool.shimgen] table")
    else:
        found = project.current() if not args.drift else None
    if found is not None and (args.project or args.out is None or os.path.abspath(args.out) == found.out):
        args.out = args.out or os.path.relpath(found.out)
        if args.ops is None:
            args.ops = ",".join(found.ops) if found.ops else None
            args.only = args.only or found.only
            args.from_project = True
        args.since = args.since or found.since
        args.yaml = args.yaml or (os.path.relpath(found.yaml) if found.yaml else None)
    args.out = args.out or "generated"


def _run(args: argparse.Namespace) -> int:
    from shimgen.generate import pipeline, stamp  # start-up: --help and usage errors answer without them (see the top)

    if args.cmake_dir:
        write_lines([os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cmake")])
        return 0
    if args.cmake_info:
        write_lines(_cmake_info(args))
        return 0
    ops = _split_ops(args.ops)
    since = args.since
    yaml_path = args.yaml
    only = args.only
    if only and ops is None:
        raise ShimgenError("--only needs --ops (the ops to generate without the manifest's set)")
    if args.check and os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise ShimgenError(f"--out {args.out}: it is {file_kind(os.lstat(args.out).st_mode)}, not a directory")
    if ops is None and args.check and not getattr(args, "from_project", False):
        if not os.path.lexists(os.path.join(args.out, stamp.STAMP)) and os.path.isdir(args.out) and os.listdir(args.out):
            return _check_without_stamp(args.out)
        ops, stamped_since, stamped_yaml, only = stamp.read(args.out)
        since = since or stamped_since
        yaml_path = yaml_path or stamped_yaml
    if args.drift:
        return _drift(args.drift, yaml_path, ops)
    if args.check and args.verify:
        raise ShimgenError("--check and --verify do not combine: --check writes nothing to verify")
    if args.jobs < 1:
        raise ShimgenError(f"--jobs must be at least 1, got {args.jobs}")
    if args.world is not None and not args.verify:
        raise ShimgenError("--world needs --verify (it names the build --verify compiles)")
    if args.device is not None and not args.verify:
        raise ShimgenError("--device needs --verify (it names where --verify runs the samples)")
    from shimgen.generate.plan import WORLDS, world_named  # start-up (see the top)

    world = world_named(args.world) if args.world is not None else WORLDS[0]
    device = "cpu"
    if args.verify and args.device is not None:
        from shimgen.proofs.verify import devices  # start-up (see the top)

        device = devices.parse(args.device)
        devices.require(device)  # before anything is written: no GPU here is one line, exit 2
    build_dir = _verify_setup(args.out, args.build_dir) if args.verify else None
    samples = None
    files, p = pipeline.generate(ops, yaml_path, since, args.out, only)
    if build_dir is not None:  # the plan's ops' OpInfo samples are recorded (or read from the cache) while it builds
        from shimgen.proofs.verify import Samples, op_names  # start-up (see the top)

        samples = Samples(args.jobs, op_names(p))
    _err([f"shimgen: note: {n}" for n in pipeline.notes(p)])
    if args.check:
        hint = "shimgen" + (f" --ops {','.join(ops)}" if ops else "") + (" --only" if only else "")
        hint += f" --since {since}" if since else ""
        hint += (f" --yaml {yaml_path}" if yaml_path else "") + f" --out {args.out}"
        if getattr(args, "from_project", False):  # the project's table says it all
            hint = "shimgen" + (f" --project {args.project}" if args.project else "") + "  (reads [tool.shimgen])"
        return check(args.out, files, hint + "  (then review and commit the diff)", frozenset(p.manifest.default_ops))
    # The list of files goes out just before the switch: a closed or full stdout aborts with the folder untouched.
    pipeline.write(args.out, files, before_switch=lambda paths: write_lines(paths))
    if build_dir is not None:
        from shimgen.proofs.verify import run as verify_run  # start-up (see the top)

        with output.locked(args.out, exclusive=False):  # verify reads what it checks: no writer meanwhile
            return verify_run(args.out, build_dir, ops, yaml_path, since, plan=p, jobs=args.jobs,
                              report_path=args.report, samples=samples, world=world, device=device)
    return 0


def _interrupted(e: KeyboardInterrupt, out: str | None) -> int:
    signum = getattr(e, "signum", signal.SIGINT)
    where = f"; {out} holds its complete old or complete new contents" if out else ""
    _err([f"shimgen: interrupted ({signal.Signals(signum).name}){where}"])
    return 128 + signum


def main(argv: list[str] | None = None) -> int:
    """The `shimgen` command. Run as the program (argv None), it also owns the process's signals: from here on
    SIGINT and SIGTERM raise (so cleanup runs, then one line, then the process ends by that signal), replacing
    shimgen/__init__'s start-up guard, and both are ignored once the outcome is settled (no traceback from
    interpreter exit). Called with argv (tests, other code), an interrupt returns 128+signal."""
    as_program = argv is None
    status = 2
    out = None
    try:
        if as_program:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        with output.handle_signals() if as_program else contextlib.nullcontext():
            try:
                argv_list = sys.argv[1:] if argv is None else list(argv)
                if argv_list[:1] == ["port"]:  # `shimgen port SRC...`: the porting report (shimgen.tools.port)
                    from shimgen.tools import port  # start-up: tree-sitter and the model load only for `port`

                    status = port.main(argv_list[1:])
                elif argv_list[:1] == ["audit"]:  # `shimgen audit PATH...`: built binaries (shimgen.tools.audit)
                    from shimgen.tools import audit_command  # start-up: only `audit` reads the export data

                    status = audit_command.main(argv_list[1:])
                else:
                    args = build_parser().parse_args(argv_list)
                    if as_program and not args.verify:
                        # Python's cyclic collector stays off to the end (pipeline.generate pauses it while
                        # generating): turned back on, its first pass would walk every object the run made
                        # (~0.15 s after a whole yaml) in a process about to end (_exit_without_teardown).
                        gc.disable()
                    if not (args.cmake_dir or args.cmake_info):
                        _with_project(args)
                    out = args.out
                    status = _run(args)
            except SystemExit as e:  # --help, or a usage error (already reported on stderr)
                status = e.code if isinstance(e.code, int) else 2
            except ShimgenError as e:
                _err([f"shimgen: error: {e.line()}"])
                status = 2
            except KeyboardInterrupt as e:
                status = _interrupted(e, out)
            except RecursionError as e:
                _err([f"shimgen: error: input nested too deeply ({e})"])
                status = 2
            except OSError as e:  # --help to a full stdout, or an OS failure no step anticipated: one line
                named = getattr(e, "filename", None)
                if out is None and named is None and as_program:
                    silence_stdout()
                where = "standard output" if out is None and named is None else (named or "")
                _err([f"shimgen: error: cannot write to {where}: {e.strerror or e}" if where == "standard output"
                      else f"shimgen: error: {where}{': ' if where else ''}{e.strerror or e}"])
                status = 2
    except KeyboardInterrupt as e:  # arrived while reporting the outcome, or before the handlers were in place
        status = _interrupted(e, out)
    finally:
        if as_program:  # the outcome is settled: a late Ctrl-C must not print a traceback from interpreter exit
            for s in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(s, signal.SIG_IGN)
    if as_program and status in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        _die_by(status - 128)
    if as_program:
        _exit_without_teardown(status)
    return status


def _exit_without_teardown(status: int) -> None:
    """End the program as soon as its outcome is out: the interpreter's own exit frees the run's millions of small
    objects one by one (about 0.25 s after a whole yaml, a tenth of the run), memory the OS reclaims at once.
    Everything shimgen wrote is closed by now; stdout and stderr are flushed here. Only when nothing else may
    still be running or waiting for exit: no other thread, and not after --verify (its builds, runners and
    torch), which exits the ordinary way."""
    import threading

    if threading.active_count() > 1 or any(m in sys.modules for m in ("shimgen.proofs.verify", "torch", "multiprocessing")):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(status)


def _die_by(signum: int) -> None:
    """End the process by the signal that interrupted it, as the Unix convention (and Python itself) does, so a
    calling shell or make sees an interrupt (status 128+signum) and stops too. Cleanup has already run."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # not reached
