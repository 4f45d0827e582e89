"""The prover of kernel `rrelu_eval` (shimgen/generate/routes/kernels/rrelu.py: rrelu, rrelu_, rrelu_with_noise
.default/.out/_, rrelu_with_noise_backward): scalar.h's rrelu_slope / rrelu_backward_slope, rrelu_noise_check,
contiguous_result around `via`'s composition (leaky_relu, leaky_relu_ with `backward_raises`, leaky_relu.out,
leaky_relu_backward).

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import math

import torch

from mirror_common import assign_inplace, assign_out, observed, refuse_backward, sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run


def rrelu_slope(s, lower, upper, training):
    if s["rule"].get("finite_bounds") and not all(math.isfinite(complex(n).real) and not isinstance(n, complex)
                                                  for n in (lower, upper)):
        raise Refused("bounds")  # 2.15 raises (a bound must be finite), earlier releases compute
    if s["rule"].get("check_bounds") and not (isinstance(lower, complex) or isinstance(upper, complex)) \
            and not float(lower) <= float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        raise Refused("training")
    if s["rule"].get("slope") == "backward":
        if isinstance(lower, complex) or isinstance(upper, complex):
            raise Refused("complex")
        return (float(lower) + float(upper)) / 2.0
    for n in (lower, upper):
        if isinstance(n, (bool, complex)) or (isinstance(n, int) and abs(n) > 2**53):
            raise Refused("number")
    if not (isinstance(lower, float) or isinstance(upper, float)):
        raise Refused("integers")
    return (float(lower) + float(upper)) / 2


def contiguous_result(r):
    want, step = [], 1
    for n in reversed(r.shape):
        want.insert(0, step)
        step *= max(n, 1)
    if list(r.stride()) == want:
        return r
    out = torch.empty_strided(r.shape, want, dtype=r.dtype)
    return out.copy_(r)


LEAKY_OUT = {"via": "leaky_relu.default", "same_dtype": True}


def rrelu_mine(s, v):
    """The wrapper: the noise check, the slope, then `via`'s composition as its own row computes it."""
    if "noise" in v and s["rule"].get("slope") != "backward" and v["noise"].shape != v["self"].shape:
        raise RuntimeError(f"noise tensor shape must match self tensor shape {ATEN_RAISES}")
    slope = rrelu_slope(s, v.get("lower", 0.125), v.get("upper", 1 / 3), v.get("training", False))
    via = s["via"]
    if via == "leaky_relu.default":
        r = aten(via)(v["self"], slope)
        return contiguous_result(r) if s["rule"].get("contiguous_result") else r
    if via == "leaky_relu_.default":
        refuse_backward(s["rule"].get("backward_raises") and "slope", [v["self"]], {"slope": slope})
        values = {"self": v["self"], "negative_slope": slope}
        return assign_inplace("leaky_relu.default", values, True, "negative_slope")
    if via == "leaky_relu.out":
        return assign_out(LEAKY_OUT, {"self": v["self"], "negative_slope": slope}, v["out"])
    return aten(via)(v["grad_output"], v["self"], slope, v["self_is_result"])


RRELU_BOUNDS = [(0.125, 1 / 3), (0.1, 0.3), (-0.5, -0.25), (0.2, 0.1), (0, 0.5), (0.5, 1), (0, 1), (True, 0.5),
                (0.5, 2**60), (float("nan"), 0.5), (1e300, 1e300), (0.3, 0.3), (-3, 0.5)]


