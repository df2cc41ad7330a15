"""MindSpore input: the real CPU profiler output of tests/data/mindspore_cpu.

Each span folder (``<host>_<pid>_<ts>_ascend_ms``) holds the timeline
(``ASCEND_PROFILER_OUTPUT/trace_view.json``) and MindSpore's own statistics of the same kernel
executions (``FRAMEWORK/cpu_op_detail_info_0.csv`` per operator, ``cpu_op_type_info_0.csv`` per
operator type). The reference numbers are parsed from those CSVs here, never copied into the test.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.store import discovery
from profscope.tb_plugin import layout
from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace, load_trace_stream
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.ingest.chrome.events import times_ns
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views import operators, overview

from conftest import copy_trace, real_trace

TOLERANCE = 0.02
ROOT = "mindspore_cpu"
GRAPH = "graph_cnn_legacy_profiler"
PYNATIVE = "pynative_mlp_profile_sched"
# "Default/network-WithLossCell/.../Conv2D-op0" or PyNative's bare "MatMul": the type is the last
# scope component without its "-op<N>" instance suffix.
_INSTANCE_SUFFIX = re.compile(r"-op\d+$")


def _span_folders(run: str) -> list[Path]:
    return sorted(real_trace(f"{ROOT}/{run}").glob("*_ascend_ms"))


def _all_span_folders() -> list[Path]:
    return _span_folders(GRAPH) + _span_folders(PYNATIVE)


def _span_params() -> list[Path]:
    """The span folders to parametrize over."""
    spans = _all_span_folders()
    assert len(spans) == 3, spans  # graph mode's one span, PyNative's two
    return spans


def _timeline(span_folder: Path) -> Path:
    return span_folder / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _op_type(name: str) -> str:
    return _INSTANCE_SUFFIX.sub("", name.rsplit("/", 1)[-1])


def _by_name(span_folder: Path) -> dict[str, tuple[int, float]]:
    """MindSpore's per-operator statistics: full scope name → (calls, total µs)."""
    out: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for row in _read_csv(span_folder / "FRAMEWORK" / "cpu_op_detail_info_0.csv"):
        entry = out[row["full_op_name"]]
        entry[0] += int(row["op_occurrences"])
        entry[1] += float(row["op_total_time(ms)"]) * 1000.0
    return {name: (int(calls), total) for name, (calls, total) in out.items()}


def _by_type(span_folder: Path) -> dict[str, tuple[int, float]]:
    """MindSpore's per-type statistics: op type → (calls, total µs)."""
    return {
        row["op_type"]: (int(row["type_occurrences"]), float(row["total_compute_time"]) * 1000.0)
        for row in _read_csv(span_folder / "FRAMEWORK" / "cpu_op_type_info_0.csv")
    }


def _assert_close(ours: float, reference: float, what: str) -> None:
    assert abs(ours - reference) <= TOLERANCE * abs(reference), f"{what}: {ours} vs {reference}"


def test_both_runs_are_discovered_with_their_spans() -> None:
    root = real_trace(ROOT)
    found = [s for s in discovery.scan_logdir(str(root)) if s.layout == "mindspore"]
    expected = []
    for run in (GRAPH, PYNATIVE):
        for folder in _span_folders(run):
            host, pid, stamp, _, _ = folder.name.split("_")
            expected.append((run, f"{host}_{pid}", stamp, str(_timeline(folder))))
    assert sorted((s.run, s.worker, s.span, s.path) for s in found) == sorted(expected)
    assert all(s.framework == "mindspore" for s in found)
    spans = [s.span for s in sorted(found, key=lambda s: layout.span_sort_key(s.span)) if s.run == PYNATIVE]
    assert len(spans) == 2 and spans[0] < spans[1]


