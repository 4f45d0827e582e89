"""Samples from PyTorch's OpInfo database: the aten calls its sample inputs reach, recorded once per torch version.

Each OpInfo of `torch.testing._internal.common_methods_invocations.op_db` runs its CPU sample inputs in several
dtypes (forward), and in float64 with gradients (forward and backward), and each ModuleInfo of
`common_modules.module_db` its module inputs (float32; float64 with backward), while two recorders watch:
- a TorchDispatchMode sees every aten overload that reaches a kernel (the ops below autograd, `*_backward` ops);
- Python kernels at the CompositeImplicitAutograd key (under the Python dispatcher) see the composite overloads
  that decompose before any mode could see them (`linear`, `layer_norm`, `to.dtype`, ...).
Each call is stored as argument name -> value (serial.encode), taken before the kernel runs (an in-place op's input
as the caller passed it), with the OpInfo, dtype and pass it came from. An overload keeps a few calls of distinct
shapes, dtypes and argument sets (QUOTA).

The corpus is a list of entries (an OpInfo, its variants, a ModuleInfo, common_nn's tests, the JIT's nn.functional
calls), each recorded on its own (fresh recorder state, seed 0) into one chunk file, so that what an entry records
never depends on what else was recorded. An op's samples come from the entries about it (an OpInfo named after it or
after an alias: `add`, `nn.functional.pad` for `pad`, `amax` and `masked.amax` for `amax`, with their variants),
or, for an op no entry is about, from every entry; each overload keeps the first KEPT calls, entry by entry in
corpus order (merge). So `--verify --ops add,pad,amax` records the few entries those ops need, not the corpus.

Where: CACHE_DIR/opinfo-<torch version>-<format>/ (CACHE_DIR: $SHIMGEN_CACHE_DIR, or $XDG_CACHE_HOME/shimgen, or
~/.cache/shimgen) holds entries.pkl (the corpus's entries in order, with the op names each is about) and one
`.chunk` per recorded entry, each written whole and renamed into place; a lock file lets one process record at a
time (another waits, then reads). The merged calls of one request are kept beside it as
opinfo-<torch version>-<format>-ops-<digest>.pkl (opinfo-<torch version>-<format>.pkl for the whole corpus),
written only when every entry the request needs has its chunk: a request with an entry missing (a worker died)
gets its calls in a file of its own run, never read back as a cache entry. The recording runs in worker processes
(`python -m shimgen.proofs.verify.record ...`, every jobs-th needed entry each); an entry that hangs or crashes
is kept as failed (left out, said in the note), and its worker restarted after it. OpInfo is test-only code
inside torch (importing it needs the `expecttest` package): when it cannot be imported, record() says why and
--verify uses shimgen's own samples.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from shimgen.proofs.verify import serial
from shimgen.base.process import exit_now, module_command

FORMAT = 5  # bump when what is recorded, how it is encoded or how entries are merged changes
FORWARD_DTYPES = ("float32", "int64", "bool", "complex64", "float64", "int32", "uint8", "bfloat16")
BACKWARD_DTYPE = "float64"
SAMPLES_PER_DTYPE = 12  # OpInfo sample inputs run per (OpInfo, dtype): the first ones cover most overloads
QUOTA = 16  # recorded calls kept per overload and entry ...
QUOTA_PER_DTYPE = 3  # ... and per dtype of its first tensor argument
KEPT = 16  # calls an overload keeps from its entries (merge)
INDEX = "entries.pkl"
STALL_SECONDS = 120  # a worker silent this long (one OpInfo hanging) is killed and restarted after that OpInfo


def cache_dir() -> str:
    if os.environ.get("SHIMGEN_CACHE_DIR"):
        return os.environ["SHIMGEN_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "shimgen")


def chunk_dir(torch_version: str) -> str:
    """The folder of this torch version's corpus index and recorded entries."""
    return os.path.join(cache_dir(), f"opinfo-{torch_version}-{FORMAT}")


