"""The device route: `torch::stable::cpu::X` / `torch::stable::cuda::X`, libtorch's device C shims by name.

ATen has the same split: `at::add` dispatches, `at::cpu::add` / `at::cuda::add` call one backend's kernel.
libtorch exports AOTInductor's `aoti_torch_cpu_*` (libtorch_cpu.so) and `aoti_torch_cuda_*` (libtorch_cuda.so)
C shims, which call exactly those kernels; their history, `_vN` versions and exports are data
(data/device_shims.json, `python -m shimgen.device_shims`).

Where a call may bypass the dispatcher: only where the author says so, by name. A device shim opts out of the
dispatcher, so autograd, autocast, functionalization, fake tensors, vmap and Python dispatch modes do not see the
call. Whether that changes what the caller gets depends on where the wrapper runs, and no function libtorch
exports (2.9-2.15) tells a wrapper that: there is no getter for requires_grad, for autocast, for the dispatch
keys of a tensor or for the thread's dispatch modes (only grad mode, device and layout can be read). Measured
(tests/test_device_route.py): in a kernel registered for CPU, the dispatcher has already done its work (the
neg bit of `x.conj().imag` is resolved, autograd and autocast are handled around the op) and the device shim
gives what ATen gives; in a CompositeImplicitAutograd kernel, the same call drops the gradient (no grad_fn where
at::add records AddBackward0) and ignores autocast (addmm in float32 where ATen gives bfloat16). A runtime guard
inside a default wrapper could therefore not prove the bypass harmless, so the default wrappers never use this
route; the namespaced wrappers are backend kernels, documented as such, exactly like `at::cpu::`, for code that
knows it runs in a backend kernel (and wants the ~dispatcher-free cost: benchmarks/bench_calls.py).

Each namespaced wrapper takes the default wrapper's parameters (the same overload set, defaults and C++ names)
and is gated on the release whose libtorch first declares and exports the shim (the newest `_vN` an extension
targeting that release may call). Numbers travel as the shim's `double` under the same exactness rules as every
double-carrying route (shimgen/scalars.py): a number the double would change raises a `shimgen:` error.
The cuda wrappers live in their own header, which ops.h does not include: a CPU-only extension never references
an `aoti_torch_cuda_*` symbol (libtorch_cuda.so is needed only by an extension that includes that header and
calls one).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shimgen import device_shims, emit_cpp, sig_c, sig_cpp
from shimgen.device_shims import DEVICES
from shimgen.errors import Refusal
from shimgen.plan import Plan
from shimgen.sig_cpp import Variant, Wrapper
from shimgen.templates import render
from shimgen.versions import FIRST_STABLE, Version

HEADERS = {d: f"torch/csrc/stable/{d}/ops.h" for d in DEVICES}
FOLDERS = tuple(f"torch/csrc/stable/{d}/" for d in DEVICES)  # only shimgen writes .h files there
SHIM_HEADERS = {d: f"torch/csrc/inductor/aoti_torch/generated/c_shim_{d}.h" for d in DEVICES}
LIBRARIES = {"cpu": "libtorch_cpu.so (libtorch)", "cuda": "libtorch_cuda.so"}


def _types(params) -> tuple[str, ...]:
    return device_shims._types(tuple(params))


def shim_versions(w: Wrapper, plan: Plan, device: str) -> list[sig_c.ShimVersion]:
    """The op's device shims whose C signature is the one the table gives the yaml's schema (taking its first
    `nargs` arguments), oldest first, each with the release from which an extension may call it."""
    data = device_shims.load()
    op = w.op
    n_all = len(sig_c.c_arguments(op))
    result = []
    for s in data.of(op.name, device):
        since = next((r for r in data.releases if r >= s.since and data.usable(s.function, r)), None)
        if since is None:
            continue
        for nargs in range(n_all, -1, -1):  # the shim takes the yaml's first nargs arguments (C order)
            try:
                ours = sig_c.build(op, plan.table, nargs)
            except Refusal:
                break
            if _types(ours.params) == _types(s.params):
                result.append(sig_c.ShimVersion(replace(ours, function=s.function, version=s.version), since, True))
                break
    return sorted(result, key=lambda sv: (sv.since, sv.shim.version))


def variants(w: Wrapper, plan: Plan, device: str) -> tuple[Variant, ...]:
    """What an extension targeting each release calls for `device`::name, merged into ranges as sig_cpp does."""
    shims = shim_versions(w, plan, device)
    if not shims:
        return ()
    levels = set(plan.releases()) | {sv.since for sv in shims}
    ps = list(w.params)
    result: list[Variant] = []
    for level in sorted(x for x in levels if x >= FIRST_STABLE):
        at = plan.timeline(w.op)[level]
        v = sig_cpp._route_at(w.op, ps, plan, level, shims, at, "shim") if at.schema is not None else None
        v = replace(v, route=device, lowering=()) if v is not None else None
        is_open = bool(result) and result[-1].end is None
        if v is None:
            if is_open:
                result[-1] = replace(result[-1], end=level)
            continue
        if is_open and sig_cpp._same_variant(result[-1], v):
            continue
        if is_open:
            result[-1] = replace(result[-1], end=level)
        result.append(v)
    return tuple(result)


def wrappers(plan: Plan, device: str) -> list[Wrapper]:
    """The `device`:: wrappers of the plan: each default wrapper (same name, parameters, overload set) whose op
    has a device shim with the table's C signature, with the device variants."""
    key = ("device_wrappers", device)
    cached = plan.derived.get(key)  # type: ignore[call-overload]
    if cached is None:
        cached = []
        for w in sig_cpp.wrappers(plan)[0]:
            if w.op.added:  # generated only as another op's lowering target
                continue
            vs = variants(w, plan, device)
            if vs:
                cached.append(replace(w, variants=vs, nullopt_at=()))
        plan.derived[key] = cached  # type: ignore[index]
    return cached  # type: ignore[return-value]


