"""Route `dispatcher`: libtorch's boxed dispatcher (`torch_call_dispatcher`, before 2.10
`aoti_torch_call_dispatcher`), reached with a stack of StableIValues. Any op of libtorch, no shim needed; it costs
~1.4-1.7x at:: per call.

Carries a parameter from the release whose dispatcher converts its type (the conversion table's `ivalue`,
measured by shimgen.proofs.probe: `Row.dispatcher_since`), returns likewise. The stack follows the longest compatible
schema of the releases the extension may run on (stack_layout, below): arguments the caller cannot pass are
pushed as their defaults."""

from __future__ import annotations

import re

from torchgen.model import Argument, OptionalType

from shimgen.base.errors import Refusal
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.table import Row, Table, render_default
from shimgen.facts.versions import FIRST_STABLE, Version


class Dispatcher(Route):
    boxed = True

    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return row.dispatcher_from(leaky)

    def returns_need(self, op: Op, table: Table) -> Version | None:
        rows = [table.ret(r.type, op.name, f"return {i}") for i, r in enumerate(op.schema.returns)]
        types = [str(r.type) for r in op.schema.returns]
        if table.mirrored_returns_only and types != types[::-1]:
            return None  # libtorch would hand the returns back converted as each other's types
        needs = [r.dispatcher_since for r in rows]
        if any(n is None for n in needs):
            return None
        return max(needs, default=FIRST_STABLE)  # type: ignore[type-var]

    def variant_at(self, q: Query, none_only: bool = False) -> Variant | None:
        """`none_only`: also take the optional parameters of a type no release's dispatcher carries (Scalar?),
        pushed as None; a call passing a value raises (sig_cpp asks so where no route takes every parameter:
        std(t, {1}) is std.correction with correction=None).

        A type whose conversion leaks on the releases before its `leak_free` (str: libtorch 2.10-2.13) is carried
        from the release that converts it at all, in every build: where the build did not accept the leak
        (World.leaky_str) and a pushed value leaks at q.level, the form is guarded (Variant.guard): it raises on a
        running libtorch that would leak, and a route carrying as many parameters without a guard wins the tie
        (signatures.cpp._better)."""
        if not q.at.stack_compatible:
            return None
        assert q.at.schema is not None
        cap = min(len(q.at.flat_arguments), len(q.params))
        stack = stack_layout(q.op, q.plan, q.level)
        as_none: list[str] = []
        if none_only:
            kept = 0
            ret_need = self.returns_need(q.op, q.plan.table)
            if ret_need is None or ret_need > q.level:
                return None
            while kept < cap:
                p = q.params[kept]
                n = self.carries(p.row, True)
                if n is None and isinstance(p.arg.type, OptionalType) and not p.is_out:
                    as_none.append(p.name)  # one a later release carries is hidden until then instead
                elif n is None or n > q.level:
                    break
                kept += 1
            if not all(p.none_default for p in q.params[kept:cap]) or any(p.default is None for p in q.params[cap:]):
                return None
        else:
            ret_need = q.plan.per_op(("returns_need", self.name, q.op.name),
                                     lambda: self.returns_need(q.op, q.plan.table))
            kept = q.fit(cap, ret_need, [self.carries(p.row, True) for p in q.params[:cap]])
        if kept is None:
            return None
        kept_names = {p.name for p in q.params[:kept]}
        if not all(pushable(q.op, q.plan, q.level, a) for a in stack if a.name not in kept_names):
            return None
        guard, guard_from = _guard(q, stack, kept_names, set(as_none))
        return Variant(self, kept, q.level, stack=stack, lowering=q.fallback(kept), none_only=tuple(as_none),
                       guard=guard, guard_from=guard_from)

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        return ["Route: the boxed dispatcher."]

    def later_notes(self, w: Wrapper, v: Variant) -> list[str]:
        own = len(w.op.schema.arguments.flat_all)
        lines = []
        if len(v.stack) > own:
            later = ", ".join(a.name for a in v.stack[own:])
            lines.append(f"The stack also carries {later} (their defaults), which newer releases read.")
        if v.none_only:
            names = ", ".join(f"`{n}`" for n in v.none_only)
            lines.append(f"It carries {names} only as None (no libtorch route carries a value here): a call passing "
                         "a value raises a shimgen: error; SHIMGEN_OVERLAY gives a route that carries it.")
        if v.guard:
            names = ", ".join(f"`{n}`" for n in v.guard)
            lines.append(f"Before libtorch {v.guard_from} the dispatcher leaks 48 bytes per call converting {names} "
                         f"(a str): on such a runtime the call raises a shimgen: error naming it (the running "
                         f"release is asked once per process), unless the extension defines SHIMGEN_LEAKY_STR to "
                         f"accept the leak.")
            return lines
        leaky = [p for p in w.kept(v) if p.row.leaks_before and v.start < p.row.leaks_before]
        if leaky:
            lines.append(f"On libtorch 2.10-2.13 the dispatcher leaks 48 bytes per call converting "
                         f"{', '.join('`' + p.name + '`' for p in leaky)} (a str; fixed in 2.14): the extension "
                         "defines SHIMGEN_LEAKY_STR to accept that leak.")
        return lines

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        return "\n".join([*self.checks(w, v), self.call(w, v, plan)])

    def checks(self, w: Wrapper, v: Variant) -> list[str]:
        """The statements before the call: the leak guard, then the refusal of a value carried only as None."""
        op = w.op
        kept = {p.name: p for p in w.kept(v)}
        lines = []
        for name in v.guard:  # before any other check: on a runtime that would leak, nothing else matters
            assert v.guard_from is not None
            p = kept.get(name)
            # an optional str the caller leaves None crosses as None, which nothing converts
            present = f"{name}.has_value()" if p is not None and isinstance(p.arg.type, OptionalType) else "true"
            lines.append(f'shimgen::detail::require_leak_free_str("{op.name}", "{name}", '
                         f'{v.guard_from.major * 100 + v.guard_from.minor}, {present});')
        for name in v.none_only:  # carried only as None (Variant.none_only)
            why = (f"libtorch's boxed dispatcher carries this {kept[name].arg.type} only as None and no other "
                   "libtorch route carries the op: define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for "
                   "each torch release)")
            lines.append(f'if ({name}.has_value()) {{\nshimgen::detail::refuse("{op.name}", "{name}", {name}, '
                         f'"{why}");\n}}')
        return lines

    def call(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        """The call of the boxed dispatcher (each of v.none_only pushed as None) and the return of its results."""
        op = w.op
        kept = {p.name: p for p in w.kept(v)}
        items = []
        lines = []
        for a in v.stack:  # the boxed stack follows the schema's order (see sig_cpp.stack_layout)
            p = kept.get(a.name)
            if p is not None and p.name in v.none_only:
                value = "std::nullopt"
            else:
                value = p.row.stack_value(a.name) if p else _pushed_default(op, plan, a)
            items.append(value)
        # One call of the prelude's shimgen::detail::dispatch (templates/ops_prelude.h.j2): it converts the values
        # with torch::stable::detail::from, calls torch_call_dispatcher (aoti_torch_call_dispatcher before 2.10,
        # by TORCH_FEATURE_VERSION, which the form's gate bounds) and converts the returns; a translation unit
        # parses that once, not once per wrapper.
        n = max(len(items), len(op.schema.returns), 1)
        args = ", ".join([f'"{op.aten_name}"', f'"{op.overload}"', *items])
        types = [plan.table.ret(r.type, op.name, f"return {i}").cpp for i, r in enumerate(op.schema.returns)]
        if op.schema.is_out_fn():  # the stack holds new references to the out tensors: released, the caller's own returned
            released = f", {len(types)}" if types else ""
            lines.append(f"shimgen::detail::dispatch<void, {n}{released}>({args});")
            lines += [r for r in [w.return_outs()] if r]
        elif len(types) > 1:
            values = [f"torch::stable::detail::to<{t}>(stack[{i}])" for i, t in enumerate(types)]
            lines.append(f"auto stack = shimgen::detail::call_dispatcher<{n}>({args});")
            lines.append(f"return std::make_tuple({', '.join(values)});")
        else:
            call = f"shimgen::detail::dispatch<{types[0] if types else 'void'}, {n}>({args});"
            lines.append(f"return {call}" if types else call)
        return "\n".join(lines)


ROUTE_CLASS = Dispatcher


def _pushed_default(op, plan: Plan, a) -> str:
    """stack_default's value, converted as the table's `stack` column says where from() does not take the
    wrapper's C++ type (a std::string_view default goes on the stack as a std::string)."""
    value = stack_default(op, plan, a)
    row = plan.table.argument(a.type, op.name, a.name)
    return row.fill(row.stack, value) if (row.stack and value != "std::nullopt") else value


# ---- the stack: which arguments a call pushes, and the defaults it pushes for the caller ----


def stack_layout(op: Op, plan: Plan, level: Version) -> tuple[Argument, ...]:
    """The arguments a dispatcher call pushes for an extension targeting `level`, in stack order.

    Every release's dispatcher reads as many stack slots as its own schema has (torch_call_dispatcher applies no
    schema adapter in any release), and the extension runs on `level` and every later libtorch. So the stack
    follows the longest schema among the releases from `level` on (while the op keeps a compatible schema):
    an older libtorch ignores the trailing slots it does not know, a newer one finds the defaults of the
    arguments it added. Slots of the yaml's schema keep its arguments (names included); later slots come from
    the newer release's schema.
    """
    layouts = plan.per_op(("stack_layouts", op.name), lambda: _stack_layouts(op, plan))
    found = layouts.get(level)
    return found if found is not None else _stack_layout(op, plan, level)


def _stack_layouts(op: Op, plan: Plan) -> dict[Version, tuple[Argument, ...]]:
    """stack_layout at every release of the op's timeline, in one pass from the newest release back: the layout
    at r is r's schema if it is the longest from r on (the first such release wins), else the layout at r's
    successor; an absent or incompatible release ends the run."""
    own = tuple(op.schema.arguments.flat_all)
    result: dict[Version, tuple[Argument, ...]] = {}
    after: tuple[Argument, ...] = ()  # the extra slots from the next release on (none past a break)
    for r, at in sorted(plan.timeline(op).items(), reverse=True):
        if at.schema is None or not at.stack_compatible:
            after = ()
            result[r] = own
            continue
        theirs = at.flat_arguments
        if len(theirs) > len(own) and len(theirs) >= len(own) + len(after):
            after = tuple(theirs[len(own):])
        result[r] = own + after
    return result


def _stack_layout(op: Op, plan: Plan, level: Version) -> tuple[Argument, ...]:
    own = tuple(op.schema.arguments.flat_all)
    extra: tuple[Argument, ...] = ()
    for r, at in plan.timeline(op).items():
        if r < level:
            continue
        if at.schema is None or not at.stack_compatible:
            break
        theirs = at.flat_arguments
        if len(theirs) > len(own) + len(extra):
            extra = tuple(theirs[len(own):])
    return own + extra


def pushable(op: Op, plan: Plan, level: Version, a: Argument) -> bool:
    """Can the dispatcher route push this argument's default at `level`? (None always can.)"""
    if a.default is None:
        return isinstance(a.type, OptionalType)
    if a.default == "None":
        return True
    try:
        row = plan.table.argument(a.type, op.name, a.name)
        render_default(a.default, row, plan.table)
    except Refusal:
        return False
    since = row.dispatcher_from(True)  # a leaking conversion is guarded (Variant.guard), never silent
    return since is not None and since <= level


def _guard(q: Query, stack: tuple[Argument, ...], kept: set[str], as_none: set[str]
           ) -> tuple[tuple[str, ...], Version | None]:
    """(the names whose pushed value leaks at q.level, the first release converting them all without leaking), in
    a build that did not accept the leak; ((), None) otherwise. A kept parameter leaks unless carried only as None;
    a default pushed for the caller leaks unless it is None."""
    if q.plan.world.leaky_str:
        return (), None
    names: list[str] = []
    since: Version | None = None
    for a in stack:
        if a.name in as_none or (a.name not in kept and (a.default is None or a.default == "None")):
            continue
        row = q.plan.table.argument(a.type, q.op.name, a.name)
        leaks = row.leaks_before
        if leaks is not None and leaks > q.level:
            names.append(a.name)
            since = leaks if since is None else max(since, leaks)
    return tuple(names), since


def stack_default(op: Op, plan: Plan, a: Argument) -> str:
    """The C++ value pushed for an argument the caller does not pass: its schema default (None for an optional
    without one), typed as the wrapper would pass it (`bool(false)`, `std::string("none")`)."""
    if a.default is None or a.default == "None":
        return "std::nullopt"
    row = plan.table.argument(a.type, op.name, a.name)
    value = render_default(a.default, row, plan.table)
    value_type = re.sub(r"^const |&$", "", row.fill(row.cpp or "", a.name)).strip()
    typed = f"{value_type}{value}" if value.startswith("{") else f"{value_type}({value})"
    return row.stack_value(f"({typed})") if row.stack else typed