def cache_path(torch_version: str, ops: list[str] | None = None) -> str:
    """The merged calls of `ops` (op stems; None: the whole corpus, what `matrix --recorded auto` reads)."""
    name = f"opinfo-{torch_version}-{FORMAT}"
    if ops is not None:
        name += "-ops-" + hashlib.sha256(",".join(sorted({stem(o) for o in ops})).encode()).hexdigest()[:16]
    return os.path.join(cache_dir(), name + ".pkl")


# ---- inside a worker --------------------------------------------------------------------------------------------


def _signature(v: Any) -> Any:
    import torch

    if isinstance(v, torch.Tensor):
        return ("T", v.dtype, v.dim(), v.numel() == 0, v.is_contiguous(), v.layout)
    if isinstance(v, (list, tuple)):
        return ("L", len(v), _signature(v[0]) if v else None)
    return type(v).__name__


def _first_dtype(args: dict[str, Any]) -> Any:
    import torch

    for v in args.values():
        if isinstance(v, torch.Tensor):
            return v.dtype
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor):
            return v[0].dtype
    return None


@dataclass
class Recorder:
    calls: dict[str, list[dict]] = field(default_factory=dict)  # overload -> [{"args": {...}, "source": str}]
    sigs: dict[str, set] = field(default_factory=dict)
    source: str = ""
    busy: bool = False

    def add(self, op: Any, args: tuple, kwargs: dict) -> None:
        """Keep the call if its overload is under quota and its signature is new (op: a torch OpOverload)."""
        if self.busy or op.namespace != "aten":
            return
        key = f"{op._schema.name.removeprefix('aten::')}.{op._overloadname}"
        kept = self.calls.get(key, [])
        if len(kept) >= QUOTA:
            return
        try:
            named = _by_name(op, args, kwargs)
        except Exception:  # noqa: BLE001 - arguments the schema does not name: not a replayable call
            return
        sig = tuple((k, _signature(v)) for k, v in named.items())
        seen = self.sigs.setdefault(key, set())
        if sig in seen:
            return
        dtype = _first_dtype(named)
        if sum(1 for s in seen if s[0] == dtype) >= QUOTA_PER_DTYPE:
            return
        self.busy = True
        try:
            budget = [serial.MAX_BYTES]
            encoded = {k: serial.encode(v, budget) for k, v in named.items()}
        except serial.Unserializable:
            return
        finally:
            self.busy = False
        seen.add((dtype, *sig))
        self.calls.setdefault(key, []).append({"args": encoded, "source": self.source})


