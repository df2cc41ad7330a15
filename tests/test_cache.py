"""The model cache: exact round trip, keyed by source identity, never fatal."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.store.cache import ModelCache, local_identity
from profscope.tb_plugin.model.array_file import read_model
from profscope.tb_plugin.ingest.load import load_trace

from conftest import copy_trace, real_trace

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
    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
    cache = ModelCache(str(tmp_path / "cache"))
    first = cache.load_or_build(str(trace))
    _assert_same(first, load_trace(str(trace)))
    # A second open must not parse: make parsing impossible and load again.
    import profscope.tb_plugin.store.cache as cache_module

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed again although cached")

    monkeypatch.setattr(cache_module, "load_trace", no_parse)
    second = ModelCache(str(tmp_path / "cache")).load_or_build(str(trace))
    _assert_same(first, second)
    assert not second.slices.start.flags.writeable  # a view of the read-only mapped file, not a copy


def test_changed_source_is_parsed_again(tmp_path: Path) -> None:
    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
    key1 = local_identity(str(trace)).cache_key()
    os.utime(trace, (1, 1))
    assert local_identity(str(trace)).cache_key() != key1


def test_damaged_entry_is_rebuilt(tmp_path: Path) -> None:
    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
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
    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
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
    from profscope.tb_plugin.store.parse_jobs import derive_in_cache
    from profscope.tb_plugin.views import overview as overview_module
    from profscope.tb_plugin.model import stored_answers

    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
    model = ModelCache(str(tmp_path / "cache")).load_or_build(str(trace))
    derive_in_cache(model.cache_path, None)
    stored = Path(model.cache_path + "." + stored_answers.SUFFIX)
    assert stored.exists()
    fresh = read_model(model.cache_path)
    expected = overview_module.overview(load_trace(str(trace)))

    def no_compute():
        raise AssertionError("computed although precomputed")

    answer = stored_answers.answer(fresh, ("overview", None, None), no_compute)
    assert answer["breakdown"] == pytest.approx(expected["breakdown"])
    # Answers written by another views version are ignored.
    original = stored.read_bytes()
    stored.write_bytes((stored_answers.VIEWS_VERSION + 1).to_bytes(8, "little") + original[8:])
    again = read_model(model.cache_path)
    assert stored_answers.answer(again, ("overview", None, None), lambda: "computed") == "computed"
    # So are damaged ones: one flipped byte of the answers fails their checksum.
    damaged = bytearray(original)
    damaged[len(damaged) // 2] ^= 0x01
    stored.write_bytes(bytes(damaged))
    again = read_model(model.cache_path)
    assert stored_answers.answer(again, ("overview", None, None), lambda: "computed") == "computed"
    stored.write_bytes(original)
    again = read_model(model.cache_path)
    assert stored_answers.answer(again, ("overview", None, None), no_compute)["breakdown"] == answer["breakdown"]


def _fake_entry(folder: Path, key_char: str, size: int, age_seconds: float, derived: bool = True) -> Path:
    """A cache entry of ``size`` bytes last used ``age_seconds`` ago (only file names and times matter)."""
    model = folder / (key_char * 40 + ".model")
    model.write_bytes(b"x" * size)
    if derived:
        (folder / (model.name + ".views.json")).write_bytes(b"y" * 10)
    used = time.time() - age_seconds
    os.utime(model, (used, used))
    return model


def test_evict_removes_least_recently_used_entries_beyond_the_bound(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    oldest = _fake_entry(folder, "a", 1000, 300)
    middle = _fake_entry(folder, "b", 1000, 200)
    newest = _fake_entry(folder, "c", 1000, 100)
    held = _fake_entry(folder, "d", 1000, 400)  # the oldest, but a live span holds it
    orphan = folder / ("e" * 40 + ".model.lod")  # derived file whose model is gone
    orphan.write_bytes(b"z")
    foreign = folder / "notes.model.txt"  # not a cache file name: left alone
    foreign.write_bytes(b"mine")
    stale_temp = folder / ".tmp-abandoned"
    stale_temp.write_bytes(b"t")
    os.utime(stale_temp, (time.time() - 3 * 86400,) * 2)
    fresh_temp = folder / ".tmp-being-written"
    fresh_temp.write_bytes(b"t")

    cache = ModelCache(str(folder), max_bytes=2100)
    removed = cache.evict(keep=[str(held)])

    # 4 entries of ~1010 bytes; the bound leaves room for two: the held one and the newest.
    assert removed == [str(oldest), str(middle)]
    assert not oldest.exists() and not Path(str(oldest) + ".views.json").exists() and not middle.exists()
    assert newest.exists() and held.exists() and Path(str(held) + ".views.json").exists()
    assert not orphan.exists() and not stale_temp.exists()
    assert foreign.exists() and fresh_temp.exists()
    assert cache.evict(keep=[str(held)]) == []  # within the bound now


def test_evict_removes_the_unfinished_file_of_a_writer_that_is_gone(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from profscope.tb_plugin.model.array_file import temporary_prefix

    folder = tmp_path / "cache"
    folder.mkdir()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(ended.stdout)  # a process that has exited
    host = socket.gethostname()
    killed = folder / f".tmp-{host}-{dead_pid}-abc_12"  # a parse killed while building into its file
    killed.write_bytes(b"half a model")
    live = folder / (temporary_prefix() + "x9")  # this process's own, being written
    live.write_bytes(b"t")
    elsewhere = folder / f".tmp-another-host-{dead_pid}-abc"  # another machine's: its pids say nothing here
    elsewhere.write_bytes(b"t")
    ModelCache(str(folder), max_bytes=10**9).evict()
    assert not killed.exists()
    assert live.exists() and elsewhere.exists()


def test_load_marks_the_entry_as_recently_used(tmp_path: Path) -> None:
    trace = copy_trace(real_trace(RESNET), tmp_path / "run")
    cache = ModelCache(str(tmp_path / "cache"))
    cache.load_or_build(str(trace))
    entry = cache.path_for(local_identity(str(trace)))
    assert entry is not None
    os.utime(entry, (1_000_000, 1_000_000))
    assert cache.load(local_identity(str(trace))) is not None
    assert os.stat(entry).st_mtime > time.time() - 60


def test_the_run_manager_keeps_the_cache_bounded_but_never_drops_live_spans(tmp_path: Path) -> None:
    from profscope.tb_plugin.store.runs import RunManager

    logdir = tmp_path / "logs"
    copy_trace(real_trace(RESNET), logdir / "run_a")
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    old = _fake_entry(cache_dir, "f", 4096, 10_000)  # an entry of a trace this server does not show
    manager = RunManager(str(logdir), cache_dir=str(cache_dir), refresh_seconds=0.2, settle_seconds=0.0,
                         cache_max_bytes=1)
    manager.start()
    try:
        assert manager.wait_until_settled(120)
        manager.refresh()
        model = manager.span("run_a", "worker0", None).model
        assert model.cache_path and os.path.exists(model.cache_path)  # live: kept although over the bound
        assert not old.exists()
    finally:
        manager.stop()


def _flip_a_byte_of_every_column(model_path: str, table: str) -> list[str]:
    """Flip one byte in the middle of each non-empty column of ``table`` stored in a cached model file (in place;
    a column stored as one value in the header has no bytes of its own)."""
    import msgspec

    from profscope.tb_plugin.model import array_file as cache_module

    with open(model_path, "rb") as f:
        f.seek(len(cache_module._MAGIC))
        header_offset, header_len, _crc = cache_module._PREAMBLE.unpack(f.read(cache_module._PREAMBLE.size))
        f.seek(header_offset)
        header = msgspec.json.decode(f.read(header_len))
    flipped = []
    with open(model_path, "r+b") as f:
        for name, info in header["arrays"].items():
            size = int(np.prod(info["shape"])) * np.dtype(info["dtype"]).itemsize
            if name.startswith(table + ".") and size and "offset" in info:
                f.seek(info["offset"] + size // 2)
                byte = f.read(1)[0]
                f.seek(-1, os.SEEK_CUR)
                f.write(bytes([byte ^ 0x10]))
                flipped.append(name)
    return flipped


def test_a_damaged_cache_entry_is_parsed_again_never_a_500(tmp_path: Path, make_client) -> None:
    from conftest import PluginClient, wait_for

    trace = copy_trace(real_trace(RESNET), tmp_path / "logdir" / "run")
    span = {"run": "run", "worker": "worker0", "span": trace.name.split(".")[1]}
    first = make_client(tmp_path / "logdir")
    first.settle()
    status, expected = first.get("summary", **span)
    assert status == 200, expected
    entries = [p for p in (tmp_path / "cache0").iterdir() if p.name.endswith(".model")]
    assert len(entries) == 1
    first.close()
    assert _flip_a_byte_of_every_column(str(entries[0]), "slices")

    # A second server on the same cache: the entry's header is intact, so the span is ready at once;
    # the first route that reads a damaged column finds the mismatch, and the trace is parsed again.
    second = PluginClient(tmp_path / "logdir", tmp_path / "cache0")
    try:
        seen = []

        def answered() -> bool:
            status, body = second.get("summary", **span)
            seen.append(status)
            return status == 200 and body == expected

        wait_for(answered, 120, "the summary of the span parsed again")
        assert 500 not in seen and 202 in seen, seen
        status, body = second.get("trace/tracks", **span)
        assert status == 200, body
    finally:
        second.close()
