"""With the installed torch's own shimified op list, shimgen's c_shim_aten.h declares exactly what the header shipped
in the installed wheel declares, in the same order and behind the same version gates."""

from __future__ import annotations

import os
import re

import torch
from torchgen.aoti.fallback_ops import aten_shimified_ops

from shimgen import emit_c, plan

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
    files = emit_c.emit(plan.make(ops))
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
    from shimgen import cli

    ops = [k.removeprefix("aten.") for k in aten_shimified_ops]
    assert cli.main(["--ops", ",".join(ops), "--only", "--out", str(tmp_path)]) == 0
    text = (tmp_path / emit_c.HEADER).read_text(encoding="utf-8")
    assert gated_declarations(text) == gated_declarations(shipped_header())
