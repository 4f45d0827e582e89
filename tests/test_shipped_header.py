"""With the installed torch's own shimified op list, shimgen's c_shim_aten.h declares exactly what the header shipped
in the installed wheel declares, in the same order and behind the same version gates; whatever else is selected, it
declares only libtorch's shims, the overlay's going to c_shim_aten_overlay.h."""

from __future__ import annotations

import os
import re

import torch
from torchgen.aoti.fallback_ops import aten_shimified_ops

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c
from shimgen.generate import plan

# torch 2.13.0's list (torchgen/aoti/fallback_ops.py: aten_shimified_ops)
SHIMIFIED_2_13 = [
    "fill_.Scalar",
    "pad.default",
    "narrow.default",
    "amax.default",
    "new_empty.default",
    "new_zeros.default",
    "full.default",
    "subtract.Tensor",
]

_GATE_OPEN = re.compile(r"^#if (TORCH_FEATURE_VERSION >= TORCH_VERSION_\d+_\d+_\d+)$")
_GATE_CLOSE = re.compile(r"^#endif // (TORCH_FEATURE_VERSION >= TORCH_VERSION_\d+_\d+_\d+)$")


def gated_declarations(text: str) -> list[tuple[str | None, str]]:
    """(gate condition or None, declaration) for every AOTI_TORCH_EXPORT line of a c_shim_aten.h."""
    out: list[tuple[str | None, str]] = []
    gate: str | None = None
    for line in text.splitlines():
        line = line.strip()
        if m := _GATE_OPEN.match(line):
            assert gate is None, "nested gate"
            gate = m.group(1)
        elif m := _GATE_CLOSE.match(line):
            assert gate == m.group(1), f"gate closed by {line!r} while {gate!r} is open"
            gate = None
        elif line.startswith("#if") or line.startswith("#endif"):
            assert "TORCH_FEATURE_VERSION" not in line, line
        elif line.startswith("AOTI_TORCH_EXPORT"):
            out.append((gate, line))
    assert gate is None
    return out


def shipped_header() -> str:
    path = os.path.join(
        os.path.dirname(torch.__file__), "include", "torch", "csrc", "inductor", "aoti_torch", "generated",
        "c_shim_aten.h",
    )
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_installed_list_is_the_one_we_test() -> None:
    assert torch.__version__.split("+")[0] == "2.13.0"
    assert [k.removeprefix("aten.") for k in aten_shimified_ops] == SHIMIFIED_2_13


def test_generated_header_equals_shipped_header() -> None:
    ops = [k.removeprefix("aten.") for k in aten_shimified_ops]
    files = emit_c.emit(resolve(plan.make(ops)))
    generated = gated_declarations(files[emit_c.HEADER])
    shipped = gated_declarations(shipped_header())
    assert len(shipped) == 8
    assert generated == shipped


def test_parser_sees_gates() -> None:
    shipped = gated_declarations(shipped_header())
    gated = {decl.split("(")[0].split()[-1] for gate, decl in shipped if gate}
    assert gated == {"aoti_torch_aten_full", "aoti_torch_aten_subtract_Tensor"}
    assert {gate for gate, _ in shipped if gate} == {"TORCH_FEATURE_VERSION >= TORCH_VERSION_2_10_0"}


def test_cli_writes_the_shipped_declarations(tmp_path) -> None:
    from shimgen.tools import cli

    ops = [k.removeprefix("aten.") for k in aten_shimified_ops]
    assert cli.main(["--ops", ",".join(ops), "--only", "--out", str(tmp_path)]) == 0
    text = (tmp_path / emit_c.HEADER).read_text(encoding="utf-8")
    assert gated_declarations(text) == gated_declarations(shipped_header())


def test_default_output_declares_the_shipped_header() -> None:
    """The committed generated/ (upstream's surface plus add, pad, amax): its c_shim_aten.h declares what the
    installed wheel's does and nothing more; the shims only shimgen's overlay defines are in c_shim_aten_overlay.h,
    which c_shim_aten.h includes only under the opt-in."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "generated")
    with open(os.path.join(root, emit_c.HEADER), encoding="utf-8") as f:
        text = f.read()
    assert gated_declarations(text) == gated_declarations(shipped_header())
    include = f"#ifdef SHIMGEN_OVERLAY\n#include <{emit_c.OVERLAY_HEADER}>\n#endif // SHIMGEN_OVERLAY\n"
    assert include in text and text.count("c_shim_aten_overlay.h>") == 1
    with open(os.path.join(root, emit_c.OVERLAY_HEADER), encoding="utf-8") as f:
        overlay = gated_declarations(f.read())
    assert len(overlay) >= 20 and not {d for _, d in overlay} & {d for _, d in gated_declarations(text)}


def test_libtorch_shims_and_the_overlay_s_are_split_by_the_manifest() -> None:
    """c_shim_aten.h declares exactly the plan's C shims libtorch ships (upstream), c_shim_aten_overlay.h exactly
    the others, each with its gate; the definitions see both."""
    from shimgen.generate.signatures.stage import c_shims

    p = plan.make(["add", "sort", "fill_", "full", "subtract", "narrow", "cat"], additive=True)
    files = emit_c.emit(resolve(p))
    shims = c_shims(p)[0]
    for rel, upstream in ((emit_c.HEADER, True), (emit_c.OVERLAY_HEADER, False)):
        declared = [d for _, d in gated_declarations(files[rel])]
        want = [f"AOTI_TORCH_EXPORT {sv.shim.declaration};" for sv in shims if sv.upstream == upstream]
        assert declared == want and want, rel
    assert "#include <torch/csrc/inductor/aoti_torch/generated/c_shim_aten_overlay.h>" in files[emit_c.SOURCE]


def test_overlay_header_is_written_when_empty(tmp_path) -> None:
    """A selection whose shims are all libtorch's still gets c_shim_aten_overlay.h (no declaration), so the
    include under SHIMGEN_OVERLAY always resolves and an earlier run's overlay declarations never linger."""
    from shimgen.tools import cli

    assert cli.main(["--ops", "narrow.default", "--only", "--out", str(tmp_path)]) == 0
    text = (tmp_path / emit_c.OVERLAY_HEADER).read_text(encoding="utf-8")
    assert gated_declarations(text) == [] and "#pragma once" in text
    assert [d for _, d in gated_declarations((tmp_path / emit_c.HEADER).read_text(encoding="utf-8"))] == [
        d for _, d in gated_declarations(shipped_header()) if "aoti_torch_aten_narrow(" in d]
