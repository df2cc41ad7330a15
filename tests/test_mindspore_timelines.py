"""MindSpore's device timelines (MindInsight-era profiler folders) and its memory record.

Real inputs from tests/data: ``mindspore/ascend_run_2_profiler`` (an Ascend profiler folder:
``ascend_timeline_display_1.json`` and MindSpore's own statistics of the same run beside it) and
``mindspore/gpu_timeline``; ``mindspore_cpu/*/`` span folders with ``FRAMEWORK/cpu_ms_memory_record_0.txt``.
Reference numbers are parsed from those files here, never copied into the test. A timeline of the
MindSpore 1.6+ writer (thread-name metadata, Steps, Scope Name, communication and overlap rows) is
made by hand below, as that writer lays it out.
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin.store import discovery
from profscope.tb_plugin import layout
from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace
from profscope.tb_plugin.ingest.mindspore import normalise
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.ingest.chrome.decode import read_kineto
from profscope.tb_plugin.ingest.mindspore.memory_record import (
    MemoryRecordError,
    add_memory_record,
    read_memory_record,
    record_name_for,
)
from profscope.tb_plugin.ingest.mindspore.timeline import OPERATOR_THREAD
from profscope.tb_plugin.model.categories import operator_type
from profscope.tb_plugin.model.build import build_model
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views import kernels, memory, operators, overview
from profscope.tb_plugin.views.distributed import ranks as distributed

from conftest import assert_fails_alone, copy_trace, real_trace

TOLERANCE = 0.02
ASCEND = "mindspore/ascend_run_2_profiler"
GPU = "mindspore/gpu_timeline"
ASCEND_TIMELINE = "ascend_timeline_display_1.json"
GPU_TIMELINE = "gpu_timeline_display_0.json"
NS_PER_SYSCNT = 10  # the step trace's unit: Ascend's 100 MHz system counter


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [{k.strip(): v.strip() for k, v in row.items()} for row in csv.DictReader(f)]


def _close(ours: float, reference: float, what: str) -> None:
    assert abs(ours - reference) <= TOLERANCE * abs(reference), f"{what}: {ours} vs {reference}"


@pytest.fixture(scope="module")
def ascend_folder() -> Path:
    return real_trace(ASCEND)


@pytest.fixture(scope="module")
def ascend_model(ascend_folder: Path) -> Any:
    return load_trace(str(ascend_folder / ASCEND_TIMELINE))


# --- discovery -----------------------------------------------------------------------------------


def test_profiler_folders_are_runs_with_a_rank_per_device() -> None:
    root = real_trace("mindspore")
    found = sorted((s.run, s.worker, s.span, Path(s.path).name, s.layout, s.framework)
                   for s in discovery.scan_logdir(str(root)))
    # Only the timelines: the statistics, summaries, step trace and MindData files beside them are no spans.
    assert found == [
        ("ascend_run_2_profiler", "rank1", "ascend", ASCEND_TIMELINE, "mindspore", "mindspore"),
        ("gpu_timeline", "rank0", "gpu", GPU_TIMELINE, "mindspore", "mindspore"),
    ]


def test_timeline_file_names() -> None:
    parse = layout.parse_mindspore_timeline_name
    ascend = parse("ascend_timeline_display_7.json")
    assert ascend is not None and (ascend.worker, ascend.span, ascend.layout, ascend.framework) == (
        "rank7", "ascend", "mindspore", "mindspore")
    gpu = parse("gpu_timeline_display_03.json")
    assert gpu is not None and (gpu.worker, gpu.span) == ("rank3", "gpu")
    for other in ("ascend_timeline_summary_1.json", "gpu_timeline_display_x.json", "ascend_timeline_display_1.json.tmp",
                  "cpu_timeline_display_0.json", "aicore_intermediate_1_detail.csv", "xascend_timeline_display_1.json"):
        assert parse(other) is None, other


def test_two_devices_are_two_ranks_of_one_run(tmp_path: Path, ascend_folder: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    profiler = logdir / "job" / "profiler"
    for device in (0, 1):
        copy_trace(ascend_folder / ASCEND_TIMELINE, profiler, f"ascend_timeline_display_{device}.json")
    copy_trace(ascend_folder / "aicore_intermediate_1_type.csv", profiler)  # beside them, not a span
    table = sorted((s.run, s.worker, s.span) for s in discovery.scan_logdir(str(logdir)))
    assert table == [("job/profiler", "rank0", "ascend"), ("job/profiler", "rank1", "ascend")]

    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    (run,) = body["runs"]
    assert run["name"] == "job/profiler" and run["status"] == "ready" and run["framework"] == "mindspore"
    assert [(w["name"], w["spans"]) for w in run["workers"]] == [("rank0", ["ascend"]), ("rank1", ["ascend"])]
    status, view = client.get("distributed", run="job/profiler")
    assert status == 200 and view["available"], view
    assert [(r["worker"], r["rank"]) for r in view["ranks"]] == [("rank0", 0), ("rank1", 1)]
    # The same file twice: one step each, of equal time, nearly all of it on the AI Core.
    steps = {r["step_time"] for r in view["ranks"]}
    assert len(steps) == 1 and steps.pop() > 0
    assert all(r["compute"] > 0.9 * r["step_time"] for r in view["ranks"])


# --- detection -----------------------------------------------------------------------------------


def test_detection_by_content_and_by_name(tmp_path: Path, ascend_folder: Path) -> None:
    for path in (ascend_folder / ASCEND_TIMELINE, real_trace(GPU) / GPU_TIMELINE):
        head = path.read_bytes()[:HEAD_BYTES]
        assert detect_framework(head, "") == "mindspore", path
        assert detect_framework(head, path.name) == "mindspore", path
        renamed = tmp_path / f"renamed_{path.name}"
        renamed.write_bytes(path.read_bytes())
        assert load_trace(str(renamed)).framework == "mindspore"
    assert detect_framework(json.dumps(_middle_dialect_events()).encode()[:HEAD_BYTES], "") == "mindspore"
    # The name alone says it: a timeline of events without MindSpore's markers.
    plain = b'[{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": "5"}]'
    assert detect_framework(plain, "") == "generic"
    assert detect_framework(plain, "gpu_timeline_display_0.json") == "mindspore"


# --- the Ascend timeline against MindSpore's own statistics -------------------------------------


def test_tracks_and_kinds(ascend_model: Any, ascend_folder: Path) -> None:
    events = json.loads((ascend_folder / ASCEND_TIMELINE).read_text())
    model = ascend_model
    assert model.framework == "mindspore"
    kinds = SliceKinds(model)
    # Every event of the file is device work (AI Core on pid 1 = the device, AI CPU on pid 9000).
    assert int(kinds.kernel.sum()) == len(events)
    assert not (kinds.kernel & kinds.on_host).any()
    lanes = {(t.pid, t.tid): t for t in model.tracks if t.kind == "gpu"}
    assert set(lanes) == {(str(e["pid"]), str(e["tid"])) for e in events}
    assert {t.device for t in lanes.values()} == {1}
    assert lanes[("9000", "0")].thread_name == "AI CPU"
    # One zero-length operator record per task, on the device's operator thread: operators with no host time.
    records = kinds.operator
    assert int(records.sum()) == len(events)
    assert (model.slices.dur[records] == 0).all()
    assert {model.tracks[int(t)].thread_name for t in np.unique(model.slices.track[records])} == {OPERATOR_THREAD}
    assert overview.overview(model)["devices"][0]["name"] == "Ascend 1"


def _instances(model: Any) -> dict[str, dict[str, float]]:
    """Per device task name of the timeline (an operator instance, ``Conv2D-op11``): its runs and their
    mean, µs (read from the model's kernel slices)."""
    kinds = SliceKinds(model)
    s = model.slices
    found: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0, "total": 0.0})
    for name, dur in zip(s.name[kinds.kernel].tolist(), s.dur[kinds.kernel].tolist()):
        found[model.strings[name]]["calls"] += 1
        found[model.strings[name]]["total"] += dur / 1000.0
    for row in found.values():
        row["mean"] = row["total"] / row["calls"]
    return found


