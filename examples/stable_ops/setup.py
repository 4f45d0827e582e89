# One abi3 wheel for every CPython >= 3.9 and every torch >= [tool.shimgen]'s target:
#   pip wheel --no-build-isolation --no-deps -w dist .
from setuptools import setup

from shimgen.setuptools import BuildExtension, StableExtension

setup(
    ext_modules=[StableExtension("stable_ops._C", ["csrc/stable_ops.cpp"])],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
