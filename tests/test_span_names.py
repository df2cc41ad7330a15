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
    assert facts["steps"] == {"count": 2, "first": 3, "last": 4}
    assert facts["duration"] == 1_000  # µs, 1000 → 2000
    relative = load_trace(str(write(tmp_path / "b.json", trace(events))))
    assert wall_time_s(relative) is None  # 1 ms after 1970: not a wall clock


def test_manifest_facts_before_the_model_loads() -> None:
    assert span_facts(None, {"wall_time": 1_795_303_454.06, "step_range": [2, 4]}) == {
        "start_time": 1_795_303_454.06, "duration": None, "steps": {"count": 3, "first": 2, "last": 4}}
    assert span_facts(None, {"wall_time": "x", "step_range": [4, 2]}) == {"start_time": None, "duration": None, "steps": None}


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
    assert info["steps"] == {"count": 3, "first": 2, "last": 4}
    status, summary = client.get("summary", run="mlp", worker="worker0")
    assert info["duration"] == pytest.approx(summary["duration"])
