"""Every real trace of tests/data, every route: answers and the invariants that hold every view to one number.

The spans are whatever the logdir discovery finds when the whole ``tests/data`` tree is the logdir,
so a trace added there later is covered without a change here. One plugin app serves them all
(module-scoped: each trace is parsed once). Per (span, route): the route answers 200 — or a 4xx
the API documents, never a 500 — and a JSON answer matches its schema in ``api/openapi.yaml``. Per
span: the invariants of ``views/quantities/accounting.py`` and the overview (categories sum to the step time,
shares and efficiencies in [0, 1], kernel time within a step at most step time x streams), and
each quantity is the same number in every view that shows it (overview, kernels, distributed,
step trace, data pipeline, run table, compare, the Scalars, the ``summary`` command, the report).

Cases that fail for a reason outside the views (a format or device handling still to come) are
listed in ``KNOWN`` as strict xfails, so that the fix shows up as an unexpected pass.
"""

from __future__ import annotations

import contextlib
import io
import math
from typing import Any, Iterator, Optional

import numpy as np
import pytest

from profscope.tb_plugin.reports import cli, span_scalars
from profscope.tb_plugin.store.discovery import scan, scan_logdir
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.reports.report import collect_span, communication_line, format_us
from profscope.tb_plugin.reports.report_html import report_html

from conftest import REAL_TRACES, PluginClient
from openapi_contract import check_schema

SOURCES = sorted(scan_logdir(str(REAL_TRACES)), key=lambda s: (s.run, s.worker, s.span))
SPANS = [(s.run, s.worker, s.span) for s in SOURCES]
RUNS = sorted({s.run for s in SOURCES})
# Memory snapshots (tests/data/memory_snapshots, a run of snapshots only: the runs list shows it too).
SNAPSHOTS = scan(str(REAL_TRACES)).snapshots
REL = 1e-6  # float µs from int ns: equal up to rounding

# (route, extra query parameters) asked of every span. Operator detail takes the span's top operator.
SPAN_ROUTES: list[tuple[str, dict[str, Any]]] = [
    ("summary", {}), ("overview", {}), ("operators", {}), ("operators", {"group_by": "input_shape"}),
    ("operators", {"group_by": "stack"}), ("operators/detail", {}), ("kernels", {}),
    ("kernels", {"group_by": "op_and_name"}), ("flamegraph", {}), ("flamegraph", {"weight": "device"}),
    ("stacks/folded", {}), ("modules", {}), ("memory", {}), ("memory", {"start": 0, "end": 1e18, "min_bytes": 1}),
    ("datapipeline", {}), ("steptrace", {}), ("critical_path", {}), ("trace/tracks", {}), ("trace/slices", {"width": 800}),
    ("trace/search", {"q": "a"}), ("trace/download", {}),
    ("analyses/idle", {}), ("analyses/launches", {}), ("analyses/queues", {}), ("analyses/sequences", {}),
    ("analyses/annotations", {}),
]

# Known failures outside this module's views, by (run, route or "numbers"): strict xfails.
KNOWN: dict[tuple[str, str], str] = {}


def _known(run: str, what: str) -> list[Any]:
    reason = KNOWN.get((run, what)) or KNOWN.get((run, "*"))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PluginClient]:
    app = PluginClient(REAL_TRACES, tmp_path_factory.mktemp("real-traces-cache"))
    app.settle(timeout=300)
    yield app
    app.close()


def _get(client: PluginClient, route: str, **params: Any) -> Any:
    status, body = client.get(route, **params)
    assert status == 200, (route, params, status, body)
    return body


def _ids(items: list[tuple[str, ...]]) -> list[str]:
    return ["/".join(item) for item in items]


def test_the_test_data_has_traces() -> None:
    assert len(SPANS) >= 20 and len(RUNS) >= 15, SPANS


def test_every_span_loads(client: PluginClient) -> None:
    body = _get(client, "runs")
    check_schema(body, "Runs")
    failed = {r["name"]: r.get("error") for r in body["runs"] if r["status"] != "ready"}
    assert not failed
    assert sorted(r["name"] for r in body["runs"]) == sorted(set(RUNS) | {s.run for s in SNAPSHOTS})


