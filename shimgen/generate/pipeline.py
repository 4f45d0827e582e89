"""The generation pipeline: plan -> signatures -> emitters -> files. The command line, `--verify`, the release
matrix and a build integration all call it; none of them assembles the steps itself.

    files, plan = generate(["add", "pad"], yaml_path=None, since=None)   # in memory: path -> text
    write("generated", files)                                            # the output folder, one transaction
    differences = compare("generated", files, plan)                      # what --check reports

1. plan (shimgen.generate.plan): which ops, from which yaml, with which version tags;
2. signatures (shimgen.generate.signatures.stage): the wrappers, each form through one route (shimgen.generate.routes),
   and the C shim set those need; `resolve` then decides once everything the emitters need (cpp_model.Resolved);
3. emitters (emit_c, emit_cpp, emit_py) lay that value out into files, asking no stage again; C++ is formatted by
   fmt, the stamp records the invocation (shimgen.generate.stamp).
Errors are ShimgenError (one line); nothing is written until `write`."""

from __future__ import annotations

import contextlib
import difflib
import gc
import os
import re
from dataclasses import dataclass, field

from shimgen.facts import drift as drift_mod
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp, py as emit_py, fmt
from shimgen.facts import history, manifest
from shimgen.generate import kernel_sections
from shimgen.base import output
from shimgen.generate import plan as plan_mod, routes, stamp
from shimgen.base.errors import ShimgenError
from shimgen.base.inputs import NotText, decode, file_kind, read_bytes
from shimgen.generate.parse import NativeYaml
from shimgen.generate.plan import Plan
from shimgen.generate.signatures.stage import c_shims, resolve, wrappers
from shimgen.generate.signatures.cpp import gone_notes

STAMP = stamp.STAMP


def generate(ops: list[str] | None, yaml_path: str | None, since: str | None, out: str | None = None,
             only: bool = False, formatter: bool = False, overlay_ties_to_libtorch: bool = True,
             ) -> tuple[dict[str, str], Plan]:
    """(every output file: path relative to the output folder -> text, the Plan).

    `ops` None: the manifest's default set; otherwise those ops and (unless `only`) the manifest's. `out` is
    only used to record the yaml's path relative to the folder in the stamp. The Python files are written in
    their formatted layout directly (shimgen.generate.emit.py_layout), the C++ files formatted by a few batched
    clang-format runs; `formatter` instead runs black over the generated Python as a whole and clang-format over each
    C++ file alone: the reference that tests/test_layout.py compares the fast path with. `overlay_ties_to_libtorch`: see
    Plan (False only for a benchmark of the old overlay build)."""
    with _collector_paused():
        return _generate(ops, yaml_path, since, out, only, formatter, overlay_ties_to_libtorch)


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while generating: generation allocates millions of small objects
    (the model, the rendered text) and leaves no cycles worth collecting (the same peak memory either way), and
    the collector's passes over them cost a tenth of a whole yaml's time. Reference counting frees as usual."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _generate(ops: list[str] | None, yaml_path: str | None, since: str | None, out: str | None, only: bool,
              formatter: bool, overlay_ties_to_libtorch: bool) -> tuple[dict[str, str], Plan]:
    p = plan_mod.make(ops, yaml_path, since, additive=not only, overlay_ties_to_libtorch=overlay_ties_to_libtorch)
    wrapped, refusals = wrappers(p)
    have = {w.op.name for w in wrapped}
    for op in p.ops:  # a wrapper the user named explicitly must exist; others are skipped with a note
        if op.explicit and op.name not in have:
            raise ShimgenError(next(r for r in refusals if r.startswith(f"op {op.name}")))
    shims, _ = c_shims(p)
    made = {n.partition(".")[0] for n in have | {s.shim.op.name for s in shims}}
    bare = [name for name in ops or [] if "." not in name]
    if bare and len(bare) == len(ops or []) and not made.intersection(bare):  # the manifest's ops aside
        why = next((r for r in refusals if r.startswith(f"op {bare[0]}.")), "")
        raise ShimgenError(f"nothing to generate for {', '.join(bare)}: every overload was skipped ({why})")
    if not wrapped and not shims:  # never an empty surface: one rule for every way of selecting ops
        raise ShimgenError(f"nothing to generate: every selected overload was skipped ({refusals[0]})")
    files: dict[str, str] = {}
    resolved = resolve(p)  # everything the emitters lay out, decided once
    files.update(emit_c.emit(resolved))
    files.update(emit_cpp.emit(resolved))
    for route in routes.ordered():  # routes with a surface of their own (torch::stable::cpu::)
        files.update(route.files(p, resolved.wrappers))
    formatted = fmt.start_formatting(files, per_file=formatter)  # in parallel with the Python emitter
    files.update(emit_py.emit(resolved, formatter))
    files.update(formatted.result())
    yaml_rel = os.path.relpath(yaml_path, out).replace(os.sep, "/") if (yaml_path and out) else yaml_path
    files[STAMP] = stamp.text(ops, since, yaml_rel, only)
    return dict(sorted(files.items())), p


def notes(p: Plan) -> list[str]:
    """What the user is told about a plan: ops skipped, and wrappers a later release removes or breaks."""
    return [*p.notes, *wrappers(p)[1], *gone_notes(p)]


def write(out: str, files: dict[str, str], before_switch=None) -> list[str]:
    """Write every file into out as one transaction (shimgen.base.output): all or nothing, locked, across signals.
    Per-op headers of ops no longer generated are removed in the same switch."""
    return output.write(out, files, before_switch, owned=owned_folders())