def _by_name(op: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments by schema name (positional ones in order, then keywords); omitted ones left out."""
    schema_args = op._schema.arguments
    positional = [a for a in schema_args if not a.kwarg_only]
    if len(args) > len(positional):
        raise TypeError("too many positional arguments")
    named = {a.name: v for a, v in zip(positional, args)}
    names = {a.name for a in schema_args}
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"unknown argument {k}")
        named[k] = v
    return {a.name: named[a.name] for a in schema_args if a.name in named}


def _install_composite_recorders(rec: Recorder) -> int:
    """A Python kernel at CompositeImplicitAutograd for every aten overload that has one: it records the call,
    then runs the C++ composite (or the Python decomposition already there). Returns how many were installed."""
    import torch
    from torch._C import DispatchKey

    cia = DispatchKey.CompositeImplicitAutograd
    n = 0
    for qualified in torch._C._dispatch_get_all_op_names():
        if not qualified.startswith("aten::"):
            continue
        if not torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd"):
            continue
        base, _, overload = qualified[len("aten::"):].partition(".")
        try:
            op = getattr(getattr(torch.ops.aten, base), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        inner = op.py_kernels.pop(cia, None)

        def kernel(*args: Any, _op: Any = op, _inner: Any = inner, **kwargs: Any) -> Any:
            rec.add(_op, args, kwargs)
            if _inner is not None:
                return _inner(*args, **kwargs)
            return _op._op_dk(cia, *args, **kwargs)

        op.py_impl(cia)(kernel)
        n += 1
    return n


def _outputs(result: Any) -> list:
    import torch

    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in _outputs(r)]
    return []


def _run_opinfo(info: Any, rec: Recorder, mode_cls: Any) -> None:
    import torch

    supported = info.supported_dtypes("cpu")
    passes = [(d, False) for d in FORWARD_DTYPES if getattr(torch, d) in supported]
    if info.supports_autograd and getattr(torch, BACKWARD_DTYPE) in supported:
        passes.append((BACKWARD_DTYPE, True))
    name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
    for dtype_name, grad in passes:
        torch.manual_seed(0)
        try:
            samples = list(info.sample_inputs("cpu", getattr(torch, dtype_name), requires_grad=grad))
        except Exception:  # noqa: BLE001 - an OpInfo whose samples cannot be made here
            continue
        source = f"OpInfo {name} {dtype_name} {'backward' if grad else 'forward'}"
        for sample in samples[:SAMPLES_PER_DTYPE]:
            # forward passes also run without the Python dispatcher (ops with a Python decomposition, _watch)
            _watch(rec, mode_cls, source, lambda s=sample: info.op(s.input, *s.args, **s.kwargs), grad,
                   direct=not grad and dtype_name in ("float32", "float64"))


def _watch(rec: Recorder, mode_cls: Any, source: str, call: Any, grad: bool = False, direct: bool = True) -> None:
    """Run call() under both recorders (and its backward when `grad`), keeping what it reached before any error.
    With `direct`, also once without the Python dispatcher: under it, an op with a Python decomposition
    (multi_margin_loss, upsample_nearest2d.vec, ...) reaches the mode only as its decomposition's ops."""
    import torch
    from torch._dispatch.python import enable_python_dispatcher

    rec.source = source
    for python_dispatcher in (True, False) if direct else (True,):
        torch.manual_seed(0)
        try:
            with enable_python_dispatcher() if python_dispatcher else contextlib.nullcontext(), mode_cls():
                result = call()
                if grad:
                    outs = [o for o in _outputs(result) if o.requires_grad and o.grad_fn is not None]
                    if outs:
                        torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
        except Exception:  # noqa: BLE001 - calls made before an error are still valid recordings
            pass


SPARSE_LAYOUTS = ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")


def _run_opinfo_variants(info: Any, rec: Recorder, mode_cls: Any) -> None:
    """What an OpInfo's own call does not reach: its aliases (`det` for linalg.det: a composite alias decomposes
    before any mode sees it, so only calling it records it at its own name), its in-place variant, and its sparse
    sample inputs (OpInfo.sample_inputs_sparse, for the layouts it supports)."""
    import torch

    supported = info.supported_dtypes("cpu")
    dtypes = [d for d in ("float32", "float64") if getattr(torch, d) in supported]
    name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
    for dtype_name in dtypes[:1]:
        dtype = getattr(torch, dtype_name)
        try:
            samples = list(info.sample_inputs("cpu", dtype))[:SAMPLES_PER_DTYPE]
        except Exception:  # noqa: BLE001
            samples = []
        variants = [(f"alias {a.name}", a.op) for a in getattr(info, "aliases", ()) or () if a.op is not None]
        if info.inplace_variant is not None:
            variants.append(("in-place", info.inplace_variant))
        for what, fn in variants:
            for s in samples:
                _watch(rec, mode_cls, f"OpInfo {name} {what} {dtype_name}",
                       lambda fn=fn, s=s: fn(s.input.clone() if isinstance(s.input, torch.Tensor) else s.input,
                                             *s.args, **s.kwargs))
    for layout_name in SPARSE_LAYOUTS:
        attr = "supports_sparse" if layout_name == "sparse_coo" else f"supports_{layout_name}"
        if not getattr(info, attr, False):
            continue
        for dtype_name in dtypes:
            try:
                samples = list(info.sample_inputs_sparse(getattr(torch, layout_name), "cpu", getattr(torch, dtype_name)))
            except Exception:  # noqa: BLE001
                continue
            for s in samples[:SAMPLES_PER_DTYPE]:
                _watch(rec, mode_cls, f"OpInfo {name} {layout_name} {dtype_name}",
                       lambda s=s: info.op(s.input, *s.args, **s.kwargs))


def _nn_test_call(test: dict, grad: bool = False) -> Any:
    """A common_nn test dict (module_tests, get_new_module_tests(), criterion_tests) as a call: the module built
    from its constructor arguments, applied to its input (and target, for a criterion), in float64 as the tests
    run them."""
    import torch

    def arg(name: str) -> Any:
        if name in test:
            return test[name]
        if name + "_fn" in test:
            return test[name + "_fn"]()
        if name + "_size" in test:
            size = test[name + "_size"]
            return [torch.randn(s) for s in size] if isinstance(size, list) else torch.randn(size)
        return ()

    ctor = test.get("constructor") or getattr(torch.nn, test["module_name"])
    args = test.get("constructor_args", ())
    module = ctor(*args) if isinstance(args, tuple) else ctor(args)
    inp = arg("input")
    inputs = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    if any(k in test for k in ("target", "target_fn", "target_size")):
        inputs.append(arg("target"))
    extra = test.get("extra_args", ())
    inputs = [t.double().requires_grad_(grad) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
              for t in inputs]
    module = module.double() if isinstance(module, torch.nn.Module) else module

    def call() -> Any:
        return module(*inputs, *extra)

    return call


def _run_nn_tests(rec: Recorder, mode_cls: Any) -> None:
    """common_nn's module and criterion tests (module_tests, get_new_module_tests(), criterion_tests): losses with
    their valid targets and reductions, modules with their documented constructor arguments; forward and
    backward."""
    from torch.testing._internal import common_nn

    tests = [*common_nn.module_tests, *common_nn.get_new_module_tests(), *common_nn.criterion_tests]
    for test in tests:
        name = test.get("fullname") or test.get("module_name", "?") + ("_" + test["desc"] if test.get("desc") else "")
        try:
            call = _nn_test_call(test, grad=True)
        except Exception:  # noqa: BLE001 - a test whose inputs cannot be made here (CUDA-only, ...)
            continue
        _watch(rec, mode_cls, f"common_nn {name}", call, grad=True)


def _run_nn_functional(rec: Recorder, mode_cls: Any) -> None:
    """jit_metaprogramming_utils.get_nn_functional_tests(): torch.nn.functional calls with the arguments the JIT
    tests pass (interpolate's sizes and scale factors, pools, unpools, losses)."""
    import torch
    from torch.testing._internal.jit_metaprogramming_utils import create_input, get_nn_functional_tests

    for entry in get_nn_functional_tests():
        name, self_size, args = entry[:3]
        variant = entry[3] if len(entry) > 3 else ""
        kwargs = entry[7] if len(entry) > 7 else {}
        fn = getattr(torch.nn.functional, name, None)
        if fn is None:
            continue
        for dtype, grad in ((torch.float32, False), (torch.float64, True)):
            try:
                inputs, kw = create_input((self_size, *args), requires_grad=grad, call_kwargs=kwargs, dtype=dtype)
            except Exception:  # noqa: BLE001
                continue
            _watch(rec, mode_cls, f"nn.functional {name} {variant} {dtype}".replace("  ", " "),
                   lambda fn=fn, inputs=inputs, kw=kw: fn(*inputs, **kw), grad=grad)


def _run_module(info: Any, rec: Recorder, mode_cls: Any) -> None:
    """A ModuleInfo's modules (common_modules.module_db): float32 forward, float64 forward and backward."""
    import torch

    for dtype_name, grad in (("float32", False), (BACKWARD_DTYPE, True)):
        dtype = getattr(torch, dtype_name)
        if dtype not in info.supported_dtypes("cpu"):
            continue
        torch.manual_seed(0)
        try:
            inputs = list(info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=grad,
                                                  training=True))
        except Exception:  # noqa: BLE001
            continue
        source = f"ModuleInfo {info.name} {dtype_name} {'backward' if grad else 'forward'}"
        for mi in inputs[:SAMPLES_PER_DTYPE]:
            c, f = mi.constructor_input, mi.forward_input
            try:
                torch.manual_seed(0)
                module = info.module_cls(*c.args, **c.kwargs).to(dtype)
            except Exception:  # noqa: BLE001
                continue
            _watch(rec, mode_cls, source, lambda m=module, f=f: m(*f.args, **f.kwargs), grad, direct=not grad)