@pytest.mark.parametrize("snapshot", [pytest.param((s.run, s.name), id=s.name) for s in SNAPSHOTS])
def test_every_memory_snapshot_answers(client: PluginClient, snapshot: tuple[str, str]) -> None:
    run, name = snapshot
    for route in ("memory_snapshot", "memory_snapshot/timeline", "memory_snapshot/at", "memory_snapshot/segments"):
        body = _get(client, route, run=run, snapshot=name)
        check_schema(body, {"memory_snapshot": "MemorySnapshot", "memory_snapshot/timeline": "MemorySnapshotTimeline",
                      "memory_snapshot/at": "MemorySnapshotAt", "memory_snapshot/segments": "MemorySnapshotSegments"}[route])


@pytest.mark.parametrize(
    "span, route, params",
    [pytest.param(span, route, params, marks=_known(span[0], route),
                  id="/".join(span) + f"-{route}" + "".join(f"-{k}={v}" for k, v in params.items()))
     for span in SPANS for route, params in SPAN_ROUTES],
)
def test_route_answers(client: PluginClient, span: tuple[str, str, str], route: str, params: dict[str, Any]) -> None:
    run, worker, name = span
    query = {"run": run, "worker": worker, "span": name, **params}
    if route == "operators/detail":
        rows = _get(client, "operators", run=run, worker=worker, span=name)["rows"]
        if not rows:
            status, body = client.get(route, name="no such operator", run=run, worker=worker, span=name)
            assert status == 404, body  # documented: an operator the span does not have
            return
        query["name"] = rows[0]["name"]
    status, body = client.get(route, **query)  # a JSON answer is checked against the contract on the way
    assert status != 500, body
    assert status == 200, (status, body)


@pytest.mark.parametrize("run", [pytest.param(r, marks=_known(r, "distributed")) for r in RUNS])
def test_distributed_answers(client: PluginClient, run: str) -> None:
    body = _get(client, "distributed", run=run)
    check_schema(body, "Distributed")


def test_run_table_answers(client: PluginClient) -> None:
    body = _get(client, "runs/table")
    check_schema(body, "RunTable")
    assert {(r["run"], r["worker"], r["span"]) for r in body["rows"]} == set(SPANS)
    assert all(r["status"] == "ready" for r in body["rows"])


# --- the invariants -----------------------------------------------------------------------------------------


def _fraction(value: Optional[float], what: str) -> None:
    if value is not None:
        assert 0.0 <= value <= 1.0 + 1e-9, f"{what} = {value}"


def _close(a: Optional[float], b: Optional[float], what: str, abs_tol: float = 1e-3) -> None:
    assert a is not None and b is not None, f"{what}: {a} vs {b}"
    assert math.isclose(a, b, rel_tol=REL, abs_tol=abs_tol), f"{what}: {a} != {b}"


@pytest.fixture(scope="module")
def table(client: PluginClient) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["run"], r["worker"], r["span"]): r for r in _get(client, "runs/table")["rows"]}


@pytest.fixture(scope="module")
def ranks(client: PluginClient) -> dict[tuple[str, str], dict[str, Any]]:
    """Rank rows of every run's distributed answer (the workers' first spans), by (run, worker)."""
    out = {}
    for run in RUNS:
        body = _get(client, "distributed", run=run)
        for row in body["ranks"]:
            out[(run, row["worker"])] = row
    return out


def _first_span(run: str, worker: str) -> str:
    from profscope.tb_plugin import layout

    spans = sorted((s for r, w, s in SPANS if r == run and w == worker), key=layout.span_sort_key)
    return spans[0]