def test_kernels_agree_with_the_ai_core_detail_statistics(ascend_model: Any, ascend_folder: Path) -> None:
    """Per operator instance: MindSpore's execution_time is the mean of its runs (ms). The timeline names an
    instance by the last component of its full scope name (``Default/.../Cast-op91`` → ``Cast-op91``). The
    kernel table has one row per operator type: the instances of the type together."""
    instances = _instances(ascend_model)
    detail_rows = _read_csv(ascend_folder / "aicore_intermediate_1_detail.csv")
    detail = {r["full_op_name"].rsplit("/", 1)[-1]: r for r in detail_rows}
    assert len(detail) == len(detail_rows)  # the short names are unique
    aicpu = _read_csv(ascend_folder / "aicpu_intermediate_1.csv")
    assert set(instances) == set(detail) | {r["kernel_type"] for r in aicpu}
    for name, r in detail.items():
        _close(instances[name]["mean"], float(r["execution_time"]) * 1000.0, name)
    summary = json.loads((ascend_folder / "ascend_timeline_summary_1.json").read_text())
    assert sum(r["calls"] for r in instances.values()) == summary["op_exe_times"]
    rows = {r["name"]: r for r in kernels.kernels(ascend_model)["rows"]}
    assert set(rows) == {operator_type(name) for name in instances}
    assert len(rows) < len(instances)  # "MatMul-op19", "MatMul-op22"... are one row
    for op_type, row in rows.items():
        members = [i for name, i in instances.items() if operator_type(name) == op_type]
        assert row["calls"] == sum(m["calls"] for m in members), op_type
        assert row["total"] == pytest.approx(sum(m["total"] for m in members), abs=1e-6), op_type
    assert "-op" not in "".join(rows)


