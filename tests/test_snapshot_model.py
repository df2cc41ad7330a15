"""A memory snapshot's model and views: every number against a hand computation, an independent replay of the
trace, or the totals the snapshot's own segments state."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin.ingest.snapshot import build, reader
from profscope.tb_plugin.model.snapshot import SnapshotModel, read_snapshot_model, write_snapshot_model
from profscope.tb_plugin.views import memory_snapshot as view

import snapshot_gen as gen
from conftest import real_trace

MB = 1 << 20
S = 0x7F00_0000_0000  # the small segment
T = 0x7F10_0000_0000  # a large segment allocated and freed within the history
X = S + 4096  # freed before... its alloc is older than the history


def model_of(snapshot: dict[str, Any]) -> SnapshotModel:
    return build.build_model(reader.read(pickle.dumps(snapshot)))[0]


def entry(action: str, addr: int, size: int, time: int, frames: Any = None, **extra: Any) -> dict[str, Any]:
    e = {"action": action, ("device_free" if action == "oom" else "addr"): addr, "size": size, "stream": 0,
         "time_us": time, "frames": frames if frames is not None else [], **extra}
    return e


USER = [{"filename": "/pytorch/c10/cuda/CUDACachingAllocator.cpp", "line": 1, "name": "c10::cuda::CUDACachingAllocator::malloc"},
        {"filename": "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"},
        {"filename": "/home/u/model.py", "line": 12, "name": "Net.forward"},
        {"filename": "/home/u/train.py", "line": 40, "name": "main"}]
CPP_ONLY = [{"filename": "/pytorch/c10/cuda/CUDACachingAllocator.cpp", "line": 1, "name": "c10::cuda::CUDACachingAllocator::malloc"},
            {"filename": "/pytorch/torch/csrc/autograd/generated/Functions.cpp", "line": 9, "name": "torch::autograd::generated::MmBackward0::apply"}]


def hand_made() -> dict[str, Any]:
    """One device, every kind of entry and edge, small enough to compute by hand (see the expected numbers below)."""
    trace = [
        entry("free_completed", X, 700, 10),  # row 0: allocated before the history
        entry("alloc", S + 1024, 300, 20, USER),  # row 1: B, alive at the end
        entry("alloc", S + 8192, 5000, 30, USER),  # row 2: D
        entry("free_requested", S + 8192, 5000, 35),  # row 3
        entry("free_completed", S + 8192, 5000, 36),  # row 4
        entry("alloc", S + 1536, 400, 40, CPP_ONLY),  # row 5: C, its free requested, not completed
        entry("free_requested", S + 1536, 400, 41),  # row 6
        entry("segment_alloc", T, 20 * MB, 50),  # row 7
        entry("alloc", T, 6 * MB, 51, USER),  # row 8: E
        entry("free_requested", T, 6 * MB, 52),  # row 9
        entry("free_completed", T, 6 * MB, 53),  # row 10
        entry("segment_free", T, 20 * MB, 54),  # row 11
        entry("oom", 1000, 1 << 40, 60, USER),  # row 12
        entry("snapshot", 0, 2048, 70),  # row 13
    ]
    blocks = [
        {"address": S, "size": 1024, "requested_size": 1000, "state": "active_allocated", "frames": USER[2:]},  # A
        {"address": S + 1024, "size": 512, "requested_size": 300, "state": "active_allocated", "frames": USER},
        {"address": S + 1536, "size": 512, "requested_size": 400, "state": "active_pending_free", "frames": CPP_ONLY},
        {"address": S + 2048, "size": 2 * MB - 2048, "requested_size": 0, "state": "inactive", "frames": []},
    ]
    segment = {"device": 0, "address": S, "total_size": 2 * MB, "allocated_size": 1536, "active_size": 2048,
               "requested_size": 1700, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
               "is_expandable": False, "frames": [], "blocks": blocks}
    return {"segments": [segment], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False},
            "external_annotations": [{"name": "fwd", "stage": "START", "device": 0, "time_us": 15},
                                     {"name": "fwd", "stage": "END", "device": 0, "time_us": 45}]}


def test_hand_made_snapshot_by_hand() -> None:
    model = model_of(hand_made())
    facts = view.device_facts(model)
    # Active bytes after each row: X (700) and A (1000, only in the segments) are live at the start.
    expected_active = [1000, 1300, 6300, 6300, 1300, 1700, 1700, 1700, 1700 + 6 * MB, 1700 + 6 * MB, 1700, 1700,
                       1700, 1700]
    assert model.entries.active.tolist() == expected_active
    # Allocated: X's free was requested before the history (not allocated at the start), C stops at row 6.
    assert facts["baseline"] == {"active": 1700, "allocated": 1000, "reserved": 2 * MB}
    assert model.entries.allocated.tolist() == [1000, 1300, 6300, 1300, 1300, 1700, 1300, 1300, 1300 + 6 * MB,
                                                1300, 1300, 1300, 1300, 1300]
    assert model.entries.reserved.tolist() == [2 * MB] * 7 + [22 * MB] * 4 + [2 * MB] * 3
    assert facts["peak"] == {"bytes": 1700 + 6 * MB, "row": 8, "time": 51}
    assert facts["reserved_peak"] == 22 * MB
    # At the end: what the segment states (requested_size 1700 = A 1000 + B 300 + C 400).
    assert facts["at_end"]["active"] == facts["stated"]["requested_size"] == 1700
    assert facts["at_end"]["reserved"] == facts["stated"]["total_size"] == 2 * MB
    lives = {int(a): i for i, a in enumerate(model.allocs.addr.tolist())}
    flags = view.allocation_row(model, lives[X])["flags"]
    assert flags == ["before_history", "stack_of_free", "freed_before_history"]
    assert view.allocation_row(model, lives[S])["flags"] == ["before_history", "alive_at_end", "from_segments"]
    assert view.allocation_row(model, lives[S + 1536])["freed"] == 41
    assert view.allocation_row(model, lives[S + 1536])["end"] is None


def test_hand_made_overview_oom_and_settings() -> None:
    overview = view.overview(model_of(hand_made()))
    oom = overview["oom"][0]
    assert (oom["requested"], oom["device_free"], oom["active"], oom["reserved"], oom["row"]) == (
        1 << 40, 1000, 1700, 2 * MB, 12)
    assert oom["site"] == "model.py:12 Net.forward"  # the user's innermost frame
    assert oom["frames"][0] == {"file": "/home/u/model.py", "line": 12, "name": "Net.forward", "kind": "user"}
    assert [f["kind"] for f in oom["frames"]] == ["user", "user", "python", "cpp"]  # user code first
    assert overview["devices"][0]["actions"] == {
        "alloc": 4, "free_requested": 3, "free_completed": 3, "segment_alloc": 1, "segment_free": 1, "oom": 1,
        "snapshot": 1}
    assert overview["allocator_settings"] == {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False}


def test_hand_made_at_a_moment_grouped() -> None:
    model = model_of(hand_made())
    at = view.at(model, row=6, group_by="annotation")
    assert at["live_bytes"] == 1700 and at["count"] == 3  # A, B, C
    assert {g["label"]: g["bytes"] for g in at["groups"]} == {
        "fwd": 700, "(allocated before the recorded history)": 1000}
    by_site = {g["label"]: g["bytes"] for g in view.at(model, row=6)["groups"]}
    # C's stack holds C++ frames only: its site is the operator's frame, not the allocator's.
    assert by_site == {"model.py:12 Net.forward": 1300, "torch::autograd::generated::MmBackward0::apply": 400}
    peak = view.at(model)
    assert peak["is_peak"] and peak["row"] == 8 and peak["live_bytes"] == 1700 + 6 * MB
    cpp_site = next(g["key"] for g in view.at(model, row=6)["groups"] if g["label"].startswith("torch::"))
    assert [a["size"] for a in view.at(model, row=6, site=cpp_site)["largest"]] == [400]  # a band's largest
    assert view.at(model, time=45)["row"] == 6 and view.at(model, time=5)["row"] == -1
    assert view.at(model, row=-1)["live_bytes"] == 1700
    flame = peak["flamegraph"]
    nodes = flame["nodes"]
    assert flame["total"] == 1700 + 6 * MB
    assert sum(t for t, p in zip(nodes["total"], nodes["parent"]) if p == 0) == flame["total"]
    assert flame["names"][nodes["name"][1]].startswith("main (train.py:40)")  # outermost frame first


def test_hand_made_allocator_state() -> None:
    model = model_of(hand_made())
    end = view.segments(model)
    assert end["exact"] and end["reserved"] == 2 * MB
    assert end["free"] == 2 * MB - 2048 and end["largest_free"] == 2 * MB - 2048
    assert end["free_in_blocks"] == (1024 - 1000) + (512 - 300) + (512 - 400)
    assert [b["state"] for b in end["blocks"]] == ["active_allocated", "active_allocated", "active_pending_free",
                                                   "inactive"]
    during = view.segments(model, row=8)  # the large segment is back, E lies in it
    assert not during["exact"]
    assert during["reserved"] == 22 * MB and [s["size"] for s in during["segments"]] == [2 * MB, 20 * MB]
    assert during["largest_free"] == 20 * MB - 6 * MB


def test_hand_made_timeline() -> None:
    model = model_of(hand_made())
    tl = view.timeline(model, width=60)  # 1 µs per pixel from 10 to 70
    assert tl["time"][0] == 10 and tl["resolution"] == 1.0
    assert max(tl["active_max"]) == 1700 + 6 * MB
    peak_pixel = tl["active_max"].index(1700 + 6 * MB)
    assert tl["time"][peak_pixel] == 51 and tl["sample_row"][peak_pixel] == 8
    assert tl["active_min"][tl["time"].index(36)] == 1300 and tl["active_max"][tl["time"].index(36)] == 6300
    for i in range(60):  # the bands and "other" add up to the pixel's highest
        assert sum(band[i] for band in tl["bands"]) + tl["other"][i] == tl["active_max"][i]
    assert [m["action"] for m in tl["markers"]] == ["oom", "snapshot"]
    assert tl["annotations"] == [{"name": "fwd", "start": 15, "end": 45, "depth": 0}]
    zoomed = view.timeline(model, start=30, end=40, width=10)
    assert zoomed["active_max"][0] == 6300 and zoomed["active_min"][-1] == 1300 and zoomed["active_max"][-1] == 1700
    with pytest.raises(view.SnapshotQueryError):
        view.timeline(model, start=5, end=5)


def test_edges_without_times_and_anomalies() -> None:
    snapshot = hand_made()
    trace = [dict(e) for e in snapshot["device_traces"][0]]
    for e in trace:
        e.pop("time_us")
    trace.insert(5, entry("free_completed", S + 8192, 5000, 0))  # a second free of D
    trace.insert(1, entry("alloc", X, 10, 0))  # X allocated again, never freed... then allocated once more
    trace.insert(2, entry("alloc", X, 20, 0))
    trace.append(entry("annotate", 0, 0, 0))
    for e in trace:
        e.pop("time_us", None)
    snapshot["device_traces"] = [trace]
    model = model_of(snapshot)
    assert model.header["axis"] == "entry"
    assert model.entries.time.tolist() == list(range(len(trace)))
    notes = " ".join(model.header["notes"])
    assert "have no times" in notes and "1 frees have no allocation" in notes
    assert "1 allocations have no free before their address is allocated again" in notes
    assert view.overview(model)["devices"][0]["actions"]["annotate"] == 1


def _replay(snapshot: dict[str, Any], device: int = 0) -> tuple[list[int], int]:
    """An independent replay: active bytes after each entry, from the history and the segments' live blocks."""
    trace = snapshot["device_traces"][device]
    live: dict[int, int] = {}
    before = 0
    for e in trace:  # frees of allocations the history does not hold were live at the start
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                del live[e["addr"]]
            else:
                before += e["size"]
    for seg in snapshot["segments"]:  # blocks live at the end that the history never allocated
        for b in seg["blocks"]:
            if b["state"] != "inactive" and b["address"] not in live:
                before += b["requested_size"]
    total, out, live = before, [], {}
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            total += e["size"]
        elif e["action"] == "free_completed":
            total -= live.pop(e["addr"], e["size"])
        out.append(total)
    return out, before


