"""The prover of kernel `cpu_activation` (shimgen/generate/routes/kernels/cpu_activation.py): the generated wrapper
itself (its row's `library`, built by shimgen/proofs/provers/compiled.py at target 2.10 and linked with libtorch
alone; the custom op `custom`) against aten's op, bit for bit (NaN payloads and the sign of zero included), with
dtype, shape and strides, on every input of _inputs: lengths around each capability's vector steps (2 * 4, 8, 16, 32
elements) and around the thread pool's split (grain 32,768), the specials (NaN, +-inf, +-0, subnormals, values near
exp's overflow and the softplus threshold) at the head, the middle and the tail of a vector block, several number
sets, a 0-dim and empty tensors, a storage offset, size-1 strides, a negative view, in float32, float64, bfloat16 and
float16 (NaNs of other payloads, signs and signaling ones too: the reduced-float conversions' NaN rules); strided and
int64 tensors and a tensor requiring grad in grad mode (refused: a `shimgen:` error, counted, never a value). A
row's `form` (inplace, out) runs its overload's own cases (_inplace_cases, _out_cases) instead.

aten's capability is chosen once per process (ATEN_CPU_CAPABILITY), so the hook runs its cases in one child process
of the runtime's interpreter per capability (avx512, avx2, default) and thread count (1, 2), and one with the variable
unset (the capability aten finds in the CPU's features, two threads), and adds their tallies.
A call the route should compute (a contiguous CPU tensor of a floating dtype, grad not recorded) that is refused
counts as wrong."""

import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from mirror_common import observed  # noqa: E402
from worker_common import ATEN_RAISES, Refused, Tally, aten, outcome, run  # noqa: E402

COMPUTED = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
NAN = float("nan")  # one object: a number set holding it compares equal to itself (REFUSED_BY_VALUE)
NUMBERS = {
    "elu.default": [(1.0, 1.0, 1.0), (0.5, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1.0),
                    (2.0, 0.3, 1.7), (-1.0, 1.0, 1.0), (1.0, 1.0, 0.0), (0.1, 2.0, -3.0), (1e-3, 1e3, 1e-3)],
    "softplus.default": [(1.0, 20.0), (2.0, 20.0), (0.5, 10.0), (1.0, 0.0), (-1.0, 20.0), (100.0, 1.0), (3.7, -5.0),
                         (1e-3, 30.0)],
    "gelu.default": [("tanh",)],  # a value kernel of kernel gelu_addmm's row (prove_gelu_addmm asks for it)
    # kernel cpu_number's pow row: the general loop (a float exponent in the vectors, a double in the scalar tail), the
    # specialized products (-2, and exponents a bfloat16 tensor rounds to 2, 3 or -2), those the number rules take
    # first (2, 3, 0.5, -1, -0.5), the specials and exponents a reduced dtype does not hold (aten raises)
    "pow.Tensor_Scalar": [(2.5,), (-2.0,), (1.5,), (4.0,), (0.25,), (7.0,), (-1.5,), (-0.7,), (1e-3,), (100.0,),
                          (0.0,), (1.0,), (2.0,), (3.0,), (0.5,), (-1.0,), (-0.5,), (2.001,), (3.0078125,),
                          (-2.0004,), (0.1,), (float("inf"),), (-float("inf"),), (float("nan"),), (1e39,),
                          (70000.0,), (-33.25,)],
    # kernel cpu_number's lerp row: weights below 0.5 and above (two formulas), exact in bfloat16 and not, the
    # specials, one a float does not hold (aten raises converting it)
    "lerp.Scalar": [(0.3,), (0.7,), (0.5,), (-0.4,), (1.3,), (0.0,), (1.0,), (1e-3,), (0.25,), (-2.5,), (NAN,),
                    (float("inf"),), (1e39,)],
}
# the binary ops (their second tensor: _tensors), and the dtypes each op's kernel computes where not all of COMPUTED
SECOND = {"lerp.Scalar"}
KERNEL_DTYPES: dict = {}
# (op, dtype, numbers) the op's number rules take before the kernel (pow(x, 2) as mul, 3 as the cube, 0.5 as sqrt, -1
# as reciprocal, -0.5 as rsqrt: aten's own ops, proven by their prover with NaN where aten has NaN, not its payload)
BY_NUMBER_RULES = {("pow.Tensor_Scalar", d, (2.0,)) for d in COMPUTED} | \
    {("pow.Tensor_Scalar", d, n) for d in (torch.float32, torch.float64, torch.bfloat16) for n in ((3.0,), (0.5,),
                                                                                                   (-1.0,))} | \
    {("pow.Tensor_Scalar", d, (-0.5,)) for d in (torch.float32, torch.float64)}