# ---- the corpus entries, and which belong to an op ---------------------------------------------------------


def stem(name: str) -> str:
    """An op or OpInfo name without the in-place suffix: `add_` and `add` share their samples (`__and__` stays)."""
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def _entry_names(info: Any) -> list[str]:
    """The op names an OpInfo is about: its name (`nn.functional.pad`), that name with underscores
    (`linalg_det`) and its last part (`pad`), its aten_name, and the same for each alias (`det`); in-place
    suffixes stripped (stem)."""
    names = [info.name, getattr(info, "aten_name", None), getattr(info, "decomp_aten_name", None)]
    names += [a.name for a in getattr(info, "aliases", ()) or ()]
    out = set()
    for n in filter(None, names):
        out |= {stem(n), stem(n.replace(".", "_")), stem(n.rpartition(".")[2])}
    return sorted(out)


def select(index: list[tuple[str, list[str]]], ops: list[str] | None) -> dict[str, list[str]]:
    """op stem -> the corpus entries its samples come from, in corpus order: the entries about it (an OpInfo of
    that name or alias, and its variants), or, for an op no entry is about, every entry. ops=None: one item
    `*`, every entry."""
    every = [key for key, _ in index]
    if ops is None:
        return {"*": every}
    chosen = {}
    for s in sorted({stem(op) for op in ops}):
        chosen[s] = [key for key, names in index if s in names] or every
    return chosen


