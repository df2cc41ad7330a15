"""The model cache: exact round trip, keyed by source identity, never fatal."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.cache import ModelCache, local_identity, read_model
from profscope.tb_plugin.ingest import load_trace

from conftest import copy_trace, shared_trace

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def _assert_same(a, b) -> None:
    assert a.strings == b.strings and a.tracks == b.tracks and a.metadata == b.metadata
    assert (a.num_events, a.start, a.end, a.framework) == (b.num_events, b.start, b.end, b.framework)
    for table in ("slices", "instants", "counters", "flows", "links", "steps"):
        ta, tb = getattr(a, table), getattr(b, table)
        for f in dataclasses.fields(ta):
            x, y = getattr(ta, f.name), getattr(tb, f.name)
            assert x.dtype == y.dtype, (table, f.name)
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (table, f.name)


def test_round_trip_is_exact_and_second_load_reads_the_cache(tmp_path: Path, monkeypatch) -> None:
    trace = copy_trace(shared_trace(RESNET), tmp_path / "run")
    cache = ModelCache(str(tmp_path / "cache"))
    first = cache.load_or_build(str(trace))
    _assert_same(first, load_trace(str(trace)))
    # A second open must not parse: make parsing impossible and load again.
    import profscope.tb_plugin.cache as cache_module

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again although cached")

    monkeypatch.setattr(cache_module, "load_trace", no_parse)
    second = ModelCache(str(tmp_path / "cache")).load_or_build(str(trace))
    _assert_same(first, second)
    assert not second.slices.start.flags.writeable  # a view of the read-only mapped file, not a copy


def test_changed_source_is_parsed_again(tmp_path: Path) -> None:
    trace = copy_trace(shared_trace(RESNET), tmp_path / "run")
    key1 = local_identity(str(trace)).cache_key()
    os.utime(trace, (1, 1))
    assert local_identity(str(trace)).cache_key() != key1


def test_damaged_entry_is_rebuilt(tmp_path: Path) -> None:
    trace = copy_trace(shared_trace(RESNET), tmp_path / "run")
    cache = ModelCache(str(tmp_path / "cache"))
    cache.load_or_build(str(trace))
    entry = cache.path_for(local_identity(str(trace)))
    assert entry is not None
    Path(entry).write_bytes(b"PSCOPE01" + b"\xff" * 20)
    assert cache.load(local_identity(str(trace))) is None
    model = cache.load_or_build(str(trace))
    assert model.num_events > 0
    assert read_model(entry).num_events == model.num_events


def test_read_only_logdir_and_unwritable_cache(tmp_path: Path) -> None:
    trace = copy_trace(shared_trace(RESNET), tmp_path / "run")
    os.chmod(tmp_path / "run", 0o555)
    try:
        blocked = tmp_path / "blocked"
        blocked.write_text("a file where the cache folder should be")
        cache = ModelCache(str(blocked / "cache"))
        assert cache.cache_dir is not None and not cache.cache_dir.startswith(str(blocked))
        assert cache.load_or_build(str(trace)).num_events > 0
        assert sorted(os.listdir(tmp_path / "run")) == [trace.name]  # nothing written next to the trace
    finally:
        os.chmod(tmp_path / "run", 0o755)


def test_precomputed_answers_are_used_and_versioned(tmp_path: Path, monkeypatch) -> None:
    import json as _json

    from profscope.tb_plugin.runs import _derive_in_cache
    from profscope.tb_plugin.views import overview as overview_module
    from profscope.tb_plugin.views import precomputed

    trace = copy_trace(shared_trace(RESNET), tmp_path / "run")
    model = ModelCache(str(tmp_path / "cache")).load_or_build(str(trace))
    _derive_in_cache(model.cache_path, None)
    stored = Path(model.cache_path + "." + precomputed.SUFFIX)
    assert stored.exists()
    fresh = read_model(model.cache_path)
    expected = overview_module.overview(load_trace(str(trace)))

    def no_compute():
        raise AssertionError("computed although precomputed")

    answer = precomputed.answer(fresh, ("overview", None, None), no_compute)
    assert answer["breakdown"] == pytest.approx(expected["breakdown"])
    # An answer written by another views version is ignored.
    doc = _json.loads(stored.read_text())
    doc["version"] = -1
    stored.write_text(_json.dumps(doc))
    again = read_model(model.cache_path)
    assert precomputed.answer(again, ("overview", None, None), lambda: "computed") == "computed"