def test_operators_agree_with_the_ai_core_type_statistics(ascend_model: Any, ascend_folder: Path) -> None:
    """Per operator type. MindSpore's type table counts each operator instance once, at its mean time
    ("per step"); the kernel and operator views count every run. So: the type's instances and the sum of
    their means are MindSpore's frequency and time (within 2%), and the views' totals are the same time plus
    the extra runs of instances that ran more than once (exactly)."""
    kernel_rows = {r["name"]: r for r in kernels.kernels(ascend_model)["rows"]}
    op_rows = {r["name"]: r for r in operators.operators(ascend_model)["rows"]}
    by_type: dict[str, list[dict[str, float]]] = defaultdict(list)
    for name, instance in _instances(ascend_model).items():
        by_type[operator_type(name)].append(instance)
    type_table = _read_csv(ascend_folder / "aicore_intermediate_1_type.csv")
    assert type_table
    repeated = 0
    for ref in type_table:
        instances = by_type[ref["op_type"]]
        assert len(instances) == int(ref["execution_frequency"]), ref
        _close(sum(r["mean"] for r in instances), float(ref["execution_time"]) * 1000.0, ref["op_type"])
        op = op_rows[ref["op_type"]]
        assert op["calls"] == sum(r["calls"] for r in instances) == kernel_rows[ref["op_type"]]["calls"]
        assert op["host_self"] == op["host_total"] == 0.0
        extra_runs = sum((r["calls"] - 1) * r["mean"] for r in instances)
        assert op["device_total"] == pytest.approx(float(ref["execution_time"]) * 1000.0 + extra_runs, abs=0.01)
        assert op["device_self"] == pytest.approx(op["device_total"])
        assert kernel_rows[ref["op_type"]]["total"] == pytest.approx(op["device_total"], abs=1e-6)
        repeated += extra_runs > 0
    assert repeated == 2  # AssignAdd-op142 and TransData-op118 run twice: before the step and after it


