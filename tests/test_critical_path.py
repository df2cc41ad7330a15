"""Critical path of a step (views/trace/critical_path.py): exact paths on hand-made traces, the step's span on every real
trace, and agreement with HTA's CriticalPathAnalysis (HTA 0.5.0) on a real GPU trace."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.trace.critical_path import KINDS, StepNotFound, critical_path
from profscope.tb_plugin.model.steps import find_steps

from profscope.tb_plugin.store.discovery import scan_logdir

from conftest import REAL_TRACES, real_trace
from handmade import trace, write, x

SOURCES = sorted(scan_logdir(str(REAL_TRACES)), key=lambda s: (s.run, s.worker, s.span))
GPU = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]


def launch(name: str, ts: float, dur: float, correlation: int, tid: int = 1) -> dict[str, Any]:
    return x(name, ts, dur, cat="cuda_runtime", tid=tid, args={"correlation": correlation})


def kernel(name: str, ts: float, dur: float, correlation: int, stream: int = 7, cat: str = "kernel") -> dict[str, Any]:
    return x(name, ts, dur, cat=cat, pid=0, tid=stream,
             args={"correlation": correlation, "device": 0, "stream": stream})


def step(events: list[dict[str, Any]], tmp_path: Path, begin: float = 0, dur: float = 100) -> Any:
    doc = trace(GPU + [x("ProfilerStep#1", begin, dur, cat="user_annotation")] + events)
    return load_trace(str(write(tmp_path / "t.json", doc)))


def breakdown(answer: dict[str, Any]) -> dict[str, float]:
    return {row["kind"]: row["time"] for row in answer["breakdown"] if row["time"]}


def entries(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The path's columns as one dict per entry, names looked up."""
    path = answer["path"]
    columns = [key for key in path if key != "names"]
    rows = [dict(zip(columns, values)) for values in zip(*(path[key] for key in columns))]
    for row in rows:
        row["name"] = path["names"][row["name"]] if row["name"] is not None else None
    return rows


def walk(answer: dict[str, Any]) -> list[tuple[Any, str, str, float]]:
    """The path as (slice name, kind, edge, time)."""
    return [(e["name"], e["kind"], e["edge"], e["time"]) for e in entries(answer)]


def test_nesting_on_one_thread(tmp_path: Path) -> None:
    model = step([x("A", 10, 30), x("B", 20, 10), x("C", 50, 40)], tmp_path)
    answer = critical_path(model)
    assert answer["length"] == 100.0 and answer["span"] == {"start": 0.0, "end": 100.0}
    assert walk(answer) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("A", "cpu_op", "nesting", 10.0),
        ("B", "cpu_op", "duration", 10.0), ("A", "cpu_op", "return", 10.0), ("ProfilerStep#1", "cpu_op", "order", 10.0),
        ("C", "cpu_op", "duration", 40.0), ("ProfilerStep#1", "cpu_op", "return", 10.0)]
    assert breakdown(answer) == {"cpu_op": 100.0}
    assert sorted(e["share"] for e in answer["breakdown"])[-1] == 1.0


def test_launch_then_stream_order(tmp_path: Path) -> None:
    # k2 is launched at 30 but waits on its stream for k1 (ends at 60): the path runs k1 then k2.
    model = step([launch("cudaLaunchKernel", 10, 5, 1), launch("cudaLaunchKernel", 30, 5, 2),
                  kernel("k1", 20, 40, 1), kernel("k2", 62, 88, 2)], tmp_path)
    answer = critical_path(model)
    assert answer["length"] == 150.0 == answer["step"]["end"] - answer["step"]["start"]
    assert walk(answer) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "launch", 10.0),
        ("k1", "kernel", "duration", 40.0), ("k2", "idle", "stream", 2.0), ("k2", "kernel", "duration", 88.0)]
    assert breakdown(answer) == {"cpu_op": 10.0, "launch": 10.0, "kernel": 128.0, "idle": 2.0}


def test_launch_decides_when_the_stream_is_free(tmp_path: Path) -> None:
    # The stream is idle when k2 is launched: k2 waits for its launch, not for k1.
    model = step([launch("cudaLaunchKernel", 10, 5, 1), x("op", 40, 20), launch("cudaLaunchKernel", 45, 5, 2),
                  kernel("k1", 20, 10, 1), kernel("k2", 55, 95, 2, cat="gpu_memcpy")], tmp_path)
    assert walk(critical_path(model)) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "duration", 5.0),
        ("ProfilerStep#1", "cpu_op", "order", 25.0), ("op", "cpu_op", "nesting", 5.0),
        ("cudaLaunchKernel", "launch", "launch", 10.0), ("k2", "copy", "duration", 95.0)]


