"""The round-trip extension: every generated torch::stable wrapper registered as
`torch.ops.shimgen_roundtrip.<op>.<overload>`, plus the op descriptions the samples runner needs.

Each wrapper gets a kernel whose parameters follow the aten schema's order (the boxed stack's). The kernel
receives each argument as the conversion table's `box` type (default: the wrapper's own parameter type) and
calls the wrapper through a function pointer of the wrapper's exact signature, so the call can only reach that
overload. The op is defined with the aten schema, each type replaced by the table's `box_schema` (Scalar ->
float, SymInt -> int, ...).

The extension exercises the variant active at one targeted release: by default the installed torch's (the last
variant); for an older target (shimgen.proofs.verify.matrix builds one extension per target with
-DTORCH_TARGET_VERSION) the variant serving that release. Parameters that variant does not take are left out
of the kernel and the round-trip schema (the samples runner does not pass them: aten applies its defaults).
An argument whose boxed type the target's dispatcher cannot carry (a list or string before 2.10) reaches the
kernel as a tensor of its elements, decoded by shimgen_rt::decode (shimgen/proofs/verify/targeted.py encodes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from torchgen.model import Argument, Return, SchemaKind, Type

from shimgen.facts import releases
from shimgen.generate import routes
from shimgen.base.errors import Refusal
from shimgen.generate.emit.fmt import clang_format
from shimgen.generate.parse import NativeYaml, Op
from shimgen.generate.plan import Plan
from shimgen.generate.signatures.cpp import Variant, Wrapper, wrappers
from shimgen.generate.table import Row, Table, refusal_base
from shimgen.generate.templates import render
from shimgen.facts.versions import Version

NAMESPACE = "shimgen_roundtrip"
SOURCE = "shimgen_roundtrip.cpp"
# From this target on, STABLE_TORCH_ERROR_CODE_CHECK throws libtorch's own message (torch/csrc/stable/macros.h);
# before it, an extension only learns that the call failed.
ERROR_TEXT_SINCE = releases.load().error_text_since  # data/releases.yaml


@dataclass(frozen=True)
class Kernel:
    wrapper: Wrapper
    fn: str  # the kernel's C++ name
    schema: str  # the round-trip op's schema, as passed to m.def
    params: tuple[str, ...]  # "std::vector<int64_t> dim", in schema order
    returns: str  # the kernel's C++ return type
    pointer: str  # the wrapper's function pointer type
    args: tuple[str, ...]  # what the kernel passes to the wrapper, in C++ order
    unused: tuple[str, ...]  # parameters the variant does not take (not in the kernel; never passed)
    variant: Variant  # the variant exercised
    target: Version | None = None  # the targeted release (None: the installed torch's)
    decodes: tuple[str, ...] = ()  # statements decoding tensor-encoded arguments
    encoded: tuple[tuple[str, dict], ...] = ()  # (argument, how targeted.encode encodes it)

    @property
    def op(self) -> Op:
        return self.wrapper.op

    @property
    def schema_literal(self) -> str:
        """The schema as a C++ string literal."""
        return '"' + self.schema.replace("\\", "\\\\").replace('"', '\\"') + '"'

    @property
    def qualified(self) -> str:
        """The name m.impl takes: `add.Tensor`, or `amax` for the unnamed overload."""
        return str(self.op.schema.name)


def _arg_row(plan: Plan, op: Op, a: Argument) -> Row:
    return plan.table.argument(a.type, op.name, a.name)


def defaulted_number(row: Row, a: Argument) -> bool:
    """A Scalar boxed as a 0-dim tensor whose schema has a numeric default (`Scalar alpha=1`). A Tensor argument
    cannot default to a number, and a positional one may not follow a defaulted one (`histc(..., int bins=100,
    Scalar min=0, ...)`), so the round-trip schema says `Tensor? alpha=None`, the kernel takes an optional, and
    the runner always passes the number (the caller's, or the schema default boxed as one: runner.bind)."""
    return row.box_schema == "Tensor" and a.default is not None and a.default != "None"


def schema_argument(row: Row, a: Argument, box_schema: str | None = None) -> str:
    """One argument of the round-trip schema: the aten argument, its type replaced by the table's box_schema (or
    by `box_schema`: Tensor for an encoded list)."""
    if box_schema is None and defaulted_number(row, a):
        return f"Tensor? {a.name}=None"
    box_schema = box_schema or (row.fill(row.box_schema) if row.box_schema else None)
    if box_schema is None:
        return str(a)
    # A Tensor schema argument has no numeric default; an optional one keeps None.
    keeps = a.default is not None and (not box_schema.startswith("Tensor") or
                                       (box_schema.endswith("?") and a.default == "None"))
    default = f"={a.default}" if keeps else ""
    return f"{box_schema} {a.name}{default}"


def schema_return(row: Row, r: Return) -> str:
    if row.box_schema is None:
        return str(r)
    return row.fill(row.box_schema) + (f" {r.name}" if r.name else "")


def roundtrip_schema(op: Op, plan: Plan, keep: set[str] | None = None,
                     encoded: dict[str, dict] | None = None) -> str:
    """The round-trip op's schema: the arguments in `keep` (default all), encoded ones as tensors."""
    s = op.schema
    encoded = encoded or {}

    def text(a: Argument) -> str:
        enc = encoded.get(a.name)
        return schema_argument(_arg_row(plan, op, a), a, enc and ("Tensor?" if enc["optional"] else "Tensor"))

    def kept(args) -> list[Argument]:
        return [a for a in args if keep is None or a.name in keep]

    args = [text(a) for a in kept(s.arguments.flat_positional)]
    rest = kept([*s.arguments.flat_kwarg_only, *s.arguments.out])
    if rest:
        args.append("*")
    args += [text(a) for a in rest]
    rets = [schema_return(plan.table.ret(r.type, op.name, f"return {i}"), r) for i, r in enumerate(s.returns)]
    if len(rets) == 1 and not s.returns[0].name:
        ret_text = rets[0]
    else:
        ret_text = "(" + ", ".join(rets) + ")"
    return f"{s.name}({', '.join(args)}) -> {ret_text}"


def kernel_returns(op: Op, plan: Plan) -> str:
    rows = [plan.table.ret(r.type, op.name, f"return {i}") for i, r in enumerate(op.schema.returns)]
    types: list[str] = []
    for row in rows:
        t = row.box or row.cpp
        if t is None:
            raise Refusal("a return has no C++ type for the round-trip kernel", op.name)
        types.append(t)
    if not types:
        return "void"
    return types[0] if len(types) == 1 else "std::tuple<" + ", ".join(types) + ">"


def active_variant(w: Wrapper, target: Version) -> Variant | None:
    """The variant an extension targeting `target` compiles, or None (the wrapper is hidden there)."""
    for v in w.variants:
        if v.start <= target and (v.end is None or target < v.end):
            return v
    return None


def encoding(row: Row, table: Table, target: Version | None, op: str, arg: str) -> dict | None:
    """How the kernel receives an argument whose boxed type the target's dispatcher cannot carry (a list as a
    tensor of its elements, a string as its UTF-8 bytes), or None when it can. Refusal when neither works."""
    box_schema = row.fill(row.box_schema) if row.box_schema else row.key.replace("[N]", f"[{row.size}]")
    try:
        boxed = table.argument(box_schema, op, arg)
    except Refusal:
        boxed = row
    if target is None or (boxed.ivalue is not None and boxed.ivalue <= target):
        return None
    base, optional = refusal_base(box_schema), box_schema.endswith("?")
    box = row.fill(row.box) if row.box else re.sub(r"^const |&$", "", row.fill(row.cpp or "")).strip()
    if base == "str" and not box_schema.rstrip("?").endswith("]"):
        return {"dtype": "str", "optional": optional, "box": box}
    element = table.arguments.get(base)
    if element is not None and element.list_dtype and "[" in box_schema:
        return {"dtype": element.list_dtype, "size": row.size, "optional": optional, "box": box}
    raise Refusal(f"the round-trip kernel cannot receive {box_schema} through the {target} dispatcher", op, arg)


def kernel(w: Wrapper, plan: Plan, target: Version | None = None, v: Variant | None = None) -> Kernel:
    """The kernel exercising variant `v` (default: the one active at `target`, else the last one)."""
    op = w.op
    v = v or (w.variants[-1] if target is None else active_variant(w, target))
    if v is None:
        raise Refusal(f"no variant at {target}", op.name)
    by_name = {p.name: p for p in w.params}
    kept = w.kept(v)
    kept_names = {p.name for p in kept}
    params, decodes, encoded = [], [], []
    value = {p.name: p.name for p in kept}
    for a in op.schema.arguments.flat_all:
        if a.name not in kept_names:
            continue
        p = by_name[a.name]
        box = p.row.fill(p.row.box, a.name) if p.row.box else p.cpp_type
        if defaulted_number(p.row, a):
            box = "std::optional<torch::stable::Tensor>"
        enc = encoding(p.row, plan.table, target, op.name, a.name)
        if enc is None:
            params.append(f"{box} {a.name}")
            continue
        kind = "std::optional<torch::stable::Tensor>" if enc["optional"] else "const torch::stable::Tensor&"
        params.append(f"{kind} {a.name}")
        decodes.append(f"auto {a.name}_decoded = shimgen_rt::decode<{enc['box']}>({a.name});")
        value[a.name] = f"{a.name}_decoded"
        encoded.append((a.name, {k: enc.get(k) for k in ("dtype", "size", "optional")}))
    for i, r in enumerate(op.schema.returns):
        row = plan.table.ret(r.type, op.name, f"return {i}")
        if row.box_schema:  # returned boxed (a Scalar as a 0-dim tensor of its own dtype): that type's release
            row = plan.table.ret(Type.parse(row.box_schema), op.name, f"return {i}")
        if target is not None and (row.ivalue is None or row.ivalue > target) and not op.schema.is_out_fn():
            raise Refusal(f"the round-trip kernel cannot return {r.type} through the {target} dispatcher", op.name)
    pointer = f"{w.returns} (*)({', '.join(p.cpp_type for p in kept)})"
    args = tuple(f"shimgen_rt::pass<{p.cpp_type}>({value[p.name]})" for p in kept)
    unused = tuple(p.name for p in w.params if p.name not in kept_names)
    return Kernel(
        wrapper=w,
        fn=f"k_{op.schema.name.unambiguous_name()}",
        schema=roundtrip_schema(op, plan, kept_names, dict(encoded)),
        params=tuple(params),
        returns=kernel_returns(op, plan),
        pointer=pointer,
        args=args,
        unused=unused,
        variant=v,
        target=target,
        decodes=tuple(decodes),
        encoded=tuple(encoded),
    )


def kernels(plan: Plan, installed: Version, target: Version | None = None,
            device: str | None = None) -> tuple[list[Kernel], list[tuple[str, str]]]:
    """Kernels for every wrapper the installed torch compiles (or, with `target`, every wrapper an extension
    targeting that release compiles); (op, reason) for the wrappers left out. `device`: the device route's
    `torch::stable::<device>::` wrappers instead of the default ones."""
    if device is None:
        ws, notes = wrappers(plan)
        skipped = [("?", n) for n in notes]
    else:
        ws, skipped = routes.get(device).wrappers(plan, wrappers(plan)[0]), []
    form = f"{device}:: variant" if device else "variant"
    result = []
    for w in ws:
        level = target if target is not None else installed
        v = active_variant(w, level)
        if v is None:
            why = f"hidden at {target}: no {form} serves it" if target is not None else \
                f"no {form} of its wrapper serves torch {installed}, the installed one"
            skipped.append((w.op.name, why))
            continue
        try:
            result.append(kernel(replace(w, name=f"{device}::{w.name}") if device else w, plan, target, v))
        except Refusal as e:
            skipped.append((w.op.name, f"{device}:: {e.line()}" if device else e.line()))
    return result, skipped


def device_namespace(device: str) -> str:
    """The namespace the round-trip kernels of the device route's `device`:: wrappers register in."""
    return f"{NAMESPACE}_{device}"


# The dispatch keys the round-trip kernels are registered for. CompositeExplicitAutograd covers the dense, sparse,
# quantized and mkldnn CPU keys, but not a nested tensor's keys: without NestedTensorCPU and its autograd key
# (which has no fallthrough for a custom op) a call with a nested argument never reaches the wrapper (the runner
# reports it `unreached`). The kernels compute no gradients on any key: the wrapper's own aten calls do.
DISPATCH_KEYS = ("CompositeExplicitAutograd", "NestedTensorCPU", "AutogradNestedTensor")


def source(plan: Plan, ks: list[Kernel], namespace: str = NAMESPACE, includes: tuple[str, ...] = ()) -> str:
    return clang_format(render("roundtrip.cpp.j2", banner=plan.banner, namespace=namespace, kernels=ks,
                               includes=includes, dispatch_keys=DISPATCH_KEYS))


# ---- what the samples runner needs to know about each op ---------------------------------------------------


def _functional(op: Op, native: NativeYaml) -> str | None:
    """For an out= or in-place overload, the functional overload with the same signature (where one exists)."""
    if op.schema.kind() == SchemaKind.functional:
        return None
    sig = op.schema.signature()
    base = str(op.schema.name.name.base)
    try:
        candidates = native.select([base])
    except Exception:  # no overload of that name parses: no functional to compare with
        return None
    for c in candidates:
        if c.schema.kind() == SchemaKind.functional and c.schema.signature() == sig:
            return c.name
    return None


def _ret_box_schema(plan: Plan, op: Op, i: int) -> str:
    r = op.schema.returns[i]
    row = plan.table.ret(r.type, op.name, f"return {i}")
    return row.fill(row.box_schema) if row.box_schema else str(r.type)


def op_spec(k: Kernel, plan: Plan, native: NativeYaml) -> dict:
    op = k.op
    s = op.schema
    kwarg_only = {a.name for a in (*s.arguments.flat_kwarg_only, *s.arguments.out)}
    out_names = {a.name for a in s.arguments.out}
    encoded = dict(k.encoded)
    args = []
    for a in s.arguments.flat_all:
        row = _arg_row(plan, op, a)
        args.append(
            {
                "name": a.name,
                "type": str(a.type),
                "box_schema": row.fill(row.box_schema) if row.box_schema else str(a.type),
                "default": a.default,
                "kwarg_only": a.name in kwarg_only,
                "is_write": a.is_write,
                "is_out": a.name in out_names,
                **({"unused": True} if a.name in k.unused else {}),
                **({"encode": encoded[a.name]} if a.name in encoded else {}),
            }
        )
    return {
        "op": op.name,
        "name": str(s.name.name),
        "overload": s.name.overload_name or "default",
        "kind": s.kind().name,
        "functional": _functional(op, native),
        "route": k.variant.route.name,
        # what the runner and the matrix need to know of the route (shimgen.generate.routes)
        "overlay": k.variant.route.overlay,
        "boxed": k.variant.route.boxed,
        "lowers": k.variant.route.lowers,
        "error_text": k.target is None or k.target >= ERROR_TEXT_SINCE,
        "since": str(k.wrapper.since),
        "wrapper": k.wrapper.name,
        "tags": sorted(op.f.tags),
        "args": args,
        "returns": [
            {"type": str(r.type), "name": r.name, "is_write": r.is_write, "box_schema": _ret_box_schema(plan, op, i)}
            for i, r in enumerate(s.returns)
        ],
    }
