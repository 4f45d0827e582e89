"""Kernels that give `via` (the op's Tensor overload, its wrapper at the release with the parameters it takes there)
the op's numbers as it takes them. `wrapped_numbers` (where.Scalar, searchsorted.Scalar, bucketize.Scalar) is how
aten itself computes those: the numbers wrapped as 0-dim tensors (promoting as wrapped numbers: a double as the
default dtype); a row's `refuse_kinds` (isin.Tensor_Scalar: bool, complex) are the kinds of number aten raises for
before wrapping them. `item_numbers` (linspace, logspace): `via` takes each number back with .item(), so a 0-dim
tensor of its own type. `as_double` (constant_pad_nd -> pad with mode "constant"): `via` computes the op with its
`float?` as the number, which the double carries where scalar.h's exact_double says so."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven


class ViaNumbers(Kernel):
    """The numbers as `numbers` makes them (`<name>_t`), then `via`'s wrapper."""

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The leading parameters `via`'s wrapper takes with libtorch alone at q.level (each op argument bound to
        one of its parameters), every parameter without a default among them."""
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay:
            return None
        theirs = {p.name for p in target.kept(tv)}  # type: ignore[union-attr]
        bound = {fa: va for va, fa in rule["args"].items()}
        if not set(rule.get("fixed", {})) <= theirs:
            return None
        kept = 0
        for p in q.params:  # an out= the row binds (linspace.out -> linspace.Tensor_Tensor_out) included
            if bound.get(p.name) not in theirs:
                break
            kept += 1
        if any(p.default is None for p in q.params[kept:]):
            return None
        return Variant(route, kept, q.level, lowering=(rule["via"],))

    def numbers(self, w: Wrapper, v: Variant, rule: dict, numbers: list[str]) -> list[str]:
        """The lines defining each number's `<name>_t` as `via` takes it."""
        raise NotImplementedError

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        kept = w.kept(v)
        numbers = [p.name for p in kept if str(p.arg.type) == "Scalar"]
        lines = self.numbers(w, v, rule, numbers)
        if "check" in rule:  # the op's own argument checks, with its messages, before `via`'s (scalar.h)
            check = rule["check"]
            lines.insert(0, f"shimgen::detail::{check['function']}({', '.join(check['args'])});")
        names = {p.name for p in kept}
        fixed = rule.get("fixed", {})  # via parameters given a string literal
        last = max(i for i, p in enumerate(target.params) if rule["args"].get(p.name) in names)
        args = [f'"{fixed[p.name]}"' if p.name in fixed else
                rule["args"][p.name] + ("_t" if rule["args"][p.name] in numbers else "")
                for p in target.params[: last + 1]]
        # qualified: a parameter may share the wrapper's name (constant_pad_nd's `pad`)
        lines.append(f"return torch::stable::{target.name}({', '.join(args)});")
        return "\n".join(lines)


class WrappedNumbers(ViaNumbers):
    name = "wrapped_numbers"
    prover = "prove_wrapped"

    def numbers(self, w: Wrapper, v: Variant, rule: dict, numbers: list[str]) -> list[str]:
        """The numbers as 0-dim tensors of their wrapped dtype among the tensors `promote` names, on the device of
        the op's first tensor (aten's scalar_to_tensor)."""
        device = next(p.name for p in w.params if str(p.arg.type) == "Tensor" and not p.is_out)
        tensors = ", ".join(f"&{t}" for t in rule["promote"])
        lines = [f'const auto dtype = shimgen::detail::wrapped_numbers_dtype("{w.op.name}", {{{tensors}}}, '
                 f'{{{", ".join("&" + n for n in numbers)}}});']
        if "unwrapped_at" in rule:  # isin.Scalar_Tensor: aten's sorting path drops the wrapped-number flag
            lines = _unwrapped_dtype(w, rule, numbers)
        lines = _refused_kinds(w, rule, numbers) + lines + _refused_dtypes(w, rule)
        return lines + [f"const auto {n}_t = shimgen::detail::wrapped_number_tensor("
                        f'"{w.op.name}", "{n}", {n}, dtype, {device});' for n in numbers]

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} with the numbers as 0-dim tensors of the dtype aten gives them as "
                f"wrapped numbers, as aten computes aten::{w.op.name} (proven equal on torch {proven(rule)}).",
                "A number out of the range of that dtype raises an error (shimgen::Scalar)."] + (
                    [f"A {' or '.join(rule['refuse_kinds'])} number raises an error, as in aten, which checks "
                     "the number's own type before wrapping it."] if rule.get("refuse_kinds") else []) + (
                    [f"Proven with finite numbers up to {rule['number_limit']} in magnitude: aten's kernel loops "
                     "n times per element, so larger ones were not run (the wrapper converts them as it does "
                     "the others)."] if rule.get("number_limit") else []) + _unwrapped_doc(rule)


