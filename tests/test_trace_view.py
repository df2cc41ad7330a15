"""Trace viewer backend: exact level-of-detail merge, windows, counters, events, search, download."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views import answers
from profscope.tb_plugin.views.trace import queries as trace
from profscope.tb_plugin.model.trace_index import build_index, query

from conftest import copy_trace, real_trace
from handmade import gpu_step_trace, trace as make_trace, write, x

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def _in_window(model, t0: int, t1: int) -> int:
    s = model.slices
    return int(((s.start < t1) & (s.end > t0)).sum())


def _counted(result: dict) -> tuple[int, int, int]:
    slices = sum(len(t["slices"]["id"]) for t in result["tracks"])
    blocks = sum(len(t["blocks"]["start"]) for t in result["tracks"])
    return slices, blocks, slices + sum(sum(t["blocks"]["count"]) for t in result["tracks"])


def _random_trace(rng: random.Random, n_threads: int = 3) -> list[dict]:
    events = []
    for tid in range(n_threads):
        t = 0.0
        for _ in range(rng.randint(50, 400)):
            t += rng.choice([0.0, 0.01, 0.3, 2.0, 50.0])
            dur = rng.choice([0.001, 0.05, 0.4, 3.0, 200.0])
            events.append(x(f"op{rng.randint(0, 9)}", t, dur, tid=tid))
            if rng.random() < 0.3 and dur > 0.1:
                events.append(x("child", t + dur * 0.1, dur * 0.5, tid=tid))
            t += dur
    return events


def test_nothing_is_lost_at_any_zoom(tmp_path: Path) -> None:
    rng = random.Random(3)
    for case in range(8):
        model = load_trace(str(write(tmp_path / f"t{case}.json", make_trace(_random_trace(rng)))))
        span = model.end - model.start
        for _ in range(25):
            a = model.start + int(rng.random() * span)
            b = a + max(1, int(rng.random() * (model.end - a + 1)))
            width = rng.choice([50, 300, 2000])
            result = trace.slices(model, a / 1000, b / 1000, width, None)
            t0, t1 = round(result["start"] * 1000), round(result["end"] * 1000)
            _, _, counted = _counted(result)
            assert counted == _in_window(model, t0, t1), (case, a, b, width)
            # Everything returned overlaps the window.
            for t in result["tracks"]:
                assert all(s < result["end"] for s in t["blocks"]["start"] + t["slices"]["start"])
                assert all(e > result["start"] for e in t["blocks"]["end"])
                assert all(s + d >= result["start"] for s, d in zip(t["slices"]["start"], t["slices"]["dur"]))


def test_payload_is_bounded_by_pixels(tmp_path: Path) -> None:
    # 20,000 tiny back-to-back slices: at 100 px the whole span is a handful of items.
    events = [x("k", i * 1.0, 0.5, tid=1) for i in range(20000)]
    model = load_trace(str(write(tmp_path / "t.json", make_trace(events))))
    result = trace.slices(model, None, None, 100, None)
    slices, blocks, counted = _counted(result)
    assert counted == 20000
    assert slices + blocks <= 2 * 100
    index = build_index(model)
    assert len(index.levels[-1].start) <= 2  # the coarsest level summarises the lane


def test_level_query_matches_raw_on_real_trace() -> None:
    model = load_trace(str(real_trace(RESNET)))
    index = build_index(model)
    lanes = np.arange(len(index.lanes_track))
    rng = random.Random(5)
    for _ in range(20):
        a = model.start + int(rng.random() * (model.end - model.start))
        b = a + int(rng.random() * (model.end - a)) + 1
        resolution = 2 ** rng.randint(8, 24)
        result = query(index, lanes, a, b, resolution)
        assert int(result.count.sum()) == _in_window(model, a, b)
        single = result.row >= 0
        assert np.all(result.count[single] == 1)
        assert np.all(result.end[single] - result.start[single] >= 0)


def test_each_kept_level_holds_at_most_three_quarters_of_the_finer_one() -> None:
    model = load_trace(str(real_trace(RESNET)))
    index = build_index(model)
    sizes = [len(level.start) for level in index.levels]
    assert len(sizes) >= 3 and sizes[0] == len(model.slices.start)
    # The coarsest level is always kept (it summarises every lane); each other one must shrink by a quarter.
    assert all(finer * 0.75 >= coarser for finer, coarser in zip(sizes, sizes[1:-1])), sizes


def test_tracks_counters_event_search(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "w.1.pt.trace.json", gpu_step_trace())))
    listing = answers.tracks(model)
    ids = {t["id"]: t for t in listing["tracks"]}
    kinds = {t["kind"] for t in listing["tracks"]}
    assert {"cpu", "gpu", "counter"} <= kinds
    assert "c:gpu_util:0" in ids and "c:mem:1:0" in ids
    assert listing["start"] == 100.0 and listing["end"] == 1000.0
    # GPU utilization counter: a kernel runs 200..600 (the copy at 650..700 is not a kernel).
    counters = trace.counters(model, 100, 1000, 1, ["c:gpu_util:0"])
    (series,) = counters["tracks"]
    assert series["series"]["utilization"]["mean"][0] == pytest.approx(400 / counters["resolution"], rel=1e-6)
    # The kernel's details name its launching runtime call and operator; flows link them.
    s = model.slices
    kernel = next(i for i, n in enumerate(s.name) if model.strings[n] == "implicit_convolve_sgemm")
    detail = trace.event(model, int(s.event_id[kernel]))
    assert detail["launched_by"]["name"] == "cudaLaunchKernel"
    assert detail["operator"]["name"] == "aten::convolution"
    assert detail["args"]["grid"] == "[8,1,1]"
    assert [f["other"]["name"] for f in detail["flows"]] == ["cudaLaunchKernel"]
    runtime = next(i for i, n in enumerate(s.name) if model.strings[n] == "cudaLaunchKernel")
    assert [r["name"] for r in trace.event(model, int(s.event_id[runtime]))["launches"]] == ["implicit_convolve_sgemm"]
    with pytest.raises(KeyError):
        trace.event(model, 10**9)
    found = trace.search(model, "CONV")
    assert found["total"] == 3
    assert [m["name"] for m in found["matches"]] == ["aten::conv2d", "aten::convolution", "implicit_convolve_sgemm"]
    assert trace.search(model, "conv", offset=2, limit=5)["matches"][0]["name"] == "implicit_convolve_sgemm"


def test_trace_routes(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    source = copy_trace(real_trace(RESNET), logdir / "resnet")
    client = make_client(logdir)
    client.settle()
    q = {"run": "resnet", "worker": "worker0"}
    status, tracks = client.get("trace/tracks", **q)
    assert status == 200 and tracks["tracks"]
    status, window = client.get("trace/slices", **q, width=2000)
    assert status == 200 and window["resolution"] > 0
    first = next(t for t in window["tracks"] if t["slices"]["id"])
    event_id = first["slices"]["id"][0]
    status, detail = client.get("trace/event", **q, id=event_id)
    assert status == 200 and detail["id"] == event_id
    status, flows = client.get("trace/flows", **q, id=event_id)
    assert status == 200 and "flows" in flows
    status, found = client.get("trace/search", **q, q="cudnn")
    assert status == 200 and found["total"] > 0
    status, found = client.get("trace/search", **q, q="Memcpy HtoD")
    status, copy = client.get("trace/event", **q, id=found["matches"][0]["id"])  # its bandwidth, by the contract
    assert status == 200 and copy["bandwidth"]["label"] == "Host to device" and copy["bandwidth"]["bandwidth"] > 0
    assert client.get("trace/event", **q, id=10**12)[0] == 404
    assert client.get("trace/slices", **q, start="nan")[0] == 400
    assert client.get("trace/slices", **q, width="0")[0] == 400
    assert client.get("trace/slices", **q, start=10, end=5)[0] == 400
    response = client.client.get("/data/plugin/profscope/trace/download", query_string=q)
    assert response.status_code == 200
    assert response.get_data() == source.read_bytes()
    assert gzip.decompress(response.get_data()).lstrip()[:1] == b"{"
    assert client.client.get("/data/plugin/profscope/trace/download",
                             query_string={"run": "../etc", "worker": "x"}).status_code == 404


def test_index_is_kept_beside_the_cached_model(tmp_path: Path, monkeypatch) -> None:
    from profscope.tb_plugin.store.cache import ModelCache
    from profscope.tb_plugin.model.array_file import read_model
    from profscope.tb_plugin.model import trace_index as module

    source = copy_trace(real_trace(RESNET), tmp_path / "run")
    cache = ModelCache(str(tmp_path / "cache"))
    model = cache.load_or_build(str(source))
    first = module.trace_index(model)
    sidecar = Path(model.cache_path + "." + module.INDEX_SUFFIX)
    assert sidecar.exists()

    def no_build(model):
        raise AssertionError("rebuilt although stored")

    monkeypatch.setattr(module, "build_index", no_build)
    again = module.trace_index(read_model(model.cache_path))
    assert [lvl.resolution for lvl in again.levels] == [lvl.resolution for lvl in first.levels]
    for a, b in zip(first.levels, again.levels):
        assert np.array_equal(a.start, b.start) and np.array_equal(a.count, b.count)


def test_copies_and_collective_calls_say_their_bandwidth() -> None:
    """A selected copy shows its bytes over its duration, which Kineto also writes on each copy ("memory bandwidth
    (GB/s)"); a selected NCCL kernel its message (record_param_comms: elements x dtype size), group size, algorithm
    and bus bandwidth over its own duration, by hand; any other slice nothing."""
    import json

    path = real_trace("hta/nccl_parser_config/nccl_data.json.gz")
    raw = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    model = load_trace(str(path))
    s = model.slices
    by_start = {(model.strings[int(s.name[i])], round(int(s.start[i]) / 1e3, 1)): int(s.event_id[i])
                for i in range(len(s.name))}

    def detail_of(event: dict) -> dict:
        return trace.event(model, by_start[(event["name"], round(event["ts"], 1))])

    copies = [e for e in raw if e.get("cat") == "gpu_memcpy" and e["dur"] > 0]
    assert len(copies) > 10
    for event in copies:
        rates = detail_of(event)["bandwidth"]
        assert rates["kind"] == "copy" and rates["label"] == "Device to device" and rates["bytes"] == event["args"]["bytes"]
        assert rates["bandwidth"] == pytest.approx(event["args"]["memory bandwidth (GB/s)"] * 1e9, rel=1e-4)
    kernels = [e for e in raw if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel_AllReduce")]
    assert kernels
    for event in kernels:
        args = event["args"]
        rates = detail_of(event)["bandwidth"]
        size = args["In msg nelems"] * 4  # dtype Float
        n = args["Group size"]
        assert (rates["kind"], rates["label"], rates["bytes"], rates["group_size"]) == ("collective", "allreduce", size, n)
        assert rates["bandwidth"] == pytest.approx(size / (event["dur"] / 1e6), rel=1e-4)
        assert rates["bus_bandwidth"] == pytest.approx(rates["bandwidth"] * 2 * (n - 1) / n, rel=1e-12)
    other = next(e for e in raw if e.get("cat") == "kernel" and not e["name"].startswith("nccl"))
    assert detail_of(other)["bandwidth"] is None


def test_a_counter_in_a_range_by_hand() -> None:
    """counter_stats: a step function (1 from 10 ns, 5 from 20, 2 from 40) over ranges, by hand."""
    from profscope.tb_plugin.views.trace.range_summary import counter_stats

    ts, values = np.array([10, 20, 40], dtype=np.int64), np.array([1.0, 5.0, 2.0])
    # [15, 50): 1 for 5 ns, 5 for 20 ns, 2 for 10 ns.
    assert counter_stats(ts, values, 15, 50) == {"first": 1.0, "last": 2.0, "min": 1.0, "max": 5.0,
                                                 "mean": pytest.approx(125 / 35), "known_from": 0.015}
    # Known only from its first sample: the mean over the part where it has a value.
    assert counter_stats(ts, values, 0, 15) == {"first": 1.0, "last": 1.0, "min": 1.0, "max": 1.0, "mean": 1.0,
                                                "known_from": 0.01}
    # After the last sample the last value holds; before the first there is none.
    assert counter_stats(ts, values, 50, 60)["mean"] == 2.0
    assert counter_stats(ts, values, 0, 5) is None
