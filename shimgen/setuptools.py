"""Build a stable-ABI extension with setuptools and torch.utils.cpp_extension, generating shimgen's headers at
build time from the project's [tool.shimgen] table (shimgen.tools.project).

    # setup.py
    from setuptools import setup
    from shimgen.setuptools import BuildExtension, StableExtension

    setup(
        ext_modules=[StableExtension("my_ops._C", ["csrc/my_ops.cpp"])],
        cmdclass={"build_ext": BuildExtension},
        options={"bdist_wheel": {"py_limited_api": "cp39"}},   # one abi3 wheel for every CPython >= 3.9
    )

`StableExtension` is torch's `CppExtension` with `py_limited_api=True` (no libtorch_python, `-DPy_LIMITED_API`),
`-DTORCH_STABLE_ONLY` and `-DTORCH_TARGET_VERSION` from the table's `target` (or the `target=` argument). With
`cuda=True` its `.cu` sources compile with nvcc (shimgen.tools.cuda_toolkit finds the toolkit; -gencode flags from
TORCH_CUDA_ARCH_LIST or 8.0;9.0+PTX) and the CUDA runtime links statically, never libc10_cuda, libtorch_cuda or
libcudart.so: the one library loads on CPU builds of torch and on CUDA builds of any CUDA release. It then reaches
no function of libtorch_cuda's (aoti_torch_get_current_cuda_stream): it looks them up at run time (dlsym), as
examples/stable_ops does; a direct call is an undefined symbol on every torch, which the audit after linking stops.
`BuildExtension` is torch's, and before compiling it generates the table's ops into the build tree
(`<build_temp>/shimgen`: never into the source tree, nothing cached elsewhere) and puts that folder first on each
stable extension's include path, so the generated `torch/csrc/stable/ops.h` shadows the installed torch's. Both
become torch's when build_ext runs: setup.py's other commands (pip's metadata step, `setup.py --name`) import no
torch. The generation is shimgen's own (`shimgen.generate.pipeline.generate`), in process, from the installed
torch's native_functions.yaml: no network. Build without isolation (`pip wheel --no-build-isolation .`) so the
extension compiles against the torch installed in the environment.

A wrapper with no libtorch route at the target is a compile error naming the op, the reason and the remedy
unless the table says `overlay = true`, which adds `-DSHIMGEN_OVERLAY` (the author then links shimgen's overlay
library, rebuilt for each torch release). As a safety net, after linking each stable extension is checked for
`aoti_torch_*` symbols the installed libtorch does not export: without `overlay = true` that is a build error
naming the shims, never an extension that fails to load. Then each is audited (shimgen.tools.link_audit: `shimgen
audit` against the target): a library that would not load on every release from its target to the newest stops
the build with one line naming the function and the release it needs. `audit = false` in the table or
SHIMGEN_AUDIT=0 in the environment skips it; an `overlay = true` build (not ABI-stable) is not audited.
"""

from __future__ import annotations

import functools
import logging
import os

from setuptools import Extension
from setuptools.command.build_ext import build_ext

from shimgen.base.errors import ShimgenError
from shimgen.tools import cuda_toolkit, link_audit, project
from shimgen.generate import pipeline
from shimgen.facts import libtorch_exports, releases
from shimgen.proofs.verify import build

_MARK = "_shimgen_stable"  # attribute set on the extensions StableExtension made


def _project(root: str | None = None):
    found = project.current(root or os.getcwd())
    if found is None:
        raise ShimgenError(f"no [tool.shimgen] table in a pyproject.toml at or above {root or os.getcwd()}")
    return found


def stable_flags(target: str | None) -> list[str]:
    """The compile flags of a stable-ABI translation unit targeting `target` (X.Y, a release shimgen knows)."""
    flags = ["-DTORCH_STABLE_ONLY"]
    if target:
        flags.append(f"-DTORCH_TARGET_VERSION={releases.parse(target, 'target').hex}")
    return flags


