"""Routes `cpu` and `cuda`: libtorch's device C shims, by name, as `torch::stable::cpu::X` / `torch::stable::cuda::X`.

ATen has the same split: `at::add` dispatches, `at::cpu::add` / `at::cuda::add` call one backend's kernel.
libtorch exports AOTInductor's `aoti_torch_cpu_*` (libtorch_cpu.so) and `aoti_torch_cuda_*` (libtorch_cuda.so)
C shims, which call exactly those kernels; their history, `_vN` versions and exports are this route's data
(data/device_shims.json, `python -m shimgen.dev device-shims`, shimgen/facts/libtorch_device_shims.py).

Where a call may bypass the dispatcher: only where the author says so, by name. A device shim opts out of the
dispatcher, so autograd, autocast, functionalization, fake tensors, vmap and Python dispatch modes do not see the
call. Whether that changes what the caller gets depends on where the wrapper runs, and no function libtorch
exports (2.9-2.15) tells a wrapper that: there is no getter for requires_grad, for autocast, for the dispatch
keys of a tensor or for the thread's dispatch modes (only grad mode, device and layout can be read). Measured
(tests/test_device_route.py): in a kernel registered for CPU, the dispatcher has already done its work (the
neg bit of `x.conj().imag` is resolved, autograd and autocast are handled around the op) and the device shim
gives what ATen gives; in a CompositeImplicitAutograd kernel, the same call drops the gradient (no grad_fn where
at::add records AddBackward0) and ignores autocast (addmm in float32 where ATen gives bfloat16). A runtime guard
inside a default wrapper could therefore not prove the bypass harmless, so this route offers no form to the
default wrappers (`variant_at` is always None); its own surface is a namespace per device, emitted as a header
`ops.h` does not include (`files`), with the default wrapper's name, parameters and defaults for every selected
overload whose device shim has the C signature the table gives the yaml's schema. A CPU-only extension never
references an `aoti_torch_cuda_*` symbol: only the cuda header names them.

Each namespaced form is gated on the release whose header first declares the shim and whose libtorch exports it
on every measured runtime from then on (the newest `_vN` an extension targeting that release may call). Numbers
travel as the shim's `double` under the exactness rules of every double-carrying route (shimgen/facts/scalar_facts.py):
a number the double would change raises a `shimgen:` error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shimgen.facts import libtorch_device_shims as device_shims
from shimgen.generate.emit import cpp as emit_cpp
from shimgen.generate.signatures import c as sig_c
from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.base.errors import Refusal
from shimgen.generate.plan import Plan
from shimgen.generate.cpp_model import Query
from shimgen.generate.routes.aten_shim import CShimRoute
from shimgen.generate.routes.sibling import scalar_body
from shimgen.generate.cpp_model import ShimVersion
from shimgen.generate.templates import render
from shimgen.facts.versions import FIRST_STABLE

LIBRARIES = {"cpu": "libtorch_cpu.so", "cuda": "libtorch_cuda.so"}


class DeviceShim(CShimRoute):
    calls_c_shim = False  # libtorch's own device shims: the plan generates none

    @property
    def device(self) -> str:
        return self.name

    @property
    def namespace(self) -> str:
        return f"torch::stable::{self.device}"

    @property
    def header(self) -> str:
        """The header of this route's surface (relative to the output folder)."""
        return f"torch/csrc/stable/{self.device}/ops.h"

    @property
    def owned(self) -> tuple[str, ...]:
        return (f"torch/csrc/stable/{self.device}/",)

    # ---- the default surface: never (see the module docstring) -------------------------------------------

    def variant_at(self, q: Query) -> Variant | None:
        return None

    # ---- its own surface: torch::stable::<device>:: -----------------------------------------------------

    def shim_at(self, q: Query) -> ShimVersion | None:
        shipped = [sv for sv in q.shims if sv.since <= q.level]
        return shipped[-1] if shipped else None

    def shims(self, w: Wrapper, plan: Plan) -> list[ShimVersion]:
        return shims_of(w.op, plan.table, self.device)

    def forms(self, w: Wrapper, plan: Plan) -> tuple[Variant, ...]:
        """The namespaced wrapper's forms over the releases, merged into ranges as sig_cpp merges a wrapper's."""
        shims = self.shims(w, plan)
        if not shims:
            return ()
        ps = list(w.params)
        result: list[Variant] = []
        levels = set(plan.releases()) | {sv.since for sv in shims}
        for level in sorted(x for x in levels if x >= FIRST_STABLE):
            at = plan.timeline(w.op)[level]
            v = self._form_at(Query(w.op, ps, plan, level, shims, at, None)) if at.schema else None
            is_open = bool(result) and result[-1].end is None
            if v is None:
                if is_open:
                    result[-1] = replace(result[-1], end=level)
                continue
            if is_open and result[-1].same_call(v):
                continue
            if is_open:
                result[-1] = replace(result[-1], end=level)
            result.append(v)
        return tuple(result)

    def _form_at(self, q: Query) -> Variant | None:
        """The namespaced wrapper's form at q.level: the device shim shipped by then, as a C shim route takes it."""
        shim = self.shim_at(q)
        if shim is None or not q.at.c_compatible:
            return None
        nargs = shim.shim.nargs
        kept = q.fit(nargs, sig_c.returns_need(q.op, q.plan.table), [sig_c.carries(p.row) for p in q.params[:nargs]])
        if kept is None:
            return None
        return Variant(self, kept, q.level, shim=shim.shim.function, shim_nargs=nargs, lowering=q.fallback(kept))

    def wrappers(self, plan: Plan, ws: list[Wrapper]) -> list[Wrapper]:
        """The namespaced wrappers: each default wrapper of `ws` (the plan's: same name, parameters, overload set)
        whose op has a device shim with the table's C signature, with this route's forms."""
        key = ("device_wrappers", self.device)
        cached = plan.derived.get(key)  # type: ignore[call-overload]
        if cached is None:
            cached = []
            for w in ws:
                if w.op.added:  # generated only as another op's lowering target
                    continue
                vs = self.forms(w, plan)
                if vs:
                    cached.append(replace(w, variants=vs, nullopt_at=()))
            plan.derived[key] = cached  # type: ignore[index]
        return cached  # type: ignore[return-value]

    # ---- how a call through it is emitted -----------------------------------------------------------------

    def whose(self, v: Variant) -> str:
        return f"libtorch's {self.device} C shim {v.shim} ({LIBRARIES[self.device]}), which calls at::{self.device}::"

    def doc(self, w: Wrapper, v: Variant) -> list[str]:
        lines = [f"{self.device.upper()} kernel of aten::{w.op.schema_text}", ""]
        lines.append(f"Minimum compatible version: PyTorch {w.since}.")
        if v.start != w.since:
            lines.append(f"This form needs PyTorch {v.start}.")
        lines.append(f"Route: {self.whose(v)} directly. Like at::{self.device}::{w.op.schema.name.name}, it bypasses "
                     f"the dispatcher: every tensor must be a dense {self.device} tensor, and autograd (no gradient is "
                     "recorded), autocast, functionalization, fake tensors, vmap and dispatch modes do not see the "
                     f"call. Use torch::stable::{w.name} for a call that dispatches.")
        if any(p.row.exact_c for p in w.kept(v)):
            lines.append("Numbers the shim's double would change raise an error (shimgen::Scalar).")
        dropped = w.params[v.kept :]
        if dropped and v.end is not None:
            names = ", ".join(p.name for p in dropped)
            lines.append(f"This form, for releases before {v.end}, does not take {names}: aten gets their defaults.")
        return lines

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        return scalar_body(w, v, plan, sig_c.shim_call(w, v, plan))

    def files(self, plan: Plan, ws: list[Wrapper]) -> dict[str, str]:
        units = []
        for w in self.wrappers(plan, ws):
            for v in w.variants:
                g_open, g_close = emit_cpp.gate(v)
                units.append(_Unit(self.doc(w, v), g_open, g_close, emit_cpp.signature(w, v), self.body(w, v, plan)))
        if not units:
            return {}
        return {self.header: render("ops_device.h.j2", banner=plan.banner, device=self.device,
                                    shim_header=f"torch/csrc/inductor/aoti_torch/generated/c_shim_{self.device}.h",
                                    library=LIBRARIES[self.device], wrappers=units)}


def shims_of(op, table, device: str) -> list[ShimVersion]:
    """The op's `device` shims whose C signature is the one the table gives the yaml's schema (taking its first
    `nargs` arguments), each from the first release an extension may call it (declared and exported), oldest
    first."""
    data = device_shims.load()
    n_all = len(sig_c.c_arguments(op))
    result = []
    for s in data.of(op.name, device):
        since = next((r for r in data.releases if r >= s.since and data.usable(s.function, r)), None)
        if since is None:
            continue
        for nargs in range(n_all, -1, -1):
            try:
                ours = sig_c.build(op, table, nargs)
            except Refusal:
                break
            if device_shims.c_types(ours.params) == device_shims.c_types(s.params):
                result.append(ShimVersion(replace(ours, function=s.function, version=s.version), since, True))
                break
    return sorted(result, key=lambda sv: (sv.since, sv.shim.version))


@dataclass(frozen=True)
class _Unit:
    doc: list[str]
    gate_open: str | None
    gate_close: str | None
    signature: str
    body: str


ROUTE_CLASS = DeviceShim
