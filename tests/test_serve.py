"""``profscope serve``'s WSGI app through werkzeug's test client: the page, the routes, the 404s."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest
from werkzeug import test as werkzeug_test

from profscope.tb_plugin.reports import cli
from profscope.tb_plugin.server.serve import ROUTE_PREFIX, ServeApp, build_app, display_url, is_loopback

from conftest import real_trace

RUN = "mlp"
SETTLE_TIMEOUT_S = 120.0


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    source = real_trace("torch213/mlp_train_sched")
    folder = tmp_path / "logdir" / RUN
    folder.mkdir(parents=True)
    for trace in sorted(source.glob("*.pt.trace.json.gz")):
        # copy2 keeps the modification time: a finished run, not files a job is still writing.
        shutil.copy2(trace, folder / trace.name)
    return folder.parent


@pytest.fixture
def app(logdir: Path, tmp_path: Path) -> Iterator[ServeApp]:
    serve_app = build_app(str(logdir), cache_dir=str(tmp_path / "cache"), refresh_seconds=0.5)
    yield serve_app
    if serve_app.plugin._manager is not None:  # stop it only when a test started it
        serve_app.plugin._manager.stop()


@pytest.fixture
def client(app: ServeApp) -> werkzeug_test.Client:
    return werkzeug_test.Client(app)


def _raw_get(app: ServeApp, raw_path: str) -> tuple[int, bytes]:
    """A GET whose PATH_INFO is exactly `raw_path` (as a server passes it on: decoded, not normalised)."""
    environ = werkzeug_test.EnvironBuilder(path="/").get_environ()
    environ["PATH_INFO"] = raw_path
    body, status, _headers = werkzeug_test.run_wsgi_app(app, environ, buffered=True)
    return int(status.split()[0]), b"".join(body)


# --- the page ---------------------------------------------------------------------------


def test_root_is_the_standalone_page(client: werkzeug_test.Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert re.search(r"<title>Profscope</title>", html)
    assert re.search(r'<meta name="viewport" content="[^"]*width=device-width[^"]*">', html)
    scripts = re.findall(r'<script type="module">(.*?)</script>', html, flags=re.S)
    assert scripts == ['import("./data/plugin/profscope/index.js").then((m) => m.render());']
    assert html.count("<script") == 1
    assert "http://" not in html and "https://" not in html and "//" not in html.replace("://", "")
    assert "<base" not in html  # the bundle resolves its API against the page's own address


def test_page_policy_allows_only_its_own_script(client: werkzeug_test.Client) -> None:
    response = client.get("/")
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'self'"
    # The inline loader runs by its hash: computed here from the page actually served.
    script = re.findall(r'<script type="module">(.*?)</script>', response.get_data(as_text=True), flags=re.S)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert directives["script-src"].split() == ["'self'", f"'sha256-{digest}'"]
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in directives["script-src"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_root_answers_only_get_and_head(client: werkzeug_test.Client) -> None:
    assert client.head("/").status_code == 200
    response = client.post("/")
    assert response.status_code == 405
    assert "GET" in response.headers["Allow"]


# --- the plugin's routes ----------------------------------------------------------------


def test_bundle_is_served_as_a_module(client: werkzeug_test.Client) -> None:
    response = client.get(f"{ROUTE_PREFIX}/index.js")
    assert response.status_code == 200
    assert response.mimetype == "text/javascript"
    assert b"render" in response.get_data()


def test_runs_route_lists_the_copied_run(app: ServeApp, client: werkzeug_test.Client) -> None:
    # No TensorBoard data provider here: the plugin finds the run by scanning the logdir.
    assert app.plugin.is_active()
    assert app.plugin.manager.wait_until_settled(SETTLE_TIMEOUT_S), "the run did not finish loading"
    response = client.get(f"{ROUTE_PREFIX}/runs")
    assert response.status_code == 200
    payload: dict[str, Any] = json.loads(response.get_data())
    assert payload["scanned"] is True
    runs = {run["name"]: run for run in payload["runs"]}
    assert list(runs) == [RUN]
    assert runs[RUN]["status"] == "ready", runs[RUN]
    (worker,) = runs[RUN]["workers"]
    assert worker["name"] == "worker0"
    assert len(worker["spans"]) == 2  # mlp_train_sched: two trace files, one span each
    # One trailing slash is ignored, as in TensorBoard.
    assert client.get(f"{ROUTE_PREFIX}/runs/").status_code == 200


def test_a_view_route_answers_for_the_run(app: ServeApp, client: werkzeug_test.Client) -> None:
    assert app.plugin.manager.wait_until_settled(SETTLE_TIMEOUT_S)
    (run,) = json.loads(client.get(f"{ROUTE_PREFIX}/runs").get_data())["runs"]
    worker = run["workers"][0]
    response = client.get(
        f"{ROUTE_PREFIX}/overview", query_string={"run": RUN, "worker": worker["name"], "span": worker["spans"][0]}
    )
    assert response.status_code == 200, response.get_data()
    assert "error" not in json.loads(response.get_data())


# --- what is not served -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/nope",
        "/index.js",  # the bundle lives under the plugin's prefix only
        "/data/plugins_listing",  # TensorBoard's routes are not part of this server
        "/data/plugin_entry.html",
        "/data/plugin/other/runs",
        f"{ROUTE_PREFIX}",
        f"{ROUTE_PREFIX}/",
        f"{ROUTE_PREFIX}/nope",
        f"{ROUTE_PREFIX}/static/",
        f"{ROUTE_PREFIX}/static/nope.js",
        f"{ROUTE_PREFIX}/runsx",
    ],
)
def test_unknown_paths_are_404(client: werkzeug_test.Client, path: str) -> None:
    assert client.get(path).status_code == 404


@pytest.mark.parametrize(
    "raw_path",
    [
        f"{ROUTE_PREFIX}/static/..",
        f"{ROUTE_PREFIX}/static/../index.js",
        f"{ROUTE_PREFIX}/static/../../../../../../etc/passwd",
        f"{ROUTE_PREFIX}/static/./index.js",
        f"{ROUTE_PREFIX}/static/..\\..\\plugin.py",
        f"{ROUTE_PREFIX}/static/index.js\x00.png",
        f"{ROUTE_PREFIX}/../../{ROUTE_PREFIX}/runs",
    ],
)
def test_traversal_attempts_are_404(app: ServeApp, raw_path: str) -> None:
    status, body = _raw_get(app, raw_path)
    assert status == 404, (raw_path, body[:200])
    assert b"root:" not in body and b"import" not in body


def test_percent_encoded_traversal_is_404(client: werkzeug_test.Client) -> None:
    # The client sends these encoded; the app sees them decoded and still refuses them.
    for path in (f"{ROUTE_PREFIX}/static/%2e%2e", f"{ROUTE_PREFIX}/static/%2e%2e%2fplugin.py",
                 f"{ROUTE_PREFIX}/static/..%2F..%2Fserve.py"):
        assert client.get(path).status_code == 404, path


# --- addresses and the command line -----------------------------------------------------


def test_display_url() -> None:
    assert display_url("127.0.0.1", 6007) == "http://127.0.0.1:6007/"
    assert display_url("0.0.0.0", 80) == "http://127.0.0.1:80/"
    assert display_url("::1", 6007) == "http://[::1]:6007/"
    assert display_url("::", 6007) == "http://[::1]:6007/"
    assert display_url("myhost", 6007) == "http://myhost:6007/"


def test_is_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3") and not is_loopback("example.org")


def test_serve_refuses_a_missing_logdir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--logdir", str(tmp_path / "missing"), "--port", "0"]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_serve_reports_a_taken_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        status = cli.main(["serve", "--logdir", str(tmp_path), "--port", str(port), "--cache-dir",
                           str(tmp_path / "cache")])
    assert status == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_serve_rejects_a_port_out_of_range(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["serve", "--logdir", str(tmp_path), "--port", "70000"])
    assert exit_info.value.code == 2