def test_sync_waits_for_a_kernel(tmp_path: Path) -> None:
    model = step([launch("cudaLaunchKernel", 10, 5, 1), kernel("k", 20, 130, 1),
                  x("cudaDeviceSynchronize", 20, 140, cat="cuda_runtime")], tmp_path, dur=200)
    answer = critical_path(model)
    assert answer["length"] == 200.0
    assert walk(answer) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "launch", 10.0),
        ("k", "kernel", "duration", 130.0), ("cudaDeviceSynchronize", "sync", "sync", 10.0),
        ("ProfilerStep#1", "cpu_op", "return", 40.0)]
    assert breakdown(answer) == {"cpu_op": 50.0, "launch": 10.0, "kernel": 130.0, "sync": 10.0}


def test_sync_waits_only_for_work_launched_before_it(tmp_path: Path) -> None:
    # k2 (another thread's) is launched after the sync began and ends after k1: the sync waited for k1 all the same.
    model = step([launch("cudaLaunchKernel", 10, 5, 1), kernel("k1", 20, 30, 1),
                  x("cudaStreamSynchronize", 30, 25, cat="cuda_runtime"),
                  launch("cudaLaunchKernel", 31, 2, 2, tid=2), kernel("k2", 40, 12, 2, stream=8)], tmp_path)
    answer = critical_path(model)
    assert walk(answer) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "launch", 10.0),
        ("k1", "kernel", "duration", 30.0), ("cudaStreamSynchronize", "sync", "sync", 5.0),
        ("ProfilerStep#1", "cpu_op", "return", 45.0)]


def test_stream_sync_waits_for_its_own_stream(tmp_path: Path) -> None:
    # The device's Stream Sync record says the sync waited for stream 8: k8 (ends 40), not k7 (ends 44, stream 7).
    record = x("Stream Sync", 30, 15, cat="cuda_sync", pid=0, tid=8, args={"correlation": 3, "device": 0, "stream": 8})
    events = [launch("cudaLaunchKernel", 10, 5, 1), launch("cudaLaunchKernel", 16, 4, 2), kernel("k7", 20, 24, 1),
              kernel("k8", 22, 18, 2, stream=8), launch("cudaStreamSynchronize", 30, 15, 3)]
    with_record = critical_path(step(events + [record], tmp_path))
    assert walk(with_record)[3:6] == [("cudaLaunchKernel", "launch", "launch", 6.0), ("k8", "kernel", "duration", 18.0),
                                      ("Stream Sync", "sync", "sync", 5.0)]
    # Without the record the sync is taken to wait for the device's latest-ending work launched before it.
    without = critical_path(step(events, tmp_path / "plain"))
    assert walk(without)[1:4] == [("cudaLaunchKernel", "launch", "launch", 10.0), ("k7", "kernel", "duration", 24.0),
                                  ("cudaStreamSynchronize", "sync", "sync", 1.0)]


def test_sync_ignores_work_still_running_when_it_returns(tmp_path: Path) -> None:
    # k_long (launched first) runs past the sync's end: it cannot be what the sync waited for; k_short can.
    model = step([launch("cudaLaunchKernel", 10, 5, 1), launch("cudaLaunchKernel", 16, 4, 2),
                  kernel("k_long", 20, 200, 1, stream=7), kernel("k_short", 21, 20, 2, stream=8),
                  x("cudaStreamSynchronize", 30, 15, cat="cuda_runtime")], tmp_path, dur=300)
    assert walk(critical_path(model)) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "duration", 5.0),
        ("ProfilerStep#1", "cpu_op", "order", 1.0), ("cudaLaunchKernel", "launch", "launch", 5.0),
        ("k_short", "kernel", "duration", 20.0), ("cudaStreamSynchronize", "sync", "sync", 4.0),
        ("ProfilerStep#1", "cpu_op", "return", 255.0)]