# (op, dtype, numbers) the wrapper may refuse: an exponent a reduced dtype does not hold (aten raises converting it)
REFUSED_BY_VALUE = {("pow.Tensor_Scalar", torch.bfloat16, (1e39,)), ("pow.Tensor_Scalar", torch.float16, (1e39,)),
                    ("pow.Tensor_Scalar", torch.float16, (70000.0,)), ("lerp.Scalar", torch.bfloat16, (1e39,)),
                    ("lerp.Scalar", torch.float16, (1e39,)), ("lerp.Scalar", torch.float32, (1e39,))} | \
    {("lerp.Scalar", d, (NAN,)) for d in COMPUTED}  # a NaN weight: the sibling's (it refuses)
KEYWORDS = {"gelu.default": ("approximate",)}  # aten's keyword-only arguments, in the order of NUMBERS
SPECIALS = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30, 1e-310, -1e-310, -5e-324, 88.7, -88.7, 20.0,
            20.000001, 19.99999, 10.0, -100.0, 1e30, -1e30, 709.0, -745.0, 1e-8, -1e-8, 0.5, -0.5, 5e-45, -1e-45,
            1.17e-38, -1.17e-38, 3.4e38, -3.4e38, -17.0, -9.0, 1e-4, -1e-4]

# the bits of NaNs with a payload, negative, signaling (bfloat16, float16; float, double as int)
PAYLOADS = {torch.bfloat16: [0x7fd5, 0xffff, 0x7f81, 0xffd5], torch.float16: [0x7e55, 0xffff, 0x7c01, 0xfe2b],
            torch.float32: [0x7fc12345, 0xffffffff, 0x7f800001]}


def _bits(t):
    return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])


def _values(numel, g, dtype):
    x = torch.randn(numel, generator=g, dtype=torch.float64) * 4
    if numel > 4:
        for k, v in enumerate(SPECIALS):
            x[(k * 7919) % numel] = v
        x[-1] = float("nan")
        x[-2] = -0.0
    if numel > 100:
        signs = torch.sign(torch.randn(50, generator=g, dtype=torch.float64))
        x[50:100] = torch.logspace(-40, 40, 50, dtype=torch.float64) * signs
    x = x.to(dtype)
    if numel > 40 and dtype in PAYLOADS:  # NaNs of other payloads and signs (the conversions' NaN rules)
        for k, bits in enumerate(PAYLOADS[dtype]):
            width = 8 * x.element_size()
            _bits(x)[(k * 4099 + 11) % numel] = bits - (1 << width if bits >> (width - 1) else 0)
    return x


def _inputs(dtype):
    g = torch.Generator().manual_seed(7)
    sizes = {2 * v * k + d for v in (4, 8, 16, 32) for k in (1, 2, 3, 5) for d in (-1, 0, 1)}
    sizes |= {0, 1, 2, 3, 7, 1000, 16383, 16384, 16385, 32767, 32768, 32769, 32800, 40001, 65535, 65536, 65537,
              100003}
    for numel in sorted(sizes):
        yield f"[{numel}]", _values(numel, g, dtype), True
    yield "0-dim", torch.tensor(-0.75, dtype=dtype), True
    base = _values(120, g, torch.float64).view(6, 5, 4).to(dtype)
    yield "[6, 5, 4]", base, True
    yield "offset", torch.empty(50, dtype=dtype)[7:37].view(5, 6).copy_(base.flatten()[:30].view(5, 6)), True
    yield "size-1 strides", base.reshape(120, 1).as_strided((120, 1), (1, 9)), True
    yield "empty [0, 3]", torch.empty(0, 3, dtype=dtype), True
    yield "negative view", torch._neg_view(base), True
    yield "transposed", base.transpose(0, 2), False
    yield "sliced", base[:, :3], False


def _aten(f, op, x, numbers, **out):
    """aten's overload `f` of the functional `op` called with the numbers (by keyword where they are keyword-only);
    a binary op's second tensor (SECOND) before them."""
    names = KEYWORDS.get(op)
    xs = _tensors(op, x)
    return f(*xs, **dict(zip(names, numbers)), **out) if names else f(*xs, *numbers, **out)


def _tensors(op, x):
    """The op's tensor arguments for the sample x: x, and a binary op's second tensor of x's sizes, dtype and layout
    (x * 0.75 + 1.5, NaN and infinities kept)."""
    return (x, x * 0.75 + 1.5) if op in SECOND else (x,)


