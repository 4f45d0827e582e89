"""The overload model (shimgen/generate/overloads.py) against the compiler, and the C++ overload rules on real op sets.

data/cpp_conversions.yaml says how each kind of argument converts to each C++ parameter type. The probe compiles,
for every type and kind, whether the argument converts (One<T>::f(arg) is well-formed), and for every pair of
types that both take a kind, which of f(T1), f(T2) the call picks or that it is ambiguous; each answer is
compared with the model's. A stand-in for a Scalar class type (like at::Scalar: one implicit constructor for
every arithmetic type) is probed too, so the model's answer for that representation is measured as well.
"""

from __future__ import annotations

import itertools
import re

import pytest

from shimgen.generate import overloads, plan as plan_mod
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate.pipeline import generate, write as write_atomically
from shimgen.generate.overloads import Candidate, Rank, resolve
from shimgen.facts.versions import Version
from tests.cxx import syntax_check

CONV = overloads.load()

PROBED = CONV
_SAME_TYPE = [{"int", "int32_t"}]  # two spellings of one C++ type: no pair to probe
# The parameter types Scalar rows had before shimgen::Scalar (a double): what the representation changed.
SCALAR_AS_DOUBLE = {"Scalar": "double", "Scalar?": "std::optional<double>"}

_PRELUDE = """
#include <torch/csrc/stable/ops.h>
#include <type_traits>
namespace probe {
extern torch::stable::Tensor t;
extern int64_t n;
extern torch::stable::Device cpu;
extern torch::stable::Generator gen;
extern std::vector<int64_t> dims;
extern std::vector<double> weights;
extern std::vector<torch::stable::Tensor> tensors;
extern std::optional<torch::headeronly::IntHeaderOnlyArrayRef> opt_dims;
template <class T> struct One { static char (&f(T))[1]; };
template <class T1, class T2> struct Two { static char (&f(T1))[1]; static char (&f(T2))[2]; };
"""


def _trait(i: int, arg: str) -> str:
    return (f"template <class P, class = void> struct k{i} : std::integral_constant<int, 0> {{}};\n"
            f"template <class P> struct k{i}<P, std::void_t<decltype(P::f({arg}))>>"
            f" : std::integral_constant<int, sizeof(P::f({arg}))> {{}};\n")  # fmt: skip


def _expected_pair(t1: str, t2: str, kind: str) -> int:
    r = resolve([Candidate("1", (t1,), 1), Candidate("2", (t2,), 1)], [kind], PROBED)
    return int(r.reached.label) if r.reached else 0


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = str(tmp_path_factory.mktemp("probe") / "gen")
    files, _ = generate(None, None, None)
    write_atomically(out, files)
    return out


def test_every_parameter_type_has_an_entry() -> None:
    table = plan_mod.table_mod.load()
    types = {r.fill(c, size="3") if r.size else c for r in table.arguments.values() for c in (r.cpp, r.cpp_out) if c}
    types = {re.sub(r"\{size\}", "3", t) for t in types}
    missing = [t for t in sorted(types) if _entry_missing(t)]
    assert not missing, f"add these C++ types to data/cpp_conversions.yaml: {missing}"


def _entry_missing(cpp: str) -> bool:
    try:
        CONV.entry(cpp)
    except Exception:
        return True
    return False


def test_model_matches_the_compiler(header: str) -> None:
    kinds = list(PROBED.kinds)
    types = sorted(PROBED.types, key=lambda t: t.replace("{size}", "3"))
    spelled = {t: t.replace("{size}", "3") for t in types}
    lines = [_PRELUDE]
    lines += [_trait(i, PROBED.kinds[k]) for i, k in enumerate(kinds)]
    checks: list[tuple[str, str]] = []  # (C++ static_assert, what it checks)
    for i, k in enumerate(kinds):
        for t in types:
            want = int(PROBED.types[t].get(k) is not None)
            checks.append((f"k{i}<One<{spelled[t]}>>::value == {want}", f"{k} -> {t}: converts={bool(want)}"))
        takers = [t for t in types if PROBED.types[t].get(k) is not None]
        for t1, t2 in itertools.combinations(takers, 2):
            want = _expected_pair(t1, t2, k)
            what = {0: "ambiguous", 1: t1, 2: t2}[want]
            if {t1, t2} in _SAME_TYPE:
                continue
            checks.append((f"k{i}<Two<{spelled[t1]}, {spelled[t2]}>>::value == {want}",
                           f"{k} -> f({t1}) | f({t2}): {what}"))  # fmt: skip
    for n, (cond, _) in enumerate(checks):
        lines.append(f'static_assert({cond}, "check {n}");')
    lines.append("}  // namespace probe\n")
    res = syntax_check("\n".join(lines), header)
    failed = sorted({int(m) for m in re.findall(r'static assertion failed: check (\d+)', res.stderr)})
    wrong = [checks[n][1] for n in failed]
    assert not wrong, f"data/cpp_conversions.yaml disagrees with the compiler ({len(wrong)}):\n" + "\n".join(wrong)
    assert res.returncode == 0, res.stderr[-3000:]
    assert len(checks) > 1000


