"""Routes as typed objects (shimgen.routes, data/routes.yaml), the C shim set as a product of the plan, and the
per-plan derived cache."""

from __future__ import annotations

from dataclasses import replace

import yaml

from shimgen import emit_c, plan as plan_mod, routes, signatures, sig_cpp
from shimgen.inputs import package_text


def test_routes_come_from_the_data_in_its_order():
    raw = yaml.safe_load(package_text("data/routes.yaml"))["routes"]
    assert [r.name for r in routes.ordered()] == [row["name"] for row in raw]
    assert [r.rank for r in routes.ordered()] == list(range(len(raw)))
    for r, row in zip(routes.ordered(), raw):
        assert routes.get(r.name) is r
        assert r.overlay == (row["needs"] == "overlay")
        assert r.__class__.__module__ == f"shimgen.routes.{row['module']}"


def test_only_the_overlay_shim_needs_more_than_libtorch():
    assert [r.name for r in routes.ordered() if r.overlay] == ["generated_shim"]
    assert {r.name for r in routes.ordered() if r.calls_c_shim} == {"shim", "generated_shim"}


def test_each_route_is_taken_where_its_facts_say():
    p = plan_mod.make(["mul.Scalar", "add.Tensor", "split.Tensor", "amax.default", "full.default"])
    last = {w.op.name: w.variants[-1] for w in sig_cpp.wrappers(p)[0]}
    assert last["amax.default"].route is routes.get("shim")  # libtorch ships aoti_torch_aten_amax
    assert last["mul.Scalar"].route is routes.get("sibling")  # no released dispatcher converts a Scalar
    assert last["mul.Scalar"].lowering == ("mul.Tensor",)
    assert last["add.Tensor"].route is routes.get("generated_shim")  # the Scalar alpha: only a C shim carries it
    assert last["split.Tensor"].route is routes.get("dispatcher")  # a Tensor[] return: no C shim can
    assert last["full.default"].route is routes.get("shim")
    assert last["full.default"].lowering == ("empty.memory_format", "fill_.Scalar")  # the composition


def test_c_shim_set_is_a_product_of_the_plan():
    p = plan_mod.make(["add.Tensor", "split.Tensor"])
    shims, refused = signatures.c_shims(p)
    # add.Tensor's and libtorch's subtract.Tensor, which its `equivalent` route calls (declared for it)
    assert [s.shim.function for s in shims] == ["aoti_torch_aten_add_Tensor", "aoti_torch_aten_subtract_Tensor"]
    assert any("split.Tensor" in r for r in refused)
    assert "aoti_torch_aten_add_Tensor(" in emit_c.emit(p)[emit_c.HEADER]


def test_a_copy_of_a_plan_has_its_own_derived_cache():
    """Issue 18: `dataclasses.replace(plan, ops=...)` used to share Plan.derived, so asking a one-op copy for its
    wrappers first made the three-op plan return one wrapper."""
    full = plan_mod.make(["add.Tensor", "sort.default", "amax.default"], additive=False)
    one = replace(full, ops=[op for op in full.ops if op.name == "sort.default"])
    assert [w.op.name for w in sig_cpp.wrappers(one)[0]] == ["sort.default"]
    # subtract.Tensor comes with add.Tensor: its `equivalent` route calls libtorch's subtract.Tensor shim
    assert sorted(w.op.name for w in sig_cpp.wrappers(full)[0]) == ["add.Tensor", "amax.default", "sort.default",
                                                                     "subtract.Tensor"]
    assert one.derived is not full.derived
    assert [s.shim.op.name for s in signatures.c_shims(one)[0]] == ["sort.default"]
    assert len(signatures.c_shims(full)[0]) == 4
