"""The trace viewer's area selection: slices by name per track kind, with time and self time inside the range."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.overview import CATEGORIES, overview
from profscope.tb_plugin.views.trace.range_summary import range_summary

from conftest import copy_trace, real_trace
from handmade import gpu_step_trace, trace, write, x
from test_routes import check

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def by_key(answer):
    return {(r["kind"], r["name"]): r for r in answer["rows"]}


def test_clipped_total_and_self_time(tmp_path: Path) -> None:
    # outer 100..500 holds inner 150..250 and inner 300..450; a GPU kernel 200..400.
    doc = trace([
        x("outer", 100, 400), x("inner", 150, 100), x("inner", 300, 150),
        x("kern", 200, 200, cat="kernel", pid=0, tid=7, args={"device": 0, "stream": 7}),
        x("elsewhere", 600, 50),
    ])
    model = load_trace(str(write(tmp_path / "t.json", doc)))
    answer = range_summary(model, 200, 350)
    rows = by_key(answer)
    assert set(rows) == {("cpu", "outer"), ("cpu", "inner"), ("gpu", "kern")}
    # outer inside 200..350: 150 µs; its children inside: inner 200..250 (50) + inner 300..350 (50).
    assert rows[("cpu", "outer")] == {"kind": "cpu", "name": "outer", "count": 1, "total": 150.0, "self": 50.0}
    assert rows[("cpu", "inner")] == {"kind": "cpu", "name": "inner", "count": 2, "total": 100.0, "self": 100.0}
    assert rows[("gpu", "kern")]["total"] == 150.0
    assert answer["rows"][0]["name"] in ("outer", "kern")  # largest total first
    assert answer["slices"] == 4
    assert {k["kind"]: k["slices"] for k in answer["kinds"]} == {"cpu": 3, "gpu": 1}
    # Only the GPU track: the CPU slices drop out.
    gpu_track = next(f"s{t.id}" for t in model.tracks if t.kind == "gpu")
    assert set(by_key(range_summary(model, 200, 350, [gpu_track]))) == {("gpu", "kern")}
    with pytest.raises(ValueError):
        range_summary(model, 350, 200)


def test_steps_inside_the_range_are_the_overviews(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "g.json", gpu_step_trace())))
    whole = range_summary(model, 0, 2000)
    steps = whole["steps"]
    ov = overview(model)
    assert steps["count"] == 1 and steps["partial"] == 0 and steps["names"] == ["ProfilerStep#7"]
    for category in CATEGORIES:
        assert steps["breakdown"][category] == pytest.approx(ov["breakdown"][category])
    assert steps["mean_step_time"] == pytest.approx(ov["mean_step_time"])
    # A range inside the step: the step is partial, and the range's own breakdown sums to its length.
    part = range_summary(model, 200, 600)
    assert part["steps"]["count"] == 0 and part["steps"]["partial"] == 1 and part["steps"]["breakdown"] is None
    assert sum(part["breakdown"].values()) == pytest.approx(400)
    assert part["breakdown"]["kernel"] == pytest.approx(400)  # the kernel runs 200..600


def test_route_json_and_csv(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
    client = make_client(logdir)
    client.settle()
    _, summary = client.get("summary", run="mlp", worker="worker0")
    step = summary["steps"][1]
    status, answer = client.get("trace/range", run="mlp", worker="worker0", start=step["start"],
                                end=step["start"] + step["dur"])
    assert status == 200
    check(answer, "RangeSummary")
    assert answer["slices"] > 0 and answer["rows"]
    assert answer["steps"]["count"] >= 1
    response = client.client.get("/data/plugin/profscope/trace/range", query_string={
        "run": "mlp", "worker": "worker0", "start": step["start"], "end": step["start"] + step["dur"],
        "format": "csv", "sort": "count:desc", "filter": "aten"})
    assert response.status_code == 200
    lines = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert lines[0] == ["Track kind", "Name", "Slices", "Time in range (us)", "Self time in range (us)"]
    expected = sorted((r for r in answer["rows"] if "aten" in r["name"].lower()), key=lambda r: -r["count"])
    assert [line[1] for line in lines[1:]] == [r["name"] for r in expected]
    assert client.get("trace/range", run="mlp", worker="worker0", start=5)[0] == 400
    assert client.get("trace/range", run="mlp", worker="worker0", start=5, end=1)[0] == 400