class ItemNumbers(ViaNumbers):
    name = "item_numbers"
    prover = "prove_items"

    def numbers(self, w: Wrapper, v: Variant, rule: dict, numbers: list[str]) -> list[str]:
        """Of their own type: .item() gives each back as the caller wrote it."""
        lines = [f"const torch::stable::Tensor {n}_t = shimgen::detail::number_tensor({n}, "
                 f"shimgen::detail::natural_type({n}));" for n in numbers]
        # no CPU gate: `via` reads the numbers on the host (.item()) and runs aten's own Scalar kernel on out's
        # device, so what is proven on the CPU is aten's call on any device (meta aside: a Python reference there)
        return [f'shimgen::detail::refuse_meta_out("{w.op.name}", {p.name});' for p in w.kept(v) if p.is_out] + lines

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} with the numbers as 0-dim tensors of their own type (float64, "
                f"int64, bool, complex128), which it reads back exactly with .item(), as aten::{w.op.name} "
                f"(proven equal on torch {proven(rule)}): aten's own kernel on any device."] + (
                    ["An out on the meta device raises an error naming the remedy (aten's meta kernel of "
                     f"aten::{rule['via']} refuses CPU numbers)."] if any(p.is_out for p in w.params) else [])

    def prover_spec(self, rule: dict, out: str) -> dict:
        # over an out= overload: the factories' out= prover, with out's checks of `via` (no CPU gate, the meta check)
        return ({"module": "factories", "prover": "prove_factory", "factory": "items"} if out else
                {"prover": self.prover})


class AsDouble(ViaNumbers):
    name = "as_double"
    prover = "prove_as_double"

    def numbers(self, w: Wrapper, v: Variant, rule: dict, numbers: list[str]) -> list[str]:
        self_ = next(p.name for p in w.params if str(p.arg.type) == "Tensor")
        return [f'const double {n}_t = shimgen::detail::exact_double("{w.op.name}", "{n}", {n}, {self_});'
                for n in numbers]

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']}, which computes aten::{w.op.name} with its `float?` as the number "
                f"(proven equal, gradients included, on torch {proven(rule)}).",
                "A number no double holds exactly raises an error (shimgen::Scalar)."]


# ---- `refuse_kinds` of a wrapped_numbers row: numbers aten raises for before wrapping them ----

KIND_TESTS = {"bool": "is_boolean()", "complex": "is_complex()"}  # row word -> shimgen::Scalar's test


def _refused_kinds(w: Wrapper, rule: dict, numbers: list[str]) -> list[str]:
    """The row's `refuse_kinds`: aten checks the number's own type before wrapping it (isin.Tensor_Scalar raises
    for a bool or complex test element), which the wrapped tensor of the common dtype would pass."""
    kinds = rule.get("refuse_kinds", [])
    if not kinds:
        return []
    why = f"aten raises for a {' or '.join(kinds)} number"
    test = " || ".join(f"{{n}}.{KIND_TESTS[k]}" for k in kinds)
    return [f"if ({test.format(n=n)}) {{\nshimgen::detail::refuse(\"{w.op.name}\", \"{n}\", {n}, \"{why}\");\n}}"
            for n in numbers]


def _refused_dtypes(w: Wrapper, rule: dict) -> list[str]:
    """The row's `refuse_dtypes`: common dtypes `via`'s kernel has no version for where the op's own kernel has
    (isin.Tensor_Tensor's default CPU kernel lacks uint16/32/64, which isin.Tensor_Scalar's eq computes)."""
    dtypes = rule.get("refuse_dtypes", [])
    if not dtypes:
        return []
    return [f'shimgen::detail::refuse_dtype("{w.op.name}", "{rule["via"]}", dtype, '
            f'shimgen::detail::ScalarType::{d});' for d in dtypes]


# ---- `unwrapped_at` of a wrapped_numbers row (isin.Scalar_Tensor: {tensor: test_elements, from: 10}): aten wraps
# the number and calls `via`, whose kernel takes one of two paths by `tensor`'s size: below `from` elements it
# promotes the wrapped number with result_type (the wrapped dtype), from `from` on it sorts the number's own 0-dim
# tensor, raveled (which drops the wrapped-number flag), with the others (promote_types with its own type). So the
# number is a 0-dim tensor of the wrapped dtype on the first path and of its own type on the second ----

def _unwrapped_dtype(w: Wrapper, rule: dict, numbers: list[str]) -> list[str]:
    assert len(numbers) == 1
    tensors = ", ".join(f"&{t}" for t in rule["promote"])
    at = rule["unwrapped_at"]
    n = numbers[0]
    return [f"auto dtype = shimgen::detail::natural_type({n});",
            f"if ({at['tensor']}.numel() < {int(at['from'])}) {{",
            f'dtype = shimgen::detail::wrapped_numbers_dtype("{w.op.name}", {{{tensors}}}, {{&{n}}});', "}"]


def _unwrapped_doc(rule: dict) -> list[str]:
    at = rule.get("unwrapped_at")
    if not at:
        return []
    return [f"Where {at['tensor']} has {at['from']} elements or more, aten's kernel sorts the number's own tensor "
            "with them (the wrapped-number flag dropped): so the number is a 0-dim tensor of its own type there "
            "(int64, float64), and of its wrapped dtype below."]


register(WrappedNumbers(), ItemNumbers(), AsDouble())
