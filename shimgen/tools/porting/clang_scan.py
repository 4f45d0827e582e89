"""The ATen constructs of one source file, with types resolved: libclang parses it against the installed torch's
headers (ATen's, with a precompiled prelude cached under ~/.cache/shimgen/port), so `v.data()` of a std::vector,
`d.index()` of a Device and `t.index({0})` of a Tensor are told apart by the declaration each call reaches.

A construct is a Site: where it is (file, line, byte range), what kind it is (a call of an aten op, a Tensor
member, a template method, an operator, a type, a constant, a macro, an include, a hazard, a call with a rule),
and the pieces the fixer needs (the object's and the arguments' byte ranges)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from shimgen.base import cache, output

try:
    import fcntl  # the PCH lock (_building); where there is none, scans are not serialized
except ImportError:  # pragma: no cover - not a POSIX system
    fcntl = None  # type: ignore[assignment]
from shimgen.tools.porting import clang_env, macros, rules

ATEN_NAMESPACES = ("at", "torch", "c10")
TENSOR_CLASSES = ("at::Tensor", "at::TensorBase")
CUDA_SUFFIXES = (".cu", ".cuh")

# Stand-ins the analysis includes instead of torch/extension.h and friends: ATen and the op registry without
# torch's Python headers (parsing pybind11 would triple the time and adds no construct a port changes).
_OVERLAY = {
    # torch::autograd::Function and its context: torch/extension.h declares them (torch/all.h)
    "torch/extension.h": "#pragma once\n#include <ATen/ATen.h>\n#include <torch/library.h>\n"
                         "#include <torch/csrc/autograd/custom_function.h>\n"
                         "namespace torch { using namespace at; }\n"
                         "struct shimgen_port_module { template <class... A> shimgen_port_module& def(A&&...) "
                         "{ return *this; } };\n"
                         "#define PYBIND11_MODULE(name, var) static void shimgen_port_pybind11(shimgen_port_module& var)\n"
                         "#ifndef TORCH_EXTENSION_NAME\n#define TORCH_EXTENSION_NAME shimgen_port_ext\n#endif\n",
}
# a CPU wheel of torch ships c10/cuda's headers without the one CMake writes for CUDA builds
_OVERLAY["c10/cuda/impl/cuda_cmake_macros.h"] = "#pragma once\n"
# ATen/cuda/CUDAContext.h without the CUDA math libraries' headers (cusparse.h, cublas_v2.h, cusolverDn.h: not in
# a toolkit of nvcc and the runtime alone): the streams, devices and properties a kernel file uses
_OVERLAY["ATen/cuda/CUDAContext.h"] = (
    "#pragma once\n#include <ATen/Context.h>\n#include <c10/cuda/CUDAStream.h>\n#include <c10/cuda/CUDAFunctions.h>\n"
    "#include <c10/cuda/CUDAException.h>\n#include <cuda_runtime_api.h>\n"
    "namespace at::cuda {\ninline int64_t getNumGPUs() { return c10::cuda::device_count(); }\n"
    "inline bool is_available() { return c10::cuda::device_count() > 0; }\n"
    "cudaDeviceProp* getCurrentDeviceProperties();\nint warp_size();\n"
    "cudaDeviceProp* getDeviceProperties(c10::DeviceIndex device);\n"
    "bool canDeviceAccessPeer(c10::DeviceIndex device, c10::DeviceIndex peer_device);\n"
    "void* getCurrentCUDABlasHandle(bool setup = true);\nvoid* getCurrentCUDASparseHandle();\n}\n")
for _alias in ("torch/torch.h", "torch/all.h", "torch/python.h"):
    _OVERLAY[_alias] = "#pragma once\n#include <torch/extension.h>\n"
_PRELUDE = "#pragma once\n#include <ATen/ATen.h>\n#include <torch/library.h>\n#include <torch/extension.h>\n"
# CUDA sources parse as C++: the launch configuration `<<<...>>>` is blanked (byte offsets kept) and the CUDA
# qualifiers and built-in variables are declared here.
_CUDA_PRELUDE = ("#include <torch/headeronly/core/TensorAccessor.h>\n"
                 "namespace torch::headeronly { template <typename T> struct RestrictPtrTraits "
                 "{ typedef T* __restrict__ PtrType; }; }\n"  # declared only under nvcc's __CUDACC__
                 "namespace at { using torch::headeronly::RestrictPtrTraits; }\n"
                 "#define __global__\n#define __device__\n#define __host__\n#define __shared__\n"
                 "#define __forceinline__ inline\n#define __launch_bounds__(...)\n#define __restrict__\n"
                 "struct shimgen_dim3 { unsigned x, y, z; };\n"
                 "extern const shimgen_dim3 threadIdx, blockIdx, blockDim, gridDim;\n"
                 # nvcc's device functions (declared by its headers under __CUDACC__ only): what kernels call, for
                 # the types to resolve (rusty1s/pytorch_scatter's atomics.cuh and warp reductions)
                 "struct __half { unsigned short __x; };\nstruct __nv_bfloat16 { unsigned short __x; };\n"
                 "extern const int warpSize;\nvoid __syncthreads();\nvoid __syncwarp(unsigned mask = 0xffffffff);\n"
                 "template <class T> struct shimgen_same { using type = T; };\n"
                 "template <class T> T atomicAdd(T* address, typename shimgen_same<T>::type val);\n"
                 "template <class T> T atomicSub(T* address, typename shimgen_same<T>::type val);\n"
                 "template <class T> T atomicMax(T* address, typename shimgen_same<T>::type val);\n"
                 "template <class T> T atomicMin(T* address, typename shimgen_same<T>::type val);\n"
                 "template <class T> T atomicExch(T* address, typename shimgen_same<T>::type val);\n"
                 "template <class T> T atomicCAS(T* address, typename shimgen_same<T>::type compare,\n"
                 "                               typename shimgen_same<T>::type val);\n"
                 "template <class A, class B> auto max(A a, B b) -> decltype(a < b ? b : a);\n"
                 "template <class A, class B> auto min(A a, B b) -> decltype(a < b ? a : b);\n"
                 "template <class T> T __ldg(const T* ptr);\n"
                 "template <class T> T __shfl_sync(unsigned mask, T var, int lane, int width = 32);\n"
                 "template <class T> T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32);\n"
                 "template <class T> T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32);\n"
                 "template <class T> T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32);\n"
                 "template <class T> T __shfl_up(T var, unsigned delta, int width = 32);\n"
                 "template <class T> T __shfl_down(T var, unsigned delta, int width = 32);\n"
                 "float __int_as_float(int x);\nint __float_as_int(float x);\n"
                 "double __longlong_as_double(long long x);\nlong long __double_as_longlong(double x);\n")


@dataclass
class Site:
    file: str
    line: int
    kind: str  # call | member | method | template | operator | type | constant | macro | include | hazard | rule
    key: str  # the aten op, member, rule key or macro name
    written: str  # the construct as written (one line)
    start: int = 0  # byte range of the construct in the file
    end: int = 0
    obj: tuple[int, int] | None = None  # the object of a method call
    args: list[tuple[int, int]] = field(default_factory=list)
    callee: tuple[int, int] | None = None  # the callee as written (`at::zeros`, `x.numel`, `TORCH_CHECK`)
    targs: str = ""  # template arguments as written
    nargs: int = 0
    numbers: tuple[int, ...] = ()  # positions (self counted) of arguments of a number type
    form: str = ""  # an operator's operand form: tensor | scalar | reverse
    qualified: str = ""  # the declaration reached, qualified
    # a function defined in the file (kind `function`): its parameters' canonical types and names, and its return
    # type's (what a registration without a schema writes the schema from)
    params: tuple[tuple[str, str], ...] = ()
    returns: str = ""
    noexcept: bool = False  # TORCH_BOX takes no noexcept function


class Unparsed(Exception):
    """libclang cannot read the file (not installed, a header not found): the caller falls back to tree-sitter."""


def _cache_dir() -> str:
    """$XDG_CACHE_HOME/shimgen/port or ~/.cache/shimgen/port (shimgen.base.cache.user_cache_home); with no cache
    folder (HOME empty), a temporary folder of this run, removed when port ends (`discard_temporary`)."""
    base = cache.user_cache_home()
    if base is not None:
        return os.path.join(base, "shimgen", "port")
    if not _TEMPORARY:
        _TEMPORARY.append(tempfile.mkdtemp(prefix="shimgen-port-"))
    return _TEMPORARY[0]


_TEMPORARY: list[str] = []  # the temporary folder _cache_dir made, if any


def discard_temporary() -> None:
    """Remove the temporary folder _cache_dir made in place of a cache, if it made one."""
    while _TEMPORARY:
        shutil.rmtree(_TEMPORARY.pop(), ignore_errors=True)


# How a precompiled prelude is made (part of the cache key): the headers' function bodies are skipped (only their
# declarations can decide what a construct of the user's file reaches: a body ATen writes in a header is never
# walked; clang keeps the bodies of constexpr functions and of those whose return type is deduced, which a
# declaration may need), and the templates the headers instantiate are instantiated once, in the PCH, rather than
# again at the end of every file parsed against it. Both cut a file's parse from seconds to a fraction of one.
_PCH_OPTIONS = ("PARSE_INCOMPLETE", "PARSE_SKIP_FUNCTION_BODIES")
_PCH_FLAGS = ("-Xclang", "-fpch-instantiate-templates")


def _overlay_key(ci) -> str:
    return hashlib.sha256(repr((sorted(_OVERLAY.items()), _PRELUDE, _CUDA_PRELUDE, clang_env.installed_torch()[1],
                                clang_env.builtin_includes(), ci.__file__, _PCH_OPTIONS,
                                _PCH_FLAGS)).encode()).hexdigest()[:16]


def _overlay_files(root: str) -> dict[str, str]:
    """The stand-in headers and the preludes, by the path each has under root."""
    files = {os.path.join(root, "include", rel): text for rel, text in _OVERLAY.items()}
    files[os.path.join(root, "prelude.h")] = _PRELUDE
    files[os.path.join(root, "cuda_prelude.h")] = _CUDA_PRELUDE
    return files


def _overlay_dir(ci) -> tuple[str, bool]:
    """The cache folder of the stand-in headers and preludes, and whether they are on disk there. A cache that cannot
    be written (a read-only folder, a full disk, the file size limit) costs only speed: the files are then handed to
    libclang from memory (`unsaved`), and no precompiled prelude is made."""
    root = os.path.join(_cache_dir(), _overlay_key(ci))
    if os.path.exists(os.path.join(root, "ready")):
        return root, True
    try:
        for path, text in _overlay_files(root).items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _write_once(path, text)
        _write_whole(os.path.join(root, "ready"), "")
    except OSError:
        return root, False
    return root, True


def _write_whole(path: str, text: str) -> None:
    """text at path through a rename: a concurrent scan (parallel test workers) reading the folder sees the old
    file or the new one, never a truncated one; a write that fails leaves nothing behind."""
    if not cache.fits(len(text.encode("utf-8"))):
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), path)
    tmp = f"{path}.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _install_once(tmp: str, path: str) -> None:
    """The whole file tmp made path where no file is there yet; where one is (another scan's, made meanwhile), that
    one stays: a precompiled prelude replaced under a scan that read it, or under a PCH made on top of it, makes
    libclang refuse them ("Error parsing translation unit"). The caller removes tmp."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not os.path.exists(path):
            os.replace(tmp, path)


def _write_once(path: str, text: str) -> None:
    """text at path where no file holds it yet, a file that does left as it is. A precompiled prelude records the
    time and size of every header it read, and libclang refuses it once one changes: a concurrent scan (parallel
    test workers, two runs on one cache) that rewrote a header, even with the same text, would break the PCH another
    one just made. The first writer's file stays (a hard link of a whole temporary file: never truncated)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    else:  # another text under this name (not written by this version): replaced
        _write_whole(path, text)
        return
    if not cache.fits(len(text.encode("utf-8"))):
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), path)
    tmp = f"{path}.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        _install_once(tmp, path)  # another scan made it first: its file stays
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _cuda_include() -> list[str]:
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "include", "cuda_runtime_api.h")):
            return [os.path.join(home, "include")]
    return []


def _includes(root: str) -> list[str]:
    return [os.path.join(root, "include"), *clang_env.torch_includes()]


# What the prelude's precompiled AST takes on disk (59 MB with torch 2.13), with a margin: below this much room (the
# file size limit, `ulimit -f`, or the free space) none is made.
PCH_ROOM = 256 * 1024 * 1024

# Run in a child process: libclang writes the PCH itself, and a write that fails there (a full disk, the file size
# limit) aborts its process ("IO failure on output stream") or, by SIGXFSZ, kills it. Only the child is lost.
_PCH_CHILD = """
import json, sys
prelude, out, args, where, options = json.loads(sys.argv[1])
sys.path.insert(0, where)  # the clang package the parent uses
from clang import cindex as ci
flags = 0
for name in options:
    flags |= getattr(ci.TranslationUnit, name)
tu = ci.Index.create().parse(prelude, args=args, options=flags)
if any(d.severity >= ci.Diagnostic.Fatal for d in tu.diagnostics):
    sys.exit(3)
tu.save(out)
"""


def _room_for_pch(root: str, count: int = 1) -> bool:
    """Room for `count` more precompiled preludes under root (the file size limit, the free space)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY and soft < PCH_ROOM:
            return False
    except (ImportError, OSError, ValueError):
        pass
    try:
        st = os.statvfs(root)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize >= PCH_ROOM * count


def _pch(ci, root: str, check=lambda: None, headers: tuple[str, ...] = (), defines: tuple[str, ...] = (),
         build: bool = True) -> str | None:
    """The prelude's precompiled AST (built once per torch and libclang, seconds; then a fraction of a second per
    file), or None where it cannot be made (no room for it, or its build failed): the file is then parsed without
    it. With `headers`, the prelude followed by those torch headers (`shared_headers`), built with the run's
    defines: its own file, made only where `build` (else used where an earlier run made it)."""
    _, pch = _pch_paths(root, headers, defines)
    if os.path.exists(pch):
        return pch
    if not build:
        return None
    return _make_pchs(ci, root, [headers], defines, check).get(headers)


def _workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _make_pchs(ci, root: str, wanted: list[tuple[str, ...]], defines: tuple[str, ...], check=lambda: None,
               started=lambda headers: None) -> dict[tuple[str, ...], str]:
    """Make the precompiled preludes of `wanted` (header sets, `_pch`) that are not on disk, as many at once as
    there are CPUs (and room for them), each by a child process (_PCH_CHILD): libclang writes the PCH itself, and
    a write that fails there aborts its process; only the child is lost. `check` is polled meanwhile, so an
    interrupt ends the children too; `started` is told of each build as it starts. Returns those on disk."""
    with _building(root, check):
        return _make_pchs_locked(ci, root, wanted, defines, check, started)


@contextlib.contextmanager
def _building(root: str, check):
    """One scan at a time makes the precompiled preludes of a cache folder (an advisory lock on a file there; the
    others wait, polling `check`, then find them made). Two scans filling an empty cache at once each made the same
    PCH, and one of them then failed to parse its file ("Error parsing translation unit"), measured one run in two.
    Where the lock file cannot be made (a cache that cannot be written), no lock: nothing is made there anyway."""
    try:
        if fcntl is None:
            raise OSError(errno.ENOSYS, "no fcntl")
        fd = os.open(os.path.join(root, ".building"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                check()
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _make_pchs_locked(ci, root: str, wanted: list[tuple[str, ...]], defines: tuple[str, ...], check,
                      started) -> dict[tuple[str, ...], str]:
    done: dict[tuple[str, ...], str] = {}
    todo = []
    for headers in wanted:
        _, pch = _pch_paths(root, headers, defines)
        if os.path.exists(pch):
            done[headers] = pch
        elif pch not in _FAILED and not os.path.exists(f"{pch}.failed"):
            todo.append(headers)
    running: list[tuple[tuple[str, ...], str, str, subprocess.Popen]] = []
    try:
        while todo or running:
            while todo and len(running) < _workers() and _room_for_pch(root, len(running) + 1):
                headers = todo.pop(0)
                job = _start_pch(ci, root, headers, defines)
                if job is not None:
                    started(headers)
                    running.append((headers, *job))
            if not running:
                break  # no room, or none could start
            time.sleep(0.05)
            check()
            for entry in list(running):
                headers, pch, tmp, child = entry
                code = child.poll()
                if code is None:
                    continue
                running.remove(entry)
                try:
                    if code != 0 or not os.path.isfile(tmp) or os.path.getsize(tmp) == 0:
                        _FAILED.add(pch)
                        if code == 3:  # libclang could not read the headers: not worth another try with them
                            with contextlib.suppress(OSError):
                                _write_whole(f"{pch}.failed", "")
                        continue
                    _install_once(tmp, pch)
                    done[headers] = pch
                except OSError:
                    continue
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
    finally:
        for _, _, tmp, child in running:  # an interrupt: the children end, their files go
            if child.poll() is None:
                child.kill()
            child.wait()
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return done


def _start_pch(ci, root: str, headers: tuple[str, ...], defines: tuple[str, ...]):
    """A child making one precompiled prelude: (its PCH's path, the temporary it writes, the process), or None
    where it cannot start (its header cannot be written, no process)."""
    prelude, pch = _pch_paths(root, headers, defines)
    extra = tuple(f"-D{d}" for d in defines) if headers else ()
    tmp = f"{pch}.{os.getpid()}"
    try:
        if headers:
            os.makedirs(os.path.dirname(prelude), exist_ok=True)
            _write_once(prelude, _PRELUDE + "".join(f"#include <{h}>\n" for h in headers))
        job = json.dumps([prelude, tmp, clang_env.args(_includes(root), header=True, extra=_PCH_FLAGS + extra),
                          os.path.dirname(os.path.dirname(os.path.abspath(ci.__file__))), list(_PCH_OPTIONS)])
        child = subprocess.Popen([sys.executable, "-c", _PCH_CHILD, job], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    return pch, tmp, child


_FAILED: set[str] = set()  # the precompiled preludes whose build failed in this process


def _pch_paths(root: str, headers: tuple[str, ...], defines: tuple[str, ...]) -> tuple[str, str]:
    """The header a precompiled prelude is made from, and the PCH's path."""
    if not headers:
        return os.path.join(root, "prelude.h"), os.path.join(root, "prelude.pch")
    name = hashlib.sha256(repr((headers, defines)).encode()).hexdigest()[:16]
    return os.path.join(root, "shared", f"{name}.h"), os.path.join(root, "shared", f"{name}.pch")


def prepare(shared: list[tuple[str, ...]], defines: tuple[str, ...] = (), status=lambda what: None) -> None:
    """Make the precompiled preludes a run will parse against where they are not made yet: the prelude's, and
    the prelude's with each set of `shared` headers (`shared_headers`); `status` is told which is being made
    (seconds each, once per torch). Where libclang, torch or the cache is missing, nothing: the scan says why."""
    ci = clang_env.cindex()
    if ci is None:
        return
    try:
        root, on_disk = _overlay_dir(ci)
    except ImportError:
        return
    if not on_disk:
        return
    making: list[str] = []

    def started(headers: tuple[str, ...]) -> None:
        making.append(" and ".join(["the prelude", *headers]))
        status("precompiling " + "; ".join(making) + " (once per torch)")

    with output.signals_polled() as check:
        _make_pchs(ci, root, [(), *shared], defines, check, started)


_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>", re.M)
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|define|undef)\b", re.M)


def shared_headers(path: str, text: str) -> tuple[str, ...]:
    """The torch headers a file includes that can go into a precompiled prelude: written `#include <...>` outside
    any conditional, before any `#define`/`#undef` of the file, found in the torch's include folders and not already
    in the prelude (the stand-ins). A CUDA file has none (its prelude's declarations come before such headers). A
    file parsed with these in its prelude sees what it sees when it includes them where it does, the prelude
    before its own code as ever; the files of a tree that share them share one parse of them."""
    if path.endswith(CUDA_SUFFIXES):
        return ()
    try:
        roots = clang_env.torch_includes()
    except ImportError:
        return ()
    found = set()
    depth = 0
    data = text.encode("utf-8")
    events = sorted([(m.start(), "include", m.group(1).decode("utf-8").strip()) for m in _INCLUDE.finditer(data)]
                    + [(m.start(), m.group(1).decode(), "") for m in _DIRECTIVE.finditer(data)])
    for at, kind, name in events:
        if _in_comment_or_string(data, at):
            continue
        if kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif kind == "endif":
            depth = max(0, depth - 1)
        elif kind in ("define", "undef"):
            if depth == 0:
                break
        elif depth == 0 and name not in _OVERLAY and name not in _PRELUDE_HEADERS and \
                any(os.path.isfile(os.path.join(r, name)) for r in roots):
            found.add(name)
    return tuple(sorted(found))


_PRELUDE_HEADERS = ("ATen/ATen.h", "torch/library.h")


def parse(path: str, text: str, defines: tuple[str, ...] = (), check=lambda: None, headers: tuple[str, ...] = (),
          build_shared: bool = True):
    """libclang's translation unit of the file, parsed against the precompiled prelude (with `headers`, the one of
    the prelude and those headers, where it is or can be made: `_pch`)."""
    ci = clang_env.cindex()
    if ci is None:
        raise Unparsed("libclang is not installed (pip install 'shimgen[port]')")
    try:
        root, on_disk = _overlay_dir(ci)
    except ImportError:
        raise Unparsed("torch is not installed: its headers resolve the types") from None
    cuda = path.endswith(CUDA_SUFFIXES)
    extra: list[str] = [f"-D{d}" for d in defines]
    includes = _includes(root)
    pch = None
    if on_disk and headers:
        pch = _pch(ci, root, check, headers, defines, build_shared)
    if on_disk and pch is None:
        pch = _pch(ci, root, check)
    if pch:
        extra = ["-include-pch", pch, *extra]
    else:
        extra = ["-include", os.path.join(root, "prelude.h"), *extra]
    if cuda:
        text = _blank_launches(text)
        # a kernel file parsed as C++ (no __CUDACC__): what only nvcc declares (c10::Half's `operator __half`) is an
        # error in a body, never the end of the file's scan
        extra += ["-include", os.path.join(root, "cuda_prelude.h"), "-ferror-limit=0"]
    includes += _cuda_include()  # a .cpp file of a CUDA build includes <cuda.h> too (-D WITH_CUDA)
    args = clang_env.args(includes, extra=tuple(extra))
    unsaved = [(path, text)] + ([] if on_disk else list(_overlay_files(root).items()))
    check()
    # excludeDecls: the translation unit's children are the file's own declarations (and its headers'), not the
    # precompiled prelude's thousands, which the walk would only skip one by one
    parse = ci.Index.create(excludeDecls=True).parse
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        tu = parse(path, args=args, unsaved_files=unsaved, options=options)
    except ci.TranslationUnitLoadError as e:
        if not pch:
            raise Unparsed(f"libclang could not parse it ({e})") from None
        # A precompiled prelude libclang could not load (before _building and _write_once, two scans filling an
        # empty cache at once failed so about one run in two): the file again with the prelude's text, which
        # costs seconds, never the scan.
        at = extra.index("-include-pch")  # as a scan without a precompiled prelude parses it
        extra[at:at + 2] = ["-include", os.path.join(root, "prelude.h")]
        args = clang_env.args(includes, extra=tuple(extra))
        check()
        try:
            tu = parse(path, args=args, unsaved_files=unsaved, options=options)
        except ci.TranslationUnitLoadError as e:
            raise Unparsed(f"libclang could not parse it ({e})") from None
    check()
    fatal = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Fatal]
    if fatal:
        raise Unparsed(f"libclang: {fatal[0].spelling}")
    return ci, tu, text


_LAUNCH = re.compile(r"<<<.*?>>>", re.S)


def _blank_launches(text: str) -> str:
    return _LAUNCH.sub(lambda m: " " * len(m.group(0).encode("utf-8")) if m.group(0).isascii()
                       else re.sub(r"[^\n]", " ", m.group(0)), text)


def qualified(cursor) -> str:
    parts = []
    c = cursor
    while c is not None and c.kind.name != "TRANSLATION_UNIT":
        if c.spelling and not (c.kind.name == "NAMESPACE" and _hidden(c)):
            parts.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(parts))


def _hidden(ns) -> bool:
    """An inline namespace (versioned, `C10_HIDDEN`): not part of the name a user writes."""
    try:
        return ns.is_inline_namespace() if hasattr(ns, "is_inline_namespace") else False
    except Exception:
        return False


class Scanner:
    def __init__(self, path: str, text: str, defines: tuple[str, ...] = (), check=lambda: None,
                 headers: tuple[str, ...] = (), build_shared: bool = True) -> None:
        self.path = path
        self.check = check  # acts on an interrupt received meanwhile (output.signals_polled)
        self.ci, self.tu, self.text = parse(path, text, defines, check, headers, build_shared)
        self.data = self.text.encode("utf-8")
        self.sites: list[Site] = []
        self._seen: set = set()

    # -- helpers
    def src(self, a: int, b: int) -> str:
        return self.data[a:b].decode("utf-8", "replace")

    def _spell(self, loc) -> tuple[str | None, int, int]:
        """(file, line, offset) where the token at `loc` is written: inside a macro's argument, the argument;
        inside a macro's body, the body (in the header that defines it)."""
        from ctypes import byref, c_uint

        f, line, col, off = self.ci.c_object_p(), c_uint(), c_uint(), c_uint()
        self.ci.conf.lib.clang_getSpellingLocation(loc, byref(f), byref(line), byref(col), byref(off))
        return (self.ci.File(f).name if f else None), line.value, off.value

    def rng(self, c) -> tuple[int, int]:
        _, _, a = self._spell(c.extent.start)
        _, _, b = self._spell(c.extent.end)
        return a, max(a, b)

    def line_of(self, c) -> int:
        return self._spell(c.extent.start)[1]

    def mine(self, c) -> bool:
        """Written in this file (not in a header, nor in a macro's body)."""
        f = c.location.file
        if f is None or f.name != self.path:
            return False
        return self._spell(c.extent.start)[0] == self.path

    def add(self, site: Site) -> None:
        k = (site.kind, site.key, site.start, site.end)
        if k not in self._seen:
            self._seen.add(k)
            self.sites.append(site)

    def site(self, c, kind: str, key: str, written: str, **kw) -> Site:
        a, b = self.rng(c)
        return Site(self.path, self.line_of(c), kind, key, " ".join(written.split()), a, b, **kw)

    # -- the walk
    def run(self) -> list[Site]:
        K = self.ci.CursorKind
        for top in self.tu.cursor.get_children():
            self.check()
            if not self.mine(top):
                continue
            if top.kind == K.MACRO_INSTANTIATION:
                self.on_macro(top)
                continue
            if top.kind == K.INCLUSION_DIRECTIVE:
                self.on_include(top)
                continue
            if top.kind == K.MACRO_DEFINITION:
                continue
            for c in top.walk_preorder():
                self.check()
                if not self.mine(c):
                    continue
                if c.kind == K.CALL_EXPR:
                    self.on_call(c)
                elif c.kind in (K.TYPE_REF, K.TEMPLATE_REF):
                    self.on_type(c)
                elif c.kind == K.DECL_REF_EXPR:
                    self.on_decl_ref(c)
                elif c.kind == K.FUNCTION_DECL and c.is_definition():
                    self.on_function(c)
                elif c.kind == K.LAMBDA_EXPR:
                    self.on_lambda(c)
                elif c.kind == K.USING_DECLARATION:
                    self.on_using(c)
        self.macros()
        self.sites.sort(key=lambda s: (s.line, s.start, s.kind))
        return self.sites

    def macros(self) -> None:
        for site in macro_sites(self.path, self.data):
            self.add(site)

    def on_include(self, c) -> None:
        name = c.spelling
        if rules.header(name) is not None:
            self.add(self.site(c, "include", name, f"#include <{name}>"))

    def on_macro(self, c) -> None:
        """Macros are found by their names in the text (macros()), with or without a preprocessing record."""

    def on_type(self, c) -> None:
        ref = c.referenced
        if ref is None:
            return
        q = qualified(ref)
        a, b = self.rng(c)
        m = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)+)$", self.src(max(0, a - 120), a))
        written_q = "".join(m.group(1).split()) + ref.spelling if m else ""
        if written_q and rules.type_rule(written_q) is not None:
            q = written_q  # a name ATen re-exports (at::RestrictPtrTraits): the rule of the name written
        if rules.type_rule(q) is None:
            return
        if not self.src(a, b).endswith(ref.spelling):  # a type named inside a macro's body
            return
        self.add(Site(self.path, self.line_of(c), "type", q, self.src(a, b), a, b, qualified=q))

    def on_using(self, c) -> None:
        """`using torch::autograd::Variable;`: the name a using-declaration brings in, where the types table has
        a rule for it (an alias's uses resolve to what it names, at::Tensor, and are not the alias's rows)."""
        kids = list(c.get_children())
        if not kids or not kids[-1].spelling:
            return
        ns = [k.referenced for k in kids[:-1] if k.kind.name == "NAMESPACE_REF" and k.referenced is not None]
        if not ns:
            return
        q = f"{qualified(ns[-1])}::{kids[-1].spelling}"
        if rules.type_rule(q) is None:
            return
        a, b = self.rng(kids[-1])
        if self.src(a, b) != kids[-1].spelling:
            return
        self.add(Site(self.path, self.line_of(kids[-1]), "type", q, self.src(a, b), a, b, qualified=q))

    def on_function(self, c) -> None:
        """A function defined here: a registration naming it (`m.def("name", &fn)`) has its schema from it."""
        params = tuple((a.type.get_canonical().spelling, a.spelling or "") for a in c.get_arguments())
        a, b = self.rng(c)
        self.add(Site(self.path, self.line_of(c), "function", qualified(c), c.spelling, a, b, qualified=qualified(c),
                      params=params, returns=c.result_type.get_canonical().spelling,
                      noexcept="noexcept" in (c.type.spelling or "")))

    def on_lambda(self, c) -> None:
        """A lambda (a registration's kernel may be one): its call operator's signature, as a function's."""
        decl = c.type.get_declaration()
        call = next((k for k in decl.get_children() if k.kind.name == "CXX_METHOD" and k.spelling == "operator()"),
                    None) if decl is not None else None
        if call is None:
            return
        params = tuple((a.type.get_canonical().spelling, a.spelling or "") for a in call.get_arguments())
        a, b = self.rng(c)
        self.add(Site(self.path, self.line_of(c), "lambda", f"lambda@{a}", self.src(a, b), a, b, params=params,
                      returns=call.result_type.get_canonical().spelling))

    def on_decl_ref(self, c) -> None:
        ref = c.referenced
        if ref is None or c.spelling is None:
            return
        if rules.constant(c.spelling) is None:
            q = qualified(ref)
            if rules.name_rule(q) is not None:  # a function template's name (its template arguments after it)
                a, b = self.rng(c)
                written = self.src(a, b)
                m = re.match(r"(?:\w+\s*::\s*)*" + re.escape(c.spelling) + r"\b", written)
                if m:
                    self.add(Site(self.path, self.line_of(c), "constant", q, m.group(0), a,
                                  a + len(m.group(0).encode()), qualified=q))
                return
            if rules.value(q) is not None:  # a named number (at::internal::GRAIN_SIZE), written out
                a, b = self.rng(c)
                if self.src(a, b).endswith(c.spelling):
                    self.add(Site(self.path, self.line_of(c), "constant", q, self.src(a, b), a, b, qualified=q))
            return
        q = qualified(ref)
        if q.split("::")[0] not in ATEN_NAMESPACES:
            return
        a, b = self.rng(c)
        written = self.src(a, b)
        if not written.endswith(c.spelling):
            return
        self.add(Site(self.path, self.line_of(c), "constant", c.spelling, written, a, b, qualified=q))

    def _callee(self, c):
        """The declaration a call reaches, and the callee expression (for a dependent call: the first
        declaration of the overload set)."""
        K = self.ci.CursorKind
        ref = c.referenced
        kids = list(c.get_children())
        head = kids[0] if kids else None
        while head is not None and head.kind == K.UNEXPOSED_EXPR and list(head.get_children()):
            head = list(head.get_children())[0]
        if head is not None and (ref is None or ref.kind == K.OVERLOADED_DECL_REF):
            ref = head.referenced
            over = [head] + [k for k in head.get_children() if k.kind == K.OVERLOADED_DECL_REF]
            for o in over:
                if o.kind == K.OVERLOADED_DECL_REF:
                    lib = self.ci.conf.lib
                    if lib.clang_getNumOverloadedDecls(o):
                        ref = lib.clang_getOverloadedDecl(o, 0)
        return ref, head, kids

    def on_call(self, c) -> None:
        K = self.ci.CursorKind
        ref, head, kids = self._callee(c)
        if ref is None:
            return
        name = ref.spelling or ""
        a, b = self.rng(c)
        text = self.src(a, b)
        if name.startswith("operator"):
            self.on_operator(c, ref, kids, text)
            return
        if ref.kind == K.CONSTRUCTOR:
            return
        parent = ref.semantic_parent
        pq = qualified(parent) if parent is not None else ""
        q = qualified(ref)
        if ref.kind == K.OVERLOADED_DECL_REF:
            return
        kids = kids[:1] + self.written_args(kids[1:])
        if pq in TENSOR_CLASSES and head is not None and head.kind == K.MEMBER_REF_EXPR:
            self.on_method(c, ref, head, kids, name, text)
            return
        written = self._callee_text(head, a, b)
        rule = rules.call_rule(q) or rules.call_rule(f"{pq}::{name}")
        # else the name as written: torch::tensor, which libclang resolves here to at::tensor, another function
        # (its dtype for integers is int32, torch::tensor's int64)
        key = q if rule is not None else re.sub(r"\s+", "", written)
        if rule is not None or rules.call_rule(key) is not None:
            self.add(self.site(c, "rule", key, written, qualified=q, args=[self.rng(k) for k in kids[1:]]))
            return
        if pq in ATEN_NAMESPACES and ref.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and head is not None:
            hs, he = self.rng(head)
            if not self.src(hs, he).endswith(name):  # written by a macro's expansion
                return
            args = [self.rng(k) for k in kids[1:]]
            self.add(self.site(c, "call", name, self.src(hs, he), callee=(hs, he), args=args, nargs=len(args),
                               numbers=tuple(i for i, k in enumerate(kids[1:]) if self._number(k)), qualified=q))

    def written_args(self, kids) -> list:
        """The arguments written (a default argument has no range of its own)."""
        out = []
        for k in kids:
            a, b = self.rng(k)
            if b > a:
                out.append(k)
        return out

    def _operands(self, kids) -> list:
        """An operator call's operands: its children less the operator function itself."""
        out = []
        for k in kids:
            if (k.spelling or "").startswith("operator"):
                continue
            if k.type.kind.name in ("POINTER", "FUNCTIONPROTO") and k.type.get_pointee().kind.name == "FUNCTIONPROTO":
                continue
            out.append(k)
        return self.written_args(out)

    def _callee_text(self, head, a, b) -> str:
        if head is not None:
            return self.src(*self.rng(head))
        return self.src(a, b)

    def _number(self, expr) -> bool:
        """The argument's type is a number (or a ScalarType, a bool): it cannot bind to a Tensor parameter."""
        t = expr.type.get_canonical()
        kind = t.kind.name
        return kind in ("BOOL", "INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG", "SHORT", "USHORT",
                        "CHAR_S", "SCHAR", "UCHAR", "FLOAT", "DOUBLE", "LONGDOUBLE", "ENUM")

    def _tensor_type(self, t) -> bool:
        decl = t.get_canonical().get_pointee().get_declaration() if t.kind.name in ("LVALUEREFERENCE",
                                                                                  "RVALUEREFERENCE") else None
        if decl is None or decl.kind.name == "NO_DECL_FOUND":
            decl = t.get_canonical().get_declaration()
        return qualified(decl) in TENSOR_CLASSES

    def on_method(self, c, ref, head, kids, name, text) -> None:
        a, b = self.rng(c)
        obj_kids = list(head.get_children())
        obj = self.rng(obj_kids[0]) if obj_kids else None
        hs, he = self.rng(head)
        callee_written = self.src(hs, he)
        # the member name's own range: the last occurrence of the name in the callee text
        name_at = callee_written.rfind(name)
        targs = ""
        after = self.src(he, b)
        m = re.match(r"\s*<(.*?)>\s*\(", after, re.S)
        if m:
            targs = m.group(1).strip()
        elif "<" in callee_written[name_at:]:
            targs = callee_written[name_at + len(name):].strip().lstrip("<").rstrip(">").strip()
        args = [self.rng(k) for k in kids[1:]]
        arrow = callee_written[:name_at].rstrip().endswith("->")
        kw = dict(obj=obj, args=args, callee=(hs, he), targs=targs, nargs=len(args) + 1,
                  numbers=tuple(i + 1 for i, k in enumerate(kids[1:]) if self._number(k)),
                  qualified=qualified(ref), form="->" if arrow else ".")
        if rules.template(name) is not None and (targs or ref.kind.name == "FUNCTION_TEMPLATE"):
            self.add(self.site(c, "template", name, callee_written + (f"<{targs}>" if targs and "<" not in
                                                                      callee_written else ""), **kw))
            return
        params = tuple(a.type.spelling for a in ref.get_arguments()) if ref.kind.name == "CXX_METHOD" else None
        for key in (qualified(ref), f"at::Tensor::{name}", f"at::TensorBase::{name}"):
            if rules.call_rule(key, params) is not None:
                self.add(self.site(c, "rule", key, callee_written, **kw))
                return
        if rules.member_name(name) in rules.members():
            self.add(self.site(c, "member", name, callee_written, **kw))
            return
        self.add(self.site(c, "method", name, callee_written, **kw))

    def on_operator(self, c, ref, kids, text) -> None:
        """A Tensor operator (`a - b`, `x += y`, `t[i]`, `t[i] = v`): the aten op it calls, or a hazard."""
        K = self.ci.CursorKind
        sym = ref.spelling[len("operator"):].strip()
        member = ref.kind == K.CXX_METHOD
        parent = qualified(ref.semantic_parent) if ref.semantic_parent is not None else ""
        params = [p.type for p in ref.get_arguments()] if not member else []
        if member and parent not in TENSOR_CLASSES:
            return
        if not member and not any(self._tensor_type(p) for p in params):
            return
        a, b = self.rng(c)
        if sym == "=":
            rq = ref.type.get_ref_qualifier().name if hasattr(ref.type, "get_ref_qualifier") else ""
            if rq == "RVALUE":
                scalar = not any(self._tensor_type(p.type) for p in ref.get_arguments())
                key = "assign_scalar_into_view" if scalar else "assign_into_view"
                lhs = self._operands(kids)
                self.add(self.site(c, "hazard", key, text, args=[self.rng(k) for k in lhs[:2]]))
            return
        if sym in ("()", "->", "bool"):
            return
        arity = len(params) + (1 if member else 0)
        if sym == "-" and arity == 1:
            sym = "unary -"
        if rules.operator(sym) is None:
            return
        if member:
            form = "tensor" if all(self._tensor_type(p.type) for p in ref.get_arguments()) else "scalar"
        else:
            t0, t1 = (self._tensor_type(p) for p in params) if len(params) == 2 else (True, True)
            form = "tensor" if t0 and t1 else ("scalar" if t0 else "reverse")
        self.add(self.site(c, "operator", sym, text, form=form, args=[self.rng(k) for k in self._operands(kids)]))