def test_ai_cpu_tasks_agree_with_the_ai_cpu_statistics(ascend_model: Any, ascend_folder: Path) -> None:
    rows = {r["name"]: r for r in kernels.kernels(ascend_model)["rows"]}
    expected: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for r in _read_csv(ascend_folder / "aicpu_intermediate_1.csv"):
        expected[r["kernel_type"]][0] += 1
        expected[r["kernel_type"]][1] += int(r["run_end"]) - int(r["run_start"])  # µs
    for name, (calls, total) in expected.items():
        assert rows[name]["calls"] == calls, name
        _close(rows[name]["total"], total, name)


def test_the_step_is_the_one_of_the_step_trace(ascend_model: Any, ascend_folder: Path) -> None:
    """No Steps thread in this file: the step is derived as MindSpore's writer derives it, and matches
    the profiler's step trace (duration within 2%, same last operator)."""
    result = overview.overview(ascend_model)
    assert result["step_source"] == "ProfilerStep"
    trace = [r for r in _read_csv(ascend_folder / "step_trace_raw_1_detail_time.csv") if int(r["total"]) > 0]
    assert [s["name"] for s in result["steps"]] == [f"ProfilerStep#{i + 1}" for i in range(len(trace))]
    for step, ref in zip(result["steps"], trace):
        _close(step["dur"], int(ref["total"]) * NS_PER_SYSCNT / 1000.0, step["name"])
    points = json.loads((ascend_folder / "step_trace_point_info.json").read_text())
    s = ascend_model.slices
    step_end = int(ascend_model.steps.end[0])
    ends_there = {ascend_model.strings[int(n)] for n in s.name[SliceKinds(ascend_model).kernel & (s.end == step_end)]}
    assert ends_there == {points["bp_end"].rsplit("/", 1)[-1]}
    breakdown = result["steps"][0]["breakdown"]
    assert breakdown["kernel"] > 0.9 * result["steps"][0]["dur"] and breakdown["cpu_exec"] == 0.0


def test_gpu_timeline(tmp_path: Path) -> None:
    path = real_trace(GPU) / GPU_TIMELINE
    events = json.loads(path.read_text())
    model = load_trace(str(path))
    kinds = SliceKinds(model)
    (op_event,) = [e for e in events if e["tid"] == "Ops"]
    (kernel_event,) = [e for e in events if e["tid"] != "Ops"]
    op_rows = {r["name"]: r for r in operators.operators(model)["rows"]}
    _close(op_rows[op_event["name"]]["host_total"], op_event["dur"], "operator")
    (kernel_row,) = kernels.kernels(model)["rows"]
    assert kernel_row["name"] == kernel_event["name"]
    _close(kernel_row["total"], kernel_event["dur"], "kernel")
    lane = model.tracks[int(model.slices.track[kinds.kernel][0])]
    assert (lane.kind, lane.device, lane.process_name) == ("gpu", 0, "GPU 0")


def test_gpu_kernels_belong_to_the_operator_run_around_them(tmp_path: Path) -> None:
    events = [
        {"name": "Default/Conv2D-op1", "ph": "X", "tid": "Ops", "ts": 100.0, "dur": 50.0, "pid": 0},
        {"name": "Default/ReLU-op2", "ph": "X", "tid": "Ops", "ts": 200.0, "dur": 20.0, "pid": 0},
        {"name": "cudnn_conv_kernel", "ph": "X", "tid": "7", "ts": 110.0, "dur": 30.0, "pid": 0,
         "args": {"type": "cuLaunchKernel", "op_full_name": "Default/Conv2D-op1"}},
        {"name": "relu_kernel", "ph": "X", "tid": "7", "ts": 205.0, "dur": 5.0, "pid": 0,
         "args": {"type": "cuLaunchKernel", "op_full_name": "Default/ReLU-op2"}},
        {"name": "CUDA memcpy HtoD", "ph": "X", "tid": "7", "ts": 300.0, "dur": 4.0, "pid": 0,
         "args": {"type": "cuMemcpyHtoDAsync", "op_full_name": ""}},
    ]
    path = tmp_path / "gpu_timeline_display_0.json"
    path.write_text(json.dumps(events))
    model = load_trace(str(path))
    rows = {r["name"]: r for r in operators.operators(model)["rows"]}
    assert rows["Default/Conv2D-op1"]["device_total"] == pytest.approx(30.0)
    assert rows["Default/ReLU-op2"]["device_total"] == pytest.approx(5.0)
    pairs = {(r["op"], r["name"]) for r in kernels.kernels(model, group_by="op_and_name")["rows"]}
    assert pairs == {("Default/Conv2D-op1", "cudnn_conv_kernel"), ("Default/ReLU-op2", "relu_kernel")}
    assert int(SliceKinds(model).memcpy.sum()) == 1  # outside every operator run: no operator


