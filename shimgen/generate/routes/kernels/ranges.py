"""Kernels `arange_factory` and `range_factory` (arange.default/.start/.start_step, range.default/.step): aten's range
factories as aten::cumsum of [start, step, step, ...] in int64 or float64 and aten::_to_copy to the dtype (scalar.h
range_select), decided per number: aten's dtype rule, checks and size mirrored where releases agree, a floating
range served only where every element is exact in the dtype and in aten's arithmetic; otherwise a `shimgen:`
refusal. `inclusive`: range includes its end."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven


class RangeFactory(Kernel):
    prover = "prove_range"

    def __init__(self, name: str, inclusive: bool):
        self.name, self.inclusive = name, inclusive

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """The numbers, and each option (dtype, layout, device, pin_memory) whose C++ type the release's stable
        headers carry at q.level (the table's `since`: a Device from 2.10); an option left out gets its default."""
        kept = 0
        for p in q.params:
            if p.is_out or not (str(p.arg.type) == "Scalar" or (p.row.since is not None and p.row.since <= q.level)):
                break
            kept += 1
        if any(p.default is None for p in q.params[kept:]):
            return None
        return Variant(route, kept, q.level)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten's {w.op.name.split('.')[0]} kernel as aten::cumsum of [start, step, step, ...] in int64 "
                "or float64, then aten::_to_copy to the dtype (shimgen::detail::range_select; aten's dtype rule, "
                f"checks and size mirrored; proven equal on torch {proven(rule)}).",
                "A floating range is served where every element is exact in the dtype (integers, power-of-two "
                "steps such as 0.25), and on the CPU in float and double from target 2.10 as aten's CPU kernel "
                "computes it (its loop replicated, shimgen::detail::arange_cpu); aten's vectorized kernel rounds "
                "others its own way, so a 0.1 step in another dtype or on another device raises an error, as do a "
                "layout other than strided and pin_memory=true."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """scalar.h's range_select with the overload's numbers (arange's start 0 and step 1, as aten's overloads
        pass them) and the options the wrapper takes, found by type (defaults for the others: CPU, strided,
        unpinned)."""
        kept = {p.name for p in w.kept(v)}
        option = {str(p.arg.type): p.name for p in w.kept(v) if str(p.arg.type) != "Scalar"}
        dtype, layout, device, pinned = (option.get(t) for t in ("ScalarType?", "Layout?", "Device?", "bool?"))
        lines = ["int32_t device_type = aoti_torch_device_type_cpu();", "int32_t device_index = -1;"]
        if device:
            lines += [f"if ({device}.has_value()) {{",
                      f"device_type = torch::stable::detail::to<int32_t>(torch::stable::detail::from("
                      f"{device}->type()));",
                      f"device_index = {device}->index();", "}"]
        args = [f'"{w.op.name}"', "true" if self.inclusive else "false",
                "start" if "start" in kept else "shimgen::Scalar(int64_t(0))", "end",
                "step" if "step" in kept else "shimgen::Scalar(int64_t(1))", dtype or "std::nullopt",
                f"!{layout}.has_value() || *{layout} == torch::headeronly::Layout::Strided" if layout else "true",
                f"{pinned}.value_or(false)" if pinned else "false", "device_type", "device_index"]
        lines.append(f"return shimgen::detail::range_select({', '.join(args)});")
        return "\n".join(lines)

    def prover_spec(self, rule: dict, out: str) -> dict:
        # range: its end included (arange: integer numbers give int64 where dtype is None)
        return {"prover": self.prover, "inclusive": self.inclusive}


register(RangeFactory("arange_factory", inclusive=False), RangeFactory("range_factory", inclusive=True))
