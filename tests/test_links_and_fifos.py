"""A shared logdir cannot make either server (TensorBoard's plugin, ``profscope serve``) read files outside it,
nor stall on a FIFO: a table of links and special files, each its own run, beside a good run that must load."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest
from werkzeug import test as werkzeug_test

from profscope.tb_plugin.server.serve import ROUTE_PREFIX, build_app
from profscope.tb_plugin.store.discovery import scan
from profscope.tb_plugin.store.storage import LocalStorage, NotReadable, open_regular

from conftest import PluginClient, copy_trace, real_trace
from handmade import trace, write, x

GOOD = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
SECRET = b"root:x:0:0:planted secret of the machine\n"
# Text that only the trace outside the logdir contains: it must never reach a client unless allowed.
OUTSIDE_EVENT = "outside_the_logdir_event"
TRACE_NAME = "w.1.pt.trace.json"
SETTLE_S = 120.0


class Server:
    """One of the two servers over a logdir, driven by werkzeug's test client."""

    def __init__(self, kind: str, logdir: Path, cache_dir: Path, link_roots: Optional[list[str]]) -> None:
        self.kind = kind
        if kind == "tensorboard":
            self._plugin_client = PluginClient(logdir, cache_dir)
            if link_roots is not None:
                self._plugin_client.plugin._link_roots = link_roots
            self.plugin = self._plugin_client.plugin
            self._client = self._plugin_client.client
        else:
            app = build_app(str(logdir), cache_dir=str(cache_dir), refresh_seconds=0.5, link_roots=link_roots)
            self.plugin = app.plugin
            self._client = werkzeug_test.Client(app)

    def get(self, route: str, **params: Any) -> tuple[int, Any, bytes]:
        response = self._client.get(f"{ROUTE_PREFIX}/{route}", query_string=params)
        body = response.get_data()
        is_json = response.headers.get("Content-Type", "").startswith("application/json")
        return response.status_code, (json.loads(body) if is_json else None), body

    def settle(self) -> None:
        assert self.plugin.manager.wait_until_settled(SETTLE_S), "runs did not settle"

    def close(self) -> None:
        if self.plugin._manager is not None:
            self.plugin._manager.stop()


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    made: list[Server] = []

    def make(kind: str, logdir: Path, link_roots: Optional[list[str]] = None) -> Server:
        server = Server(kind, logdir, tmp_path / f"cache{len(made)}", link_roots)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()


def _settled(path: Path) -> None:
    old = time.time() - 120
    os.utime(path, (old, old), follow_symlinks=False)


def _link(link: Path, target: Any, directory: bool = False) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=directory)


