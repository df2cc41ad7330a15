"""The API contract covers every route, and every route's real answer validates against it.

Every JSON answer a test receives through ``conftest.PluginClient.get`` is validated against the contract
(``openapi_contract.check_answer``); this module makes sure that each route of the contract is asked at least
once, on real traces of tests/data, and that the plugin serves exactly the routes the contract lists.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from conftest import copy_trace, real_trace
from openapi_contract import check_schema, contract, json_routes, route_names

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
TRANSFORMER = "torch213/transformer_infer"
GLOO = "torch213/ddp_gloo_2ranks"

# One request per JSON route (more where an answer has variants the page shows): route, run, extra parameters.
# A parameter given as a function is computed from the run's earlier answers (an operator name, an event id).
SPAN = {"worker": "worker0"}
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("runs", "", {}),
    ("summary", "resnet", SPAN),
    ("overview", "resnet", SPAN),
    ("operators", "resnet", SPAN),
    ("operators", "resnet", {**SPAN, "group_by": "stack"}),
    ("roofline", "resnet", SPAN),
    ("operators/detail", "resnet", {**SPAN, "name": "aten::cudnn_convolution"}),
    ("kernels", "resnet", {**SPAN, "group_by": "op_and_name"}),
    ("flamegraph", "resnet", {**SPAN, "weight": "device"}),
    ("modules", "transformer", SPAN),
    ("memory", "resnet", SPAN),
    ("distributed", "gloo", {}),
    ("distributed/matrix", "gloo", {}),
    ("distributed/collectives", "gloo", {}),
    ("datapipeline", "resnet", SPAN),
    ("steptrace", "resnet", SPAN),
    ("critical_path", "resnet", SPAN),
    ("compare", "", {"base_run": "resnet", "base_worker": "worker0", "exp_run": "gloo", "exp_worker": "rank0",
                     "base_batch_size": 32, "exp_batch_size": 16}),
    ("runs/table", "", {}),
    ("trace/tracks", "resnet", SPAN),
    ("trace/slices", "resnet", {**SPAN, "width": 400}),
    ("trace/counters", "resnet", {**SPAN, "width": 400, "tracks": "c:gpu_util:0"}),
    ("trace/event", "resnet", {**SPAN, "id": "first_kernel"}),
    ("trace/flows", "resnet", {**SPAN, "id": "first_kernel"}),
    ("trace/search", "resnet", {**SPAN, "q": "conv", "limit": 5}),
    ("trace/range", "resnet", {**SPAN, "start": "span_start", "end": "span_middle"}),
    ("trace/ranks", "gloo", {}),
    ("analyses/idle", "resnet", SPAN),
    ("analyses/launches", "resnet", SPAN),
    ("analyses/queues", "resnet", SPAN),
    ("analyses/sequences", "resnet", SPAN),
    ("analyses/annotations", "resnet", SPAN),
    ("memory_snapshot", "oom", {"snapshot": "snapshot.pickle"}),
    ("memory_snapshot/timeline", "oom", {"snapshot": "snapshot.pickle", "width": 300}),
    ("memory_snapshot/at", "oom", {"snapshot": "snapshot.pickle"}),
    ("memory_snapshot/allocation", "oom", {"snapshot": "snapshot.pickle", "id": "largest_allocation"}),
    ("memory_snapshot/segments", "oom", {"snapshot": "snapshot.pickle"}),
    ("memory_snapshot/compare", "", {"base_run": "oom", "base_worker": "rank1", "exp_run": "oom", "exp_snapshot": "snapshot.pickle"}),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    from conftest import PluginClient

    root = tmp_path_factory.mktemp("contract")
    logdir = root / "logdir"
    copy_trace(real_trace(RESNET), logdir / "resnet")
    for path in sorted(real_trace(TRANSFORMER).glob("*.pt.trace.json*")):
        copy_trace(path, logdir / "transformer")
    for path in sorted(real_trace(GLOO).glob("rank*.pt.trace.json*")):
        copy_trace(path, logdir / "gloo")
    # A run of memory snapshots only (one at its top, one in a rank folder).
    copy_trace(real_trace("memory_snapshots/expandable_oom.pickle"), logdir / "oom", "snapshot.pickle")
    copy_trace(real_trace("memory_snapshots/training_ring_buffer.pickle"), logdir / "oom" / "rank1", "memory_snapshot_step5.pkl")
    app = PluginClient(logdir, root / "cache")
    app.settle()
    yield app
    app.close()


def _resolved(client: Any, run: str, params: dict[str, Any]) -> dict[str, Any]:
    """The case's parameters with the computed ones filled in from the run's answers."""
    out = dict(params)
    if run:
        out["run"] = run
    span = {"run": run, "worker": params.get("worker", "worker0")}
    lookups: dict[str, Callable[[], Any]] = {
        "first_kernel": lambda: client.get("trace/search", **span, q="cudnn", limit=1)[1]["matches"][0]["id"],
        "span_start": lambda: client.get("trace/tracks", **span)[1]["start"],
        "span_middle": lambda: (lambda t: (t["start"] + t["end"]) / 2)(client.get("trace/tracks", **span)[1]),
        "largest_allocation": lambda: client.get("memory_snapshot/at", run=run, snapshot=params.get("snapshot"))[1]["largest"][0]["id"],
    }
    for key, value in params.items():
        if isinstance(value, str) and value in lookups:
            out[key] = lookups[value]()
    return out


def test_every_json_route_of_the_contract_has_a_case() -> None:
    assert sorted({route for route, _run, _params in CASES}) == sorted(json_routes())


@pytest.mark.parametrize("route, run, params", CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_a_real_answer_of_every_route_matches_the_contract(client, route: str, run: str, params: dict) -> None:
    status, body = client.get(route, **_resolved(client, run, params))  # validated by the client on the way
    assert status == 200, (route, body)
    assert isinstance(body, dict) and body


def test_the_plugin_serves_exactly_the_routes_of_the_contract(client) -> None:
    served = {path.replace("/*", "/{name}") for path in client.plugin.get_plugin_apps()}
    assert served == {"/" + route for route in route_names()}


def test_a_wrong_answer_fails_the_check() -> None:
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        check_schema({"group_by": "name", "rows": [{"name": "x"}]}, "Operators")
    with pytest.raises(AssertionError, match="does not describe it"):
        from openapi_contract import check_answer

        check_answer("no/such/route", 200, {})
    assert "/runs" in contract()["paths"]


def test_a_key_given_twice_in_the_contract_is_refused() -> None:
    import yaml

    from openapi_contract import load_strict

    assert load_strict("a: {b: 1}\nc: 2\n") == {"a": {"b": 1}, "c": 2}
    with pytest.raises(yaml.constructor.ConstructorError, match="given twice"):
        load_strict("paths:\n  /x: 1\n  /x: 2\n")