# --- the MindSpore 1.6+ layout (thread names, Steps, Scope Name, communication, overlap) --------


def _middle_dialect_events() -> list[dict[str, Any]]:
    """A small Ascend timeline laid out as MindSpore 1.6-2.2 writes it (device 2, two steps)."""
    meta = [
        {"name": "thread_name", "pid": 2, "tid": 100000, "ts": 0, "ph": "M", "cat": "__metadata",
         "args": {"name": "Steps"}},
        {"name": "thread_name", "pid": 2, "tid": 100001, "ts": 0, "ph": "M", "cat": "__metadata",
         "args": {"name": "Scope Name"}},
        {"name": "thread_name", "pid": 2, "tid": 5, "ts": 0, "ph": "M", "cat": "__metadata",
         "args": {"name": "Stream #5"}},
    ]
    events: list[dict[str, Any]] = []
    for step, t0 in ((1, 1000.0), (2, 2000.0)):
        events += [
            {"name": str(step), "ph": "X", "tid": 100000, "ts": t0, "dur": 600.0, "pid": 2},
            {"name": "Default", "ph": "X", "tid": 100001, "ts": t0, "dur": 600.0, "pid": 2, "scope_level": 0},
            {"name": "Conv2D-op1", "ph": "X", "tid": 5, "ts": t0, "dur": 300.0, "pid": 2,
             "args": {"type": "Conv2D", "fullname": "Default/network/Conv2D-op1"}},
            {"name": "MatMul-op2", "ph": "X", "tid": 5, "ts": t0 + 310.0, "dur": 200.0, "pid": 2,
             "args": {"type": "MatMul", "fullname": "Default/network/MatMul-op2"}},
            {"name": "AllReduce-op3", "ph": "X", "tid": 6, "ts": t0 + 400.0, "dur": 190.0, "pid": 10000},
            {"name": "GetNext", "ph": "X", "tid": 0, "ts": t0 - 100.0, "dur": 50.0, "pid": 9000},
            {"name": "free_time", "ph": "X", "tid": 8002, "ts": t0 + 590.0, "dur": 10.0, "pid": 12000},
            {"name": "computation_op", "ph": "X", "tid": 7999, "ts": t0, "dur": 510.0, "pid": 12000},
        ]
    labels = [
        {"name": "process_labels", "ph": "M", "pid": 2, "args": {"labels": "AICORE OP"}},
        {"name": "process_labels", "ph": "M", "pid": 9000, "args": {"labels": "AICPU OP"}},
        {"name": "process_labels", "ph": "M", "pid": 10000, "args": {"labels": "Communication Op"}},
        {"name": "process_labels", "ph": "M", "pid": 12000, "args": {"labels": "Op Overlap Analyse"}},
        {"name": "thread_name", "ph": "M", "pid": 12000, "tid": 8002, "args": {"name": "Free Time"}},
        {"name": "thread_name", "ph": "M", "pid": 12000, "tid": 7999, "args": {"name": "Merged Computation Op"}},
    ]
    return meta + events + labels


