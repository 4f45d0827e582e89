"""Kernels `range_out`, `full_out` and `scalar_full`: the factories' out= overloads and scalar_tensor as aten
computes them. `range_out` (arange.out, arange.start_out, range.out, range.out_): aten's arange_out / range_out
compute in out's dtype, so the range is range_select's (kernel `arange_factory` / `range_factory`) in out's dtype
on out's device; then aten's rules for out (scalar.h range_out_assign): resized to the range's length where its
number of elements differs (`warns: true`, arange: with a warning on a non-empty out), else written in its own
shape. `full_out` (full.out): aten's out.resize_(size) (scalar.h full_out_resize), then `via` (fill_.Scalar) on out.
`scalar_full` (scalar_tensor): aten's empty({}, options).fill_(s), which is `via` (full.default) with size [] and the
default dtype where dtype is None (full would infer it from the number). The out= kernels check aten's autograd rule
for a factory's out first (scalar.h check_factory_out_autograd).

The module's other kernels share its variant rule: `fill_diagonal` (fill_diagonal_: aten's composite, `via`
fill_.Scalar on `views` as_strided), `scatter_value_reduce` (scatter.value_reduce and its forms: `via`
scatter.reduce with the number as an expanded src) and `index_add_one` (index_add and its forms with alpha 1:
`via` scatter_add with via's parameter `expanded` given the index expanded to source's shape)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register


class Factory(Kernel):
    """`one_out`: the overload has exactly one out=; `renames` (via's name for an op parameter) and `dropped` (op
    parameters via lacks): where set, via's parameters must be the op's so renamed; `prover`, `factory`: the
    worker's hook and, for prove_factory, which model of the wrapper it runs (`ranged`: range_select into out;
    `filled`: resize_ and fill_; `scalar`: full with size []; `items`: an item_numbers row's out= form)."""

    one_out = False
    renames: dict[str, str] = {}
    dropped: tuple[str, ...] = ()
    factory = ""

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, each of a type the release's stable headers carry at q.level (a Scalar, the out tensor,
        an option from the table's `since`), and `via`'s wrapper (if the row names one) with all of its parameters
        and libtorch alone at q.level."""
        if self.one_out and sum(p.is_out for p in q.params) != 1:
            return None
        for p in q.params:
            if not (str(p.arg.type) == "Scalar" or p.is_out or (p.row.since is not None and p.row.since <= q.level)):
                return None
        if "via" not in rule:
            return Variant(route, len(q.params), q.level)
        if self.renames:  # via's parameters are the op's (but `dropped`), renamed
            target = q.plan.wrapper_of(rule["via"])
            theirs = [p.name for p in target.params] if target is not None else []  # type: ignore[union-attr]
            if [self.renames.get(p.name, p.name) for p in q.params if p.name not in self.dropped] != theirs:
                return None
        vias = (rule["via"], *([rule["views"]] if "views" in rule else []))
        for via in vias:  # fill_diagonal: fill_ and as_strided
            target = q.plan.wrapper_of(via)
            tv = target.active(q.level) if target is not None else None
            if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
                return None
        return Variant(route, len(q.params), q.level, lowering=vias)

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "factory": self.factory}


def _proven(rule: dict) -> str:
    return ", ".join(map(str, rule["proven"]))


class RangeOut(Factory):
    name = "range_out"
    prover = "prove_factory"
    factory = "ranged"
    one_out = True

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        op = w.op.name
        kept = {p.name for p in w.kept(v)}
        out = next(p.name for p in w.kept(v) if p.is_out)
        # A range's elements are computed by range_select's calls, proven against aten's CPU kernel only (CUDA's
        # computes in another accumulation type)
        lines = [f'shimgen::detail::refuse_not_cpu("{op}", {out});',
                 f'shimgen::detail::check_factory_out_autograd("{op}", {out});']
        inclusive = "true" if rule.get("inclusive") else "false"
        args = [f'"{op}"', inclusive, "start" if "start" in kept else "shimgen::Scalar(int64_t(0))", "end",
                "step" if "step" in kept else "shimgen::Scalar(int64_t(1))", f"{out}.scalar_type()", "true", "false",
                "device_type", "device_index"]
        lines += ["int32_t device_type = 0;", "int32_t device_index = 0;",
                  f'shimgen::detail::check(aoti_torch_get_device_type({out}.get(), &device_type), "get_device_type");',
                  f'shimgen::detail::check(aoti_torch_get_device_index({out}.get(), &device_index), '
                  '"get_device_index");']
        lines.append(f"const torch::stable::Tensor result = shimgen::detail::range_select({', '.join(args)});")
        warns = "true" if rule.get("warns") else "false"
        lines.append(f'return shimgen::detail::range_out_assign("{op}", {out}, result, {warns});')
        return "\n".join(lines)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        name = w.op.name.split(".")[0]
        resize = ("through aten::where.self_out, whose warning on a non-empty out stands for aten's own (its text "
                  "differs)" if rule.get("warns") else "by aten::resize_as_, quietly as aten does")
        return [f"Route: aten's {name} kernel computes in out's dtype: shimgen::detail::range_select (the {name} "
                f"factory's route) in out's dtype on out's device, then aten's rules for out: where its number of "
                f"elements differs it is resized to the range's ({resize}), else it keeps its shape and gets the "
                f"elements in its row-major order (proven equal on torch {_proven(rule)}).",
                "A floating range is served as for the factory (a 0.1 step computes on the CPU in float and double "
                "and raises an error elsewhere); so do an out not on the CPU (proven on CPU only), an out with a grad_fn in grad "
                "mode (aten records a backward that raises) and "
                + ("resizing an out that writes an element twice." if rule.get("warns") else
                   "resizing an out that requires grad.")]


class FullOut(Factory):
    name = "full_out"
    prover = "prove_factory"
    factory = "filled"
    one_out = True

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        op = w.op.name
        out = next(p.name for p in w.kept(v) if p.is_out)
        # full.out is aten's own two calls (resize_, fill_) on out's device: no device gate
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        number = next(p.name for p in w.kept(v) if str(p.arg.type) == "Scalar")
        return "\n".join([f'shimgen::detail::check_factory_out_autograd("{op}", {out});',
                          f'shimgen::detail::full_out_resize("{op}", {out}, size.data(), size.size());',
                          f"torch::stable::{target.name}({out}, {number});", f"return {out};"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten's full.out: out.resize_(size) where its sizes differ (aten::resize_as_, quiet as "
                f"aten's kernel), then aten::{rule['via']} on out (proven equal on torch {_proven(rule)}).",
                "In grad mode a leaf out that requires grad raises, as in aten; an out with a grad_fn in grad mode "
                "and one that requires grad and must be resized raise an error naming the remedy."]


class ScalarFull(Factory):
    name = "scalar_full"
    prover = "prove_factory"
    factory = "scalar"

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        op = w.op.name
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        number = next(p.name for p in w.kept(v) if str(p.arg.type) == "Scalar")
        given = {"size": "torch::headeronly::IntHeaderOnlyArrayRef()", "fill_value": number, "dtype": "given"}
        args = ", ".join(given.get(p.name, p.name) for p in target.params)
        why = ("a layout other than strided (aten answers a strided tensor, full raises): pass none, or define "
               "SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each torch release)")
        return "\n".join(["if (layout.has_value() && *layout != torch::headeronly::Layout::Strided) {",
                          f'shimgen::detail::fail("{op}", "{why}");', "}",
                          "std::optional<torch::headeronly::ScalarType> given = dtype;",
                          "if (!given.has_value()) {", "given = shimgen::detail::default_dtype();", "}",
                          f"return torch::stable::{target.name}({args});"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten computes aten::{w.op.name} as empty({{}}, options).fill_(s), which is "
                f"aten::{rule['via']} "
                f"with size [] and, where dtype is None, the default dtype (proven equal on torch {_proven(rule)}).",
                "A layout other than strided raises an error (aten ignores it, full raises)."]


class FillDiagonal(Factory):
    name = "fill_diagonal"
    prover = "prove_fill_diagonal"

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """aten's fill_diagonal_: its checks and views (scalar.h fill_diagonal_views), each filled by `via`'s
        wrapper (fill_.Scalar), the views by `views`'s (as_strided): the very dispatcher calls aten's composite
        makes."""
        fill, view = (plan.wrapper_of(n) for n in (rule["via"], rule["views"]))
        assert fill is not None and view is not None
        wrap = "wrap" if "wrap" in {p.name for p in w.kept(v)} else "false"
        number = next(p.name for p in w.kept(v) if str(p.arg.type) == "Scalar")
        one = "torch::headeronly::IntHeaderOnlyArrayRef"

        def fill_view(size: str, offset: str) -> str:
            return (f"torch::stable::{fill.name}(torch::stable::{view.name}(self, {one}(&{size}, 1), "
                    f"{one}(&g.stride, 1), {offset}), {number});")
        return "\n".join([
            f'const shimgen::detail::DiagonalViews g = shimgen::detail::fill_diagonal_views("{w.op.name}", self, '
            f'{wrap});',
            fill_view("g.size", "g.offset"),
            "if (g.wrap_size >= 0) {", fill_view("g.wrap_size", "g.wrap_offset"), "}",
            "return self;"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten's fill_diagonal_ is a composite: aten::{rule['views']} views of self's diagonal (and "
                f"where it wraps, the wrapped part), each filled by aten::{rule['via']}; so is this wrapper, with the "
                f"very dispatcher calls (proven equal, gradients included, on torch {_proven(rule)})."]


class ScatterValueReduce(Factory):
    name = "scatter_value_reduce"
    prover = "prove_scatter_value_reduce"
    renames = {"value": "src"}  # via's parameters are the op's, `src` for `value`

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        args = ", ".join("src" if p.name == "src" else p.name for p in target.params)
        return "\n".join([f'const torch::stable::Tensor src = shimgen::detail::scatter_value_src("{w.op.name}", '
                          "self, index, value);", f"return torch::stable::{target.name}({args});"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} with the number as src, a 0-dim tensor of self's dtype expanded to "
                "index's shape: aten's scatter kernel with the same reduction in the same order (proven equal on "
                f"torch {_proven(rule)}; its backward raises, as aten's).",
                "A number that does not convert exactly to self's dtype, and a self not on the CPU, raise an error "
                "naming the remedy. aten warns once per process that the reduce argument with a Tensor src is "
                "deprecated, which aten's Scalar overload does not."]


class IndexAddOne(Factory):
    name = "index_add_one"
    prover = "prove_index_add"
    renames = {"source": "src"}  # via's parameters are the op's but alpha, `src` for `source`
    dropped = ("alpha",)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        op = w.op.name
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        names = {p.name for p in w.kept(v)}
        written = "&out" if "out" in names else "&self" if w.op.name.split(".")[0].endswith("_") else "nullptr"
        alpha = "alpha" if "alpha" in names else "shimgen::Scalar(int64_t(1))"
        given = {rule["expanded"]: "idx", "src": "source"}  # `expanded`: via's index, given the expanded one
        args = ", ".join(given.get(p.name, p.name) for p in target.params)
        return "\n".join([f'const torch::stable::Tensor idx = shimgen::detail::index_add_index("{op}", {written}, '
                          f"self, dim, index, source, {alpha});", f"return torch::stable::{target.name}({args});"])

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: alpha = 1 as aten::{rule['via']} with index unsqueezed around dim and expanded to source's "
                "shape (laid out contiguously): the same additions in the same order (proven equal, gradients "
                f"included, on torch {_proven(rule)}), after aten's index_add checks.",
                "Another alpha (aten computes self + alpha * source in one rounding), a half, bfloat16 or complex "
                "self (aten rounds each addition of the former its own way, multiplies the latter by alpha), a "
                "tensor not on the CPU, and a written tensor sharing "
                "memory with index raise an error naming the remedy."]


register(RangeOut(), FullOut(), ScalarFull(), FillDiagonal(), ScatterValueReduce(), IndexAddOne())
