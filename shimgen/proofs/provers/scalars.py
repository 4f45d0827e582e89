"""The measuring side of the Scalar facts (data/scalar_facts.yaml, read by shimgen.facts.scalar_facts): type promotion from
the installed torch, Tensor siblings found by rule and proven equal to their Scalar overloads cell by cell, and
the overloads for which an integer on floating-point tensors is the double. It runs aten on shimgen.proofs.verify's
samples in child processes (aten crashes or hangs on some inputs) and rewrites the data file.

    python -m shimgen.dev prove promotion        # the promotion table, from torch.promote_types
    python -m shimgen.dev prove siblings         # find the siblings by rule and prove them (~minutes)
    python -m shimgen.dev prove int-as-double    # ~35 s
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import warnings

import torch
import yaml
from torchgen.model import FunctionSchema

from shimgen.facts import history
from shimgen.generate import table
from shimgen.generate.parse import NativeYaml
from shimgen.generate.routes import kernels  # each composition row's prover hook and the facts it reads
from shimgen.proofs.provers.scalar_model import Model, in_range, kind_of, stands_in_exactly
from shimgen.facts.scalar_facts import DATA, DTYPES, cell, load
from shimgen.proofs.verify import samples
from shimgen.base.process import exit_now



def _category(dtype) -> int:
    if dtype == torch.bool:
        return 0
    if dtype.is_complex:
        return 3
    if dtype.is_floating_point:
        return 2
    return 1


def promotion_facts() -> dict:
    """The promotion section, measured on the installed torch (torch.promote_types)."""
    names = list(DTYPES)
    table = []
    for a in names:
        row = []
        for b in names:
            try:
                row.append(DTYPES[str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]])
            except (RuntimeError, TypeError):
                row.append("")
        table.append(row)
    return {
        "source": f"torch.promote_types of torch {torch.__version__}",
        "dtypes": [DTYPES[n] for n in names],
        "categories": [_category(getattr(torch, n)) for n in names],
        "table": table,
    }


def discover_siblings(schemas: dict[str, object], stand_in: dict[str, str]) -> dict[str, str]:
    """By rule: for each overload with a Scalar, the overload of the same name (in-place and out= alike) whose
    schema is the same except that each such argument has the conversion table's `stand_in` type there (Scalar
    -> Tensor, Scalar? -> Tensor?), with the same names and returns."""

    def shape(schema):
        return (str(schema.name.name), tuple((a.name, a.is_write) for a in schema.arguments.flat_all),
                tuple(str(r.type) for r in schema.returns))

    def stands_in(ours, theirs) -> bool:
        swapped = False
        for a, b in zip(ours.arguments.flat_all, theirs.arguments.flat_all):
            ta, tb = str(a.type), str(b.type)
            if ta != tb:
                if stand_in.get(ta) != tb:
                    return False
                swapped = True
        return swapped

    by_shape: dict[tuple, list[str]] = {}
    for op, schema in schemas.items():
        by_shape.setdefault(shape(schema), []).append(op)
    found: dict[str, str] = {}
    for op, schema in schemas.items():
        if not any(str(a.type) in stand_in for a in schema.arguments.flat_all):
            continue
        candidates = [c for c in by_shape[shape(schema)] if c != op and stands_in(schema, schemas[c])]
        if len(candidates) == 1:
            found[op] = candidates[0]
    return dict(sorted(found.items()))


def _spec(schema) -> dict:
    """An op description in the shape shimgen.proofs.verify.samples reads (see roundtrip.op_spec)."""
    args = schema.arguments
    kwarg_only = {a.name for a in (*args.flat_kwarg_only, *args.out)}
    out = {a.name for a in args.out}
    return {
        "op": f"{schema.name.name}.{schema.name.overload_name or 'default'}",
        "name": str(schema.name.name),
        "overload": schema.name.overload_name or "default",
        "kind": schema.kind().name,
        "args": [{"name": a.name, "type": str(a.type), "box_schema": str(a.type), "default": a.default,
                  "kwarg_only": a.name in kwarg_only, "is_write": a.is_write, "is_out": a.name in out}
                 for a in args.flat_all],
        "returns": [{"type": str(r.type), "name": r.name, "is_write": r.is_write, "box_schema": str(r.type)}
                    for r in schema.returns],
    }


def _same(a, b) -> bool:
    """Equal results: the same dtype, shape and values (NaN where the other has NaN), recursively."""
    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.is_complex():
            a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
        if a.is_floating_point():
            a, b = a.double(), b.double()
            return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


# an item taking longer hangs (special_laguerre_polynomial_l with n = 2^53 + 1 loops n times); a loaded machine may
# need more (SHIMGEN_ITEM_SECONDS)
ITEM_SECONDS = float(os.environ.get("SHIMGEN_ITEM_SECONDS") or 20)


def _lines(proc, timeout: float):
    """The child's output lines; None when it stays silent for `timeout` seconds."""
    assert proc.stdout is not None
    buffer = ""
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            yield None
            return
        chunk = os.read(proc.stdout.fileno(), 65536).decode()
        if not chunk:
            return
        buffer += chunk
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            yield line