def test_mindspore_16_layout(tmp_path: Path) -> None:
    path = tmp_path / "ascend_timeline_display_2.json"
    path.write_text(json.dumps(_middle_dialect_events()))
    model = load_trace(str(path))
    kinds = SliceKinds(model)
    s = model.slices
    names = np.array(model.strings, dtype=object)
    result = overview.overview(model)
    assert [(st["name"], st["start"], st["dur"]) for st in result["steps"]] == [
        ("ProfilerStep#1", 1000.0, 600.0), ("ProfilerStep#2", 2000.0, 600.0)]
    # Device work: AI Core, AI CPU and communication tasks; not the scope or overlap-analysis rows.
    assert sorted(set(names[s.name[kinds.kernel]])) == ["AllReduce-op3", "Conv2D-op1", "GetNext", "MatMul-op2"]
    assert {model.tracks[int(t)].device for t in s.track[kinds.kernel]} == {2}
    assert not (kinds.host_op & np.isin(names[s.name], ["Default", "free_time", "computation_op"])).any()
    assert sorted(set(names[s.name[kinds.collective_kernel]])) == ["AllReduce-op3"]
    # Per step: 510 µs of computation (Conv2D 0-300, MatMul 310-510) and 190 µs of communication, of which
    # 110 µs overlap the MatMul; the overlap-analysis rows add nothing.
    for step in result["steps"]:
        assert step["breakdown"]["kernel"] == pytest.approx(500.0)
        assert step["breakdown"]["communication"] == pytest.approx(80.0)
    rank = distributed.rank_breakdown(model)
    assert rank["communication"] / 1000.0 == pytest.approx(190.0)
    assert rank["overlap"] / 1000.0 == pytest.approx(110.0)
    assert distributed.collective_instances(model).name == ["allreduce", "allreduce"]
    assert distributed.backend_of(model) == "hccl"  # collectives on an Ascend device
    ops = {r["name"]: r for r in operators.operators(model)["rows"]}
    assert {n: (r["calls"], r["device_total"]) for n, r in ops.items()} == {
        "Conv2D": (2, 600.0), "MatMul": (2, 400.0), "AllReduce": (2, 380.0), "GetNext": (2, 100.0)}


# --- bad input -----------------------------------------------------------------------------------