def doc(w: Wrapper, v: Variant, device: str) -> list[str]:
    lines = [f"{device.upper()} kernel of aten::{w.op.schema}", ""]
    lines.append(f"Minimum compatible version: PyTorch {w.since}.")
    if v.start != w.since:
        lines.append(f"This form needs PyTorch {v.start}.")
    lines.append(f"Route: libtorch's {device} C shim {v.shim} ({LIBRARIES[device]}), which calls at::{device}:: "
                 "directly.")
    lines.append(f"Like at::{device}::{w.op.schema.name.name}, it bypasses the dispatcher: every tensor must be a "
                 f"dense {device} tensor, and autograd (no gradient is recorded), autocast, functionalization, fake "
                 "tensors, vmap, dispatch modes and conj/neg-bit views do not see the call. Use "
                 f"torch::stable::{w.name} for a call that dispatches.")
    if any(p.row.exact_c for p in w.kept(v)):
        lines.append("Numbers the shim's double would change raise an error (shimgen::Scalar).")
    dropped = w.params[v.kept :]
    if dropped and v.end is not None:
        names = ", ".join(p.name for p in dropped)
        lines.append(f"This form, for releases before {v.end}, does not take {names}: aten gets their defaults.")
    return lines


@dataclass(frozen=True)
class _Unit:
    doc: list[str]
    gate_open: str | None
    gate_close: str | None
    signature: str
    body: str
    deleted: bool = False


def render_wrapper(w: Wrapper, v: Variant, plan: Plan, device: str) -> _Unit:
    body = emit_cpp.scalar_body(w, v, plan, emit_cpp.shim_body(w, v, plan))
    g_open, g_close = emit_cpp.gate(v)
    return _Unit(doc(w, v, device), g_open, g_close, emit_cpp.signature(w, v), body)


def emit(plan: Plan) -> dict[str, str]:
    """One header per device (only for devices some selected op has a shim on)."""
    files = {}
    for device in DEVICES:
        units = [render_wrapper(w, v, plan, device) for w in wrappers(plan, device) for v in w.variants]
        if units:
            files[HEADERS[device]] = render("ops_device.h.j2", banner=plan.banner, device=device,
                                            shim_header=SHIM_HEADERS[device], library=LIBRARIES[device],
                                            wrappers=units)
    return files


def route_of(w: Wrapper, level: Version, device: str, plan: Plan) -> Variant | None:
    """The device variant an extension targeting `level` compiles for the default wrapper `w` (None: none)."""
    for dw in wrappers(plan, device):
        if dw.op.name == w.op.name:
            return sig_cpp.active(dw, level)
    return None