def rrelu_samples(s, d):
    """(label, make) pairs: make() gives fresh arguments (in-place and out= ops write)."""
    args = set(s["args"])
    out = []
    for k, (shape, layout) in enumerate([((5, 7), None), ((), None), ((0,), None), ((4, 3), "t"),
                                         ((2, 3, 4, 5), "channels_last"), ((3, 1), "column")]):
        for lower, upper in RRELU_BOUNDS:
            for training in (False, True):
                for extra in ([{}] if "self_is_result" not in args else [{"self_is_result": False},
                                                                          {"self_is_result": True}]):
                    def make(shape=shape, layout=layout, lower=lower, upper=upper, training=training, extra=extra,
                             k=k):
                        x = sample(shape[::-1] if layout == "t" else shape, d, k)
                        if layout == "t":
                            x = x.t()
                        elif layout == "channels_last" and d not in (torch.bool,) and not d.is_complex:
                            x = x.contiguous(memory_format=torch.channels_last)
                        elif layout == "column":
                            x = sample((3, 4), d, k)[:, :1]
                        v = {"self": x, "lower": lower, "upper": upper, "training": training, **extra}
                        if "noise" in args:
                            v["noise"] = torch.zeros_like(x) if k != 3 else torch.zeros(x.numel() + 1, dtype=x.dtype)
                        if "grad_output" in args:
                            v["grad_output"] = sample(x.shape, d, k + 20)
                        if "out" in args:  # aten's training kernel writes past an out of another size (crashes)
                            v["out"] = (torch.empty(0, dtype=x.dtype) if k % 2 and not training else
                                        torch.zeros(x.shape, dtype=x.dtype))
                        if "generator" in args:
                            v["generator"] = None
                        return v
                    out.append((f"{d} {shape} {layout} {lower!r} {upper!r} {training} {extra}", make))
    return out


def prove_rrelu(op, s):
    f = aten(op)
    tally = Tally()
    compare = tally.compare

    def state(fn, v):
        """fn(v)'s outcome, with what the caller sees besides the values: the result's strides, the noise and self
        after the call, whether an out= call returned out and left it resized with aten's strides."""
        if "out" in v:
            o, extra = observed(lambda: fn(v), v["out"])
            return o, extra
        o = outcome(lambda: fn(v))
        if o[0] != "ok":
            return o, None
        extra = (tuple(o[1].stride()), o[1] is v["self"],
                 tuple(v["noise"].flatten().tolist()) if "noise" in v else None)
        return o, extra

    for d in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.complex64):
        for label, make in rrelu_samples(s, d):
            for grad_mode in (False, True):
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = state(lambda v: f(**v), va)
                    got = state(lambda v: rrelu_mine(s, v), vb)
                    if want[0][0] == "error":  # aten's training draws random slopes: an error is what it is
                        pass
                    elif va.get("training") and want[0][0] == "ok" and got[0][0] == "refused":
                        compare(label, want[0], got[0])
                        continue
                compare(f"{label} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
            if d != torch.float64 or want[0][0] != "ok" or "out" in s["args"]:
                continue
            # float64 gradients: self (a non-leaf for the in-place ops) and grad_output
            tensors = [a for a in ("self", "grad_output") if a in s["args"]]

            def backward(fn):
                v = make()
                leaves = {a: v[a].detach().clone().requires_grad_() for a in tensors}
                call = dict(v, **leaves)
                if s["via"] == "leaky_relu_.default":
                    call["self"] = leaves["self"] * 1
                r = fn(call)
                (r * torch.arange(r.numel(), dtype=r.dtype).view(r.shape)).sum().backward()
                return torch.cat([leaves[a].grad.flatten() if leaves[a].grad is not None
                                  else torch.zeros(leaves[a].numel(), dtype=torch.float64) for a in tensors])
            compare(f"gradient {label}", run(lambda: backward(lambda v: f(**v))),
                    outcome(lambda: backward(lambda v: rrelu_mine(s, v))))
            if s["via"] == "leaky_relu_.default":  # in place on a leaf requiring grad: aten's own error
                va, vb = make(), make()
                va["self"].requires_grad_()
                vb["self"].requires_grad_()
                compare(f"leaf {label}", run(lambda: f(**va)), outcome(lambda: rrelu_mine(s, vb)))
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_rrelu,)}
