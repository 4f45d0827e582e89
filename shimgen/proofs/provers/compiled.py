"""The generated wrappers themselves, compiled for a prover (a kernel entry whose prover_spec says `compiled`: the
target release the library is built at): one stable-ABI library, built against the installed torch's headers at that
target and linked with libtorch alone, registering each overload's wrapper as the custom op
`shimgen_prove::<name>_<overload>` (a Scalar taken as a float), which each runtime's interpreter loads
(torch.ops.load_library) and calls beside aten's op. A kernel whose C++ no Python mirror can follow (Sleef's vector
functions, libtorch's thread pool) is proven by running it."""

from __future__ import annotations

import os
import subprocess
import tempfile

from torchgen.model import FunctionSchema

from shimgen.base.errors import ShimgenError
from shimgen.facts import history
from shimgen.facts import scalar_facts
from shimgen.generate import pipeline
from shimgen.generate.parse import NativeYaml
from shimgen.proofs.verify import build

NAMESPACE = "shimgen_prove"
_TYPES = {"Tensor": ("Tensor", "torch::stable::Tensor"), "Scalar": ("float", "double"), "int": ("int", "int64_t"),
          "bool": ("bool", "bool"), "float": ("float", "double"), "str": ("str", "std::string")}


def custom_name(op: str) -> str:
    """The custom op an overload's wrapper is registered as: elu.default -> elu_default."""
    return op.replace(".", "_")


def _source(ops: list[str]) -> str:
    texts = history.schemas_of(NativeYaml().text)
    lines = ["#include <torch/csrc/stable/library.h>", "#include <torch/csrc/stable/ops.h>", ""]
    defs, impls = [], []
    for op in ops:
        schema = FunctionSchema.parse(texts[op])
        params = [(a.name, _TYPES[str(a.type)], a.annotation) for a in schema.arguments.flat_all]
        name = custom_name(op)
        cxx = ", ".join(f"{t[1]} {n}" for n, t, _ in params)
        # an in-place overload's C++ name ends in _ (elu_), an out= one's in _out with the outs first (elu_out)
        outs = [a.name for a in schema.arguments.out]
        base = schema.name.name
        fn = f"{base.base}_out" if outs else f"{base.base}{'_' if base.inplace else ''}"
        call = outs + [n for n, _, _ in params if n not in outs]
        lines.append(f"torch::stable::Tensor {name}({cxx}) {{")
        lines.append(f"  return torch::stable::{fn}({', '.join(call)});")
        lines.append("}")
        # a written argument keeps its alias annotation, and the overload returns it (Tensor(a!))
        written = next((str(note) for _, _, note in params if note is not None and note.is_write), "")
        signature = ", ".join(f"{t[0]}{f'({note})' if note is not None else ''} {n}" for n, t, note in params)
        defs.append(f'  m.def("{name}({signature}) -> Tensor{f"({written})" if written else ""}");')
        impls.append(f'  m.impl("{name}", TORCH_BOX(&{name}));')
    lines += ["", f"STABLE_TORCH_LIBRARY({NAMESPACE}, m) {{", *defs, "}", "",
              f"STABLE_TORCH_LIBRARY_IMPL({NAMESPACE}, CompositeExplicitAutograd, m) {{", *impls, "}", ""]
    return "\n".join(lines)


def library(ops: list[str], target: str, rows: dict[str, dict]) -> str:
    """The path of a library holding the wrappers of `ops` (each returns one Tensor), built at `target` ("2.10"),
    their rows (`rows`: kernel_compositions rows, proven or not) generated as if proven."""
    root = tempfile.mkdtemp(prefix="shimgen_prove_")
    gen = os.path.join(root, "gen")
    facts = scalar_facts.load().kernel_compositions
    kept = {op: facts.get(op) for op in ops}
    try:  # the rows being proven, generated as if proven (the facts hold proven rows only)
        facts.update({op: {**rows[op], "proven": ["(being proven)"]} for op in ops})
        files, _ = pipeline.generate(ops, None, None, gen, only=True)
    finally:
        for op, row in kept.items():
            if row is None:
                facts.pop(op, None)
            else:
                facts[op] = row
    pipeline.write(gen, files)
    src = os.path.join(root, "prove.cpp")
    with open(src, "w") as f:
        f.write(_source(ops))
    major, minor = (int(p) for p in target.split("."))
    torch_ = build.find_torch()
    out = os.path.join(root, "prove.so")
    macro = f"-DTORCH_TARGET_VERSION=0x{major:02x}{minor:02x}000000000000"
    compile_, link = build.library(build.compiler(), [*torch_.stable_flags(gen), macro],
                                   src, out, torch_.link_flags())
    for cmd in (compile_, link):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ShimgenError(f"building the wrappers of {', '.join(ops)} for their prover failed: "
                               f"{proc.stderr.strip()[-2000:]}")
    return out
