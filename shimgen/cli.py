"""`shimgen`: the command line. Generates in memory, then writes the output folder as one transaction (shimgen.output)
or checks it. Every failure is one line on stderr and exit status 2 (1: `--check` found a difference); never a
traceback, and the output folder is never left half-written."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import os
import re
import signal
import sys

from shimgen.errors import ShimgenError

STAMP = "shimgen.yaml"  # records the invocation in the output folder, so `--check --out DIR` can replay it


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        self.exit(2, f"shimgen: error: {message} (see shimgen --help)\n")

    def _print_message(self, message: str, file=None) -> None:  # argparse's own swallows a full or closed stdout
        if message:
            file = file or sys.stderr
            if file is None:
                raise OSError(errno.EBADF, "it is closed")
            file.write(message)
            file.flush()


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="shimgen",
        description="Generate PyTorch stable-ABI C shims, torch::stable C++ wrappers and typed Python stubs "
        "from native_functions.yaml.",
    )
    p.add_argument("--ops", metavar="LIST", help="comma-separated ops: name (every overload), name.overload, "
                   "name.default, generated in addition to the manifest's op set (upstream's surface). "
                   "Default: the manifest's op set; with --check, the set recorded in DIR/shimgen.yaml")
    p.add_argument("--only", action="store_true", help="generate only the --ops, without the manifest's op set "
                   "(the output then no longer stands in for upstream's ops.h)")
    p.add_argument("--out", metavar="DIR", default="generated", help="output folder, laid out like torch's include "
                   "tree (default: generated/)")
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
    p.add_argument("--jobs", metavar="N", type=int, default=2, help="with --verify: compilers and sample runners "
                   "at once (default: 2)")
    return p


def _split_ops(text: str | None) -> list[str] | None:
    if text is None:
        return None
    ops = [o.strip() for o in text.split(",") if o.strip()]
    if not ops:
        raise ShimgenError("--ops is empty")
    return ops


_STAMP_KEYS = ("ops", "only", "since", "yaml")
_STAMP_HEADER = "# Written by shimgen: the invocation that produced this folder (`shimgen --check` replays it).\n"


def _stamp(ops: list[str] | None, since: str | None, yaml_rel: str | None = None, only: bool = False) -> str:
    """The stamp's text, written by a YAML serializer (quotes, colons or non-ASCII in a path round-trip)."""
    import yaml

    data: dict[str, object] = {"ops": list(ops) if ops else "manifest"}
    if ops and only:
        data["only"] = True
    if since:
        data["since"] = since
    if yaml_rel:
        data["yaml"] = yaml_rel

    def value(v: object) -> str:  # as the serializer quotes it: strings single-quoted, a list in flow style
        style = "'" if isinstance(v, str) and v != "manifest" else None
        text = yaml.safe_dump(v, default_flow_style=True, default_style=style, width=1 << 30)
        return text.removesuffix("\n...\n").removesuffix("\n")

    comment = {"yaml": "  # relative to this folder", "only": "  # without the manifest's op set"}
    text = _STAMP_HEADER + "".join(f"{k}: {value(v)}{comment.get(k, '')}\n" for k, v in data.items())
    assert yaml.safe_load(text) == data, text  # what --check will read back
    return text


def _read_stamp(out: str) -> tuple[list[str] | None, str | None, str | None, bool]:
    """(ops, since, yaml path, only) recorded in DIR/shimgen.yaml; the yaml path is made relative to the cwd."""
    import yaml

    from shimgen.inputs import read_text
    from shimgen.versions import Version

    path = os.path.join(out, STAMP)
    if not os.path.lexists(path):
        return None, None, None, False
    text = read_text(path, f"stamp {path}", limit=16 << 20)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ShimgenError(f"malformed stamp {path}: {' '.join(str(e).split())}") from None

    def bad(reason: str) -> ShimgenError:
        return ShimgenError(f"malformed stamp {path}: {reason}")

    if not isinstance(data, dict):
        raise bad("expected a mapping with `ops: manifest` or `ops: [name, ...]`")
    unknown = sorted(str(k) for k in data if k not in _STAMP_KEYS)
    if unknown:
        raise bad(f"unknown keys {', '.join(unknown)}")
    ops = data.get("ops")
    if ops != "manifest":
        if not isinstance(ops, list) or not all(isinstance(o, str) and o for o in ops):
            raise bad("expected `ops: manifest` or `ops: [name, ...]`")
        if not ops:
            raise bad("`ops: []` names no op (the manifest's set is written `ops: manifest`)")
    since = data.get("since")
    if since is not None:
        if not isinstance(since, str):
            raise bad(f"`since` must be a quoted version such as '2.13', not {since!r}")
        Version.parse(since, f"since in stamp {path}")
    native = data.get("yaml")
    if native is not None and not (isinstance(native, str) and native):
        raise bad("`yaml` must be a path")
    native = os.path.normpath(os.path.join(out, native)) if native else None
    only = data.get("only", False)
    if not isinstance(only, bool):
        raise bad("`only` is true or false")
    return (None if ops == "manifest" else list(ops)), since, native, only