@pytest.mark.parametrize("kwargs", [
    {"steps": 3}, {"steps": 3, "max_entries": 150}, {"steps": 2, "expandable": True},
    {"steps": 2, "max_entries": 100, "expandable": True, "stop_after_forward": True},
    {"steps": 2, "capacity": 3 * gen.GB, "oom_at_end": True},
])
def test_generated_snapshots_against_a_replay_and_their_stated_totals(kwargs: dict[str, Any]) -> None:
    snapshot = gen.training_snapshot(**kwargs)
    model = model_of(snapshot)
    expected, before = _replay(snapshot)
    facts = view.device_facts(model)
    assert model.entries.active.tolist() == expected
    assert facts["baseline"]["active"] == before
    assert facts["peak"]["bytes"] == max([before] + expected)
    segments = snapshot["segments"]
    assert facts["at_end"]["active"] == sum(s["requested_size"] for s in segments)
    assert facts["at_end"]["reserved"] == sum(s["total_size"] for s in segments)
    end = view.segments(model)
    active_blocks = [b for s in segments for b in s["blocks"] if b["state"] != "inactive"]
    free_blocks = [b["size"] for s in segments for b in s["blocks"] if b["state"] == "inactive"]
    assert end["allocated"] == sum(s["allocated_size"] for s in segments)
    assert end["free"] == sum(free_blocks) and end["largest_free"] == max(free_blocks, default=0)
    assert end["free"] + end["free_in_blocks"] + sum(b["requested_size"] for b in active_blocks) == end["reserved"]
    at = view.at(model, limit=100000)
    assert at["live_bytes"] == facts["peak"]["bytes"] == sum(g["bytes"] for g in at["groups"])
    assert max(view.timeline(model, width=997)["active_max"]) == facts["peak"]["bytes"]