def StableExtension(name: str, sources: list[str], *args, target: str | None = None, cuda: bool = False, **kwargs):
    """torch.utils.cpp_extension.CppExtension for a stable-ABI, abi3 extension: `target` (X.Y, default:
    [tool.shimgen]'s `target`) becomes -DTORCH_TARGET_VERSION; `cuda=True` compiles its .cu sources with nvcc and
    links the CUDA runtime statically (module docstring). The project's table, `target` and the CUDA toolkit are
    looked up when BuildExtension builds it (its flags are added then), not here: setup.py runs for every command
    (pip's metadata step too), and a problem there would be a traceback, not setuptools' one `error:` line. Nor is
    torch imported here (seconds of CPU for `setup.py --name`): what CppExtension adds (torch's include and library
    folders, its libraries) is added when BuildExtension builds it."""
    extra = kwargs.pop("extra_compile_args", None)
    if isinstance(extra, dict):
        extra = {k: list(v) for k, v in extra.items()}
        extra.setdefault("cxx", [])
    else:
        extra = {"cxx": list(extra or [])}
    kwargs["py_limited_api"] = True
    ext = Extension(name, sources, *args, extra_compile_args=extra, language="c++", **kwargs)
    setattr(ext, _MARK, {"target": target, "cuda": cuda})
    return ext


def _as_cpp_extension(ext) -> None:
    """What torch.utils.cpp_extension.CppExtension adds to an extension, added to `ext` (by CppExtension itself),
    once (a second build in the same process finds it done)."""
    from torch.utils import cpp_extension

    mark = getattr(ext, _MARK)
    if mark.get("cpp"):
        return
    mark["cpp"] = True
    made = cpp_extension.CppExtension(ext.name, ext.sources, include_dirs=list(ext.include_dirs),
                                      library_dirs=list(ext.library_dirs), libraries=list(ext.libraries),
                                      py_limited_api=True)
    ext.include_dirs, ext.library_dirs, ext.libraries = made.include_dirs, made.library_dirs, made.libraries
    ext.language = made.language


def _add_stable_flags(ext, found) -> None:
    """Put the stable flags (stable_flags; -DSHIMGEN_OVERLAY where the table opts in) before each compiler's own;
    for a CUDA extension, nvcc's flags too, the toolkit's headers and its static runtime."""
    from torch.utils import cpp_extension

    mark = getattr(ext, _MARK)
    target = mark["target"]
    if target is None:
        target = str(found.target) if found.target else None
    flags = stable_flags(target)
    if found.overlay:  # the overlay routes exist only in builds that opt in (compile errors otherwise)
        flags.append("-DSHIMGEN_OVERLAY")
    if mark["cuda"]:
        root = cuda_toolkit.require()
        if not cuda_toolkit.is_toolkit(cpp_extension.CUDA_HOME):  # torch runs $CUDA_HOME/bin/nvcc on .cu files
            cpp_extension.CUDA_HOME = root
        nvcc = ext.extra_compile_args.setdefault("nvcc", [])
        if not any("arch" in f for f in nvcc):  # torch's own default asks the GPUs of this machine
            nvcc.extend(cuda_toolkit.arch_flags())
        cuda_toolkit.check_nvcc(cpp_extension.CUDA_HOME)  # one line here, not torch's traceback when it asks
        ext.include_dirs = [*ext.include_dirs, os.path.join(root, "include")]
        ext.extra_link_args = [*ext.extra_link_args, cuda_toolkit.static_cudart(root), "-ldl", "-lrt", "-lpthread"]
    ext.extra_compile_args = {k: [*flags, *(f for f in v if f not in flags)] for k, v in ext.extra_compile_args.items()}


def generate_into(folder: str, root: str | None = None) -> list[str]:
    """Generate the project's [tool.shimgen] ops into `folder` (written as one transaction); the files written."""
    found = _project(root)
    files, _ = pipeline.generate(list(found.ops) if found.ops else None, found.yaml, found.since, folder, found.only)
    pipeline.write(folder, files)
    return [os.path.join(folder, rel) for rel in files]


class BuildExtension(build_ext):
    """torch's BuildExtension (use as `cmdclass={"build_ext": BuildExtension}`) that first generates the
    [tool.shimgen] headers into the build tree and puts them first on the stable extensions' include path.

    setup.py imports this class for every command (pip's metadata step, `setup.py --name`), which need no torch:
    the class defined here is setuptools' build_ext, and the command made when build_ext runs is of its subclass
    that derives from torch.utils.cpp_extension.BuildExtension too (torch imported then)."""

    def __new__(cls, *args, **kwargs):  # BuildExtension, or a project's subclass of it: made with torch's
        return super().__new__(cls if issubclass(cls, _StableBuild) else _with_torch(cls))

    @classmethod
    def with_options(cls, **options):
        """torch's BuildExtension.with_options (e.g. use_ninja=False)."""
        from torch.utils import cpp_extension

        made = cls if issubclass(cls, _StableBuild) else _with_torch(cls)
        return cpp_extension.BuildExtension.with_options.__func__(made, **options)