def test_stream_wait_event_across_streams(tmp_path: Path) -> None:
    # kB on stream 8 waits (cudaStreamWaitEvent) for kA, recorded on stream 7; its launch at 25 did not release it.
    model = step([launch("cudaLaunchKernel", 10, 5, 1), x("cudaEventRecord", 16, 2, cat="cuda_runtime"),
                  x("cudaStreamWaitEvent", 20, 2, cat="cuda_runtime"), launch("cudaLaunchKernel", 25, 5, 2),
                  kernel("kA", 20, 80, 1, stream=7), kernel("kB", 101, 79, 2, stream=8)], tmp_path, dur=120)
    answer = critical_path(model)
    assert answer["length"] == 180.0
    assert walk(answer) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("cudaLaunchKernel", "launch", "launch", 10.0),
        ("kA", "kernel", "duration", 80.0), ("kB", "sync", "wait_event", 1.0), ("kB", "kernel", "duration", 79.0)]
    assert breakdown(answer) == {"cpu_op": 10.0, "launch": 10.0, "kernel": 159.0, "sync": 1.0}


def test_work_on_another_thread_is_released_and_joined_by_the_step_thread(tmp_path: Path) -> None:
    # "backward" on the step's thread hands work to thread 2 and returns after it: the path runs through "bwd".
    model = step([x("fwd", 10, 20), x("backward", 40, 15), x("bwd", 42, 10, tid=2)], tmp_path)
    assert walk(critical_path(model)) == [
        ("ProfilerStep#1", "cpu_op", "nesting", 10.0), ("fwd", "cpu_op", "duration", 20.0),
        ("ProfilerStep#1", "cpu_op", "order", 10.0), ("backward", "cpu_op", "cross_thread", 2.0),
        ("bwd", "cpu_op", "duration", 10.0), ("backward", "cpu_op", "join", 3.0),
        ("ProfilerStep#1", "cpu_op", "return", 45.0)]


def test_ids_and_steps(tmp_path: Path) -> None:
    doc = trace(GPU + [x("ProfilerStep#1", 0, 50, cat="user_annotation"), x("a", 10, 10),
                       x("ProfilerStep#2", 50, 50, cat="user_annotation"), x("b", 60, 30)])
    model = load_trace(str(write(tmp_path / "t.json", doc)))
    second = critical_path(model, 1)
    assert second["step"] == {"index": 1, "name": "ProfilerStep#2", "start": 50.0, "end": 100.0}
    names = {e["id"]: e["name"] for e in entries(second)}
    assert sorted(names[i] for i in second["ids"]) == ["ProfilerStep#2", "b"]
    with pytest.raises(StepNotFound):
        critical_path(model, 2)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: f"{s.run}/{s.worker}/{s.span}")
def test_length_is_the_step_span_on_real_traces(source: Any) -> None:
    model = load_trace(source.path)
    steps = find_steps(model)
    for index in {0, len(steps) - 1}:
        answer = critical_path(model, index)
        # The path runs from the step's first CPU event to its last device work (or host end): the steps' span.
        assert round(answer["length"] * 1000) == int(steps.end[index] - steps.host_start[index])
        assert sum(row["time"] for row in answer["breakdown"]) == pytest.approx(answer["length"], abs=1e-6)
        assert {row["kind"] for row in answer["breakdown"]} == set(KINDS)
        times = answer["path"]["time"]
        assert min(times, default=1) > 0 and sum(times) == pytest.approx(answer["length"], abs=1e-3)
        assert len({len(column) for key, column in answer["path"].items() if key != "names"}) == 1


HTA_TRACE = "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
NCCL_TRACE = "hta/nccl_parser_config/nccl_data.json.gz"


