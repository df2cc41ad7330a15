"""Overview, operator and kernel numbers against references.

- ResNet-50 GPU traces: what the established TensorBoard profiler plugin reports
  (tests/data/kineto_resnet50/expectations.json), within 1% or 1 µs.
- PyTorch 2.13 CPU traces: torch's own key_averages() for the same span (calls exact,
  self/total CPU time within 2% for the top 20 aten:: operators).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.kernels import kernels
from profscope.tb_plugin.views.operators import operators
from profscope.tb_plugin.views.overview import overview

from conftest import REAL_TRACES, real_trace

CATEGORY_KEYS = {"Kernel": "kernel", "Memcpy": "memcpy", "Memset": "memset", "Runtime": "runtime",
                 "DataLoader": "dataloader", "CPU Exec": "cpu_exec", "Other": "other"}


def close(ours: float, theirs: float, rel: float = 0.01, abs_us: float = 1.0) -> bool:
    return abs(ours - theirs) <= max(abs_us, rel * abs(theirs))


def _expectations() -> dict:
    return json.loads(real_trace("kineto_resnet50/expectations.json").read_text())["files"]


RESNET_FILES = ["resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
                "resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"]


@pytest.fixture(scope="module", params=RESNET_FILES)
def resnet(request):
    expected = _expectations()[request.param]
    return load_trace(str(real_trace("kineto_resnet50/" + request.param))), expected


def test_resnet_step_breakdown(resnet) -> None:
    model, expected = resnet
    result = overview(model)
    want_steps = expected["overview"]["steps_us"]
    assert [s["name"] for s in result["steps"]] == [f"ProfilerStep#{s['Step']}" for s in want_steps]
    for got, want in zip(result["steps"], want_steps):
        assert close(got["dur"], want["Total"]), (got["name"], got["dur"], want["Total"])
        for their_key, our_key in CATEGORY_KEYS.items():
            assert close(got["breakdown"][our_key], want[their_key]), (got["name"], our_key)
        assert sum(got["breakdown"].values()) == pytest.approx(got["dur"])
    average = expected["overview"]["average_us"]
    assert close(result["mean_step_time"], average["Average Step Time"])
    for their_key, our_key in CATEGORY_KEYS.items():
        assert close(result["breakdown"][our_key], average[their_key]), our_key


def test_resnet_gpu_summary(resnet) -> None:
    model, expected = resnet
    want = expected["overview"]["gpu_summary"]
    (device,) = overview(model)["devices"]
    assert device["name"] == want["Name"]
    assert device["compute_capability"] == want["Compute Capability"]
    assert f"{device['memory'] / 1024**3:.2f} GB" == want["Memory"]
    for key, theirs in [("utilization", "GPU Utilization"), ("sm_efficiency", "Est. SM Efficiency"),
                        ("achieved_occupancy", "Est. Achieved Occupancy"),
                        ("tensor_core_share", "Kernel Time using Tensor Cores")]:
        assert round(device[key] * 100, 2) == pytest.approx(float(want[theirs].rstrip(" %")), abs=0.01), key


def test_resnet_recommendations(resnet) -> None:
    model, expected = resnet
    result = overview(model)
    recs = {r["id"]: r for r in result["recommendations"]}
    # The reference says: DataLoader share (its first text) and Tensor-Core-eligible kernels (68%).
    share = float(expected["overview"]["recommendations"][0].split("%")[0].split()[-1])
    assert round(recs["dataloader_bound"]["evidence"]["dataloader_share"] * 100, 1) == share
    assert round(recs["tensor_cores_unused"]["evidence"]["eligible_kernel_share"] * 100) == 68
    # GPU utilization is above 50% here: no low-utilization advice.
    assert "low_gpu_utilization" not in recs


def test_resnet_operators(resnet) -> None:
    model, expected = resnet
    result = operators(model)
    assert len(result["rows"]) == expected["operator_count"]
    rows = {r["name"]: r for r in result["rows"]}
    for want in expected["top_operators_by_device_self"]:
        got = rows[want["name"]]
        assert got["calls"] == want["calls"]
        for ours, theirs in [("device_self", "device_self_duration"), ("device_total", "device_total_duration"),
                             ("host_self", "host_self_duration"), ("host_total", "host_total_duration")]:
            assert close(got[ours], want[theirs]), (want["name"], ours, got[ours], want[theirs])
        assert got["tc_eligible"] == (want["tc_eligible"] == "Yes")
        assert got["tc_self_share"] == pytest.approx(want["tc_self_ratio"], abs=1e-6)
    # Device-side order: ours is sorted by device self time as theirs is.
    top = [r["name"] for r in result["rows"][: len(expected["top_operators_by_device_self"])]]
    assert top == [w["name"] for w in expected["top_operators_by_device_self"]]
    pie = expected.get("operator_pie_top5")
    if pie:
        for metric, key in [("device_total_time", "device_total"), ("host_self_time", "host_self"),
                            ("host_total_time", "host_total"), ("device_self_time", "device_self")]:
            for name, value in pie[metric]:
                assert close(rows[name][key], value), (metric, name)


def test_resnet_kernels(resnet) -> None:
    model, expected = resnet
    result = kernels(model)
    assert len(result["rows"]) == expected["kernel_count"]
    if "kernel_total_us_sum" in expected:
        assert close(result["total"], expected["kernel_total_us_sum"])
    rows = {r["name"]: r for r in result["rows"]}
    for want in expected["top_kernels_by_total"]:
        got = rows[want["Name"]]
        assert got["calls"] == want["Calls"]
        assert close(got["total"], want["Total Duration (us)"])
        assert close(got["max"], want["Max Duration (us)"]) and close(got["min"], want["Min Duration (us)"])
        assert abs(got["mean"] - want["Mean Duration (us)"]) <= 1.0  # theirs is rounded to an integer
        assert round(got["blocks_per_sm"], 2) == pytest.approx(want["Mean Blocks Per SM"], abs=0.011)
        assert round(got["achieved_occupancy"] * 100, 2) == pytest.approx(
            want["Mean Est. Achieved Occupancy (%)"], abs=0.011)
        assert got["tensor_cores"] == (want["Tensor Cores Used"] == "Yes")
    by_op = kernels(model, group_by="op_and_name")
    assert sum(r["calls"] for r in by_op["rows"]) == sum(r["calls"] for r in result["rows"])


def _torch213_traces() -> list[Path]:
    folder = REAL_TRACES / "torch213"
    return sorted(folder.glob("*/*.pt.trace.json.gz")) if folder.exists() else []


def _key_averages(trace: Path) -> dict:
    stem = trace.name.replace(".pt.trace.json.gz", "")
    return json.loads((trace.parent / f"{stem}.key_averages.json").read_text())


@pytest.mark.parametrize("trace", _torch213_traces(), ids=lambda p: f"{p.parent.name}/{p.name[:20]}")
def test_operators_agree_with_key_averages(trace: Path) -> None:
    reference = _key_averages(trace)
    model = load_trace(str(trace))
    by_name = {r["name"]: r for r in operators(model)["rows"]}
    aten = [r for r in reference["by_name"] if r["name"].startswith("aten::")]
    top = sorted(aten, key=lambda r: -r["self_cpu_us"])[:20]
    assert top, "the reference has aten:: rows"
    for want in top:
        got = by_name[want["name"]]
        assert got["calls"] == want["calls"], want["name"]
        assert close(got["host_self"], want["self_cpu_us"], rel=0.02, abs_us=0.5), want["name"]
        assert close(got["host_total"], want["cpu_total_us"], rel=0.02, abs_us=0.5), want["name"]


@pytest.mark.parametrize("trace", _torch213_traces(), ids=lambda p: f"{p.parent.name}/{p.name[:20]}")
def test_operators_by_input_shape_agree_with_key_averages(trace: Path) -> None:
    reference = _key_averages(trace)
    model = load_trace(str(trace))
    ours = {(r["name"], r["input_shape"]): r for r in operators(model, group_by="input_shape")["rows"]}
    aten = [r for r in reference["by_input_shape"] if r["name"].startswith("aten::")]
    top = sorted(aten, key=lambda r: -r["self_cpu_us"])[:20]
    for want in top:
        shape = json.dumps(json.loads(want["input_shapes"]), separators=(",", ":"))
        got = ours.get((want["name"], shape))
        assert got is not None, (want["name"], shape)
        assert got["calls"] == want["calls"], (want["name"], shape)
        assert close(got["host_self"], want["self_cpu_us"], rel=0.02, abs_us=0.5), (want["name"], shape)