_DEFINED = re.compile(rb"^[ \t]*#[ \t]*(?:define|undef|ifdef|ifndef)[ \t]+([A-Za-z_]\w*)", re.M)


def macro_sites(path: str, data: bytes) -> list[Site]:
    """ATen's macros, by the identifiers written (a preprocessing record is not kept with a precompiled prelude):
    also those in a macro's definition (`#define CASES(...) AT_DISPATCH_CASE(at::kHalf, __VA_ARGS__)`); the name a
    `#define` (`#undef`, `#ifdef`) line names is not a use, nor is one in a comment or a string."""
    named = {m.start(1) for m in _DEFINED.finditer(data)}
    out = []
    for m in re.finditer(rb"\b[A-Z]\w*\b", data):
        name = m.group(0).decode()
        if m.start() in named or macros.rule(name) is None or _in_comment_or_string(data, m.start()):
            continue
        line = data.count(b"\n", 0, m.start()) + 1
        out.append(Site(path, line, "macro", name, name, m.start(), m.end(), callee=(m.start(), m.end())))
    return out


def _in_comment_or_string(data: bytes, at: int) -> bool:
    line_start = data.rfind(b"\n", 0, at) + 1
    before = data[line_start:at]
    if b"//" in before or before.count(b'"') % 2:
        return True
    return data.rfind(b"/*", 0, at) > data.rfind(b"*/", 0, at)


def scan(path: str, text: str, defines: tuple[str, ...] = (), headers: tuple[str, ...] = (),
         build_shared: bool = True) -> list[Site]:
    """The constructs of one file (`headers`, `build_shared`: the precompiled prelude to parse it against, `parse`).
    SIGINT and SIGTERM are polled meanwhile rather than raised where they land: one landing in a libclang visitor
    callback would be printed and dropped by ctypes (output.signals_polled)."""
    with output.signals_polled() as check:
        return Scanner(path, text, defines, check, headers, build_shared).run()
