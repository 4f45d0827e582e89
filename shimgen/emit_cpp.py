"""Emit torch/csrc/stable/ops.h: one inline torch::stable wrapper per selected overload, plus upstream's helpers.

The wrappers of each C++ name live in torch/csrc/stable/ops/<name>.h (as ATen's ATen/ops/<op>.h), which
includes the shared prelude (torch/csrc/stable/shimgen/ops_prelude.h) and the headers of the names its bodies
call; ops.h includes them all."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shimgen import scalars, sig_c
from shimgen.plan import WORLDS, Plan, World
from shimgen.sig_cpp import (
    active,
    Extra,
    Param,
    Variant,
    Wrapper,
    dispatcher_call_versions,
    extras,
    gone,
    stack_default,
    target_wrapper,
    wrappers,
)
from shimgen.templates import render
from shimgen.versions import FIRST_STABLE, VERSIONED_DISPATCHER, Version, macro_definitions

HEADER = "torch/csrc/stable/ops.h"
SCALAR_HEADER = "torch/csrc/stable/shimgen/scalar.h"
PRELUDE_HEADER = "torch/csrc/stable/shimgen/ops_prelude.h"
OP_HEADERS = "torch/csrc/stable/ops/"


def op_header(name: str) -> str:
    """The header holding the wrappers named `name`."""
    return f"{OP_HEADERS}{name}.h"


def read_wrapper_headers(out: str) -> str:
    """ops.h, its prelude and every per-name header in the output folder out, as one text (a build's digest)."""
    import os

    paths = [HEADER, PRELUDE_HEADER]
    ops_dir = os.path.join(out, OP_HEADERS)
    paths += [OP_HEADERS + n for n in sorted(os.listdir(ops_dir))] if os.path.isdir(ops_dir) else []
    texts = []
    for rel in paths:
        try:
            with open(os.path.join(out, rel), encoding="utf-8", errors="replace") as f:
                texts.append(f"{rel}\n{f.read()}")
        except OSError:
            texts.append(f"{rel} missing\n")
    return "".join(texts)


def wrapper_texts(files: dict[str, str]) -> str:
    """ops.h and every per-name header of an output, as one text (for readers of the wrappers' comments)."""
    return "".join(text for path, text in sorted(files.items())
                   if path == HEADER or (path.startswith(OP_HEADERS) and path.endswith(".h")))


@dataclass(frozen=True)
class _Rendered:
    doc: list[str]
    gate_open: str | None
    gate_close: str | None
    signature: str
    body: str
    deleted: bool = False  # `signature = delete;`, no body
    hidden: str | None = None  # a form this build cannot call: a template whose static_assert says why
    name: str = ""  # the C++ name: which torch/csrc/stable/ops/<name>.h holds it
    calls: tuple[str, ...] = ()  # the other wrapper names its body calls (their headers come first)


def gate(v: Variant) -> tuple[str | None, str | None]:
    conds = []
    if v.start > FIRST_STABLE:
        conds.append(f"TORCH_FEATURE_VERSION >= {v.start.macro}")
    if v.end is not None:
        conds.append(f"TORCH_FEATURE_VERSION < {v.end.macro}")
    if not conds:
        return None, None
    text = " && ".join(conds)
    return f"#if {text}", f"#endif // {text}"


def signature(w: Wrapper, v: Variant) -> str:
    parts = []
    for p in w.kept(v):
        default = f" = {p.default}" if p.default is not None else ""
        parts.append(f"{p.cpp_type} {p.name}{default}")
    return f"inline {w.returns} {w.name}({', '.join(parts)})"


def doc(w: Wrapper, v: Variant, plan: Plan) -> list[str]:
    lines = [f"Stable wrapper of aten::{w.op.schema}", ""]
    lines.append(f"Minimum compatible version: PyTorch {w.since}.")
    lines.append(f"Build time minimum version: PyTorch {build_time_minimum(w, v)}.")
    if v.start != w.since:
        every = ", with every argument," if v.kept == len(w.params) else ""
        lines.append(f"This form{every} needs PyTorch {v.start}.")
    lowered = " and ".join(f"aten::{t}" for t in v.lowering)
    route = {
        "shim": f"libtorch's C shim {v.shim}",
        "dispatcher": "the boxed dispatcher",
        "sibling": f"{lowered}, with the numbers as 0-dim tensors promoting as aten's wrapped numbers",
        "generated_shim": f"shimgen's C shim {v.shim} (link the overlay library)",
        "equivalent": _equivalent_text(w, v),
    }[v.route]
    lines.append(f"Route: {route}.")
    if v.none_only:
        names = ", ".join(f"`{n}`" for n in v.none_only)
        lines.append(f"It carries {names} only as None (no libtorch route carries a value here): a call passing a "
                     "value raises a shimgen: error; SHIMGEN_OVERLAY gives a route that carries it.")
    leaky = [p for p in w.kept(v) if p.row.leaks_before and v.start < p.row.leaks_before and p.name not in v.none_only]
    if v.route == "dispatcher" and leaky:
        lines.append(f"On libtorch 2.10-2.13 the dispatcher leaks 48 bytes per call converting "
                     f"{', '.join('`' + p.name + '`' for p in leaky)} (a str; fixed in 2.14): a stable route beats "
                     "none. Define SHIMGEN_NO_LEAKY_STR to refuse such routes.")
    if v.route in ("shim", "generated_shim", "equivalent") and any(p.row.exact_c for p in w.kept(v)):
        if v.lowering:
            lines.append(f"Numbers the shim's double would change go to {lowered} instead, as 0-dim tensors.")
        else:
            lines.append("Numbers the shim's double would change raise an error (shimgen::Scalar).")
    dropped = w.params[v.kept :]
    if dropped and v.end is not None:
        names = ", ".join(p.name for p in dropped)
        defaults = ", ".join(p.arg.default or "None" for p in dropped)
        lines.append(f"This form, for releases before {v.end}, does not take {names}: aten gets their defaults "
                     f"({defaults}).")
    if v.route == "dispatcher" and len(v.stack) > len(w.op.schema.arguments.flat_all):
        later = ", ".join(a.name for a in v.stack[len(w.op.schema.arguments.flat_all) :])
        lines.append(f"The stack also carries {later} (their defaults), which newer releases read.")
    end = gone(w, plan)
    if end is not None and v is w.variants[-1]:
        lines.append(f"{end[1].capitalize()} in PyTorch {end[0]}: an extension using it fails on libtorch >= "
                     f"{end[0]}.")
    return lines


# The oldest torch whose stable headers compile the generated ops.h at all: it includes
# torch/csrc/stable/generator.h, new in 2.13's headers
# (tests/test_history.py compiles it against every runtime's headers it finds).
HEADERS_FLOOR = Version(2, 13)


def _equivalent_text(w: Wrapper, v: Variant) -> str:
    if v.route != "equivalent":
        return ""
    rule = scalars.load().equivalents[w.op.name]
    args = ", ".join(f"{k}={x}" for k, x in rule["args"].items())
    return (f"libtorch's C shim {v.shim}, as aten computes aten::{w.op.name}: aten::{rule['via']}({args}) (proven "
            f"equal, gradients included, on torch {', '.join(rule['proven'])}: python -m shimgen.scalars equivalents)")


def equivalent_body(w: Wrapper, v: Variant, plan: Plan) -> str:
    """The call of the equivalent overload's libtorch C shim, the arguments mapped (a negated number: -double)."""
    from shimgen.sig_cpp import op_named

    rule = scalars.load().equivalents[w.op.name]
    via = op_named(rule["via"], plan)
    assert via is not None
    kept = {p.name: p for p in w.kept(v)}
    lines: list[str] = []
    args: list[str] = []
    for a in sig_c.c_arguments(via)[: v.shim_nargs]:
        expr = rule["args"][a.name]
        p = kept[expr.lstrip("-")]
        if p.row.prelude:
            lines.append(p.row.fill(p.row.prelude, p.name))
        values = [p.row.fill(e, p.name) for e in p.row.to_c]
        args += [f"-{x}" for x in values] if expr.startswith("-") else values
    locals_, addrs, ret = _returns_from_c(w, plan)
    lines += locals_
    lines.append(f"SHIMGEN_CHECK({v.shim}({', '.join(args + addrs)}));")
    if ret:
        lines.append(ret)
    return "\n".join(lines)


def build_time_minimum(w: Wrapper, v: Variant) -> Version:
    """The oldest torch whose headers compile this form: its start (the TORCH_FEATURE_VERSION it needs) and the
    headers the generated ops.h needs at all. Extensions build with a recent torch and set TORCH_TARGET_VERSION
    for older runtimes, as PyTorch recommends."""
    return max(v.start, HEADERS_FLOOR)


# ---- bodies --------------------------------------------------------------------------------------------------


def _returns_from_c(w: Wrapper, plan: Plan) -> tuple[list[str], list[str], str]:
    """(locals declared before the shim call, their &addresses, the return statement)."""
    op = w.op
    if op.schema.is_out_fn():
        return [], [], _return_outs(w)
    if op.schema.name.name.inplace:
        return [], [], "return self;" if op.schema.returns else ""
    locals_, addrs, values = [], [], []
    for i, r in enumerate(op.schema.returns):
        row = plan.table.ret(r.type, op.name, f"return {i}")
        locals_.append(row.fill(row.c_local, f"ret{i}"))
        addrs.append(f"&ret{i}")
        values.append(row.fill(row.from_c, f"ret{i}"))
    if not values:
        return locals_, addrs, ""
    if len(values) == 1:
        return locals_, addrs, f"return {values[0]};"
    return locals_, addrs, f"return std::make_tuple({', '.join(values)});"


def _return_outs(w: Wrapper) -> str:
    outs = [a.name for a in w.op.schema.arguments.out]
    if w.returns == "void":
        return ""
    if len(outs) == 1:
        return f"return {outs[0]};"
    return f"return std::make_tuple({', '.join(outs)});"


def shim_body(w: Wrapper, v: Variant, plan: Plan) -> str:
    kept = {p.name: p for p in w.kept(v)}
    lines: list[str] = []
    args: list[str] = []
    for a in sig_c.c_arguments(w.op)[: v.shim_nargs]:
        row = plan.table.argument(a.type, w.op.name, a.name)
        p = kept.get(a.name)
        if p is None:  # dropped: None is a null pointer; its length / device index is 0
            args += ["nullptr"] + ["0"] * (len(row.c) - 1)
            continue
        if row.prelude:
            lines.append(row.fill(row.prelude, a.name))
        args += [row.fill(e, a.name) for e in row.to_c]
    locals_, addrs, ret = _returns_from_c(w, plan)
    lines += locals_
    call = f"{v.shim}({', '.join(args + addrs)})"
    lines.append(f"SHIMGEN_CHECK({call});")
    if ret:
        lines.append(ret)
    return "\n".join(lines)


def dispatcher_body(w: Wrapper, v: Variant, plan: Plan) -> str:
    op = w.op
    kept = {p.name: p for p in w.kept(v)}
    items = []
    lines = []
    for name in v.none_only:  # carried only as None (sig_cpp.Variant.none_only)
        p = kept[name]
        why = (f"libtorch's boxed dispatcher carries this {p.arg.type} only as None at this TORCH_TARGET_VERSION "
               "and no other libtorch route carries the op: define SHIMGEN_OVERLAY and link libshimgen_overlay "
               "(rebuilt for each torch release)")
        lines.append(f'if ({name}.has_value()) {{\nshimgen::detail::refuse("{op.name}", "{name}", {name}, "{why}");\n}}')
    for a in v.stack:  # the boxed stack follows the schema's order (see sig_cpp.stack_layout)
        p = kept.get(a.name)
        if p is not None and p.name in v.none_only:
            value = "std::nullopt"
        else:
            value = p.row.stack_value(a.name) if p else _pushed_default(op, plan, a)
        items.append(f"torch::stable::detail::from({value})")
    n = max(len(items), len(op.schema.returns), 1)
    lines.append(f"std::array<StableIValue, {n}> stack{{{', '.join(items)}}};")
    old, new = dispatcher_call_versions(v)
    name, overload = op.aten_name, op.overload
    new_call = (
        f'SHIMGEN_CHECK(torch_call_dispatcher("{name}", "{overload}", stack.data(), '
        f"TORCH_ABI_VERSION));"
    )
    old_call = f'SHIMGEN_CHECK(aoti_torch_call_dispatcher("{name}", "{overload}", stack.data()));'
    if old and new:
        lines += [f"#if TORCH_FEATURE_VERSION >= {VERSIONED_DISPATCHER.macro}", new_call, "#else", old_call,
                  f"#endif // TORCH_FEATURE_VERSION >= {VERSIONED_DISPATCHER.macro}"]
    else:
        lines.append(new_call if new else old_call)
    lines += _returns_from_stack(w, plan)
    return "\n".join(lines)


def _returns_from_stack(w: Wrapper, plan: Plan) -> list[str]:
    op = w.op
    rets = op.schema.returns
    if op.schema.is_out_fn():
        # The stack holds new references to the out tensors: release them and return the caller's own.
        lines = [f"(void)torch::stable::detail::to<torch::stable::Tensor>(stack[{i}]);" for i in range(len(rets))]
        return lines + [r for r in [_return_outs(w)] if r]
    types = [plan.table.ret(r.type, op.name, f"return {i}").cpp for i, r in enumerate(rets)]
    values = [f"torch::stable::detail::to<{t}>(stack[{i}])" for i, t in enumerate(types)]
    if not values:
        return []
    if len(values) == 1:
        return [f"return {values[0]};"]
    return [f"return std::make_tuple({', '.join(values)});"]


def _pushed_default(op, plan: Plan, a) -> str:
    """stack_default's value, converted as the table's `stack` column says where from() does not take the
    wrapper's C++ type (a std::string_view default goes on the stack as a std::string)."""
    value = stack_default(op, plan, a)
    row = plan.table.argument(a.type, op.name, a.name)
    return row.fill(row.stack, value) if (row.stack and value != "std::nullopt") else value


# ---- Scalars (shimgen/scalars.py) -----------------------------------------------------------------------------


def _tensor_operands(w: Wrapper, v: Variant) -> list[Param]:
    """The Tensor parameters of the call (not out=): the operands of its type promotion."""
    return [p for p in w.kept(v) if str(p.arg.type) == "Tensor" and not p.is_out]


def exactness(w: Wrapper, v: Variant, plan: Plan) -> tuple[list[str], list[tuple[str, str]]]:
    """(statements, [(parameter, condition)]): when the variant's C shim carries each number exactly."""
    # The floating clause reads the Tensor arguments' dtypes: it needs at least one, and no tensor lists.
    lists = any(str(a.type).startswith("Tensor") and "[" in str(a.type) for a in w.op.schema.arguments.flat_all)
    proven = w.op.name in scalars.load().int_as_double and not lists and bool(_tensor_operands(w, v))
    prelude: list[str] = []
    checks: list[tuple[str, str]] = []
    for p in w.kept(v):
        row = p.row
        if not row.exact_c:
            continue
        conds = [row.fill(row.exact_c, p.name)]
        default = p.arg.default or ""
        if v.route == "generated_shim" and row.exact_c_default and row.aten_default and default.lstrip("-").isdigit():
            conds.append(row.fill(row.exact_c_default, p.name, default=default))
        if proven and row.exact_c_floating:
            conds.append(f"floating && {row.fill(row.exact_c_floating, p.name)}")
        checks.append((p.name, " || ".join(conds)))
    if proven and checks:
        tensors = ", ".join(f"&{t.name}" for t in _tensor_operands(w, v))
        n = len(_tensor_operands(w, v))
        prelude.append(f"const bool floating = shimgen::detail::all_floating<{n}>({{{tensors}}});")
    return prelude, checks


def lowered_body(w: Wrapper, v: Variant, plan: Plan) -> str:
    """The call lowered to the Tensor sibling (numbers as 0-dim tensors) or to a composition."""
    comp = scalars.load().compositions.get(w.op.name)
    if comp is not None:
        return _composition_body(w, v, plan, comp, next(p for p in w.kept(v) if p.row.stand_in))
    target = target_wrapper(v.lowering[0], plan)
    assert target is not None
    theirs = {p.name: str(p.arg.type) for p in target.params}
    numbers = [p for p in w.kept(v) if p.row.stand_in and theirs.get(p.name) == p.row.stand_in]
    operands = _tensor_operands(w, v)
    lines = [
        f"const auto dtypes = shimgen::detail::stand_in_dtypes<{len(operands)}, {len(numbers)}>(",
        f'"{w.op.name}", {scalars.load().cells.get(w.op.name, 0):#x}, {scalars.load().cells_fit.get(w.op.name, 0):#x}, '
        f'{{{", ".join(f"shimgen::detail::operand({t.name})" for t in operands)}}}, '
        f'{{{", ".join(_number_pointer(p) for p in numbers)}}}, {{{", ".join(chr(34) + p.name + chr(34) for p in numbers)}}});',
    ]
    index = {p.name: i for i, p in enumerate(numbers)}
    args = [f"shimgen::detail::number_tensor({p.name}, dtypes[{index[p.name]}])" if p.name in index else p.name
            for p in w.kept(v)]
    call = f"{target.name}({', '.join(args)})"
    lines.append(f"return {call};" if w.returns != "void" else f"{call};")
    return "\n".join(lines)


def _number_pointer(p: Param) -> str:
    return f"{p.name}.has_value() ? &*{p.name} : nullptr" if str(p.arg.type).endswith("?") else f"&{p.name}"


def _composition_body(w: Wrapper, v: Variant, plan: Plan, comp: dict[str, str], number: Param) -> str:
    create, fill = (target_wrapper(comp[k], plan) for k in ("create", "fill"))
    assert create is not None and fill is not None
    ours = {p.name for p in w.kept(v)}
    args = []
    for p in create.params:
        if p.name not in ours:
            break  # the rest keep their defaults
        if p.name == "dtype" and comp.get("infer_dtype") == number.name:
            args.append(f"{p.name}.has_value() ? {p.name} : shimgen::detail::full_dtype({number.name})")
        else:
            args.append(p.name)
    # The number goes through fill_'s own Scalar wrapper, which carries it exactly or refuses it.
    return "\n".join([
        f"torch::stable::Tensor result = {create.name}({', '.join(args)});",
        f"{fill.name}(result, {number.name});",
        "return result;",
    ])


def scalar_body(w: Wrapper, v: Variant, plan: Plan, own: str, why: str | None = None) -> str:
    """A C shim variant's body with its numbers checked: the shim where it carries them exactly, else the
    lowered call, else a `shimgen:` error naming the number."""
    prelude, checks = exactness(w, v, plan)
    if not checks:
        return own
    if v.lowering:
        cond = " && ".join(f"({c})" for _, c in checks) if len(checks) > 1 else checks[0][1]
        return "\n".join([*prelude, f"if ({cond}) {{", own, "}", lowered_body(w, v, plan)])
    why = why or ("the C shim carries it as a double, which changes what aten computes, and no Tensor overload can "
                  "stand in for it")
    refusals = [
        f'if (!({c})) {{\nshimgen::detail::refuse("{w.op.name}", "{name}", {name}, "{why}");\n}}'
        for name, c in checks
    ]
    return "\n".join([*prelude, *refusals, own])


def render_wrapper(w: Wrapper, v: Variant, plan: Plan) -> _Rendered:
    if v.route == "dispatcher":
        body = dispatcher_body(w, v, plan)
    elif v.route == "sibling":
        body = lowered_body(w, v, plan)
    elif v.route == "equivalent":
        why = (f"aten::{w.op.name}'s numbers reach libtorch only as a double, which changes what aten computes for "
               "non-floating tensors: define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for each torch "
               "release) for a route that carries them")
        body = scalar_body(w, v, plan, equivalent_body(w, v, plan), why)
    else:
        body = scalar_body(w, v, plan, shim_body(w, v, plan))
    g_open, g_close = gate(v)
    return _Rendered(doc(w, v, plan), g_open, g_close, signature(w, v), body, name=w.name,
                     calls=_calls(w, v, plan))


def _calls(w: Wrapper, v: Variant, plan: Plan) -> tuple[str, ...]:
    """The wrapper names a form's body calls: the Tensor sibling its numbers lower to, or a composition's."""
    if not v.lowering:
        return ()
    comp = scalars.load().compositions.get(w.op.name)
    targets = [target_wrapper(comp[k], plan) for k in ("create", "fill")] if comp else [target_wrapper(v.lowering[0], plan)]
    return tuple(t.name for t in targets if t is not None)


def _value_type(cpp_type: str) -> str:
    """`const std::optional<T>&` -> `std::optional<T>`: the type a forwarding overload constructs."""
    return cpp_type.removeprefix("const ").removesuffix("&")


def render_nullopt_overload(w: Wrapper, v: Variant, k: int) -> _Rendered:
    """The `std::nullopt_t` overload of a wrapper form (sig_cpp._with_nullopt_forwarding)."""
    ps = w.kept(v)
    parts, args = [], []
    for i, p in enumerate(ps):
        if i == k:
            parts.append(f"std::nullopt_t {p.name}")
            args.append(f"{_value_type(p.cpp_type)}({p.name})")
            continue
        default = f" = {p.default}" if (i > k and p.default is not None) else ""
        parts.append(f"{p.cpp_type} {p.name}{default}")
        args.append(p.name)
    doc = [
        f"{w.name}() with std::nullopt for {ps[k].name}: aten::{w.op.name}, as with upstream's ops.h. Another",
        f"overload of {w.name} takes a std::nullopt there too (ATen's at::{w.name} is ambiguous for this call).",
    ]
    g_open, g_close = gate(v)
    body = f"return {w.name}({', '.join(args)});"
    return _Rendered(doc, g_open, g_close, f"inline {w.returns} {w.name}({', '.join(parts)})", body, name=w.name)


def render_outf(w: Wrapper, v: Variant) -> _Rendered:
    """ATen's faithful form of an out= overload, `<name>_outf` (at::sum_outf): every argument, in the schema's
    order, the out tensors last. It calls the `_out` form with the very types it takes (an exact match)."""
    ps = w.kept(v)
    faithful = [p for p in ps if not p.is_out] + [p for p in ps if p.is_out]
    params = ", ".join(f"{p.cpp_type} {p.name}" for p in faithful)
    doc = [f"{w.name} with every argument and the out tensors last, as ATen's at::{w.name}f: aten::{w.op.name}."]
    g_open, g_close = gate(v)
    body = f"return {w.name}({', '.join(p.name for p in ps)});"
    return _Rendered(doc, g_open, g_close, f"inline {w.returns} {w.name}f({params})", body, name=w.name)


def render_extra(e: Extra, reason: str | None = None, returns: str | None = None) -> list[_Rendered]:
    """A hand-written overload (data/extra_overloads.yaml): forwarding to its target wrapper from the release
    that has it; before that, and where the target is not generated, deleted or left out."""
    params = ", ".join(f"{t} {n}" + (f" = {d}" if d is not None else "") for t, n, d in e.params)
    w = e.target
    what = "ATen's C++-only overload" if e.source.startswith("ATen") else "Upstream's convenience overload"
    intro = f"{what} of {e.name} ({e.source}), for aten::{e.target_op}"
    returns = w.returns if w is not None else (returns or "void")
    why = (f"torch::stable::{e.name}({', '.join(t for t, _, _ in e.params)}) calls aten::{e.target_op}, which "
           f"this build cannot call: {reason}" if reason else
           f"torch::stable::{e.name}({', '.join(t for t, _, _ in e.params)}) calls aten::{e.target_op}, which is "
           "not generated (add it to --ops)")
    deleted = _Rendered(
        [f"{intro}, which is not available here: a compile error saying why, so that such a call does not",
         f"reach another overload of {e.name}."],
        None, None, f"inline {returns} {e.name}({params})", "", name=e.name, hidden=why,
    )
    if w is None:
        return [deleted]
    doc = [f"{intro}, its other arguments defaulted.", "", f"Minimum compatible version: PyTorch {w.since}."]
    g_open, g_close = gate(Variant(w.variants[0].route, 0, w.since, w.variants[-1].end))
    body = f"return {w.name}({', '.join(e.call)});"
    result = [_Rendered(doc, g_open, g_close, f"inline {returns} {e.name}({params})", body, name=e.name,
                        calls=(w.name,))]
    if e.delete and w.since > FIRST_STABLE:
        d_open, d_close = gate(Variant(w.variants[0].route, 0, FIRST_STABLE, w.since))
        result.append(replace(deleted, gate_open=d_open, gate_close=d_close))
    return result


def _in_dependency_order(ws: list[Wrapper]) -> list[Wrapper]:
    """The wrappers in their order, except that a wrapper another one lowers its numbers to comes before it."""
    by_op = {w.op.name: w for w in ws}
    done: set[str] = set()
    ordered: list[Wrapper] = []

    def visit(w: Wrapper) -> None:
        if w.op.name in done:
            return
        done.add(w.op.name)
        for v in w.variants:
            for t in v.lowering:
                if t in by_op:
                    visit(by_op[t])
        ordered.append(w)

    for w in ws:
        visit(w)
    return ordered


# ---- what a build cannot call: hidden forms (README "Stable means libtorch alone") ------------------------------


def _blocker(w: Wrapper, v: Variant, level: Version, plan: Plan) -> str:
    """Why libtorch's own routes cannot carry form `v` of `w` at `level` (for a message)."""
    leaky = plan.world.leaky_str
    for p in w.kept(v):
        need = p.need("dispatcher", leaky)
        if need is None:
            return f"its `{p.name}` is a {p.arg.type}, which no released boxed dispatcher carries"
        if need > level:
            return f"its boxed dispatcher carries its `{p.name}` ({p.arg.type}) only from {need}"
    return "its boxed dispatcher cannot call it"


def why_hidden(op_name: str, level: Version, here: Wrapper | None, wide: Wrapper | None, plan: Plan) -> str:
    """Why an extension built in plan.world at `level` cannot call the op, and what to do (a compile error's
    message: the op, the reason, the remedy)."""
    op = (here or wide).op  # type: ignore[union-attr]
    later = next((v.start for v in (here.variants if here else ()) if v.start > level), None)
    at = plan.timeline(op)[level]
    if at.schema is None:
        timeline = sorted(plan.timeline(op).items())
        arrived = next((r for r, x in timeline if r > level and x.schema is not None), None)
        if arrived is not None:
            return (f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later or arrived} (aten::{op_name} arrived in "
                    f"{arrived})")
        gone_in = next((r for r, x in reversed(timeline) if r <= level and x.schema is not None), None)
        return f"aten::{op_name} is not in libtorch {level} (removed after {gone_in})"
    wv = (active(wide, level) or next((v for v in wide.variants if v.start > level), None)) if wide else None
    or_later = f", or target TORCH_TARGET_VERSION >= {later}" if later else ""
    if wv is None:
        return f"aten::{op_name}: no route carries it at this TORCH_TARGET_VERSION"
    if later is not None and later <= wv.start:
        return f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later} (no libtorch route carries it before)"
    at_level = max(level, wv.start)
    with_overlay = plan.in_world(World(overlay=True, leaky_str=plan.world.leaky_str))
    if not plan.world.overlay and active_in(op_name, with_overlay, at_level):
        from_ = f" with TORCH_TARGET_VERSION >= {wv.start}" if wv.start > level else ""
        return (f"aten::{op_name} has no libtorch route at this TORCH_TARGET_VERSION: libtorch ships no C shim for "
                f"it and {_blocker(wide, wv, at_level, plan)}. Define SHIMGEN_OVERLAY{from_} and link "  # type: ignore[arg-type]
                f"libshimgen_overlay (rebuilt for each torch release){or_later}")
    leaks = next((p for p in wide.kept(wv) if p.row.leaks_before and p.row.leaks_before > at_level), None)  # type: ignore[union-attr]
    if plan.world.leaky_str or leaks is None:
        return f"aten::{op_name} needs TORCH_TARGET_VERSION >= {later or wv.start} (no libtorch route carries it before)"
    return (f"aten::{op_name} reaches libtorch before 2.14 only through its boxed dispatcher, which leaks 48 bytes "
            f"per call converting its `{leaks.name}` ({leaks.arg.type}), and SHIMGEN_NO_LEAKY_STR refuses that "
            f"route: undefine it{or_later}")


