"""Kernel `scalars_tensor` (addcmul, addcdiv and their in-place forms -> via `_foreach_addcmul.Tensor`, ...): the op as
its _foreach_ sibling's `.Tensor` overload on one-element lists, the number as a 1-D tensor of its own type
(scalar.h scalars_tensor), which aten's CPU kernel reads back as the very Scalar and hands to the op itself
(convert_tensor_to_scalar_list, then aten::X on each element): aten's own kernel computes every value, fused
multiply-add included. The dispatcher carries Tensor[] from 2.10. A call autograd records (that overload has no
derivative) and a tensor not on the CPU (other backends take a fused foreach path) are refused
(scalar.h check_scalars_route)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.dispatcher import Dispatcher
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import proven


class ScalarsTensor(Kernel):
    name = "scalars_tensor"
    prover = "prove_scalars_tensor"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes all of its own with libtorch alone at q.level (its
        Tensor[] through the dispatcher: 2.10 on), each bound to one of the op's (`args`: via's -> the op's)."""
        target = q.plan.wrapper_of(rule["via"])
        tv = target.active(q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        if set(rule["args"]) != {p.name for p in target.params}:  # type: ignore[union-attr]
            return None
        if set(rule["args"].values()) != {p.name for p in q.params} or any(p.is_out for p in q.params):
            return None
        if not isinstance(tv.route, Dispatcher):  # the body calls the dispatcher itself (see body)
            return None
        # no lowering: via's header holds the _foreach_ op's other overloads, which may call this wrapper
        return Variant(route, len(q.params), q.level)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: aten::{rule['via']} on one-element lists, the number as a 1-D tensor of its own type, which "
                f"aten's CPU kernel reads back as the very number and hands to aten::{w.op.name.split('.')[0]} itself "
                f"(aten computes every value; proven equal on torch {proven(rule)}).",
                "A call autograd records (an input requiring grad in grad mode: that overload has no derivative), a "
                "tensor not on the CPU, and an unsigned number above int64's range raise an error: define "
                "SHIMGEN_OVERLAY and link libshimgen_overlay for those."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        """The route's refusals (scalar.h check_scalars_route), the number as a packed 1-D tensor of its own type
        (scalars_tensor), then `via` through the boxed dispatcher, as its own wrapper calls it, with each tensor as a
        one-element list: its one result, or self for an in-place `via` (which returns nothing). The dispatcher is
        called here rather than via's wrapper: via's header also holds the _foreach_ op's Scalar overloads, whose
        composition (kernel `foreach`) calls this wrapper."""
        target = plan.wrapper_of(rule["via"])
        assert target is not None
        op = w.op.name
        kept = w.kept(v)
        tensors = [p.name for p in kept if str(p.arg.type) == "Tensor"]
        numbers = [p.name for p in kept if str(p.arg.type) == "Scalar"]
        lines = [f'shimgen::detail::check_scalars_route("{op}", {{{", ".join("&" + t for t in tensors)}}});']
        lines += [f'const torch::stable::Tensor {n}_t = shimgen::detail::scalars_tensor("{op}", "{n}", {n});'
                  for n in numbers]
        args = []
        for p in target.op.schema.arguments.flat_all:  # the boxed stack: the schema's order
            mine = rule["args"][p.name]
            if mine in numbers:
                args.append(f"{mine}_t")
            elif str(p.type).startswith("Tensor") and str(p.type).endswith("[]"):
                args.append(f"List({mine})")
            else:
                args.append(mine)
        name, overload = target.op.aten_name, target.op.overload
        lines.append("using List = torch::headeronly::HeaderOnlyArrayRef<torch::stable::Tensor>;")
        n = max(len(args), 1)
        if target.returns == "void":
            lines += [f'shimgen::detail::dispatch<void, {n}>("{name}", "{overload}", {", ".join(args)});',
                      "return self;"]
        else:
            lines += [f"using Result = {target.returns};",
                      f'Result result = shimgen::detail::dispatch<Result, {n}>("{name}", "{overload}", '
                      f'{", ".join(args)});',
                      "return result[0];"]
        return "\n".join(lines)


register(ScalarsTensor())
