"""C shim signatures: how one operator overload looks as an `aoti_torch_aten_*` function.

The rules are torchgen's (`gen_aoti_c_shim.py`), driven by the conversion table's `c`, `aten` and returns
columns: arguments in schema order (out= arguments first for out variants), one `ret<i>` pointer per return
(none for in-place and out= variants), and the function named after the overload's unambiguous name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchgen.api.types import DispatcherSignature
from torchgen.api.types.signatures import CppSignatureGroup
from torchgen.model import Variant

from shimgen.errors import Refusal
from shimgen.parse import Op
from shimgen.table import Table

# Ops whose C shim may be called with null return pointers (outputs the caller does not want); torchgen's list.
_NULLABLE_RETURNS = (
    "_functional_sym_constrain_range",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "_thhn_fused_lstm_cell_backward_impl",
    "convolution_backward",
    "grid_sampler_2d_backward",
    "grid_sampler_3d_backward",
    "linear_backward",
)


@dataclass(frozen=True)
class CShim:
    op: Op
    function: str  # aoti_torch_aten_add_Tensor
    params: tuple[str, ...]  # "AtenTensorHandle self", ... , "AtenTensorHandle* ret0"
    aten_args: tuple[str, ...]  # expressions rebuilding the ATen arguments
    backend_call: str  # at::add
    ret_assignments: tuple[str, ...]  # "*ret0 = new_tensor_handle(std::move(tmp_result));"

    @property
    def declaration(self) -> str:
        return f"AOTITorchError {self.function}({', '.join(self.params)})"


def shim_name(op: Op) -> str:
    return f"aoti_torch_aten_{op.schema.name.unambiguous_name()}"


def c_arguments(op: Op, table: Table) -> list:
    """Schema arguments in C shim order: out= arguments first for out variants (their returns are dropped)."""
    args = op.schema.arguments
    return [*args.out, *args.flat_non_out] if op.schema.is_out_fn() else list(args.flat_all)


def has_c_returns(op: Op) -> bool:
    return not op.schema.is_out_fn() and not op.schema.name.name.inplace


def build(op: Op, table: Table) -> CShim:
    """The C shim for `op`, or Refusal when a type has no C representation."""
    params: list[str] = []
    aten_args: list[str] = []
    for a in c_arguments(op, table):
        row = table.argument(a.type, op.name, a.name)
        if not row.c:
            raise Refusal(f"type {a.type} has no C shim representation: {row.c_refuse}", op.name, a.name)
        params += [row.fill(p, a.name) for p in row.c]
        expr = row.aten_out if (a.is_write and row.aten_out) else row.aten
        if row.aten_default and a.default is not None and re.fullmatch(r"-?\d+", a.default):
            expr = row.aten_default
        aten_args.append(row.fill(expr, a.name, default=a.default or ""))

    assignments: list[str] = []
    if has_c_returns(op):
        nullable = any(n in op.schema.name.unambiguous_name() for n in _NULLABLE_RETURNS)
        single = len(op.schema.returns) == 1
        for i, r in enumerate(op.schema.returns):
            row = table.ret(r.type, op.name, f"return {i}")
            if not row.c:
                raise Refusal(f"{row.c_refuse}", op.name, f"return {i}")
            params.append(f"{row.c} ret{i}")
            value = "tmp_result" if single else f"std::get<{i}>(tmp_result)"
            assign = f"*ret{i} = {row.fill(row.aten, value=value)};"
            assignments.append(f"if (ret{i}) {{ {assign} }}" if nullable else assign)

    return CShim(op, shim_name(op), tuple(params), tuple(aten_args), backend_call(op), tuple(assignments))


def backend_call(op: Op) -> str:
    """The ATen function the shim definition calls (torchgen's choice; `at::_ops::` where no at:: function exists)."""
    f = op.f
    sig = DispatcherSignature.from_schema(f.func)
    if Variant.function not in f.variants or f.manual_cpp_binding:
        if not (sig.symint and f.func.has_symint()) or f.manual_cpp_binding:
            return f"at::_ops::{f.func.name.unambiguous_name()}::call"
    group = CppSignatureGroup.from_native_function(f, method=False, fallback_binding=False)
    cpp = group.symint_signature if (sig.symint and f.func.has_symint() and group.symint_signature) else group.signature
    if Variant.function not in f.variants:
        return f"at::symint::{cpp.name().removesuffix('_symint')}<c10::SymInt>"
    return f"at::{cpp.name()}"
