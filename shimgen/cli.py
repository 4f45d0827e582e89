"""`shimgen`: the command line. Generates in memory, then writes every file atomically (or checks them)."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import tempfile

from shimgen.errors import ShimgenError

STAMP = "shimgen.yaml"  # records the invocation in the output folder, so `--check --out DIR` can replay it


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        self.exit(2, f"shimgen: error: {message} (see shimgen --help)\n")


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
    return p


def _split_ops(text: str | None) -> list[str] | None:
    if text is None:
        return None
    ops = [o.strip() for o in text.split(",") if o.strip()]
    if not ops:
        raise ShimgenError("--ops is empty")
    return ops


def _stamp(ops: list[str] | None, since: str | None, yaml_rel: str | None = None, only: bool = False) -> str:
    lines = ["# Written by shimgen: the invocation that produced this folder (`shimgen --check` replays it)."]
    lines.append("ops: " + ("[" + ", ".join(ops) + "]" if ops else "manifest"))
    if ops and only:
        lines.append("only: true  # without the manifest's op set")
    if since:
        lines.append(f"since: '{since}'")
    if yaml_rel:
        lines.append(f"yaml: '{yaml_rel}'  # relative to this folder")
    return "\n".join(lines) + "\n"


def _read_stamp(out: str) -> tuple[list[str] | None, str | None, str | None, bool]:
    """(ops, since, yaml path, only) recorded in DIR/shimgen.yaml; the yaml path is made relative to the cwd."""
    import yaml

    path = os.path.join(out, STAMP)
    if not os.path.isfile(path):
        return None, None, None, False
    with open(path) as f:
        try:
            data = yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise ShimgenError(f"malformed stamp {path}: {' '.join(str(e).split())}") from None
    ops = data.get("ops") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not (ops == "manifest" or isinstance(ops, list)):
        raise ShimgenError(f"malformed stamp {path}: expected `ops: manifest` or `ops: [name, ...]`")
    native = data.get("yaml")
    native = os.path.normpath(os.path.join(out, native)) if native else None
    since = data.get("since")
    only = data.get("only", False)
    if not isinstance(only, bool):
        raise ShimgenError(f"malformed stamp {path}: `only` is true or false")
    ops_list = None if ops == "manifest" else [str(o) for o in ops]
    return ops_list, (str(since) if since else None), native, only


def generate(ops: list[str] | None, yaml_path: str | None, since: str | None, out: str | None = None,
             only: bool = False):
    """(every output file: path relative to the output folder -> text, the Plan; its .notes are for the user)."""
    from shimgen import emit_c, emit_cpp, emit_py, fmt, plan, sig_cpp

    p = plan.make(ops, yaml_path, since, additive=not only)
    wrapped, refusals = sig_cpp.wrappers(p)
    have = {w.op.name for w in wrapped}
    for op in p.ops:  # a wrapper the user named explicitly must exist; others are skipped with a note
        if op.explicit and op.name not in have:
            raise ShimgenError(next(r for r in refusals if r.startswith(f"op {op.name}")))
    files: dict[str, str] = {}
    files.update(emit_c.emit(p))
    files.update(emit_cpp.emit(p))
    formatted = fmt.start_formatting(files)  # clang-format runs in parallel with the Python emitter
    files.update(emit_py.emit(p))
    files.update(formatted.result())
    yaml_rel = os.path.relpath(yaml_path, out).replace(os.sep, "/") if (yaml_path and out) else yaml_path
    files[STAMP] = _stamp(ops, since, yaml_rel, only)
    return dict(sorted(files.items())), p


def write_atomically(out: str, files: dict[str, str]) -> list[str]:
    """Write every file to a temporary sibling first; only when all are written are they renamed into place."""
    staged: list[tuple[str, str]] = []
    umask = os.umask(0)
    os.umask(umask)
    done = False
    try:
        for rel, text in files.items():
            path = os.path.join(out, rel)
            if os.path.isdir(path):  # os.replace would fail half-way through the renames
                raise ShimgenError(f"cannot write {path}: it is a directory")
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".shimgen-", dir=os.path.dirname(path) or ".")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                os.fchmod(f.fileno(), 0o666 & ~umask)  # mkstemp creates 0600: give an ordinary file's mode
                f.write(text)
        for tmp, path in staged:
            os.replace(tmp, path)
        done = True
    except OSError as e:
        raise ShimgenError(f"cannot write {out}: {e.strerror}") from None
    finally:
        if not done:  # an error or an interrupt: leave no temporary file behind
            for tmp, _ in staged:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    return [path for _, path in staged]


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


def check(out: str, files: dict[str, str], update_hint: str, manifest_ops: frozenset[str] = frozenset()) -> int:
    from shimgen import drift, emit_c, emit_cpp

    diffs: list[str] = []
    summary: list[str] = []
    on_disk: dict[str, str] = {}
    for rel, text in files.items():
        path = os.path.join(out, rel)
        old = open(path, encoding="utf-8").read() if os.path.isfile(path) else ""
        on_disk[rel] = old
        if old == text:
            continue
        summary.append(f"{'changed' if old else 'missing'}: {path}")
        if rel == emit_c.HEADER:
            summary += ["  " + s for s in describe_changes(old, text)]
        diffs += difflib.unified_diff(old.splitlines(True), text.splitlines(True), f"{path} (on disk)",
                                      f"{path} (generated)")
    if summary:  # which schemas changed, and what that means for the stable surface
        before = drift.schemas_in_output(on_disk.get(emit_cpp.HEADER, ""), on_disk.get(emit_c.HEADER, ""))
        after = drift.schemas_in_output(files.get(emit_cpp.HEADER, ""), files.get(emit_c.HEADER, ""))
        summary += ["schema " + f.line() for f in drift.compare(before, after, default_set=manifest_ops)]
    if not summary:
        print(f"shimgen: {out} is up to date ({len(files)} files)")
        return 0
    sys.stdout.writelines(d if d.endswith("\n") else d + "\n" for d in diffs)
    print(f"shimgen: {out} is out of sync with the tool:", file=sys.stderr)
    for s in summary:
        print("  " + s, file=sys.stderr)
    print(f"To update: {update_hint}", file=sys.stderr)
    return 1


def _drift(old_yaml: str, new_yaml: str | None, ops: list[str] | None) -> int:
    """`--drift OLD_YAML`: the schema changes of the selected (or the manifest's) ops from OLD_YAML to --yaml."""
    from shimgen import drift, history, manifest
    from shimgen.parse import NativeYaml

    old, new = NativeYaml(old_yaml), NativeYaml(new_yaml)
    before, after = history.schemas_of(old.text), history.schemas_of(new.text)
    default_set = frozenset(manifest.load().default_ops)
    chosen = drift.select(ops, before, after) if ops else set(default_set)
    if ops and not chosen:
        raise ShimgenError(f"no op of --ops is in either yaml")
    findings = drift.compare(before, after, chosen, default_set)
    for f in findings:
        print(f"shimgen: drift: {f.line()}")
    errors = sum(f.severity == "error" for f in findings)
    print(f"shimgen: drift: {len(chosen)} ops compared, {len(findings)} changed, {errors} errors", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
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
        files, p = generate(ops, yaml_path, since, args.out, only)
        from shimgen import sig_cpp

        for n in [*p.notes, *sig_cpp.wrappers(p)[1], *sig_cpp.gone_notes(p)]:
            print(f"shimgen: note: {n}", file=sys.stderr)
        if args.check:
            hint = "shimgen" + (f" --ops {','.join(ops)}" if ops else "") + (" --only" if only else "")
            hint += f" --since {since}" if since else ""
            hint += (f" --yaml {yaml_path}" if yaml_path else "") + f" --out {args.out}"
            return check(args.out, files, hint + "  (then review and commit the diff)",
                         frozenset(p.manifest.default_ops))
        for path in write_atomically(args.out, files):
            print(path)
        if args.verify:
            from shimgen.verify import run as verify_run

            build_dir = args.build_dir or os.path.join(os.path.dirname(os.path.abspath(args.out)), ".shimgen-build")
            return verify_run(args.out, build_dir, ops, yaml_path, since, plan=p)
        return 0
    except ShimgenError as e:
        print(f"shimgen: error: {e.line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
