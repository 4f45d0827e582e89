"""Route `composition`: an aten kernel computed as the dispatching aten calls that compute what it computes,
carrying only tensors (data/scalar_facts.yaml `kernel_compositions`: `threshold_backward` is aten's threshold
kernel, `self <= threshold ? 0 : grad_output` over the common dtype, which shimgen::detail::threshold_select
computes with aten::le.Tensor, aten::where.self and aten::_to_copy). A row names the kernel and its
arguments in the order of its parameters: the overload's arguments, or numbers; each row is proven equal to aten on every runtime before it is
used (`python -m shimgen.provers.scalars kernel-compositions`: results, dtypes, errors, float64 gradients, where
a gradient aten's formula gives as zeros is one autograd never reaches). Every call is one the dispatcher sees, so
autograd, autocast and Python modes see the composition's calls instead of the op's.

The numbers become 0-dim tensors of the dtype aten computes them in; one out of that dtype's range (where aten
raises) is refused with a `shimgen:` error, never computed.

Kernels `clamp` (hardtanh), `hardshrink` and `scatter_fill` (scatter.value) are kernels of the same kind (scalar.h
clamp_select, hardshrink_select, scatter_fill_select); kernel `wrapped_numbers` (where.Scalar, searchsorted.Scalar, bucketize.Scalar) is how aten itself
computes those: the numbers wrapped as 0-dim tensors (promoting as wrapped numbers: a double as the default dtype),
then the Tensor overload `via` (its wrapper at the release, with the parameters it takes there); kernel
`item_numbers` (linspace, logspace): `via` takes each number back with .item(), so a 0-dim tensor of its own type;
kernel `as_double` (constant_pad_nd -> pad with mode "constant"): `via` computes the op with its `float?` as the
number, which the double carries where scalar.h's exact_double says so.

Kernel `inplace` (`add_.Tensor` -> via `add.Tensor`): the in-place op as its functional overload's wrapper (where
that has a libtorch route with every parameter at the release) and aten::copy_ into self, under aten's in-place rules
(shimgen::detail::assign_inplace: the result dtype must cast to self's; self sharing memory with an input other than
as the very same view is refused, since aten computes it element by element in place). A row with `saves_self: true`
(mul_, threshold_: the functional's backward reads self) computes from a clone of self where autograd records the
call (grad mode, and an input requiring grad: shimgen::detail::saved_self), so what the backward saves is not the
tensor copy_ overwrites; the prover finds a row that needs it and lacks it (autograd's "modified by an inplace
operation").

Kernel `out` (`add.out` -> via `add.Tensor`): an out= overload as its functional overload's wrapper (where that has a
libtorch route with every parameter at the release) under aten's out= rules (shimgen::detail::check_out_autograd
and assign_out): in grad mode no argument, out included, may require grad; the result dtype must cast to out's
(`same_dtype: true`: must be out's, as aten's unary ops check); out overlapping an input other than as the very
same view, or resized while it overlaps one, or writing an element twice, is refused; a resized out gets the
result's strides (aten's structured kernels restride it: a channels_last input gives a channels_last out), and
aten's warning on resizing a non-empty out.

Kernels `arange_factory` and `range_factory` (arange.default/.start/.start_step, range.default/.step): aten's range factories as
aten::cumsum of [start, step, step, ...] in int64 or float64 and aten::_to_copy to the dtype (scalar.h range_select),
decided per number: aten's dtype rule, checks and size mirrored where releases agree, a floating range served only
where every element is exact in the dtype and in aten's arithmetic; otherwise a `shimgen:` refusal.

Kernel `number_as_none` (linalg_vector_norm.default -> via linalg_norm.default): for the one value `value` of its
number `argument`, the op is `via` with that number as via's `Scalar?` None (`none`), which the dispatcher carries
(linalg_norm with ord None computes linalg_vector_norm with ord 2); another value, or a list argument of a length
`via` refuses (`lengths`), raises a `shimgen:` error naming the remedy. `fixed` gives via's other parameters a value
of their own (norm.Scalar is norm.ScalarOpt_dim with dim [] and keepdim false, as aten calls it); `operand` names a
wrapper whose result stands in for one of via's arguments (dist(a, b, p) is aten's norm(a - b, p): sub.Tensor
first, `as` the name the row's `args` bind).

Kernels `softshrink`, `shrink_grad` (hardshrink_backward, softshrink_backward: aten's shrink_backward) and
`hardtanh_backward` are elementwise kernels of the same kind (scalar.h softshrink_select, shrink_grad_select,
hardtanh_backward_select).
softshrink subtracts: its row names `via` (sub.Tensor), whose wrapper the kernel calls, so it routes where that
wrapper has a libtorch route. The backward kernels refuse a NaN self (aten's answer there depends on the element's
position in its vectorized loop). A wrapped_numbers row's `refuse_kinds` (isin.Tensor_Scalar: bool, complex) are
the kinds of number aten raises for before wrapping them.

Kernel `scalars_tensor` (addcmul, addcdiv and their in-place forms -> via `_foreach_addcmul.Tensor`, ...): the op as
its _foreach_ sibling's `.Tensor` overload on one-element lists, the number as a 1-D tensor of its own type
(scalar.h scalars_tensor), which aten's CPU kernel reads back as the very Scalar and hands to the op itself
(convert_tensor_to_scalar_list, then aten::X on each element): aten's own kernel computes every value, fused
multiply-add included. The dispatcher carries Tensor[] from 2.10. A call autograd records (that overload has no
derivative) and a tensor not on the CPU (other backends take a fused foreach path) are refused
(scalar.h check_scalars_route).

Kernel `item_scalar` (item.default): no dispatcher returns a Scalar, so the wrapper calls libtorch's shim.h
function aoti_torch_item_<dtype> of self's dtype (exported from 2.9; each calls Tensor::item(), which dispatches)
and gives the number the kind aten's Scalar has (scalar.h item_scalar_select); complex128 has no such shim and is
refused. The prover calls the same functions through ctypes. `_local_scalar_dense` is no such row: it reads the
first element of a tensor of any size, where item raises (the prover found it); its row is kernel `first_scalar`,
item_scalar of aten::select.int(aten::flatten.using_ints(self), 0, 0).

Kernel `result_type_numbers` (result_type.Scalar_Tensor, result_type.Scalar_Scalar): no dispatcher carries their
numbers, and the answer is ATen's result_type with the numbers as wrapped numbers, which scalar.h's
wrapped_numbers_dtype computes from the promotion table and libtorch's default dtype (no aten call but that one);
a complex number with a bfloat16 tensor is refused: aten's answer changed in 2.14 (ComplexFloat before, the
enumerator 46 after), which the prover found.

Kernels `assert_scalar`, `constrain_range`, `constrain_range_for_size` and their `functional_` forms
(_assert_scalar, sym_constrain_range, sym_constrain_range_for_size, _functional_*): torch.compile's runtime checks,
called eagerly with a concrete number: aten's checks in its order and words (scalar.h), no aten call but the
dependency token's clone; a size that is not an integer or a bool is refused."""

from __future__ import annotations

from shimgen.generate.emit import cpp as emit_cpp
from shimgen.facts import scalar_facts as scalars
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.dispatcher import Dispatcher
from shimgen.generate.signatures.cpp import active, target_wrapper
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import FIRST_STABLE, Version

CARRIED = {"Tensor", "Scalar", "bool", "int"}
LISTS = {"Tensor[]", "Scalar[]"}
FOREACH = "foreach"  # a _foreach_ op: aten's CPU kernel (its slow path), `via` on each element in order
INPLACE = "inplace"  # the kernel of an in-place op: its functional overload, then copy_ (scalar.h assign_inplace)
WRAPPED = "wrapped_numbers"  # an op aten computes as its Tensor overload `via` with its numbers as wrapped tensors
AS_DOUBLE = "as_double"  # an op equal to `via` with its number as via's `float?` (scalar.h exact_double)
ITEMS = "item_numbers"  # an op whose Tensor overload `via` takes each number back with .item(): a 0-dim tensor of it
OUT = "out"  # the kernel of an out= op: its functional overload, then aten's out= rules (scalar.h assign_out)
RANGES = ("arange_factory", "range_factory")  # aten's range factories as cumsum of [start, step, ...] (scalar.h range_select)
NONE = "number_as_none"  # for one value of its number, the op is `via` with that number as via's `Scalar?` None
SCALARS = "scalars_tensor"  # the op as its _foreach_ sibling's `.Tensor` overload `via` on one-element lists
ITEM = "item_scalar"  # item: libtorch's aoti_torch_item_<dtype> of self's dtype (shim.h), the number of that kind
FIRST = "first_scalar"  # _local_scalar_dense: item_scalar of the element at (0, ..., 0) (flatten, select)
RESULT_TYPE = "result_type_numbers"  # result_type with numbers first: ATen's result_type from shimgen's promotion table
# torch.compile's runtime checks called eagerly (_assert_scalar, sym_constrain_range, ...): aten's checks in C++
ADDBMM = "addbmm_loop"  # aten's CPU addbmm: a loop of addmm_, each the legacy addmm_out shim (scalar.h addbmm_loop)
LISTS_CROSS = Version(2, 10)  # the first release whose dispatcher carries an int[] (expand's size)
CHECKS = ("assert_scalar", "functional_assert_scalar", "constrain_range", "constrain_range_for_size",
          "functional_constrain_range", "functional_constrain_range_for_size")