def active_in(op_name: str, plan: Plan, level: Version) -> Variant | None:
    """The variant of op `op_name` serving `level` in plan's world (None: hidden there)."""
    by_op = plan.derived.get("wrappers_by_op")
    if by_op is None:
        by_op = plan.derived["wrappers_by_op"] = {x.op.name: x for x in wrappers(plan)[0]}
    w = by_op.get(op_name)  # type: ignore[union-attr]
    return active(w, level) if w is not None else None


def hidden_ranges(here: Wrapper | None, wide: Wrapper, plan: Plan) -> list[tuple[Version, Version | None, str]]:
    """[start, end) ranges of targeted releases where this world cannot call the op although it exists in some
    release, each with its message: before its first form (an op added later, a route that arrives later), in
    builds without an opt-in route (SHIMGEN_OVERLAY, leaky strings), after aten removed it."""
    levels = sorted({*plan.releases(), *(x for v in wide.variants for x in (v.start, v.end) if x),
                     *(x for v in (here.variants if here else ()) for x in (v.start, v.end) if x)})
    levels = [lv for lv in levels if lv >= FIRST_STABLE]
    ranges: list[tuple[Version, Version | None, str]] = []
    for lv in levels:
        if here is not None and active(here, lv) is not None:
            if ranges and ranges[-1][1] is None:
                ranges[-1] = (ranges[-1][0], lv, ranges[-1][2])
            continue
        if plan.timeline(wide.op)[lv].schema is None and not any(v.start > lv for v in wide.variants):
            msg = why_hidden(wide.op.name, lv, here, wide, plan)  # removed: say so
        else:
            msg = why_hidden(wide.op.name, lv, here, wide, plan)
        if ranges and ranges[-1][1] is None and ranges[-1][2] == msg:
            continue
        if ranges and ranges[-1][1] is None:
            ranges[-1] = (ranges[-1][0], lv, ranges[-1][2])
        ranges.append((lv, None, msg))
    return ranges


