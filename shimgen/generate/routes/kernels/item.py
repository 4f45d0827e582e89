"""Kernels that read or compute a number. `item_scalar` (item.default): no dispatcher returns a Scalar, so the
wrapper calls libtorch's shim.h function aoti_torch_item_<dtype> of self's dtype (exported from 2.9; each calls
Tensor::item(), which dispatches) and gives the number the kind aten's Scalar has (scalar.h item_scalar_select);
complex128 has no such shim and is refused. The prover calls the same functions through ctypes.
`_local_scalar_dense` is no such row: it reads the first element of a tensor of any size, where item raises (the
prover found it); its row is kernel `first_scalar`, item_scalar of aten::select.int(aten::flatten.using_ints(self),
0, 0).

`result_type_numbers` (result_type.Scalar_Tensor, result_type.Scalar_Scalar): no dispatcher carries their numbers,
and the answer is ATen's result_type with the numbers as wrapped numbers, which scalar.h's wrapped_numbers_dtype
computes from the promotion table and libtorch's default dtype (no aten call but that one); a complex number with a
bfloat16 tensor is refused: aten's answer changed in 2.14 (ComplexFloat before, the enumerator 46 after), which the
prover found."""

from __future__ import annotations

from shimgen.generate.cpp_model import Wrapper
from shimgen.generate.routes.kernels import register
from shimgen.generate.routes.kernels.common import proven
from shimgen.generate.routes.kernels.select import Select


class ItemScalar(Select):
    def __init__(self, name: str, mirror: str):
        super().__init__(name, prover="prove_item_scalar", mirror=mirror)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return [f"Route: libtorch's C shim aoti_torch_item_<dtype> of self's dtype (shim.h; it calls "
                "Tensor::item(), a dispatching call), the number with the kind aten's Scalar has for that dtype "
                f"(shimgen::detail::item_scalar_select; proven equal on torch {proven(rule)}).",
                "A complex128 (or float8, ...) tensor raises an error: libtorch has no item shim for it."]


class FirstScalar(ItemScalar):
    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: the element at index (0, ..., 0), which aten reads from a tensor of any size, as "
                "aten::select.int of aten::flatten.using_ints, then libtorch's C shim aoti_torch_item_<dtype> "
                "of its dtype (shimgen::detail::first_scalar_select; proven equal on torch "
                f"{proven(rule)}).",
                "A complex128 (or float8, ...) tensor raises an error: libtorch has no item shim for it."]


class ResultTypeNumbers(Select):
    def __init__(self) -> None:
        super().__init__("result_type_numbers", prover="prove_result_type_numbers")

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: ATen's result_type over the arguments, the numbers as wrapped numbers (a floating-point "
                "one as libtorch's default dtype), computed from shimgen's promotion table (the measured "
                "torch.promote_types; shimgen::detail::result_type_numbers_select; proven equal on torch "
                f"{proven(rule)})."] + (
                    ["A complex number with a bfloat16 tensor raises an error: aten's answer changed in 2.14."]
                    if any(str(p.arg.type) == "Tensor" for p in w.params) else [])


register(ItemScalar("item_scalar", mirror="item_scalar_select"),
         FirstScalar("first_scalar", mirror="first_scalar_select"), ResultTypeNumbers())
