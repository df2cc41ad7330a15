"""Routes through TensorBoard's WSGI app: contract (OpenAPI), error semantics, static files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.server import plugin as plugin_module

from conftest import copy_trace, real_trace
from openapi_contract import check_schema

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def check(payload: Any, schema_name: str) -> None:
    """The answer is the schema the test names (the client has already checked it against its route's)."""
    check_schema(payload, schema_name)


@pytest.fixture
def client(tmp_path: Path, make_client):
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
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
    copy_trace(real_trace(MLP), logdir / "slow")
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
    assert {key: body[key] for key in ("runs", "scanned", "pending_files")} == {
        "runs": [], "scanned": True, "pending_files": 0}
    # Nothing skipped; what was looked for comes with the empty list (tests/test_discovery_layouts.py).
    assert body["skipped"] == {"count": 0, "reasons": {}, "examples": {}} and body["looked_for"]
    check(body, "Runs")


RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


@pytest.fixture
def gpu_client(tmp_path: Path, make_client):
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(RESNET), logdir / "resnet")
    copy_trace(real_trace(MLP), logdir / "mlp")
    c = make_client(logdir)
    c.settle()
    return c


@pytest.mark.parametrize("run", ["resnet", "mlp"])
def test_analysis_routes_match_the_contract(gpu_client, run: str) -> None:
    for route, schema, params in [
        ("overview", "Overview", {}),
        ("operators", "Operators", {"group_by": "name"}),
        ("operators", "Operators", {"group_by": "input_shape"}),
        ("operators", "Operators", {"group_by": "stack"}),
        ("kernels", "Kernels", {"group_by": "name"}),
        ("kernels", "Kernels", {"group_by": "op_and_name"}),
    ]:
        status, body = gpu_client.get(route, run=run, worker="worker0", **params)
        assert status == 200, (route, body)
        check(body, schema)
    _, ops = gpu_client.get("operators", run=run, worker="worker0")
    name = ops["rows"][0]["name"]
    status, detail = gpu_client.get("operators/detail", run=run, worker="worker0", name=name)
    assert status == 200
    check(detail, "OperatorDetail")
    assert detail["calls"] == ops["rows"][0]["calls"]
    status, body = gpu_client.get("operators", run=run, worker="worker0", group_by="bogus")
    assert status == 400


def test_cpu_only_overview_has_cpu_categories_only(gpu_client) -> None:
    _, body = gpu_client.get("overview", run="mlp", worker="worker0")
    assert body["has_device"] is False
    assert body["categories"] == ["communication", "runtime", "dataloader", "cpu_exec", "other"]
    assert body["devices"] == []
    _, kernels_body = gpu_client.get("kernels", run="mlp", worker="worker0")
    assert kernels_body["rows"] == []


def test_flamegraph_modules_and_folded_stacks_routes(gpu_client) -> None:
    for weight in ("host", "device"):
        status, body = gpu_client.get("flamegraph", run="resnet", worker="worker0", weight=weight)
        assert status == 200
        check(body, "FlameGraph")
    status, body = gpu_client.get("modules", run="mlp", worker="worker0")
    assert status == 200 and body["available"] is True
    check(body, "Modules")
    response = gpu_client.client.get("/data/plugin/profscope/stacks/folded",
                                     query_string={"run": "mlp", "worker": "worker0"})
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/plain")
    assert "attachment" in response.headers["Content-Disposition"]
    lines = response.get_data(as_text=True).splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    response = gpu_client.client.get("/data/plugin/profscope/stacks/folded", query_string={"run": "x", "worker": "y"})
    assert response.status_code == 404


def test_active_while_the_first_span_is_still_being_written(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "live"
    (logdir / "job").mkdir(parents=True)
    (logdir / "job" / "worker0.5.pt.trace.json").write_text('{"traceEvents": [')  # being written right now
    client = make_client(logdir)
    assert client.plugin.is_active() is True
    _, body = client.get("runs")
    assert body["runs"] == [] and body["pending_files"] == 1
