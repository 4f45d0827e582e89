"""What the samples runner adapts when it runs on another torch release, or for a round-trip extension built for
an older target (shimgen.proofs.verify.matrix). Runs inside the runner: stdlib and torch only.

* An op the running torch's aten lacks is reported as absent (with the error the round-trip op raises for its
  first sample), never run: the yaml the wrappers were generated from is not this release's.
* Arguments the variant active at the target does not take (`unused` in the spec) are left out on both sides:
  aten applies its defaults, as the wrapper does; later arguments go by keyword.
* A list or string argument the target's dispatcher cannot carry (`encode` in the spec) reaches the round-trip
  op as a tensor (int64 / float64 / bool elements, a string's UTF-8 bytes as uint8), which its kernel decodes
  before calling the wrapper; aten gets the value itself.
"""

from __future__ import annotations

from typing import Any, Callable


def aten_overload(torch: Any, name: str, overload: str) -> Any | None:
    """torch.ops.aten.<name>.<overload>, or None when this torch has no such op or overload."""
    try:
        packet = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return None
    try:
        if overload not in packet.overloads():
            return None
        return getattr(packet, overload)
    except (AttributeError, RuntimeError):
        return None


def absent(torch: Any, op: dict, ns: str = "aten") -> str | None:
    """Why the op cannot run on this torch (its dispatcher does not have it), or None. The dispatcher is what a
    wrapper calls: an op only TorchScript registers (aten::numel before 2.12) is absent though torch.ops has it."""
    release = torch.__version__.split("+")[0]
    try:
        torch._C._dispatch_find_schema_or_throw(f"{ns}::{op['name']}", "" if op["overload"] == "default" else
                                                op["overload"])
    except RuntimeError:
        if aten_overload(torch, op["name"], op["overload"]) is not None:
            return f"{ns}::{op['op']} is not a dispatcher op in torch {release} (only TorchScript has it)"
        return f"{ns}::{op['op']} does not exist in torch {release}"
    return None


def wrapper_error(rt: Callable, op: dict, samples: Any, call: Callable) -> str:
    """What the round-trip op does with the op's first sample (for an op absent from aten)."""
    try:
        cases = samples.generate(op, None)
        if not cases:
            return "no sample to try"
        call(rt, op, cases[0].make())
    except Exception as e:  # noqa: BLE001 - the error is the answer
        text = " ".join(str(e).split())
        return f"the wrapper raised {type(e).__name__}: {text[:300]}"
    return "the wrapper returned"


def adapt(op: dict) -> tuple[dict, Callable[[Callable], Callable]]:
    """(the op as the samples see it: unused arguments left out; a function wrapping the round-trip op so that
    encoded arguments reach it as tensors)."""
    args, by_keyword = [], False
    for a in op["args"]:
        if a.get("unused"):
            by_keyword = True
            continue
        args.append({**a, "kwarg_only": True} if by_keyword else a)
    adapted = {**op, "args": args}
    encoded = {a["name"]: a["encode"] for a in args if a.get("encode")}
    if not encoded:
        return adapted, lambda rt: rt
    names = [a["name"] for a in args]
    defaults = {a["name"]: a["default"] for a in args if a.get("encode") and a["default"] is not None}

    def wrap(rt: Callable) -> Callable:
        def call(*pos: Any, **kw: Any) -> Any:
            given = set(names[: len(pos)]) | set(kw)
            pos = tuple(encode(encoded[n], v) if n in encoded else v for n, v in zip(names, pos))
            kw = {n: encode(encoded[n], v) if n in encoded else v for n, v in kw.items()}
            for n, text in defaults.items():  # an encoded argument has no schema default: pass aten's
                if n not in given:
                    kw[n] = encode(encoded[n], schema_default(text))
            return rt(*pos, **kw)

        return call

    return adapted, wrap


def schema_default(text: str) -> Any:
    """A list, string or number default as native_functions.yaml writes it (`[]`, `"constant"`, `1`)."""
    import ast

    return ast.literal_eval({"True": "True", "False": "False"}.get(text, text))


def encode(how: dict, value: Any) -> Any:
    """A list or string as the tensor the round-trip kernel decodes (None stays None)."""
    import torch

    if value is None:
        return None
    if how["dtype"] == "str":
        return torch.tensor(list(value.encode()), dtype=torch.uint8)
    if not isinstance(value, (list, tuple)):  # `int[2] stride=1`: one value for every element
        value = [value] * (how.get("size") or 1)
    dtype = getattr(torch, how["dtype"])
    return torch.tensor([bool(v) if dtype == torch.bool else v for v in value], dtype=dtype)