def test_the_snapshot_the_allocator_took_is_active_bytes_rounded() -> None:
    """torch's own "snapshot" entry records the active blocks' (rounded) sizes: those the segments state."""
    snapshot = gen.training_snapshot(steps=2, stop_after_forward=True)
    last = snapshot["device_traces"][0][-1]
    assert last["action"] == "snapshot"
    assert last["size"] == sum(s["active_size"] for s in snapshot["segments"])
    model = model_of(snapshot)
    assert view.segments(model)["active"] == last["size"]


def test_a_snapshot_made_from_a_cpu_profile() -> None:
    """torch's own conversion of a CPU profile: categories, no times, no reserved memory."""
    data = real_trace("memory_snapshots/mlp_cpu_profile.pickle").read_bytes()
    model = build.build_model(reader.read(data))[0]
    assert model.header["axis"] == "entry" and not model.header["reserved_known"]
    assert not model.entries.reserved.any()
    facts = view.device_facts(model)
    assert facts["at_end"]["active"] == facts["stated"]["requested_size"]
    groups = {g["label"]: g["bytes"] for g in view.at(model, group_by="category", limit=1000)["groups"]}
    assert {"parameter", "activation", "gradient"} <= set(groups)
    assert sum(groups.values()) == facts["peak"]["bytes"]
    # The user's script is the site of the activations (its frames are the profiler's "file.py(line): name").
    sites = view.at(model)["groups"]
    assert any("mlp_cpu_profile.py" in g["label"] for g in sites)


