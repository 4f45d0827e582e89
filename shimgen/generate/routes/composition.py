"""Route `composition`: an aten kernel computed as the dispatching aten calls that compute what it computes,
carrying only tensors (data/scalar_facts.yaml `kernel_compositions`). A row names the kernel (`kernel`) and its
arguments; each row is proven equal to aten on every runtime before it is used (`python -m shimgen.dev prove
kernel-compositions`: results, dtypes, errors, float64 gradients, where a gradient aten's formula gives as zeros is
one autograd never reaches). Every call is one the dispatcher sees, so autograd, autocast and Python modes see the
composition's calls instead of the op's.

Each kernel is an entry of the registry shimgen.generate.routes.kernels (one module per kernel or family: its docstring says
what the kernel computes and what it refuses): the route asks the row's entry for the variant at a release, the doc
lines and the body, and adds what every kernel shares (a row's `autocast`). The kernels: elementwise selects
(`threshold`, `leaky_relu`, `clamp`, `hardshrink`, `scatter_fill`, `softshrink`, `shrink_grad`,
`hardtanh_backward`, `elu_grad`, `add_relu`), an op as another overload's wrapper (`inplace`, `out`, `foreach`,
`wrapped_numbers`, `item_numbers`, `as_double`, `number_as_none`, `str_value`, `scalars_tensor`, `rrelu_eval`),
factories (`arange_factory`, `range_factory`, `range_out`, `full_out`, `scalar_full`, `fill_diagonal`,
`scatter_value_reduce`, `index_add_one`), numbers read or computed (`item_scalar`, `first_scalar`,
`result_type_numbers`), torch.compile's runtime checks (`assert_scalar`, `constrain_range`, ... and their
`functional_` forms), and aten composites as the same calls (`addbmm_loop`, `trapezoid_dx`,
`cumulative_trapezoid_dx`, `matrix_norm_two`, `renorm_two`, `subcmul`, `pad_packed`), and aten's own kernel
through libtorch's CPU C shim under guards (`gelu_addmm`, `cpu_kernel`), and aten's CPU loop replicated
(`cpu_activation`, `cpu_number`, `vector_norm_cpu`)."""

from __future__ import annotations

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.facts import scalar_facts as scalars
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes import kernels
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import FIRST_STABLE, Version


class Composition(Route):
    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return None  # the composition's own calls carry tensors only; variant_at reads the facts

    def returns_need(self, op: Op, table: Table) -> Version | None:
        return FIRST_STABLE if op.name in scalars.load().kernel_compositions else None

    def variant_at(self, q: Query) -> Variant | None:
        rule = scalars.load().kernel_compositions.get(q.op.name)
        if rule is None:
            return None
        return kernels.get(rule["kernel"], q.op.name).variant_at(self, q, rule)

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        rule = scalars.load().kernel_compositions[w.op.name]
        return kernels.get(rule["kernel"], w.op.name).describe(w, rule) + _autocast_doc(w, rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        rule = scalars.load().kernel_compositions[w.op.name]
        return "\n".join([*emit_cpp.autocast_first(w, v, rule.get("autocast")),
                          kernels.get(rule["kernel"], w.op.name).body(w, v, plan, rule)])


# ---- row key `autocast: <overload>` (dist.default, renorm.default): autocast's float32 policy (CUDA's lists aten::dist
# and aten::renorm) computes the op from its inputs cast to float32, where the composition's calls would compute in
# float16 / bfloat16; where a probe of <overload> (aten::pow.Tensor_Tensor, of the same list, on empty 0x0 tensors of
# the first input's dtype and device: scalar.h autocast_dtype) says autocast would change the dtype, the wrapper
# first casts the inputs as autocast casts them (autocast_cast), then calls itself ----

def _autocast_doc(w: Wrapper, rule: dict) -> list[str]:
    if not rule.get("autocast"):
        return []
    return [f"Where autocast would compute aten::{rule['autocast']} in another dtype (float16 and bfloat16 tensors "
            f"under CUDA's autocast, which computes aten::{w.op.name} in float32 from its inputs cast), the inputs "
            "are first cast as autocast casts them (shimgen::detail::autocast_cast)."]


ROUTE_CLASS = Composition
