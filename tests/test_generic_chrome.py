"""Any other Chrome trace: duration (B/E) and async (b/e) pairing, TensorFlow/JAX-shaped exports,
name-level tables, the trace view, and what the summary says could not be derived.

The TensorFlow/JAX traces follow the profiler's ``TraceEventsToJson``
(tensorflow/core/profiler/convert/trace_events_to_json.cc, which JAX's profiler plugin shares):
``{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, "traceEvents": [...]}``, process
(device) and thread (resource) names as ``M`` events, ``X`` events without a category whose args
are strings, and a trailing ``{}``. Numbers below are worked out by hand from each timeline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin.ingest.chrome import chunks
from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.detect import detect_framework
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views.kernels import kernels
from profscope.tb_plugin.views.operators import operators
from profscope.tb_plugin.views.overview import overview
from profscope.tb_plugin.views.runs.summary import span_summary
from profscope.writer.importer import import_trace_files

from handmade import write

NS = 1000


def _rows(model: TraceModel) -> list[tuple[str, int, int, int, str]]:
    """(name, start ns, dur ns, depth, thread name) of every slice, in the model's order."""
    s = model.slices
    return [(model.strings[int(s.name[i])], int(s.start[i]), int(s.dur[i]), int(s.depth[i]),
             model.tracks[int(s.track[i])].thread_name) for i in range(len(s))]


def _ids(model: TraceModel) -> list[str]:
    return [item["id"] for item in span_summary(model)["limitations"]]


# --- B/E and b/e pairing -------------------------------------------------------------------------

BEGIN_END = [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12, "cat": "app"},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 15},  # closes inner: an E names nothing
    {"ph": "X", "name": "complete", "pid": 1, "tid": 1, "ts": 16, "dur": 2},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 20},  # closes outer
    {"ph": "E", "pid": 1, "tid": 1, "ts": 21},  # nothing open: dropped
    # Another thread, written out of time order: the E comes first in the file.
    {"ph": "E", "pid": 1, "tid": 2, "ts": 40},
    {"ph": "B", "name": "late", "pid": 1, "tid": 2, "ts": 30},
    {"ph": "B", "name": "open", "pid": 1, "tid": 2, "ts": 45},  # never closed: ends with the trace
    {"ph": "X", "name": "last", "pid": 1, "tid": 3, "ts": 50, "dur": 10},
]


def test_begin_end_pairs_nest_per_thread(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "be.json", {"traceEvents": BEGIN_END})))
    assert sorted(_rows(model)) == sorted([
        ("outer", 10 * NS, 10 * NS, 0, "main"),
        ("inner", 12 * NS, 3 * NS, 1, "main"),
        ("complete", 16 * NS, 2 * NS, 1, "main"),
        ("late", 30 * NS, 10 * NS, 0, "thread 2"),
        ("open", 45 * NS, 15 * NS, 0, "thread 2"),  # closed at the trace's end, 60
        ("last", 50 * NS, 10 * NS, 0, "thread 3"),
    ])
    assert model.stats["begin_end"] == {"slices": 4, "closed_at_end": 1, "unmatched_ends": 1}
    assert "B" not in model.stats["skipped_phases"] and "E" not in model.stats["skipped_phases"]
    assert model.strings[int(model.slices.cat[_rows(model).index(("inner", 12 * NS, 3 * NS, 1, "main"))])] == "app"
    assert "unpaired_begin_end" in _ids(model)


def test_pairs_across_decoding_chunks_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Many nested pairs on two threads, decoded in chunks of about 300 bytes: pairs straddle chunks.
    events: list[dict[str, Any]] = []
    for i in range(60):
        for tid in (1, 2):
            events.append({"ph": "B", "name": f"r{i}", "pid": 1, "tid": tid, "ts": 100 * i})
            events.append({"ph": "B", "name": f"c{i}", "pid": 1, "tid": tid, "ts": 100 * i + 10})
            events.append({"ph": "E", "pid": 1, "tid": tid, "ts": 100 * i + 20 + tid})
            events.append({"ph": "E", "pid": 1, "tid": tid, "ts": 100 * i + 50})
    path = write(tmp_path / "many.json", {"traceEvents": events})
    whole = load_trace(str(path))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 300)
    chunked = load_trace(str(path))
    assert chunked.stats["chunking"] == "guessed" and _rows(chunked) == _rows(whole)
    assert len(whole.slices) == 240 and whole.stats["begin_end"]["closed_at_end"] == 0
    children = [row for row in _rows(whole) if row[0].startswith("c")]
    assert all(row[3] == 1 for row in children)
    assert sorted({row[2] for row in children}) == [11 * NS, 12 * NS]
    # Decoded by two processes (as the parser pool does): pairs straddling the two halves are paired too.
    from profscope.tb_plugin.ingest.chrome import parallel, reader

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 100)  # cuts before the input ends: the helper gets chunks
    monkeypatch.setattr(reader, "BLOCK_BYTES", 500)
    halves = load_trace(str(path), parallel=True)
    assert halves.stats["chunking"] == "guessed, two processes"
    assert _rows(halves) == _rows(whole) and "B" not in halves.stats["skipped_phases"]


