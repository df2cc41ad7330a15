"""PaddlePaddle input: the real traces of tests/data/paddle against Paddle's own summaries.

Each run folder holds what ``prof.summary(op_detail=True)`` printed for each span
(``summary.txt`` / ``summary_span<N>.txt``) and the benchmark's ``perf_summary.txt``. The
reference numbers are parsed from those texts here, never copied into the test.
"""

from __future__ import annotations

import gzip
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.store import discovery
from profscope.tb_plugin import layout
from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace
from profscope.tb_plugin.ingest.paddle import device_of_place, strip_duration
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views import memory, operators, overview

from conftest import copy_trace, real_trace

TOLERANCE = 0.02
# Paddle prints milliseconds with two decimals: below this total, its rounding alone exceeds 2%.
MIN_COMPARABLE_MS = 0.5

# (run folder, trace file, Paddle's summary of that span)
SPANS = [
    ("linear_sched_2_10", "host_vmpid_23377_time_2026_11_21_23_22_29_386961.paddle_trace.json", "summary.txt"),
    ("cnn_multi_span", "host_vmpid_23396_time_2026_11_21_23_22_33_378244.paddle_trace.json", "summary_span1.txt"),
    ("cnn_multi_span", "host_vmpid_23396_time_2026_11_21_23_22_33_592455.paddle_trace.json", "summary_span2.txt"),
]


@dataclass(frozen=True)
class SummaryRow:
    name: str
    depth: int  # 0 for a top-level row, 1 for a row indented under it
    calls: int
    total_ms: float
    avg_ms: float


_ROW = re.compile(
    r"^(?P<indent> *)(?P<name>\S.*?)\s{2,}(?P<calls>\d+|-)\s+"
    r"(?P<total>[\d.]+) / (?P<avg>[\d.]+|-) / "
)

_OVERVIEW_ROW = re.compile(r"^ProfileStep\s+(?P<calls>\d+)\s+(?P<total>[\d.]+)\s+[\d.]+\s*$")


