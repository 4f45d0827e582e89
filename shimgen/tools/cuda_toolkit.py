"""Find a CUDA toolkit to compile a stable extension's `.cu` files with, and link its runtime statically.

A stable CUDA extension is built once (on a machine with or without a GPU) and loaded by every torch from its
target on: CUDA builds of torch ship different CUDA runtimes (cu128, cu130, ...) and CPU builds ship none. So the
extension links libtorch alone, as a CPU one does, and the CUDA runtime statically (`libcudart_static.a`: its
`__cudaRegisterFatBinary` and kernel launches need no libcudart.so, and nothing touches the driver until a kernel
runs). CUDA-only libtorch entry points (the current CUDA stream) are looked up at run time by the extension.

The toolkit: `$CUDA_HOME` / `$CUDA_PATH`, the one `nvcc` on PATH belongs to, `/usr/local/cuda`, `/usr/local/cuda-*`
(newest first), or the PyPI packages (`pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime nvidia-nvvm
nvidia-cuda-cccl`: `site-packages/nvidia/cu13`); the first folder with `bin/nvcc`, `include/cuda_runtime.h` and
`libcudart_static.a`. To build (`require`), a `$CUDA_HOME` (or `$CUDA_PATH`) that names no folder is an error,
never a silent switch to another toolkit; so are an nvcc that does not run (`check_nvcc`) and a
TORCH_CUDA_ARCH_LIST entry that is no architecture (`arch_flags`), each one line naming the culprit.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import site
import subprocess
import sys
from typing import Optional

from shimgen.base.errors import ShimgenError

# The GPUs the kernels are compiled for when TORCH_CUDA_ARCH_LIST does not say: Ampere and Hopper machine code,
# and Hopper's PTX for what comes after (the driver compiles it at load).
DEFAULT_ARCHS = ("8.0", "9.0+PTX")
_LIB_DIRS = ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib"))
# A TORCH_CUDA_ARCH_LIST entry: compute capability X.Y, an arch- or family-specific suffix (9.0a, 10.0f), +PTX.
_ARCH_RE = re.compile(r"(\d+)\.(\d+)([af]?)(\+PTX)?")


def static_cudart(root: str) -> Optional[str]:
    for sub in _LIB_DIRS:
        path = os.path.join(root, sub, "libcudart_static.a")
        if os.path.isfile(path):
            return path
    return None


def is_toolkit(root: Optional[str]) -> bool:
    return bool(root) and os.path.isfile(os.path.join(root, "bin", "nvcc")) and os.path.isfile(
        os.path.join(root, "include", "cuda_runtime.h")) and static_cudart(root) is not None


def _candidates() -> list[str]:
    found = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        found.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
        # a wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) names the real one
        try:
            with open(nvcc, "rb") as f:
                head = f.read(4096)
            if head.startswith(b"#!"):
                found += [os.path.dirname(os.path.dirname(m.decode()))
                          for m in re.findall(rb"(/[^\s\"']+/bin/nvcc)\b", head)]
        except OSError:
            pass
    found.append("/usr/local/cuda")
    versioned = glob.glob("/usr/local/cuda-*")
    found += sorted(versioned, key=lambda p: [int(x) for x in re.findall(r"\d+", os.path.basename(p))], reverse=True)
    for packages in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]:
        found += sorted(glob.glob(os.path.join(packages, "nvidia", "cu[0-9]*")), reverse=True)
        found.append(os.path.join(packages, "nvidia", "cuda_nvcc"))
    return [p for p in found if p]


def find() -> Optional[str]:
    """The CUDA toolkit's root folder, or None."""
    return next((os.path.abspath(p) for p in _candidates() if is_toolkit(p)), None)


def require() -> str:
    """The toolkit to compile with (`find`), else a ShimgenError saying what is missing. A $CUDA_HOME or
    $CUDA_PATH naming no folder is an error too: the person meant a toolkit, and another one found elsewhere
    would be a silent surprise."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = os.environ.get(var)
        if value and not os.path.isdir(value):
            raise ShimgenError(f"{var}={value}: no such folder (it names the CUDA toolkit to compile with: point it "
                               "at one, with bin/nvcc, or unset it)")
    root = find()
    if root is None:
        raise ShimgenError(
            "no CUDA toolkit (bin/nvcc, include/cuda_runtime.h, libcudart_static.a) in $CUDA_HOME, beside the "
            "nvcc on PATH or in /usr/local/cuda*; install one (pip install nvidia-cuda-nvcc nvidia-cuda-crt "
            "nvidia-cuda-runtime nvidia-nvvm nvidia-cuda-cccl) or set CUDA_HOME")
    return root


def check_nvcc(root: str) -> None:
    """Raise (one line naming the nvcc and what it said) unless `root`/bin/nvcc answers --version, as torch's
    build asks it before compiling (a failure there is a long traceback)."""
    nvcc = os.path.join(root, "bin", "nvcc")
    try:
        proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        why = e.strerror if isinstance(e, OSError) else "no answer in 120 s"
        raise ShimgenError(f"cannot run the CUDA compiler {nvcc}: {why}") from None
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise ShimgenError(f"the CUDA compiler {nvcc} does not run: `nvcc --version` ended with exit status "
                           f"{proc.returncode}: {said}")


def arch_flags(archs: Optional[str] = None) -> list[str]:
    """nvcc's -gencode flags for `archs` ("8.0;9.0+PTX"; default TORCH_CUDA_ARCH_LIST, else DEFAULT_ARCHS)."""
    spec = archs or os.environ.get("TORCH_CUDA_ARCH_LIST") or ";".join(DEFAULT_ARCHS)
    flags = []
    for arch in re.split(r"[;\s]+", spec.strip()):
        if not arch:
            continue
        if not _ARCH_RE.fullmatch(arch):
            where = f"architecture list {spec!r}" if archs else f"TORCH_CUDA_ARCH_LIST={spec}"
            raise ShimgenError(f"{where}: {arch!r} is not a CUDA architecture (entries such as 8.0, 9.0a or "
                               "9.0+PTX, separated by ; or spaces)")
        ptx = arch.endswith("+PTX")
        num = arch.removesuffix("+PTX").replace(".", "")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if ptx:
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return flags