def generate(ops: list[str] | None, yaml_path: str | None, since: str | None, out: str | None = None,
             only: bool = False, formatter: bool = False):
    """(every output file: path relative to the output folder -> text, the Plan; its .notes are for the user).

    The Python files are written in their formatted layout directly (shimgen.layout), the C++ files formatted by
    a few batched clang-format runs; `formatter` instead runs black over the generated Python as a whole and
    clang-format over each C++ file alone: the reference that tests/test_layout.py compares the fast path with."""
    from shimgen import device_route, emit_c, emit_cpp, emit_py, fmt, plan, sig_cpp

    p = plan.make(ops, yaml_path, since, additive=not only)
    wrapped, refusals = sig_cpp.wrappers(p)
    have = {w.op.name for w in wrapped}
    for op in p.ops:  # a wrapper the user named explicitly must exist; others are skipped with a note
        if op.explicit and op.name not in have:
            raise ShimgenError(next(r for r in refusals if r.startswith(f"op {op.name}")))
    shims, _ = emit_c.shims(p)
    made = {n.partition(".")[0] for n in have | {s.shim.op.name for s in shims}}
    bare = [name for name in ops or [] if "." not in name]
    if bare and len(bare) == len(ops or []) and not made.intersection(bare):  # the manifest's ops aside
        why = next((r for r in refusals if r.startswith(f"op {bare[0]}.")), "")
        raise ShimgenError(f"nothing to generate for {', '.join(bare)}: every overload was skipped ({why})")
    if not wrapped and not shims:  # never an empty surface: one rule for every way of selecting ops
        raise ShimgenError(f"nothing to generate: every selected overload was skipped ({refusals[0]})")
    files: dict[str, str] = {}
    files.update(emit_c.emit(p))
    files.update(emit_cpp.emit(p))
    files.update(device_route.emit(p))
    formatted = fmt.start_formatting(files, per_file=formatter)  # in parallel with the Python emitter
    files.update(emit_py.emit(p, formatter))
    files.update(formatted.result())
    yaml_rel = os.path.relpath(yaml_path, out).replace(os.sep, "/") if (yaml_path and out) else yaml_path
    files[STAMP] = _stamp(ops, since, yaml_rel, only)
    return dict(sorted(files.items())), p


def write_atomically(out: str, files: dict[str, str], before_switch=None) -> list[str]:
    """Write every file into out as one transaction (shimgen.output): all or nothing, locked, across signals."""
    from shimgen import device_route, emit_cpp, output

    return output.write(out, files, before_switch, owned=(emit_cpp.OP_HEADERS, *device_route.FOLDERS))


_DECL_RE = re.compile(r"AOTITorchError (aoti_torch_\w+)\((.*)\);")


def describe_changes(old: str, new: str) -> list[str]:
    """Summarise a C shim header change: new ops, removed ops and changed signatures (ABI breaks)."""
    before = dict(_DECL_RE.findall(old))
    after = dict(_DECL_RE.findall(new))
    lines = [f"new op: {n}" for n in sorted(after.keys() - before.keys())]
    lines += [f"ABI break: {n} removed" for n in sorted(before.keys() - after.keys())]
    lines += [
        f"ABI break: signature of {n} changed ({before[n]} -> {after[n]})"
        for n in sorted(before.keys() & after.keys())
        if before[n] != after[n]
    ]
    return lines


def _on_disk(path: str) -> tuple[str | None, str | None]:
    """(the file's text or None if absent, why it differs regardless of content: not a file / not text)."""
    from shimgen.inputs import NotText, read_text

    if not os.path.lexists(path):
        return None, None
    if os.path.isdir(path):
        return None, "a directory"
    try:
        return read_text(path, path), None
    except NotText as e:
        return None, e.reason.removeprefix(f"{path} is ")