def _section(text: str, title: str) -> list[str]:
    """The table lines of one summary section (between its header rule and the closing rule)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"^-+{re.escape(title)}-+$", line))
    body: list[str] = []
    for line in lines[start + 1 :]:
        if re.match(r"^-+[A-Za-z].*Summary-+$", line):
            break
        body.append(line)
    return body


def _rows(lines: list[str]) -> list[SummaryRow]:
    rows = []
    for line in lines:
        m = _ROW.match(line)
        if m and m["calls"] != "-":
            rows.append(SummaryRow(m["name"], len(m["indent"]) // 2, int(m["calls"]), float(m["total"]),
                                   float(m["avg"])))
    return rows


def _summary(run: str, name: str) -> str:
    return real_trace(f"paddle/{run}/{name}").read_text()


def _load(run: str, trace: str) -> TraceModel:
    return load_trace(str(real_trace(f"paddle/{run}/{trace}")))


def _close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= TOLERANCE * abs(theirs)


@pytest.mark.parametrize("run,trace,summary", SPANS)
def test_paddle_trace_loads_with_paddle_conventions(run: str, trace: str, summary: str) -> None:
    model = _load(run, trace)
    assert model.framework == "paddle"
    assert len(model.slices) > 0
    names = {model.strings[i] for i in set(model.slices.name.tolist())}
    assert not any(re.search(r"\[[\d.]+ ?(ns|us|ms|s)\]$", n) for n in names), "duration decoration left"
    assert model.stats["empty_events"] == 1 and model.stats["skipped_phases"] == {}
    assert model.stats["unknown_categories"] == {}
    # One track per Paddle thread, named by Paddle's thread_name metadata.
    thread_names = sorted(t.thread_name for t in model.tracks)
    assert any(n.endswith("(Python)") for n in thread_names) and any(n.endswith("(C++)") for n in thread_names)
    assert all(t.kind == "cpu" for t in model.tracks)
    # Sub-µs starts: every slice lies inside its parent.
    s = model.slices
    has_parent = s.parent >= 0
    parents = s.parent[has_parent]
    assert (s.start[has_parent] >= s.start[parents]).all()
    assert (s.end[has_parent] <= s.end[parents]).all()


@pytest.mark.parametrize("run,trace,summary", SPANS)
def test_steps_agree_with_paddle_overview(run: str, trace: str, summary: str) -> None:
    text = _summary(run, summary)
    (step,) = [r for r in _rows(_section(text, "Model Summary")) if r.name == "ProfileStep"]
    # Overview rows are "Event Type  Calls  CPU Time  Ratio (%)".
    (overview_step,) = [m for m in map(_OVERVIEW_ROW.match, _section(text, "Overview Summary")) if m]
    overview_calls, overview_total_ms = int(overview_step["calls"]), float(overview_step["total"])
    assert overview_calls == step.calls
    result = overview.overview(_load(run, trace))
    assert len(result["steps"]) == step.calls
    mean_ms = result["mean_step_time"] / 1000.0
    assert _close(mean_ms, step.avg_ms), (mean_ms, step.avg_ms)
    assert _close(mean_ms * step.calls, overview_total_ms), (mean_ms * step.calls, overview_total_ms)


@pytest.mark.parametrize("run,trace,summary", SPANS)
def test_operator_table_agrees_with_paddle_operator_summary(run: str, trace: str, summary: str) -> None:
    reference = [r for r in _rows(_section(_summary(run, summary), "Operator Summary")) if r.depth == 0]
    assert len(reference) >= 5
    model = _load(run, trace)
    ours = {row["name"]: row for row in operators.operators(model)["rows"]}
    compared = 0
    for ref in reference:
        assert ref.name in ours, ref.name
        assert ours[ref.name]["calls"] == ref.calls, ref
        if ref.total_ms >= MIN_COMPARABLE_MS:
            # A known difference of definition: Paddle adds the time of a call nested in a call of the
            # same name (``divide`` inside ``divide``) twice; our total counts the outer call once.
            total_ms = (ours[ref.name]["host_total"] + _nested_in_same_name_us(model, ref.name)) / 1000.0
            assert _close(total_ms, ref.total_ms), (ref, total_ms)
            compared += 1
    assert compared >= 3


def _nested_in_same_name_us(model: TraceModel, name: str) -> float:
    s = model.slices
    name_id = model.strings.index(name)
    rows = np.flatnonzero((s.name == name_id) & (s.parent >= 0))
    nested = rows[s.name[s.parent[rows]] == name_id]
    return float(s.dur[nested].sum()) / 1000.0


# The spans recorded with profile_memory (linear_sched_2_10 was not: its summary has no Memory Summary).
MEMORY_SPANS = [span for span in SPANS if span[0] == "cnn_multi_span"]


@pytest.mark.parametrize("run,trace,summary", MEMORY_SPANS)
def test_memory_peak_agrees_with_paddle_memory_summary(run: str, trace: str, summary: str) -> None:
    text = _summary(run, summary)
    found = re.search(r"^Peak Allocated Memory: (\d+)$", text, re.MULTILINE)
    assert found is not None, "the summary of a span recorded with profile_memory has its peak"
    peak = memory.memory(_load(run, trace))["peak"]
    assert peak["cpu"]["allocated"] == int(found.group(1))


@pytest.mark.parametrize("run,trace,summary", SPANS)
def test_user_defined_ranges_agree_with_paddle_user_defined_summary(run: str, trace: str, summary: str) -> None:
    """RecordEvent ranges: the trace keeps each call, with the calls and total Paddle prints."""
    reference = [r for r in _rows(_section(_summary(run, summary), "UserDefined Summary")) if r.depth == 0]
    assert reference
    model = _load(run, trace)
    s = model.slices
    for ref in reference:
        rows = np.flatnonzero(s.name == model.strings.index(ref.name))
        assert len(rows) == ref.calls, ref
        assert _close(float(s.dur[rows].sum()) / 1e6, ref.total_ms), ref


@pytest.mark.parametrize("run", ["linear_sched_2_10", "cnn_multi_span"])
def test_batch_cost_of_perf_summary(run: str) -> None:
    """perf_summary.txt's batch_cost averages every step of the job (profiled or not, warm-up included),
    so it is only compared loosely: same order of magnitude as our mean step time."""
    perf = _summary(run, "perf_summary.txt")
    batch_cost_s = float(re.search(r"\|\s*batch_cost\s*\|\s*([\d.]+)", perf).group(1))
    spans = [t for r, t, _ in SPANS if r == run]
    means = [overview.overview(_load(run, t))["mean_step_time"] / 1e6 for t in spans]
    for mean_s in means:
        assert batch_cost_s / 3 < mean_s < batch_cost_s * 3, (mean_s, batch_cost_s)


def test_memory_events_use_paddle_arguments() -> None:
    run, trace, _ = SPANS[1]
    model = _load(run, trace)
    inst = model.instants
    memory = inst.total_allocated >= 0
    assert memory.sum() == 568  # every Allocate and Free event of this span
    assert (inst.addr[memory] > 0).all()
    allocate = model.strings.index("Allocate")
    free = model.strings.index("Free")
    assert (inst.bytes[memory & (inst.cat == allocate)] > 0).all()
    assert (inst.bytes[memory & (inst.cat == free)] < 0).all()
    assert (inst.device_type[memory] == 0).all() and (inst.device_id[memory] == -1).all()


def test_helpers() -> None:
    assert strip_duration("conv2d dygraph[1.234 ms]") == "conv2d dygraph"
    assert strip_duration("ProfileStep#3[12.958 ms]") == "ProfileStep#3"
    assert strip_duration("[memory]") == "[memory]"
    assert device_of_place("Place(cpu)") == (0, -1)
    assert device_of_place("Place(gpu:1)") == (1, 1)


def test_paddle_file_names() -> None:
    parsed = layout.parse_paddle_trace_name("host_vmpid_1_time_2026_11_21_23_22_29_386961.paddle_trace.json.gz")
    assert parsed is not None
    assert (parsed.worker, parsed.span, parsed.framework, parsed.gzipped) == (
        "host_vmpid_1", "20261121232229386961", "paddle", True)
    assert layout.parse_paddle_trace_name("host_time_2026_11_21.paddle_trace.pb") is None
    assert layout.parse_paddle_trace_name("worker0.123.pt.trace.json") is None


def test_discovery_finds_paddle_runs_and_ignores_pb(tmp_path: Path) -> None:
    root = real_trace("paddle")
    for run in ("linear_sched_2_10", "cnn_multi_span"):
        for src in (root / run).iterdir():
            copy_trace(src, tmp_path / run)
    sources = discovery.scan_logdir(str(tmp_path))
    assert {s.run for s in sources} == {"linear_sched_2_10", "cnn_multi_span"}
    assert all(s.framework == "paddle" and s.layout == "paddle" for s in sources)
    assert all(s.path.endswith(".paddle_trace.json") for s in sources)
    cnn = sorted(s.span for s in sources if s.run == "cnn_multi_span")
    assert len(cnn) == 2 and {s.worker for s in sources} == {"host_vmpid_23377", "host_vmpid_23396"}


def test_runs_route_reports_paddle(tmp_path: Path, make_client) -> None:
    run, trace, _ = SPANS[0]
    copy_trace(real_trace(f"paddle/{run}/{trace}"), tmp_path / run)
    pb = next(real_trace(f"paddle/{run}").glob("*.pb"))
    copy_trace(pb, tmp_path / run)
    # A gzipped copy in another run is read the same way.
    gz_dir = tmp_path / "gz"
    gz_dir.mkdir()
    with open(real_trace(f"paddle/{run}/{trace}"), "rb") as src, gzip.open(gz_dir / (trace + ".gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    copy_trace(gz_dir / (trace + ".gz"), tmp_path / "gz_run")
    shutil.rmtree(gz_dir)
    client = make_client(tmp_path)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert sorted(runs) == ["gz_run", run]
    for entry in runs.values():
        assert entry["status"] == "ready" and entry["framework"] == "paddle", entry
        assert len(entry["workers"][0]["spans"]) == 1


def test_bad_paddle_files_give_a_per_run_error(tmp_path: Path, make_client) -> None:
    run, trace, _ = SPANS[0]
    data = real_trace(f"paddle/{run}/{trace}").read_bytes()
    truncated = tmp_path / "truncated_src" / trace
    truncated.parent.mkdir()
    truncated.write_bytes(data[: len(data) // 2])
    pb = next(real_trace(f"paddle/{run}").glob("*.pb"))
    renamed = tmp_path / "pb_src" / pb.name.replace(".pb", ".json")
    renamed.parent.mkdir()
    renamed.write_bytes(pb.read_bytes())
    for path in (truncated, renamed):
        with pytest.raises(TraceLoadError):
            load_trace(str(path))
    logdir = tmp_path / "logdir"
    copy_trace(truncated, logdir / "truncated")
    copy_trace(renamed, logdir / "renamed_pb")
    copy_trace(real_trace(f"paddle/{run}/{trace}"), logdir / "good")
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert runs["good"]["status"] == "ready"
    for name in ("truncated", "renamed_pb"):
        assert runs[name]["status"] == "error" and runs[name]["error"], runs[name]
