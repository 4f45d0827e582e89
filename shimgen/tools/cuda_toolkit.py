"""Find a CUDA toolkit to compile a stable extension's `.cu` files with, and link its runtime statically.

A stable CUDA extension is built once (on a machine with or without a GPU) and loaded by every torch from its
target on: CUDA builds of torch ship different CUDA runtimes (cu128, cu130, ...) and CPU builds ship none. So the
extension links libtorch alone, as a CPU one does, and the CUDA runtime statically (`libcudart_static.a`: its
`__cudaRegisterFatBinary` and kernel launches need no libcudart.so, and nothing touches the driver until a kernel
runs). CUDA-only libtorch entry points (the current CUDA stream) are looked up at run time by the extension.

The toolkit: `$CUDA_HOME` / `$CUDA_PATH`, the one `nvcc` on PATH belongs to, `/usr/local/cuda`, `/usr/local/cuda-*`
(newest first), or the PyPI packages (`pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime nvidia-nvvm
nvidia-cuda-cccl`: `site-packages/nvidia/cu13`); the first folder with `bin/nvcc`, `include/cuda_runtime.h` and
`libcudart_static.a`.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import site
import sys
from typing import Optional

# The GPUs the kernels are compiled for when TORCH_CUDA_ARCH_LIST does not say: Ampere and Hopper machine code,
# and Hopper's PTX for what comes after (the driver compiles it at load).
DEFAULT_ARCHS = ("8.0", "9.0+PTX")
_LIB_DIRS = ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib"))


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


def arch_flags(archs: Optional[str] = None) -> list[str]:
    """nvcc's -gencode flags for `archs` ("8.0;9.0+PTX"; default TORCH_CUDA_ARCH_LIST, else DEFAULT_ARCHS)."""
    spec = archs or os.environ.get("TORCH_CUDA_ARCH_LIST") or ";".join(DEFAULT_ARCHS)
    flags = []
    for arch in re.split(r"[;\s]+", spec.strip()):
        if not arch:
            continue
        ptx = arch.endswith("+PTX")
        num = arch.removesuffix("+PTX").replace(".", "")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if ptx:
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return flags