def test_compare_by_site() -> None:
    base = model_of(gen.training_snapshot(steps=2, hidden=1024))
    exp = model_of(gen.training_snapshot(steps=2, hidden=2048))
    same = view.compare(base, base)
    assert same["delta"] == 0 and all(r["delta"] == 0 for r in same["rows"])
    grew = view.compare(base, exp)
    assert grew["delta"] == exp.devices[0]["peak"]["bytes"] - base.devices[0]["peak"]["bytes"] > 0
    assert sum(r["delta"] for r in grew["rows"]) == grew["delta"]
    assert sum(r["exp_bytes"] for r in grew["rows"]) == exp.devices[0]["peak"]["bytes"]


def test_the_model_file_round_trips(tmp_path) -> None:
    snapshot = gen.training_snapshot(steps=2, max_entries=120)
    model, arrays = build.build_model(reader.read(pickle.dumps(snapshot)))
    path = write_snapshot_model(str(tmp_path / "m.snapshot"), model, arrays)
    again = read_snapshot_model(path)
    assert again.header["devices"] == model.header["devices"]
    assert view.at(again) == view.at(model)
    assert view.timeline(again, width=300) == view.timeline(model, width=300)
    # A damaged column is found when first used; the file is removed (parsed again).
    raw = bytearray(open(path, "rb").read())
    offset = raw.find(np.asarray(again.entries.active[:4]).tobytes())
    raw[offset] ^= 0xFF
    damaged = tmp_path / "d.snapshot"
    damaged.write_bytes(bytes(raw))
    from profscope.tb_plugin.model.trace_model import DamagedModel

    broken = read_snapshot_model(str(damaged))
    with pytest.raises(DamagedModel):
        broken.entries.active
    assert not damaged.exists()