def render_hidden(w: Wrapper, v: Variant, start: Version, end: Version | None, message: str) -> _Rendered:
    """A form this build cannot call, as the caller would write it: a template whose static_assert fires only
    when a call reaches it (overload resolution among the forms that do exist is unchanged: a call they serve
    as well or better never instantiates it), printing the op, the reason and the remedy at the call site."""
    g_open, g_close = gate(Variant(v.route, 0, start, end))
    doc = [f"Not available in this build: {message}."]
    return _Rendered(doc, g_open, g_close, signature(w, v), "", name=w.name,
                     hidden=f"torch::stable::{w.name}: {message}")


def _render_world(plan: Plan, wide: dict[str, Wrapper]) -> tuple[dict[str, list[_Rendered]], set[Version]]:
    """Every form of every name as an extension built in plan.world sees it (hidden forms included)."""
    ws, _ = wrappers(plan)
    ws = _in_dependency_order(ws)
    here = {w.op.name: w for w in ws}
    planned = {op.name for op in plan.ops}
    wide = {name: w for name, w in wide.items() if name in planned}
    rendered: list[_Rendered] = []
    versions: set[Version] = set()
    hidden: dict[str, list[tuple[Version, Version | None, str]]] = {}
    order = [*ws, *(w for name, w in wide.items() if name not in here)]
    for w in order:
        mine = here.get(w.op.name)
        for v in (mine.variants if mine else ()):
            rendered.append(render_wrapper(mine, v, plan))  # type: ignore[arg-type]
            rendered += [render_nullopt_overload(mine, v, k) for k in mine.nullopt_at if k < v.kept]  # type: ignore[union-attr]
            if w.op.schema.is_out_fn():
                rendered.append(render_outf(mine, v))  # type: ignore[arg-type]
            versions |= {x for x in (v.start, v.end) if x is not None}
        full = wide.get(w.op.name)
        if full is None:
            continue
        ranges = hidden[w.op.name] = hidden_ranges(mine, full, plan)
        for start, end, message in ranges:
            form = mine or full
            v = active(full, start) or next((x for x in form.variants if x.start > start), form.variants[0])
            rendered.append(render_hidden(replace(full, name=form.name), v, start, end, _cpp_message(message)))
            versions |= {x for x in (start, end) if x is not None}
    mine = extras(ws)
    seen = {(e.target_op, e.params) for e in mine}
    mine += [e for e in extras(list(wide.values())) if (e.target_op, e.params) not in seen]
    for e in mine:
        reason = next((m for a, b, m in hidden.get(e.target_op, []) if a <= FIRST_STABLE), None)
        known = e.target or wide.get(e.target_op)
        returns = known.returns if known else None
        if e.target is not None and e.target.op.name not in here:
            e = replace(e, target=None)
        rendered += render_extra(e, _cpp_message(reason) if reason else None, returns)
    by_name: dict[str, list[_Rendered]] = {}
    for r in rendered:
        by_name.setdefault(r.name, []).append(r)
    return by_name, versions


