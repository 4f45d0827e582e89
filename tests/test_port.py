"""`shimgen port`: the report on two extension sources written for this test (tests/port/), checked against a
table derived by hand from the stable ABI's rules, not from the tool:

* an op whose arguments are Tensors, ints, bools, int lists and dtypes goes through libtorch's boxed dispatcher
  (`torch_call_dispatcher`, from 2.10) unless libtorch ships its C shim: amax, narrow, fill_.Scalar (the
  manifest's 2.9 shims) -> `yes (shim)`;
* a Scalar argument where aten has a Tensor overload of the same op is lowered to that sibling (masked_fill_,
  clamp with numbers, div by a number, where with one number) -> `yes (sibling)`; the report cannot tell from an
  identifier whether it holds a number or a Tensor, so such calls read `dispatcher or sibling`, while a number
  literal rules the Tensor overload out (clamp(boxes, 0, 4096), div(x, 2), max(x, 1), fill_(0)); mul_'s Scalar
  overload is the `composition` route (kernel self_dtype_number: a bfloat16 or half self takes the number in its
  own dtype, as aten's in-place kernel does, any other the sibling's), so `scores.mul_(scale)` reads
  `composition or dispatcher`;
* add/sub carry a Scalar `alpha` no dispatcher takes, but aten computes add.Tensor and sub.Tensor as its
  `subtract.Tensor`, whose C shim libtorch exports from 2.10 (the `equivalent` route: floating tensors, per
  call); add.Scalar/sub.Scalar lower to them (sibling): `yes (equivalent or sibling)` at 2.10 and 2.13;
* gelu's `str approximate` crosses the dispatcher from 2.10 (libtorch 2.10-2.13 leak the string, accepted by
  default, SHIMGEN_NO_LEAKY_STR refuses it): `yes (dispatcher)`; arange's Scalar `end` has no Tensor sibling, C
  shim or dispatcher route, but aten's range kernel is the `composition` route's cumsum of [start, step, ...]
  (kernel arange_factory, from 2.9): `yes (composition)` at 2.10 and 2.13;
* numel and dim are members of torch::stable::Tensor from 2.10 (data/stable_tensor_members.json): no op needed;
* qscheme returns a QScheme, which has no stable representation;
* where.Scalar (both values numbers) is aten's where.self with the numbers wrapped (the `composition` route: 0-dim
  tensors of the wrapped numbers' dtype) from 2.9, so `where(c, t, zeros_like(t))`, which could be any of the four
  overloads, works whichever it is: `yes (composition or dispatcher or sibling)`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("tree_sitter_cpp", reason="shimgen port needs the `port` extra (tree-sitter, tree-sitter-cpp)")

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = os.path.join(HERE, "port")

D, S, SH, CO = "yes (dispatcher)", "yes (sibling)", "yes (shim)", "yes (composition)"
DS = "yes (dispatcher or sibling)"
CD = "yes (composition or dispatcher)"
ES = "yes (equivalent or sibling)"

# (file, line, call as written) -> (at 2.10, at 2.13)
EXPECTED = {
    ("fused_attention.cu", 20, "q.contiguous"): (D, D),
    ("fused_attention.cu", 21, "at::matmul"): (D, D),
    ("fused_attention.cu", 21, "k.transpose"): (D, D),
    ("fused_attention.cu", 22, "scores.mul_"): (CD, CD),
    ("fused_attention.cu", 23, "scores.masked_fill_"): (DS, DS),
    ("fused_attention.cu", 24, "at::softmax"): (D, D),
    ("fused_attention.cu", 25, "at::matmul"): (D, D),
    ("fused_attention.cu", 26, "at::add"): (ES, ES),
    ("fused_attention.cu", 27, "at::gelu"): (CO, CO),  # kernel gelu_addmm below 2.14
    ("fused_attention.cu", 28, "at::empty_like"): (D, D),
    ("fused_attention.cu", 29, "act.numel"): ("yes (member)", "yes (member)"),
    ("fused_attention.cu", 33, "at::logsumexp"): (D, D),
    ("fused_attention.cu", 34, "at::sum_out"): (D, D),
    ("fused_attention.cu", 35, "scaled.sum"): (D, D),
    ("roi_ops.cpp", 8, "rois.dim"): ("yes (member)", "yes (member)"),
    ("roi_ops.cpp", 9, "rois.narrow(1, 1, 4).to"): (D, D),
    ("roi_ops.cpp", 9, "rois.narrow"): (SH, SH),
    ("roi_ops.cpp", 10, "at::clamp"): (S, S),
    ("roi_ops.cpp", 11, "at::div"): (S, S),
    ("roi_ops.cpp", 12, "torch::zeros"): (D, D),
    ("roi_ops.cpp", 13, "torch::empty"): (D, D),
    ("roi_ops.cpp", 14, "at::amax"): (SH, SH),
    ("roi_ops.cpp", 15, "at::max"): (D, D),
    ("roi_ops.cpp", 16, "at::where"): ("yes (composition or dispatcher or sibling)",) * 2,
    ("roi_ops.cpp", 16, "at::zeros_like"): (D, D),
    ("roi_ops.cpp", 17, "torch::cat"): (D, D),
    ("roi_ops.cpp", 18, "at::sum_out"): (D, D),
    ("roi_ops.cpp", 19, "out.reshape"): (D, D),
    ("roi_ops.cpp", 20, "out.fill_"): (SH, SH),
    ("roi_ops.cpp", 21, "at::sub"): (ES, ES),
    ("roi_ops.cpp", 25, "scores.sort"): (D, D),
    ("roi_ops.cpp", 26, "dets.select"): (D, D),  # four calls on the line
    ("roi_ops.cpp", 27, "at::zeros_like(order).to"): (D, D),
    ("roi_ops.cpp", 27, "at::zeros_like"): (D, D),
    ("roi_ops.cpp", 28, "at::arange"): ("yes (composition)", "yes (composition)"),
    ("roi_ops.cpp", 29, "dets.qscheme"): ("no", "no"),
    ("roi_ops.cpp", 30, "at::index_select"): (D, D),
    ("roi_ops.cpp", 34, "boxes->abs"): (D, D),  # a method through a pointer
}
# Which overloads the calls whose outcome varies may reach, and how each fares (2.10, 2.13).
VARIES = {
    "at::add": {"add.Scalar": (S, S), "add.Tensor": ("yes (equivalent)", "yes (equivalent)")},
    "at::sub": {"sub.Scalar": (S, S), "sub.Tensor": ("yes (equivalent)", "yes (equivalent)")},
    "at::where": {"where.Scalar": ("yes (composition)", "yes (composition)"), "where.ScalarOther": (S, S),
                  "where.ScalarSelf": (S, S), "where.self": (D, D)},
}
# The ops [tool.shimgen] needs: every ATen call above with a wrapper at some release (qscheme has none).
OPS = ["abs", "add", "amax", "arange", "cat", "clamp", "contiguous", "div", "empty", "empty_like", "fill_", "gelu",
       "index_select", "logsumexp", "masked_fill_", "matmul", "max", "mul_", "narrow", "reshape", "select",
       "softmax", "sort", "sub", "sum", "to", "transpose", "where", "zeros", "zeros_like"]


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("port")
    proc = subprocess.run([sys.executable, "-m", "shimgen", "port", PORT, "--parser", "tree-sitter", "--target",
                           "2.10,2.13", "--json",
                           str(tmp / "report.json"), "--toml", str(tmp / "shimgen.toml")],
                          capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads((tmp / "report.json").read_text()), (tmp / "shimgen.toml").read_text()


def test_every_call_with_its_availability(ported):
    _, data, _ = ported
    got: dict[tuple, list] = {}
    for c in data["calls"]:
        key = (os.path.basename(c["file"]), c["line"], c["call"])
        got.setdefault(key, []).append(c)
    assert set(got) == set(EXPECTED)
    assert len(got[("roi_ops.cpp", 26, "dets.select")]) == 4
    for key, (at_210, at_213) in EXPECTED.items():
        for c in got[key]:
            cells = (c["2.10"]["text"], c["2.13"]["text"])
            for cell, want in zip(cells, (at_210, at_213)):
                if want in ("varies", "no"):
                    assert cell.startswith(want + ":"), (key, cell)
                else:
                    assert cell == want, (key, cells)
            if key[2] in VARIES:
                assert sorted(c["overloads"]) == sorted(VARIES[key[2]]), key
                for overload, (w210, w213) in VARIES[key[2]].items():
                    for target, want in (("2.10", w210), ("2.13", w213)):
                        text = c[target]["text"]
                        if text.startswith("varies"):
                            assert f"{overload} {want}" in text, (key, target, text)
    assert "QScheme" in got[("roi_ops.cpp", 29, "dets.qscheme")][0]["2.10"]["text"]


def test_summary_counts(ported):
    _, data, _ = ported
    calls = sum(4 if k[2] == "dets.select" else 1 for k in EXPECTED)
    assert calls == 41
    # by hand from EXPECTED: qscheme has none, the other 40 work at both (numel and dim are members, arange
    # through the composition).
    assert data["summary"]["2.10"] == {"yes": 40, "overlay": 0, "from": 0, "removed": 0, "varies": 0, "no": 1,
                                       "not-aten": 0}
    assert data["summary"]["2.13"] == {"yes": 40, "overlay": 0, "from": 0, "removed": 0, "varies": 0, "no": 1,
                                       "not-aten": 0}


def test_op_list_for_the_project_table(ported):
    out, data, toml = ported
    assert data["ops"] == OPS
    import tomllib

    table = tomllib.loads(toml)["tool"]["shimgen"]
    assert table == {"ops": OPS, "target": "2.10"}
    assert "## [tool.shimgen]" in out


def test_caveats_of_the_routes_used(ported):
    out, _, _ = ported
    caveats = out.split("## Caveats")[1].split("## Ops")[0]
    for route in ("shim", "dispatcher", "sibling"):  # no call needs the overlay since arange's composition
        assert f"- `{route}`: " in caveats, route
    assert "- `from`: " not in caveats  # numel and dim are members at both targets: no call is hidden
    assert "raises a `shimgen:` error" in caveats  # a Scalar the sibling cannot carry exactly


def test_what_it_cannot_see(ported):
    out, _, _ = ported
    blind = out.split("## What it cannot see")[1].split("## [tool.shimgen]")[0]
    assert "`relu` (line 41)" in blind  # after `using namespace at;`
    assert "macro definitions not examined (lines 7)" in blind  # CHECK_INPUT's is_cuda/is_contiguous
    assert "fused_attention.cu: code the parser could not read" in blind  # CUDA's kernel syntax
    assert "at::cuda::getCurrentCUDAStream" not in out  # a function of another namespace, not an op
    assert "data_ptr" not in out  # Tensor accessors that are not ops are not listed


def test_ported_ops_generate(tmp_path):
    """The op list the report writes is a valid [tool.shimgen]: `shimgen` in that project generates it."""
    (tmp_path / "pyproject.toml").write_text('[tool.shimgen]\nops = ["softmax", "masked_fill_", "sum"]\n'
                                             'target = "2.10"\nout = "gen"\n')
    proc = subprocess.run([sys.executable, "-m", "shimgen"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "gen" / "torch/csrc/stable/ops/masked_fill_.h").is_file()
    check = subprocess.run([sys.executable, "-m", "shimgen", "--check"], capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stderr


def test_bad_input_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "shimgen", "port", str(tmp_path / "missing.cu")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "missing.cu: no such file" in proc.stderr


def test_toml_into_an_existing_file(tmp_path):
    """`--toml PATH` (call_report.toml_into): the table alone where PATH does not exist; into a project's own
    pyproject.toml, its other tables kept as written and its [tool.shimgen] table (with its subtables) replaced; a
    file that is not TOML refused and kept, never overwritten."""
    import tomllib

    from shimgen.base.errors import ShimgenError
    from shimgen.tools.porting.call_report import toml_into, toml_table

    table = toml_table(["add", "to"], "2.10")
    assert toml_into(str(tmp_path / "none.toml"), table) == table
    path = tmp_path / "pyproject.toml"
    path.write_text('[build-system]\nrequires = ["setuptools"]  # kept\n\n[tool.shimgen]\nops = ["old"]\n\n'
                    '[tool.shimgen.sub]\nx = 1\n\n[[tool.other]]\ny = 2\n')
    text = toml_into(str(path), table)
    assert text.startswith('[build-system]\nrequires = ["setuptools"]  # kept\n\n[[tool.other]]\ny = 2\n\n')
    assert tomllib.loads(text) == {"build-system": {"requires": ["setuptools"]}, "tool": {
        "other": [{"y": 2}], "shimgen": {"ops": ["add", "to"], "target": "2.10"}}}
    path.write_text("not = [toml\n")
    with pytest.raises(ShimgenError, match="not TOML"):
        toml_into(str(path), table)