def _corpus(op_db: Any) -> list[tuple[Any, Any, str, list[str]]]:
    """Every entry of the corpus, in order: (info, how to run it, key, the op names it is about)."""
    entries = []
    for info in op_db:
        key = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        entries.append((info, _run_opinfo, key, _entry_names(info)))
    entries += [(i, _run_opinfo_variants, "variants of " + key, names) for i, _, key, names in list(entries)]
    try:
        from torch.testing._internal.common_modules import module_db

        entries += [(m, _run_module, "module " + m.name, []) for m in module_db]
    except Exception:  # noqa: BLE001 - OpInfo alone still records most of the surface
        pass
    # common_nn's module/criterion tests and the JIT's nn.functional calls: no info object, one entry each
    entries += [(None, lambda _i, r, m: _run_nn_tests(r, m), "common_nn tests", []),
                (None, lambda _i, r, m: _run_nn_functional(r, m), "nn.functional tests", [])]
    return entries


def chunk_path(folder: str, key: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in key)[:100]
    return os.path.join(folder, f"{safe}-{zlib.crc32(key.encode()):08x}.chunk")


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _read(path: str) -> Any:
    try:
        with open(path, "rb") as f:
            return serial.loads(f.read())
    except (OSError, Exception):  # noqa: BLE001 - a missing, partial or foreign file is not there
        return None


# ---- inside a worker --------------------------------------------------------------------------------------------


def work(folder: str, ops: list[str] | None, part: int, parts: int) -> int:
    """Record this worker's share (every parts-th) of the entries `ops` need that have no chunk in `folder` yet,
    one chunk file per entry; write the corpus index (entries.pkl) when it is missing."""
    try:
        import torch
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception as e:  # noqa: BLE001 - ImportError, or whatever test-only code raises on import
        print(f"unavailable: {type(e).__name__}: {' '.join(str(e).split())}", flush=True)
        return 3
    import warnings

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    rec = Recorder()

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            rec.add(func, args, kwargs)
            return func(*args, **kwargs)

    entries = _corpus(op_db)
    index = [(key, names) for _, _, key, names in entries]
    index_path = os.path.join(folder, INDEX)
    if _read(index_path) is None:
        _write(index_path, serial.dumps({"format": FORMAT, "entries": index}))
    wanted = {key for keys in select(index, ops).values() for key in keys}
    mine = [e for e in entries if e[2] in wanted][part::parts]
    _install_composite_recorders(rec)
    for info, run, key, _ in mine:
        path = chunk_path(folder, key)
        if os.path.exists(path):
            continue
        print(f"start {key}", flush=True)
        rec.calls, rec.sigs = {}, {}  # each entry on its own: its chunk is the same whatever ran before it
        torch.manual_seed(0)
        run(info, rec, Mode)
        _write(path, serial.dumps({"entry": key, "calls": rec.calls}))
        print(f"done {key}", flush=True)
    print("end", flush=True)
    return 0