def check(out: str, files: dict[str, str], update_hint: str, manifest_ops: frozenset[str] = frozenset()) -> int:
    """Compare out with `files` (under a shared lock); 1 and a report on any difference, 0 if identical. The report
    names the schema changes too, as --drift does (read from the headers' schema comments)."""
    from shimgen import device_route, drift, emit_c, emit_cpp, output

    diffs: list[str] = []
    summary: list[str] = []
    on_disk: dict[str, str] = {}
    lock = output.locked(out, exclusive=False) if os.path.isdir(out) else contextlib.nullcontext()
    with lock:
        if output.pending_journal(out):
            summary.append(f"an interrupted write: {os.path.join(out, output.JOURNAL)} (the next run completes it)")
        for path in output.stale_files(out, list(files)) if os.path.isdir(out) else []:
            summary.append(f"stale staging file of an interrupted run: {path} (the next run removes it)")
        for rel, text in files.items():
            path = os.path.join(out, rel)
            old, odd = _on_disk(path)
            on_disk[rel] = old or ""
            if odd is None and old == text:
                continue
            if odd is not None:
                summary.append(f"changed: {path} ({odd})")
                continue
            summary.append(f"{'changed' if old is not None else 'missing'}: {path}")
            old = old or ""
            if rel == emit_c.HEADER:
                summary += ["  " + s for s in describe_changes(old, text)]
            diffs += difflib.unified_diff(old.splitlines(True), text.splitlines(True), f"{path} (on disk)",
                                          f"{path} (generated)")
        for rel in output.unwritten(out, (emit_cpp.OP_HEADERS, *device_route.FOLDERS), set(files)) if os.path.isdir(out) else []:
            summary.append(f"not generated any more: {os.path.join(out, rel)} (the next run removes it)")
    if summary:  # which schemas changed, and what that means for the stable surface
        ops_dir = os.path.join(out, emit_cpp.OP_HEADERS)
        for name in sorted(os.listdir(ops_dir)) if os.path.isdir(ops_dir) else []:  # headers no longer generated
            rel = emit_cpp.OP_HEADERS + name
            if rel not in on_disk and name.endswith(".h"):
                on_disk[rel] = _on_disk(os.path.join(out, rel))[0] or ""
        before = drift.schemas_in_output(emit_cpp.wrapper_texts(on_disk), on_disk.get(emit_c.HEADER, ""))
        after = drift.schemas_in_output(emit_cpp.wrapper_texts(files), files.get(emit_c.HEADER, ""))
        summary += ["schema " + f.line() for f in drift.compare(before, after, default_set=manifest_ops)]
    if not summary:
        _out([f"shimgen: {out} is up to date ({len(files)} files)"])
        return 0
    _out([d if d.endswith("\n") else d + "\n" for d in diffs], raw=True)
    _err([f"shimgen: {out} is out of sync with the tool:", *("  " + s for s in summary), f"To update: {update_hint}"])
    return 1


# ---- the process: output streams, signals, exit status ----------------------------------------------------------


def _out(lines: list[str], raw: bool = False) -> None:
    """Write to stdout and flush; a closed or full stdout is a ShimgenError (one line on stderr, exit 2)."""
    stream = sys.stdout
    if stream is None:  # started with fd 1 closed (`>&-`)
        raise ShimgenError("cannot write to standard output: it is closed")
    try:
        stream.writelines(lines if raw else [line + "\n" for line in lines])
        stream.flush()
    except OSError as e:
        _silence_stdout()
        raise ShimgenError(f"cannot write to standard output: {e.strerror or e}") from None
    except UnicodeEncodeError as e:
        raise ShimgenError(f"cannot write to standard output in its encoding ({stream.encoding}): {e.reason}") from None


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush of what is still buffered cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _err(lines: list[str]) -> None:
    """Write to stderr; if even that fails there is nowhere left to report it."""
    try:
        if sys.stderr is not None:
            sys.stderr.writelines(line + "\n" for line in lines)
            sys.stderr.flush()
    except (OSError, UnicodeEncodeError):
        pass


