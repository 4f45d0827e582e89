from setuptools import setup

from shimgen.setuptools import BuildExtension, StableExtension

setup(
    ext_modules=[StableExtension("quickstart._C", ["csrc/quickstart.cpp"])],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},  # one abi3 wheel for every CPython >= 3.9
)