@pytest.mark.parametrize("span", [pytest.param(s, marks=_known(s[0], "numbers")) for s in SPANS], ids=_ids(SPANS))
def test_one_number_per_quantity(client: PluginClient, table: dict, ranks: dict, span: tuple[str, str, str]) -> None:
    run, worker, name = span
    q = {"run": run, "worker": worker, "span": name}
    overview = _get(client, "overview", **q)
    mean = overview["mean_step_time"]
    steps = overview["steps"]
    assert steps, "a span always has at least one step"

    # Breakdown categories sum to each step's time, and their means to the mean step time.
    for step in steps:
        assert all(v >= 0 for v in step["breakdown"].values()), step
        _close(sum(step["breakdown"].values()), step["dur"], f"{step['name']} breakdown sum")
    _close(sum(overview["breakdown"].values()), mean, "mean breakdown sum")
    _close(float(np.mean([s["dur"] for s in steps])), mean, "mean of the step durations")
    _close(overview["benchmark"]["mean_step_time"], mean, "benchmark mean step time")

    # Shares, utilizations and efficiencies are fractions.
    for device in overview["devices"]:
        for key in ("utilization", "sm_efficiency", "achieved_occupancy", "tensor_core_share"):
            _fraction(device.get(key), f"device {device['id']} {key}")
    comm = overview["communication"]
    _fraction(comm["overlap_ratio"], "communication overlap ratio")
    _fraction(overview["benchmark"]["dataloader_share"], "dataloader share")
    assert comm["overlap"] <= min(comm["total"], comm["computation"]) + 1e-6
    # Exposed communication is the overview's Communication category.
    _close(comm["exposed"], overview["breakdown"]["communication"], "exposed communication vs breakdown")
    _close(comm["total"] - comm["overlap"], comm["exposed"], "communication - overlap")
    if overview["device_busy"] is not None:
        assert 0 <= overview["device_busy"] <= mean + 1e-6
        _close(overview["device_busy"] + overview["device_idle"], mean, "device busy + idle")
        # The Kernel, Memcpy and Memset categories are device time: within the busy time.
        device_categories = sum(overview["breakdown"][c] for c in ("kernel", "memcpy", "memset"))
        assert device_categories <= overview["device_busy"] + 1e-3

    kernels = _get(client, "kernels", **q)
    _fraction(kernels["tensor_core_share"], "kernels tensor core share")
    for row in kernels["rows"]:
        _fraction(row["achieved_occupancy"], f"{row['name']} achieved occupancy")
        assert row["min"] <= row["mean"] + 1e-9 <= row["max"] + 2e-9
    # Device figures are over the steps: the kernel view says the same within the steps.
    if overview["devices"]:
        assert kernels["in_steps"] is not None
        _close(sum(d["kernel_time"] + d["communication_time"] for d in overview["devices"]), kernels["in_steps"]["total"],
               "kernel time within the steps: devices vs kernels")
        assert kernels["in_steps"]["total"] <= kernels["total"] + 1e-3
    if len(overview["devices"]) == 1 and kernels["in_steps"]["total"] > 0:
        device_share, kernel_share = overview["devices"][0]["tensor_core_share"], kernels["in_steps"]["tensor_core_share"]
        assert (device_share is None) == (kernel_share is None) == (not kernels["tensor_cores_known"])
        if device_share is not None:
            _close(device_share, kernel_share, "Tensor Core share within the steps")

    model = client.plugin.manager.span(run, worker, name).model
    _kernel_time_within_steps(model, steps)

    # The run table shows the overview's numbers.
    row = table[span]
    _close(row["mean_step_time"], mean, "run table mean step time")
    assert row["steps"] == len(steps)
    for category, value in overview["breakdown"].items():
        _close(row["breakdown"][category], value, f"run table {category}")
        _fraction(row["shares"][category], f"run table {category} share")
    utilizations = [d["utilization"] for d in overview["devices"]]
    if utilizations:
        _close(row["gpu_utilization"], float(np.mean(utilizations)), "run table GPU utilization")

    # The Distributed view's rank row (each worker's first span) shows the overview's numbers.
    rank = ranks.get((run, worker))
    if rank is not None and name == _first_span(run, worker):
        _close(rank["step_time"], mean, "distributed step time")
        _close(rank["communication"], comm["total"], "distributed communication")
        _close(rank["overlap"], comm["overlap"], "distributed overlap")
        _close(rank["compute"], comm["computation"], "distributed computation")
        _close(rank["communication"] - rank["overlap"], overview["breakdown"]["communication"],
               "distributed exposed communication vs the overview's Communication")
        _close(rank["compute"] + rank["communication"] - rank["overlap"] + rank["other"], rank["step_time"],
               "distributed parts sum")
        _close(rank["wait"] + rank["transfer"], rank["communication"], "wait + transfer")

    # Step trace and data pipeline: the overview's steps, its communication and data wait per step.
    step_trace = _get(client, "steptrace", **q)
    if step_trace["markers"].get("time_base") in ("host", "device"):
        assert [s["name"] for s in step_trace["steps"]] == [s["name"] for s in steps]
        for traced, step in zip(step_trace["steps"], steps):
            _close(traced["dur"], step["dur"], f"{step['name']} step trace duration")
            if traced["phases"]["communication"] is not None:
                _close(traced["phases"]["communication"], step["breakdown"]["communication"],
                       f"{step['name']} step trace communication")
    pipeline = _get(client, "datapipeline", **q)
    for piped, step in zip(pipeline.get("steps", []), steps):
        _close(piped["dur"], step["dur"], f"{step['name']} data pipeline duration")
        _close(piped["data_wait"], step["breakdown"]["dataloader"], f"{step['name']} data wait")

    # Peak memory: the memory view's, in the run table and the Scalars.
    memory = _get(client, "memory", **q)
    peaks = {device: peak["allocated"] for device, peak in memory["peak"].items()}
    if peaks:
        by_type: dict[str, int] = {}
        for device in memory["devices"]:
            kind = device["name"].rstrip("0123456789 ")
            by_type[kind] = max(by_type.get(kind, 0), peaks[device["id"]])
        assert row["peak_memory"] == by_type
    else:
        assert row["peak_memory"] is None

    # The Scalars dashboard's values are the overview's and the memory view's.
    scalars = span_scalars.span_scalars(model)
    if mean > 0:
        _close(scalars[span_scalars.STEP_TIME_MS] * 1000.0, mean, "Scalars step time")
        for category in overview["categories"]:
            _close(scalars[span_scalars.BREAKDOWN_PREFIX + category], overview["breakdown"][category] / mean,
                   f"Scalars {category} share", abs_tol=1e-9)
    for device, peak in peaks.items():
        assert scalars[span_scalars.PEAK_MEMORY_PREFIX + device] == peak

    # Comparing the span with itself: every delta is zero.
    compare = _get(client, "compare", base_run=run, base_worker=worker, base_span=name,
                   exp_run=run, exp_worker=worker, exp_span=name)
    assert all(v == 0 for v in compare["breakdown"]["delta"].values())
    assert compare["step_time"]["delta"] == 0 and compare["step_time"]["base"] == mean
    for key in ("operators", "kernels"):
        for joined in compare[key]:
            assert joined["side"] == "both" and joined["impact"] == 0
            assert all(v in (0, None) for v in joined["delta"].values())
    assert any(note["id"] == "same_span" for note in compare["notes"])

    # The summary command and the report print the overview's mean step time.
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["summary", "--logdir", str(REAL_TRACES), "--run", run, "--worker", worker,
                         "--span", name]) == 0
    printed = out.getvalue().splitlines()
    total_line = next(line for line in printed if line.startswith("Step (total)"))
    assert format_us(mean) in total_line, total_line
    if comm["total"] > 0:  # the same communication and overlap as the overview and the Distributed view
        assert f"Communication: {communication_line(overview)}" in printed
    views = collect_span(model, f"{run} · {worker} · {name}", details=q)
    assert views.overview["mean_step_time"] == mean
    assert format_us(mean) in report_html(views)


def _kernel_time_within_steps(model: Any, steps: list[dict[str, Any]]) -> None:
    """Per step: the summed time of kernels within it is at most the step time x the device streams."""
    kinds = SliceKinds(model)
    rows = np.flatnonzero(kinds.kernel)
    if not len(rows):
        return
    s = model.slices
    streams = len(np.unique(s.track[rows]))
    for step in steps:
        lo = step["start"] * 1000.0  # the overview's µs are the model's ns / 1000
        hi = lo + step["dur"] * 1000.0
        clipped = np.clip(s.end[rows], lo, hi) - np.clip(s.start[rows], lo, hi)
        assert clipped.sum() <= step["dur"] * 1000.0 * streams + 1.0, (step["name"], streams)
