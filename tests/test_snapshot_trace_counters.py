"""A span's memory snapshot in the trace viewer: once parsed, and when both keep a wall clock, ``trace/tracks`` lists
its active and reserved bytes as a counter track under Memory, and ``trace/counters`` serves them on the trace's
time base (the snapshot's time + the ``trace_offset_us`` of ``memory_snapshot``'s ``linked``). A snapshot of no span,
without times, still parsing or refused adds nothing, and changes nothing else of the trace routes.

The expected bytes are counted here from the snapshot's own entries (requested sizes from ``alloc`` to
``free_completed``, segment sizes from ``segment_alloc`` to ``segment_free``), not by the code under test.
"""

from __future__ import annotations

import copy
import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

import snapshot_gen as gen
from conftest import PluginClient, copy_trace, real_trace
from test_snapshot_reader import hostile_snapshots

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
MLP_STEM = "worker0.1795303442092317655"
WORKER, SPAN = "worker0", "1795303442092317655"
TRACK = "c:snapshot:0"


def settled(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


def trace_clock() -> tuple[int, float]:
    return gen.trace_clock(str(real_trace(MLP)))


def snapshot_inside_the_trace() -> dict[str, Any]:
    """A training snapshot whose first entry falls 1 ms after the trace's first event, on the wall clock."""
    base, first = trace_clock()
    return gen.moved_to(gen.training_snapshot(steps=2), base // 1000 + int(first) + 1000)


def counted(snapshot: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(time µs since the epoch, active bytes, reserved bytes) after each entry, counted from the entries."""
    active = reserved = 0
    out = []
    for entry in snapshot["device_traces"][0]:
        action, size = entry["action"], entry["size"]
        active += size if action == "alloc" else -size if action == "free_completed" else 0
        reserved += size if action == "segment_alloc" else -size if action == "segment_free" else 0
        out.append((entry["time_us"], active, reserved))
    return out


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return snapshot_inside_the_trace()


@pytest.fixture
def client(tmp_path: Path, snapshot: dict[str, Any], make_client) -> PluginClient:
    """Runs of the same trace: with its snapshot (``linked``), with a snapshot of no span (``unlinked``), with a
    snapshot without times (``clockless``), with a hostile snapshot named as the span (``hostile``), alone
    (``plain``)."""
    root = tmp_path / "logdir"
    for run in ("linked", "unlinked", "clockless", "hostile", "plain"):
        copy_trace(real_trace(MLP), root / run)
    settled(root / "linked" / f"{MLP_STEM}.pickle", pickle.dumps(snapshot))
    settled(root / "unlinked" / "snapshot.pickle", pickle.dumps(snapshot))
    clockless = copy.deepcopy(snapshot)
    for entry in clockless["device_traces"][0]:
        del entry["time_us"]
    clockless.pop("external_annotations", None)
    settled(root / "clockless" / f"{MLP_STEM}.pickle", pickle.dumps(clockless))
    settled(root / "hostile" / f"{MLP_STEM}.pickle", hostile_snapshots(tmp_path / "created")["os.system"])
    c = make_client(root)
    c.settle()
    return c


def snapshot_tracks(client: PluginClient, run: str) -> list[dict[str, Any]]:
    status, answer = client.get("trace/tracks", run=run, worker=WORKER, span=SPAN)
    assert status == 200, answer
    return [t for t in answer["tracks"] if t["id"].startswith("c:snapshot:")]


def counter(client: PluginClient, run: str, start: float, end: float, width: int) -> dict[str, Any]:
    status, answer = client.get("trace/counters", run=run, worker=WORKER, span=SPAN, start=start, end=end,
                                width=width, tracks=TRACK)
    assert status == 200, answer
    return answer


def test_the_snapshot_is_a_memory_counter_of_its_span(client: PluginClient) -> None:
    assert snapshot_tracks(client, "linked") == [{
        "id": TRACK, "name": "Snapshot: GPU 0 memory", "kind": "counter", "group": "Memory", "unit": "bytes",
        "series": ["active", "reserved"], "max_depth": 0}]
    # The trace's own memory counter is still there, in the same group.
    _, answer = client.get("trace/tracks", run="linked", worker=WORKER, span=SPAN)
    assert [t["id"] for t in answer["tracks"] if t["group"] == "Memory"] == ["c:mem:0:-1", TRACK]


def test_its_bytes_are_the_snapshots_on_the_traces_time_base(client: PluginClient, snapshot: dict[str, Any]) -> None:
    _, overview = client.get("memory_snapshot", run="linked")
    offset = overview["linked"]["trace_offset_us"]
    base, _ = trace_clock()
    assert offset == -base / 1000  # the shift of the Memory snapshot page's chart beside the profile
    steps = counted(snapshot)
    # A moment in the middle: between two entries the counter holds what the entries say after the earlier one.
    middle = len(steps) // 2
    while steps[middle + 1][0] == steps[middle][0]:
        middle += 1
    at, active, reserved = steps[middle]
    after = steps[middle + 1][0]
    assert after - at >= 2 and active > 0 and reserved > 0
    answer = counter(client, "linked", at + offset + 0.5, after + offset - 0.5, 1)
    [track] = answer["tracks"]
    assert track["id"] == TRACK
    for name, expected in (("active", active), ("reserved", reserved)):
        bucket = track["series"][name]
        assert (bucket["min"], bucket["mean"], bucket["max"]) == ([expected], [expected], [expected]), name
    # Before the entry the value was another one: the step lies at the entry's time, shifted.
    before = [s for s in steps if s[0] < at][-1]
    answer = counter(client, "linked", before[0] + offset + 0.5, at + offset - 0.5, 1)
    assert answer["tracks"][0]["series"]["active"]["mean"] == [before[1]]
    # The whole trace: the highest bucket is the snapshot's peak, as counted and as the snapshot's timeline has it.
    _, tracks = client.get("trace/tracks", run="linked", worker=WORKER, span=SPAN)
    whole = counter(client, "linked", tracks["start"], tracks["end"], 800)
    series = whole["tracks"][0]["series"]["active"]
    peak = max(s[1] for s in steps)
    assert max(series["max"]) == peak
    _, timeline = client.get("memory_snapshot/timeline", run="linked", width=400)
    assert max(timeline["active_max"]) == peak == overview["devices"][0]["peak"]["bytes"]
    # The peak's bucket is the one holding the peak's time on the trace's time base.
    peak_time = next(s[0] for s in steps if s[1] == peak) + offset
    hit = max(i for i, t in enumerate(series["time"]) if t <= peak_time)
    assert series["max"][hit] == peak
    # No bucket before the snapshot's first entry.
    assert series["time"][0] <= steps[0][0] + offset < series["time"][0] + whole["resolution"]


def test_an_area_selection_reads_the_trace_memory_and_the_snapshot_in_its_range(
        client: PluginClient, snapshot: dict[str, Any]) -> None:
    """trace/range over the trace's CPU memory counter and the snapshot's track: each series' lowest, highest and
    time-weighted mean value in the range, by hand from the trace's [memory] events and the snapshot's entries."""
    import gzip
    import json

    _, overview = client.get("memory_snapshot", run="linked")
    offset = overview["linked"]["trace_offset_us"]
    _, tracks = client.get("trace/tracks", run="linked", worker=WORKER, span=SPAN)
    start, end = tracks["start"], tracks["end"]
    status, answer = client.get("trace/range", run="linked", worker=WORKER, span=SPAN, start=start, end=end,
                                tracks=f"c:mem:0:-1,{TRACK}")
    assert status == 200 and answer["slices"] == 0  # counters only: no slice track was asked about
    by_id = {c["id"]: c for c in answer["counters"]}
    assert set(by_id) == {"c:mem:0:-1", TRACK} and by_id[TRACK]["unit"] == "bytes"
    # The snapshot: its peak, as the snapshot counts it.
    steps = counted(snapshot)
    active = by_id[TRACK]["series"]["active"]
    assert active["max"] == max(s[1] for s in steps) == overview["devices"][0]["peak"]["bytes"]
    assert active["known_from"] == pytest.approx(steps[0][0] + offset, abs=0.01)
    # The trace's CPU memory: the highest "Total Allocated" of its [memory] events inside the range.
    doc = json.loads(gzip.decompress(real_trace(MLP).read_bytes()))
    memory = [(e["ts"], e["args"]["Total Allocated"]) for e in doc["traceEvents"]
              if e.get("name") == "[memory]" and e["args"].get("Device Type") == 0]
    inside = [v for t, v in memory if start <= t < end]
    assert by_id["c:mem:0:-1"]["series"]["allocated"]["max"] == max(inside)
    # Between two snapshot entries: one value, its own mean.
    middle = len(steps) // 2
    while steps[middle + 1][0] == steps[middle][0]:
        middle += 1
    at, held, _ = steps[middle]
    _, narrow = client.get("trace/range", run="linked", worker=WORKER, span=SPAN, start=at + offset + 0.5,
                           end=steps[middle + 1][0] + offset - 0.5, tracks=TRACK)
    (only,) = narrow["counters"]
    figures = only["series"]["active"]
    assert (figures["first"], figures["last"], figures["min"], figures["max"]) == (held, held, held, held)
    assert figures["mean"] == pytest.approx(held)
    # Without tracks: every counter track of the span, the snapshot's among them.
    _, every = client.get("trace/range", run="linked", worker=WORKER, span=SPAN, start=start, end=end)
    assert {"c:mem:0:-1", TRACK} <= {c["id"] for c in every["counters"]}


def test_a_snapshot_of_no_span_or_without_times_adds_no_track(client: PluginClient) -> None:
    _, unlinked = client.get("memory_snapshot", run="unlinked")
    assert unlinked["linked"] is None
    _, clockless = client.get("memory_snapshot", run="clockless")
    assert clockless["linked"]["status"] == "ready" and clockless["linked"]["trace_offset_us"] is None
    for run in ("unlinked", "clockless"):
        assert snapshot_tracks(client, run) == []
        assert counter(client, run, 4446416050849.0, 4446416069592.0, 100)["tracks"] == []


def test_a_snapshot_still_parsing_adds_no_track_and_nothing_waits(client: PluginClient) -> None:
    manager = client.plugin.manager
    with manager._lock:  # the state of a snapshot whose parse is under way, kept so for this test
        [state] = [s for (run, _name), s in manager._snapshots.items() if run == "linked"]
        parsed, state.status, state.model = state.model, "loading", None
    try:
        started = time.monotonic()
        assert snapshot_tracks(client, "linked") == []
        assert counter(client, "linked", 4446416050849.0, 4446416069592.0, 100)["tracks"] == []
        assert time.monotonic() - started < 5
    finally:
        with manager._lock:
            state.status, state.model = "ready", parsed
    assert [t["id"] for t in snapshot_tracks(client, "linked")] == [TRACK]


def test_a_hostile_snapshot_changes_nothing_in_the_trace_routes(client: PluginClient, tmp_path: Path) -> None:
    status, body = client.get("memory_snapshot", run="hostile")
    assert status == 422 and "refused and nothing in it was run" in body["error"]
    span = {"worker": WORKER, "span": SPAN}
    window = {"start": 4446416050849.0, "end": 4446416069592.0, "width": 300}
    for route, params in (("trace/tracks", {}), ("trace/counters", {**window, "tracks": f"c:mem:0:-1,{TRACK}"}),
                          ("trace/slices", window), ("trace/search", {"q": "aten::"})):
        hostile = client.get(route, run="hostile", **span, **params)
        plain = client.get(route, run="plain", **span, **params)
        assert hostile[0] == 200 and hostile == plain, route
    assert not (tmp_path / "created").exists()
