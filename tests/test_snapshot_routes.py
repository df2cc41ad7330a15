"""Memory snapshots in a logdir: found by content, owned by run, worker and span, parsed once into the cache,
answered under ``memory_snapshot`` as the API description says, and hostile files refused in both servers."""

from __future__ import annotations

import json
import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest
from werkzeug import test as werkzeug_test

from profscope.tb_plugin import layout
from profscope.tb_plugin.server.serve import ROUTE_PREFIX, build_app
from profscope.tb_plugin.store import discovery

import snapshot_gen as gen
from conftest import PluginClient, copy_trace, real_trace
from openapi_contract import check_schema
from test_snapshot_reader import hostile_snapshots

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
MLP_STEM = "worker0.1795303442092317655"


def check(payload: Any, schema_name: str) -> None:
    check_schema(payload, schema_name)


def settled(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """A run with a trace and its snapshot (named as the trace), a run with snapshots only, a rank folder."""
    root = tmp_path / "logdir"
    copy_trace(real_trace(MLP), root / "mlp")
    settled(root / "mlp" / f"{MLP_STEM}.pickle", pickle.dumps(gen.training_snapshot(steps=2, stop_after_forward=True)))
    settled(root / "oom" / "snapshot.pickle",
            real_trace("memory_snapshots/expandable_oom.pickle").read_bytes())
    settled(root / "oom" / "rank1" / "memory_snapshot_step5.pkl",
            real_trace("memory_snapshots/training_ring_buffer.pickle").read_bytes())
    settled(root / "oom" / "notes.pickle", pickle.dumps({"hello": [1, 2]}))
    return root


@pytest.fixture
def client(logdir: Path, make_client) -> PluginClient:
    c = make_client(logdir)
    c.settle()
    return c


def test_discovery_finds_snapshots_by_content_and_owner(logdir: Path) -> None:
    result = discovery.scan(str(logdir))
    found = {(s.run, s.name): (s.worker, s.span) for s in result.snapshots}
    assert found == {
        ("mlp", f"{MLP_STEM}.pickle"): ("worker0", "1795303442092317655"),  # named as its span's trace
        ("oom", "snapshot.pickle"): (None, None),
        ("oom", "rank1/memory_snapshot_step5.pkl"): ("rank1", None),  # the folder names the rank
    }
    assert result.skipped.counts == {discovery.SKIP_NOT_A_SNAPSHOT: 1}
    assert [s.run for s in result.sources] == ["mlp"]  # snapshots are no spans


def test_the_writers_snapshot_belongs_to_its_span(tmp_path: Path) -> None:
    assets = tmp_path / "logdir" / "run" / "plugins" / "profscope"
    settled(assets / layout.writer_snapshot_name("w0", "17"), pickle.dumps(gen.training_snapshot(steps=1)))
    found = discovery.scan(str(tmp_path / "logdir")).snapshots
    assert [(s.run, s.worker, s.span, s.writer) for s in found] == [("run", "w0", "17", True)]


def test_runs_list_snapshots_and_snapshot_only_runs(client: PluginClient) -> None:
    status, runs = client.get("runs")
    assert status == 200
    check(runs, "Runs")
    by_name = {r["name"]: r for r in runs["runs"]}
    assert by_name["oom"]["workers"] == [] and by_name["oom"]["status"] == "ready"
    assert [s["name"] for s in by_name["oom"]["memory_snapshots"]] == ["rank1/memory_snapshot_step5.pkl",
                                                                        "snapshot.pickle"]
    assert by_name["mlp"]["memory_snapshots"][0]["span"] == "1795303442092317655"
    assert runs["skipped"]["reasons"] == {"pickle_not_a_memory_snapshot": 1}


def test_every_route_answers_as_described(client: PluginClient) -> None:
    status, overview = client.get("memory_snapshot", run="mlp")  # the run's one snapshot: nothing else needed
    assert status == 200
    check(overview, "MemorySnapshot")
    assert overview["linked"]["span"] == "1795303442092317655" and overview["linked"]["status"] == "ready"
    # The trace's clock: baseTimeNanoseconds of the trace, in µs, taken from the snapshot's epoch times.
    assert overview["linked"]["trace_offset_us"] is not None
    status, timeline = client.get("memory_snapshot/timeline", run="mlp", width=300)
    assert status == 200 and len(timeline["time"]) == 300
    check(timeline, "MemorySnapshotTimeline")
    status, at = client.get("memory_snapshot/at", run="mlp", group_by="annotation")
    assert status == 200
    check(at, "MemorySnapshotAt")
    status, allocation = client.get("memory_snapshot/allocation", run="mlp", id=at["largest"][0]["id"])
    assert status == 200 and allocation["size"] == at["largest"][0]["size"]
    check(allocation, "MemorySnapshotAllocation")
    status, segments = client.get("memory_snapshot/segments", run="oom", snapshot="snapshot.pickle")
    assert status == 200
    check(segments, "MemorySnapshotSegments")
    status, earlier = client.get("memory_snapshot/segments", run="oom", snapshot="snapshot.pickle", row=100)
    assert status == 200 and not earlier["exact"]
    check(earlier, "MemorySnapshotSegments")
    status, compare = client.get("memory_snapshot/compare", base_run="oom", base_worker="rank1", exp_run="mlp")
    assert status == 200
    check(compare, "MemorySnapshotCompare")
    status, oom = client.get("memory_snapshot", run="oom", snapshot="snapshot.pickle")
    assert status == 200 and oom["oom"][0]["requested"] == 3 << 30
    check(oom, "MemorySnapshot")


def test_the_first_answers_are_stored_by_the_parser(client: PluginClient) -> None:
    client.get("memory_snapshot", run="mlp")
    loaded = client.plugin.manager.snapshot("mlp")
    assert os.path.exists(loaded.model.cache_path + ".views.json")


@pytest.mark.parametrize("route, params, status, message", [
    ("memory_snapshot", {"run": "oom"}, 404, "several memory snapshots; name one with snapshot="),
    ("memory_snapshot", {"run": "nope"}, 404, "unknown run"),
    ("memory_snapshot", {"run": "mlp", "worker": "rank9"}, 404, "matches the request"),
    ("memory_snapshot", {}, 400, "missing parameter 'run'"),
    ("memory_snapshot/timeline", {"run": "mlp", "width": "0"}, 400, "width must be"),
    ("memory_snapshot/timeline", {"run": "mlp", "device": "7"}, 400, "has no device 7"),
    ("memory_snapshot/at", {"run": "mlp", "group_by": "nope"}, 400, "group_by must be"),
    ("memory_snapshot/at", {"run": "mlp", "row": "99999999"}, 400, "row must be"),
    ("memory_snapshot/allocation", {"run": "mlp", "id": "99999999"}, 400, "no allocation"),
    ("memory_snapshot/compare", {"base_run": "mlp", "exp_run": "nope"}, 404, "experiment: unknown run"),
])
def test_errors(client: PluginClient, route: str, params: dict[str, str], status: int, message: str) -> None:
    got, body = client.get(route, **params)
    assert got == status and message in body["error"], body
    check(body, "Error")


def test_csv_of_the_tables(client: PluginClient) -> None:
    response = client.client.get("/data/plugin/profscope/memory_snapshot/at",
                                 query_string={"run": "mlp", "format": "csv", "sort": "bytes:desc"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    lines = response.get_data(as_text=True).splitlines()
    assert lines[0].startswith("Group,Live bytes (bytes),Allocations")
    _, at = client.get("memory_snapshot/at", run="mlp")
    assert len(lines) == 1 + len(at["groups"])
    for table in ("segments", "blocks"):
        response = client.client.get("/data/plugin/profscope/memory_snapshot/segments", query_string={
            "run": "oom", "snapshot": "snapshot.pickle", "format": "csv", "table": table})
        assert response.status_code == 200
    response = client.client.get("/data/plugin/profscope/memory_snapshot/compare", query_string={
        "base_run": "mlp", "exp_run": "mlp", "format": "csv"})
    assert response.status_code == 200 and response.get_data(as_text=True).startswith("Site,")


def test_a_second_server_reads_the_cache_and_parses_nothing(logdir: Path, tmp_path: Path) -> None:
    first = PluginClient(logdir, tmp_path / "shared-cache")
    first.settle()
    assert first.get("memory_snapshot", run="mlp")[0] == 200
    first.close()
    second = PluginClient(logdir, tmp_path / "shared-cache")
    manager = second.plugin.manager
    manager.refresh()
    assert manager._pool is None or manager._pool.active_jobs() == 0
    status, _ = second.get("memory_snapshot", run="mlp")
    assert status == 200 and manager._pool is None  # served from the cache: no parser process was started
    second.close()


def _hostile_logdir(root: Path, target: Path) -> Path:
    for name, data in hostile_snapshots(target).items():
        settled(root / name / "snapshot.pickle", data)
    copy_trace(real_trace(MLP), root / "good")
    return root


def test_hostile_snapshots_fail_alone_in_tensorboard(tmp_path: Path, make_client) -> None:
    target = tmp_path / "created"
    client = make_client(_hostile_logdir(tmp_path / "logdir", target))
    client.settle()
    for name in hostile_snapshots(target):
        status, body = client.get("memory_snapshot", run=name)
        assert status == 422, (name, body)
        assert "refused and nothing in it was run" in body["error"]
    assert client.get("summary", run="good", worker="worker0")[0] == 200
    assert not target.exists()


def test_hostile_snapshots_fail_alone_in_profscope_serve(tmp_path: Path) -> None:
    target = tmp_path / "created"
    logdir = _hostile_logdir(tmp_path / "logdir", target)
    app = build_app(str(logdir), cache_dir=str(tmp_path / "cache"), refresh_seconds=0.5)
    client = werkzeug_test.Client(app)
    try:
        app.plugin.manager.wait_until_settled(120)
        for name in hostile_snapshots(target):
            response = client.get(f"{ROUTE_PREFIX}/memory_snapshot", query_string={"run": name})
            assert response.status_code == 422
            assert "refused and nothing in it was run" in response.get_json()["error"]
        assert client.get(f"{ROUTE_PREFIX}/runs").status_code == 200
    finally:
        app.plugin.manager.stop()
    assert not target.exists()


def test_summary_and_report_include_the_snapshot_peak(logdir: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """``profscope summary`` and ``report`` of a span with a snapshot: its peak and the sites alive then, as the
    memory_snapshot/at route counts them."""
    from profscope.tb_plugin.reports import cli
    from profscope.tb_plugin.views import memory_snapshot as view

    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "model-cache"))
    snapshot = gen.training_snapshot(steps=2, stop_after_forward=True)
    # The hostile name of a site is text in the report, never markup.
    for frame in (f for e in snapshot["device_traces"][0] for f in e["frames"]):
        if frame["filename"].endswith("train.py"):
            frame["name"] = "<img src=x onerror=alert(1)>"
    settled(logdir / "mlp" / f"{MLP_STEM}.pickle", pickle.dumps(snapshot))
    model = build_model_of(pickle.dumps(snapshot))
    expected = view.peak_summary(model, f"{MLP_STEM}.pickle")
    assert cli.main(["summary", "--logdir", str(logdir), "--run", "mlp", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["memory_snapshot"] == expected
    assert cli.main(["summary", "--logdir", str(logdir), "--run", "mlp"]) == 0
    text = capsys.readouterr().out
    assert f"Memory snapshot {MLP_STEM}.pickle (device 0): peak" in text and expected["sites"][0]["label"][:40] in text
    out = tmp_path / "report.html"
    assert cli.main(["report", "mlp", "--logdir", str(logdir), "-o", str(out)]) == 0
    page = out.read_text()
    assert "Memory snapshot at its peak" in page and 'data-testid="memory-snapshot"' in page
    assert "<img" not in page and "&lt;img src=x" in page


def build_model_of(data: bytes):
    from profscope.tb_plugin.ingest.snapshot import build, reader

    return build.build_model(reader.read(data))[0]