class Composition(Route):
    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return None  # the composition's own calls carry tensors only; variant_at reads the facts

    def returns_need(self, op: Op, table: Table) -> Version | None:
        return FIRST_STABLE if op.name in scalars.load().kernel_compositions else None

    def variant_at(self, q: Query) -> Variant | None:
        rule = scalars.load().kernel_compositions.get(q.op.name)
        if rule is not None and rule["kernel"] == FOREACH:
            return self._foreach_at(q, rule)
        if rule is not None and rule["kernel"] in (WRAPPED, ITEMS, AS_DOUBLE):
            return self._wrapped_at(q, rule)
        if rule is not None and rule["kernel"] == OUT:
            return self._out_at(q, rule)
        if rule is not None and rule["kernel"] in RANGES:
            return self._range_at(q)
        if rule is not None and rule["kernel"] == NONE:
            return self._none_at(q, rule)
        if rule is not None and rule["kernel"] == SCALARS:
            return self._scalars_at(q, rule)
        if rule is not None and rule["kernel"] == RRELU:  # (section at the end)
            return _rrelu_at(self, q, rule)
        if rule is not None and rule["kernel"] in TRAPEZOID:  # (section at the end)
            return _trapezoid_at(self, q, rule)
        if rule is not None and rule["kernel"] == MATRIX_NORM:  # (section at the end)
            return _calls_at(self, q, rule, MATRIX_NORM_PASSED)
        if rule is not None and rule["kernel"] == RENORM:  # (section at the end)
            return _calls_at(self, q, rule, RENORM_PASSED)
        if rule is not None and rule["kernel"] == SUBCMUL:  # (section at the end)
            return _calls_at(self, q, rule, SUBCMUL_PASSED)
        if rule is not None and rule["kernel"] == PAD_PACKED:  # (section at the end)
            return _pad_packed_at(self, q, rule)
        if rule is not None and rule["kernel"] in FACTORY_OUTS:  # (section at the end)
            return _factory_at(self, q, rule)
        if rule is not None and rule["kernel"] == ADDBMM:
            return _addbmm_at(self, q, rule)
        if rule is not None and rule["kernel"] in CHECKS:  # no dispatcher call: every type the headers have
            if any(p.row.since is None or p.row.since > q.level for p in q.params):
                return None
            return Variant(self, len(q.params), q.level)
        if rule is None or any(str(p.arg.type) not in CARRIED or p.is_out for p in q.params):
            return None
        if rule["kernel"] != INPLACE and "via" in rule:  # softshrink: where `via` (sub.Tensor) has a libtorch route
            target = target_wrapper(rule["via"], q.plan)
            tv = active(target, q.level) if target is not None else None
            if tv is None or tv.route.overlay or tv.kept < 2:
                return None
            if {b for b in rule["args"] if isinstance(b, str)} != {p.name for p in q.params}:
                return None
            return Variant(self, len(q.params), q.level, lowering=(rule["via"],))
        if rule["kernel"] == INPLACE:
            # the functional overload's wrapper, with every parameter and libtorch alone at this release
            target = target_wrapper(rule["via"], q.plan)
            tv = active(target, q.level) if target is not None else None
            if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
                return None
            if [p.name for p in q.params] != [p.name for p in target.params]:  # type: ignore[union-attr]
                return None
            return Variant(self, len(q.params), q.level, lowering=(rule["via"],))
        bound = {b for b in rule["args"] if isinstance(b, str)}
        if rule["kernel"] != INPLACE and any(str(p.arg.type) == "bool" and p.name not in bound for p in q.params):
            return None
        if bound != {p.name for p in q.params}:
            return None
        return Variant(self, len(q.params), q.level)

    def _foreach_at(self, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes the ones it is given with libtorch alone at q.level."""
        target = target_wrapper(rule["via"], q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay:
            return None
        theirs = [p.name for p in target.kept(tv)]  # type: ignore[union-attr]
        if not set(rule["args"]) <= set(theirs) or {p.name for p in q.params} != set(rule["args"].values()):
            return None
        if any(str(p.arg.type).rstrip("?") not in CARRIED | LISTS for p in q.params):
            return None
        return Variant(self, len(q.params), q.level, lowering=(rule["via"],))

    def _wrapped_at(self, q: Query, rule: dict) -> Variant | None:
        """The leading parameters `via`'s wrapper takes with libtorch alone at q.level (each op argument bound to
        one of its parameters), every parameter without a default among them."""
        target = target_wrapper(rule["via"], q.plan)
        tv = active(target, q.level) if target is not None else None
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
        return Variant(self, kept, q.level, lowering=(rule["via"],))

    def _out_at(self, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes the others, in the same order, with libtorch alone at
        q.level, and the overload has one Tensor out=."""
        if sum(p.is_out for p in q.params) != 1 or any(str(p.arg.type) != "Tensor" for p in q.params if p.is_out):
            return None
        target = target_wrapper(rule["via"], q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        if [p.name for p in q.params if not p.is_out] != [p.name for p in target.params]:  # type: ignore[union-attr]
            return None
        return Variant(self, len(q.params), q.level, lowering=(rule["via"],))

    def _range_at(self, q: Query) -> Variant | None:
        """The numbers, and each option (dtype, layout, device, pin_memory) whose C++ type the release's stable
        headers carry at q.level (the table's `since`: a Device from 2.10); an option left out gets its default."""
        kept = 0
        for p in q.params:
            if p.is_out or not (str(p.arg.type) == "Scalar" or (p.row.since is not None and p.row.since <= q.level)):
                break
            kept += 1
        if any(p.default is None for p in q.params[kept:]):
            return None
        return Variant(self, kept, q.level)

    def _none_at(self, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes all of its own with libtorch alone at q.level: the op's
        arguments bound to them (`args`) and the number (`argument`), which `via` gets as None (`none`)."""
        target = target_wrapper(rule["via"], q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        operand = rule.get("operand")  # dist: via's operand is `operand`'s wrapper on the op's tensors
        mine = set(rule["args"].values()) | set(operand["args"] if operand else ())
        if mine - {operand["as"] if operand else None} | {rule["argument"]} != {p.name for p in q.params}:
            return None
        if set(rule["args"]) | {rule["none"]} | set(rule.get("fixed", {})) != {
                p.name for p in target.params}:  # type: ignore[union-attr]
            return None
        if operand:
            first = target_wrapper(operand["via"], q.plan)
            fv = active(first, q.level) if first is not None else None
            if fv is None or fv.route.overlay or fv.kept < len(operand["args"]):
                return None
            return Variant(self, len(q.params), q.level, lowering=(rule["via"], operand["via"]))
        return Variant(self, len(q.params), q.level, lowering=(rule["via"],))

    def _scalars_at(self, q: Query, rule: dict) -> Variant | None:
        """Every parameter, where `via`'s wrapper takes all of its own with libtorch alone at q.level (its
        Tensor[] through the dispatcher: 2.10 on), each bound to one of the op's (`args`: via's -> the op's)."""
        target = target_wrapper(rule["via"], q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
        if set(rule["args"]) != {p.name for p in target.params}:  # type: ignore[union-attr]
            return None
        if set(rule["args"].values()) != {p.name for p in q.params} or any(p.is_out for p in q.params):
            return None
        if not isinstance(tv.route, Dispatcher):  # the body calls the dispatcher itself (see _scalars_body)
            return None
        # no lowering: via's header holds the _foreach_ op's other overloads, which may call this wrapper
        return Variant(self, len(q.params), q.level)

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        return self._kernel_describe(w, v) + _autocast_doc(w, scalars.load().kernel_compositions[w.op.name])

    def _kernel_describe(self, w: Wrapper, v: Variant) -> list[str]:
        rule = scalars.load().kernel_compositions[w.op.name]
        if rule["kernel"] == ITEM:
            return [f"Route: libtorch's C shim aoti_torch_item_<dtype> of self's dtype (shim.h; it calls "
                    "Tensor::item(), a dispatching call), the number with the kind aten's Scalar has for that dtype "
                    f"(shimgen::detail::item_scalar_select; proven equal on torch {', '.join(rule['proven'])}).",
                    "A complex128 (or float8, ...) tensor raises an error: libtorch has no item shim for it."]
        if rule["kernel"] == ADDBMM:
            return ["Route: aten's CPU addbmm, which is a loop of addmm_ (LinearAlgebra.cpp addbmm_impl_): the same "
                    "calls in the same order, each addmm_ as libtorch's legacy C shim aoti_torch_addmm_out with out "
                    "and self the result (shimgen::detail::addbmm_loop; proven equal on torch "
                    f"{', '.join(rule['proven'])}).",
                    "A tensor not on the CPU (CUDA computes one gemm), a call autograd records (aten's derivative "
                    "is addbmm's own), numbers the legacy shim's float does not carry and, in place, a self "
                    "without the product's shape raise an error naming the remedy."]
        if rule["kernel"] in CHECKS:
            token = " and returns a clone of dep_token (aten::clone)" if "functional" in rule["kernel"] else ""
            return [f"Route: aten's checks of this torch.compile runtime check, in its order and words, on the "
                    f"concrete number{token} (shimgen::detail::{rule['kernel']}_select; proven equal on torch "
                    f"{', '.join(rule['proven'])})."] + (
                        ["A size that is not an integer or a bool raises an error (aten converts it with checks "
                         "of its own)."] if "constrain" in rule["kernel"] else [])
        if rule["kernel"] == RESULT_TYPE:
            return ["Route: ATen's result_type over the arguments, the numbers as wrapped numbers (a floating-point "
                    "one as libtorch's default dtype), computed from shimgen's promotion table (the measured "
                    "torch.promote_types; shimgen::detail::result_type_numbers_select; proven equal on torch "
                    f"{', '.join(rule['proven'])})."] + (
                        ["A complex number with a bfloat16 tensor raises an error: aten's answer changed in 2.14."]
                        if any(str(p.arg.type) == "Tensor" for p in w.params) else [])
        if rule["kernel"] == FIRST:
            return [f"Route: the element at index (0, ..., 0), which aten reads from a tensor of any size, as "
                    "aten::select.int of aten::flatten.using_ints, then libtorch's C shim aoti_torch_item_<dtype> "
                    "of its dtype (shimgen::detail::first_scalar_select; proven equal on torch "
                    f"{', '.join(rule['proven'])}).",
                    "A complex128 (or float8, ...) tensor raises an error: libtorch has no item shim for it."]
        if rule["kernel"] == ELU_GRAD:  # (section at the end)
            return _elu_grad_doc(rule)
        if rule["kernel"] == ADD_RELU:  # (section at the end)
            return _add_relu_doc(rule)
        if rule["kernel"] == SCALARS:
            return _scalars_describe(w, rule)
        if rule["kernel"] == MATRIX_NORM:
            return _matrix_norm_doc(rule)
        if rule["kernel"] == RENORM:
            return _renorm_doc(rule)
        if rule["kernel"] == RRELU:
            return _rrelu_doc(rule)
        if rule["kernel"] in TRAPEZOID:
            return _trapezoid_doc(w, rule)
        if rule["kernel"] == SUBCMUL:
            return _subcmul_doc(rule)
        if rule["kernel"] == PAD_PACKED:
            return _pad_packed_doc(rule)
        if rule["kernel"] in FACTORY_OUTS:
            return _factory_doc(w, rule)
        if rule["kernel"] == NONE:
            return [f"Route: {rule['argument']} = {rule['value']} as aten::{rule['via']} with {rule['none']} None, "
                    f"which computes aten::{w.op.name} with {rule['value']} (proven equal, gradients included, on "
                    f"torch {', '.join(map(str, rule['proven']))}).",
                    f"Another {rule['argument']} raises an error: no libtorch route carries it."]
        if rule["kernel"] in RANGES:
            return [f"Route: aten's {w.op.name.split('.')[0]} kernel as aten::cumsum of [start, step, step, ...] in int64 or "
                    "float64, then aten::_to_copy to the dtype (shimgen::detail::range_select; aten's dtype rule, "
                    f"checks and size mirrored; proven equal on torch {', '.join(map(str, rule['proven']))}).",
                    "A floating range is served where every element is exact in the dtype (integers, power-of-two "
                    "steps such as 0.25): aten's vectorized kernel rounds others its own way, so 0.1 steps raise an "
                    "error, as do a layout other than strided and pin_memory=true."]
        if rule["kernel"] == AS_DOUBLE:
            return [f"Route: aten::{rule['via']}, which computes aten::{w.op.name} with its `float?` as the number "
                    f"(proven equal, gradients included, on torch {', '.join(map(str, rule['proven']))}).",
                    "A number no double holds exactly raises an error (shimgen::Scalar)."]
        if rule["kernel"] == ITEMS:
            return [f"Route: aten::{rule['via']} with the numbers as 0-dim tensors of their own type (float64, "
                    f"int64, bool, complex128), which it reads back exactly with .item(), as aten::{w.op.name} "
                    f"(proven equal on torch {', '.join(map(str, rule['proven']))}): aten's own kernel on any device."] + (
                        ["An out on the meta device raises an error naming the remedy (aten's meta kernel of "
                         f"aten::{rule['via']} refuses CPU numbers)."] if any(p.is_out for p in w.params) else [])
        if rule["kernel"] == WRAPPED:
            return [f"Route: aten::{rule['via']} with the numbers as 0-dim tensors of the dtype aten gives them as "
                    f"wrapped numbers, as aten computes aten::{w.op.name} (proven equal on torch "
                    f"{', '.join(map(str, rule['proven']))}).",
                    "A number out of the range of that dtype raises an error (shimgen::Scalar)."] + (
                        [f"A {' or '.join(rule['refuse_kinds'])} number raises an error, as in aten, which checks "
                         "the number's own type before wrapping it."] if rule.get("refuse_kinds") else []) + (
                        [f"Proven with finite numbers up to {rule['number_limit']} in magnitude: aten's kernel loops "
                         "n times per element, so larger ones were not run (the wrapper converts them as it does "
                         "the others)."] if rule.get("number_limit") else []) + _unwrapped_doc(rule)
        if rule["kernel"] == OUT and rule.get("composite"):
            return _composite_out_doc(rule)
        if rule["kernel"] == OUT:
            grad = ("refuse_recorded_out and assign_out:" if rule.get("no_derivative") else
                    "check_out_autograd and assign_out: in grad mode no argument may require grad;")
            return [f"Route: aten::{rule['via']}, then aten's out= rules (shimgen::detail::{grad} the result dtype "
                    "must cast to out's; a "
                    "resized out gets the result's strides), written into out by aten::copy_ (aten::where.self_out "
                    "where out is resized: TensorIterator's resize and warning) (proven equal on "
                    f"torch {', '.join(map(str, rule['proven']))}).",
                    "Where out shares memory with an input other than as the very same view, or is resized while "
                    "it shares memory with one, it raises an error (aten computes such a call element by element)."
                    ] + _cast_refusal_doc(rule, "out") + (
                        ["aten has no derivative for it: where autograd would record the call (grad mode, an argument "
                         "requiring grad) it raises an error naming the remedy (aten computes it and leaves out "
                         "requiring grad)."] if rule.get("no_derivative") else []) + (
                        ["As aten's meta does, out is first resized to [0] (aten's warning where it had elements), "
                         "then to the result's sizes (shimgen::detail::empty_out_first)."]
                        if rule.get("empty_first") else [])
        if rule["kernel"] == FOREACH:
            return [f"Route: aten::{rule['via']} on each element in order, as aten's CPU kernel for "
                    f"aten::{w.op.name} does (proven equal, gradients included, on torch "
                    f"{', '.join(map(str, rule['proven']))})."] + _backward_refusal_doc(rule)
        if rule["kernel"] == INPLACE:
            saved = (" (on a clone of self where autograd records the call: its backward saves self)"
                     if rule.get("saves_self") else "")
            grads = "where autograd does not record it" if rule.get("autograd") == "refused" else "gradients included"
            return [f"Route: aten::{rule['via']} out of place{saved}, then aten::copy_ into self, with aten's in-place "
                    "rules "
                    f"(shimgen::detail::assign_inplace; proven equal, {grads}, on torch "
                    f"{', '.join(map(str, rule['proven']))}).",
                    "Where self shares memory with an input other than as the very same view, it raises an error "
                    "(aten computes such a call element by element in place)."] + _backward_refusal_doc(rule) + (
                        _inplace_doc(rule)) + _cast_refusal_doc(rule, "self")
        if "via" in rule:  # softshrink: its subtractions by `via`'s wrapper
            return [f"Route: aten's {rule['kernel']} kernel as the dispatching aten calls that compute it, its "
                    f"subtractions by aten::{rule['via']} (shimgen::detail::{rule['kernel']}_select; proven equal, "
                    f"gradients included, on torch {', '.join(map(str, rule['proven']))}).",
                    "A number out of the range of the dtype aten computes it in raises an error (shimgen::Scalar)."] + (
                        [rule["caveat"]] if "caveat" in rule else [])
        return [f"Route: aten's {rule['kernel']} kernel as the dispatching aten calls that compute it "
                f"(shimgen::detail::{rule['kernel']}_select; proven equal, gradients included, on torch "
                f"{', '.join(map(str, rule['proven']))}).",
                "A number out of the range of the dtype aten computes it in raises an error (shimgen::Scalar)."] + (
                    [rule["caveat"]] if "caveat" in rule else [])  # what the proof leaves out, and why

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        rule = scalars.load().kernel_compositions[w.op.name]
        return "\n".join([*emit_cpp.autocast_first(w, v, rule.get("autocast")), self._kernel_body(w, v, plan)])

    def _kernel_body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        if scalars.load().kernel_compositions[w.op.name]["kernel"] == ADDBMM:
            return _addbmm_body(w, plan, scalars.load().kernel_compositions[w.op.name])
        rule = scalars.load().kernel_compositions[w.op.name]
        if rule["kernel"] == ELU_GRAD:  # (section at the end)
            return _elu_grad_body(w, plan, rule)
        if rule["kernel"] == ADD_RELU:  # (section at the end)
            return _add_relu_body(w, plan, rule)
        if rule["kernel"] == RRELU:
            return _rrelu_body(w, v, plan, rule)
        if rule["kernel"] in TRAPEZOID:
            return _trapezoid_body(w, plan, rule)
        if rule["kernel"] == SUBCMUL:
            return _subcmul_body(w, plan, rule)
        if rule["kernel"] == MATRIX_NORM:
            return _matrix_norm_body(w, plan, rule)
        if rule["kernel"] == RENORM:
            return _renorm_body(w, plan, rule)
        if rule["kernel"] == PAD_PACKED:
            return _pad_packed_body(w, plan, rule)
        if rule["kernel"] in FACTORY_OUTS:
            return _factory_body(w, v, plan, rule)
        if rule["kernel"] == SCALARS:
            return _scalars_body(w, v, plan, rule)
        if rule["kernel"] in RANGES:
            return _range_body(w, v, rule)
        if rule["kernel"] == NONE:
            return _none_body(w, v, plan, rule)
        if rule["kernel"] == FOREACH:
            return _foreach_body(w, v, plan, rule)
        if rule["kernel"] in (WRAPPED, ITEMS, AS_DOUBLE):
            return _wrapped_body(w, v, plan, rule)
        if rule["kernel"] == INPLACE:
            target = target_wrapper(rule["via"], plan)
            assert target is not None
            inputs = ", ".join(f"&{p.name}" for p in w.kept(v) if str(p.arg.type) == "Tensor" and p.name != "self")
            # `saves_self: true`: the functional's backward reads self (mul_, threshold_), which copy_ overwrites
            saved = f"shimgen::detail::saved_self(self, {{{inputs}}})" if rule.get("saves_self") else "self"
            args = ", ".join(saved if p.name == "self" else p.name for p in w.kept(v))
            return "\n".join([
                *_leaf_check(rule),
                f"torch::stable::Tensor result = torch::stable::{target.name}({args});",
                *_backward_refusal(w, rule),
                *_alias_refusal(w, rule, inputs),
                *_cast_refusal(w, rule, "self"),
                f'return shimgen::detail::assign_inplace("{w.op.name}", self, result, {{{inputs}}});'])
        if rule["kernel"] == OUT:
            return _out_body(w, v, plan, rule)
        # the kernel's parameters in order (scalar.h): argument names, numbers, C++ bool literals
        args = [("true" if a else "false") if isinstance(a, bool) else str(a) for a in rule["args"]]
        if "via" in rule:  # softshrink: its operands, its two subtractions by `via`'s wrapper (sub.Tensor), the select
            target = target_wrapper(rule["via"], plan)
            assert target is not None
            sub = f"torch::stable::{target.name}"
            return "\n".join([
                f'const auto s = shimgen::detail::{rule["kernel"]}_operands("{w.op.name}", {", ".join(args)});',
                f'return shimgen::detail::{rule["kernel"]}_select(s, {sub}(s.x, s.hi), {sub}(s.x, s.lo));'])
        return f'return shimgen::detail::{rule["kernel"]}_select("{w.op.name}", {", ".join(args)});'


def _out_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """aten's autograd check, `via`'s wrapper out of place, then aten's out= rules into out."""
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    out = next(p.name for p in w.kept(v) if p.is_out)
    inputs = [p.name for p in w.kept(v) if str(p.arg.type) == "Tensor" and not p.is_out]
    same = "true" if rule.get("same_dtype") else "false"
    args = ", ".join(p.name for p in target.params)
    if rule.get("composite"):  # (section at the end)
        return _composite_out_body(w, target.name, out, inputs, args)
    check = "refuse_recorded_out" if rule.get("no_derivative") else "check_out_autograd"
    return "\n".join([
        f'shimgen::detail::{check}("{w.op.name}", {{{", ".join(f"&{n}" for n in [out, *inputs])}}});',
        f"torch::stable::Tensor result = torch::stable::{target.name}({args});",
        *_cast_refusal(w, rule, out),
        *([f'shimgen::detail::empty_out_first("{w.op.name}", {out}, result);'] if rule.get("empty_first") else []),
        f'shimgen::detail::assign_out("{w.op.name}", {out}, result, {{{", ".join(f"&{n}" for n in inputs)}}}, {same});',
        f"return {out};"])


def _foreach_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """aten's checks (a non-empty list, lists of one length), then `via`'s wrapper on each element in order."""
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    lists = {p.name for p in w.kept(v) if str(p.arg.type).rstrip("?") in LISTS}
    by_via = {va: fa for va, fa in rule["args"].items()}
    last = max(i for i, p in enumerate(target.params) if p.name in by_via)
    args = [f"{by_via[p.name]}[i]" if by_via[p.name] in lists else by_via[p.name] for p in target.params[: last + 1]]
    lines = [f'if (self.size() == 0) {{\nshimgen::detail::fail("{w.op.name}", "Tensor list must have at least one '
             'tensor (aten raises)");\n}']
    for p in w.kept(v):  # a Tensor beside the lists stands for a number: aten requires it 0-dim
        if str(p.arg.type) == "Tensor":
            lines.append(f'if ({p.name}.dim() != 0) {{\nshimgen::detail::fail("{w.op.name}", "`{p.name}` must be a '
                         '0-dim tensor (aten raises)");\n}')
    for name in sorted(lists - {"self"}):
        lines.append(f'if ({name}.size() != self.size()) {{\nshimgen::detail::fail("{w.op.name}", "`{name}` must '
                     f'have as many elements as `self` (aten raises)");\n}}')
    lines += _backward_refusal(w, rule)
    lines.append(f"for (size_t i = 0; i < self.size(); ++i) {{\n{target.name}({', '.join(args)});\n}}")
    return "\n".join(lines)


def _wrapped_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """WRAPPED: the numbers as 0-dim tensors of their wrapped dtype among the tensors `promote` names, on the device
    of the op's first tensor (aten's scalar_to_tensor); ITEMS: of their own type. Then `via`'s wrapper."""
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    kept = w.kept(v)
    numbers = [p.name for p in kept if str(p.arg.type) == "Scalar"]
    if rule["kernel"] == ITEMS:  # .item() gives each back as the caller wrote it
        lines = [f"const torch::stable::Tensor {n}_t = shimgen::detail::number_tensor({n}, "
                 f"shimgen::detail::natural_type({n}));" for n in numbers]
        # no CPU gate: `via` reads the numbers on the host (.item()) and runs aten's own Scalar kernel on out's
        # device, so what is proven on the CPU is aten's call on any device (meta aside: a Python reference there)
        lines = [f'shimgen::detail::refuse_meta_out("{w.op.name}", {p.name});' for p in kept if p.is_out] + lines
    elif rule["kernel"] == AS_DOUBLE:
        self_ = next(p.name for p in w.params if str(p.arg.type) == "Tensor")
        lines = [f'const double {n}_t = shimgen::detail::exact_double("{w.op.name}", "{n}", {n}, {self_});'
                 for n in numbers]
    else:
        device = next(p.name for p in w.params if str(p.arg.type) == "Tensor" and not p.is_out)
        tensors = ", ".join(f"&{t}" for t in rule["promote"])
        lines = [f'const auto dtype = shimgen::detail::wrapped_numbers_dtype("{w.op.name}", {{{tensors}}}, '
                 f'{{{", ".join("&" + n for n in numbers)}}});']
        if "unwrapped_at" in rule:  # isin.Scalar_Tensor: aten's sorting path drops the wrapped-number flag
            lines = _unwrapped_dtype(w, rule, numbers)
        lines = _refused_kinds(w, rule, numbers) + lines + _refused_dtypes(w, rule)
        lines += [f"const auto {n}_t = shimgen::detail::wrapped_number_tensor("
                  f'"{w.op.name}", "{n}", {n}, dtype, {device});' for n in numbers]
    if "check" in rule:  # the op's own argument checks, with its messages, before `via`'s (scalar.h)
        check = rule["check"]
        lines.insert(0, f"shimgen::detail::{check['function']}({', '.join(check['args'])});")
    names = {p.name for p in kept}
    fixed = rule.get("fixed", {})  # via parameters given a string literal
    last = max(i for i, p in enumerate(target.params) if rule["args"].get(p.name) in names)
    args = [f'"{fixed[p.name]}"' if p.name in fixed else
            rule["args"][p.name] + ("_t" if rule["args"][p.name] in numbers else "") for p in target.params[: last + 1]]
    # qualified: a parameter may share the wrapper's name (constant_pad_nd's `pad`)
    lines.append(f"return torch::stable::{target.name}({', '.join(args)});")
    return "\n".join(lines)


def _range_body(w: Wrapper, v: Variant, rule: dict) -> str:
    """scalar.h's range_select with the overload's numbers (arange's start 0 and step 1, as aten's overloads pass
    them) and the options the wrapper takes, found by type (defaults for the others: CPU, strided, unpinned)."""
    kept = {p.name for p in w.kept(v)}
    option = {str(p.arg.type): p.name for p in w.kept(v) if str(p.arg.type) != "Scalar"}
    dtype, layout, device, pinned = (option.get(t) for t in ("ScalarType?", "Layout?", "Device?", "bool?"))
    lines = ["int32_t device_type = aoti_torch_device_type_cpu();", "int32_t device_index = -1;"]
    if device:
        lines += [f"if ({device}.has_value()) {{",
                  f"device_type = torch::stable::detail::to<int32_t>(torch::stable::detail::from({device}->type()));",
                  f"device_index = {device}->index();", "}"]
    args = [f'"{w.op.name}"', "true" if rule["kernel"] == RANGES[1] else "false",  # range includes its end
            "start" if "start" in kept else "shimgen::Scalar(int64_t(0))", "end",
            "step" if "step" in kept else "shimgen::Scalar(int64_t(1))", dtype or "std::nullopt",
            f"!{layout}.has_value() || *{layout} == torch::headeronly::Layout::Strided" if layout else "true",
            f"{pinned}.value_or(false)" if pinned else "false", "device_type", "device_index"]
    lines.append(f"return shimgen::detail::range_select({', '.join(args)});")
    return "\n".join(lines)


def _none_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """The number checked to be the rule's value (an integer or a double equal to it) and each `lengths` list
    argument of an allowed length (where `via` raises otherwise), then `via`'s wrapper with None for the number."""
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    a, value, op = rule["argument"], rule["value"], w.op.name
    why = (f"only {a}={value} has a libtorch route (aten::{rule['via']} with {rule['none']} None, which computes "
           "it): define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each torch release)")
    lines = [f"if (!(({a}.is_integral() && {a}.to_int64() == {int(value)}) || ({a}.is_floating_point() && "
             f"{a}.to_double() == {float(value)!r}))) {{",
             f'shimgen::detail::refuse("{op}", "{a}", {a}, "{why}");', "}"]
    for name, lengths in sorted(rule.get("lengths", {}).items()):
        allowed = " || ".join(f"{name}->size() == {n}" for n in lengths)
        lines += [f"if ({name}.has_value() && !({allowed})) {{",
                  f'shimgen::detail::fail("{op}", "with {a}={value}, `{name}` of {" or ".join(map(str, lengths))} '
                  f'dims only (aten::{rule["via"]} refuses others): define SHIMGEN_OVERLAY and link '
                  'libshimgen_overlay (rebuilt for each torch release)");', "}"]
    fixed = rule.get("fixed", {})  # via's parameters given a value of their own (norm.Scalar: all dims)
    args = ", ".join("std::optional<shimgen::Scalar>()" if p.name == rule["none"] else
                     _literal(fixed[p.name]) if p.name in fixed else rule["args"][p.name] for p in target.params)
    operand = rule.get("operand")
    if operand:  # dist: aten computes norm(self - other, p)
        first = target_wrapper(operand["via"], plan)
        assert first is not None
        lines.append(f"const torch::stable::Tensor {operand['as']} = torch::stable::{first.name}"
                     f"({', '.join(operand['args'])});")
    lines.append(f"return torch::stable::{target.name}({args});")
    return "\n".join(lines)


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


def _literal(value: object) -> str:
    """A fixed argument as C++: a bool, an integer, a list of integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "{" + ", ".join(map(str, value)) + "}"
    return str(value)


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


# ---- `backward_raises` of an inplace or foreach row: calls autograd records whose backward aten raises for
# (true: always, _foreach_maximum_ has no derivative; a number's name: where it is negative or NaN, leaky_relu_'s
# backward from its result), which the composition's calls would differentiate: refused where autograd records
# them (scalar.h records_inplace: grad mode, self not a leaf), after the forward's own errors, before self changes ----

def _backward_why(rule: dict) -> str:
    raises = rule["backward_raises"]
    if raises is True:
        return "aten has no derivative for it (its backward raises) on a tensor autograd records"
    return f"with {raises} < 0 on a tensor autograd records, aten's backward of the in-place op raises"


def _backward_refusal(w: Wrapper, rule: dict) -> list[str]:
    raises = rule.get("backward_raises")
    if not raises:
        return []
    refuse = f'shimgen::detail::refuse_backward("{w.op.name}", "{_backward_why(rule)}");'
    if rule["kernel"] == FOREACH:
        return [f"for (size_t i = 0; i < self.size(); ++i) {{\nif (shimgen::detail::records_inplace(self[i])) {{\n"
                f"{refuse}\n}}\n}}"]
    return [f"const bool negative = !({raises}.to_double() >= 0);",
            f"if (negative && shimgen::detail::records_inplace(self)) {{\n{refuse}\n}}"]


def _backward_refusal_doc(rule: dict) -> list[str]:
    if not rule.get("backward_raises"):
        return []
    raises = rule["backward_raises"]
    when = "" if raises is True else f" with {raises} < 0"
    return [f"Where autograd records the call{when} (grad mode, self not a leaf), it raises an error: aten's "
            "backward raises there, and the composition would differentiate it."]


# ---- `refuse_aliased: true`, `refuse_strides: true` and `autograd: refused` of an inplace row (addmm_ over
# addmm.default): self sharing any byte with an input is refused (aten's kernel reads the inputs while it writes
# self); so is a self not laid out as a new contiguous tensor (aten computes in self's layout); where autograd
# records the call `via`'s route refuses it (a legacy out= shim), after aten's own in-place error for a leaf self
# that requires grad (scalar.h inplace_leaf_check: aten::copy_ of self onto itself raises it) ----

def _leaf_check(rule: dict) -> list[str]:
    return ["shimgen::detail::inplace_leaf_check(self);"] if rule.get("autograd") == "refused" else []


def _alias_refusal(w: Wrapper, rule: dict, inputs: str) -> list[str]:
    lines = [f'shimgen::detail::refuse_strides("{w.op.name}", self, result);'] if rule.get("refuse_strides") else []
    if rule.get("refuse_aliased"):
        lines.append(f'shimgen::detail::refuse_aliased("{w.op.name}", self, {{{inputs}}});')
    return lines


def _inplace_doc(rule: dict) -> list[str]:
    lines = []
    if rule.get("refuse_aliased"):
        lines.append("Where self shares any memory with an input (the very same view included), it raises an error: "
                     "aten's kernel reads the inputs while it writes self.")
    if rule.get("refuse_strides"):
        lines.append("Where self has the result's sizes but not a new contiguous tensor's strides, it raises an error: "
                     "aten computes in self's layout, which rounds otherwise.")
    if rule.get("autograd") == "refused":
        lines.append(f"Where autograd records the call (grad mode, an input requiring grad), aten::{rule['via']}'s "
                     "route refuses it, naming the remedy; on a leaf that requires grad it raises aten's in-place "
                     "error.")
    return lines


# ---- kernel `rrelu_eval` (rrelu.default, rrelu_.default, rrelu_with_noise.default/.out/_,
# rrelu_with_noise_backward.default): aten's rrelu in eval mode is `via` (leaky_relu, leaky_relu_, leaky_relu.out,
# leaky_relu_backward) with the slope (lower + upper) / 2 as aten computes it (scalar.h rrelu_slope: over 0-dim
# tensors in the forward, `slope: backward`: in double, rrelu_backward_slope); training=true is refused (random
# slopes from aten's generator); `noise` is checked for self's sizes and otherwise unused, as in eval; `contiguous_result:
# true`: the result laid out as a new contiguous tensor, as aten's kernel allocates it; `check_bounds: true` (rrelu,
# rrelu_): aten's lower <= upper check; `finite_bounds: true` (rrelu): a non-finite bound refused (2.15 raises) ----

RRELU = "rrelu_eval"


def _rrelu_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """The parameters up to the generator, and the generator where the release's stable headers carry its C++ type
    (the table's `since`; in eval mode aten ignores it), where `via`'s wrapper takes all of its own with libtorch
    alone at q.level."""
    target = target_wrapper(rule["via"], q.plan)
    tv = active(target, q.level) if target is not None else None
    if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
        return None
    kept = 0
    for p in q.params:
        t = str(p.arg.type)
        if t == "Generator?" and not (p.row.since is not None and p.row.since <= q.level):
            break
        if t not in CARRIED and t != "Generator?":
            return None
        kept += 1
    if any(p.default is None for p in q.params[kept:]):
        return None
    return Variant(route, kept, q.level, lowering=(rule["via"],))


def _rrelu_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    op = w.op.name
    kept = {p.name for p in w.kept(v)}
    training = "training" if "training" in kept else "false"
    lower = "lower" if "lower" in kept else "shimgen::Scalar(0.125)"
    upper = "upper" if "upper" in kept else "shimgen::Scalar(0.3333333333333333)"
    slope = "rrelu_backward_slope" if rule.get("slope") == "backward" else "rrelu_slope"
    lines = ["static_cast<void>(generator);"] if "generator" in kept else []  # eval mode ignores it
    if "noise" in kept and rule.get("slope") == "backward":
        lines.append("static_cast<void>(noise);")  # used in training mode only, which is refused
    if "noise" in kept and rule.get("slope") != "backward":
        lines.append(f'shimgen::detail::rrelu_noise_check("{op}", self, noise);')
    if rule.get("check_bounds"):
        finite = "true" if rule.get("finite_bounds") else "false"
        lines.append(f'shimgen::detail::rrelu_check_bounds("{op}", {lower}, {upper}, {finite});')
    lines.append(f'const shimgen::Scalar slope = shimgen::detail::{slope}("{op}", {lower}, {upper}, {training});')
    if rule.get("backward_raises"):  # rrelu_: the refusal of its via (leaky_relu_), naming this op
        why = "with (lower + upper) / 2 < 0 on a tensor autograd records, aten's backward of the in-place op raises"
        lines.append("const bool negative = !(slope.to_double() >= 0);")
        lines.append(f"if (negative && shimgen::detail::records_inplace(self)) {{\n"
                     f'shimgen::detail::refuse_backward("{op}", "{why}");\n}}')
    args = ", ".join("slope" if p.name == "negative_slope" else p.name for p in target.params)
    call = f"torch::stable::{target.name}({args})"
    if rule.get("contiguous_result"):
        call = f"shimgen::detail::contiguous_result({call})"
    lines.append(f"return {call};")
    return "\n".join(lines)


def _rrelu_doc(rule: dict) -> list[str]:
    how = ("in double" if rule.get("slope") == "backward" else
           "over 0-dim tensors, as aten's kernel does: in double where lower or upper is floating")
    return [f"Route: in eval mode aten computes it as aten::{rule['via']} with the slope (lower + upper) / 2 ({how}); "
            f"so does this wrapper (proven equal, gradients included, on torch {', '.join(map(str, rule['proven']))})"
            + (", its result laid out as a new contiguous tensor as aten's kernel allocates it."
               if rule.get("contiguous_result") else "."),
            "training=true (random slopes from aten's generator) raises an error naming the remedy"
            + ("; so do two integer bounds (aten divides them in the default dtype), a bool or complex bound"
               if rule.get("slope") != "backward" else "; so does a complex bound")
            + ("; so does a bound that is not finite (torch 2.15 raises, earlier releases compute with it)."
               if rule.get("finite_bounds") else ".")] + (
                ["Where autograd records the call with (lower + upper) / 2 < 0 (grad mode, self not a leaf), it raises "
                 "an error: aten's backward raises there, and the composition would differentiate it."]
                if rule.get("backward_raises") else [])


ROUTE_CLASS = Composition


# ---- kernel `scalars_tensor`: the op as its _foreach_ sibling's `.Tensor` overload on one-element lists ----


def _scalars_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """The route's refusals (scalar.h check_scalars_route), the number as a packed 1-D tensor of its own type
    (scalars_tensor), then `via` through the boxed dispatcher, as its own wrapper calls it, with each tensor as a
    one-element list: its one result, or self for an in-place `via` (which returns nothing). The dispatcher is
    called here rather than via's wrapper: via's header also holds the _foreach_ op's Scalar overloads, whose
    composition (kernel `foreach`) calls this wrapper."""
    target = target_wrapper(rule["via"], plan)
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
        lines += [f'shimgen::detail::dispatch<void, {n}>("{name}", "{overload}", {", ".join(args)});', "return self;"]
    else:
        lines += [f"using Result = {target.returns};",
                  f'Result result = shimgen::detail::dispatch<Result, {n}>("{name}", "{overload}", {", ".join(args)});',
                  "return result[0];"]
    return "\n".join(lines)


def _scalars_describe(w: Wrapper, rule: dict) -> list[str]:
    proven = ", ".join(map(str, rule["proven"]))
    return [f"Route: aten::{rule['via']} on one-element lists, the number as a 1-D tensor of its own type, which "
            f"aten's CPU kernel reads back as the very number and hands to aten::{w.op.name.split('.')[0]} itself "
            f"(aten computes every value; proven equal on torch {proven}).",
            "A call autograd records (an input requiring grad in grad mode: that overload has no derivative), a "
            "tensor not on the CPU, and an unsigned number above int64's range raise an error: define "
            "SHIMGEN_OVERLAY and link libshimgen_overlay for those."]


# ---- kernels `trapezoid_dx` / `cumulative_trapezoid_dx` (trapezoid.dx, cumulative_trapezoid.dx): aten's
# CompositeImplicitAutograd functions (Integration.cpp) as the same dispatching calls in the same order, each by its
# wrapper (the row's `calls`: the op of each role below): aten's checks first (scalar.h trapezoid_check; trapezoid
# returns zeros of y's options for an empty dim before them, sizes_except), then
# `(y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx` and
# `(dx / 2. * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim)`, the Scalar dx taken as aten takes it
# (dx.toDouble()) and each product by mul.Scalar's wrapper, as aten multiplies a tensor by a double ----

TRAPEZOID = ("trapezoid_dx", "cumulative_trapezoid_dx")
# role -> how many leading parameters the body passes that role's wrapper
TRAPEZOID_PASSED = {"pick": 3, "plus": 2, "minus": 2, "times": 2, "total": 2, "blank": 2, "part": 4, "scan": 2}


def _trapezoid_at(route: Route, q: Query, rule: dict) -> Variant | None:
    return _calls_at(route, q, rule, TRAPEZOID_PASSED)


def _calls_at(route: Route, q: Query, rule: dict, passed: dict[str, int]) -> Variant | None:
    """Every parameter (the row's `params`, the names the body uses), where each wrapper of `calls` takes the
    parameters the body passes it (`passed`: role -> how many leading parameters) with libtorch alone at q.level."""
    if [p.name for p in q.params] != rule["params"]:
        return None
    for role, name in rule["calls"].items():
        target = target_wrapper(name, q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < passed[role]:
            return None
    return Variant(route, len(q.params), q.level, lowering=tuple(rule["calls"].values()))


def _callees(rule: dict, plan: Plan) -> dict[str, str]:
    """role -> the qualified C++ name of the wrapper the row's `calls` give that role (_calls_at checked each)."""
    f = {}
    for role, name in rule["calls"].items():
        target = target_wrapper(name, plan)
        assert target is not None
        f[role] = f"torch::stable::{target.name}"
    return f


def _trapezoid_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = _callees(rule, plan)
    op, name = w.op.name, w.op.name.split(".")[0]
    times = f["times"]
    if rule["kernel"] == TRAPEZOID[0]:
        return "\n".join([
            "// aten: zeros of y's options for an empty dim, before its checks",
            "if (y.size(dim) == 0) {",
            f"return {f['blank']}(y, shimgen::detail::sizes_except(y, dim));",
            "}",
            f'shimgen::detail::trapezoid_check("{op}", "{name}", y, dx);',
            f"const torch::stable::Tensor ends = {f['plus']}({f['pick']}(y, dim, 0), {f['pick']}(y, dim, -1));",
            f"const torch::stable::Tensor middle = {f['minus']}({f['total']}(y, {{dim}}), "
            f"{times}(ends, shimgen::Scalar(0.5)));",
            f"return {times}(middle, shimgen::Scalar(dx.to_double()));"])
    return "\n".join([
        f'shimgen::detail::trapezoid_check("{op}", "{name}", y, dx);',
        f"const torch::stable::Tensor left = {f['part']}(y, dim, 0, -1);",
        f"const torch::stable::Tensor right = {f['part']}(y, dim, 1);",
        f"const torch::stable::Tensor scaled = {times}({f['plus']}(left, right), "
        "shimgen::Scalar(dx.to_double() / 2.));",
        f"return {f['scan']}(scaled, dim);"])


def _trapezoid_doc(w: Wrapper, rule: dict) -> list[str]:
    how = ("(y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx, with zeros for an empty dim"
           if rule["kernel"] == TRAPEZOID[0] else "(dx / 2. * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim)")
    return [f"Route: aten computes aten::{w.op.name} as {how}, dx as a double; so does this wrapper, by the same "
            f"dispatching calls (proven equal, gradients included, on torch {', '.join(map(str, rule['proven']))}).",
            "Where a product's number has no exact libtorch route for the tensor's dtype, mul's wrapper raises an "
            "error naming the remedy."]


# ---- kernel `elu_grad` (elu_backward.default; its out= is kernel `out`): aten's elu_backward kernel with
# is_result=true, `x <= 0 ? grad * input_scale * (x + alpha * scale) : grad * scale`, as scalar.h's
# elu_grad_operands / elu_grad_select, its one addition by `via` (sub.Tensor: x - (-(alpha * scale))), so
# it routes where that wrapper has a libtorch route (the generic `via` rule of Composition.variant_at).
# is_result=false (exp, computed by aten's vectorized body and scalar tail in two ways), a call autograd records
# (aten's derivative is elu_double_backward) and a NaN self_or_result are refused ----

ELU_GRAD = "elu_grad"


def _elu_grad_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    args = ", ".join(("true" if a else "false") if isinstance(a, bool) else str(a) for a in rule["args"])
    return "\n".join([
        f'const auto s = shimgen::detail::elu_grad_operands("{w.op.name}", {args});',
        f"return shimgen::detail::elu_grad_select(s, torch::stable::{target.name}(s.x, s.minus_negcoef));"])


def _elu_grad_doc(rule: dict) -> list[str]:
    return [f"Route: aten's elu_backward kernel with is_result=true as the dispatching aten calls that compute it, "
            f"its addition by aten::{rule['via']} (shimgen::detail::elu_grad_select; proven equal, where autograd "
            f"does not record the call, on torch {', '.join(map(str, rule['proven']))}).",
            "is_result=false (aten's kernel computes exp one way in its vectorized body and another in its scalar "
            "tail), a call autograd records (grad mode, an input requiring grad: aten's derivative is "
            "elu_double_backward), a NaN in self_or_result (aten's answer depends on the element's position in its "
            "vectorized loop) and a number out of the range of the dtype aten computes in raise an error naming the "
            "remedy."]


# ---- kernel `add_relu` (_add_relu.Tensor; its out=, in-place and Scalar forms are rows of `out`, `inplace` and
# `wrapped_numbers` over it): aten's add_relu with alpha 1, `min(max(self + other, 0), largest of self's dtype)`, as
# scalar.h's add_relu_operands / add_relu_select around `via` (add.Tensor's wrapper, with alpha 1 of the common
# dtype's kind); another alpha (a fused multiply-add in aten's vectorized body), a call autograd records (aten has no
# derivative) and a floating sum holding NaN or -0.0 (answered by position) are refused ----

ADD_RELU = "add_relu"


def _add_relu_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    args = ", ".join(str(a) for a in rule["args"])
    return "\n".join([
        f'const auto s = shimgen::detail::add_relu_operands("{w.op.name}", {args});',
        f'return shimgen::detail::add_relu_select("{w.op.name}", s, torch::stable::{target.name}(self, other, s.one));'])


def _add_relu_doc(rule: dict) -> list[str]:
    return [f"Route: aten's add_relu kernel with alpha 1, clamp(self + other, 0, the largest value of self's dtype), "
            f"as aten::{rule['via']} (its wrapper) and aten::clamp.Tensor (shimgen::detail::add_relu_select; proven "
            f"equal, where autograd does not record the call, on torch {', '.join(map(str, rule['proven']))}).",
            "Another alpha (aten's vectorized body computes a fused multiply-add), a call autograd records (aten has "
            "no derivative for it) and a floating self + other holding a NaN or -0.0 (aten's answer depends on the "
            "element's position in its vectorized loop) raise an error naming the remedy."]


# ---- `refuse_cast: true` of an inplace row (_add_relu_.Tensor): where the result's dtype is not self's (but casts
# to it), aten writes it there and returns a temporary of the result's dtype instead of self, which the in-place rules
# do not return: refused (scalar.h refuse_cast) ----

def _cast_refusal(w: Wrapper, rule: dict, target: str) -> list[str]:
    return [f'shimgen::detail::refuse_cast("{w.op.name}", {target}, result);'] if rule.get("refuse_cast") else []


def _cast_refusal_doc(rule: dict, target: str) -> list[str]:
    if not rule.get("refuse_cast"):
        return []
    return [f"Where the result's dtype is not {target}'s, it raises an error: aten returns a temporary of the result's "
            f"dtype there instead of {target}."]


# ---- kernels `range_out`, `full_out` and `scalar_full`: the factories' out= overloads and scalar_tensor as aten
# computes them. `range_out` (arange.out, arange.start_out, range.out, range.out_): aten's arange_out / range_out
# compute in out's dtype, so the range is range_select's (kernel `arange_factory` / `range_factory`) in out's dtype
# on out's device; then aten's rules for out (scalar.h range_out_assign): resized to the range's length where its
# number of elements differs (`warns: true`, arange: with a warning on a non-empty out), else written in its own
# shape. `full_out` (full.out): aten's out.resize_(size) (scalar.h full_out_resize), then `via`
# (fill_.Scalar) on out. `scalar_full` (scalar_tensor): aten's empty({}, options).fill_(s), which is `via`
# (full.default) with size [] and the default dtype where dtype is None (full would infer it from the number).
# The out= kernels check aten's autograd rule for a factory's out first (scalar.h check_factory_out_autograd).
# The section's other kernels share its route method: `fill_diagonal` (fill_diagonal_: aten's composite, `via`
# fill_.Scalar on `views` as_strided), `scatter_value_reduce` (scatter.value_reduce and its forms: `via`
# scatter.reduce with the number as an expanded src) and `index_add_one` (index_add and its forms with alpha 1:
# `via` scatter_add with via's parameter `expanded` given the index expanded to source's shape). ----

FACTORY_OUTS = ("range_out", "full_out", "scalar_full", "fill_diagonal", "scatter_value_reduce", "index_add_one")


def _factory_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """Every parameter, each of a type the release's stable headers carry at q.level (a Scalar, the out tensor,
    an option from the table's `since`), and `via`'s wrapper (if the row names one) with all of its parameters and
    libtorch alone at q.level."""
    if rule["kernel"] in ("range_out", "full_out") and sum(p.is_out for p in q.params) != 1:
        return None
    for p in q.params:
        if not (str(p.arg.type) == "Scalar" or p.is_out or (p.row.since is not None and p.row.since <= q.level)):
            return None
    if "via" not in rule:
        return Variant(route, len(q.params), q.level)
    if rule["kernel"] == "index_add_one":  # via's parameters are the op's but alpha, `src` for `source`
        target = target_wrapper(rule["via"], q.plan)
        theirs = [p.name for p in target.params] if target is not None else []  # type: ignore[union-attr]
        if [("src" if p.name == "source" else p.name) for p in q.params if p.name != "alpha"] != theirs:
            return None
    if rule["kernel"] == "scatter_value_reduce":  # via's parameters are the op's, `src` for `value`
        target = target_wrapper(rule["via"], q.plan)
        theirs = [p.name for p in target.params] if target is not None else []  # type: ignore[union-attr]
        if [("src" if p.name == "value" else p.name) for p in q.params] != theirs:
            return None
    vias = (rule["via"], *([rule["views"]] if "views" in rule else []))
    for via in vias:  # fill_diagonal: fill_ and as_strided
        target = target_wrapper(via, q.plan)
        tv = active(target, q.level) if target is not None else None
        if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
            return None
    return Variant(route, len(q.params), q.level, lowering=vias)


def _out_device(out: str) -> list[str]:
    return ["int32_t device_type = 0;", "int32_t device_index = 0;",
            f'shimgen::detail::check(aoti_torch_get_device_type({out}.get(), &device_type), "get_device_type");',
            f'shimgen::detail::check(aoti_torch_get_device_index({out}.get(), &device_index), "get_device_index");']


def _factory_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    op = w.op.name
    kept = {p.name for p in w.kept(v)}
    if rule["kernel"] == "scalar_full":
        target = target_wrapper(rule["via"], plan)
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
    if rule["kernel"] == "fill_diagonal":
        return _fill_diagonal_body(w, v, plan, rule)
    if rule["kernel"] == "index_add_one":
        target = target_wrapper(rule["via"], plan)
        assert target is not None
        names = {p.name for p in w.kept(v)}
        written = "&out" if "out" in names else "&self" if w.op.name.split(".")[0].endswith("_") else "nullptr"
        alpha = "alpha" if "alpha" in names else "shimgen::Scalar(int64_t(1))"
        given = {rule["expanded"]: "idx", "src": "source"}  # `expanded`: via's index, given the expanded one
        args = ", ".join(given.get(p.name, p.name) for p in target.params)
        return "\n".join([f'const torch::stable::Tensor idx = shimgen::detail::index_add_index("{op}", {written}, '
                          f"self, dim, index, source, {alpha});", f"return torch::stable::{target.name}({args});"])
    if rule["kernel"] == "scatter_value_reduce":
        target = target_wrapper(rule["via"], plan)
        assert target is not None
        args = ", ".join("src" if p.name == "src" else p.name for p in target.params)
        return "\n".join([f'const torch::stable::Tensor src = shimgen::detail::scatter_value_src("{op}", self, index, '
                          "value);", f"return torch::stable::{target.name}({args});"])
    out = next(p.name for p in w.kept(v) if p.is_out)
    # full.out is aten's own two calls (resize_, fill_) on out's device: no device gate. A range's elements are
    # computed by range_select's calls, proven against aten's CPU kernel only (CUDA's computes in another
    # accumulation type)
    lines = ([] if rule["kernel"] == "full_out" else [f'shimgen::detail::refuse_not_cpu("{op}", {out});']) + [
        f'shimgen::detail::check_factory_out_autograd("{op}", {out});']
    if rule["kernel"] == "full_out":
        target = target_wrapper(rule["via"], plan)
        assert target is not None
        number = next(p.name for p in w.kept(v) if str(p.arg.type) == "Scalar")
        lines += [f'shimgen::detail::full_out_resize("{op}", {out}, size.data(), size.size());',
                  f"torch::stable::{target.name}({out}, {number});", f"return {out};"]
        return "\n".join(lines)
    inclusive = "true" if rule.get("inclusive") else "false"
    args = [f'"{op}"', inclusive, "start" if "start" in kept else "shimgen::Scalar(int64_t(0))", "end",
            "step" if "step" in kept else "shimgen::Scalar(int64_t(1))", f"{out}.scalar_type()", "true", "false",
            "device_type", "device_index"]
    lines += _out_device(out)
    lines.append(f"const torch::stable::Tensor result = shimgen::detail::range_select({', '.join(args)});")
    warns = "true" if rule.get("warns") else "false"
    lines.append(f'return shimgen::detail::range_out_assign("{op}", {out}, result, {warns});')
    return "\n".join(lines)


def _fill_diagonal_body(w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
    """aten's fill_diagonal_: its checks and views (scalar.h fill_diagonal_views), each filled by `via`'s wrapper
    (fill_.Scalar), the views by `views`'s (as_strided): the very dispatcher calls aten's composite makes."""
    fill, view = (target_wrapper(n, plan) for n in (rule["via"], rule["views"]))
    assert fill is not None and view is not None
    wrap = "wrap" if "wrap" in {p.name for p in w.kept(v)} else "false"
    number = next(p.name for p in w.kept(v) if str(p.arg.type) == "Scalar")
    one = "torch::headeronly::IntHeaderOnlyArrayRef"

    def fill_view(size: str, offset: str) -> str:
        return (f"torch::stable::{fill.name}(torch::stable::{view.name}(self, {one}(&{size}, 1), {one}(&g.stride, 1), "
                f"{offset}), {number});")
    return "\n".join([
        f'const shimgen::detail::DiagonalViews g = shimgen::detail::fill_diagonal_views("{w.op.name}", self, {wrap});',
        fill_view("g.size", "g.offset"),
        "if (g.wrap_size >= 0) {", fill_view("g.wrap_size", "g.wrap_offset"), "}",
        "return self;"])


def _factory_doc(w: Wrapper, rule: dict) -> list[str]:
    proven = ", ".join(map(str, rule["proven"]))
    name = w.op.name.split(".")[0]
    if rule["kernel"] == "index_add_one":
        return [f"Route: alpha = 1 as aten::{rule['via']} with index unsqueezed around dim and expanded to source's "
                "shape (laid out contiguously): the same additions in the same order (proven equal, gradients "
                f"included, on torch {proven}), after aten's index_add checks.",
                "Another alpha (aten computes self + alpha * source in one rounding), a half, bfloat16 or complex "
                "self (aten rounds each addition of the former its own way, multiplies the latter by alpha), a "
                "tensor not on the CPU, and a written tensor sharing "
                "memory with index raise an error naming the remedy."]
    if rule["kernel"] == "scatter_value_reduce":
        return [f"Route: aten::{rule['via']} with the number as src, a 0-dim tensor of self's dtype expanded to "
                "index's shape: aten's scatter kernel with the same reduction in the same order (proven equal on "
                f"torch {proven}; its backward raises, as aten's).",
                "A number that does not convert exactly to self's dtype, and a self not on the CPU, raise an error "
                "naming the remedy. aten warns once per process that the reduce argument with a Tensor src is "
                "deprecated, which aten's Scalar overload does not."]
    if rule["kernel"] == "fill_diagonal":
        return [f"Route: aten's fill_diagonal_ is a composite: aten::{rule['views']} views of self's diagonal (and "
                f"where it wraps, the wrapped part), each filled by aten::{rule['via']}; so is this wrapper, with the "
                f"very dispatcher calls (proven equal, gradients included, on torch {proven})."]
    if rule["kernel"] == "scalar_full":
        return [f"Route: aten computes aten::{w.op.name} as empty({{}}, options).fill_(s), which is "
                f"aten::{rule['via']} "
                "with size [] and, where dtype is None, the default dtype (proven equal on torch " + proven + ").",
                "A layout other than strided raises an error (aten ignores it, full raises)."]
    if rule["kernel"] == "full_out":
        return [f"Route: aten's full.out: out.resize_(size) where its sizes differ (aten::resize_as_, quiet as "
                f"aten's kernel), then aten::{rule['via']} on out (proven equal on torch {proven}).",
                "In grad mode a leaf out that requires grad raises, as in aten; an out with a grad_fn in grad mode "
                "and one that requires grad and must be resized raise an error naming the remedy."]
    resize = ("through aten::where.self_out, whose warning on a non-empty out stands for aten's own (its text "
              "differs)" if rule.get("warns") else "by aten::resize_as_, quietly as aten does")
    return [f"Route: aten's {name} kernel computes in out's dtype: shimgen::detail::range_select (the {name} "
            f"factory's route) in out's dtype on out's device, then aten's rules for out: where its number of "
            f"elements differs it is resized to the range's ({resize}), else it keeps its shape and gets the elements "
            f"in its row-major order (proven equal on torch {proven}).",
            "A floating range is served where every element is exact in out's dtype (0.1 steps raise an error, as "
            "for the factory); so do an out not on the CPU (proven on CPU only), an out with a grad_fn in grad mode "
            "(aten records a backward that raises) and "
            + ("resizing an out that writes an element twice." if rule.get("warns") else
               "resizing an out that requires grad.")]


# ---- kernel `addbmm_loop` (addbmm.default, addbmm_.default, addbmm.out): aten's CPU addbmm_out, a loop of addmm_
# (scalar.h addbmm_loop), each addmm_ by addmm.out's wrapper (`via`, the legacy shim) with out and self the result;
# the functional form's result is aten::new_empty(self, [0]) resized there, as aten's empty({0}, self.options()) ----

def _addbmm_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """Every parameter, from 2.10 (expand's size list crosses the dispatcher from then), where addmm.out's wrapper
    takes all of its parameters with libtorch alone at q.level."""
    if q.level < LISTS_CROSS or any(str(p.arg.type) not in CARRIED for p in q.params):
        return None
    target = target_wrapper(rule["via"], q.plan)
    tv = active(target, q.level) if target is not None else None
    if tv is None or tv.route.overlay or tv.kept < len(target.params):  # type: ignore[union-attr]
        return None
    return Variant(route, len(q.params), q.level, lowering=(rule["via"],))


def _addbmm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    """scalar.h addbmm_prepare, then one addmm_ per batch by `via`'s wrapper (addmm.out) into the result."""
    target = target_wrapper(rule["via"], plan)
    assert target is not None
    out = next((p.name for p in w.params if p.is_out), None)
    in_place = w.op.name.split(".")[0].endswith("_")
    result = out or ("self" if in_place else "shimgen::detail::new_empty_of(self)")
    returned = out or ("self" if in_place else "result")
    # the functional form under autocast (addbmm is in its lower-precision list; out= and in-place forms are not):
    # the operands cast as autocast casts them (scalar.h autocast_target, autocast_like), then the same calls
    functional = not (out or in_place)
    s, b1, b2 = ("self_a", "batch1_a", "batch2_a") if functional else ("self", "batch1", "batch2")
    cast = [] if not functional else [
        "const std::optional<torch::stable::Tensor> autocast = shimgen::detail::autocast_target(batch1);",
        *[f"const torch::stable::Tensor {n}_a = autocast ? shimgen::detail::autocast_like({n}, *autocast) : {n};"
          for n in ("self", "batch1", "batch2")]]
    result = result.replace("new_empty_of(self)", f"new_empty_of({s})")
    return "\n".join([
        *cast,
        f"torch::stable::Tensor result = {result};",
        f'const int64_t batches = shimgen::detail::addbmm_prepare("{w.op.name}", {s}, {b1}, {b2}, beta, '
        f'result, {"true" if in_place else "false"});',
        "for (int64_t b = 0; b < batches; ++b) {",
        "const shimgen::Scalar beta_b = b == 0 ? beta : shimgen::Scalar(int64_t(1));",
        f"const torch::stable::Tensor m1 = shimgen::detail::batch_of({b1}, b);",
        f"const torch::stable::Tensor m2 = shimgen::detail::batch_of({b2}, b);",
        f"torch::stable::{target.name}(result, result, m1, m2, beta_b, alpha);",
        "}",
        f"return {returned};"])


# ---- kernel `matrix_norm_two` (linalg_matrix_norm.default; its out= is kernel `out`): aten's
# CompositeImplicitAutograd linalg_matrix_norm with a number ord (LinearAlgebra.cpp) for ord = 2 and -2, as the same
# dispatching calls in the same order, each by its wrapper (the row's `calls`: the op of each role below): aten's
# checks first (scalar.h matrix_norm_dims: complex ord, the order, A's dims and dtype, dim, dtype=), then
# `max_min(linalg_svdvals((dtype ? A.to(dtype) : A).permute(backshift)), -1)` and, with keepdim,
# `.unsqueeze(-1).permute(reverse)`. aten computes ord 1, -1, inf and -inf with linalg_vector_norm's ord 1, which no
# libtorch route carries: matrix_norm_dims refuses them naming the remedy ----

MATRIX_NORM = "matrix_norm_two"
# role -> how many leading parameters the body passes that role's wrapper
MATRIX_NORM_PASSED = {"cast": 2, "order": 2, "spectrum": 1, "most": 3, "least": 3, "grow": 2}


def _matrix_norm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = _callees(rule, plan)
    return "\n".join([
        f'const std::vector<int64_t> dims = shimgen::detail::matrix_norm_dims("{w.op.name}", self, ord, dim, dtype);',
        "const std::vector<int64_t> order = shimgen::detail::backshift_permutation(dims[0], dims[1], self.dim());",
        "torch::stable::Tensor A = self;",
        "if (dtype.has_value()) {",
        f"A = {f['cast']}(self, dtype.value());",
        "}",
        f"const torch::stable::Tensor values = {f['spectrum']}({f['order']}(A, order));",
        "torch::stable::Tensor result = values;",
        "if (ord.to_double() > 0) {",
        f"result = {f['most']}(values, {{-1}}, keepdim);",
        "} else {",
        f"result = {f['least']}(values, {{-1}}, keepdim);",
        "}",
        "if (keepdim) {",
        f"result = {f['order']}({f['grow']}(result, -1), shimgen::detail::reverse_permutation(order));",
        "}",
        "return result;"])


def _matrix_norm_doc(rule: dict) -> list[str]:
    return ["Route: for ord = 2 or -2 aten computes the largest or smallest singular value, "
            "amax / amin(linalg_svdvals(A.permute(dim last)), -1), after its checks; so does this wrapper, by the "
            "same dispatching calls (proven equal, gradients included, on torch "
            f"{', '.join(map(str, rule['proven']))}).",
            "ord 1, -1, inf and -inf raise an error naming the remedy: aten computes them with "
            "linalg_vector_norm's ord 1, which no libtorch route carries."]


# ---- kernel `renorm_two` (renorm.default): aten's structured renorm (Normalization.cpp renorm_out) for p = 2, as
# the calls its kernel makes, each by its wrapper (the row's `calls`): aten's checks first, then this route's refusals
# (scalar.h renorm_dims: another p, more than 3 dims, a dtype aten raises for or not proven, a call autograd records:
# renorm's derivative is its own); `norm = linalg_vector_norm(self, p, every dim but dim, true, float for half /
# bfloat16)`, its scale factor kernel `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` in norm's dtype as gt, add, div
# and where on 0-dim tensors of that dtype (cast to self's where it differs), then `self * factor`, copied into a new
# contiguous tensor where it is not laid out as one (aten's structured output) ----

RENORM = "renorm_two"
# role -> how many leading parameters the body passes that role's wrapper
RENORM_PASSED = {"length": 5, "plus": 2, "over": 2, "above": 2, "pick": 3, "times": 2, "compact": 2}


def _renorm_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = _callees(rule, plan)
    return "\n".join([
        f'const std::vector<int64_t> reduce = shimgen::detail::renorm_dims("{w.op.name}", self, p, dim, maxnorm);',
        "const std::optional<torch::headeronly::ScalarType> acc = "
        "shimgen::detail::renorm_norm_dtype(self.scalar_type());",
        f"const torch::stable::Tensor norm = {f['length']}(self, p.to_double(), reduce, true, acc);",
        "const torch::headeronly::ScalarType common = norm.scalar_type();",
        "const torch::stable::Tensor limit = shimgen::detail::number_tensor(shimgen::Scalar(maxnorm.to_double()), common);",
        "const torch::stable::Tensor eps = shimgen::detail::number_tensor(shimgen::Scalar(1e-7), common);",
        "const torch::stable::Tensor one = shimgen::detail::number_tensor(shimgen::Scalar(1.0), common);",
        f"const torch::stable::Tensor scaled = {f['over']}(limit, {f['plus']}(norm, eps));",
        f"torch::stable::Tensor factor = {f['pick']}({f['above']}(norm, limit), scaled, one);",
        "factor = shimgen::detail::to_dtype(factor, self.scalar_type());",
        f"const torch::stable::Tensor result = {f['times']}(self, factor);",
        "if (shimgen::detail::new_contiguous(result)) {",
        "return result;",
        "}",
        f"return {f['compact']}(result, torch::headeronly::MemoryFormat::Contiguous);"])


def _renorm_doc(rule: dict) -> list[str]:
    return ["Route: for p = 2, aten's renorm kernel as the calls it makes: linalg_vector_norm over every dim but "
            "dim (float for half / bfloat16), its scale factor `norm > maxnorm ? maxnorm / (norm + 1e-7) : 1` as "
            "gt, add, div and where in the norm's dtype, then self * factor in a new contiguous tensor (proven "
            f"equal on torch {', '.join(map(str, rule['proven']))}).",
            "Another p, a tensor of more than 3 dims, and a call autograd records (renorm's derivative is its own) "
            "raise an error naming the remedy."]


# ---- `composite: true` of a kernel `out` row (linalg_matrix_norm.out): aten's out= overload of a
# CompositeImplicitAutograd op is not a structured kernel's: it checks out's device, calls the functional (which autograd
# records), checks the dtype, resizes out (at::native::resize_output) and copies with copy_ (recorded too), so it
# computes in grad mode where kernel `out` raises aten's out= autograd error (scalar.h check_out_device,
# assign_composite_out) ----

def _composite_out_body(w: Wrapper, via: str, out: str, inputs: list[str], args: str) -> str:
    return "\n".join([
        f'shimgen::detail::check_out_device("{w.op.name}", {inputs[0]}, {out});',
        f"const torch::stable::Tensor result = torch::stable::{via}({args});",
        f'shimgen::detail::assign_composite_out("{w.op.name}", {out}, result);',
        f"return {out};"])


def _composite_out_doc(rule: dict) -> list[str]:
    return [f"Route: aten::{rule['via']}, then aten's out= of a CompositeImplicitAutograd op: out on the input's "
            "device, the result's dtype out's, out resized as at::native::resize_output resizes it (aten's warning "
            "on a non-empty out, a new contiguous tensor's strides), then aten::copy_, which autograd records as it "
            f"records aten's (proven equal on torch {', '.join(map(str, rule['proven']))}).",
            "Resizing an out that requires grad in grad mode raises an error naming the remedy (aten resizes it "
            "below autograd)."]


# ---- kernel `subcmul` (_test_serialization_subcmul.default): aten's CompositeImplicitAutograd function is
# `self - (other * alpha)`, which is aten::mul.Scalar(other, alpha), then aten::sub.Tensor(self, product) with its
# default alpha; so is this wrapper, each call by its wrapper (the row's `calls`: `times`, `minus`), so any number
# mul's wrapper refuses is refused here, with its error ----

SUBCMUL = "subcmul"
SUBCMUL_PASSED = {"times": 2, "minus": 2}  # role -> how many leading parameters the body passes that role's wrapper


def _subcmul_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = _callees(rule, plan)
    self_, other, alpha = rule["params"]
    return "\n".join([f"const torch::stable::Tensor product = {f['times']}({other}, {alpha});",
                      f"return {f['minus']}({self_}, product);"])


def _subcmul_doc(rule: dict) -> list[str]:
    calls = rule["calls"]
    return [f"Route: aten computes it as self - (other * alpha): aten::{calls['times']}(other, alpha), then "
            f"aten::{calls['minus']}(self, product); so does this wrapper, by their wrappers (proven equal, "
            f"gradients included, on torch {', '.join(map(str, rule['proven']))}).",
            "Where alpha has no exact libtorch route for other's dtype, mul's wrapper raises an error naming the "
            "remedy."]


# ---- kernel `pad_packed` (_pad_packed_sequence.default): aten's CompositeImplicitAutograd function
# (PackedSequence.cpp) as the same dispatching calls in the same order, each by its wrapper (the row's `calls`: the
# op of each role below): batch_sizes made contiguous, aten's checks (scalar.h pad_packed_sizes, pad_packed_length),
# the output `full` of padding_value with data's dtype, layout and device, the lengths tensor `empty` with
# batch_sizes' options (new_empty of it), then per run of equal batch sizes
# `output.slice(0, prev_i, i).slice(1, 0, prev_batch_size).copy_(data.slice(0, offset, offset + l).view(...))`, the
# lengths written as aten writes them (pad_packed_lengths), and the transpose for batch_first. Batch sizes that grow
# or are negative (aten writes out of bounds there) are refused (pad_packed_check_runs). From 2.10: the int[] of
# full, new_empty and view cross the dispatcher from then ----

PAD_PACKED = "pad_packed"
# role -> how many leading parameters the body passes that role's wrapper
PAD_PACKED_PASSED = {"dense": 1, "fill": 5, "blank": 2, "part": 4, "shape": 2, "write": 2, "swap": 3}


def _pad_packed_at(route: Route, q: Query, rule: dict) -> Variant | None:
    """As _calls_at, from 2.10 (its list arguments cross the dispatcher from then on)."""
    return None if q.level < LISTS_CROSS else _calls_at(route, q, rule, PAD_PACKED_PASSED)


def _pad_packed_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = _callees(rule, plan)
    data, batch_sizes, batch_first, padding_value, total_length = rule["params"]
    op, part = w.op.name, f["part"]
    return "\n".join([
        f"const torch::stable::Tensor sizes_t = {f['dense']}({batch_sizes});",
        f'const std::vector<int64_t> sizes = shimgen::detail::pad_packed_sizes("{op}", sizes_t);',
        "const int64_t max_batch_size = sizes[0];",
        "const int64_t max_real_seq_length = static_cast<int64_t>(sizes.size());",
        f'const int64_t max_seq_length = shimgen::detail::pad_packed_length("{op}", sizes, {total_length});',
        f'std::vector<int64_t> view_size = shimgen::detail::pad_packed_output_size("{op}", {data}, max_seq_length, '
        "max_batch_size);",
        f"torch::stable::Tensor output = {f['fill']}(view_size, {padding_value}, {data}.scalar_type(), "
        f"shimgen::detail::layout_of({data}), {data}.device());",
        f"const torch::stable::Tensor lengths = {f['blank']}(sizes_t, {{max_batch_size}});",
        f'shimgen::detail::pad_packed_check_runs("{op}", sizes);',
        "int64_t data_offset = 0;",
        "int64_t prev_batch_size = max_batch_size;",
        "int64_t prev_i = 0;",
        "for (int64_t i = 0; i <= max_real_seq_length; ++i) {",
        "const int64_t batch_size = i != max_real_seq_length ? sizes[i] : 0;",
        "if (batch_size != prev_batch_size) {",
        "const int64_t l = prev_batch_size * (i - prev_i);",
        f"const torch::stable::Tensor tmp = {part}({data}, 0, data_offset, data_offset + l);",
        "view_size[0] = i - prev_i;",
        "view_size[1] = prev_batch_size;",
        f"const torch::stable::Tensor rows = {part}({part}(output, 0, prev_i, i), 1, 0, prev_batch_size);",
        f"{f['write']}(rows, {f['shape']}(tmp, view_size));",
        "data_offset += l;",
        "prev_i = i;",
        "}",
        "prev_batch_size = batch_size;",
        "}",
        "shimgen::detail::pad_packed_lengths(lengths, sizes);",
        f"if ({batch_first}) {{",
        f"output = {f['swap']}(output, 0, 1);",
        "}",
        "return std::make_tuple(output, lengths);"])


def _pad_packed_doc(rule: dict) -> list[str]:
    return ["Route: aten computes it with dispatching calls (PackedSequence.cpp): batch_sizes made contiguous and "
            "read, the output full of padding_value with data's options, then per run of equal batch sizes a slice "
            "of data viewed and copied into a slice of the output, the lengths, and a transpose for batch_first; "
            "so does this wrapper, by the same calls in the same order through their wrappers (proven equal, "
            f"gradients included, on torch {', '.join(map(str, rule['proven']))}).",
            "Batch sizes that grow or are negative (aten writes its lengths out of bounds there) and a padding "
            "value full's wrapper refuses raise an error."]


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