def test_async_events_get_a_track_per_id(tmp_path: Path) -> None:
    events = [
        {"ph": "b", "cat": "net", "id": "0x1", "name": "request", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "b", "cat": "net", "id": "0x1", "name": "send", "pid": 1, "tid": 1, "ts": 6},
        {"ph": "e", "cat": "net", "id": "0x1", "name": "send", "pid": 1, "tid": 3, "ts": 9},
        {"ph": "b", "cat": "net", "id": 2, "name": "request", "pid": 1, "tid": 2, "ts": 7},
        {"ph": "e", "cat": "net", "id": "0x1", "name": "request", "pid": 1, "tid": 4, "ts": 20},
        {"ph": "e", "cat": "net", "id": 2, "pid": 1, "tid": 1, "ts": 12},
        {"ph": "e", "cat": "net", "id": 3, "pid": 1, "tid": 1, "ts": 13},  # never began
        {"ph": "X", "name": "work", "pid": 1, "tid": 1, "ts": 0, "dur": 30},
    ]
    model = load_trace(str(write(tmp_path / "async.json", {"traceEvents": events})))
    assert sorted(_rows(model)) == sorted([
        ("request", 5 * NS, 15 * NS, 0, "async net:0x1"),
        ("send", 6 * NS, 3 * NS, 1, "async net:0x1"),
        ("request", 7 * NS, 5 * NS, 0, "async net:2"),
        ("work", 0, 30 * NS, 0, "thread 1"),
    ])
    assert model.stats["async"] == {"slices": 3, "closed_at_end": 0, "unmatched_ends": 1}


# --- TensorFlow- and JAX-shaped exports ---------------------------------------------------------


def _meta(pid: int, name: str, tid: int | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "M", "pid": pid, "name": "process_name" if tid is None else "thread_name",
                             "args": {"name": name}}
    if tid is not None:
        event["tid"] = tid
    return event


def _x(pid: int, tid: int, name: str, ts: float, dur: float, **args: str) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "name": name}
    if args:
        event["args"] = args  # the profiler writes every argument as a string
    return event


def tensorflow_trace() -> dict[str, Any]:
    events = [
        _meta(1, "/host:CPU"), {"ph": "M", "pid": 1, "name": "process_sort_index", "args": {"sort_index": 1}},
        _meta(1, "tf_Compute/123", tid=11),
        _meta(2, "/device:GPU:0"), _meta(2, "Stream #13(Compute)", tid=13), _meta(2, "XLA Modules", tid=1),
        _x(1, 11, "ExecutorState::Process", 0, 100, id="5"),
        _x(1, 11, "MatMul", 10, 40, long_name="dense/MatMul:MatMul"),
        _x(1, 11, "Relu", 60, 20),
        _x(1, 11, "MatMul", 120, 30),
        _x(2, 13, "volta_sgemm_128x64_nn", 15, 25, correlation_id="7", group_id="1"),
        _x(2, 13, "relu_kernel", 62, 5),
        _x(2, 13, "volta_sgemm_128x64_nn", 125, 20.5),
        _x(2, 1, "cluster_0", 14, 120),  # an XLA module: it encloses kernels, it is not one
        {},
    ]
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": events}


def jax_trace() -> dict[str, Any]:
    events = [
        _meta(3, "/device:TPU:0"), _meta(3, "Steps", tid=1), _meta(3, "XLA Modules", tid=2), _meta(3, "XLA Ops", tid=3),
        _meta(4, "/host:CPU"), _meta(4, "python3", tid=40),
        _x(3, 1, "0", 0, 90),
        _x(3, 2, "jit_train_step(2)", 5, 80),
        _x(3, 3, "fusion.1", 10, 30, long_name="%fusion.1 = f32[8,128] fusion(...)"),
        _x(3, 3, "convolution.2", 45, 35),
        {"ph": "B", "pid": 4, "tid": 40, "ts": 0, "name": "train_step"},
        {"ph": "B", "pid": 4, "tid": 40, "ts": 1, "name": "PjitFunction(train_step)"},
        {"ph": "E", "pid": 4, "tid": 40, "ts": 4},
        {"ph": "E", "pid": 4, "tid": 40, "ts": 95},
        {},
    ]
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": events}


