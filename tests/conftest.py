"""Shared fixtures: the real traces of tests/data and a plugin app over a temporary logdir."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import real_traces
from openapi_contract import check_answer

REPO = Path(__file__).resolve().parents[1]
# A private copy of tests/data, with the files stored gzipped restored (see tests/real_traces.py).
REAL_TRACES = real_traces.root()


def real_trace(relative: str) -> Path:
    """A file or folder of the real traces (tests/data); a missing one fails the test, never skips it."""
    try:
        return real_traces.path(relative)
    except real_traces.MissingTestData as missing:
        pytest.fail(str(missing), pytrace=False)


@pytest.fixture
def traces() -> Callable[[str], Path]:
    return real_trace


class PluginClient:
    """A werkzeug test client over TensorBoard's WSGI app with only the Profscope plugin."""

    def __init__(self, logdir: Path, cache_dir: Path) -> None:
        from tensorboard.backend import application
        from tensorboard.plugins import base_plugin
        from werkzeug import test as werkzeug_test

        from profscope.tb_plugin.server.plugin import ProfscopePlugin

        context = base_plugin.TBContext(logdir=str(logdir))
        self.plugin = ProfscopePlugin(context, cache_dir=str(cache_dir), refresh_seconds=0.5)
        app = application.TensorBoardWSGI([self.plugin])
        self.client = werkzeug_test.Client(app)

    def get(self, route: str, **params: Any) -> tuple[int, Any]:
        """GET a route; a JSON answer is parsed and validated against the contract (openapi_contract)."""
        response = self.client.get(f"/data/plugin/profscope/{route}", query_string=params)
        body = response.get_data()
        ctype = response.headers.get("Content-Type", "")
        if not ctype.startswith("application/json"):
            return response.status_code, body
        payload = json.loads(body)
        check_answer(route, response.status_code, payload)
        return response.status_code, payload

    def settle(self, timeout: float = 120.0) -> None:
        assert self.plugin.manager.wait_until_settled(timeout), "runs did not finish loading in time"

    def close(self) -> None:
        if self.plugin._manager is not None:
            self.plugin._manager.stop()


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[[Path], PluginClient]]:
    clients: list[PluginClient] = []

    def factory(logdir: Path) -> PluginClient:
        client = PluginClient(logdir, tmp_path / f"cache{len(clients)}")
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


def assert_fails_alone(client: PluginClient, broken: dict[str, str], good_run: str) -> None:
    """The run of ``broken`` (run, worker, span) lists its error and answers 422; ``good_run`` is ready."""
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert runs[broken["run"]]["status"] == "error" and runs[broken["run"]]["error"], runs[broken["run"]]
    assert runs[good_run]["status"] == "ready", runs[good_run]
    status, error = client.get("overview", **broken)
    assert status == 422 and error["error"]


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """The first true value of ``predicate()``, polled until ``timeout`` seconds; fails the test naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


def copy_trace(src: Path, dest_dir: Path, name: str | None = None) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / (name or src.name)
    shutil.copyfile(src, dest)
    old = os.stat(src).st_mtime - 10  # settled: older than the discovery's settle time
    os.utime(dest, (old, old))
    return dest


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """Writes the skip count and reasons to ``$PROFSCOPE_SKIP_REPORT`` (``make test`` prints it last)."""
    report_path = os.environ.get("PROFSCOPE_SKIP_REPORT")
    if not report_path:
        return
    skipped = terminalreporter.stats.get("skipped", [])
    lines = [f"pytest: {len(skipped)} skipped" + (":" if skipped else " (none)")]
    for report in skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        lines.append(f"  {report.nodeid}: {reason.removeprefix('Skipped: ')}")
    Path(report_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
