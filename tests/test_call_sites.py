"""The call-site corpus: natural calls (tests/call_sites/corpus.yaml) compiled against ATen and against shimgen's
generated ops.h, run, and compared by the aten overload each one reaches.

How the binding is observed: both builds link into one executable (tests/call_sites/main.cpp) with libtorch.
A global RecordFunction callback records the aten operators dispatched at the top level while a call runs:
`at::` functions, Tensor methods, the boxed dispatcher (torch_call_dispatcher) and the C shims (which call
`at::` functions) all go through the dispatcher, which reports the operator and overload name. The ATen call's
first operator is its overload. A stable call reaches that overload's wrapper when it dispatches that
operator, or one its wrapper lowers its numbers to (shimgen::Scalar's Tensor sibling or composition: 0-dim
tensors are made first), or when that wrapper refuses a number (`shimgen: arange.default: end=10: ...`). A call
the compiler rejects on one side is compiled out (its line in the compiler's errors) and recorded as such.
The overload model (shimgen/generate/overloads.py) predicts every stable-side binding too, and must agree.

Time: one ATen translation unit (the corpus and main.cpp, <ATen/ATen.h>: ~20 s to parse), one stable one,
and the C shims of the corpus' ops that libtorch lacks (the overlay); a syntax pass finds the calls that do
not compile, then the objects are built. The two sides build in parallel.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
from dataclasses import dataclass

import pytest
import yaml

from shimgen.generate.signatures import stage
from shimgen.generate.emit import c as emit_c, cpp as emit_cpp
from shimgen.generate import plan as plan_mod
from shimgen.facts import scalar_facts as scalars
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate.pipeline import write as write_atomically
from shimgen.generate.overloads import resolve
from shimgen.proofs.verify import overlay
from shimgen.facts.versions import Version
from tests.cxx import CXX, TORCH, library

HERE = os.path.join(os.path.dirname(__file__), "call_sites")
TENSORS = ["t", "u", "w", "m", "mb", "tt", "b", "i", "l", "li", "x4", "k4", "bias", "out", "vals", "inds"]
EXCEPTION_BUDGET = 0.03


@dataclass(frozen=True)
class Call:
    index: int
    call: str
    aten: str | None = None  # ATen's spelling, where it differs
    aten_ambiguous: str | None = None
    exception: str | None = None

    @property
    def function(self) -> str:
        return re.match(r"\s*([A-Za-z_]\w*)\s*\(", self.call).group(1)

    def qualified(self, ns: str) -> str:
        return f"{ns}::{self.call.strip()}"


def load_corpus() -> list[Call]:
    with open(os.path.join(HERE, "corpus.yaml"), encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    calls = []
    for k, entry in enumerate(raw):
        if isinstance(entry, str):
            entry = {"call": entry}
        unknown = set(entry) - {"call", "aten", "aten_ambiguous", "exception"}
        assert not unknown, f"corpus entry {entry}: unknown keys {unknown}"
        calls.append(Call(k, **entry))
    return calls


CORPUS = load_corpus()


# ---- the two translation units ----------------------------------------------------------------------------

_STABLE_HEAD = """#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace ns = torch::stable;
using ScalarType = torch::headeronly::ScalarType;
using Layout = torch::headeronly::Layout;
using MemoryFormat = torch::headeronly::MemoryFormat;

int call_count() {
  return %(count)d;
}