@pytest.mark.parametrize("make", [tensorflow_trace, jax_trace])
def test_tensorflow_and_jax_exports_are_generic(make: Any) -> None:
    assert detect_framework(json.dumps(make()).encode()) == "generic"


def test_tensorflow_export_gets_name_level_tables(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "host.trace.json.gz", tensorflow_trace(), gz=True)))
    assert model.framework == "generic"
    ops = {r["name"]: (r["calls"], r["host_self"], r["host_total"]) for r in operators(model)["rows"]}
    assert ops == {"ExecutorState::Process": (1, 40.0, 100.0), "MatMul": (2, 70.0, 70.0), "Relu": (1, 20.0, 20.0)}
    table = {r["name"]: (r["calls"], r["total"], r["min"], r["max"]) for r in kernels(model)["rows"]}
    assert table == {"volta_sgemm_128x64_nn": (2, 45.5, 20.5, 25.0), "relu_kernel": (1, 5.0, 5.0, 5.0)}
    # One step (no markers) over the host ranges [0, 150]: kernels [15,40] [62,67] [125,145.5]; the
    # host ranges [0,100] [120,150] are CPU time where no kernel runs; the gap [100,120] is other.
    result = overview(model)
    assert [(s["start"], s["dur"]) for s in result["steps"]] == [(0.0, 150.0)]
    assert result["breakdown"]["kernel"] == 50.5
    assert result["breakdown"]["cpu_exec"] == 79.5
    assert result["breakdown"]["other"] == 20.0
    assert _ids(model) == ["generic_trace", "no_steps", "no_launch_links", "no_memory"]


def test_jax_export_keeps_steps_and_modules_out_of_the_kernels(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "perfetto_trace.json", jax_trace())))
    table = {r["name"]: (r["calls"], r["total"]) for r in kernels(model)["rows"]}
    assert table == {"fusion.1": (1, 30.0), "convolution.2": (1, 35.0)}
    ops = {r["name"]: (r["host_self"], r["host_total"]) for r in operators(model)["rows"]}
    assert ops == {"train_step": (92.0, 95.0), "PjitFunction(train_step)": (3.0, 3.0)}
    kinds = SliceKinds(model)
    assert not (kinds.operator & kinds.kernel).any()
    assert model.stats["begin_end"] == {"slices": 2, "closed_at_end": 0, "unmatched_ends": 0}


def test_generic_run_through_the_app(tmp_path: Path, make_client) -> None:
    source = write(tmp_path / "in" / "worker.trace.json", tensorflow_trace())
    logdir = tmp_path / "logdir"
    [written] = import_trace_files([source], logdir, "tf", worker="host0", event_file=False, report=lambda _: None)
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    [run] = body["runs"]
    assert (run["status"], run["framework"]) == ("ready", "generic")
    q = {"run": "tf", "worker": "host0"}
    status, tracks = client.get("trace/tracks", **q)
    assert status == 200
    assert {(t["group"], t["name"]) for t in tracks["tracks"]} == {
        ("/host:CPU", "tf_Compute/123"), ("/device:GPU:0", "Stream #13(Compute)"), ("/device:GPU:0", "XLA Modules")}
    status, window = client.get("trace/slices", **q, width=2000)
    assert status == 200
    shown = sum(len(t["slices"]["id"]) + int(np.sum(t["blocks"]["count"])) for t in window["tracks"])
    assert shown == 8
    status, table = client.get("operators", **q)
    assert status == 200 and {r["name"] for r in table["rows"]} == {"ExecutorState::Process", "MatMul", "Relu"}
    status, summary = client.get("summary", **q)
    assert status == 200 and summary["framework"] == "generic"
    assert [item["id"] for item in summary["limitations"]] == ["generic_trace", "no_steps", "no_launch_links",
                                                               "no_memory"]


def test_a_torch_trace_states_only_what_it_lacks(tmp_path: Path) -> None:
    from handmade import gpu_step_trace

    model = load_trace(str(write(tmp_path / "w.1.pt.trace.json", gpu_step_trace())))
    assert _ids(model) == []
    doc = gpu_step_trace()
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in ("kernel", "gpu_memcpy")]
    doc["traceEvents"].append({"ph": "X", "cat": "mystery", "name": "m", "pid": 1, "tid": 1, "ts": 0, "dur": 1})
    doc["traceEvents"].append({"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 0})
    lacking = load_trace(str(write(tmp_path / "w.2.pt.trace.json", doc)))
    texts = {item["id"]: item["text"] for item in span_summary(lacking)["limitations"]}
    assert list(texts) == ["no_device", "unknown_categories", "skipped_phases"]
    assert "mystery (1)" in texts["unknown_categories"] and "'P' (1)" in texts["skipped_phases"]