# ---- the driver ---------------------------------------------------------------------------------------------


@dataclass
class Recording:
    calls: dict[str, list[dict]]  # overload (`add.Tensor`, `amax.default`) -> recorded calls
    path: str | None  # the file the calls are in (what the samples runner reads)
    note: str | None  # why OpInfo samples are missing or partial
    seconds: float = 0.0
    cached: bool = False  # nothing was recorded for it
    recorded: list[str] = field(default_factory=list)  # the corpus entries this call recorded


def merge(index: list[tuple[str, list[str]]], chunks: dict[str, dict], ops: list[str] | None) -> dict[str, list[dict]]:
    """The calls of each overload: for each op (stem), its entries' calls of its own overloads (`add.*`,
    `add_.*`), entry by entry in corpus order, up to KEPT per overload (ops=None: every overload, from every
    entry). What an op gets never depends on what else was asked or is cached."""
    calls: dict[str, list[dict]] = {}
    for s, keys in select(index, ops).items():
        family = None if s == "*" else {s, s + "_"}
        for key in keys:
            for overload, found in (chunks.get(key) or {}).get("calls", {}).items():
                if family is not None and overload.rpartition(".")[0] not in family:
                    continue
                kept = calls.setdefault(overload, [])
                kept.extend(found[: max(KEPT - len(kept), 0)])
    return {k: v for k, v in calls.items() if v}


