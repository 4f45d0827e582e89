"""The OpInfo recorder records only the corpus entries of the ops asked for, keeps each entry's chunk, and merges an
op's calls the same whatever else was asked or is cached (shimgen.proofs.verify.record)."""

from __future__ import annotations

import os

import pytest

from shimgen.proofs.verify import record

INDEX = [
    ("add", ["add"]),
    ("nn.functional.pad.constant", ["constant_pad_nd", "nn.functional.pad", "nn_functional_pad", "pad"]),
    ("masked.amax", ["amax", "masked.amax", "masked_amax"]),
    ("variants of add", ["add"]),
    ("module nn.ZeroPad2d", []),
]


def _call(source: str) -> dict:
    return {"args": {"self": source}, "source": source}


CHUNKS = {
    "add": {"calls": {"add.Tensor": [_call("add 1"), _call("add 2")], "mul.Tensor": [_call("add mul")]}},
    "nn.functional.pad.constant": {"calls": {"pad.default": [_call("pad 1")], "add.Tensor": [_call("pad add")]}},
    "masked.amax": {"calls": {"amax.default": [_call("amax 1")]}},
    "variants of add": {"calls": {"add_.Tensor": [_call("add_ 1")]}},
    "module nn.ZeroPad2d": {"calls": {"pad.default": [_call("module pad")],
                                      "constant_pad_nd.default": [_call("module cpn")]}},
}


def test_an_op_gets_the_entries_about_it_or_else_every_entry() -> None:
    chosen = record.select(INDEX, ["add_", "pad", "amax", "constant_pad_nd", "zeros"])
    assert chosen["add"] == ["add", "variants of add"]  # add_ and add share their entries
    assert chosen["pad"] == ["nn.functional.pad.constant"]
    assert chosen["amax"] == ["masked.amax"]
    assert chosen["zeros"] == [key for key, _ in INDEX]  # no entry is about zeros: every entry
    assert record.select(INDEX, None) == {"*": [key for key, _ in INDEX]}


def test_an_ops_calls_do_not_depend_on_what_else_is_asked() -> None:
    alone = {op: record.merge(INDEX, CHUNKS, [op]) for op in ("add", "pad", "amax")}
    together = record.merge(INDEX, CHUNKS, ["add", "pad", "amax"])
    assert together == {**alone["add"], **alone["pad"], **alone["amax"]}
    assert [c["source"] for c in together["add.Tensor"]] == ["add 1", "add 2"]  # not pad's add, not add's mul
    assert set(alone["add"]) == {"add.Tensor", "add_.Tensor"}
    everything = record.merge(INDEX, CHUNKS, None)  # the whole corpus: every overload, entries in corpus order
    assert [c["source"] for c in everything["add.Tensor"]] == ["add 1", "add 2", "pad add"]
    assert [c["source"] for c in everything["pad.default"]] == ["pad 1", "module pad"]


def test_a_partial_request_has_its_own_file(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    whole = record.cache_path("2.13.0")
    assert record.cache_path("2.13.0", ["add", "pad"]) == record.cache_path("2.13.0", ["pad", "add_"])
    assert len({whole, record.cache_path("2.13.0", ["add"]), record.cache_path("2.13.0", ["add", "pad"]),
                record.cache_path("2.14.1", ["add"])}) == 4
    assert os.path.dirname(whole) == str(tmp_path) and not os.path.exists(whole)


@pytest.mark.slow
def test_the_recorder_records_only_the_ops_asked_for_and_keeps_them(monkeypatch, tmp_path) -> None:
    """add recorded alone, then again (nothing recorded), then amax (only amax's entries); in a fresh cache add and
    amax recorded together give each the same calls."""
    from shimgen.proofs.verify import build

    try:
        import expecttest  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("expecttest is missing: install the test extras (pip install -e '.[test]')")
        pytest.skip("OpInfo needs the expecttest package (pip install -e '.[test]')")
    version = build.find_torch().version
    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path / "first"))
    add = record.record(version, jobs=1, ops=["add"])
    assert add.note is None and not add.cached
    assert sorted(add.recorded) == ["add", "variants of add"]
    assert {k.rpartition(".")[0] for k in add.calls} <= {"add", "add_"} and "add.Tensor" in add.calls
    again = record.record(version, jobs=1, ops=["add"])
    assert again.cached and again.recorded == [] and again.calls == add.calls
    amax = record.record(version, jobs=1, ops=["amax", "add"])
    assert amax.recorded and all("amax" in key for key in amax.recorded), amax.recorded  # add is not re-recorded
    assert {k: v for k, v in amax.calls.items() if k.startswith("add")} == add.calls

    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path / "second"))
    both = record.record(version, jobs=2, ops=["add", "amax"])
    assert sorted(both.recorded) == sorted(add.recorded + amax.recorded)
    assert both.calls == amax.calls
    assert record.record(version, jobs=1, ops=["amax"]).calls == {k: v for k, v in both.calls.items()
                                                                    if k.startswith("amax")}


def test_a_cached_corpus_is_merged_without_recording(monkeypatch, tmp_path) -> None:
    """Every chunk an ask needs is there: nothing is recorded (no worker starts), the ask's file is written, and
    an ask that took every entry (an op no entry is about) writes the whole corpus's file too."""
    from shimgen.proofs.verify import serial

    monkeypatch.setenv("SHIMGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(record, "_run_worker", lambda *a: pytest.fail("a worker started"))
    folder = record.chunk_dir("0.0.0")
    os.makedirs(folder)
    with open(os.path.join(folder, record.INDEX), "wb") as f:
        f.write(serial.dumps({"format": record.FORMAT, "entries": INDEX}))
    for key, chunk in CHUNKS.items():
        with open(record.chunk_path(folder, key), "wb") as f:
            f.write(serial.dumps({"entry": key, **chunk}))
    got = record.record("0.0.0", ops=["pad"])
    assert got.cached and got.recorded == [] and got.calls == record.merge(INDEX, CHUNKS, ["pad"])
    assert record.load(record.cache_path("0.0.0", ["pad"])).calls == got.calls
    assert record.load(record.cache_path("0.0.0")) is None  # pad's entries are not the whole corpus
    record.record("0.0.0", ops=["zeros"])
    assert record.load(record.cache_path("0.0.0")).calls == record.merge(INDEX, CHUNKS, None)