def _names(ops: list[str]) -> dict[str, str]:
    ws, _ = sig_cpp.wrappers(plan_mod.make(ops, additive=True))
    return {w.op.name: w.name for w in ws}


@pytest.mark.parametrize("ops", [["clamp"], ["clamp.default"], ["clamp.default", "clamp.Tensor"]])
def test_names_do_not_depend_on_the_selection(ops: list[str]) -> None:
    names = _names(ops)
    assert names["clamp.default"] == "clamp"
    assert all(name == op.split(".")[0] or name == op.split(".")[0] + "_out" for op, name in names.items())


@pytest.fixture(scope="module")
def whole_yaml() -> list[sig_cpp.Wrapper]:
    from shimgen.generate.parse import NativeYaml

    ws, _ = sig_cpp.wrappers(plan_mod.make(sorted(NativeYaml().by_name)))
    return ws


def test_no_renames_anywhere(whole_yaml: list[sig_cpp.Wrapper]) -> None:
    """Every overload of every 2.13 name is a C++ overload of ATen's name for it (docs/design.md's rule)."""
    ws = whole_yaml
    renamed = sorted(w.op.name for w in ws if w.name != sig_cpp.cpp_name(w.op))
    assert renamed == []


def _reach(ops: list[str], name: str, args: list[str], level: str = "2.13") -> str:
    p = plan_mod.make(ops, additive=True)  # as the command line generates it
    ws, _ = sig_cpp.wrappers(p)
    return resolve(sig_cpp.overload_set(ws, name, Version.parse(level)), args).describe()


def test_clamp_arange_std_sum_reach_atens_overloads() -> None:
    assert _reach(["clamp"], "clamp", ["Tensor", "double", "double"]) == "clamp.default"
    assert _reach(["clamp_"], "clamp_", ["Tensor", "double", "double"]) == "clamp_.default"
    assert _reach(["clamp"], "clamp", ["Tensor", "Tensor", "Tensor"]) == "clamp.Tensor"
    assert _reach(["arange"], "arange", ["int", "int", "int"]) == "arange.start_step"
    assert _reach(["arange"], "arange", ["int", "int"]) == "arange.start"
    assert _reach(["std"], "std", ["Tensor", "{int}"]) == "std.correction"  # ATen's C++-only std(Tensor, int)
    assert _reach(["std"], "std", ["Tensor", "bool"]) == "std.default"
    assert _reach(["sum"], "sum", ["Tensor", "{int}", "bool"]) == "sum.dim_IntList"
    assert _reach(["sum"], "sum", ["Tensor"]) == "sum.default"
    assert _reach(["sum"], "sum_outf", ["Tensor", "{int}", "bool", "nullopt", "Tensor"]) == "sum.IntList_out"
    assert _reach(["sum"], "sum_outf", ["Tensor", "{int}", "Tensor"]) == "no match"  # faithful: no defaults


def test_upstream_nullopt_calls_keep_upstreams_meaning() -> None:
    """sum(t, std::nullopt) is ambiguous in ATen (sum.default's dtype takes it too); upstream's ops.h, whose only
    `sum` is sum.dim_IntList, reaches that, and so does shimgen's header whatever is selected."""
    assert _reach(["sum"], "sum", ["Tensor", "nullopt"]) == "sum.dim_IntList"
    assert _reach(["sum.default"], "sum", ["Tensor", "nullopt"]) == "sum.dim_IntList"  # manifest's is there
    # Not for overloads outside upstream's surface: the call stays ambiguous, as in ATen.
    assert _reach(["mean"], "mean", ["Tensor", "nullopt"]).startswith("ambiguous")


def test_std_int_dim_is_deleted_where_its_target_is_missing() -> None:
    """ATen's std(Tensor, int dim) forwards to std.correction; at a release without that wrapper it is deleted,
    so std(t, 0) does not silently become std(t, unbiased=true)."""
    assert _reach(["std"], "std", ["Tensor", "int"], "2.9").startswith("deleted std(")
    # from 2.10 the dispatcher carries std.correction whenever correction is None, as it is here
    assert _reach(["std"], "std", ["Tensor", "int"], "2.10") == "std.correction"
    assert _reach(["std.default"], "std", ["Tensor", "int"]).startswith("deleted std(")
    assert _reach(["std.default"], "std", ["Tensor", "bool"]) == "std.default"