def _wrapper(custom, errors=False):
    """The wrapper's custom op; its `shimgen:` errors are refusals, except (`errors`) those ending ATEN_RAISES: the
    route's own check of a call aten refuses (an out= form's), an error to compare."""
    ns, _, name = custom.partition(".")
    fn = getattr(getattr(torch.ops, ns), name)

    def call(*args):
        try:
            return fn(*args)
        except RuntimeError as e:
            line = str(e).splitlines()[0]
            if line.startswith("shimgen:") and not (errors and line.endswith(ATEN_RAISES)):
                raise Refused(line) from None
            raise
    return call


def cases(op, s):
    """The tally of one process (one capability, one thread count); a row's `form` its overload's own cases."""
    torch.ops.load_library(s["library"])
    f, wrapper = aten(op), _wrapper(s["custom"])
    t = Tally()
    should = []
    if s.get("form"):
        (_inplace_cases if s["form"] == "inplace" else _out_cases)(op, s, t, should)
        report = t.report()
        if should and not report["wrong"]:
            report["wrong"] = should[0]
        return report
    for dtype in (*COMPUTED, torch.int64):
        inputs = _inputs(dtype) if dtype != torch.int64 else [("int64", torch.arange(-5, 60), True)]
        for label, x, contiguous in inputs:
            # every number set on the short inputs, three on those around the thread pool's split
            for numbers in NUMBERS[op] if x.numel() < 16000 else NUMBERS[op][:3]:
                want = run(lambda: _aten(f, op, x, numbers))
                got = outcome(lambda: wrapper(*_tensors(op, x), *numbers))
                extra = [(r[1].stride(), True) if r[0] == "ok" else None for r in (want, got)]
                if want[0] == got[0] == "ok" and (op, dtype, numbers) not in BY_NUMBER_RULES:
                    extra[1] = (got[1].stride(), torch.equal(_bits(got[1]), _bits(want[1])))
                t.compare(f"{dtype} {label} {numbers}", want, got, *extra)
                if got[0] == "refused" and dtype in KERNEL_DTYPES.get(op, COMPUTED) and contiguous and \
                        (op, dtype, numbers) not in REFUSED_BY_VALUE:
                    should.append(f"{dtype} {label} {numbers}: refused: {got[1]}")
    leaf = torch.randn(9, 4, dtype=torch.float64).requires_grad_()
    for x in (leaf, leaf * 1):
        want = run(lambda: _aten(f, op, x, NUMBERS[op][0]))
        got = outcome(lambda: wrapper(*_tensors(op, x), *NUMBERS[op][0]))
        t.compare("requires grad", want, got)
        if got[0] == "ok" and got[1].requires_grad != want[1].requires_grad:  # computed: autograd must see it
            should.append("requires grad: computed where autograd would not record it")
    with torch.no_grad():
        want = run(lambda: _aten(f, op, leaf, NUMBERS[op][0]))
        got = outcome(lambda: wrapper(*_tensors(op, leaf), *NUMBERS[op][0]))
        t.compare("requires grad, no_grad", want, got)
        if got[0] != "ok":
            should.append(f"requires grad under no_grad: {got}")
    report = t.report()
    if should and not report["wrong"]:
        report["wrong"] = should[0]
    return report


# ---- the in-place and out= overloads (a row's `form`): the functional's computation, then aten's rules ----

FUNCTIONAL = {"elu_.default": "elu.default", "elu.out": "elu.default", "softplus.out": "softplus.default",
              "gelu_.default": "gelu.default", "gelu.out": "gelu.default", "pow.Tensor_Scalar_out": "pow.Tensor_Scalar",
              "lerp.Scalar_out": "lerp.Scalar"}
# the number sets of an out= form where not the functional's first two: pow's general loop, a number rule's value
# (0.5: sqrt) and a specialized product (2)
OUT_NUMBERS = {"pow.Tensor_Scalar_out": [(2.5,), (0.5,), (2.0,)]}


def _same_layout(x):
    """A tensor of x's values in x's very layout (a negative view stays one: its values negated underneath)."""
    if x.is_neg():
        return torch._neg_view(-x.resolve_neg())
    return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype).copy_(x)


def _equal_bits(a, b):
    return a.shape == b.shape and torch.equal(_bits(a.resolve_neg()), _bits(b.resolve_neg()))


def _equal_values(a, b):
    """Equal values, a NaN where the other has one (whatever its payload)."""
    a, b = a.resolve_neg(), b.resolve_neg()
    return a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