@pytest.mark.parametrize("relative, device_bound", [(HTA_TRACE, True), (NCCL_TRACE, False)])
def test_agrees_with_hta_on_real_gpu_traces(relative: str, device_bound: bool, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """HTA's critical path of the trace's first step against ours. Where the two models agree (the device: kernels,
    copies, the gaps between kernels of a stream, whether a kernel waited for its launch or its stream) the figures
    match within 1%: on the first trace the step is bound by its kernels, on the second by the host (both paths
    spend no time on the device). Where they differ, the difference is exactly what the models say: HTA gives its
    dependency edges zero weight and runs from its first operator to its last one, not over the step's own range,
    so its path is shorter than the step by the time on those edges, the lead-in before its first operator and the
    tail after its last node."""
    from hta.analyzers.critical_path_analysis import CriticalPathAnalysis
    from hta.trace_analysis import TraceAnalysis

    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    logging.getLogger("hta").setLevel(logging.ERROR)
    folder = tmp_path / "rank0"
    folder.mkdir()
    shutil.copy(real_trace(relative), folder)
    analysis = TraceAnalysis(trace_dir=str(folder), include_last_profiler_step=True)
    rank = next(iter(analysis.t.traces))
    graph, ok = CriticalPathAnalysis.critical_path_analysis(analysis.t, rank, "ProfilerStep", 0)
    assert ok
    edges = graph.get_critical_path_breakdown()
    hta = edges.groupby("bound_by").duration.sum().to_dict()
    nodes = [graph.node_list[i] for i in graph.critical_path_nodes]
    df = analysis.t.get_trace(rank)
    step_ids = [i for name, i in analysis.t.symbol_table.get_sym_id_map().items() if name.startswith("ProfilerStep#")]
    hta_step_start = float(df[df["name"].isin(step_ids)]["ts"].min())
    # Time HTA's path spends on its zero-weight edges (between top-level operators, sync dependencies).
    weights = {(e.begin, e.end): e.weight for e in graph.critical_path_edges_set}
    zero_weight = sum(b.ts - a.ts for a, b in zip(nodes, nodes[1:]) if weights[(a.idx, b.idx)] == 0)

    ours = critical_path(load_trace(str(real_trace(relative))), 0)
    by_kind = {row["kind"]: row["time"] for row in ours["breakdown"]}
    stream_idle = sum(e["time"] for e in entries(ours) if e["edge"] == "stream")
    hta_device = hta.get("gpu_compute_bound", 0) + hta.get("gpu_communication_bound", 0)
    # The device part of the path is the same.
    assert by_kind["kernel"] + by_kind["copy"] == pytest.approx(hta_device, rel=0.01, abs=0.001 * ours["length"])
    assert stream_idle == pytest.approx(hta.get("gpu_kernel_kernel_overhead", 0), rel=0.01, abs=0.001 * ours["length"])
    # Not a trivial check: one step is bound by its kernels, the other by the host.
    assert (by_kind["kernel"] / ours["length"] > 0.9) if device_bound else (hta_device == 0 and hta.get("cpu_bound", 0) > 0)
    # The rest differs by the model: HTA's path is shorter by its zero-weight time, its lead-in and its tail.
    hta_length = float(edges.duration.sum())
    lead_in = nodes[0].ts - hta_step_start
    tail = ours["length"] - (nodes[-1].ts - hta_step_start)
    assert lead_in > 100 and zero_weight > 100 and tail >= -1e-3
    assert hta_length + zero_weight + lead_in + tail == pytest.approx(ours["length"], rel=1e-6)
    host = by_kind["cpu_op"] + by_kind["launch"] + by_kind["sync"] + by_kind["idle"] - stream_idle
    assert host == pytest.approx(hta.get("cpu_bound", 0) + hta.get("gpu_kernel_launch_overhead", 0) + zero_weight
                                 + lead_in + tail, rel=0.01)


def test_route_answers_the_contract(tmp_path: Path, make_client: Any) -> None:
    from conftest import copy_trace
    from openapi_contract import check_schema

    logdir = tmp_path / "logdir"
    copy_trace(real_trace(HTA_TRACE), logdir / "gpu", "worker0.1.pt.trace.json.gz")
    client = make_client(logdir)
    client.settle()
    status, answer = client.get("critical_path", run="gpu", worker="worker0")
    assert status == 200
    check_schema(answer, "CriticalPath")
    # The route's answer is the view's (the parser pool precomputed it for the first step).
    assert answer == json_round_trip(critical_path(load_trace(str(real_trace(HTA_TRACE))), 0))
    status, second = client.get("critical_path", run="gpu", worker="worker0", step=1)
    assert status == 200 and second["step"]["index"] == 1 and second["step"]["name"] == answer["steps"][1]["name"]
    assert [s["start"] for s in answer["steps"]] == [s["step"]["start"] for s in (answer, second)] + [
        s["start"] for s in answer["steps"][2:]]
    assert client.get("critical_path", run="gpu", worker="worker0", step=99)[0] == 400
    assert client.get("critical_path", run="gpu", worker="worker0", step="x")[0] == 400
    assert client.get("critical_path", run="nope", worker="worker0")[0] == 404


def json_round_trip(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value))
