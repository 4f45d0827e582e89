"""What generation remembers, within a run and across runs, changes no answer.

- sig_cpp.variant_at reuses, in a build without the overlay, the overlay build's answer at a release where that
  answer takes no overlay route (Plan.share_across_worlds); every wrapper of every world of the whole 2.13 yaml is
  compared with the answers computed without that reuse.
- the dispatcher route's stack_layout computes every release's stack in one pass per op; compared with the
  per-release rule.
- The whole yaml's parse, the history's parsed schemas and the C++ layout of every file come from shimgen's cache
  (shimgen.base.cache) on a second run: its output is compared byte for byte with the first run's (which computed all of
  it), and with a run with caching off."""

from __future__ import annotations

from shimgen.facts import history
from shimgen.generate import parse, pipeline, plan as plan_mod
from shimgen.generate.routes import dispatcher
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.generate.parse import NativeYaml
from shimgen.generate.plan import WORLDS

NAMES = list(dict.fromkeys(op.split(".")[0] for op in NativeYaml(None).all_op_names()))


def _every_world(share: bool) -> dict:
    p = plan_mod.make(NAMES, None, None, additive=True, share_across_worlds=share)
    return {world: sig_cpp.wrappers(p.in_world(world)) for world in WORLDS}


def test_worlds_share_answers_without_changing_any() -> None:
    shared = _every_world(True)
    alone = _every_world(False)
    for world in WORLDS:
        a, b = shared[world], alone[world]
        assert a[1] == b[1], world  # the same refusals
        assert len(a[0]) == len(b[0]) > 2000, world
        differ = [x.op.name for x, y in zip(a[0], b[0]) if x != y]
        assert not differ, (world, differ[:10])
    # the reuse is real: the world without the overlay asked the routes far less often than it answered
    assert any(v.route.overlay for w in shared[WORLDS[0]][0] for v in w.variants)


def test_stack_layouts_of_every_release_in_one_pass() -> None:
    p = plan_mod.make(NAMES, None, None, additive=True)
    checked = 0
    for op in p.ops:
        layouts = dispatcher._stack_layouts(op, p)
        for r in p.releases():
            assert layouts[r] == dispatcher._stack_layout(op, p, r), (op.name, r)
            checked += 1
    assert checked > 15_000


def test_a_warm_cache_gives_the_cold_output(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", "")
    off, _ = pipeline.generate(NAMES, None, None, None)
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    history._SCHEMAS.clear()
    history._PRELOADED.clear()
    cold, _ = pipeline.generate(NAMES, None, None, None)
    kinds = {name.rsplit("-", 1)[0] for name in (p.name for p in tmp_path.iterdir())}
    assert {"native_functions", "history_schemas", "cpp-layout"} <= kinds, kinds
    history._SCHEMAS.clear()
    history._PRELOADED.clear()
    warm, _ = pipeline.generate(NAMES, None, None, None)
    assert cold == off
    assert warm == cold


def test_the_cached_parse_is_the_parse(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    from shimgen.generate import table

    native = NativeYaml(None)
    names = NAMES  # bare names: an overload the table refuses is skipped with a note
    assert len(names) >= parse.CACHED_PARSE_MIN
    notes_cached: list[str] = []
    cached = native.select(names, table.load(), notes_cached)  # built, stored and read back below
    again: list[str] = []
    assert NativeYaml(None).select(names, table.load(), again) == cached and again == notes_cached
    monkeypatch.setattr(parse, "CACHED_PARSE_MIN", 10**9)  # every entry parsed on its own
    direct_notes: list[str] = []
    assert NativeYaml(None).select(names, table.load(), direct_notes) == cached
    assert direct_notes == notes_cached and notes_cached  # the refusals too
