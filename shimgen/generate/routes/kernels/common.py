"""Helpers the composition kernels share: the types the kernels carry, whether a wrapper the body calls has a
libtorch route with its parameters at a release, the generic variant rules, and the refusals several kernels
emit (a backward aten raises for, a result dtype aten does not return)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route, boxed
from shimgen.facts.versions import Version

CARRIED = {"Tensor", "Scalar", "bool", "int"}
LISTS = {"Tensor[]", "Scalar[]"}
LISTS_CROSS = Version(2, 10)  # the first release whose dispatcher carries an int[] (expand's size)


def proven(rule: dict) -> str:
    return ", ".join(map(str, rule["proven"]))


def carried_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """The elementwise kernels' rule: every parameter a Tensor, Scalar, bool or int (no out=), each bound by the
    row's `args`; a row naming `via` (softshrink's subtractions) routes where `via`'s wrapper has a libtorch route."""
    if any(str(p.arg.type) not in CARRIED or p.is_out for p in q.params):
        return None
    if "via" in rule:  # softshrink: where `via` (sub.Tensor) has a libtorch route
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < 2:
            return None
        if {b for b in rule["args"] if isinstance(b, str)} != {p.name for p in q.params}:
            return None
        return Variant(route, len(q.params), q.level, lowering=(rule["via"],))
    bound = {b for b in rule["args"] if isinstance(b, str)}
    if any(str(p.arg.type) == "bool" and p.name not in bound for p in q.params):
        return None
    if bound != {p.name for p in q.params}:
        return None
    return Variant(route, len(q.params), q.level)


def select_args(rule: dict) -> list[str]:
    """The kernel's parameters in order (scalar.h): argument names, numbers, C++ bool literals."""
    return [("true" if a else "false") if isinstance(a, bool) else str(a) for a in rule["args"]]


def calls_at(route: Route, q: Query, rule: dict, passed: dict[str, int]) -> Variant | None:
    """Every parameter (the row's `params`, the names the body uses), where each wrapper of `calls` takes the
    parameters the body passes it (`passed`: role -> how many leading parameters) with libtorch alone at q.level."""
    if [p.name for p in q.params] != rule["params"]:
        return None
    for role, name in rule["calls"].items():
        target = q.plan.wrapper_of(name)
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < passed[role]:
            return None
    return Variant(route, len(q.params), q.level, lowering=tuple(rule["calls"].values()))


def callees(rule: dict, plan: Plan) -> dict[str, str]:
    """role -> the qualified C++ name of the wrapper the row's `calls` give that role (calls_at checked each)."""
    f = {}
    for role, name in rule["calls"].items():
        target = plan.wrapper_of(name)
        assert target is not None
        f[role] = f"torch::stable::{target.name}"
    return f