def _cpp_message(text: str) -> str:
    """A message for a static_assert's string literal (quotes and backslashes escaped)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _world_condition(group: list[World]) -> str:
    """The preprocessor condition selecting exactly the worlds of `group` (among WORLDS)."""
    for attr, macro, positive in (("overlay", "SHIMGEN_OVERLAY", True), ("leaky_str", "SHIMGEN_NO_LEAKY_STR", False)):
        for value in (True, False):
            if set(group) == {w for w in WORLDS if getattr(w, attr) == value}:
                return f"defined({macro})" if value == positive else f"!defined({macro})"
    return " || ".join(f"({w.condition})" for w in group)


def emit(plan: Plan) -> dict[str, str]:
    ws, notes = wrappers(plan)
    wide = {w.op.name: w for w in wrappers(plan.in_world(WORLDS[0]))[0]}
    # Refusing leaky strings changes only the names with a str parameter: the other names are computed once.
    leaky = {w.name for w in wide.values() if any(p.row.leaks_before for p in w.params)}
    for world in WORLDS:
        if not world.leaky_str and ("world", world) not in plan.derived:
            some = [op for op in plan.ops if op.name in wide and wide[op.name].name in leaky]
            plan.derived[("world", world)] = replace(plan, ops=some, derived={}, world=world)  # type: ignore[index]
    worlds = {world: _render_world(plan.in_world(world), wide) for world in WORLDS}
    for world in WORLDS:
        if not world.leaky_str:
            same = worlds[World(world.overlay, True)][0]
            worlds[world][0].update({n: units for n, units in same.items() if n not in leaky})
    versions: set[Version] = {VERSIONED_DISPATCHER, Version(2, 11)}
    for _, vs in worlds.values():
        versions |= vs
    names = sorted({n for by_name, _ in worlds.values() for n in by_name})
    files = {HEADER: render("ops.h.j2", banner=plan.banner, names=names,
                            skipped=[*sorted(plan.notes), *notes], helper_names=set(names))}
    files[PRELUDE_HEADER] = render("ops_prelude.h.j2", banner=plan.banner, macros=macro_definitions(versions))
    for name in names:
        groups: list[tuple[list[World], list[_Rendered]]] = []
        for world, (by_name, _) in worlds.items():
            units = by_name.get(name, [])
            same = next((g for g in groups if g[1] == units), None)
            if same is None:
                groups.append(([world], units))
            else:
                same[0].append(world)
        blocks = []
        for k, (group, units) in enumerate(groups):
            if len(groups) == 1:
                blocks.append({"open": None, "close": None, "wrappers": units})
                continue
            cond = _world_condition(group)
            head = "#if" if k == 0 else "#elif"
            opener = "#else" if k == len(groups) - 1 else f"{head} {cond}"
            closer = "#endif" if k == len(groups) - 1 else None
            blocks.append({"open": opener, "close": closer, "wrappers": units})
        deps = sorted({c for _, units in groups for r in units for c in r.calls if c != name})
        files[op_header(name)] = render("ops_op.h.j2", banner=plan.banner, op_name=name, deps=deps, blocks=blocks)
    facts = scalars.load()
    index = {d: k for k, d in enumerate(facts.dtypes)}
    table = [[index[facts.promote[a, b]] if facts.promote[a, b] else -2 for b in facts.dtypes] for a in facts.dtypes]
    scalar_h = render("scalar.h.j2", banner=plan.banner, dtypes=facts.dtypes,
                      categories=[facts.category[d] for d in facts.dtypes], table=table)
    files[SCALAR_HEADER] = scalar_h
    return files
