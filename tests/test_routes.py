"""Routes through TensorBoard's WSGI app: contract (OpenAPI), error semantics, static files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from profscope.tb_plugin import plugin as plugin_module

from conftest import REPO, copy_trace, shared_trace

OPENAPI = yaml.safe_load((REPO / "tb_plugin" / "api" / "openapi.yaml").read_text())
MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def check(payload: Any, schema_name: str) -> None:
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": OPENAPI["components"]}
    jsonschema.validate(payload, schema, cls=jsonschema.Draft202012Validator)


@pytest.fixture
def client(tmp_path: Path, make_client):
    logdir = tmp_path / "logdir"
    copy_trace(shared_trace(MLP), logdir / "mlp")
    c = make_client(logdir)
    c.settle()
    return c


def test_runs_and_summary_match_the_contract(client) -> None:
    status, runs = client.get("runs")
    assert status == 200
    check(runs, "Runs")
    status, summary = client.get("summary", run="mlp", worker="worker0")
    assert status == 200
    check(summary, "Summary")
    assert [s["name"] for s in summary["steps"]] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]


@pytest.mark.parametrize(
    "params, status",
    [
        ({"run": "nope", "worker": "worker0"}, 404),
        ({"run": "mlp", "worker": "nope"}, 404),
        ({"run": "mlp", "worker": "worker0", "span": "123"}, 404),
        ({"run": "mlp"}, 400),
        ({}, 400),
        ({"run": "../../etc", "worker": "passwd"}, 404),
        ({"run": "mlp", "worker": "worker0", "span": "../../x"}, 404),
    ],
)
def test_errors(client, params: dict[str, str], status: int) -> None:
    got, body = client.get("summary", **params)
    assert got == status
    check(body, "Error")


def test_loading_answers_202_and_runs_stays_fast(tmp_path: Path, make_client, monkeypatch) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(shared_trace(MLP), logdir / "slow")
    client = make_client(logdir)
    manager = client.plugin.manager
    def slow_submit(key, state, identity):  # a parse that takes as long as the test wants
        state.status = "loading"

    monkeypatch.setattr(manager, "_submit", slow_submit)
    monkeypatch.setattr(manager, "_try_cache", lambda identity: None)
    manager.refresh()
    status, body = client.get("summary", run="slow", worker="worker0")
    assert status == 202
    check(body, "Loading")
    status, runs = client.get("runs")
    assert status == 200 and runs["runs"][0]["status"] == "loading"
    check(runs, "Runs")


STATIC_CASES = [
    ("/data/plugin/profscope/index.js", 200),
    ("/data/plugin/profscope/static/index.js", 200),
    ("/data/plugin/profscope/static/../plugin.py", 404),
    ("/data/plugin/profscope/static/..%2fplugin.py", 404),
    ("/data/plugin/profscope/static/%2e%2e/%2e%2e/setup.py", 404),
    ("/data/plugin/profscope/static//etc/passwd", 404),
    ("/data/plugin/profscope/static/", 404),
    ("/data/plugin/profscope/static/nope.js", 404),
]


@pytest.mark.parametrize("path, status", STATIC_CASES)
def test_static_files_are_guarded(client, path: str, status: int) -> None:
    bundle = Path(plugin_module.STATIC_DIR) / "index.js"
    assert bundle.exists(), "the frontend bundle is missing: build it with `npm run build` in frontend/"
    response = client.client.get(path)
    assert response.status_code == status
    if status == 200:
        assert response.headers["Content-Type"].startswith("text/javascript")
        assert b"render" in response.get_data()


def test_plugin_is_listed_with_its_tab(client) -> None:
    response = client.client.get("/data/plugins_listing")
    listing = response.get_json()
    entry = listing["profscope"]
    assert entry["enabled"] is True
    assert entry["tab_name"] == "PROFSCOPE"
    assert entry["loading_mechanism"]["module_path"] == "/data/plugin/profscope/index.js"


def test_inactive_on_an_empty_logdir(tmp_path: Path, make_client) -> None:
    (tmp_path / "empty").mkdir()
    client = make_client(tmp_path / "empty")
    client.settle()
    assert client.plugin.is_active() is False
    _, body = client.get("runs")
    assert body == {"runs": [], "scanned": True, "pending_files": 0}
