"""Discovery: a logdir mixing torch-handler files (nested, gz and plain) and writer output."""

from __future__ import annotations

import os
import time
from pathlib import Path

from profscope.tb_plugin.store.discovery import Discovery, scan_logdir
from profscope.tb_plugin.store.storage import open_storage
from profscope.writer.importer import import_trace_files

from conftest import copy_trace, real_trace

MLP = "torch213/mlp_train_sched"
MLP_PLAIN = "torch213/mlp_train_sched_plain"
RESNET = "kineto_resnet50/resnet50_num_workers_0"
DDP = "torch213/ddp_gloo_2ranks"


def _mixed_logdir(root: Path) -> Path:
    logdir = root / "logdir"
    for f in sorted(real_trace(MLP).glob("*.pt.trace.json.gz")):
        copy_trace(f, logdir / "mlp")
    for f in sorted(real_trace(MLP_PLAIN).glob("*.pt.trace.json")):
        copy_trace(f, logdir / "sweep" / "a" / "plain")
    for f in sorted(real_trace(RESNET).glob("*.pt.trace.json.gz")):
        copy_trace(f, logdir / "sweep" / "b" / "resnet")
    import_trace_files(sorted(real_trace(DDP).glob("rank*.pt.trace.json.gz")), logdir, "imported/ddp")
    copy_trace(next(real_trace(MLP).glob("*.pt.trace.json.gz")), logdir, "host.example.com_42.17.pt.trace.json.gz")
    (logdir / "mlp" / "notes.txt").write_text("not a trace")
    (logdir / "mlp" / "worker0.1.pt.trace.json.gz.tmp").write_text("partial")
    return logdir


def test_mixed_layouts_map_to_runs_workers_spans(tmp_path: Path) -> None:
    logdir = _mixed_logdir(tmp_path)
    found = scan_logdir(str(logdir))
    table = sorted((s.run, s.worker, s.span, s.layout) for s in found)
    assert table == [
        (".", "host.example.com_42", "17", "torch"),
        ("imported/ddp", "rank0", "1795303450949782497", "writer"),
        ("imported/ddp", "rank1", "1795303450959318656", "writer"),
        ("mlp", "worker0", "1795303442092317655", "torch"),
        ("mlp", "worker0", "1795303442737309847", "torch"),
        ("sweep/a/plain", "worker0", "1795303442092317655", "torch"),
        ("sweep/a/plain", "worker0", "1795303442737309847", "torch"),
        ("sweep/b/resnet", "worker0", "1623143089861", "torch"),
        ("sweep/b/resnet", "worker0", "1623143566756", "torch"),
    ]
    writer_span = next(s for s in found if s.layout == "writer")
    assert writer_span.manifest is not None and writer_span.manifest["framework"] == "pytorch"
    assert writer_span.framework == "pytorch"


def test_runs_route_lists_every_run_worker_span(tmp_path: Path, make_client) -> None:
    client = make_client(_mixed_logdir(tmp_path))
    client.settle()
    status, body = client.get("runs")
    assert status == 200 and body["scanned"] is True
    runs = {r["name"]: r for r in body["runs"]}
    assert sorted(runs) == [".", "imported/ddp", "mlp", "sweep/a/plain", "sweep/b/resnet"]
    assert all(r["status"] == "ready" for r in runs.values()), runs
    assert runs["imported/ddp"]["workers"][0]["name"] == "rank0"
    assert [w["name"] for w in runs["imported/ddp"]["workers"]] == ["rank0", "rank1"]
    # Spans in time order.
    assert runs["sweep/b/resnet"]["workers"][0]["spans"] == ["1623143089861", "1623143566756"]
    # Every span is served; one of two spans needs span=.
    for run in runs.values():
        for worker in run["workers"]:
            for span in worker["spans"]:
                status, summary = client.get("summary", run=run["name"], worker=worker["name"], span=span)
                assert status == 200, (run["name"], summary)
                assert summary["events"] > 0
    status, err = client.get("summary", run="mlp", worker="worker0")
    assert status == 404 and "several spans" in err["error"]


def test_new_span_appears_while_running(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    files = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))
    copy_trace(files[0], logdir / "live")
    client = make_client(logdir)
    client.settle()
    _, body = client.get("runs")
    assert body["runs"][0]["workers"][0]["spans"] == ["1795303442092317655"]
    copy_trace(files[1], logdir / "live")  # the training job writes its next span
    client.settle()
    _, body = client.get("runs")
    assert body["runs"][0]["workers"][0]["spans"] == ["1795303442092317655", "1795303442737309847"]


def test_settle_rules(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    (logdir / "run").mkdir(parents=True)
    fresh = logdir / "run" / "w.1.pt.trace.json"
    fresh.write_text("{}")
    discovery = Discovery(str(logdir), settle_seconds=2.0)
    now = time.monotonic()
    complete, pending = discovery.complete_sources(now)
    assert (len(complete), pending) == (0, 1)
    # Unchanged for the settle time: complete.
    complete, pending = discovery.complete_sources(now + 2.5)
    assert (len(complete), pending) == (1, 0)
    # It changes again (still being written): pending again.
    fresh.write_text('{"traceEvents": []}')
    complete, pending = discovery.complete_sources(now + 3.0)
    assert (len(complete), pending) == (0, 1)
    # A writer trace waits for its manifest.
    asset = logdir / "w" / "plugins" / "profscope"
    asset.mkdir(parents=True)
    (asset / "r0.5.pytorch.trace.json.gz").write_bytes(b"x")
    complete, _ = discovery.complete_sources(now + 10)
    assert [c.run for c in complete] == ["run"]
    old = time.time() - 3600
    os.utime(asset / "r0.5.pytorch.trace.json.gz", (old, old))
    complete, _ = discovery.complete_sources(now + 11)
    assert sorted(c.run for c in complete) == ["run", "w"]


def test_symlinked_runs_are_found_and_loops_end(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "run_a"
    copy_trace(next(real_trace(MLP).glob("*.pt.trace.json.gz")), elsewhere)
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "linked").symlink_to(elsewhere, target_is_directory=True)
    (logdir / "loop").symlink_to(logdir, target_is_directory=True)
    # A link out of the logdir is followed only into a folder named as a link root (storage.py).
    assert scan_logdir(str(logdir)) == []
    storage = open_storage(str(logdir), link_roots=[str(tmp_path / "elsewhere")])
    runs = sorted({s.run for s in scan_logdir(str(logdir), storage)})
    assert runs == ["linked"]
