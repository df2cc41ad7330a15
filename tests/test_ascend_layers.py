"""The layers of an Ascend timeline (MindSpore 2.x ``trace_view.json`` on Ascend, msprof's ``msprof_<ts>.json``).

No real Ascend file of this kind is available, so ``ascend_timeline`` below writes one by hand as Huawei's
documentation lays it out (the sources are listed in ``tb_plugin/ingest/mindspore/ascend_layers.py``; each field says
which page it follows). Expected numbers are computed here from the generator's own task table, never copied.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin import layout
from profscope.tb_plugin.store.discovery import scan_logdir
from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views import kernels, overview
from profscope.tb_plugin.views.distributed import ranks as distributed
from profscope.tb_plugin.views.runs.summary import span_summary

from conftest import assert_fails_alone

BASE_US = Decimal("1700000000000.000")  # an epoch time in µs, as msprof writes it

# (stream, name, Task Type, start µs after BASE_US, duration µs): the device's tasks.
# "Task Type" values: task_time page (AI_CORE, AI_CPU...); communication tasks are named after their HCCL
# operator (hcom_<op>_...), as on the hccl_statistic page.
TASKS = [
    (2, "MatMul", "AI_CORE", "10.000", "20.500"),
    (2, "Add", "AI_CORE", "40.250", "5.125"),
    (2, "GetNext", "AI_CPU", "60.000", "4.000"),
    (5, "hcom_allReduce__569_0_1", "HCCL", "25.000", "30.000"),
]
# The host launch of each task (CANN layer: an AscendCL call around GE's Node@launch), start and duration.
LAUNCHES = {"MatMul": ("5.000", "4.000"), "Add": ("35.000", "3.000"), "GetNext": ("55.000", "2.000"),
            "hcom_allReduce__569_0_1": ("20.000", "4.000")}
# The HCCL layer's view of the same collective: the operator, and the tasks it is made of (hccl_statistic).
HCCL_PLANE_TASKS = [("Notify_Wait", "25.000", "15.000"), ("Memcpy", "40.000", "10.000"),
                    ("Reduce_Inline", "50.000", "5.000")]

# msprof's Ascend Hardware view of the same collective (its timeline writer: a task without an operator is
# named after its task type): each plane task again, on a communication stream, at the same time.
HARDWARE_COLLECTIVE_TASKS = {"Notify_Wait": ("NOTIFY_WAIT", "NOTIFY_WAIT_SQE"), "Memcpy": ("MEMCPY_ASYNC", "SDMA_SQE"),
                             "Reduce_Inline": ("MEMCPY_ASYNC", "SDMA_SQE")}
COMMUNICATION_STREAM = 7
# Tasks of the compute stream that compute nothing, or copy: (name, Task Type, start, duration).
STREAM_CONTROL_TASKS = [("EVENT_RECORD", "EVENT_RECORD_SQE", "31.000", "0.250"),
                        ("EVENT_WAIT", "EVENT_WAIT_SQE", "46.000", "8.000")]
COPY_TASKS = [("MEMCPY_ASYNC", "SDMA_SQE", "56.000", "2.500")]

PID_PYTHON, PID_CANN, PID_HARDWARE, PID_HCCL, PID_OVERLAP, PID_FREQ = 1, 2, 3, 4, 5, 6
TID_LAUNCH = 1234


def _time(offset: str, as_string: bool) -> Any:
    value = BASE_US + Decimal(offset)
    return str(value) if as_string else float(value)


def _meta(kind: str, pid: int, tid: int, **args: Any) -> dict[str, Any]:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": args}


def ascend_timeline(*, string_times: bool = True, flows: bool = True, hardware_communication: bool = True,
                    overlap: bool = True, shift_us: str = "0", task_types: bool = False) -> list[dict[str, Any]]:
    """A one-device Ascend timeline as a bare JSON array of events.

    string_times: MindSpore's trace_view.json writes ts/dur as decimal strings; msprof as numbers.
    hardware_communication: whether Ascend Hardware shows the collective's task (else only the HCCL layer does).
    shift_us: delays the collective (another rank arriving later).
    task_types: Ascend Hardware also has tasks named after their task type, as msprof writes them: the
    collective's own tasks on a communication stream, stream control and a copy on the compute stream.
    """
    t = lambda offset: _time(str(Decimal(offset)), string_times)  # noqa: E731
    d = lambda dur: str(Decimal(dur)) if string_times else float(Decimal(dur))  # noqa: E731
    events: list[dict[str, Any]] = [
        # Layers as process_name metadata: "msprof (Timeline Report)" page (areas 1-3).
        _meta("process_name", PID_PYTHON, 0, name="Python"),
        _meta("process_name", PID_CANN, 0, name="CANN"),
        _meta("process_name", PID_HARDWARE, 0, name="Ascend Hardware"),
        _meta("process_name", PID_HCCL, 0, name="HCCL"),
        _meta("process_name", PID_OVERLAP, 0, name="Overlap Analysis"),
        _meta("process_name", PID_FREQ, 0, name="AI Core Freq"),
        _meta("thread_name", PID_CANN, TID_LAUNCH, name=f"Thread {TID_LAUNCH}"),
        # One thread per stream of Ascend Hardware (task_time page).
        _meta("thread_name", PID_HARDWARE, 2, name="Stream 2"),
        _meta("thread_name", PID_HARDWARE, 5, name="Stream 5"),
        # HCCL: "Group <name> Communication" (operators) and "Plane <id>" (their tasks), hccl_statistic page.
        _meta("thread_name", PID_HCCL, 100, name="Group hccl_world_group Communication"),
        _meta("thread_name", PID_HCCL, 101, name="Plane 0"),
    ]
    collective_shift = Decimal(shift_us)
    flow_id = 0
    for stream, name, task_type, start, dur in TASKS:
        shift = collective_shift if task_type == "HCCL" else Decimal(0)
        if task_type == "HCCL" and not hardware_communication:
            continue
        task_start = str(Decimal(start) + shift)
        # A task's args: task_time page ("Task Type", "Stream Id", "Task Id"; "Physic Stream Id").
        events.append({"name": name, "ph": "X", "pid": PID_HARDWARE, "tid": stream, "ts": t(task_start),
                       "dur": d(dur), "args": {"Task Type": task_type, "Stream Id": stream,
                                               "Physic Stream Id": stream, "Task Id": 10 + flow_id}})
        launch_start, launch_dur = LAUNCHES[name]
        launch_start = str(Decimal(launch_start) + shift)
        node_start = str(Decimal(launch_start) + Decimal("0.5"))
        events += [
            {"name": f"AscendCL@aclnn{name}", "ph": "X", "pid": PID_CANN, "tid": TID_LAUNCH, "ts": t(launch_start),
             "dur": d(launch_dur), "args": {"Thread Id": TID_LAUNCH, "Mode": "ACL_OP"}},
            {"name": "Node@launch", "ph": "X", "pid": PID_CANN, "tid": TID_LAUNCH, "ts": t(node_start),
             "dur": d("1.000"), "args": {"Thread Id": TID_LAUNCH}},
        ]
        if flows:
            # Launch → task flows ("Operator Delivery Direction Check", msprof timeline page).
            events += [
                {"name": "HostToDevice", "ph": "s", "cat": "HostToDevice", "id": str(flow_id),
                 "pid": PID_CANN, "tid": TID_LAUNCH, "ts": t(node_start)},
                {"name": "HostToDevice", "ph": "f", "cat": "HostToDevice", "id": str(flow_id), "bp": "e",
                 "pid": PID_HARDWARE, "tid": stream, "ts": t(task_start)},
            ]
        flow_id += 1
    _, name, _, start, dur = TASKS[3]
    events.append({"name": name, "ph": "X", "pid": PID_HCCL, "tid": 100,
                   "ts": t(str(Decimal(start) + collective_shift)), "dur": d(dur), "args": {"connection_id": 0}})
    for plane_name, start, dur in HCCL_PLANE_TASKS:
        events.append({"name": plane_name, "ph": "X", "pid": PID_HCCL, "tid": 101,
                       "ts": t(str(Decimal(start) + collective_shift)), "dur": d(dur), "args": {}})
    if task_types:
        events.append(_meta("thread_name", PID_HARDWARE, COMMUNICATION_STREAM, name=f"Stream {COMMUNICATION_STREAM}"))
        for plane_name, start, dur in HCCL_PLANE_TASKS:
            name, task_type = HARDWARE_COLLECTIVE_TASKS[plane_name]
            events.append({"name": name, "ph": "X", "pid": PID_HARDWARE, "tid": COMMUNICATION_STREAM,
                           "ts": t(str(Decimal(start) + collective_shift)), "dur": d(dur),
                           "args": {"Task Type": task_type, "Physic Stream Id": COMMUNICATION_STREAM}})
        for name, task_type, start, dur in STREAM_CONTROL_TASKS + COPY_TASKS:
            events.append({"name": name, "ph": "X", "pid": PID_HARDWARE, "tid": 2, "ts": t(start), "dur": d(dur),
                           "args": {"Task Type": task_type, "Physic Stream Id": 2}})
    if overlap:
        # Overlap Analysis rows (msprof timeline page; field list in the CANN 7 Chinese page): derived ranges.
        for tid, row, ranges in ((1, "Computing", [("10.000", "20.500"), ("40.250", "5.125"), ("60.000", "4.000")]),
                                 (2, "Communication", [("25.000", "30.000")]),
                                 (3, "Communication(Not Overlapped)", [("30.500", "9.750"), ("45.375", "9.625")]),
                                 (4, "Free", [("0.000", "10.000"), ("55.000", "5.000")])):
            events.append(_meta("thread_name", PID_OVERLAP, tid, name=row))
            events += [{"name": row, "ph": "X", "pid": PID_OVERLAP, "tid": tid, "ts": t(s), "dur": d(du)}
                       for s, du in ranges]
    # AI Core frequency: counter events.
    events += [{"name": "AI Core Freq", "ph": "C", "pid": PID_FREQ, "tid": 0, "ts": t(at), "args": {"MHz": mhz}}
               for at, mhz in (("0.000", 1800), ("50.000", 1650))]
    events.append({"name": "train_step", "ph": "X", "pid": PID_PYTHON, "tid": 7, "ts": t("4.000"), "dur": d("60.000")})
    return events


def _write(path: Path, events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events))
    return path


def _us(offset: str) -> float:
    return float(Decimal(offset))


def _union_us(ranges: list[tuple[str, str]]) -> float:
    """Length of a union of (start, duration) ranges, in µs (exact decimals)."""
    spans = sorted((Decimal(s), Decimal(s) + Decimal(d)) for s, d in ranges)
    total, end = Decimal(0), Decimal("-1e30")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return float(total)


def _names(model: Any, mask: np.ndarray) -> list[str]:
    return sorted(model.strings[int(n)] for n in model.slices.name[mask])


@pytest.fixture()
def model(tmp_path: Path) -> Any:
    return load_trace(str(_write(tmp_path / "trace_view.json", ascend_timeline())))


def test_ai_core_tasks_are_kernels_with_exact_device_time(model: Any) -> None:
    assert model.framework == "mindspore"
    table = {r["name"]: r for r in kernels.kernels(model)["rows"]}
    assert set(table) == {name for _, name, _, _, _ in TASKS}
    for _, name, _, _, dur in TASKS:
        assert table[name]["calls"] == 1
        assert table[name]["total"] == pytest.approx(_us(dur), abs=1e-9)
    assert kernels.kernels(model)["total"] == pytest.approx(sum(_us(d) for *_, d in TASKS), abs=1e-9)
    kinds = SliceKinds(model)
    tracks = {model.tracks[int(t)] for t in model.slices.track[kinds.kernel]}
    assert {(t.kind, t.device, t.process_name) for t in tracks} == {("gpu", 0, "Ascend Hardware")}
    streams = {model.strings[int(n)]: int(s) for n, s in zip(model.slices.name[kinds.kernel],
                                                               model.slices.stream[kinds.kernel])}
    assert streams == {name: stream for stream, name, *_ in TASKS}
    assert model.metadata["deviceProperties"] == [{"id": 0, "name": "Ascend 0"}]
    # Exact to the ns: "10.000" µs after BASE_US.
    matmul = int(np.flatnonzero(kinds.kernel & (model.slices.name == model.strings.index("MatMul")))[0])
    assert int(model.slices.start[matmul]) == int((BASE_US + Decimal("10")) * 1000)


def test_communication_is_communication(model: Any) -> None:
    kinds = SliceKinds(model)
    assert _names(model, kinds.collective_kernel) == ["hcom_allReduce__569_0_1"]
    # The HCCL layer shows the same collective again, and its plane tasks subdivide it: neither counts.
    hccl_rows = np.array([model.tracks[int(t)].pid == str(PID_HCCL) for t in model.slices.track])
    assert not (hccl_rows & (kinds.kernel | kinds.host_op | kinds.runtime)).any()
    compute = [(s, d) for _, _, kind, s, d in TASKS if kind != "HCCL"]
    _, _, _, comm_start, comm_dur = TASKS[3]
    comm_end = Decimal(comm_start) + Decimal(comm_dur)
    overlapped = _union_us([(str(max(Decimal(s), Decimal(comm_start))),
                             str(min(Decimal(s) + Decimal(d), comm_end) - max(Decimal(s), Decimal(comm_start))))
                            for s, d in compute
                            if Decimal(s) < comm_end and Decimal(s) + Decimal(d) > Decimal(comm_start)])
    # Overview: kernels first, then communication while no kernel runs.
    (step,) = overview.overview(model)["steps"]
    assert step["breakdown"]["kernel"] == pytest.approx(_union_us(compute), abs=1e-6)
    assert step["breakdown"]["communication"] == pytest.approx(_us(comm_dur) - overlapped, abs=1e-6)
    # Distributed view: the collective's whole time is communication, the part under kernels overlap.
    rank = distributed.rank_breakdown(model)
    assert rank["communication"] / 1000.0 == pytest.approx(_us(comm_dur), abs=1e-6)
    assert rank["overlap"] / 1000.0 == pytest.approx(overlapped, abs=1e-6)
    assert distributed.collective_instances(model).name == ["hcomallreduce56901"]


def test_collective_seen_only_by_the_hccl_layer_counts_once(tmp_path: Path) -> None:
    model = load_trace(str(_write(tmp_path / "trace_view.json", ascend_timeline(hardware_communication=False))))
    kinds = SliceKinds(model)
    assert _names(model, kinds.collective_kernel) == ["hcom_allReduce__569_0_1"]
    (row,) = np.flatnonzero(kinds.collective_kernel).tolist()
    track = model.tracks[int(model.slices.track[row])]
    assert (track.kind, track.device, track.process_name) == ("gpu", 0, "HCCL (Ascend 0)")
    assert not (kinds.kernel & np.isin(model.slices.name, [model.strings.index(n) for n, *_ in HCCL_PLANE_TASKS])).any()
    assert distributed.rank_breakdown(model)["communication"] / 1000.0 == pytest.approx(_us(TASKS[3][4]), abs=1e-6)


def test_cann_launches_link_to_their_tasks_through_the_flows(model: Any, tmp_path: Path) -> None:
    kinds = SliceKinds(model)
    s = model.slices
    names = np.array(model.strings, dtype=object)
    assert set(names[s.name[kinds.runtime]]) == {"Node@launch"} | {f"AscendCL@aclnn{n}" for _, n, *_ in TASKS}
    for _, name, _, _, _ in TASKS:
        task = int(np.flatnonzero(kinds.kernel & (names[s.name] == name))[0])
        launcher = int(model.links.launcher[task])
        assert launcher >= 0 and names[s.name[launcher]] == "Node@launch"
        # The launch is the one made for this task: inside its AscendCL call.
        assert names[s.name[int(s.parent[launcher])]] == f"AscendCL@aclnn{name}"
    # Their category is known, so the span does not report it as unknown.
    assert "HostToDevice" not in model.stats["unknown_categories"]
    assert "unknown_categories" not in [item["id"] for item in span_summary(model)["limitations"]]
    without = load_trace(str(_write(tmp_path / "no_flows" / "trace_view.json", ascend_timeline(flows=False))))
    assert (without.links.launcher[SliceKinds(without).kernel] == -1).all()


def test_overlap_rows_and_counters(model: Any, tmp_path: Path) -> None:
    kinds = SliceKinds(model)
    overlap_rows = np.array([model.tracks[int(t)].pid == str(PID_OVERLAP) for t in model.slices.track])
    assert overlap_rows.sum() == 8
    counted = (kinds.kernel | kinds.host_op | kinds.runtime | kinds.collective_kernel | kinds.collective_op
               | kinds.memcpy | kinds.device_activity)
    assert not (overlap_rows & counted).any()
    without = load_trace(str(_write(tmp_path / "plain" / "trace_view.json", ascend_timeline(overlap=False))))
    ours, plain = overview.overview(model)["steps"][0], overview.overview(without)["steps"][0]
    for category in ("kernel", "communication", "runtime", "cpu_exec"):
        assert ours["breakdown"][category] == pytest.approx(plain["breakdown"][category])
    assert sorted(model.counters.value.tolist()) == [1650.0, 1800.0]


@pytest.mark.parametrize("string_times", [True, False])
def test_detected_by_the_layer_names(tmp_path: Path, string_times: bool) -> None:
    data = json.dumps(ascend_timeline(string_times=string_times)).encode()
    assert detect_framework(data[:HEAD_BYTES], "msprof_20231204093612.json") == "mindspore"
    # Two distinct layers are needed: one process named "CANN" alone is not enough.
    lone = json.dumps([_meta("process_name", 1, 0, name="CANN"),
                       {"name": "x", "ph": "X", "ts": 1.0, "dur": 1.0, "pid": 1, "tid": 1}]).encode()
    assert detect_framework(lone, "trace.json") == "generic"
    path = _write(tmp_path / "msprof_20231204093612.json", ascend_timeline(string_times=string_times))
    model = load_trace(str(path))
    assert model.framework == "mindspore"
    assert kernels.kernels(model)["total"] == pytest.approx(sum(_us(d) for *_, d in TASKS), abs=1e-6)


def test_both_msprof_layouts_are_discovered(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    events = ascend_timeline(string_times=False)
    _write(logdir / "cann_job" / "PROF_000001_20231204093612345_ABCDEF" / "mindstudio_profiler_output"
           / "msprof_20231204093700.json", events)
    span = logdir / "ms_job" / "host_rank1_1700000000_ascend_ms"
    _write(span / "ASCEND_PROFILER_OUTPUT" / "msprof_20231204093800.json", events)
    _write(span / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", events)
    _write(span / "PROF_000002_20231204093612999_GHIJKL" / "mindstudio_profiler_output"
           / "msprof_20231204093900.json", events)
    # A span folder without a trace_view.json: its msprof report is the span.
    _write(logdir / "ms_job" / "host_rank2_1700000001_ascend_ms" / "PROF_000003_20231204093612999_MNOPQR"
           / "mindstudio_profiler_output" / "msprof_20231204094000.json", events)
    # Not reports: another name in an output folder (a side file of the report); an msprof file outside an
    # output folder is any Chrome trace (found by its first bytes, named by its file).
    _write(logdir / "other" / "mindstudio_profiler_output" / "msprof_notes.json", events)
    _write(logdir / "other" / "somewhere" / "msprof_20231204093612.json", events)
    found = {(s.run, s.worker, s.span, s.layout) for s in scan_logdir(str(logdir))}
    assert found == {
        ("cann_job", "PROF_000001_20231204093612345_ABCDEF", "20231204093700", "msprof"),
        # The span folder's trace_view.json stands for the msprof reports beside it (the same window).
        ("ms_job", "rank1", "1700000000", "mindspore"),
        ("ms_job", "rank2", "20231204094000", "msprof"),
        ("other/somewhere", "msprof_20231204093612", "msprof_20231204093612.json", "chrome"),
    }
    assert layout.parse_msprof_trace_path(["ASCEND_PROFILER_OUTPUT"], "msprof_1.json") is None
    parsed = layout.parse_msprof_trace_path(["run", "PROF_1", "mindstudio_profiler_output"], "msprof_1.json")
    assert parsed is not None and (parsed.name.worker, parsed.name.span, parsed.run_levels_up) == ("PROF_1", "1", 2)


def test_two_ranks_in_the_distributed_view(tmp_path: Path) -> None:
    early = load_trace(str(_write(tmp_path / "0" / "msprof_1.json", ascend_timeline())))
    late = load_trace(str(_write(tmp_path / "1" / "msprof_1.json", ascend_timeline(shift_us="3.000"))))
    answer = distributed.distributed([("rank0", early), ("rank1", late)])
    assert answer["available"]
    assert [r["rank"] for r in answer["ranks"]] == [0, 1]
    assert [c["name"] for c in answer["collectives"]] == ["hcomallreduce56901"]
    assert all(r["collective_calls"] == 1 for r in answer["ranks"])
    # No distributedInfo: the backend is what the collectives' names say (HCCL's hcom_ operators).
    assert [r["backend"] for r in answer["ranks"]] == ["hccl", "hccl"]


def test_truncated_report_fails_its_span_only(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    data = json.dumps(ascend_timeline(string_times=False)).encode()
    good = _write(logdir / "good" / "PROF_1" / "mindstudio_profiler_output" / "msprof_1.json",
                  ascend_timeline(string_times=False))
    bad = logdir / "broken" / "PROF_2" / "mindstudio_profiler_output" / "msprof_2.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceLoadError):
        load_trace(str(bad))
    for path in (good, bad):
        settled = path.stat().st_mtime - 10  # older than the discovery's settle time
        os.utime(path, (settled, settled))
    client = make_client(logdir)
    client.settle()
    assert_fails_alone(client, {"run": "broken", "worker": "PROF_2", "span": "2"}, good_run="good")
    status, table = client.get("kernels", run="good", worker="PROF_1", span="1")
    assert status == 200 and {r["name"] for r in table["rows"]} == {name for _, name, *_ in TASKS}


def test_tasks_named_after_their_task_type_are_not_kernels(tmp_path: Path) -> None:
    """msprof names a task without an operator after its task type. The collective's tasks on the hardware
    (notify waits, SDMA copies) are communication, counted once from the HCCL operator; waits and records of
    events compute nothing; a copy is a copy. So the communication the step breakdown finds is the trace's
    own "Communication(Not Overlapped)", and kernel time is the compute tasks' only."""
    events = ascend_timeline(string_times=False, hardware_communication=False, task_types=True)
    model = load_trace(str(_write(tmp_path / "PROF_1" / "mindstudio_profiler_output" / "msprof_1.json", events)))
    kinds = SliceKinds(model)
    compute = [(s, d) for _, _, kind, s, d in TASKS if kind != "HCCL"]
    assert _names(model, kinds.kernel & ~kinds.collective_kernel) == sorted(n for _, n, k, *_ in TASKS if k != "HCCL")
    assert _names(model, kinds.collective_kernel) == ["hcom_allReduce__569_0_1"]  # the HCCL operator, once
    assert _names(model, kinds.memcpy) == [name for name, *_ in COPY_TASKS]
    assert _names(model, kinds.device_sync) == sorted(name for name, *_ in STREAM_CONTROL_TASKS)
    hardware = np.array([model.tracks[int(t)].pid == str(PID_HARDWARE) for t in model.slices.track])
    collective_parts = hardware & (model.slices.stream == COMMUNICATION_STREAM)
    assert collective_parts.sum() == len(HCCL_PLANE_TASKS)
    assert not (collective_parts & (kinds.kernel | kinds.memcpy | kinds.device_sync)).any()
    # Every task of the hardware is on a device lane of device 0, the stream control too.
    assert {(model.tracks[int(t)].kind, model.tracks[int(t)].device) for t in model.slices.track[hardware]} == {("gpu", 0)}
    (step,) = overview.overview(model)["steps"]
    assert step["breakdown"]["kernel"] == pytest.approx(_union_us(compute), abs=1e-6)
    not_overlapped = [e["dur"] for e in events if e.get("name") == "Communication(Not Overlapped)"]
    assert step["breakdown"]["communication"] == pytest.approx(sum(not_overlapped), abs=1e-6)
    assert step["breakdown"]["memcpy"] == pytest.approx(sum(_us(d) for *_, d in COPY_TASKS), abs=1e-6)
    table = kernels.kernels(model)
    assert table["device_kind"] == "Ascend" and table["tensor_cores_known"] is False
    assert table["tensor_core_share"] is None
    assert table["total"] == pytest.approx(sum(_us(d) for *_, d in TASKS), abs=1e-6)  # compute + the HCCL operator
    (device,) = overview.overview(model)["devices"]
    assert (device["label"], device["kind"], device["name"]) == ("Ascend 0", "Ascend", "Ascend 0")
    assert device["sm_efficiency"] is None and device["achieved_occupancy"] is None
    assert device["tensor_core_share"] is None
    assert set(device["unavailable"]) == {"sm_efficiency", "achieved_occupancy", "tensor_core_share"}
    # Kernel time is the compute tasks' (the breakdown's Kernel), the HCCL operator is communication time.
    assert device["kernel_time"] == pytest.approx(sum(_us(d) for _, _, k, _, d in TASKS if k != "HCCL"), abs=1e-6)
    assert device["communication_time"] == pytest.approx(sum(_us(d) for _, _, k, _, d in TASKS if k == "HCCL"))
    # Waiting is not busy: the collective keeps the device busy while its own tasks copy and reduce, not while
    # they wait for the peer's notify (the Analyses page's streams say the same).
    busy = compute + [(s, d) for plane, s, d in HCCL_PLANE_TASKS if HARDWARE_COLLECTIVE_TASKS[plane][0] != "NOTIFY_WAIT"]
    assert device["utilization"] == pytest.approx(_union_us(busy) / step["dur"], abs=1e-9)
    from profscope.tb_plugin.views.analyses import idle

    streams = {row["stream"]: row for row in idle.idle_time(model)["streams"]}
    assert streams[f"Ascend 0 · Stream {COMMUNICATION_STREAM}"]["busy"] == pytest.approx(
        sum(_us(d) for plane, _, d in HCCL_PLANE_TASKS if plane != "Notify_Wait"), abs=1e-6)
    assert model.stats["ascend_layers"]["collective_parts"] == len(HCCL_PLANE_TASKS)