def load(path: str) -> Recording | None:
    data = _read(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return Recording(data["calls"], path, data.get("note"), data.get("seconds", 0.0), cached=True)


def _label(ops: list[str] | None) -> str:
    if ops is None:
        return "the whole corpus"
    shown = ", ".join(ops[:8]) + (f", ... ({len(ops) - 8} more)" if len(ops) > 8 else "")
    return f"{len(ops)} op{'s' if len(ops) != 1 else ''} ({shown})"


def record(torch_version: str, python: str = sys.executable, jobs: int = 2, ops: list[str] | None = None,
           log: Any = None, progress: Any = None) -> Recording:
    """The recorded calls of `ops` (op names, `add`, `pad`; None: every op of the corpus) for this torch version:
    each corpus entry they need is recorded once (in `jobs` workers) and kept; a later call records only the
    entries it lacks. `progress`: a stream told when recording starts and ends (nothing when all is cached)."""
    ops = None if ops is None else sorted({stem(op) for op in ops})
    path = cache_path(torch_version, ops)
    cached = load(path)
    if cached is not None:
        return cached
    folder = chunk_dir(torch_version)
    os.makedirs(folder, exist_ok=True)
    # one recorder per folder: a concurrent run (parallel test workers) waits for it and reads what it recorded
    with open(os.path.join(folder, "lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = load(path)
        return cached if cached is not None else _record(torch_version, folder, path, python, jobs, ops, log,
                                                         progress)


def _missing(folder: str, ops: list[str] | None) -> tuple[list | None, list[str] | None]:
    """(the corpus index, the ops some of whose entries have no chunk yet); (None, ops) before the index exists."""
    data = _read(os.path.join(folder, INDEX))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, ops
    index = [(key, names) for key, names in data["entries"]]
    lacking = [s for s, keys in select(index, ops).items()
               if any(not os.path.exists(chunk_path(folder, k)) for k in keys)]
    return index, (None if ops is None and lacking else lacking)


def _record(torch_version: str, folder: str, path: str, python: str, jobs: int, ops: list[str] | None, log: Any,
            progress: Any) -> Recording:
    t0 = time.perf_counter()
    index, lacking = _missing(folder, ops)
    notes: list[str] = []
    recorded: list[str] = []
    if index is None or lacking is None or lacking:
        if progress is not None:
            print(f"shimgen: recording OpInfo samples for {_label(lacking)}...", file=progress, flush=True)
        unavailable: list[str] = []

        def drive(i: int) -> None:
            while True:
                stopped_in = _run_worker(python, folder, lacking, i, jobs, log, recorded)
                if stopped_in is None:
                    return
                if stopped_in.startswith("unavailable"):
                    unavailable.append(stopped_in)
                    return
                if stopped_in == "?":  # died outside any entry: do not retry
                    return
                # an entry that hung or crashed is kept as such (not retried), the worker restarted after it
                _write(chunk_path(folder, stopped_in), serial.dumps({"entry": stopped_in, "calls": {},
                                                                      "failed": True}))

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(drive, range(jobs)))
        if unavailable:
            return Recording({}, None, f"OpInfo samples {unavailable[0]}; using shimgen's own samples only",
                             time.perf_counter() - t0)
        index, _ = _missing(folder, ops)
        if index is None:
            return Recording({}, None, "recording OpInfo samples failed: no corpus index was written",
                             time.perf_counter() - t0, recorded=recorded)
    keys = sorted({k for ks in select(index, ops).values() for k in ks})
    chunks = {k: _read(chunk_path(folder, k)) for k in keys}
    failed = [k for k in keys if not isinstance(chunks[k], dict) or chunks[k].get("failed")]
    if failed:
        notes.append(f"OpInfo entries that hung or crashed while recording (left out): {', '.join(failed)}")
    calls = merge(index, {k: c for k, c in chunks.items() if isinstance(c, dict)}, ops)
    seconds = time.perf_counter() - t0
    note = "; ".join(notes) or None
    if recorded and progress is not None:
        print(f"shimgen: recorded OpInfo samples for {_label(ops)} in {seconds:.0f}s "
              f"({len(recorded)} corpus entries)", file=progress, flush=True)
    if all(isinstance(c, dict) for c in chunks.values()):  # every entry there (recorded, or failed for good)
        _write(path, serial.dumps({"format": FORMAT, "torch": torch_version, "ops": ops, "calls": calls,
                                   "note": note, "seconds": seconds}))
        if ops is not None and len(keys) == len(index):  # it took every entry: the whole corpus's file too
            _write(cache_path(torch_version), serial.dumps({"format": FORMAT, "torch": torch_version, "ops": None,
                                                            "calls": merge(index, chunks, None), "note": note,
                                                            "seconds": seconds}))
        return Recording(calls, path, note, seconds, cached=not recorded, recorded=recorded)
    missing = [k for k, c in chunks.items() if not isinstance(c, dict)]
    note = "; ".join([*notes, f"OpInfo entries not recorded (a worker died): {', '.join(missing)}"])
    partial = os.path.join(folder, f"partial-{os.getpid()}.pkl")  # this run's only: never read as a cache entry
    _write(partial, serial.dumps({"format": FORMAT, "torch": torch_version, "ops": ops, "calls": calls}))
    return Recording(calls, partial, note, seconds, recorded=recorded)


def _run_worker(python: str, folder: str, ops: list[str] | None, part: int, parts: int, log: Any,
                recorded: list[str]) -> str | None:
    """Run one worker to its end; None when it finished, else the entry it stalled or crashed in (or
    `unavailable: ...`). The entries it recorded are appended to `recorded`."""
    cmd = module_command(python, "shimgen.proofs.verify.record", folder, str(part), str(parts),
                         "*" if ops is None else ",".join(ops))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log or subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    current = None
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = ""
    while True:
        if not sel.select(timeout=STALL_SECONDS):
            proc.kill()
            proc.wait()
            return current or "?"
        chunk = os.read(proc.stdout.fileno(), 65536).decode(errors="replace")
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split("\n")
        for line in lines:
            if line.startswith("start "):
                current = line[len("start "):]
            elif line.startswith("done "):
                recorded.append(line[len("done "):])
                current = None
            elif line.startswith("unavailable"):
                proc.wait()
                return line
    code = proc.wait()
    if code == 0:
        return None
    return current or "?"


def main(argv: list[str]) -> int:
    folder, part, parts, ops = argv
    return work(folder, None if ops == "*" else [o for o in ops.split(",") if o], int(part), int(parts))


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]))
