"""The signature stage of the pipeline: what a plan generates, before any emitter renders it.

- `wrappers(plan)`: the torch::stable wrappers (sig_cpp), with the overloads skipped as notes;
- `c_shims(plan)`: the C shim set, a product of the plan: every selected op's C shim versions (sig_c), except
  those of an op generated only as another op's lowering target whose wrapper calls no C shim.
Both are computed once per plan (Plan.derived)."""

from __future__ import annotations

from shimgen.generate.signatures import c as sig_c
from shimgen.base.errors import Refusal
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.signatures.cpp import wrappers

__all__ = ["c_shims", "wrappers"]


def c_shims(plan: Plan) -> tuple[list[sig_c.ShimVersion], list[str]]:
    """The C shims of the plan's ops in the order torchgen writes them (by shim name; an op's `_vN` versions
    newest first, then its original), and the refusals."""
    cached = plan.derived.get("c_shims")
    if cached is None:
        cached = plan.derived["c_shims"] = _c_shims(plan)
    return cached  # type: ignore[return-value]


def _c_shims(plan: Plan) -> tuple[list[sig_c.ShimVersion], list[str]]:
    built: list[list[sig_c.ShimVersion]] = []
    skipped: list[str] = []
    for op in plan.ops:
        if op.added and not _calls_a_shim(op, plan):
            continue  # generated only as a lowering target of another op, and its wrapper calls no C shim
        try:
            built.append(sig_c.versions(op, plan))
        except Refusal as e:
            skipped.append(e.line())
    built.sort(key=lambda vs: vs[0].shim.function)
    return [sv for vs in built for sv in reversed(vs)], skipped


def _calls_a_shim(op: Op, plan: Plan) -> bool:
    """Does the op's wrapper call a C shim through any of its forms? (the wrappers' routes decide.) An op with a
    `str` argument may, in the builds that refuse the leaky `str` route (the default: SHIMGEN_LEAKY_STR undefined),
    whose wrappers the headers carry too: searchsorted.Tensor, generated for searchsorted.Scalar's composition."""
    if any(str(a.type).rstrip("?") == "str" for a in op.schema.arguments.flat_all):
        return True
    w = next((w for w in wrappers(plan)[0] if w.op.name == op.name), None)
    return w is not None and any(v.route.calls_c_shim for v in w.variants)
