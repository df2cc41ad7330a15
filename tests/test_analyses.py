"""The Analyses page's analyses on small hand-made traces, with numbers worked out by hand: idle time per stream,
kernel launches (a CUDA graph launch among them), queue length, frequent kernel sequences and annotations."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.analyses import (
    annotations, idle as idle_time, sequences as kernel_sequences, launches, queues as queue_length,
)
from profscope.tb_plugin.views import answers
from profscope.tb_plugin.views.trace import queries as trace

from conftest import copy_trace
from handmade import trace as make_trace, write, x

GPU = {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}
HOST = {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}


def op(name: str, ts: float, dur: float, ext: int) -> dict[str, Any]:
    return x(name, ts, dur, args={"External id": ext})


def launch(ts: float, dur: float, corr: int, ext: int, name: str = "cudaLaunchKernel") -> dict[str, Any]:
    return x(name, ts, dur, cat="cuda_runtime", args={"correlation": corr, "External id": ext})


def kernel(name: str, ts: float, dur: float, corr: int, ext: int, stream: int = 7) -> dict[str, Any]:
    return x(name, ts, dur, cat="kernel", pid=0, tid=stream,
             args={"correlation": corr, "External id": ext, "device": 0, "stream": stream})


def one_stream_trace() -> dict[str, Any]:
    """One step [0, 1000] µs; five launches on stream 7, the last a CUDA graph of two kernels.

    Stream 7 runs K1 [50, 150], K2 [220, 260], K3 [270, 300], K4 [400, 450], K5 [600, 620], K6 [630, 640].
    Gaps: 150→220 (L2 began at 200, after K1 ended: host wait 70), 260→270 (L3 began at 252, before: 10 µs, kernel
    wait), 300→400 (L4 began at 258: 100 µs, other), 450→600 (the graph launch began at 500: host wait 150),
    620→630 (kernel wait 10). Before K1 and after K6: 50 + 360 = 410 µs without work.
    """
    events = [
        HOST, GPU,
        x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("train/fwd", 10, 390, cat="user_annotation"),
        op("aten::a", 20, 100, 2), launch(30, 10, 1, 2),
        op("aten::b", 195, 60, 3), launch(200, 50, 2, 3),
        op("aten::c", 251, 15, 4), launch(252, 5, 3, 4), launch(258, 5, 4, 4),
        x("train/graph", 480, 100, cat="user_annotation"),
        op("CUDAGraph::replay", 490, 80, 5), launch(500, 60, 5, 5, name="cudaGraphLaunch"),
        x("train/fwd", 50, 400, cat="gpu_user_annotation", pid=0, tid=7, args={"device": 0, "stream": 7}),
        kernel("K1", 50, 100, 1, 2), kernel("K2", 220, 40, 2, 3), kernel("K3", 270, 30, 3, 4),
        kernel("K4", 400, 50, 4, 4), kernel("K5", 600, 20, 5, 5), kernel("K6", 630, 10, 5, 5),
    ]
    return make_trace(events, deviceProperties=[{"id": 0, "name": "Test GPU"}])


@pytest.fixture
def model(tmp_path: Path) -> Any:
    return load_trace(str(write(tmp_path / "w.pt.trace.json", one_stream_trace())))


def test_idle_time_split_by_cause(model: Any) -> None:
    answer = idle_time.idle_time(model)
    assert answer["available"] and answer["step_time"] == 1000
    [stream] = answer["streams"]
    assert stream["stream"] == "GPU 0 · stream 7" and stream["track"].startswith("s")
    assert (stream["busy"], stream["idle"]) == (250, 750)
    assert (stream["host_wait"], stream["kernel_wait"], stream["other"], stream["no_work"]) == (220, 20, 100, 410)
    assert stream["idle_share"] == pytest.approx(0.75) and stream["gaps"] == 5
    assert [(g["start"], g["dur"], g["category"], g["before"], g["after"]) for g in answer["longest_gaps"]] == [
        (450, 150, "host_wait", "K4", "K5"), (300, 100, "other", "K3", "K4"), (150, 70, "host_wait", "K1", "K2"),
        (260, 10, "kernel_wait", "K2", "K3"), (620, 10, "kernel_wait", "K5", "K6")]
    assert stream["host_wait_share"] == pytest.approx(220 / 750)
    # A lower threshold turns the short gaps into "other".
    lower = idle_time.idle_time(model, kernel_wait_us=5)["streams"][0]
    assert (lower["host_wait"], lower["kernel_wait"], lower["other"]) == (220, 0, 120)


def test_idle_time_per_stream_busiest_first() -> None:
    """A real NCCL rank (HTA's ws128 trace, rank 0): five streams of one GPU, the busiest first, each with its own
    host-wait share. Over all streams together the share is another figure (63.6% against the busiest stream's
    84.5%): nearly idle side streams must not speak for the busy one."""
    import real_traces

    answer = idle_time.idle_time(load_trace(str(real_traces.path("hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz"))))
    streams = answer["streams"]
    assert len(streams) == 5
    assert [s["busy"] for s in streams] == sorted((s["busy"] for s in streams), reverse=True)
    busiest = streams[0]
    assert busiest["stream"] == "GPU 0 · stream 84" and busiest["busy"] == 290059
    for s in streams:
        assert s["host_wait_share"] == pytest.approx(s["host_wait"] / s["idle"])
        assert s["host_wait"] + s["kernel_wait"] + s["other"] + s["no_work"] == pytest.approx(s["idle"])
    assert busiest["host_wait_share"] == pytest.approx(794852 / 940181)
    overall = sum(s["host_wait"] for s in streams) / sum(s["idle"] for s in streams)
    assert round(overall, 3) == 0.636 and round(busiest["host_wait_share"], 3) == 0.845


def test_launches_count_a_graph_launch_once(model: Any) -> None:
    answer = launches.launches(model)
    assert answer["available"]
    assert (answer["launches"], answer["device_activities"], answer["graph_launches"]) == (5, 6, 1)
    table = launches.launch_table(model)
    assert (table["cpu"] // 1000).tolist() == [10, 50, 5, 5, 60]
    assert (table["delay"] // 1000).tolist() == [10, 0, 13, 137, 40]  # L2 returned after K2 began: 0
    assert (table["device"] // 1000).tolist() == [100, 40, 30, 50, 30]
    assert (answer["short"], answer["short_share"], answer["short_cpu"], answer["short_device"]) == (2, 0.4, 110, 70)
    assert (answer["runtime_outliers"], answer["delay_outliers"]) == (1, 1)
    assert answer["cpu"]["total"] == 130 and answer["cpu"]["max"] == 60 and answer["delay"]["median"] == 13
    # Histogram bins [0,1) [1,2) [2,5) [5,10) [10,20) [20,50) [50,100) [100,200) ...
    assert answer["histograms"]["cpu"][:8] == [0, 0, 0, 2, 1, 0, 2, 0]
    assert answer["histograms"]["delay"][:8] == [1, 0, 0, 0, 2, 1, 0, 1]
    by_call = {row["name"]: row for row in answer["by_call"]}
    assert by_call["cudaLaunchKernel"]["calls"] == 4 and by_call["cudaLaunchKernel"]["cpu_total"] == 70
    assert by_call["cudaGraphLaunch"]["activities"] == 2 and by_call["cudaGraphLaunch"]["device_total"] == 30
    assert {row["name"]: row["calls"] for row in answer["short_kernels"]} == {"K2": 1, "K5": 1}
    assert [row["name"] for row in answer["longest_calls"][:2]] == ["cudaGraphLaunch", "cudaLaunchKernel"]
    assert answer["longest_delays"][0]["kernel"] == "K4" and answer["longest_delays"][0]["delay"] == 137


def test_queue_length_series_and_summary(model: Any) -> None:
    [track] = [t for t in answers.tracks(model)["tracks"] if t["id"].startswith(queue_length.TRACK_PREFIX)]
    assert track["name"] == "GPU 0 · stream 7 queue" and track["kind"] == "counter"
    times, values = queue_length.queue_series(model, track["id"])["queue"]
    assert list(zip((times // 1000).tolist(), values.tolist())) == [
        (30, 1), (50, 0), (200, 1), (220, 0), (252, 1), (258, 2), (270, 1), (400, 0), (500, 2), (600, 1), (630, 0)]
    [stream] = queue_length.queue_length(model)["streams"]
    assert (stream["max"], stream["mean"], stream["empty"], stream["empty_share"]) == (2, 0.43, 682, 0.682)
    assert stream["counter"] == track["id"]
    served = trace.counters(model, 0, 1000, 1000, [track["id"]])["tracks"][0]["series"]["queue"]
    assert served  # the trace viewer's counters route serves it like any counter track


def test_annotations_host_and_device(model: Any) -> None:
    answer = annotations.annotations(model)
    assert answer["available"] and answer["has_device_copies"]
    rows = {row["name"]: row for row in answer["rows"]}
    assert set(rows) == {"train/fwd", "train/graph"}  # the step is no annotation
    fwd, graph = rows["train/fwd"], rows["train/graph"]
    assert (fwd["calls"], fwd["host_total"], fwd["device_calls"], fwd["device_total"], fwd["device_work"]) == (
        1, 390, 1, 400, 220)
    assert (graph["calls"], graph["host_total"], graph["device_calls"], graph["device_total"], graph["device_work"]) == (
        1, 100, 0, None, 30)


def test_annotation_device_work_counts_launches_of_every_thread(tmp_path: Path) -> None:
    """``## backward ##`` on the main thread [100, 500) while autograd's thread (tid 2) launches the backward kernels:
    the work launched inside the range's time on any thread of the process is its device work."""
    events = [
        HOST, GPU, x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("## forward ##", 10, 80, cat="user_annotation"),
        op("aten::mm", 20, 30, 1), launch(25, 5, 1, 1),
        x("## backward ##", 100, 400, cat="user_annotation"),
        op("aten::mm_backward", 150, 100, 2) | {"tid": 2}, launch(160, 5, 2, 2) | {"tid": 2},
        op("aten::add_", 300, 50, 3) | {"tid": 2}, launch(310, 5, 3, 3) | {"tid": 2},
        launch(600, 5, 4, 4) | {"tid": 2},  # after the range closed: not its work
        kernel("mm", 40, 60, 1, 1), kernel("mm_bwd", 170, 120, 2, 2), kernel("add", 320, 30, 3, 3),
        kernel("late", 610, 10, 4, 4),
        # Kineto's device copy of the range spans the work of the main thread's own launches only: none here.
    ]
    model = load_trace(str(write(tmp_path / "w.pt.trace.json", make_trace(events))))
    answer = annotations.annotations(model)
    rows = {row["name"]: row for row in answer["rows"]}
    assert rows["## backward ##"]["device_work"] == 120 + 30  # before: 0 (no operator of its own thread launched)
    assert rows["## forward ##"]["device_work"] == 60
    assert answer["device_work_rule"] == annotations.DEVICE_WORK_RULE


def test_phase_annotations_cover_the_device_work_of_a_real_ddp_step() -> None:
    """HTA's ns-resolution DDP rank: the backward pass's kernels are launched by autograd's thread, not under the
    main thread's ``## backward ##``. By hand from the JSON (work whose runtime call, matched by correlation, starts
    inside a range of the same process): forward 150,438.66 µs, backward 316,482.98 µs, optimizer 5,532.80 µs over
    the five steps, together all the work launched in them (472,454.44 µs). Before: backward 115 µs."""
    from conftest import real_trace

    model = load_trace(str(real_trace("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")))
    rows = {row["name"]: row for row in annotations.annotations(model)["rows"]}
    work = {name: rows[f"## {name} ##"]["device_work"] for name in ("forward", "backward", "optimizer")}
    assert work == pytest.approx({"forward": 150438.66, "backward": 316482.979, "optimizer": 5532.802}, abs=1e-3)
    assert sum(work.values()) == pytest.approx(472454.441, abs=1e-3)


def sequences_trace() -> dict[str, Any]:
    """Three "fused" ops launching X, Y, Z; one launching X, Z, Y; two "other" ops launching X, Y, Z; "short" once."""
    events: list[dict[str, Any]] = [HOST, GPU, x("ProfilerStep#1", 0, 100000, cat="user_annotation")]
    t, corr = 100, 0
    plan = [("fused", "XYZ")] * 3 + [("fused", "XZY")] + [("other", "XYZ")] * 2 + [("fused", "XY")]
    for ext, (name, kernels) in enumerate(plan, start=1):
        events.append(op(name, t, 50, ext))
        for i, k in enumerate(kernels):
            corr += 1
            events.append(launch(t + 1 + 10 * i, 5, corr, ext))
            events.append(kernel(k, t + 1000 + 20 * i, 10 + i, corr, ext))
        t += 2000
    return make_trace(events)


def test_frequent_kernel_sequences(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "s.pt.trace.json", sequences_trace())))
    answer = kernel_sequences.kernel_sequences(model)
    assert answer["available"] and (answer["roots"], answer["distinct"], answer["repeated"]) == (6, 3, 2)
    assert [(s["operator"], s["kernels"], s["count"], s["device_total"], s["cpu_total"]) for s in answer["sequences"]] == [
        ("fused", ["X", "Y", "Z"], 3, 3 * 33, 150), ("other", ["X", "Y", "Z"], 2, 2 * 33, 100)]
    assert answer["sequences"][0]["device_share"] == pytest.approx(99 / (33 * 6 + 21))
    only_other = kernel_sequences.kernel_sequences(model, operator="oth")
    assert [s["operator"] for s in only_other["sequences"]] == ["other"]
    with_pairs = kernel_sequences.kernel_sequences(model, min_length=2)
    assert with_pairs["roots"] == 7 and with_pairs["repeated"] == 2


