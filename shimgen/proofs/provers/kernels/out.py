"""The prover of kernel `out` (shimgen/generate/routes/kernels/out.py): the functional, then aten's out= rules
(scalar.h's check_out_autograd and assign_out, mirror_common.assign_out); a row over an op with an index or a
sorted sequence (`samples`) is tried on arguments that op accepts.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from mirror_common import INDEXED_DTYPES, assign_out, indexed_samples, observed, overlaps, requires_grad_proxy, sample
from worker_common import ATEN_RAISES, Refused, Tally, aten, run, same


def assign_composite_out(s, values, out):
    """Row key `composite: true` (scalar.h check_out_device, assign_composite_out): aten's out= of a
    CompositeImplicitAutograd op: out's device, the functional, its dtype, out resized (where.self_out of a detached
    contiguous copy: resize_output's warning and strides; refused for an out autograd records), then copy_."""
    self = next(v for v in values.values() if isinstance(v, torch.Tensor))
    if out.device != self.device:
        raise RuntimeError(f"out is on another device than the input {ATEN_RAISES}")
    if s["rule"].get("refuse_aliased") and any(overlaps(out, v) for v in values.values() if isinstance(v, torch.Tensor)):
        raise Refused("out shares memory with an input")  # composite_out.h refuse_aliased_out
    result = aten(s["via"])(**values)
    if result.dtype != out.dtype:
        raise RuntimeError(f"expected out tensor dtype to be the result's {ATEN_RAISES}")
    if out.shape != result.shape:
        if torch.is_grad_enabled() and requires_grad_proxy(out):
            raise Refused("resizing an out autograd records")
        value = aten("clone")(aten("detach")(result), memory_format=torch.contiguous_format)
        aten("where.self_out")(torch.tensor(True), value, value, out=out)
    out.copy_(result)
    return out