def _in_children(job: str, items: dict[str, object]) -> dict[str, object]:
    """Run `job` over items in a child process (a JSON line per item), restarted past an item that crashes it:
    aten itself segfaults on some inputs. Returns item -> result (a crash: {"crash": true})."""
    todo = sorted(items)
    results: dict[str, object] = {}
    while todo:
        proc = subprocess.Popen([sys.executable, "-m", "shimgen.proofs.provers.scalars", "_worker", job], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=None if os.environ.get("SHIMGEN_PROGRESS") else
                                subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({k: items[k] for k in todo}))
        proc.stdin.close()
        started = None
        hung = False
        for line in _lines(proc, ITEM_SECONDS):
            if line is None:  # no word from the child for ITEM_SECONDS: it hangs in `started`
                proc.kill()
                hung = True
                break
            event = json.loads(line)
            if event["event"] == "start":
                started = event["item"]
            else:
                results[event["item"]] = event["result"]
                todo.remove(event["item"])
                started = None
        proc.wait()
        if started is not None:  # the child died or hung in this item
            results[started] = {"crash": True, "hung": hung}
            todo.remove(started)
        elif proc.returncode != 0:
            raise RuntimeError(f"the {job} worker failed")
    return results


def prove_int_as_double(schemas: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The Scalar overloads for which an integer gives exactly what the same number as a double gives (results,
    dtypes, errors) where a Tensor operand is floating (the common dtype is then floating, and aten converts the
    number to it), on every sample of shimgen's generator with integral numbers and a floating operand, and on
    each such sample with one floating operand in int64 while another stays floating; and, for the others, why
    not."""
    proven, why = [], {}
    for op, r in _in_children("int-as-double", schemas).items():
        if r.get("crash"):  # type: ignore[union-attr]
            why[op] = "aten hangs on a sample" if r.get("hung") else "aten crashes on a sample"
        elif r["proven"]:  # type: ignore[index]
            proven.append(op)
        else:
            why[op] = r["why"]  # type: ignore[index]
    return sorted(proven), why


# The numbers the sibling proof tries in each Scalar position: every kind, signs, zero, beyond 2^53 and float range,
# and the values ATen's Scalar kernels branch on (pow.Tensor_Scalar computes x^0.5 as sqrt, x^-0.5 as rsqrt, x^2
# as x*x, x^-1 as a reciprocal: the Tensor overload does not, and differs in the last bit; --verify found it).
NUMBERS = [True, False, 3, -2, 0, 2, -1, 2**53 + 1, 2.5, 0.1, -1.5, 0.5, -0.5, 2.0, -1.0, 1e300, 1 + 2j]


def prove_equivalents(rules: dict[str, dict]) -> dict[str, dict]:
    """Each rule (`op` -> via, args) with `proven`: the runtimes (shimgen.proofs.verify.runtimes.RELEASES found here) on
    which aten's op equals `via` given those arguments on every sample of shimgen/proofs/provers/equivalents_worker.py
    (floating and integral tensors, shapes with 0-dim and broadcasting, numbers incl. +-inf and 2^53, and the
    float64 gradients); a rule differing on any runtime is proven nowhere."""
    # lazily: only this command runs the runtimes' interpreters (and their venvs need finding)
    from shimgen.proofs.verify import runtimes

    texts = history.schemas_of(NativeYaml().text)
    spec = {op: {"args": [a.name for a in FunctionSchema.parse(texts[op]).arguments.flat_all],
                 "via": r["via"], "via_args": r["args"], "refuse_dtypes": r.get("refuse_dtypes", []),
                 "cast_bool": bool(r.get("cast_bool"))}
            for op, r in rules.items()}
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equivalents_worker.py")
    found, missing = runtimes.resolve(list(runtimes.RELEASES))
    for name in missing:
        print(f"runtime {name} not found: not proven there", file=sys.stderr)
    proven: dict[str, list[str]] = {op: [] for op in rules}
    failed: set[str] = set()
    for rt in found:
        proc = subprocess.run([rt.python, worker], input=json.dumps(spec), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{rt.name}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for op, r in json.loads(proc.stdout).items():
            if r["wrong"] or not r["both_ok"]:
                print(f"{op} != {rules[op]['via']} on {rt.name}: {r['wrong'] or 'nothing compared'}", file=sys.stderr)
                failed.add(op)
            else:
                proven[op].append(rt.name)
    return {op: {"via": r["via"], "args": dict(r["args"]), "proven": [] if op in failed else proven[op],
                 **({"refuse_dtypes": list(r["refuse_dtypes"])} if r.get("refuse_dtypes") else {}),
                 **({"cast_bool": True} if r.get("cast_bool") else {})}
            for op, r in sorted(rules.items())}


def _text_note(r: dict) -> str:
    """The worker's count of calls where both raised but the route's message is not aten's (worker_common.same)."""
    if not r.get("text_differs"):
        return ""
    want, got = r["text_example"]
    return f"; error text differs in {r['text_differs']} (e.g. aten: {want[:120]!r}; route: {got[:120]!r})"


def prove_number_rules(rules: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Each number rule with `proven`: the runtimes on which aten's op given that very number equals `via` on
    every sample of shimgen/proofs/provers/number_rules_worker.py (each claimed tensor category x number kind, shapes
    with 0-dim and empty, inf/nan/-0.0 among the values, float64 gradients unless the rule is `no_grad`: taken only
    where autograd records nothing); a rule differing anywhere is proven nowhere."""
    texts = history.schemas_of(NativeYaml().text)
    spec = {op: [{"args": [a.name for a in FunctionSchema.parse(texts[op]).arguments.flat_all],
                  "argument": r["argument"], "value": r["value"], "cells": r["cells"], "via": r.get("via"),
                  "kernel": r.get("kernel"), "via_args": r["args"], "no_grad": bool(r.get("no_grad"))} for r in rs]
            for op, rs in rules.items()}
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "number_rules_worker.py")
    # lazily: only this command runs the runtimes' interpreters (and their venvs need finding)
    from shimgen.proofs.verify import runtimes

    found, missing = runtimes.resolve(list(runtimes.RELEASES))
    for name in missing:
        print(f"runtime {name} not found: not proven there", file=sys.stderr)
    proven = {op: [[] for _ in rs] for op, rs in rules.items()}
    failed: set[tuple[str, int]] = set()
    for rt in found:
        proc = subprocess.run([rt.python, worker], input=json.dumps(spec), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{rt.name}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for op, results in json.loads(proc.stdout).items():
            for k, r in enumerate(results):
                if r["wrong"] or not r["both_ok"]:
                    print(f"{op} {rules[op][k]['argument']}={rules[op][k]['value']} != "
                          f"{rules[op][k].get('via') or rules[op][k]['kernel']} on "
                          f"{rt.name}: {r['wrong'] or 'nothing compared'}", file=sys.stderr)
                    failed.add((op, k))
                else:
                    proven[op][k].append(rt.name)
                print(f"{rt.name} {op} {rules[op][k]['argument']}={rules[op][k]['value']}: {r['both_ok']} equal "
                      f"results, wrong: {r['wrong'] or 0}", file=sys.stderr)
    return {op: [{**{key: r[key] for key in ("argument", "value", "cells", "via", "kernel", "args", "no_grad",
                                           "autocast")
                     if key in r},
                  "proven": [] if (op, k) in failed else proven[op][k]} for k, r in enumerate(rs)]
            for op, rs in sorted(rules.items())}


def kernel_compositions_spec(rules: dict[str, dict]) -> dict[str, dict]:
    """What shimgen/proofs/provers/compositions_worker.py reads for each row: the row, the overload's arguments, and its
    kernel's registry entry's prover module and prover_spec (the hook and the facts it reads)."""
    texts = history.schemas_of(NativeYaml().text)
    outs = {op: "".join(a.name for a in FunctionSchema.parse(texts[op]).arguments.out[:1]) for op in rules}
    return {op: {"kernel": r["kernel"], "bind": r.get("args", []), "via": r.get("via", ""),
                 "promote": r.get("promote", []), "fixed": r.get("fixed", {}), "check": r.get("check"),
                 "refuse_kinds": r.get("refuse_kinds", []), "refuse_dtypes": r.get("refuse_dtypes", []),
                 "samples": r.get("samples", ""),
                 "same_dtype": bool(r.get("same_dtype")),
                 "saves_self": bool(r.get("saves_self")),
                 "rule": {k: v for k, v in r.items() if k != "proven"},  # a kernel's own keys (number_as_none)
                 "out": outs[op],
                 "args": [a.name for a in FunctionSchema.parse(texts[op]).arguments.flat_all],
                 "types": {a.name: str(a.type).replace("?", "") for a in
                           FunctionSchema.parse(texts[op]).arguments.flat_all},
                 # the hook's module: the entry's prover module unless its spec names another's
                 "module": kernels.get(r["kernel"], op).prover_module,
                 **kernels.get(r["kernel"], op).prover_spec(r, outs[op])}
            for op, r in rules.items()}


def _attach_library(spec: dict[str, dict], rules: dict[str, dict]) -> None:
    """Rows whose prover runs the generated wrappers themselves (their spec's `compiled`: the target release): one
    library of those wrappers (shimgen/proofs/provers/compiled.py), its path as each row's `library` and the custom
    op its wrapper is registered as (`custom`)."""
    from shimgen.proofs.provers import compiled  # lazily: it imports the generation pipeline, which only this needs

    by_target: dict[str, list[str]] = {}
    for op, s in spec.items():
        if s.get("compiled"):
            by_target.setdefault(s["compiled"], []).append(op)
    for target, ops in sorted(by_target.items()):
        path = compiled.library(sorted(ops), target, rules)
        for op in ops:
            spec[op].update(library=path, custom=f"{compiled.NAMESPACE}.{compiled.custom_name(op)}")


def prove_kernel_compositions(rules: dict[str, dict]) -> dict[str, dict]:
    """Each kernel composition (`op` -> kernel, args) with `proven`: the runtimes on which aten's op equals the
    composition the wrapper computes (shimgen/proofs/provers/compositions_worker.py runs the hook the kernel's
    registry entry names, in its prover module under shimgen/proofs/provers/kernels, which mirrors scalar.h's
    shimgen::detail::<kernel>_select step by step) on every
    sample: dtype pairs, broadcasting, 0-dim and empty shapes, inf/nan/-0.0, numbers out of range, errors, float64
    gradients; a rule differing anywhere is proven nowhere."""
    from shimgen.proofs.verify import runtimes  # lazily: only this command runs the runtimes' interpreters

    spec = kernel_compositions_spec(rules)
    _attach_library(spec, rules)
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compositions_worker.py")
    found, missing = runtimes.resolve(list(runtimes.RELEASES))
    for name in missing:
        print(f"runtime {name} not found: not proven there", file=sys.stderr)
    proven: dict[str, list[str]] = {op: [] for op in rules}
    failed: set[str] = set()
    for rt in found:
        proc = subprocess.run([rt.python, worker], input=json.dumps(spec), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{rt.name}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for op, r in json.loads(proc.stdout).items():
            if r.get("skipped"):  # a runtime older than the target the row's wrapper is built at
                print(f"{rt.name} {op}: not proven there: {r['skipped']}", file=sys.stderr)
                continue
            print(f"{rt.name} {op}: {r['compared']} compared, {r['both_ok']} equal results, {r['refused']} refused, "
                  f"wrong: {r['wrong'] or 0}{_text_note(r)}", file=sys.stderr)
            if r["wrong"] or not r["both_ok"]:
                failed.add(op)
            else:
                proven[op].append(rt.name)
    return {op: {**{k: v for k, v in r.items() if k != "proven"},
                 "proven": [] if op in failed else proven[op]} for op, r in sorted(rules.items())}


LEGACY_DATA = "data/legacy_shims.yaml"


def prove_legacy_shims(rules: dict[str, dict]) -> dict[str, dict]:
    """Each legacy shim rule (data/legacy_shims.yaml) with `proven`: the runtimes on which the shim, called through
    ctypes as the generated wrapper calls it (per-call number check, dispatch probe, out= handling), equals aten's
    overload on every sample of shimgen/proofs/provers/legacy_shims_worker.py (results, dtypes, errors; autocast; inputs
    requiring grad, where the route may refuse but never differ); a rule differing on any runtime is proven
    nowhere."""
    from shimgen.proofs.verify import runtimes  # lazily: only this command runs the runtimes' interpreters

    texts = history.schemas_of(NativeYaml().text)
    spec = {}
    for op, r in rules.items():
        args = FunctionSchema.parse(texts[op]).arguments.flat_all
        spec[op] = {**{k: r[k] for k in ("function", "c_args", "form", "cells", "samples", "like")},
                    "probe": r.get("probe", ""), "args": [a.name for a in args],
                    "numbers": [a.name for a in args if str(a.type) == "Scalar"]}
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_shims_worker.py")
    found, missing = runtimes.resolve(list(runtimes.RELEASES))
    for name in missing:
        print(f"runtime {name} not found: not proven there", file=sys.stderr)
    proven: dict[str, list[str]] = {op: [] for op in rules}
    failed: set[str] = set()
    for rt in found:
        proc = subprocess.run([rt.python, worker], input=json.dumps(spec), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{rt.name}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for op, r in json.loads(proc.stdout).items():
            print(f"{rt.name} {op}: {r['compared']} compared, {r['both_ok']} equal results, {r['refused']} refused, "
                  f"wrong: {r['wrong'] or 0}", file=sys.stderr)
            if r["wrong"] or not r["both_ok"]:
                failed.add(op)
            else:
                proven[op].append(rt.name)
    return {op: dict(r, proven=[] if op in failed else proven[op]) for op, r in sorted(rules.items())}


def dump_legacy(head: str, rules: dict[str, dict]) -> str:
    """data/legacy_shims.yaml: its header comment, then the rules (flow style for the short lists)."""
    lines = [head.rstrip("\n"), "legacy_shims:"]
    for op, r in sorted(rules.items()):
        lines.append(f"  {op}:")
        for key in ("function", "c_args", "numbers", "form", "like", "probe", "cells", "since", "samples", "proven"):
            if key not in r:
                continue
            value = r[key]
            if key == "samples":
                lines.append("    samples:")
                lines += [f"    - {json.dumps(x).replace(',', ', ').replace(',  ', ', ')}" for x in value]
            elif key == "cells":
                cells = ", ".join(f"{c}: [{', '.join(k)}]" for c, k in sorted(value.items()))
                lines.append(f"    cells: {{{cells}}}")
            elif isinstance(value, list):
                lines.append(f"    {key}: [{', '.join(map(str, value))}]")
            else:
                lines.append(f"    {key}: {value if key != 'since' else repr(str(value))}")
    return "\n".join(lines) + "\n"


def prove_siblings(pairs: dict[str, tuple[str, str]]) -> dict[str, dict]:
    """For each `op -> (its schema, its sibling's schema)`: over shimgen's samples (nine dtypes, 0-dim and not) and
    NUMBERS in each position the sibling takes a tensor, aten's Scalar overload given the number vs. the sibling
    given the 0-dim tensors Model.stand_in_dtypes picks. A (tensor category, number kind) cell is proven when at
    least one call in it compared and none differed; returns op -> {"cells": mask, "wrong": an example}."""
    results = _in_children("siblings", pairs)
    return {op: (r if not r.get("crash") else  # type: ignore[union-attr]
                 {"cells": 0, "cells_fit": 0, "cells_exact": 0,
                  "wrong": "aten hangs on a sample" if r.get("hung") else "aten crashes on a sample"})
            for op, r in results.items()}


def _worker(job: str) -> None:
    """`python -m shimgen.dev prove _worker JOB`: reads {item: payload} on stdin, writes JSON lines
    (_in_children)."""
    warnings.simplefilter("ignore")
    for item, payload in json.load(sys.stdin).items():
        print(json.dumps({"event": "start", "item": item}), flush=True)
        print(f"shimgen.facts.scalar_facts: {job}: {item}", file=sys.stderr, flush=True)
        if job == "int-as-double":
            ok, reason = _int_as_double(torch, samples, FunctionSchema.parse(payload))
            result: dict = {"proven": ok, "why": reason}
        else:
            result = _sibling_cells(torch, samples, FunctionSchema.parse(payload[0]), FunctionSchema.parse(payload[1]))
        print(json.dumps({"event": "done", "item": item, "result": result}), flush=True)


def _dtype_name(t) -> str:
    return DTYPES[str(t.dtype).split(".")[1]]


def _outcome(fn, kwargs: dict):
    try:
        torch.manual_seed(0)
        return "ok", fn(**kwargs)
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return "error", " ".join(str(e).split()).split(". ")[0]


def _compare_once(torch, samples, aten, sibling, case, swapped, numbers, dtypes, zeros: bool):
    """(same, aten's outcome, the sibling's outcome) for one sample and numbers; None when zeroing changes
    nothing (no floating tensor)."""
    want_args = {k: v for k, v in case.make().items() if v is not samples.OMIT}
    got_args = {k: v for k, v in case.make().items() if v is not samples.OMIT}
    if zeros:
        floating = [k for k, v in want_args.items() if isinstance(v, torch.Tensor) and v.is_floating_point()]
        if not floating:
            return None
        for args in (want_args, got_args):
            for k in floating:
                args[k] = torch.zeros_like(args[k])
    for name, n, dtype in zip(swapped, numbers, dtypes):
        if n is None:
            want_args[name] = got_args[name] = None
            continue
        want_args[name] = n
        torch_dtype = getattr(torch, {v: k for k, v in DTYPES.items()}[dtype])
        got_args[name] = torch.tensor(n if dtype != "Bool" else bool(n), dtype=torch_dtype)
    want, got = _outcome(aten, want_args), _outcome(sibling, got_args)
    try:
        # an error on both sides is the same outcome for a caller (the kernels' messages may differ)
        same = want[0] == got[0] and (want[0] == "error" or _same(want[1], got[1]))
    except Exception as e:  # noqa: BLE001 - results the comparison cannot read are not proven equal
        same, got = False, ("error", f"comparing: {e}")
    return same, want, got


def _sibling_cells(torch, samples, ours, theirs) -> dict:
    model = Model(load(), DTYPES[str(torch.get_default_dtype()).split(".")[1]])
    spec = _spec(ours)
    swapped = [a.name for a, b in zip(ours.arguments.flat_all, theirs.arguments.flat_all) if str(a.type) != str(b.type)]
    optional = {a.name: str(a.type).endswith("?") for a in ours.arguments.flat_all}
    outs = {a.name for a in ours.arguments.out}  # the type promotion operands, as the header reads them
    tensor_args = [a.name for a in ours.arguments.flat_all if str(a.type) == "Tensor" and a.name not in outs]
    aten = getattr(getattr(torch.ops.aten, spec["name"]), spec["overload"])
    sibling = getattr(getattr(torch.ops.aten, str(theirs.name.name)), theirs.name.overload_name or "default")
    dtypes = (torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
              torch.float64, torch.complex64)
    try:
        cases = samples.generate(spec, dtypes=dtypes, shapes=((2, 3), ()))
    except Exception as e:  # noqa: BLE001
        return {"cells": 0, "wrong": f"no samples ({type(e).__name__})"}
    exact = wrong = exact_fit = wrong_fit = exact_ex = wrong_ex = 0
    example = ""
    seen: set = set()
    for case in cases:
        probe = case.make()
        tensors = [(_dtype_name(probe[n]), probe[n].dim() == 0) for n in tensor_args
                   if isinstance(probe.get(n), torch.Tensor)]
        if tuple(tensors) in seen:  # one sample per dtype and rank: the numbers vary the Scalar positions
            continue
        seen.add(tuple(tensors))
        # the number in every position the sibling takes a tensor, and (where the others are optional) in each
        # one alone, the others None
        subsets = [tuple(swapped)]
        if len(swapped) > 1 and all(optional[n] for n in swapped):
            subsets += [(n,) for n in swapped]
        for subset in subsets:
            for number in NUMBERS:
                numbers = [number if n in subset else None for n in swapped]
                dtypes = model.stand_in_dtypes(tensors, numbers)
                if isinstance(dtypes, str):
                    continue  # refused whatever the cells say
                for zeros in (False, True):  # zeroed tensors too: 0 * inf = nan shows a number rounded to inf
                    result = _compare_once(torch, samples, aten, sibling, case, swapped, numbers, dtypes, zeros)
                    if result is None:
                        continue
                    same, want, got = result
                    tclass = model.tensor_class(tensors)
                    bit = cell(tclass, kind_of(number)) if tclass >= 0 else 0
                    rtype = model.result_type(tensors, [model.wrapped(n) if n is not None else None for n in numbers])
                    fits = isinstance(rtype, str) and in_range(number, rtype)
                    held = isinstance(rtype, str) and stands_in_exactly(number, rtype)
                    if same and want[0] == "ok":  # a cell is proven by results, not by errors on both sides
                        exact |= bit
                        exact_fit |= bit if fits else 0
                        exact_ex |= bit if held else 0
                    elif not same:
                        wrong |= bit
                        wrong_fit |= bit if fits else 0
                        wrong_ex |= bit if held else 0
                        example = example or (f"{case.label}{' (zeroed)' if zeros else ''}, "
                                              f"{dict(zip(swapped, numbers))}: aten {str(want[1])[:100]}; "
                                              f"sibling {str(got[1])[:100]}")
    cells = exact & ~wrong
    cells_fit = exact_fit & ~wrong_fit & ~cells
    return {"cells": cells, "cells_fit": cells_fit, "cells_exact": exact_ex & ~wrong_ex & ~cells & ~cells_fit,
            "wrong": example}


def _int_as_double(torch, samples, schema) -> tuple[bool, str]:
    numbers = [a for a in schema.arguments.flat_all if str(a.type) in ("Scalar", "Scalar?")]
    spec = _spec(schema)
    try:
        aten = getattr(getattr(torch.ops.aten, spec["name"]), spec["overload"])
        cases = samples.generate(spec)
    except Exception as e:  # noqa: BLE001 - no sample generator for this op: unproven
        return False, f"no samples ({type(e).__name__})"
    compared = 0
    outs = {a.name for a in schema.arguments.out}

    def floating(t) -> bool:
        return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())

    def variants(values):
        """The sample where a Tensor argument is floating (the wrapper's clause: any operand floating, so the
        common dtype is), and the sample with each floating Tensor argument in int64 in turn while another stays
        floating; with tensor lists, the sample where every tensor is floating, as before."""
        flat = [t for v in values.values() for t in (v if isinstance(v, (list, tuple)) else [v])]
        if any(isinstance(v, (list, tuple)) for v in values.values()):
            return [values] if all(floating(t) for t in flat if isinstance(t, torch.Tensor)) else []
        if not [k for k, v in values.items() if isinstance(v, torch.Tensor) and k not in outs]:  # out= only
            return [values] if all(floating(t) for t in flat if isinstance(t, torch.Tensor)) else []
        tensors = [k for k, v in values.items() if floating(v) and k not in outs]  # out= is no operand
        mixed = [{**values, k: values[k].detach().to(torch.int64)} for k in tensors] if len(tensors) > 1 else []
        return ([values] if tensors else []) + mixed

    for case in cases:
        for values in variants(case.make()):
            ok, compared, why = _int_as_double_case(torch, samples, numbers, aten, case, values, compared)
            if not ok:
                return False, why
    if not compared:
        return False, "no sample with floating-point tensors and integral numbers"
    return True, ""


def _int_as_double_case(torch, samples, numbers, aten, case, values, compared):
    """One sample: the integral numbers as ints and as doubles give the same outcome (ok, count, why)."""
    ints, floats = dict(values), dict(values)
    changed = False
    for a in numbers:
        v = values.get(a.name, samples.OMIT)
        if v is samples.OMIT or v is None:
            v = a.default if a.default not in (None, "None") else None
            v = float(v) if v is not None and v.lstrip("-").replace(".", "", 1).isdigit() else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
            ints[a.name], floats[a.name] = int(v), float(v)
            changed = True
    if not changed:
        return True, compared, ""
    outcome = []
    for vals in (ints, floats):
        kw = {k: v for k, v in vals.items() if v is not samples.OMIT}
        try:
            torch.manual_seed(0)
            outcome.append(("ok", aten(**kw)))
        except Exception as e:  # noqa: BLE001
            outcome.append(("error", str(e).split("\n")[0]))
    compared += 1
    if outcome[0][0] != outcome[1][0] or not _same(outcome[0][1], outcome[1][1]):
        return False, compared, (f"{case.label}: integer -> {str(outcome[0][1])[:80]}; "
                                 f"double -> {str(outcome[1][1])[:80]}")
    return True, compared, ""


def _path() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), DATA)


def dump(raw: dict) -> str:
    """The data file: the header comment, then each section (the table one row per line)."""
    head = (
        "# How a Scalar crosses the stable ABI exactly: facts read by shimgen/facts/scalar_facts.py. Written by\n"
        "# `python -m shimgen.dev prove` (promotion: measured on the installed torch; siblings and\n"
        "# int_as_double: proven by that command); compositions are rules, kept by the command.\n"
    )
    p = raw["promotion"]
    lines = [head, "promotion:", f"  source: {p['source']!r}", f"  dtypes: [{', '.join(p['dtypes'])}]",
             f"  categories: [{', '.join(map(str, p['categories']))}]  # 0 bool, 1 integral, 2 floating, 3 complex",
             "  table:  # promote(row, column); empty: torch refuses the pair"]
    empty = "''"
    lines += ["    - [" + ", ".join(x or empty for x in row) + "]" for row in p["table"]]
    for key in ("compositions", "equivalents", "kernel_compositions", "number_rules", "siblings", "int_as_double"):
        value = raw.get(key)
        if value:
            lines.append(yaml.safe_dump({key: value}, sort_keys=True, default_flow_style=False, width=120).rstrip())
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shimgen.dev prove", description=__doc__.split("\n\n")[0])
    if argv is None and sys.argv[1:2] == ["_worker"]:
        _worker(sys.argv[2])
        return 0
    ap.add_argument("what", choices=["promotion", "siblings", "int-as-double", "equivalents", "number-rules",
                                                   "legacy-shims", "kernel-compositions"], help="which facts to rewrite (siblings: found by "
                    "rule in the installed yaml; `prove` then keeps the proven ones)")
    ap.add_argument("--only", metavar="OP[,OP...]",
                    help="kernel-compositions, siblings: prove these rows again and keep the others' records as they "
                    "are")
    args = ap.parse_args(argv)
    if args.what == "legacy-shims":
        legacy = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), LEGACY_DATA)
        text = open(legacy, encoding="utf-8").read()
        head = text[: text.index("\nlegacy_shims:") + 1]
        rules = prove_legacy_shims(yaml.safe_load(text)["legacy_shims"])
        with open(legacy, "w", encoding="utf-8", newline="\n") as f:
            f.write(dump_legacy(head, rules))
        print(legacy)
        return 0
    path = _path()
    raw = yaml.safe_load(open(path, encoding="utf-8")) if os.path.isfile(path) else {}
    if args.what == "promotion":
        raw["promotion"] = promotion_facts()
    if args.what == "number-rules":
        raw["number_rules"] = prove_number_rules(raw.get("number_rules") or {})
    if args.what == "kernel-compositions":
        rows = raw.get("kernel_compositions") or {}
        only = set(args.only.split(",")) if args.only else set(rows)
        unknown = only - set(rows)
        if unknown:
            print(f"shimgen: --only: no kernel composition row {sorted(unknown)[0]}", file=sys.stderr)
            return 2
        raw["kernel_compositions"] = {**rows, **prove_kernel_compositions({k: v for k, v in rows.items() if k in only})}
    if args.what == "equivalents":
        raw["equivalents"] = prove_equivalents(raw.get("equivalents") or {})
    if args.what == "int-as-double":
        texts = history.schemas_of(NativeYaml().text)
        with_numbers = {}
        for op, t in texts.items():
            schema = FunctionSchema.parse(t)
            flat = [str(a.type) for a in schema.arguments.flat_all]
            if any(x in ("Scalar", "Scalar?") for x in flat) and any(x.startswith("Tensor") for x in flat):
                with_numbers[op] = t
        proven, why = prove_int_as_double(with_numbers)
        raw["int_as_double"] = proven
        for op, reason in sorted(why.items()):
            print(f"not proven: {op}: {reason}", file=sys.stderr)
        print(f"{len(proven)} proven, {len(why)} not", file=sys.stderr)
    if args.what == "siblings":
        rows = table.load().arguments
        stand_in = {k: r.stand_in for k, r in rows.items() if r.stand_in}
        texts = history.schemas_of(NativeYaml().text)
        pairs = discover_siblings({op: FunctionSchema.parse(t) for op, t in texts.items()}, stand_in)
        kept = raw.get("siblings") or {}
        only = (set(args.only.split(",")) if args.only else set(pairs)) | (set(pairs) - set(kept))
        unknown = only - set(pairs)
        if unknown:
            print(f"shimgen: --only: no sibling {sorted(unknown)[0]}", file=sys.stderr)
            return 2
        proofs = prove_siblings({op: (texts[op], texts[to]) for op, to in pairs.items() if op in only})
        proofs.update({op: {**kept[op], "wrong": ""} for op in pairs if op not in only and op in kept})
        raw["siblings"] = {op: {"to": to, "cells": proofs[op]["cells"], "cells_fit": proofs[op].get("cells_fit", 0),
                                **({"cells_exact": proofs[op]["cells_exact"]} if proofs[op].get("cells_exact") else {})}
                           for op, to in pairs.items()}
        for op in sorted(pairs):
            if proofs[op]["wrong"]:
                print(f"{op} -> {pairs[op]}: differs: {proofs[op]['wrong']}", file=sys.stderr)
        full = sum(1 for op in pairs if proofs[op]["cells"] and not proofs[op]["wrong"])
        some = sum(1 for op in pairs if (proofs[op]["cells"] or proofs[op].get("cells_fit")))
        print(f"{len(pairs)} siblings: {full} proven in every cell tried, {some - full} in some (or for numbers "
              f"that fit the result dtype), {len(pairs) - some} in none", file=sys.stderr)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(raw))
    print(path)
    return 0


if __name__ == "__main__":
    exit_now(main())