bool stable_call(int which, AtenTensorHandle* h) {
  using torch::stable::Tensor;
%(tensors)s
  int64_t n = 1;
  std::vector<int64_t> dims{0, 1};
  std::vector<Tensor> tensors{t, u};
  torch::stable::Device cpu(torch::headeronly::DeviceType::CPU);
  switch (which) {
"""

_ATEN_HEAD = """#include "main.cpp"

namespace ns = at;
using ScalarType = at::ScalarType;
using Layout = at::Layout;
using MemoryFormat = at::MemoryFormat;

bool aten_call(int which, const std::vector<at::Tensor>& in) {
%(tensors)s
  int64_t n = 1;
  std::vector<int64_t> dims{0, 1};
  std::vector<at::Tensor> tensors{t, u};
  at::Device cpu(at::kCPU);
  switch (which) {
"""

_TAIL = """    default:
      break;
  }
  return false;
}
"""


def translation_unit(side: str, calls: list[Call]) -> tuple[str, dict[int, int]]:
    """(source, line number -> call index)."""
    if side == "stable":
        tensors = "\n".join(f"  Tensor {v}(h[{k}]);" for k, v in enumerate(TENSORS))
        head = _STABLE_HEAD % {"count": len(calls), "tensors": tensors}
    else:
        tensors = "\n".join(f"  at::Tensor {v} = in[{k}];" for k, v in enumerate(TENSORS))
        head = _ATEN_HEAD % {"tensors": tensors}
    lines = head.splitlines()
    where: dict[int, int] = {}
    for c in calls:
        text = c.aten if (side == "aten" and c.aten) else c.qualified("ns")
        lines.append(f"#ifndef SKIP_{c.index}")
        lines.append(f"    case {c.index}: (void)({text}); return true;")
        where[len(lines)] = c.index
        lines.append("#endif")
    lines += _TAIL.splitlines()
    return "\n".join(lines) + "\n", where


def failing_calls(stderr: str, source: str, where: dict[int, int]) -> dict[int, str]:
    """The calls whose lines the compiler's diagnostics name, with the first error reported on that line."""
    name = re.escape(os.path.basename(source))
    failed: dict[int, str] = {}
    for m in re.finditer(rf"{name}:(\d+):\d+: (error: .*|note: .*)?", stderr):
        k = where.get(int(m.group(1)))
        if k is not None and (k not in failed or (m.group(2) or "").startswith("error") and not failed[k]):
            failed[k] = m.group(2) if (m.group(2) or "").startswith("error") else failed.get(k, "")
    return failed


def _compile(side: str, src: str, where: dict[int, int], flags: list[str], obj: str) -> tuple[dict[int, str], float]:
    """Syntax pass (which calls fail), then the object without them. Returns (failing calls, seconds)."""
    import time

    start = time.perf_counter()
    check = subprocess.run([CXX, *flags, "-fsyntax-only", src], capture_output=True, text=True)
    failed = failing_calls(check.stderr, src, where) if check.returncode else {}
    assert check.returncode == 0 or failed, f"{side}: errors outside the calls:\n{check.stderr[-3000:]}"
    skips = [f"-DSKIP_{k}" for k in sorted(failed)]
    proc = subprocess.run([CXX, *flags, *skips, "-O0", "-fPIC", "-c", src, "-o", obj], capture_output=True, text=True)
    assert proc.returncode == 0, f"{side}: the calls that passed the syntax pass do not build:\n{proc.stderr[-3000:]}"
    return failed, time.perf_counter() - start


@dataclass
class Outcome:
    """What one call did on one side: it did not compile, or the aten overloads it dispatched at the top level
    (the first is the call's own on the ATen side) and the error it raised, if any."""

    compiled: bool
    ops: tuple[str, ...] = ()
    message: str = ""  # the exception's first line
    error: str = ""  # the compiler's first error on the call's line

    @property
    def reached(self) -> str | None:
        return self.ops[0] if self.ops else None

    @property
    def refused(self) -> str | None:
        """The overload whose wrapper refused a number (`shimgen: arange.default: end=10: ...`)."""
        m = re.match(r"shimgen: (\w+\.\w+): ", self.message)
        return m.group(1) if m else None

    def reaches(self, op: str, lowered: dict[str, set[str]]) -> bool:
        """Did the call reach `op`'s wrapper: it dispatched `op`, or one of the overloads that wrapper lowers its
        numbers to (shimgen's Scalars: the Tensor sibling, a composition), or the wrapper refused a number?"""
        return op in self.ops or self.refused == op or bool(lowered.get(op, set()) & set(self.ops))

    @property
    def label(self) -> str:
        if not self.compiled:
            return "no compile"
        return self.refused or ",".join(self.ops) or "-"


def _op_name(record: str) -> str:
    """`aten::sum.dim_IntList` -> `sum.dim_IntList`; `aten::amax.` -> `amax.default`."""
    name, _, overload = record.removeprefix("aten::").partition(".")
    return f"{name}.{overload or 'default'}"


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory):
    """The stable side builds with SHIMGEN_OVERLAY and the overlay's shims winning ties (the order before the
    overlay only added forms): a shim dispatches its own overload, so the binding is observed directly rather than
    through a composition's internal calls (hardtanh's lt, gt, where, ...)."""
    return _corpus_run(tmp_path_factory)


def _corpus_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("call_sites")
    gen = str(root / "gen")
    names = sorted({_schema_name(c.function) for c in CORPUS})
    p = plan_mod.make(names, additive=True, overlay_ties_to_libtorch=False)  # as `shimgen --ops ...`, ties aside
    write_atomically(gen, {**emit_c.emit(r := stage.resolve(p)), **emit_cpp.emit(r)})
    ov_plan, _ = overlay.missing_ops(p, TORCH)
    ov_src = str(root / "overlay")
    write_atomically(ov_src, overlay.sources(ov_plan))
    ov_lib = str(root / overlay.LIBRARY)

    sources = {}
    for side in ("aten", "stable"):
        text, where = translation_unit(side, CORPUS)
        path = str(root / f"{side}_calls.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        sources[side] = (path, where)
    os.symlink(os.path.join(HERE, "main.cpp"), root / "main.cpp")
    flags = {"aten": TORCH.aten_flags(), "stable": TORCH.stable_flags(gen, overlay=True)}
    objs = {side: str(root / f"{side}_calls.o") for side in sources}

    def overlay_build() -> None:
        proc = library(TORCH.aten_flags(ov_src), os.path.join(ov_src, emit_c.SOURCE), ov_lib, TORCH.link_flags())
        assert proc.returncode == 0, proc.stderr[-3000:]

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        aten = pool.submit(_compile, "aten", *sources["aten"], flags["aten"], objs["aten"])
        stable = pool.submit(_compile, "stable", *sources["stable"], flags["stable"], objs["stable"])
        stable.result()
        ov = pool.submit(overlay_build)  # after the stable side, beside ATen's longer build
        failed = {"aten": aten.result()[0], "stable": stable.result()[0]}
        ov.result()
    exe = str(root / "call_sites")
    link = [CXX, objs["aten"], objs["stable"], "-o", exe, f"-L{root}", "-lshimgen_overlay", f"-Wl,-rpath,{root}",
            *TORCH.link_flags()]  # fmt: skip
    proc = subprocess.run(link, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = subprocess.run([exe], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    (root / "run.txt").write_text(run.stdout)
    outcomes: dict[tuple[int, str], Outcome] = {}
    for line in run.stdout.splitlines():
        head, _, message = line.partition(" | ")
        k, side, ran, reached, _status = head.split()
        if ran == "ran":
            ops = tuple(_op_name(r) for r in reached.split(",")) if reached != "-" else ()
            outcomes[int(k), side] = Outcome(True, ops, message)
    for side in ("aten", "stable"):
        for k, error in failed[side].items():
            outcomes[k, side] = Outcome(False, error=error)
    missing = [(c.index, s) for c in CORPUS for s in ("aten", "stable") if (c.index, s) not in outcomes]
    assert not missing, f"calls that neither ran nor failed to compile: {missing}"
    ws, _ = sig_cpp.wrappers(p)
    level = Version.parse_release(TORCH.version)
    # what a wrapper may dispatch instead of its own overload: the Tensor sibling or composition its numbers lower
    # to, and the overloads its number rules and equivalents call (pow(t, 2) is mul(t, t): scalar facts)
    lowered = {w.op.name: {t for v in w.variants if v.start <= level and (v.end is None or level < v.end)
                           for t in v.lowering} | set(scalars.vias(w.op.name)) for w in ws}  # fmt: skip
    return outcomes, ws, lowered


def _schema_name(function: str) -> str:
    """The native_functions.yaml name a C++ function name comes from (`sum_out` -> `sum`)."""
    from shimgen.generate.parse import NativeYaml

    known = _yaml_names()
    if function in known:
        return function
    base = function.removesuffix("_outf").removesuffix("_out")
    assert base in known, f"{function} is not an op of the installed native_functions.yaml"
    return base


_NAMES: set[str] = set()


def _yaml_names() -> set[str]:
    if not _NAMES:
        from shimgen.generate.parse import NativeYaml

        _NAMES.update(NativeYaml().by_name)
    return _NAMES


# ---- argument kinds, for the overload model --------------------------------------------------------------

_LITERALS = [
    (r"-?\d+", "int"),
    (r"-?(\d+\.\d*|\d*\.\d+|\d+)(e-?\d+)?", "double"),
    (r"true|false", "bool"),
    (r'".*"', "str"),
    (r"std::nullopt", "nullopt"),
    (r"ScalarType::\w+", "ScalarType"),
    (r"Layout::\w+", "Layout"),
    (r"MemoryFormat::\w+", "MemoryFormat"),
]
_VARIABLES = {**{v: "Tensor" for v in TENSORS}, "n": "int64_t", "dims": "vector<int64_t>",
              "tensors": "vector<Tensor>", "cpu": "Device"}  # fmt: skip


def split_arguments(call: str) -> list[str]:
    inner = call[call.index("(") + 1 : call.rindex(")")]
    args, depth, cur, quoted = [], 0, "", False
    for ch in inner:
        if ch == '"':
            quoted = not quoted
        elif quoted:
            pass
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def kind(arg: str) -> str | None:
    if arg in _VARIABLES:
        return _VARIABLES[arg]
    for pattern, k in _LITERALS:
        if re.fullmatch(pattern, arg):
            return k
    if arg.startswith("{") and arg.endswith("}"):
        items = split_arguments("(" + arg[1:-1] + ")")
        if not items:
            return "{}"
        kinds = {kind(x) for x in items}
        if len(kinds) != 1 or None in kinds:
            return None
        (k,) = kinds
        if len(items) == 1:
            return f"{{{k}}}"
        return "{0,int}" if k == "int" and items[0] == "0" else f"{{{k},{k}}}"  # 0: a null pointer constant
    return None


def predict(c: Call, ws, typer=None) -> str | None:
    """The model's answer for the stable side: the aten overload, `no compile`, or None (arguments it cannot
    classify)."""
    kinds = [kind(a) for a in split_arguments(c.call)]
    if None in kinds:
        return None
    r = resolve(sig_cpp.overload_set(ws, c.function, Version(2, 13), typer), kinds)
    if r.reached is None or r.reached.label.startswith("deleted "):
        return "no compile"
    return r.reached.label


# ---- the tests -------------------------------------------------------------------------------------------------


def test_corpus_is_big_and_varied() -> None:
    assert len(CORPUS) >= 200
    assert len({c.function for c in CORPUS}) >= 150
    assert len({c.call for c in CORPUS}) == len(CORPUS), "a call is listed twice"


def _verdict(c: Call, outcomes, lowered) -> str:
    a, s = outcomes[c.index, "aten"], outcomes[c.index, "stable"]
    if not a.compiled:
        if "ambiguous" not in a.error:
            return f"does not compile against ATen ({a.error})"
        return "aten-ambiguous" if s.compiled else "ambiguous on both sides"
    if a.reached is not None and s.compiled and s.reaches(a.reached, lowered):
        return "same"
    return f"differs: aten {a.label}, stable {s.label}" + (f" ({s.error})" if s.error else "")


def test_calls_bind_as_against_aten(corpus_run) -> None:
    outcomes, _, lowered = corpus_run
    problems = []
    exceptions = 0
    for c in CORPUS:
        verdict = _verdict(c, outcomes, lowered)
        if c.aten_ambiguous:
            if verdict not in ("aten-ambiguous", "ambiguous on both sides"):
                problems.append(f"{c.call}: recorded as ambiguous in ATen, but {verdict}")
        elif c.exception:
            exceptions += 1
            if verdict == "same":
                problems.append(f"{c.call}: recorded as an exception, but binds as against ATen now")
        elif verdict != "same":
            problems.append(f"{c.call}: {verdict}")
    assert not problems, "\n".join(problems)
    assert exceptions <= EXCEPTION_BUDGET * len(CORPUS), exceptions


def test_aten_ambiguities_reach_upstreams_overload(corpus_run) -> None:
    outcomes, _, _ = corpus_run
    for c in CORPUS:
        stable = outcomes[c.index, "stable"]
        if c.aten_ambiguous and stable.compiled:
            assert stable.reached in c.aten_ambiguous, c.call


def test_the_model_predicts_every_stable_outcome(corpus_run) -> None:
    outcomes, ws, lowered = corpus_run
    wrong, predicted = [], 0
    for c in CORPUS:
        want = predict(c, ws)
        if want is None:
            continue
        predicted += 1
        got = outcomes[c.index, "stable"]
        if not (got.reaches(want, lowered) if got.compiled else want == "no compile"):
            wrong.append(f"{c.call}: model {want}, compiler {got.label}")
    assert not wrong, "\n".join(wrong)
    assert predicted >= 0.9 * len(CORPUS), predicted


# Calls whose overload depends on the Scalar representation: shimgen::Scalar (a class type, as at::Scalar) or a
# `double` as before it. The model answers for both (tests/test_overloads.py probes both types' conversions).
SCALAR_SENSITIVE: list[str] = []


def test_scalar_representation_sensitivity(corpus_run) -> None:
    from tests.test_overloads import SCALAR_AS_DOUBLE

    _, ws, _ = corpus_run
    changed = []
    for c in CORPUS:
        kinds = [kind(a) for a in split_arguments(c.call)]
        if None in kinds:
            continue
        now = resolve(sig_cpp.overload_set(ws, c.function, Version(2, 13)), kinds).describe()
        typer = lambda p: SCALAR_AS_DOUBLE.get(p.row.key, p.cpp_type)  # noqa: E731
        before = resolve(sig_cpp.overload_set(ws, c.function, Version(2, 13), typer), kinds).describe()
        if now != before:
            changed.append(c.call)
    assert changed == SCALAR_SENSITIVE
