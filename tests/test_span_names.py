"""Span names for people: start time (wall clock), steps and length in the runs answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.runs.span_names import span_facts, wall_time_s

from conftest import copy_trace, real_trace
from handmade import trace, write, x

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def test_wall_time_adds_the_base_time_and_rejects_relative_clocks(tmp_path: Path) -> None:
    events = [x("ProfilerStep#3", 1_000, 500, cat="user_annotation"), x("ProfilerStep#4", 1_600, 400, cat="user_annotation")]
    based = load_trace(str(write(tmp_path / "a.json", trace(events, baseTimeNanoseconds=1_700_000_000_000_000_000))))
    assert wall_time_s(based) == pytest.approx(1_700_000_000.001)
    facts = span_facts(based)
    assert facts["steps"] == {"count": 2, "first": 3, "last": 4, "left_out": 0}
    assert facts["duration"] == 1_000  # µs, 1000 → 2000
    relative = load_trace(str(write(tmp_path / "b.json", trace(events))))
    assert wall_time_s(relative) is None  # 1 ms after 1970: not a wall clock


def test_manifest_facts_before_the_model_loads() -> None:
    assert span_facts(None, {"wall_time": 1_795_303_454.06, "step_range": [2, 4]}) == {
        "start_time": 1_795_303_454.06, "duration": None, "steps": {"count": 3, "first": 2, "last": 4}, "device": None}
    assert span_facts(None, {"wall_time": "x", "step_range": [4, 2]}) == {"start_time": None, "duration": None,
                                                                         "steps": None, "device": None}


def test_runs_answer_lists_the_facts(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
    client = make_client(logdir)
    client.settle()
    status, runs = client.get("runs")
    assert status == 200
    (info,) = runs["runs"][0]["workers"][0]["span_info"]
    # torch 2.x: times relative to baseTimeNanoseconds; the span name is the handler's wall clock in ns.
    assert info["start_time"] == pytest.approx(1795303442092317655 / 1e9, abs=0.5)
    assert info["steps"] == {"count": 3, "first": 2, "last": 4, "left_out": 0}
    status, summary = client.get("summary", run="mlp", worker="worker0")
    assert info["duration"] == pytest.approx(summary["duration"])


@pytest.mark.parametrize("trace_file, expected", [
    (MLP, "CPU"),  # torch 2.13 CPU build: no device work
    ("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", "Tesla V100-DGXS-32GB"),  # its kernels run on device 0 of 4 listed
    ("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "AMD Radeon Graphics"),  # its deviceProperties' name
    ("mindspore/ascend_run_2_profiler/ascend_timeline_display_1.json", "Ascend"),  # no deviceProperties: its kind
])
def test_the_device_a_span_ran_on(trace_file: str, expected) -> None:
    model = load_trace(str(real_trace(trace_file)))
    assert span_facts(model)["device"] == expected