def test_span_folder_names(tmp_path: Path) -> None:
    parse = layout.parse_mindspore_trace_path
    parsed = parse("vm_23552_20261121232248756_ascend_ms", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    assert parsed is not None and (parsed.worker, parsed.span, parsed.framework) == (
        "vm_23552", "20261121232248756", "mindspore")
    renamed = parse("node3_rank_5_20261121232248756_ascend_ms", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    assert renamed is not None and renamed.worker == "rank5"
    assert parse("ranking_1_20261121232248756_ascend_ms", "ASCEND_PROFILER_OUTPUT", "trace_view.json").worker == \
        "ranking_1"
    assert parse("vm_1_2_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json") is None  # torch_npu's folders
    assert parse("vm_1_2_ascend_ms", "FRAMEWORK", "trace_view.json") is None
    assert parse("vm_1_2_ascend_ms", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv") is None


def test_mindspore_spans_beside_other_layouts(tmp_path: Path) -> None:
    """A MindSpore run nested in a logdir with a torch run; several span folders are one run's spans."""
    logdir = tmp_path / "logdir"
    for folder in _span_folders(PYNATIVE):
        copy_trace(_timeline(folder), logdir / "exp" / "ms" / folder.name / layout.MINDSPORE_OUTPUT_FOLDER)
    rank_folder = logdir / "exp" / "ms_ranks" / "rank_1_20261121232250208_ascend_ms" / layout.MINDSPORE_OUTPUT_FOLDER
    copy_trace(_timeline(_span_folders(GRAPH)[0]), rank_folder)
    torch_trace = next(real_trace("torch213/mlp_train_sched").glob("*.pt.trace.json.gz"))
    copy_trace(torch_trace, logdir / "torch")
    # Not a MindSpore span folder: a trace_view.json outside an *_ascend_ms folder is any Chrome trace (found by
    # its first bytes); one elsewhere inside a span folder is a side file of that folder.
    copy_trace(_timeline(_span_folders(GRAPH)[0]), logdir / "loose")
    copy_trace(_timeline(_span_folders(GRAPH)[0]), logdir / "x_1_2_ascend_ms" / "OTHER")
    table = sorted((s.run, s.worker, s.span, s.layout) for s in discovery.scan_logdir(str(logdir)))
    stamps = [f.name.split("_")[2] for f in _span_folders(PYNATIVE)]
    assert table == sorted([
        ("exp/ms", "vm_23552", stamps[0], "mindspore"),
        ("exp/ms", "vm_23552", stamps[1], "mindspore"),
        ("exp/ms_ranks", "rank1", "20261121232250208", "mindspore"),
        ("loose", "trace_view", "trace_view.json", "chrome"),
        ("torch", torch_trace.name.split(".")[0], torch_trace.name.split(".")[1], "torch"),
    ])


@pytest.mark.parametrize("span_folder", _span_params(), ids=lambda p: p.name)
def test_timeline_agrees_with_mindspore_statistics(span_folder: Path) -> None:
    """Calls and total time per operator and per type, against MindSpore's own CSVs (within 2%).

    The CSVs count the same kernel executions as the timeline's "CPU OP" slices; operators do not
    nest there, so an operator's total and self time are equal.
    """
    model = load_trace(str(_timeline(span_folder)))
    assert model.framework == "mindspore"
    table = operators.operators(model)
    ours = {row["name"]: (row["calls"], row["host_total"], row["host_self"]) for row in table["rows"]}
    reference = _by_name(span_folder)
    assert set(ours) == set(reference)
    for name, (calls, total_us) in reference.items():
        our_calls, our_total, our_self = ours[name]
        assert our_calls == calls, name
        _assert_close(our_total, total_us, name)
        assert our_self == pytest.approx(our_total)
    by_type: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for name, (calls, total, _self) in ours.items():
        by_type[_op_type(name)][0] += calls
        by_type[_op_type(name)][1] += total
    type_reference = _by_type(span_folder)
    assert set(by_type) == set(type_reference)
    for op_type, (calls, total_us) in type_reference.items():
        assert by_type[op_type][0] == calls, op_type
        _assert_close(by_type[op_type][1], total_us, op_type)
    # The detail CSV's own op_type column says the same as the names' last component.
    for row in _read_csv(span_folder / "FRAMEWORK" / "cpu_op_detail_info_0.csv"):
        assert _op_type(row["full_op_name"]) == row["op_type"]


@pytest.mark.parametrize("span_folder", _span_params(), ids=lambda p: p.name)
def test_slices_tracks_and_exact_times(span_folder: Path) -> None:
    path = _timeline(span_folder)
    model = load_trace(str(path))
    events = json.loads(path.read_text())
    complete = [e for e in events if e.get("ph") == "X"]
    assert len(model.slices) == len(complete)
    kinds = SliceKinds(model)
    cpu_ops = [e for e in complete if e["pid"] == 2]
    assert int(kinds.operator.sum()) == len(cpu_ops)
    assert bool(kinds.host_op.all())  # operators and scopes are host ranges
    process_of_track = {t.id: t.process_name for t in model.tracks}
    threads = {(t.process_name, t.thread_name) for t in model.tracks}
    expected_threads = set()
    names = {}
    for e in events:
        if e.get("ph") == "M" and e["name"] in ("process_name", "thread_name"):
            names[(e["name"], e["pid"], e["tid"] if e["name"] == "thread_name" else None)] = e["args"]["name"]
    for e in complete:
        expected_threads.add((names[("process_name", e["pid"], None)], names[("thread_name", e["pid"], e["tid"])]))
    assert threads == expected_threads
    scope_rows = np.flatnonzero(np.array([process_of_track[t] == "Scope Layer" for t in model.slices.track]))
    assert len(scope_rows) == len(complete) - len(cpu_ops)
    # Times are exact to the ns (a float64 of epoch µs is only good to 0.25 µs).
    starts_ns, bad = times_ns([e["ts"] for e in complete])
    ends_ns = starts_ns + times_ns([e["dur"] for e in complete])[0]
    assert bad is None
    assert sorted(model.slices.start.tolist()) == sorted(starts_ns.tolist())
    assert sorted(model.slices.end.tolist()) == sorted(ends_ns.tolist())
    # No steps in the CPU profiler's timeline: the whole span is one step.
    assert len(model.steps) == 0
    summary = overview.overview(model)
    assert summary["step_source"] == "span" and len(summary["steps"]) == 1
    assert summary["breakdown"]["cpu_exec"] > 0


def test_string_times_are_read_exactly_and_invalid_ones_are_counted() -> None:
    ns, bad = times_ns(["1795303374563996.947", "296.605", "-12.5", "7", "0.0001", "1e3", 2.5, "abc", ""])
    assert ns[:7].tolist() == [1795303374563996947, 296605, -12500, 7000, 0, 1000000, 2500]
    assert bad is not None and bad.tolist() == [False] * 7 + [True, True]


def test_detection_by_content() -> None:
    for folder in _all_span_folders():
        head = _timeline(folder).read_bytes()[:HEAD_BYTES]
        assert detect_framework(head, "") == "mindspore"
        assert detect_framework(head, "trace_view.json") == "mindspore"
    # One marker alone (string times) is not enough.
    lone = b'[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1.5", "dur": "2"}]'
    assert detect_framework(lone, "trace_view.json") == "generic"
    assert load_trace_stream(lambda: io.BytesIO(lone), "trace_view.json").framework == "generic"


def test_truncated_timeline_gives_its_run_an_error_only(tmp_path: Path, make_client) -> None:
    span = _span_folders(GRAPH)[0]
    data = _timeline(span).read_bytes()
    truncated = tmp_path / "truncated_src" / layout.MINDSPORE_TRACE_FILE
    truncated.parent.mkdir()
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceLoadError):
        load_trace(str(truncated))
    logdir = tmp_path / "logdir"
    copy_trace(truncated, logdir / "truncated" / span.name / layout.MINDSPORE_OUTPUT_FOLDER)
    copy_trace(_timeline(span), logdir / "good" / span.name / layout.MINDSPORE_OUTPUT_FOLDER)
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert runs["good"]["status"] == "ready", runs["good"]
    assert runs["truncated"]["status"] == "error" and runs["truncated"]["error"], runs["truncated"]
    worker = runs["good"]["workers"][0]
    assert worker["name"] == "vm_23716"
    status, summary = client.get("summary", run="good", worker=worker["name"])
    assert status == 200 and summary["framework"] == "mindspore", summary


def _record_peak_inside_timeline(span_folder: Path) -> int:
    """The highest Total Allocated of the span's memory record within its timeline's time range (read here)."""
    events = json.loads(_timeline(span_folder).read_text())
    starts = [float(e["ts"]) for e in events if e.get("ph") == "X"]
    ends = [float(e["ts"]) + float(e["dur"]) for e in events if e.get("ph") == "X"]
    lo_ns, hi_ns = min(starts) * 1000, max(ends) * 1000
    record = next((span_folder / "FRAMEWORK").glob("cpu_ms_memory_record_*.txt"))
    rows = _read_csv(record)
    return max(int(r["Total Allocated(Byte)"]) for r in rows if lo_ns <= int(r["Timestamp(ns)"]) <= hi_ns)


def test_memory_record_reaches_the_memory_view(tmp_path: Path, make_client) -> None:
    """The plugin finds FRAMEWORK/cpu_ms_memory_record_<id>.txt beside the timeline and shows its peak."""
    import shutil

    run = "graph_cnn_legacy_profiler"
    span_folder = _span_folders(run)[0]
    shutil.copytree(span_folder, tmp_path / run / span_folder.name)
    sources = discovery.scan_logdir(str(tmp_path))
    assert [Path(c[0]).name for c in sources[0].companions] == ["cpu_ms_memory_record_0.txt"]
    client = make_client(tmp_path)
    client.settle()
    status, body = client.get("runs")
    worker = body["runs"][0]["workers"][0]
    status, memory = client.get("memory", run=run, worker=worker["name"], span=worker["spans"][0])
    assert status == 200, memory
    assert memory["peak"]["cpu"]["allocated"] == _record_peak_inside_timeline(span_folder)

    # A damaged record is left out with a note; the span still loads.
    record = next((tmp_path / run / span_folder.name / "FRAMEWORK").glob("cpu_ms_memory_record_*.txt"))
    record.write_text("not,a,memory,record\n1,2,3,4\n")
    broken = discovery.scan_logdir(str(tmp_path))[0]
    from profscope.tb_plugin.ingest.load import read_companions

    model = load_trace_stream(lambda: open(broken.path, "rb"), layout.MINDSPORE_TRACE_FILE,
                              companions=read_companions(lambda p: open(p, "rb"), [c[0] for c in broken.companions]))
    assert len(model.instants) == 0
    assert any("cpu_ms_memory_record_0.txt was not used" in note for note in model.stats["notes"])


def test_what_is_missing_is_said_in_mindspores_words(tmp_path: Path) -> None:
    """A MindSpore span is told how to record with mindspore.profiler.profile, not with torch.profiler."""
    from profscope.tb_plugin.views import modules, stacks
    from profscope.tb_plugin.views.analyses import annotations
    from profscope.tb_plugin.views.memory import memory
    from profscope.tb_plugin.views.runs.summary import span_summary

    from handmade import write

    folder = real_trace("mindspore_cpu/pynative_mlp_profile_sched")
    model = load_trace(str(next(folder.glob("*/ASCEND_PROFILER_OUTPUT/trace_view.json"))))
    assert model.framework == "mindspore"
    texts = [note["text"] for note in span_summary(model)["limitations"]]
    texts += [modules.modules(model).get("hint") or "", annotations.annotations(model).get("reason") or "",
              stacks.flamegraph(model).get("note") or ""]
    without_memory = load_trace(str(write(tmp_path / "trace_view.json",
                                          [{"name": "MatMul", "ph": "X", "pid": 1, "tid": 1, "ts": "1.0",
                                            "dur": "2.0", "args": {}},
                                           {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "CPU OP"}}])))
    assert without_memory.framework == "mindspore"
    texts.append(memory(without_memory)["hint"])
    assert not any("torch" in text for text in texts), texts
    assert any("mindspore.profiler.profile(schedule=" in text for text in texts)  # its steps
    assert "mindspore.profiler.profile(profile_memory=True)" in texts[-1]
