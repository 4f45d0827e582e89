"""Routes as typed objects (shimgen.generate.routes, data/routes.yaml), the C shim set as a product of the plan, and the
per-plan derived cache."""

from __future__ import annotations

from dataclasses import replace

import yaml

from shimgen.generate.signatures.stage import resolve
from shimgen.generate.emit import c as emit_c
from shimgen.generate import plan as plan_mod, routes
from shimgen.generate.signatures import stage as signatures, cpp as sig_cpp
from shimgen.base.inputs import package_text


def test_routes_come_from_the_data_in_its_order():
    raw = yaml.safe_load(package_text("data/routes.yaml"))["routes"]
    assert [r.name for r in routes.ordered()] == [row["name"] for row in raw]
    assert [r.rank for r in routes.ordered()] == list(range(len(raw)))
    for r, row in zip(routes.ordered(), raw):
        assert routes.get(r.name) is r
        assert r.overlay == (row["needs"] == "overlay")
        assert r.__class__.__module__ == f"shimgen.generate.routes.{row['module']}"


def test_only_the_overlay_shim_needs_more_than_libtorch():
    assert [r.name for r in routes.ordered() if r.overlay] == ["generated_shim"]
    assert {r.name for r in routes.ordered() if r.calls_c_shim} == {"shim", "generated_shim"}


def test_each_route_is_taken_where_its_facts_say():
    p = plan_mod.make(["mul.Scalar", "add.Tensor", "split.Tensor", "amax.default", "full.default"])
    last = {w.op.name: w.variants[-1] for w in sig_cpp.wrappers(p)[0]}
    assert last["amax.default"].route is routes.get("shim")  # libtorch ships aoti_torch_aten_amax
    assert last["mul.Scalar"].route is routes.get("sibling")  # no released dispatcher converts a Scalar
    assert last["mul.Scalar"].lowering == ("mul.Tensor",)
    # the Scalar alpha: libtorch's subtract.Tensor shim with -alpha from 2.10, which the overlay's own shim (from
    # 2.13) does not displace
    assert [(v.route.name, str(v.start)) for v in by_name(p, "add.Tensor").variants] == [("equivalent", "2.10")]
    assert last["split.Tensor"].route is routes.get("dispatcher")  # a Tensor[] return: no C shim can
    assert last["full.default"].route is routes.get("shim")
    assert last["full.default"].lowering == ("empty.memory_format", "fill_.Scalar")  # the composition


def by_name(p, name):
    return next(w for w in sig_cpp.wrappers(p)[0] if w.op.name == name)


def test_the_overlay_only_adds_forms():
    """Defining SHIMGEN_OVERLAY never moves a call libtorch alone serves to another route: the overlay's shim
    carries a Scalar as a double and would refuse arange(10), which the libtorch composition serves exactly.
    Wherever the default build has a form, the overlay build has the same one."""
    names = ["arange.default", "add.Tensor", "sub.Tensor", "pow.Tensor_Scalar", "hardtanh.default", "full.default",
             "std.correction", "leaky_relu.default", "clamp.default", "gelu.default", "addmm.default"]
    wide = plan_mod.make(names, additive=False)
    narrow = replace(wide, world=plan_mod.DEFAULT_WORLD)  # its own derived cache: nothing shared
    served = 0
    for name in names:
        w_wide, w_narrow = by_name(wide, name), by_name(narrow, name)
        for level in wide.releases():
            v_narrow = w_narrow.active(level)
            if v_narrow is None:
                continue
            served += 1
            v_wide = w_wide.active(level)
            if v_narrow.none_only:  # std(t, {1}): the dispatcher carries correction only as None; the overlay's
                assert v_wide.kept >= v_narrow.kept  # shim carries its values too (a superset of the calls)
                continue
            if v_narrow.guard_from is not None and not v_narrow.guard:
                # gelu below 2.14: a composition computing some calls, the rest raising on 2.10-2.13; the build
                # that accepts the str's leak (or links the overlay's shim) computes every call (a superset)
                assert v_wide.kept >= v_narrow.kept and v_wide.guard_from is None, (name, level)
                continue
            assert (v_wide.route, v_wide.kept, v_wide.lowering) == (v_narrow.route, v_narrow.kept,
                                                                    v_narrow.lowering), (name, level)
    assert served >= len(names)
    # and where libtorch has no route, the overlay's shim serves: arange.default at 2.13 is both, the composition
    assert by_name(wide, "arange.default").active(wide.releases()[-1]).route is routes.get("composition")


def test_c_shim_set_is_a_product_of_the_plan():
    p = plan_mod.make(["add.Tensor", "split.Tensor"])
    shims, refused = signatures.c_shims(p)
    # add.Tensor's and libtorch's subtract.Tensor, which its `equivalent` route calls (declared for it)
    assert [s.shim.function for s in shims] == ["aoti_torch_aten_add_Tensor", "aoti_torch_aten_subtract_Tensor"]
    assert any("split.Tensor" in r for r in refused)
    files = emit_c.emit(resolve(p))  # add.Tensor's shim is shimgen's: declared where the author opts in to the overlay
    assert "aoti_torch_aten_add_Tensor(" in files[emit_c.OVERLAY_HEADER]
    assert "aoti_torch_aten_add_Tensor(" not in files[emit_c.HEADER]
    assert "aoti_torch_aten_subtract_Tensor(" in files[emit_c.HEADER]


def test_a_copy_of_a_plan_has_its_own_derived_cache():
    """`dataclasses.replace(plan, ops=...)` used to share Plan.derived, so asking a one-op copy for its
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