def prove_out(op, s):
    if s.get("samples"):  # an op with an index or a sorted sequence: its own samples
        return prove_indexed(op, s)
    f = aten(op)
    names = [a for a in s["args"] if a != s["out"]]
    tensors = [a for a in names if s["types"][a] == "Tensor"]
    numbers = [a for a in names if s["types"][a] == "Scalar"]
    bools = [a for a in names if s["types"][a] == "bool"]
    compared = both_ok = refused = 0
    wrong = ""
    dtypes = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool,
              torch.complex64]
    shapes = ([((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((), ()), ((0, 3), (3,)), ((2, 3, 4, 5), (5,))]
              if len(tensors) > 1 else [((2, 3),), ((),), ((0, 3),), ((2, 3, 4, 5),)])

    def inputs(da, db, sh, n, k, channels_last=False):
        sh = tuple(sh) + tuple(sh[:1]) * (len(tensors) - len(sh))  # a third tensor (addcmul.out): the first's
        v = {a: sample(x, d, 3 * k + i) for i, (a, x, d) in enumerate(zip(tensors, sh, (da, db, da)))}
        if channels_last:
            v = {a: t.to(memory_format=torch.channels_last) if t.dim() == 4 else t for a, t in v.items()}
        for j, a in enumerate(numbers):
            v[a] = -n if j and not isinstance(n, bool) else n
        for a in bools:
            v[a] = bool(k % 2) and n >= 0
        v.update(s["rule"].get("sample_values", {}))  # the row's values of the op's other arguments (renorm.out)
        return v

    def outs(result_dtype, shape):
        yield "exact", lambda: torch.empty(shape, dtype=result_dtype)
        yield "empty", lambda: torch.empty(0, dtype=result_dtype)
        yield "non-empty resized", lambda: torch.zeros(7, dtype=result_dtype)
        if len(shape) >= 2:
            yield "transposed", lambda: torch.zeros(tuple(reversed(shape)), dtype=result_dtype).t() \
                if len(shape) == 2 else torch.zeros(shape, dtype=result_dtype).transpose(0, 1).contiguous() \
                .transpose(0, 1)
            yield "expanded", lambda: torch.zeros((1, *shape[1:]), dtype=result_dtype).expand(shape)
        for d in (torch.float32, torch.float64, torch.int64, torch.bool, torch.float16, torch.complex64):
            if d != result_dtype:
                yield f"dtype {d}", lambda d=d: torch.zeros(shape, dtype=d)

    def compare(label, make_values, make_out, grad_mode=False):
        nonlocal compared, both_ok, refused, wrong
        with torch.set_grad_enabled(grad_mode):
            va, oa = make_values(), make_out()
            want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
            vb, ob = make_values(), make_out()
            assign = assign_composite_out if s["rule"].get("composite") else assign_out
            got = observed(lambda: assign(s, vb, ob), ob)
        compared += 1
        if got[0][0] == "refused":
            refused += 1
            return
        both_ok += want[0][0] == got[0][0] == "ok"
        if (not same(want[0], got[0]) or want[1] != got[1]) and not wrong:
            wrong = f"{label}: {want[0][0]} {want[0][1] if want[0][0] == 'error' else want[1]} vs {got[0][0]} " \
                    f"{got[0][1] if got[0][0] == 'error' else got[1]}"

    for da in dtypes:
        for db in (dtypes if len(tensors) > 1 else [da]):
            for k, sh in enumerate(shapes):
                for n in ([0.5, -1.5, 2] if numbers or bools else [None]):
                    mk = (lambda da=da, db=db, sh=sh, n=n, k=k: inputs(da, db, sh, n, k))
                    r = run(lambda: aten(s["via"])(**mk()))
                    if r[0] != "ok":
                        compare(f"{da} {db} {sh} {n!r} (via raises)", mk, lambda: torch.empty(0, dtype=da))
                        continue
                    for kind, make_out in outs(r[1].dtype, tuple(r[1].shape)):
                        compare(f"{da} {db} {sh} {n!r} out {kind}", mk, make_out)
                    if len(sh[0]) == 4:  # channels_last inputs: a resized out gets their strides
                        mcl = (lambda da=da, db=db, sh=sh, n=n, k=k: inputs(da, db, sh, n, k, True))
                        compare(f"{da} {db} {sh} {n!r} channels_last, out empty", mcl,
                                lambda d=r[1].dtype: torch.empty(0, dtype=d))
    # aliasing: out is an input (same view; resized), partly overlaps one
    for n in ([0.5, -1.5] if numbers or bools else [None]):
        for target in tensors:
            for shape in ((2, 3), (3,)):
                box = {}

                def mk(shape=shape, target=target, n=n, box=box):
                    v = inputs(torch.float32, torch.float32, ((shape, (2, 3)) if len(tensors) > 1 else (shape,)), n, 5)
                    box["v"] = v
                    return v
                # out is the very tensor passed as `target` (the out tensor is made after the inputs)
                compare(f"out is {target} {shape} {n!r}", mk, lambda box=box, target=target: box["v"][target])
            base_box = {}

            def mk_partial(target=target, n=n, box=base_box):
                base = sample((3, 4), torch.float32, 9)
                v = inputs(torch.float32, torch.float32, tuple((3, 3) for _ in tensors), n, 6)
                v[target] = base[:, :3]
                box["base"] = base
                return v
            compare(f"out overlaps {target} {n!r}", mk_partial, lambda box=base_box: box["base"][:, 1:])
    # autograd: in grad mode no argument may require grad; without it aten computes. The number is the first of
    # the samples' for which `via` computes (linalg_matrix_norm raises for 0.5, which hid its grad-mode out= case)
    computes = [n for n in [0.5, -1.5, 2] if run(lambda: aten(s["via"])(**inputs(
        torch.float64, torch.float64, tuple((2, 3) for _ in tensors), n, 7)))[0] == "ok"]
    for n in (computes[:1] or [0.5] if numbers or bools else [None]):
        for who in [*tensors, "out"]:
            for grad_mode in (True, False):
                for nonleaf in (False, True):
                    box = {}

                    def mk_grad(who=who, n=n, nonleaf=nonleaf, box=box):
                        v = inputs(torch.float64, torch.float64, tuple((2, 3) for _ in tensors), n, 7)
                        if who != "out":
                            leaf = v[who].clone().requires_grad_()
                            v[who] = leaf * 1 if nonleaf else leaf
                        return v

                    def mk_out(who=who, nonleaf=nonleaf):
                        o = torch.zeros(2, 3, dtype=torch.float64)
                        if who == "out":
                            with torch.enable_grad():
                                o = o.requires_grad_() if not nonleaf else o.requires_grad_() * 1
                        return o
                    compare(f"{who} requires grad (non-leaf {nonleaf}), grad mode {grad_mode}", mk_grad, mk_out,
                            grad_mode)
    # the proxy itself: in grad mode, requires_grad of leaves, views, non-leaves, integer tensors
    with torch.enable_grad():
        leaf = torch.randn(3, dtype=torch.float64, requires_grad=True)
        for t in (leaf, leaf * 2, leaf[1:], leaf.detach(), torch.ones(3), torch.ones(3, dtype=torch.int64),
                  torch.randn(3)[1:]):
            if requires_grad_proxy(t) != t.requires_grad and not wrong:
                wrong = f"the requires_grad proxy differs for {t!r}"
    return {"compared": compared, "both_ok": both_ok, "refused": refused, "wrong": wrong}


# ---- rows over ops with an index or a sorted sequence (`samples: scatter`, `samples: searchsorted`) ----

def prove_indexed(op, s):
    """prove_out over an op with an index (`samples: scatter`) or a sorted sequence (`samples: searchsorted`), on
    arguments those ops accept."""
    f = aten(op)
    tally = Tally()
    compare = tally.compare
    assign = assign_composite_out if s["rule"].get("composite") else assign_out

    for d in INDEXED_DTYPES:
        for label, make in indexed_samples(s, d):
            r = run(lambda: aten(s["via"])(**make()))
            shapes = [tuple(r[1].shape)] if r[0] == "ok" else [(0,)]
            rdtype = r[1].dtype if r[0] == "ok" else d
            makers = [("exact", lambda: torch.empty(shapes[0], dtype=rdtype)),
                      ("empty", lambda: torch.empty(0, dtype=rdtype)),
                      ("non-empty resized", lambda: torch.zeros(7, dtype=rdtype))]
            makers += [(f"dtype {o}", lambda o=o: torch.zeros(shapes[0], dtype=o))
                       for o in (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool) if o != rdtype]
            for kind, make_out in makers:
                for grad_mode in (False, True):
                    with torch.set_grad_enabled(grad_mode):
                        va, oa = make(), make_out()
                        want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
                        vb, ob = make(), make_out()
                        got = observed(lambda: assign(s, vb, ob), ob)
                    compare(f"{label} out {kind} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
    if s.get("writes_out"):  # out is the first tensor argument itself; an argument requiring grad in grad mode
        first = next(a for a in s["args"] if s["types"][a] == "Tensor")
        for label, make in indexed_samples(s, torch.float64)[:12]:
            for grad_mode in (False, True):
                with torch.set_grad_enabled(grad_mode):
                    va, vb = make(), make()
                    want = observed(lambda: f(**va, **{s["out"]: va[first]}), va[first])
                    got = observed(lambda: assign(s, vb, vb[first]), vb[first])
                    compare(f"out is {first} {label} grad mode {grad_mode}", want[0], got[0], want[1], got[1])
                    va, vb = make(), make()
                    va[first].requires_grad_()
                    vb[first].requires_grad_()
                    oa, ob = torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.float64)
                    want = observed(lambda: f(**va, **{s["out"]: oa}), oa)
                    got = observed(lambda: assign(s, vb, ob), ob)
                    compare(f"{first} requires grad {label} grad mode {grad_mode}", want[0], got[0])
    return tally.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_out,)}
