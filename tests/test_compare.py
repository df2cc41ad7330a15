"""Compare and the run table: exact deltas on hand-made spans, real spans, and the routes' contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views.answers import CompareSide, compare, run_table
from profscope.tb_plugin.views.kernels import kernels
from profscope.tb_plugin.views.overview import CATEGORIES, overview
from profscope.tb_plugin.views.memory import memory
from profscope.tb_plugin.views.runs.table import TableSpan, peak_memory

from conftest import copy_trace, real_trace
from handmade import gpu_step_trace, trace, write, x
from test_routes import check

RESNET = "kineto_resnet50/resnet50_num_workers_0"
W0 = "torch213/dataloader_bound_w0"
W2 = "torch213/dataloader_bound_w2"


# --- hand-made spans ---------------------------------------------------------------------


def cpu_span(steps: list[list[tuple[str, float, Optional[list[Any]]]]], step_us: float = 1000.0) -> dict[str, Any]:
    """A CPU-only span: one ProfilerStep per entry, holding back-to-back ops (name, µs, input dims)."""
    events: list[dict[str, Any]] = []
    for number, ops in enumerate(steps):
        start = number * step_us
        events.append(x(f"ProfilerStep#{number + 1}", start, step_us - 10, cat="user_annotation"))
        t = start + 5
        for name, dur, dims in ops:
            events.append(x(name, t, dur, args={"Input Dims": dims} if dims is not None else None))
            t += dur + 1
    return trace(events)


def load(tmp_path: Path, name: str, doc: dict[str, Any]) -> TraceModel:
    return load_trace(str(write(tmp_path / f"{name}.json", doc)))


def side(model: TraceModel, run: str, span: str = "1") -> CompareSide:
    return CompareSide(run=run, worker="worker0", span=span, model=model)


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in rows}


def test_exact_operator_delta_and_impact(tmp_path: Path) -> None:
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 100, None), ("aten::mm", 100, None), ("aten::add", 10, None)]]))
    exp = load(tmp_path, "exp", cpu_span([[("aten::mm", 60, None), ("aten::mm", 60, None), ("aten::add", 10, None)]]))
    result = compare(side(base, "a"), side(exp, "b"))
    mm = by_name(result["operators"])["aten::mm"]
    assert mm["side"] == "both"
    assert mm["base"]["host_total"] == 200 and mm["exp"]["host_total"] == 120
    assert mm["delta"] == {"calls": 0, "host_self": -80, "host_total": -80, "device_self": 0, "device_total": 0}
    # One step on each side, no device: impact is the host total difference per step.
    assert mm["per_step"] == {"base": 200, "exp": 120}
    assert mm["impact"] == -80
    assert mm["ratio"] == pytest.approx(0.6)
    add = by_name(result["operators"])["aten::add"]
    assert add["impact"] == 0 and add["ratio"] == 1
    assert result["operators"][0]["name"] == "aten::mm"  # largest |impact| first
    assert result["base"]["steps"] == result["exp"]["steps"] == 1
    assert result["notes"] == []
    assert result["kernels"] == []


def test_step_time_and_breakdown_are_the_overviews(tmp_path: Path) -> None:
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 100, None)]], step_us=1000))
    exp = load(tmp_path, "exp", cpu_span([[("aten::mm", 100, None)]], step_us=600))
    result = compare(side(base, "a"), side(exp, "b"))
    assert result["step_time"]["base"] == 990 and result["step_time"]["exp"] == 590
    assert result["step_time"]["delta"] == -400
    assert result["step_time"]["ratio"] == pytest.approx(590 / 990)
    b, e = overview(base)["breakdown"], overview(exp)["breakdown"]
    for category in CATEGORIES:
        assert result["breakdown"]["base"][category] == b[category]
        assert result["breakdown"]["delta"][category] == pytest.approx(e[category] - b[category])
    assert result["breakdown"]["ratio"]["kernel"] is None  # no kernel time in the baseline: no ratio
    assert result["breakdown"]["delta"]["other"] == pytest.approx(-400)  # the step shrank by idle time
    assert result["categories"] == ["communication", "runtime", "dataloader", "cpu_exec", "other"]


def test_one_sided_operators_are_listed_with_the_other_side_null(tmp_path: Path) -> None:
    base = load(tmp_path, "base", cpu_span([[("aten::relu", 30, None), ("aten::mm", 50, None)]]))
    exp = load(tmp_path, "exp", cpu_span([[("aten::gelu", 45, None), ("aten::mm", 50, None)]]))
    rows = by_name(compare(side(base, "a"), side(exp, "b"))["operators"])
    relu, gelu = rows["aten::relu"], rows["aten::gelu"]
    assert relu["side"] == "base" and relu["exp"] is None and relu["base"]["calls"] == 1
    assert relu["delta"]["calls"] == -1 and relu["delta"]["host_total"] == -30 and relu["impact"] == -30
    assert relu["ratio"] is None and relu["per_step"] == {"base": 30, "exp": None}
    assert gelu["side"] == "exp" and gelu["base"] is None
    assert gelu["delta"]["calls"] == 1 and gelu["impact"] == 45
    assert rows["aten::mm"]["impact"] == 0


def test_different_step_counts_compare_per_step(tmp_path: Path) -> None:
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 100, None), ("aten::mm", 100, None)]]))
    exp = load(tmp_path, "exp", cpu_span([[("aten::mm", 60, None), ("aten::mm", 60, None)]] * 2))
    result = compare(side(base, "a"), side(exp, "b"))
    assert (result["base"]["steps"], result["exp"]["steps"]) == (1, 2)
    mm = by_name(result["operators"])["aten::mm"]
    assert mm["delta"]["calls"] == 2 and mm["delta"]["host_total"] == 40  # span totals: 240 vs 200
    assert mm["per_step"] == {"base": 200, "exp": 120}
    assert mm["impact"] == -80  # per step, the experiment is 80 µs faster
    (note,) = [n for n in result["notes"] if n["id"] == "step_counts_differ"]
    assert note["evidence"] == {"base_steps": 1, "exp_steps": 2}


def test_per_sample_with_batch_sizes_from_manifest_and_page(tmp_path: Path) -> None:
    # Baseline: batch 32, step 990 µs. Experiment: batch 64, step 1590 µs: slower per step, faster per sample.
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 320, None)]], step_us=1000))
    exp = load(tmp_path, "exp", cpu_span([[("aten::mm", 480, None)]], step_us=1600))
    result = compare(CompareSide("a", "worker0", "1", base, batch_size=32),
                     CompareSide("b", "worker0", "1", exp, batch_size=None, page_batch_size=64))
    assert (result["base"]["batch_size"], result["base"]["batch_size_source"]) == (32, "manifest")
    assert (result["exp"]["batch_size"], result["exp"]["batch_size_source"]) == (64, "page")
    assert result["step_time"]["delta"] == 600
    per_sample = result["per_sample"]
    assert per_sample["base"] == pytest.approx(990 / 32) and per_sample["exp"] == pytest.approx(1590 / 64)
    assert per_sample["ratio"] == pytest.approx((1590 / 64) / (990 / 32))
    assert per_sample["samples_per_second"]["base"] == pytest.approx(32 / 990e-6)
    assert per_sample["samples_per_second"]["exp"] == pytest.approx(64 / 1590e-6)
    assert result["breakdown_per_sample"]["exp"]["other"] == pytest.approx(result["breakdown"]["exp"]["other"] / 64)
    mm = by_name(result["operators"])["aten::mm"]
    assert mm["impact"] == 160  # per step: 480 - 320
    assert mm["per_sample"] == {"base": 10.0, "exp": 7.5, "impact": -2.5, "ratio": 0.75}
    note = result["notes"][0]
    assert note["id"] == "batch_sizes_differ"
    assert "per step the experiment is slower (+61%), per sample it is faster (-20%)" in note["text"]


def test_no_per_sample_without_both_batch_sizes(tmp_path: Path) -> None:
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 100, None)]]))
    result = compare(CompareSide("a", "worker0", "1", base, batch_size=32), side(base, "b"))
    assert result["per_sample"] is None and result["breakdown_per_sample"] is None
    assert "per_sample" not in result["operators"][0]
    assert all(n["id"] != "batch_sizes_differ" for n in result["notes"])


def test_group_by_input_shape(tmp_path: Path) -> None:
    small, large = [[8, 8], [8, 8]], [[64, 64], [64, 64]]
    base = load(tmp_path, "base", cpu_span([[("aten::mm", 10, small), ("aten::mm", 100, large)]]))
    exp = load(tmp_path, "exp", cpu_span([[("aten::mm", 10, small), ("aten::mm", 70, large), ("aten::mm", 5, [[2, 2]])]]))
    result = compare(side(base, "a"), side(exp, "b"), group_by="input_shape")
    rows = {(r["name"], r["input_shape"]): r for r in result["operators"]}
    assert rows[("aten::mm", "[[64,64],[64,64]]")]["impact"] == -30
    assert rows[("aten::mm", "[[8,8],[8,8]]")]["impact"] == 0
    only_exp = rows[("aten::mm", "[[2,2]]")]
    assert only_exp["side"] == "exp" and only_exp["impact"] == 5
    assert [r["impact"] for r in result["operators"][:2]] == [-30, 5]
    # By name, the three rows of aten::mm are one.
    assert by_name(compare(side(base, "a"), side(exp, "b"))["operators"])["aten::mm"]["impact"] == -25


def gpu_span(kernel_name: str, device_name: str, kernel_us: float) -> dict[str, Any]:
    """One step: aten::mm launches one kernel (named by the hardware) of `kernel_us`."""
    events = [
        x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("aten::mm", 10, 200, args={"External id": 5}),
        x("cudaLaunchKernel", 20, 10, cat="cuda_runtime", args={"correlation": 9, "External id": 5}),
        x(kernel_name, 100, kernel_us, cat="kernel", pid=0, tid=7,
          args={"correlation": 9, "External id": 5, "device": 0, "stream": 7}),
    ]
    return trace(events, deviceProperties=[{"id": 0, "name": device_name}])


def test_cross_hardware_operators_compare_and_kernels_are_noted(tmp_path: Path) -> None:
    base = load(tmp_path, "base", gpu_span("sm90_xmma_gemm_f32f32", "NVIDIA H100", 400))
    exp = load(tmp_path, "exp", gpu_span("Cijk_Ailk_Bljk_SB_MT64x64", "AMD Instinct MI300X", 300))
    result = compare(side(base, "h100"), side(exp, "mi300"))
    assert result["base"]["devices"] == ["NVIDIA H100"] and result["exp"]["devices"] == ["AMD Instinct MI300X"]
    mm = by_name(result["operators"])["aten::mm"]
    assert mm["side"] == "both"
    assert mm["delta"]["device_total"] == -100 and mm["impact"] == -100  # device time: the run has a GPU
    assert mm["delta"]["host_total"] == 0
    kernel_rows = by_name(result["kernels"])
    assert kernel_rows["sm90_xmma_gemm_f32f32"]["side"] == "base"
    assert kernel_rows["sm90_xmma_gemm_f32f32"]["delta"] == {"calls": -1, "total": -400, "mean": None}
    assert kernel_rows["Cijk_Ailk_Bljk_SB_MT64x64"]["impact"] == 300
    notes = {n["id"]: n for n in result["notes"]}
    assert "devices_differ" in notes
    unmatched = notes["unmatched_kernels"]
    assert unmatched["evidence"]["base_unmatched"] == 1 and unmatched["evidence"]["exp_unmatched"] == 1
    assert "operator table" in unmatched["text"]


def test_matched_kernels_have_exact_deltas(tmp_path: Path) -> None:
    base = load(tmp_path, "base", gpu_span("gemm_kernel", "GPU", 400))
    exp = load(tmp_path, "exp", gpu_span("gemm_kernel", "GPU", 250))
    result = compare(side(base, "a"), side(exp, "b"))
    (row,) = result["kernels"]
    assert row["side"] == "both"
    assert row["delta"] == {"calls": 0, "total": -150, "mean": -150}
    assert row["impact"] == -150 and row["ratio"] == pytest.approx(250 / 400)
    assert result["notes"] == []


def test_a_span_against_itself(tmp_path: Path) -> None:
    model = load(tmp_path, "gpu", gpu_step_trace())
    result = compare(side(model, "a"), side(model, "a"))
    assert [n["id"] for n in result["notes"]] == ["same_span"]
    assert all(row["impact"] == 0 for row in result["operators"] + result["kernels"])
    assert result["step_time"]["delta"] == 0 and result["step_time"]["ratio"] == 1


def test_unknown_group_by_is_refused(tmp_path: Path) -> None:
    model = load(tmp_path, "gpu", gpu_step_trace())
    with pytest.raises(ValueError):
        compare(side(model, "a"), side(model, "a"), group_by="stack")


# --- real spans --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet_spans() -> list[TraceModel]:
    return [load_trace(str(p)) for p in sorted(real_trace(RESNET).glob("*.pt.trace.json.gz"))]


def test_two_spans_of_one_job(resnet_spans: list[TraceModel]) -> None:
    first, second = resnet_spans
    result = compare(side(first, "resnet", "1"), side(second, "resnet", "2"))
    a, b = overview(first), overview(second)
    for category in CATEGORIES:
        assert result["breakdown"]["delta"][category] == pytest.approx(b["breakdown"][category] - a["breakdown"][category])
    assert result["step_time"]["delta"] == pytest.approx(b["mean_step_time"] - a["mean_step_time"])
    # The same job on the same GPU: every kernel name has its namesake.
    assert all(row["side"] == "both" for row in result["kernels"])
    assert len(result["kernels"]) == len(kernels(first)["rows"])
    assert not any(n["id"] == "unmatched_kernels" for n in result["notes"])
    assert result["base"]["devices"] == result["exp"]["devices"] == ["Tesla V100-DGXS-32GB"]
    impacts = [abs(row["impact"]) for row in result["operators"]]
    assert impacts == sorted(impacts, reverse=True)
    # Both spans have device time: impact is the device total difference per step.
    top = result["operators"][0]
    assert top["impact"] == pytest.approx(
        top["exp"]["device_total"] / result["exp"]["steps"] - top["base"]["device_total"] / result["base"]["steps"])


def test_the_dataloader_category_drops_with_more_workers() -> None:
    w0 = load_trace(str(next(real_trace(W0).glob("*.pt.trace.json.gz"))))
    w2 = load_trace(str(next(real_trace(W2).glob("*.pt.trace.json.gz"))))
    result = compare(side(w0, "w0"), side(w2, "w2"))
    breakdown = result["breakdown"]
    assert breakdown["delta"]["dataloader"] < 0
    assert breakdown["ratio"]["dataloader"] < 0.5  # num_workers=2 hides most of the loading
    assert breakdown["delta"]["dataloader"] == pytest.approx(
        overview(w2)["breakdown"]["dataloader"] - overview(w0)["breakdown"]["dataloader"])
    assert result["kernels"] == [] and not result["base"]["has_device"]
    assert "kernel" not in result["categories"]
    # CPU only: operator impact is host time.
    top = result["operators"][0]
    assert top["impact"] == pytest.approx(top["exp"]["host_total"] / 3 - top["base"]["host_total"] / 3)


# --- run table ---------------------------------------------------------------------------


def test_run_table_rows(tmp_path: Path) -> None:
    gpu = load(tmp_path, "gpu", gpu_step_trace())
    cpu = load(tmp_path, "cpu", cpu_span([[("aten::mm", 100, None)]] * 2))
    table = run_table([
        TableSpan("gpu", "worker0", "1", 0, "ready", model=gpu, manifest={"batch_size": 32, "tags": {"lr": 0.1}}),
        TableSpan("cpu", "worker0", "1", 0, "ready", model=cpu),
        TableSpan("big", "worker0", "7", 1, "loading", progress=0.25),
        TableSpan("bad", "worker0", "1", 0, "error", error="truncated gzip"),
    ])
    check(json.loads(json.dumps(table)), "RunTable")
    gpu_row, cpu_row, loading, failed = table["rows"]
    gpu_overview = overview(gpu, batch_size=32)
    assert gpu_row["mean_step_time"] == gpu_overview["mean_step_time"]
    assert gpu_row["steps"] == 1 and gpu_row["batch_size"] == 32 and gpu_row["tags"] == {"lr": 0.1}
    assert gpu_row["shares"]["kernel"] == pytest.approx(gpu_overview["breakdown"]["kernel"] / gpu_overview["mean_step_time"])
    assert gpu_row["gpu_utilization"] == pytest.approx(gpu_overview["devices"][0]["utilization"])
    assert gpu_row["peak_memory"] == {"GPU": 512}
    assert gpu_row["devices"] == ["Test GPU"]
    assert cpu_row["gpu_utilization"] is None and cpu_row["peak_memory"] is None and cpu_row["steps"] == 2
    assert cpu_row["batch_size"] is None and cpu_row["tags"] is None
    assert loading["status"] == "loading" and loading["progress"] == 0.25 and "mean_step_time" not in loading
    assert failed["status"] == "error" and failed["error"] == "truncated gzip" and "steps" not in failed


def test_run_table_peak_memory_is_the_memory_views_peak() -> None:
    model = load_trace(str(next(real_trace("torch213/conv_cpu_memory").glob("*.pt.trace.json.gz"))))
    view = memory(model)
    (cpu,) = [d for d in view["devices"] if d["name"] == "CPU"]
    assert peak_memory(view) == {"CPU": view["peak"][cpu["id"]]["allocated"]}
    assert peak_memory(view)["CPU"] > 0


def test_run_table_ignores_malformed_manifest_values(tmp_path: Path) -> None:
    cpu = load(tmp_path, "cpu", cpu_span([[("aten::mm", 100, None)]]))
    (row,) = run_table([TableSpan("r", "w", "1", 0, "ready", model=cpu,
                                  manifest={"batch_size": "32", "tags": {"ok": "x", "bad": [1], "flag": True}})])["rows"]
    assert row["batch_size"] is None and row["tags"] == {"ok": "x"}


# --- routes ------------------------------------------------------------------------------


@pytest.fixture
def compare_client(tmp_path: Path, make_client):
    logdir = tmp_path / "logdir"
    for source in sorted(real_trace(RESNET).glob("*.pt.trace.json.gz")):
        copy_trace(source, logdir / "resnet")
    copy_trace(next(real_trace(W0).glob("*.pt.trace.json.gz")), logdir / "w0")
    copy_trace(next(real_trace(W2).glob("*.pt.trace.json.gz")), logdir / "w2")
    client = make_client(logdir)
    client.settle()
    return client


def _spans(client, run: str) -> list[str]:
    _, runs = client.get("runs")
    (entry,) = [r for r in runs["runs"] if r["name"] == run]
    return entry["workers"][0]["spans"]


def test_compare_route(compare_client) -> None:
    first, second = _spans(compare_client, "resnet")
    status, body = compare_client.get("compare", base_run="resnet", base_worker="worker0", base_span=first,
                                      exp_run="resnet", exp_worker="worker0", exp_span=second)
    assert status == 200
    check(body, "Compare")
    assert (body["base"]["span"], body["exp"]["span"]) == (first, second)
    _, base_overview = compare_client.get("overview", run="resnet", worker="worker0", span=first)
    assert body["step_time"]["base"] == base_overview["mean_step_time"]
    # Across runs, span omitted (one span per worker), grouped by input shape.
    status, body = compare_client.get("compare", base_run="w0", base_worker="worker0", exp_run="w2",
                                      exp_worker="worker0", group_by="input_shape")
    assert status == 200
    check(body, "Compare")
    assert body["group_by"] == "input_shape" and all("input_shape" in row for row in body["operators"])
    assert body["base"]["span"] == _spans(compare_client, "w0")[0]
    assert body["breakdown"]["delta"]["dataloader"] < 0


@pytest.mark.parametrize("params, status, side", [
    ({"base_run": "nope"}, 404, "baseline"),
    ({"exp_worker": "nope"}, 404, "experiment"),
    ({"exp_span": "123"}, 404, "experiment"),
    ({"base_run": "resnet", "base_span": ""}, 404, "baseline"),  # two spans: which one?
    ({"group_by": "stack"}, 400, None),
    ({"exp_run": ""}, 400, None),
])
def test_compare_route_errors(compare_client, params: dict[str, str], status: int, side: Optional[str]) -> None:
    query = {"base_run": "w0", "base_worker": "worker0", "exp_run": "w2", "exp_worker": "worker0", **params}
    got, body = compare_client.get("compare", **query)
    assert got == status, body
    check(body, "Error")
    if side is not None:
        assert body["error"].startswith(side), body


def test_compare_route_answers_202_while_a_side_loads(tmp_path: Path, make_client, monkeypatch) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(next(real_trace(W0).glob("*.pt.trace.json.gz")), logdir / "w0")
    client = make_client(logdir)
    manager = client.plugin.manager

    def never_loads(key, state, identity):
        state.status = "loading"

    monkeypatch.setattr(manager, "_submit", never_loads)
    monkeypatch.setattr(manager, "_try_cache", lambda identity: None)
    manager.refresh()
    status, body = client.get("compare", base_run="w0", base_worker="worker0", exp_run="w0", exp_worker="worker0")
    assert status == 202
    check(body, "Loading")
    status, table = client.get("runs/table")
    assert status == 200
    check(table, "RunTable")
    (row,) = table["rows"]
    assert row["status"] == "loading" and "mean_step_time" not in row


def test_runs_table_route(compare_client) -> None:
    status, table = compare_client.get("runs/table")
    assert status == 200
    check(table, "RunTable")
    rows = {(r["run"], r["span_index"]): r for r in table["rows"]}
    assert sorted(rows) == [("resnet", 0), ("resnet", 1), ("w0", 0), ("w2", 0)]
    assert all(r["status"] == "ready" for r in rows.values())
    first = rows[("resnet", 0)]
    _, base_overview = compare_client.get("overview", run="resnet", worker="worker0", span=first["span"])
    assert first["mean_step_time"] == base_overview["mean_step_time"]
    assert first["steps"] == len(base_overview["steps"])
    assert first["gpu_utilization"] == pytest.approx(base_overview["devices"][0]["utilization"])
    assert rows[("w0", 0)]["gpu_utilization"] is None
    assert rows[("w0", 0)]["shares"]["dataloader"] > rows[("w2", 0)]["shares"]["dataloader"]