def test_truncated_timeline_fails_its_run_only(tmp_path: Path, ascend_folder: Path, make_client) -> None:
    data = (ascend_folder / ASCEND_TIMELINE).read_bytes()
    logdir = tmp_path / "logdir"
    bad = logdir / "broken" / ASCEND_TIMELINE
    bad.parent.mkdir(parents=True)
    bad.write_bytes(data[: len(data) // 3])
    copy_trace(ascend_folder / ASCEND_TIMELINE, logdir / "good")
    with pytest.raises(TraceLoadError):
        load_trace(str(bad))
    settled = bad.stat().st_mtime - 10  # older than the discovery's settle time
    os.utime(bad, (settled, settled))
    client = make_client(logdir)
    client.settle()
    assert_fails_alone(client, {"run": "broken", "worker": "rank1", "span": "ascend"}, good_run="good")
    status, table = client.get("kernels", run="good", worker="rank1", span="ascend")
    assert status == 200 and table["rows"]
    status, tracks = client.get("trace/tracks", run="good", worker="rank1", span="ascend")
    assert status == 200 and any(t["kind"] == "gpu" for t in tracks["tracks"])


def test_events_of_wrong_types_are_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "ascend_timeline_display_3.json"
    path.write_text(json.dumps([
        {"name": "Conv2D-op1", "ph": "X", "ts": "soon", "dur": [1], "pid": {}, "tid": None},
        {"name": "MatMul-op2", "ph": "X", "ts": 5, "dur": 2, "pid": 3, "tid": "4"},
    ]))
    model = load_trace(str(path))
    assert model.framework == "mindspore"
    assert model.stats["skipped_phases"] == {"?invalid": 1}
    kinds = SliceKinds(model)
    assert [model.strings[int(n)] for n in model.slices.name[kinds.kernel]] == ["MatMul-op2"]
    assert [r["name"] for r in operators.operators(model)["rows"]] == ["MatMul"]


# --- memory record -------------------------------------------------------------------------------


def _span_folders() -> list[Path]:
    return sorted(real_trace("mindspore_cpu").glob("*/*_ascend_ms"))


def test_memory_record_gives_curves_and_the_peak() -> None:
    folders = _span_folders()
    assert len(folders) == 3
    for folder in folders:
        framework = folder / "FRAMEWORK"
        name = record_name_for(sorted(p.name for p in framework.iterdir()))
        assert name == "cpu_ms_memory_record_0.txt"
        rows = _read_csv(framework / name)
        timeline = folder / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE
        raw = read_kineto(bytearray(timeline.read_bytes()))
        normalise.normalise(raw)
        kept = add_memory_record(raw, read_memory_record((framework / name).read_bytes()))
        model = build_model(raw, framework="mindspore")
        # The record's rows within the span's timeline (its ops' first start to last end).
        start_us = min(float(e["ts"]) for e in json.loads(timeline.read_text()) if e.get("ph") == "X")
        end_us = max(float(e["ts"]) + float(e["dur"]) for e in json.loads(timeline.read_text()) if e.get("ph") == "X")
        inside = [r for r in rows if start_us - 1e-3 <= int(r["Timestamp(ns)"]) / 1000.0 <= end_us + 1e-3]
        assert kept == len(inside) and kept > 0.4 * len(rows), folder
        peak_row = max(inside, key=lambda r: int(r["Total Allocated(Byte)"]))
        view = memory.memory(model)
        assert view["available"] and [d["id"] for d in view["devices"]] == ["cpu"]
        peak = view["peak"]["cpu"]
        assert peak["allocated"] == int(peak_row["Total Allocated(Byte)"])
        assert peak["time"] == pytest.approx(int(peak_row["Timestamp(ns)"]) / 1000.0, abs=1e-3)
        assert peak["reserved"] == max(int(r["Total Reserved(Byte)"]) for r in inside)
        # The whole file's peak lies inside the span here, so the span shows the file's own peak.
        assert peak["allocated"] == max(int(r["Total Allocated(Byte)"]) for r in rows)
        # Every kept row, plus the last values held to the span's end when the span ends later.
        last_row_ns = max(int(r["Timestamp(ns)"]) for r in inside)
        assert len(view["curves"]["cpu"]["allocated"]) == kept + (1 if model.end > last_row_ns else 0)
        # Totals only: no allocation can be told from another, no operator owns a change.
        assert view["events"]["total"] == 0 and view["by_operator"] == []
        assert model.start <= int(float(peak_row["Timestamp(ns)"])) <= model.end


def test_memory_record_rejects_other_files() -> None:
    with pytest.raises(MemoryRecordError):
        read_memory_record(b"op_name,time\nConv2D,1\n")
    header = b"Timestamp(ns),Total Allocated(Byte),Total Reserved(Byte),Total Active(Byte)\n"
    with pytest.raises(MemoryRecordError):
        read_memory_record(header + b"1,2,x,4\n")
    with pytest.raises(MemoryRecordError):
        read_memory_record(header + b"1,2,3\n")
    assert len(read_memory_record(header)) == 0
    assert read_memory_record(header + b"5,6,7,8\n").allocated.tolist() == [6]
    assert record_name_for(["cpu_op_type_info_0.csv", "cpu_ms_memory_record_3.txt", "cpu_ms_memory_record_1.txt"]) \
        == "cpu_ms_memory_record_1.txt"
    assert record_name_for(["cpu_framework_0.txt"]) is None


def test_ascend_devices_are_called_by_their_own_name() -> None:
    """The overview's device card and the trace's utilization row say "Ascend 1", not "GPU 1"."""
    from profscope.tb_plugin.views.overview import overview
    from profscope.tb_plugin.views.answers import tracks

    model = load_trace(str(real_trace("mindspore/ascend_run_2_profiler/ascend_timeline_display_1.json")))
    (device,) = overview(model)["devices"]
    assert device["label"] == "Ascend 1"
    counters = [t for t in tracks(model)["tracks"] if t["id"].startswith("c:gpu_util:")]
    assert [(t["name"], t["group"]) for t in counters] == [("Ascend 1 utilization", "Ascend 1")]
    gpu = load_trace(str(real_trace(
        "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")))
    assert {d["label"] for d in overview(gpu)["devices"]} == {"GPU 0"}
