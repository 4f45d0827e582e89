# One abi3 wheel for every CPython >= 3.9 and every torch >= [tool.shimgen]'s target, CPU and CUDA kernels in one
# library (the CUDA runtime linked statically: it loads on CPU builds of torch too):
#   pip wheel --no-build-isolation --no-deps -w dist .
# The CUDA kernels are built when a CUDA toolkit is found (shimgen.tools.cuda_toolkit: $CUDA_HOME, nvcc on PATH,
# /usr/local/cuda*, the nvidia-cuda-nvcc PyPI packages); STABLE_OPS_CUDA=1 requires them, STABLE_OPS_CUDA=0 leaves
# them out. No GPU is needed to build them.
import os
import sys

from setuptools import setup

from shimgen.tools import cuda_toolkit
from shimgen.setuptools import BuildExtension, StableExtension

want = os.environ.get("STABLE_OPS_CUDA", "")
cuda = want == "1" or (want != "0" and cuda_toolkit.find() is not None)
if not cuda:
    print("stable_ops: building the CPU kernels only (no CUDA toolkit found, or STABLE_OPS_CUDA=0)", file=sys.stderr)
sources = ["csrc/stable_ops.cpp", *(["csrc/rms_norm_cuda.cu"] if cuda else [])]
defines = ["-DSTABLE_OPS_WITH_CUDA"] if cuda else []

setup(
    ext_modules=[StableExtension("stable_ops._C", sources, cuda=cuda,
                                 extra_compile_args={"cxx": defines, **({"nvcc": defines} if cuda else {})})],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