class _StableBuild:
    """The generation step of BuildExtension, before torch's BuildExtension in the class _with_torch makes."""

    def build_extensions(self) -> None:
        try:
            self._build_stable()
        except ShimgenError as e:  # setuptools reports it as one `error: ...` line
            from setuptools.errors import SetupError

            raise SetupError(f"shimgen: {e.line()}") from None

    def _build_stable(self) -> None:
        stable = [e for e in self.extensions if getattr(e, _MARK, False)]
        found = _project() if stable else None
        audit = bool(stable) and not found.overlay and link_audit.enabled(found.audit)  # SHIMGEN_AUDIT read first
        if stable:
            for ext in stable:
                _as_cpp_extension(ext)
                _add_stable_flags(ext, found)
            folder = os.path.abspath(os.path.join(self.build_temp, "shimgen"))
            generate_into(folder)
            for ext in stable:  # first: the generated ops.h shadows torch's
                ext.include_dirs = [folder, *(d for d in ext.include_dirs if d != folder)]
        super().build_extensions()
        if stable and not found.overlay:
            for ext in stable:
                missing = shims_libtorch_lacks(self.get_ext_fullpath(ext.name))
                if missing:
                    raise ShimgenError(
                        f"{ext.name} calls C shims libtorch does not export: {', '.join(missing)} (wrappers on the "
                        "generated_shim route; it would fail to load). Call an overload on a libtorch route "
                        "(shimgen port shows which), or set overlay = true in [tool.shimgen] and link shimgen's "
                        "overlay library (not ABI-stable)")
        if audit:
            for ext in stable:
                self._audit(ext, found)

    def _audit(self, ext, found) -> None:
        """shimgen audit of the linked library against its target: one line in the build log, or the build stops
        with one line naming what blocks which release (shimgen.tools.link_audit)."""
        target = getattr(ext, _MARK)["target"]
        target = releases.parse(target, "target") if target else found.target
        outcome = link_audit.check(self.get_ext_fullpath(ext.name), target)
        if not outcome.ok:
            raise ShimgenError(link_audit.failure(outcome, "setuptools"))
        self.announce(f"shimgen audit: {outcome.line}", level=logging.INFO)


@functools.lru_cache(maxsize=None)
def _with_torch(base: type) -> type:
    """`base` (BuildExtension or a project's subclass, whose methods come first), then _StableBuild, then
    torch.utils.cpp_extension.BuildExtension."""
    from torch.utils import cpp_extension

    return type(base.__name__, (base, _StableBuild, cpp_extension.BuildExtension),
                {"__module__": base.__module__, "__doc__": base.__doc__})


def shims_libtorch_lacks(library: str) -> list[str]:
    """The `aoti_torch_*` symbols `library` needs that the installed libtorch does not export (`nm -D`)."""
    import shutil
    import subprocess

    nm = shutil.which("nm")
    if nm is None:
        raise ShimgenError("checking the extension's C shims needs `nm` (binutils)")

    def symbols(path: str, flag: str) -> set[str]:
        out = subprocess.run([nm, "-D", flag, path], capture_output=True, text=True, check=True).stdout
        return {line.split()[-1].partition("@")[0] for line in out.splitlines() if line.strip()}

    needed = {s for s in symbols(library, "--undefined-only") if s.startswith("aoti_torch_")}
    if not needed:
        return []
    lib_dir = build.find_torch().lib_dir
    exported: set[str] = set()
    for name in ("libtorch.so", "libtorch_cpu.so", "libc10.so", "libtorch_cuda.so"):
        if os.path.exists(os.path.join(lib_dir, name)):
            exported |= symbols(os.path.join(lib_dir, name), "--defined-only")
    # a library only some builds have (libtorch_cuda.so, absent from a CPU wheel): its recorded functions are not
    # generated shims; whether the releases of the target export them is the audit's question
    recorded = libtorch_exports.load()
    elsewhere = {fn for g in libtorch_exports.ONLY_IN for fn in recorded.groups[g].symbols
                 if not os.path.exists(os.path.join(lib_dir, libtorch_exports.GROUPS[g][0]))}
    return sorted(needed - exported - elsewhere)