def literal(value: object) -> str:
    """A fixed argument as C++: a bool, an integer, a list of integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "{" + ", ".join(map(str, value)) + "}"
    return str(value)


# ---- `backward_raises` of an inplace or foreach row: calls autograd records whose backward aten raises for
# (true: always, _foreach_maximum_ has no derivative; a number's name: where it is negative or NaN, leaky_relu_'s
# backward from its result), which the composition's calls would differentiate: refused where autograd records
# them (scalar.h records_inplace: grad mode, self not a leaf), after the forward's own errors, before self changes ----

def number_is(access: str, value: object) -> str:
    """The C++ condition that a shimgen::Scalar is a row's `value`, as an integer or a double equal to it (a bool is
    neither); `access` reaches its members (`p.` for the Scalar, `p->` for a std::optional holding one)."""
    return (f"({access}is_integral() && {access}to_int64() == {int(value)}) || ({access}is_floating_point() && "
            f"{access}to_double() == {float(value)!r})")


def _backward_why(rule: dict) -> str:
    raises = rule["backward_raises"]
    if raises is True:
        return "aten has no derivative for it (its backward raises) on a tensor autograd records"
    return f"with {raises} < 0 on a tensor autograd records, aten's backward of the in-place op raises"


def backward_refusal(w: Wrapper, rule: dict, each: bool = False) -> list[str]:
    """`each`: self is a list (kernel foreach), each element checked."""
    raises = rule.get("backward_raises")
    if not raises:
        return []
    refuse = f'shimgen::detail::refuse_backward("{w.op.name}", "{_backward_why(rule)}");'
    if each:
        return [f"for (size_t i = 0; i < self.size(); ++i) {{\nif (shimgen::detail::records_inplace(self[i])) {{\n"
                f"{refuse}\n}}\n}}"]
    return [f"const bool negative = !({raises}.to_double() >= 0);",
            f"if (negative && shimgen::detail::records_inplace(self)) {{\n{refuse}\n}}"]


def backward_refusal_doc(rule: dict) -> list[str]:
    if not rule.get("backward_raises"):
        return []
    raises = rule["backward_raises"]
    when = "" if raises is True else f" with {raises} < 0"
    return [f"Where autograd records the call{when} (grad mode, self not a leaf), it raises an error: aten's "
            "backward raises there, and the composition would differentiate it."]


# ---- `refuse_cast: true` of an inplace row (_add_relu_.Tensor): where the result's dtype is not self's (but casts
# to it), aten writes it there and returns a temporary of the result's dtype instead of self, which the in-place rules
# do not return: refused (scalar.h refuse_cast) ----

def cast_refusal(w: Wrapper, rule: dict, target: str) -> list[str]:
    return [f'shimgen::detail::refuse_cast("{w.op.name}", {target}, result);'] if rule.get("refuse_cast") else []


def cast_refusal_doc(rule: dict, target: str) -> list[str]:
    if not rule.get("refuse_cast"):
        return []
    return [f"Where the result's dtype is not {target}'s, it raises an error: aten returns a temporary of the result's "
            f"dtype there instead of {target}."]


# ---- a `str` the kernel compares in C++, where the calls it does not compute take the dispatcher's guarded form
# (routes/dispatcher.py: aten's op from the str's leak-free release, a shimgen: error naming the leak before):
# kernels `str_value` ("trunc"), `gelu_addmm` (all but a contiguous CPU gelu) ----

def overlay_shim_serves(q: Query) -> bool:
    """Does a C shim serve the op at q.level in this build (the overlay's, linked)? It carries every value of the
    str, so a kernel computing only some of them gives way."""
    return q.plan.world.overlay and any(sv.since <= q.level for sv in q.shims)


def guarded_form(q: Query, argument: str) -> Variant | None:
    """The dispatcher's form of the op at q.level where it is guarded for `argument` alone, else None."""
    dv = boxed().variant_at(q)
    return dv if dv is not None and list(dv.guard) == [argument] else None


def guarded_calls_at(route: Route, q: Query, rule: dict, passed: dict[str, int]) -> Variant | None:
    """A composition of the row's `calls` (calls_at) that computes every call of the op on libtorch 2.10-2.13, where
    the dispatcher's form is guarded for the row's `argument` alone at q.level: that form, with the calls (no
    `guard`: it wins the tie; its body asks the running release and takes the guarded form from `guard_from`); not
    in a build linking the overlay where the op has its C shim by q.level, which computes every call."""
    if overlay_shim_serves(q):
        return None
    dv = guarded_form(q, rule["argument"])
    cv = calls_at(route, q, rule, passed)
    if dv is None or cv is None:
        return None
    return Variant(route, dv.kept, q.level, stack=dv.stack, guard_from=dv.guard_from, lowering=cv.lowering)


def leak_free_release(v: Variant) -> int:
    """The guarded form's leak-free release as shimgen::detail::running_release() numbers it (2.14: 214)."""
    return v.guard_from.major * 100 + v.guard_from.minor  # type: ignore[union-attr]


def guarded_body(w: Wrapper, v: Variant, plan: Plan, argument: str) -> str:
    """The dispatcher's guarded body for the kernel's variant v (its `stack` and `guard_from`: guarded_form's)."""
    guarded = Variant(boxed(), v.kept, v.start, stack=v.stack, guard=(argument,), guard_from=v.guard_from)
    return boxed().body(w, guarded, plan)