def _verify_setup(out: str, build_dir: str | None) -> str:
    """Everything --verify needs that can be checked before the output is written: the build folder, torch's
    headers, a compiler. Returns the build folder."""
    from shimgen.verify import build

    build_dir = build_dir or os.path.join(os.path.dirname(os.path.abspath(out)), ".shimgen-build")
    if os.path.lexists(build_dir) and not os.path.isdir(build_dir):
        raise ShimgenError(f"--build-dir {build_dir} is not a directory")
    try:
        os.makedirs(build_dir, exist_ok=True)
    except OSError as e:
        raise ShimgenError(f"cannot create --build-dir {build_dir}: {e.strerror}") from None
    if not os.access(build_dir, os.W_OK | os.X_OK):
        raise ShimgenError(f"--build-dir {build_dir} is not writable")
    build.find_torch()
    build.compiler()
    return build_dir


def _drift(old_yaml: str, new_yaml: str | None, ops: list[str] | None) -> int:
    """`--drift OLD_YAML`: the schema changes of the selected (or the manifest's) ops from OLD_YAML to --yaml."""
    from shimgen import drift, history, manifest
    from shimgen.parse import NativeYaml

    old, new = NativeYaml(old_yaml), NativeYaml(new_yaml)
    before, after = history.schemas_of(old.text), history.schemas_of(new.text)
    default_set = frozenset(manifest.load().default_ops)
    chosen = drift.select(ops, before, after) if ops else set(default_set)
    if ops and not chosen:
        raise ShimgenError("no op of --ops is in either yaml")
    findings = drift.compare(before, after, chosen, default_set)
    _out([f"shimgen: drift: {f.line()}" for f in findings])
    errors = sum(f.severity == "error" for f in findings)
    _err([f"shimgen: drift: {len(chosen)} ops compared, {len(findings)} changed, {errors} errors"])
    return 1 if errors else 0


def _run(args: argparse.Namespace) -> int:
    from shimgen import output, sig_cpp

    if not args.out:
        raise ShimgenError("--out is empty")
    ops = _split_ops(args.ops)
    since = args.since
    yaml_path = args.yaml
    only = args.only
    if only and ops is None:
        raise ShimgenError("--only needs --ops (the ops to generate without the manifest's set)")
    if ops is None and args.check:
        ops, stamped_since, stamped_yaml, only = _read_stamp(args.out)
        since = since or stamped_since
        yaml_path = yaml_path or stamped_yaml
    if args.drift:
        return _drift(args.drift, yaml_path, ops)
    if args.check and args.verify:
        raise ShimgenError("--check and --verify do not combine: --check writes nothing to verify")
    if args.jobs < 1:
        raise ShimgenError(f"--jobs must be at least 1, got {args.jobs}")
    build_dir = _verify_setup(args.out, args.build_dir) if args.verify else None
    samples = None
    if build_dir is not None:  # OpInfo's samples are recorded (or read from the cache) while shimgen generates
        from shimgen.verify import Samples

        samples = Samples(args.jobs)
    files, p = generate(ops, yaml_path, since, args.out, only)
    _err([f"shimgen: note: {n}" for n in [*p.notes, *sig_cpp.wrappers(p)[1], *sig_cpp.gone_notes(p)]])
    if args.check:
        hint = "shimgen" + (f" --ops {','.join(ops)}" if ops else "") + (" --only" if only else "")
        hint += f" --since {since}" if since else ""
        hint += (f" --yaml {yaml_path}" if yaml_path else "") + f" --out {args.out}"
        return check(args.out, files, hint + "  (then review and commit the diff)", frozenset(p.manifest.default_ops))
    # The list of files goes out just before the switch: a closed or full stdout aborts with the folder untouched.
    write_atomically(args.out, files, before_switch=lambda paths: _out(paths))
    if build_dir is not None:
        from shimgen.verify import run as verify_run

        with output.locked(args.out, exclusive=False):  # verify reads what it checks: no writer meanwhile
            return verify_run(args.out, build_dir, ops, yaml_path, since, plan=p, jobs=args.jobs,
                              report_path=args.report, samples=samples)
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
        from shimgen import output

        with output.handle_signals() if as_program else contextlib.nullcontext():
            try:
                args = build_parser().parse_args(argv)
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
                if out is None and as_program:
                    _silence_stdout()
                where = "standard output" if out is None else (getattr(e, "filename", None) or "")
                _err([f"shimgen: error: cannot write to {where}: {e.strerror or e}" if out is None else
                      f"shimgen: error: {where}{': ' if where else ''}{e.strerror or e}"])
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
    return status


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