def _hostile_logdir(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(logdir, the folder outside it, run → what its trace-named entry is)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    write(outside / "run_out" / TRACE_NAME, trace([x(OUTSIDE_EVENT, 0, 10)]))
    _settled(outside / "secret.txt")
    _settled(outside / "run_out" / TRACE_NAME)
    logdir = tmp_path / "logdir"
    good = copy_trace(real_trace(GOOD), logdir / "good")
    table = {
        "file_out": "a trace-named link to a file outside",
        "trace_out": "a link to a valid trace outside",
        "folder_out": "a run folder linked to a folder outside",
        "etc_passwd": "a link to /etc/passwd",
        "proc_mem": "a link to /proc/self/mem",
        "dev_zero": "a link to /dev/zero",
        "loop_file": "a link to itself",
        "loop_folder": "a folder linking back to the logdir",
        "dangling": "a link to nothing",
        "fifo": "a FIFO named like a trace",
        "inside": "a link to a trace inside the logdir (allowed)",
    }
    _link(logdir / "file_out" / TRACE_NAME, outside / "secret.txt")
    _link(logdir / "trace_out" / TRACE_NAME, outside / "run_out" / TRACE_NAME)
    _link(logdir / "folder_out", outside / "run_out", directory=True)
    _link(logdir / "etc_passwd" / TRACE_NAME, "/etc/passwd")
    _link(logdir / "proc_mem" / TRACE_NAME, "/proc/self/mem")
    _link(logdir / "dev_zero" / TRACE_NAME, "/dev/zero")
    _link(logdir / "loop_file" / TRACE_NAME, logdir / "loop_file" / TRACE_NAME)
    _link(logdir / "loop_folder" / "back", logdir, directory=True)
    _link(logdir / "dangling" / TRACE_NAME, tmp_path / "nothing_here")
    (logdir / "fifo").mkdir()
    os.mkfifo(logdir / "fifo" / TRACE_NAME)
    _link(logdir / "inside" / good.name, Path("..") / "good" / good.name)
    for path in logdir.rglob("*"):
        if path.is_symlink() or path.is_file() or path.is_fifo():
            _settled(path)
    return logdir, outside, table


def _no_secret(body: bytes) -> None:
    assert SECRET.strip() not in body and b"root:x:0:0" not in body and OUTSIDE_EVENT.encode() not in body


def _all_spans(server: Server) -> list[tuple[str, str, str, str]]:
    status, payload, _ = server.get("runs")
    assert status == 200
    return [(run["name"], worker["name"], span, run["status"])
            for run in payload["runs"] for worker in run["workers"] for span in worker["spans"]]


@pytest.mark.parametrize("kind", ["tensorboard", "serve"])
def test_links_out_of_the_logdir_are_never_read(tmp_path: Path, servers: Callable[..., Server], kind: str) -> None:
    logdir, _outside, table = _hostile_logdir(tmp_path)
    server = servers(kind, logdir)
    server.settle()
    spans = _all_spans(server)
    assert sorted((run, status) for run, _w, _s, status in spans) == [("good", "ready"), ("inside", "ready")]
    for run, worker, span, _status in spans:
        status, _payload, body = server.get("trace/download", run=run, worker=worker, span=span)
        assert status == 200
        _no_secret(body)
    good = {run: (worker, span) for run, worker, span, _ in spans}
    _, _, good_body = server.get("trace/download", run="good", worker=good["good"][0], span=good["good"][1])
    _, _, inside_body = server.get("trace/download", run="inside", worker=good["inside"][0], span=good["inside"][1])
    assert inside_body == good_body == real_trace(GOOD).read_bytes()
    # Nothing is dropped silently: the links out of the logdir (the linked run folder too) and the entries that are
    # not regular files are counted among the skipped files, each with its reason.
    status, payload, _ = server.get("runs")
    skipped = payload["skipped"]
    assert skipped["reasons"] == {"links_outside_logdir": 5, "unreadable": 4}, skipped
    files = scan(str(logdir)).skipped.files
    assert sorted(path for path, why in files if why == "links_outside_logdir") == [
        "etc_passwd/w.1.pt.trace.json", "file_out/w.1.pt.trace.json", "folder_out/", "proc_mem/w.1.pt.trace.json",
        "trace_out/w.1.pt.trace.json"]
    assert sorted(path for path, why in files if why == "unreadable") == [  # not regular files, links to nothing
        "dangling/w.1.pt.trace.json", "dev_zero/w.1.pt.trace.json", "fifo/w.1.pt.trace.json",
        "loop_file/w.1.pt.trace.json"]
    # Every hostile entry by the name it would have: unknown, in JSON, whatever it points at.
    for run in table:
        for route in ("trace/download", "overview", "summary"):
            status, payload, body = server.get(route, run=run, worker="w", span="1")
            assert status == 404 and payload and "error" in payload, (run, route)
            _no_secret(body)


@pytest.mark.parametrize("kind", ["tensorboard", "serve"])
def test_link_roots_allow_linked_runs_but_never_special_files(
        tmp_path: Path, servers: Callable[..., Server], kind: str) -> None:
    logdir, outside, _table = _hostile_logdir(tmp_path)
    server = servers(kind, logdir, link_roots=[str(outside)])
    server.settle()
    runs = {run: status for run, _w, _s, status in _all_spans(server)}
    # Links into the named folder are followed (and a non-trace there fails as a trace); none to /proc, /dev, /etc.
    assert runs == {"good": "ready", "inside": "ready", "folder_out": "ready", "trace_out": "ready",
                    "file_out": "error"}
    status, _payload, body = server.get("trace/download", run="folder_out", worker="w", span="1")
    assert status == 200 and OUTSIDE_EVENT.encode() in body


@pytest.mark.parametrize("kind", ["tensorboard", "serve"])
def test_a_file_swapped_for_a_link_or_fifo_after_the_scan_is_refused(
        tmp_path: Path, servers: Callable[..., Server], kind: str) -> None:
    (tmp_path / "secret.txt").write_bytes(SECRET)
    logdir = tmp_path / "logdir"
    victim = copy_trace(real_trace(GOOD), logdir / "run")
    server = servers(kind, logdir)
    server.settle()
    (worker, span), = {(w, s) for _r, w, s, _ in _all_spans(server)}
    victim.unlink()
    victim.symlink_to(tmp_path / "secret.txt")
    status, payload, body = server.get("trace/download", run="run", worker=worker, span=span)
    assert status == 410 and payload["error"]
    _no_secret(body)
    victim.unlink()
    os.mkfifo(victim)
    answers: list[int] = []
    threads_before = threading.active_count()
    for _ in range(5):
        thread = threading.Thread(target=lambda: answers.append(
            server.get("trace/download", run="run", worker=worker, span=span)[0]), daemon=True)
        thread.start()
        thread.join(10)
        assert not thread.is_alive(), "the download of a FIFO blocked"
    assert answers == [410] * 5
    assert threading.active_count() <= threads_before


@pytest.mark.parametrize("kind", ["tensorboard", "serve"])
def test_fifos_named_like_traces_and_manifests_do_not_stall_the_scan(
        tmp_path: Path, servers: Callable[..., Server], kind: str) -> None:
    logdir = tmp_path / "logdir"
    for run in ("fifo_a", "fifo_b"):  # ahead of the good runs in the scan and the parse order
        (logdir / run).mkdir(parents=True)
        os.mkfifo(logdir / run / "worker0.1.pt.trace.json")
        _settled(logdir / run / "worker0.1.pt.trace.json")
    copy_trace(real_trace(GOOD), logdir / "good_a")
    copy_trace(real_trace(GOOD), logdir / "good_b")
    assets = logdir / "writer_run" / "plugins" / "profscope"
    write(assets / "rank0.1.pytorch.trace.json.gz", trace([x("op", 0, 5)]), gz=True)
    os.mkfifo(assets / "rank0.1.manifest.json")  # a FIFO where the writer's manifest belongs
    for path in assets.iterdir():
        _settled(path)
    server = servers(kind, logdir)
    assert server.plugin.manager.wait_for_first_scan(30)
    server.settle()
    status, payload, _ = server.get("runs")
    assert status == 200 and payload["scanned"] is True
    runs = {run["name"]: run["status"] for run in payload["runs"]}
    # The writer's span loads without its manifest (the writer's grace period has passed).
    assert runs == {"good_a": "ready", "good_b": "ready", "writer_run": "ready"}


def test_storage_reads_only_regular_files_inside_its_roots(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "a.json").write_bytes(b"0123456789")
    os.mkfifo(logdir / "pipe.json")
    (logdir / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "out.json").write_bytes(SECRET)
    (logdir / "out.json").symlink_to(tmp_path / "out.json")
    storage = LocalStorage(str(logdir), link_roots=[])
    assert storage.read_head(str(logdir / "a.json"), 4) == b"0123"
    assert storage.read_head(str(logdir / "a.json"), 100) == b"0123456789"
    for name in ("pipe.json", "zero.json", "out.json"):
        assert storage.read_head(str(logdir / name), 4) is None, name
        assert storage.stat(str(logdir / name)) is None, name
        with pytest.raises(NotReadable):
            open_regular(str(logdir / name), storage.roots)
    assert LocalStorage(str(logdir), link_roots=[str(tmp_path)]).read_head(str(logdir / "out.json"), 100) == SECRET