def test_cpu_only_span_says_why(tmp_path: Path) -> None:
    doc = make_trace([HOST, x("ProfilerStep#1", 0, 100, cat="user_annotation"), op("aten::mm", 10, 20, 1)])
    model = load_trace(str(write(tmp_path / "c.pt.trace.json", doc)))
    for answer in (idle_time.idle_time(model), launches.launches(model), queue_length.queue_length(model),
                   kernel_sequences.kernel_sequences(model), annotations.annotations(model)):
        assert answer["available"] is False and answer["reason"]


def test_routes_answer_json_and_csv(tmp_path: Path, make_client: Any) -> None:
    written = write(tmp_path / "made" / "worker0.1.pt.trace.json", one_stream_trace())
    copy_trace(written, tmp_path / "logs" / "run")  # settled: discovery takes it at once
    client = make_client(tmp_path / "logs")
    client.settle()
    query = {"run": "run", "worker": "worker0"}
    status, idle = client.get("analyses/idle", **query)
    assert status == 200 and idle["streams"][0]["host_wait"] == 220, idle
    status, body = client.get("analyses/idle", kernel_wait_us=-1, **query)
    assert status == 400
    status, text = client.get("analyses/launches", format="csv", table="longest_delays", **query)
    rows = list(csv.reader(io.StringIO(text.decode())))
    assert status == 200 and rows[0][:5] == ["Runtime call", "First device work", "Start (us)", "CPU duration (us)",
                                             "Launch delay (us)"]
    assert len(rows) == 6
    status, text = client.get("analyses/annotations", format="csv", sort="host_total:asc", **query)
    assert [r[0] for r in csv.reader(io.StringIO(text.decode()))][1:] == ["train/graph", "train/fwd"]
    for route in ("analyses/queues", "analyses/sequences"):
        status, body = client.get(route, **query)
        assert status == 200 and body["available"] in (True, False)
    status, body = client.get("analyses/sequences", min_length=0, **query)
    assert status == 400