# The arguments an author passes for a parameter of each C++ type (the first is the plainest).
NATURAL = {
    "const torch::stable::Tensor&": ["Tensor"], "torch::stable::Tensor&": ["Tensor"],
    "const std::optional<torch::stable::Tensor>&": ["Tensor", "nullopt"],
    "torch::headeronly::HeaderOnlyArrayRef<torch::stable::Tensor>": ["{Tensor,Tensor}", "vector<Tensor>"],
    "torch::headeronly::HeaderOnlyArrayRef<std::optional<torch::stable::Tensor>>": ["{Tensor,Tensor}"],
    "bool": ["bool"], "std::optional<bool>": ["bool", "nullopt"], "std::array<bool, {size}>": ["{bool,bool}"],
    "int64_t": ["int"], "int32_t": ["int"], "int": ["int"], "std::optional<int64_t>": ["int", "nullopt"],
    "torch::headeronly::IntHeaderOnlyArrayRef": ["{int}", "{0,int}", "int", "vector<int64_t>"],
    "torch::stable::OptionalIntHeaderOnlyArrayRef": ["{int}", "{0,int}", "int", "nullopt"],
    "double": ["double", "int"], "std::optional<double>": ["double", "int", "nullopt"],
    "const shimgen::Scalar&": ["double", "int"], "const std::optional<shimgen::Scalar>&": ["double", "int", "nullopt"],
    "torch::headeronly::HeaderOnlyArrayRef<double>": ["{double,double}"],
    "const std::vector<double>&": ["{double,double}", "vector<double>"],
    "torch::stable::OptionalHeaderOnlyArrayRef<double>": ["{double,double}", "nullopt"],
    "std::string_view": ["str"], "std::optional<std::string_view>": ["str", "nullopt"],
    "torch::headeronly::ScalarType": ["ScalarType"],
    "std::optional<torch::headeronly::ScalarType>": ["ScalarType", "nullopt"],
    "torch::headeronly::Layout": ["Layout"], "std::optional<torch::headeronly::Layout>": ["Layout", "nullopt"],
    "torch::headeronly::MemoryFormat": ["MemoryFormat"],
    "std::optional<torch::headeronly::MemoryFormat>": ["MemoryFormat", "nullopt"],
    "torch::stable::Device": ["Device"], "std::optional<torch::stable::Device>": ["Device", "nullopt"],
    "const torch::stable::Generator&": ["Generator"],
    "const std::optional<torch::stable::Generator>&": ["Generator", "nullopt"],
}  # fmt: skip


def _natural_calls(ps) -> list[tuple[str, ...]]:
    """Each argument count a form takes, with the plainest argument for every parameter and then each other
    natural argument for one parameter at a time."""
    def nat(cpp: str) -> list[str]:
        return NATURAL[re.sub(r"std::array<bool, \d+>", "std::array<bool, {size}>", cpp)]

    calls = []
    first = max((i + 1 for i, p in enumerate(ps) if p.default is None), default=0)
    for n in range(first, len(ps) + 1):
        base = [nat(p.cpp_type)[0] for p in ps[:n]]
        calls.append(tuple(base))
        calls += [tuple(base[:i] + [k] + base[i + 1 :]) for i in range(n) for k in nat(ps[i].cpp_type)[1:]]
    return list(dict.fromkeys(calls))


def test_what_the_scalar_representation_changes(whole_yaml: list[sig_cpp.Wrapper]) -> None:
    """Across every 2.13 overload set, which natural calls of each overload reach another overload (or are
    ambiguous) because a Scalar is shimgen::Scalar, a class type like at::Scalar, rather than a `double` as
    before it (docs/design.md "C++ naming rules")."""
    ws = whole_yaml
    level = Version(2, 13)
    names: dict[str, list] = {}
    for w in ws:
        names.setdefault(w.name, []).append(w)
    changed, total = [], 0
    for name, members in names.items():
        if len(members) < 2:
            continue
        now = sig_cpp.overload_set(ws, name, level)
        before = sig_cpp.overload_set(ws, name, level, lambda p: SCALAR_AS_DOUBLE.get(p.row.key, p.cpp_type))
        for w in members:
            v = next((v for v in w.variants if v.start <= level and (v.end is None or level < v.end)), None)
            for call in _natural_calls(w.kept(v)) if v else []:
                total += 1
                a, b = resolve(now, list(call)).describe(), resolve(before, list(call)).describe()
                if a != b:
                    changed.append(f"{name}{call}: {a} / as double: {b}")
    assert total > 4000
    # A Scalar is a class now, like at::Scalar. When it arrived, a Scalar[] was a HeaderOnlyArrayRef<double>, which
    # takes one double by a user-defined conversion too, so `_foreach_add_(tensors, 1.5)` tied .Scalar with
    # .ScalarList (in ATen, ArrayRef<Scalar> cannot take a lone number: two user-defined conversions); a Scalar[]
    # is a `const std::vector<double>&` since, which takes no number. Nothing else changes.
    assert changed == [], "\n".join(changed)