def owned_folders() -> tuple[str, ...]:
    """Output folders whose every .h file is the tool's: the per-op headers, the kernel sections they include, and
    the routes' own surfaces."""
    return (emit_cpp.OP_HEADERS, kernel_sections.HEADERS, *(f for r in routes.ordered() for f in r.owned))


def drift(old_yaml: str, new_yaml: str | None, ops: list[str] | None) -> tuple[list[drift_mod.Finding], int]:
    """`--drift OLD_YAML`: the schema changes of the selected ops (default: the manifest's) from OLD_YAML to
    new_yaml (default: the installed torch's), and how many ops were compared."""
    old, new = NativeYaml(old_yaml), NativeYaml(new_yaml)
    before, after = history.schemas_of(old.text), history.schemas_of(new.text)
    default_set = frozenset(manifest.load().default_ops)
    chosen = drift_mod.select(ops, before, after) if ops else set(default_set)
    if ops and not chosen:
        raise ShimgenError("no op of --ops is in either yaml")
    return drift_mod.compare(before, after, chosen, default_set), len(chosen)


# ---- comparing an output folder with what would be generated (--check) ------------------------------------


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


def _on_disk(path: str) -> tuple[bytes | None, str | None]:
    """(the file's bytes, or None if absent; what it is when it is not a regular file: a symbolic link, a folder,
    a FIFO, never opened). A file that cannot be read, or a dangling link, is a ShimgenError."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # absent (or under something that is not a folder): missing
        return None, None
    kind = file_kind(mode)
    if kind == "a symbolic link" and not os.path.exists(path):
        raise ShimgenError(f"cannot read {path}: it is a dangling symbolic link")
    if kind != "a regular file":  # the bytes may be right, but not where a run puts them (it writes a file)
        return None, kind
    return read_bytes(path, path), None


def _as_text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


def _why_bytes_differ(path: str, data: bytes, text: str) -> str | None:
    """Why a file's bytes differ from `text` where a line diff would not show it: not UTF-8 text, or the same text
    behind a byte-order mark."""
    try:
        decoded = decode(data, path)
    except NotText as e:
        return e.reason.removeprefix(f"{path} is ")
    if decoded == text:
        return "the same text behind a UTF-8 byte-order mark; the next run writes it without"
    return None


@dataclass
class Differences:
    """How an output folder differs from what would be generated: a unified diff, and a summary naming each
    changed file, C shim ABI change and schema change. Both empty: in sync."""

    diff: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def compare(out: str, files: dict[str, str], manifest_ops: frozenset[str] = frozenset()) -> Differences:
    """Compare out with `files` under a shared lock. The summary names the schema changes too, as --drift does
    (read from the headers' schema comments)."""
    diffs: list[str] = []
    summary: list[str] = []
    on_disk: dict[str, str] = {}
    shim_summary_at = None  # where the C shim changes go: after the first changed C shim header
    lock = output.locked(out, exclusive=False) if os.path.isdir(out) else contextlib.nullcontext()
    with lock:
        if output.pending_journal(out):
            problem = output.journal_problem(out)  # what the next run would answer, word for word
            summary.append(problem or f"an interrupted write: {os.path.join(out, output.JOURNAL)} (the next run "
                           "completes it)")
        for path in output.stale_files(out, list(files)) if os.path.isdir(out) else []:
            summary.append(f"stale staging file of an interrupted run: {path} (the next run removes it)")
        for rel, text in files.items():
            path = os.path.join(out, rel)
            data, odd = _on_disk(path)  # compared as bytes: what a compiler reads
            on_disk[rel] = _as_text(data)
            if odd is None and data is not None:
                if data == text.encode("utf-8"):
                    continue
                odd = _why_bytes_differ(path, data, text)
            if odd is not None:
                summary.append(f"changed: {path} ({odd})")
                continue
            summary.append(f"{'changed' if data is not None else 'missing'}: {path}")
            if rel in emit_c.HEADERS and shim_summary_at is None:
                shim_summary_at = len(summary)
            diffs += difflib.unified_diff(on_disk[rel].splitlines(True), text.splitlines(True), f"{path} (on disk)",
                                          f"{path} (generated)")
        for rel in output.unwritten(out, owned_folders(), set(files)) if os.path.isdir(out) else []:
            summary.append(f"not generated any more: {os.path.join(out, rel)} (the next run removes it)")
        for path in output.unknown_files(out, set(files), owned_folders()) if os.path.isdir(out) else []:
            summary.append(f"not written by shimgen: {path} (in a folder of the output: remove it or move it out)")
    if shim_summary_at is not None:  # across both C shim headers: a shim moving from one to the other is no change
        changes = describe_changes(emit_c.declarations(on_disk), emit_c.declarations(files))
        summary[shim_summary_at:shim_summary_at] = ["  " + s for s in changes]
    if summary:  # which schemas changed, and what that means for the stable surface
        ops_dir = os.path.join(out, emit_cpp.OP_HEADERS)
        for name in sorted(os.listdir(ops_dir)) if os.path.isdir(ops_dir) else []:  # headers no longer generated
            rel = emit_cpp.OP_HEADERS + name
            if rel not in on_disk and name.endswith(".h"):
                on_disk[rel] = _as_text(_on_disk(os.path.join(out, rel))[0])
        before = drift_mod.schemas_in_output(emit_cpp.wrapper_texts(on_disk), emit_c.declarations(on_disk))
        after = drift_mod.schemas_in_output(emit_cpp.wrapper_texts(files), emit_c.declarations(files))
        summary += ["schema " + f.line() for f in drift_mod.compare(before, after, default_set=manifest_ops)]
    return Differences(diffs, summary)

