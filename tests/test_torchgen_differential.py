"""Differential test: shimgen's C shim declarations against torchgen's own `gen_aoti_c_shim`, over every schema
of the installed torch's native_functions.yaml.

The torchgen side is independent of shimgen's parser: torchgen's `parse_native_yaml` reads the yaml, and
`gen_declaration_and_definition` declares each schema the way PyTorch generates c_shim_aten.h. The shimgen side
selects each overload by name (`NativeYaml.select`) and builds it with `sig_c.build`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import pytest
import torchgen
import torchgen.gen_aoti_c_shim as aoti
from torchgen.gen import parse_native_yaml
from torchgen.model import BaseTy, BaseType, FunctionSchema, NativeFunction, Variant

from shimgen.generate import parse
from shimgen.generate.cpp_model import CShim
from shimgen.generate.signatures import c as sig_c
from shimgen.generate import table as table_mod
from shimgen.base.errors import Refusal

# Schemas torchgen refuses (NotImplementedError/AssertionError) but shimgen declares. Expected to be EMPTY for
# torch 2.13, and the test pins that:
# - torchgen's C types cover every BaseType shimgen maps to C (Tensor, bool, int, SymInt, Scalar, float, str,
#   DeviceIndex, Layout, MemoryFormat, ScalarType, Generator, Device), so e.g. `result_type` (a ScalarType
#   return) is declared by both, with the same `int32_t* ret0`.
# - every type torchgen refuses as an argument (Storage, Stream, ...) the conversion table refuses too, and the
#   only returns torchgen refuses besides those (QScheme, SymBool) are `Tensor[]` returns (split, unbind,
#   _foreach_*, ...), whose table row has no C shim representation (`c: null`): shimgen reaches them through
#   the boxed dispatcher only, never with a C shim of its own invention.
# A schema added here is a C shim PyTorch's generator cannot produce; explain it in the conversion table first.
EXPECTED_SHIMGEN_ONLY: frozenset[str] = frozenset()


@dataclass
class Outcome:
    identical: list[str] = field(default_factory=list)
    different: list[tuple[str, str, str]] = field(default_factory=list)  # (op, shimgen, torchgen)
    torchgen_refused: dict[str, str] = field(default_factory=dict)  # op -> torchgen's reason
    shimgen_refused: dict[str, str] = field(default_factory=dict)  # op -> shimgen's one-line reason
    shimgen_only: dict[str, str] = field(default_factory=dict)  # op -> shimgen's declaration
    # per op torchgen can declare: (NativeFunction, shimgen CShim, torchgen definition built with shimgen's call)
    pairs: dict[str, tuple[NativeFunction, CShim, str]] = field(default_factory=dict)
    schemas: dict[str, FunctionSchema] = field(default_factory=dict)  # every op, as torchgen parsed it


def _torchgen_functions(yaml_path: str) -> list[NativeFunction]:
    tags = os.path.join(os.path.dirname(yaml_path), "tags.yaml")
    return list(parse_native_yaml(yaml_path, tags, skip_native_fns_gen=True).native_functions)


def _op_name(f: NativeFunction) -> str:
    return f"{f.func.name.name}.{f.func.name.overload_name or 'default'}"


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    yaml_path = parse.default_yaml_path()
    assert os.path.dirname(torchgen.__file__) in yaml_path
    functions = _torchgen_functions(yaml_path)
    native = parse.NativeYaml(yaml_path)
    table = table_mod.load()
    assert sorted(native.all_op_names()) == sorted(_op_name(f) for f in functions), "shimgen's index != torchgen's"

    native.select(sorted(native.by_name), table, notes=[])  # the whole file's parse, once: each select below reads it
    out = Outcome()
    aoti.declaration_definition_cache.clear()
    try:
        for f in functions:
            name = _op_name(f)
            out.schemas[name] = f.func
            shim: CShim | None = None
            try:
                [op] = native.select([name], table)
                shim = sig_c.build(op, table)
            except Refusal as e:
                shim_reason = e.line()
            try:
                backend_call = aoti.gen_static_dispatch_backend_call(f)
                declaration, _ = aoti.gen_declaration_and_definition(f.func, "aten", backend_call, {})
            except (NotImplementedError, AssertionError) as e:
                out.torchgen_refused[name] = str(e)
                if shim is None:
                    out.shimgen_refused[name] = shim_reason
                else:
                    out.shimgen_only[name] = shim.declaration
                continue
            if shim is None:
                out.shimgen_refused[name] = shim_reason
                continue
            mine = f"AOTI_TORCH_EXPORT {shim.declaration};"
            if mine == declaration:
                out.identical.append(name)
                _, definition = aoti.gen_declaration_and_definition(f.func, "aten", shim.backend_call, {})
                out.pairs[name] = (f, shim, definition)
            else:
                out.different.append((name, mine, declaration))
    finally:
        aoti.declaration_definition_cache.clear()
    print(
        f"\ntorchgen differential over {len(functions)} schemas of torch's native_functions.yaml: "
        f"{len(out.identical)} identical, {len(out.different)} different, "
        f"{len(out.torchgen_refused)} torchgen-refused "
        f"({len(out.torchgen_refused) - len(out.shimgen_only)} refused by both, {len(out.shimgen_only)} "
        f"declared by shimgen only), {len(out.shimgen_refused)} shimgen-refused"
    )
    return out


def test_every_torchgen_declaration_is_identical(outcome: Outcome) -> None:
    assert outcome.different == []
    # shimgen never refuses a schema torchgen can declare
    assert set(outcome.shimgen_refused) <= set(outcome.torchgen_refused)
    assert len(outcome.identical) > 2000  # 2457 for torch 2.13.0


def test_schemas_torchgen_refuses(outcome: Outcome) -> None:
    assert set(outcome.shimgen_only) == EXPECTED_SHIMGEN_ONLY, outcome.shimgen_only
    # Both refuse the rest; say why shimgen does (one line each, naming the argument or return).
    assert outcome.torchgen_refused
    for name, reason in outcome.shimgen_refused.items():
        assert name in reason and "\n" not in reason
    tensor_list_returns = {
        n for n in outcome.shimgen_refused if any(r.type.is_list_like() for r in outcome.schemas[n].returns)
    }
    assert len(tensor_list_returns) > 100  # split, unbind, _foreach_*, ... (122 in 2.13)
    for n in tensor_list_returns:
        assert "return" in outcome.shimgen_refused[n]


def _normalize(text: str) -> str:
    return " ".join(text.split())


def test_definitions_match_torchgen_up_to_documented_fixes(outcome: Outcome) -> None:
    """The shim definitions (argument conversions, the ATen call, return assignments) are torchgen's too, except
    for two deliberate fixes that make torchgen's text compile, and one that makes integral tensors work:

    1. Where ATen has no `at::` function for the overload (method-only variants, manual C++ bindings), torchgen
       still writes `at::<name>(...)`; shimgen calls `at::_ops::<overload>::call(...)` (exercised by
       test_c_shim_compile.py with unfold.default).
    2. A ScalarType return is written as `static_cast<int32_t>(...)`; torchgen assigns the enum to an int32_t.
    3. A Scalar argument with an integral schema default (`alpha=1`) passes a value equal to that default as the
       integer Scalar aten gets when the argument is omitted (conversion table: Scalar `aten_default`); torchgen
       passes the double, which makes aten reject integral tensors. test_c_shim_compile.py runs it on int64.
    """
    assert len(outcome.pairs) == len(outcome.identical)
    rerouted = []
    defaulted = 0
    for name, (f, shim, torchgen_definition) in outcome.pairs.items():
        torchgen_call = aoti.gen_static_dispatch_backend_call(f)
        if shim.backend_call != torchgen_call:
            assert Variant.function not in f.variants or f.manual_cpp_binding, name
            assert shim.backend_call == f"at::_ops::{f.func.name.unambiguous_name()}::call", name
            rerouted.append(name)
        assignments = list(shim.ret_assignments)
        for i, r in enumerate(f.func.returns):
            if r.type == BaseType(BaseTy.ScalarType) and assignments:
                value = "tmp_result" if len(f.func.returns) == 1 else f"std::get<{i}>(tmp_result)"
                fixed = f"static_cast<int32_t>({value})"
                assert fixed in assignments[i], name
                assignments[i] = assignments[i].replace(fixed, value)
        aten_args = [
            re.sub(r"^(\w+) == (-?\d+) \? c10::Scalar\(static_cast<int64_t>\(\2\)\) : c10::Scalar\(\1\)$", r"\1", e)
            for e in shim.aten_args
        ]
        defaulted += aten_args != list(shim.aten_args)
        tmp = "auto tmp_result = " if assignments else ""
        mine = (
            f"{shim.declaration} {{ AOTI_TORCH_CONVERT_EXCEPTION_TO_ERROR_CODE({{ "
            f"{tmp}{shim.backend_call}( {', '.join(aten_args)} ); {' '.join(assignments)} }}); }}"
        )
        assert _normalize(mine) == _normalize(torchgen_definition), name
    assert rerouted, "expected some method-only overloads (e.g. unfold.default)"
    assert defaulted > 50, "expected Scalar alpha=1 defaults (add.Tensor, sub.Tensor, addmm, ...)"
    assert "unfold.default" in rerouted


def test_installed_shims_need_no_fix(outcome: Outcome) -> None:
    """The overloads libtorch itself ships (torchgen's aten_shimified_ops) get torchgen's exact call (fix 3 above
    may still apply to their Scalar arguments: subtract.Tensor's alpha)."""
    from torchgen.aoti.fallback_ops import aten_shimified_ops

    for key in aten_shimified_ops:
        name = key.removeprefix("aten.")
        f, shim, _ = outcome.pairs[name]
        assert shim.backend_call == aoti.gen_static_dispatch_backend_call(f), name
        assert re.fullmatch(r"at::[\w:<>]+", shim.backend_call)


def test_nullable_returns_are_torchgens_list() -> None:
    """data/c_shim.yaml's nullable_returns is the list torchgen's gen_aoti_c_shim matches (read from its source:
    torchgen keeps it inline in a function)."""
    import inspect

    source = inspect.getsource(aoti)
    block = source[source.index("ret_pointer_can_be_null = False"):]
    block = block[block.index("for name in (") : block.index("):")]
    assert set(re.findall(r'"(\w+)"', block)) == set(sig_c.nullable_returns())
