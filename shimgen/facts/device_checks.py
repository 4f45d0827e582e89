"""Does an aten overload reject a 0-dim CPU tensor beside operands on another device? (data/device_checks.yaml)

aten's Scalar overloads hand a number to their kernels as a wrapped 0-dim CPU tensor or as a host value, which
every device's kernel reads. shimgen's routes hand it over as a 0-dim tensor too, through the overload of the same
name that takes a Tensor (`clamp` -> `clamp.Tensor`) or through a composition. torchgen registers an overload's CUDA
and XPU kernels behind a device check (every Tensor argument on one device, a 0-dim CPU one included) unless its
native_functions.yaml entry says `device_check: NoCheck`; the NoCheck ones are TensorIterator ops, which read a 0-dim
CPU tensor on the host as they read aten's wrapped numbers. So a number tensor that feeds an overload that checks goes
to the operand's device (scalar.h on_device_of: one fill kernel there, nothing on the CPU), and one that feeds a
NoCheck overload stays on the CPU (no cost). Composite overloads have no check of their own: the data names what
their bodies call; one it does not name counts as checking.
"""

from __future__ import annotations

import functools

from torchgen.model import DeviceCheckType, NativeFunction

from shimgen.base.inputs import package_yaml

DATA = "data/device_checks.yaml"


@functools.cache
def _data() -> tuple[dict[str, str], frozenset[str]]:
    raw = package_yaml(DATA)  # through shimgen's cache: a warm run imports no yaml parser
    return dict(raw.get("forwards") or {}), frozenset(raw.get("host_reads") or {})


def composite(f: NativeFunction) -> bool:
    """No kernel of its own (CompositeImplicitAutograd, or only CompositeExplicitAutograd): no device check."""
    return f.structured_delegate is None and (
        f.has_composite_implicit_autograd_kernel or f.has_composite_explicit_autograd_kernel)


def checks_devices(name: str, f: NativeFunction | None, lookup=None, overloads=None) -> bool:
    """Would a 0-dim CPU tensor passed to overload `name` (`clamp.Tensor`) beside CUDA operands be refused?

    `f` is the overload's parsed entry (None: unknown, counts as checking); `lookup(name)` gives another overload's
    entry, for a composite one's `forwards`; `overloads(base)` every overload of an op name, for an out= one's
    functional."""
    forwards, host_reads = _data()
    if name in host_reads:
        return False
    if name in forwards:
        target = forwards[name]
        return checks_devices(target, lookup(target) if lookup else None, lookup, overloads)
    if f is None:
        return True
    if f.func.is_out_fn() and overloads is not None:
        # an out= overload runs its functional's structured kernel (TensorIterator config and all), marked NoCheck
        # by convention: the functional's entry states what that kernel needs (clamp.Tensor_out as clamp.Tensor)
        for g in overloads(str(f.func.name.name)):
            if g is not f and not g.func.is_out_fn() and g.func.signature() == f.func.signature():
                return checks_devices(f"{g.func.name.name}.{g.func.name.overload_name or 'default'}", g, lookup)
    if f.device_check == DeviceCheckType.NoCheck:
        return False
    return True  # a backend kernel behind torchgen's check, or a composite the data does not follow: on the device