def _inplace_cases(op, s, t, should):
    """aten's in-place overload against the wrapper on every input of _inputs (a strided or negative-view self too)
    with three number sets: the result, whether self is returned, self's values bit for bit, strides, version and
    autograd state afterwards; self requiring grad (a leaf, a non-leaf) in and out of grad mode."""
    f, wrapper = aten(op), _wrapper(s["custom"], errors=True)
    numbers_all = NUMBERS[FUNCTIONAL[op]]
    for dtype in (*COMPUTED, torch.int64):
        inputs = _inputs(dtype) if dtype != torch.int64 else [("int64", torch.arange(-5, 60), True)]
        for label, x, contiguous in inputs:
            for numbers in numbers_all[:3] if x.numel() < 16000 else numbers_all[:1]:
                a, b = _same_layout(x), _same_layout(x)
                want = run(lambda: _aten(f, FUNCTIONAL[op], a, numbers))
                got = outcome(lambda: wrapper(b, *numbers))
                state = [(r[1] is v, v.stride(), v._version, v.requires_grad) if r[0] == "ok" else None
                         for r, v in ((want, a), (got, b))]
                if want[0] == got[0] == "ok":
                    state[1] = (*state[1], _equal_bits(a, b))
                    state[0] = (*state[0], True)
                t.compare(f"{dtype} {label} {numbers}", want, got, *state)
                if got[0] == "refused" and dtype in COMPUTED and contiguous and not x.is_neg():
                    should.append(f"{dtype} {label} {numbers}: refused: {got[1]}")
    for nonleaf in (False, True):
        for grad_mode in (True, False):
            outs = []
            for fn in (lambda v: _aten(f, FUNCTIONAL[op], v, numbers_all[0]), lambda v: wrapper(v, *numbers_all[0])):
                def call(fn=fn):
                    leaf = torch.randn(7, 9, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
                    leaf.requires_grad_()
                    with torch.set_grad_enabled(grad_mode):
                        v = leaf * 1 if nonleaf else leaf
                        r = fn(v)
                    return torch.cat([r.detach().flatten(), torch.tensor([float(r.requires_grad),
                                                                          float(r.grad_fn is None)])])
                outs.append(outcome(call))
            t.compare(f"self requires grad, non-leaf {nonleaf}, grad mode {grad_mode}", *outs)
            if not grad_mode and outs[1][0] != "ok":
                should.append(f"self requires grad under no_grad: {outs[1]}")


def _out_cases(op, s, t, should):
    """aten's out= overload against the wrapper on the functional's inputs (up to 40,001 elements; above 1,100 into an
    out of the result's sizes or an empty one) with two number sets, into outs of the result's sizes, empty, non-empty to be resized (aten's warning), transposed, expanded, of
    other dtypes; out the input itself (contiguous, transposed), out overlapping the input; an input or out
    requiring grad in and out of grad mode: the outcome, out's values bit for bit, strides, whether out is returned,
    the warnings, errors."""
    f, wrapper = aten(op), _wrapper(s["custom"], errors=True)
    numbers_all = NUMBERS[FUNCTIONAL[op]]
    sets = OUT_NUMBERS.get(op, numbers_all[:2])
    functional = FUNCTIONAL[op]

    def outs(x):
        shape, d = tuple(x.shape), x.dtype
        yield "exact", lambda: torch.full(shape, 7.0, dtype=d), True
        yield "empty", lambda: torch.empty(0, dtype=d), True
        yield "non-empty resized", lambda: torch.zeros(7, dtype=d), True
        if len(shape) >= 2:
            yield "transposed", lambda: torch.zeros(tuple(reversed(shape)), dtype=d).transpose(0, len(shape) - 1), \
                False
            yield "expanded", lambda: torch.zeros((1, *shape[1:]), dtype=d).expand(shape), False
            yield "wrong size, transposed", lambda: torch.zeros(5, 9, dtype=d).t(), False
        for other in (torch.float32, torch.float64, torch.bfloat16, torch.int64):
            if other != d:
                yield f"dtype {other}", lambda other=other: torch.zeros(shape, dtype=other), False

    def compare(label, x, numbers, oa, ob, computes):
        want = observed(lambda: _aten(f, FUNCTIONAL[op], x, numbers, out=oa), oa)
        got = observed(lambda: wrapper(*_tensors(functional, x), *numbers, ob), ob)
        extra = [want[1], got[1]]
        if want[0][0] == got[0][0] == "ok":
            # a number the functional's number rules take: aten's own op, NaN where aten has NaN (cases())
            equal = _equal_values if (functional, x.dtype, numbers) in BY_NUMBER_RULES else _equal_bits
            extra = [(*want[1], True), (*got[1], equal(oa, ob))]
        t.compare(label, want[0], got[0], *extra)
        if computes and got[0][0] == "refused":
            should.append(f"{label}: refused: {got[0][1]}")

    for dtype in (*COMPUTED, torch.int64):
        inputs = _inputs(dtype) if dtype != torch.int64 else [("int64", torch.arange(-5, 60), True)]
        for label, x, contiguous in inputs:
            if x.numel() > 40001:
                continue
            for numbers in sets:
                for kind, make, plain in outs(x):
                    if x.numel() > 1100 and kind not in ("exact", "empty"):
                        continue  # the long inputs into the outs the wrapper computes into
                    computes = plain and contiguous and dtype in COMPUTED and not x.is_neg()
                    compare(f"{dtype} {label} {numbers} out {kind}", x, numbers, make(), make(), computes)
    numbers = numbers_all[0]
    for dtype in COMPUTED:
        base = _values(300, torch.Generator().manual_seed(9), dtype)
        for label, view, computes in (("out is self", lambda v: v[:240].view(12, 20), True),
                                      ("out is self, transposed", lambda v: v[:240].view(12, 20).t(), False),
                                      ("out overlaps self", lambda v: v[30:270].view(12, 20), False)):
            a, b = base.clone(), base.clone()
            xa, xb = a[:240].view(12, 20), b[:240].view(12, 20)
            if label == "out is self, transposed":
                xa, xb = xa.t(), xb.t()
            want = observed(lambda: _aten(f, FUNCTIONAL[op], xa, numbers, out=view(a)), a)
            got = observed(lambda: wrapper(*_tensors(functional, xb), *numbers, view(b)), b)
            extra = [want[1], got[1]]
            if want[0][0] == got[0][0] == "ok":
                extra = [(*want[1], True), (*got[1], _equal_bits(a, b))]
            t.compare(f"{dtype} {label}", want[0], got[0], *extra)
            if computes and got[0][0] == "refused":
                should.append(f"{dtype} {label}: refused: {got[0][1]}")
    for who in ("self", "out"):
        for grad_mode in (True, False):
            def made():
                x = torch.randn(2, 3, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
                o = torch.zeros(2, 3, dtype=torch.float64)
                with torch.enable_grad():
                    if who == "self":
                        x = x.requires_grad_() * 1
                    else:
                        o = o.requires_grad_()
                return x, o
            (xa, oa), (xb, ob) = made(), made()
            with torch.set_grad_enabled(grad_mode):
                want = observed(lambda: _aten(f, FUNCTIONAL[op], xa, numbers, out=oa), oa)
                got = observed(lambda: wrapper(*_tensors(functional, xb), *numbers, ob), ob)
            extra = [want[1], got[1]]
            if want[0][0] == got[0][0] == "ok":
                extra = [(*want[1], True), (*got[1], _equal_bits(oa, ob))]
            t.compare(f"{who} requires grad, grad mode {grad_mode}", want[0], got[0], *extra)
            if not grad_mode and got[0][0] == "refused":
                should.append(f"{who} requires grad under no_grad: refused: {got[0][1]}")


def prove_cpu_activation(op, s):
    """cases() in one child process per capability and thread count; the tallies added, the first difference kept
    with the capability and thread count it was seen at."""
    total = {"compared": 0, "both_ok": 0, "refused": 0, "wrong": ""}
    release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if release < tuple(int(p) for p in s["compiled"].split(".")):
        # a library built at the target does not load on an older libtorch: nothing to prove there
        return {**total, "skipped": f"torch {torch.__version__} is older than the target {s['compiled']}"}
    # each capability chosen by ATEN_CPU_CAPABILITY, and the one aten finds in the CPU's features (None: unset)
    for capability, threads in [(c, n) for c in ("avx512", "avx2", "default") for n in (1, 2)] + [(None, 2)]:
        env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
        env["SHIMGEN_PROVE_THREADS"] = str(threads)
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        # run by path without its folder on sys.path (this folder's select.py would shadow the standard one)
        child = f"import runpy; runpy.run_path({os.path.abspath(__file__)!r}, run_name='__main__')"
        proc = subprocess.run([sys.executable, "-c", child], input=json.dumps([op, s]), env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            total["wrong"] = total["wrong"] or f"{capability} x{threads}: {proc.stderr.strip()[-500:]}"
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        for k in ("compared", "both_ok", "refused"):
            total[k] += r[k]
        if r["wrong"] and not total["wrong"]:
            total["wrong"] = f"{capability} x{threads}: {r['wrong']}"
    return total


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_cpu_activation,)}

if __name__ == "__main__":
    torch.set_num_threads(int(os.environ["SHIMGEN_PROVE_THREADS"]))
    op_, s_ = json.load(sys.stdin)
    print(json.dumps(cases(op_, s_)))
    sys.stdout.flush()
    os._exit(0)
