"""Device activity: links to the operators that launched it, what each device is called and which of its
summary figures the trace can support, accelerators other than GPUs (ROCm, MTIA, Ascend)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views.kernels import kernels
from profscope.tb_plugin.views.memory import memory
from profscope.tb_plugin.views.operators import operators
from profscope.tb_plugin.views.overview import overview
from profscope.tb_plugin.views.trace.queries import event as trace_event
from profscope.tb_plugin.views.answers import tracks as trace_tracks

from conftest import real_trace
from handmade import trace, write, x


def _load(tmp_path: Path, doc: Any, name: str = "t.json") -> TraceModel:
    return load_trace(str(write(tmp_path / name, doc)))


def _row(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(row for row in rows if row["name"] == name)


# --- links: device activity → runtime call → operator ------------------------------------------


def colliding_external_ids_trace() -> dict[str, Any]:
    """A trace whose runtime calls (and their device work) carry their correlation id as External id, as
    in a real AlexNet trace: the numbers 5 and 6 also name unrelated operators (aten::to, aten::view)."""
    gpu = {"pid": 0, "tid": 7}
    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        x("ProfilerStep#1", 0, 400, cat="user_annotation", args={"External id": 1}),
        x("aten::to", 10, 20, args={"External id": 5}),  # unrelated: ends long before the copies
        x("aten::view", 40, 5, args={"External id": 6}),
        x("aten::copy_", 50, 100, args={"External id": 2}),
        x("cudaMemcpyAsync", 60, 30, cat="cuda_runtime", args={"correlation": 5, "External id": 5}),
        x("aten::relu", 160, 40, args={"External id": 3}),
        x("cudaLaunchKernel", 170, 10, cat="cuda_runtime", args={"correlation": 6, "External id": 6}),
        # A call whose External id names no operator at all: its enclosing operator launched it.
        x("aten::add", 210, 40, args={"External id": 4}),
        x("cudaLaunchKernel", 220, 10, cat="cuda_runtime", args={"correlation": 7, "External id": 99}),
        x("Memcpy HtoD (Pageable -> Device)", 100, 55.5, cat="gpu_memcpy", **gpu,
          args={"correlation": 5, "External id": 5, "device": 0, "stream": 7, "bytes": 4096}),
        x("relu_kernel", 190, 8, cat="kernel", **gpu, args={"correlation": 6, "External id": 6, "device": 0}),
        x("add_kernel", 240, 4, cat="kernel", **gpu, args={"correlation": 7, "External id": 99, "device": 0}),
    ]
    return trace(events)


def test_device_work_is_credited_to_the_operator_that_encloses_its_launch(tmp_path: Path) -> None:
    model = _load(tmp_path, colliding_external_ids_trace())
    rows = operators(model)["rows"]
    assert _row(rows, "aten::copy_")["device_total"] == 55.5
    assert _row(rows, "aten::relu")["device_total"] == 8
    assert _row(rows, "aten::add")["device_total"] == 4
    assert _row(rows, "aten::to")["device_total"] == 0 and _row(rows, "aten::view")["device_total"] == 0
    names = model.strings
    s = model.slices
    runtime = np.flatnonzero(model.string_ids_where(lambda t: t.startswith("cuda"))[s.name])
    assert [names[s.name[model.links.op[r]]] for r in runtime] == ["aten::copy_", "aten::relu", "aten::add"]


# --- what a device is called, and which figures its trace supports ----------------------------


def _events(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


MI300X = {"id": 2, "name": "AMD Instinct MI300X", "totalGlobalMem": 205822885888, "computeMajor": 9,
          "computeMinor": 4, "maxThreadsPerBlock": 1024, "warpSize": 64, "numSms": 304}


def mi300x_trace() -> dict[str, Any]:
    """A ROCm Kineto trace of one MI300X (device 2) as ROCm's Kineto writes it: runtime calls in "cuda_runtime",
    device lanes labelled "GPU 2" by their process labels, a kernel without blocks per SM or occupancy, and
    memory events of HIP's device type (6)."""
    gpu = {"pid": 2, "tid": 0}
    events = [
        {"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": 2, "tid": 0, "args": {"labels": "GPU 2"}},
        x("ProfilerStep#0", 0, 100, cat="user_annotation", args={"External id": 1}),
        x("aten::mm", 10, 30, args={"External id": 2}),
        x("hipLaunchKernel", 12, 5, cat="cuda_runtime", args={"correlation": 9, "External id": 2}),
        x("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1", 20, 40, cat="kernel", **gpu,
          args={"correlation": 9, "External id": 2, "device": 2, "stream": 0}),
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 11, "cat": "cpu_instant_event",
         "args": {"Addr": 4096, "Bytes": 1 << 20, "Total Allocated": 1 << 20, "Total Reserved": 2 << 20,
                  "Device Type": 6, "Device Id": 2}},
    ]
    return trace(events, deviceProperties=[{**MI300X, "id": i} for i in range(8)])


def test_an_amd_gpu_is_named_by_its_properties_and_shows_only_what_its_trace_supports(tmp_path: Path) -> None:
    model = _load(tmp_path, mi300x_trace())
    (device,) = overview(model)["devices"]
    assert (device["id"], device["label"], device["kind"], device["name"]) == (2, "GPU 2", "GPU", "AMD Instinct MI300X")
    assert device["memory"] == MI300X["totalGlobalMem"] and device["compute_capability"] == "9.4"
    assert device["utilization"] == 0.4 and device["kernel_time"] == 40
    # No blocks per SM or occupancy in the trace; Tensor Cores are NVIDIA's: null, each with its reason.
    assert device["sm_efficiency"] is None and device["achieved_occupancy"] is None
    assert device["tensor_core_share"] is None
    assert set(device["unavailable"]) == {"sm_efficiency", "achieved_occupancy", "tensor_core_share"}
    assert all(reason for reason in device["unavailable"].values())
    assert "tensor_cores_unused" not in {r["id"] for r in overview(model)["recommendations"]}
    table = kernels(model)
    assert table["device_kind"] == "GPU" and table["tensor_cores_known"] is False and table["tensor_core_share"] is None
    # Memory events of HIP's device type are the GPU's, with its capacity.
    answer = memory(model)
    assert [(d["id"], d["name"], d["capacity"]) for d in answer["devices"]] == [("gpu2", "GPU 2", MI300X["totalGlobalMem"])]
    assert "GPU 2 memory" in {t["name"] for t in trace_tracks(model)["tracks"]}


def test_the_real_mi250_trace(tmp_path: Path) -> None:
    path = real_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    with gzip.open(path, "rt") as f:
        properties = {p["id"]: p for p in json.load(f)["deviceProperties"]}
    model = load_trace(str(path))
    (device,) = overview(model)["devices"]
    assert (device["label"], device["kind"], device["name"]) == ("GPU 2", "GPU", properties[2]["name"])
    assert device["memory"] == properties[2]["totalGlobalMem"]
    assert device["tensor_core_share"] is None and device["sm_efficiency"] is None
    assert device["utilization"] is not None and device["utilization"] > 0


def test_one_listed_device_and_one_device_with_work_are_the_same_device() -> None:
    """A harness's MI300X trace (TraceLens's test data): ``deviceProperties`` lists device 0, the one device the
    process saw (its [memory] events say 0 too), while its kernels run on the lanes of device 2. Every view calls
    it GPU 2 with the listed name and capacity."""
    path = real_trace("tracelens/mi300/gaunernst_bert-small-uncased/gaunernst_bert-small-uncased__1016001.json.gz")
    with gzip.open(path, "rt") as f:
        (listed,) = json.load(f)["deviceProperties"]
    assert listed["id"] == 0 and listed["name"] == "AMD Instinct MI300X VF"
    model = load_trace(str(path))
    (device,) = overview(model)["devices"]
    assert (device["id"], device["label"], device["name"]) == (2, "GPU 2", "AMD Instinct MI300X VF")
    assert device["memory"] == listed["totalGlobalMem"] and device["num_sms"] == listed["numSms"] == 304
    assert device["tensor_core_share"] is None and "tensor_core_share" in device["unavailable"]  # an AMD GPU
    assert kernels(model)["tensor_cores_known"] is False
    answer = memory(model)
    assert [(d["id"], d["name"], d["capacity"]) for d in answer["devices"] if d["id"] != "cpu"] == [
        ("gpu2", "GPU 2", listed["totalGlobalMem"])]
    names = {t["name"] for t in trace_tracks(model)["tracks"]}
    assert "GPU 2 memory" in names and "GPU 0 memory" not in names


def test_listed_devices_are_not_guessed_when_the_trace_has_several(tmp_path: Path) -> None:
    """Two listed devices, or two devices with work: each device keeps only what is listed under its own id."""
    gpu = {"pid": 5, "tid": 7}
    work = [x("kernel_a", 0, 10, cat="kernel", **gpu, args={"device": 5, "stream": 7})]
    named = {**MI300X, "id": 0}
    model = _load(tmp_path, trace(work, deviceProperties=[named, {**MI300X, "id": 1}]), "two_listed.json")
    (device,) = overview(model)["devices"]
    assert (device["label"], device["name"], device["memory"]) == ("GPU 5", "GPU 5", None)
    both = work + [x("kernel_b", 0, 10, cat="kernel", pid=6, tid=7, args={"device": 6, "stream": 7})]
    model = _load(tmp_path, trace(both, deviceProperties=[named]), "two_working.json")
    assert [(d["label"], d["name"]) for d in overview(model)["devices"]] == [("GPU 5", "GPU 5"), ("GPU 6", "GPU 6")]
    model = _load(tmp_path, trace(work, deviceProperties=[{**named, "id": 5}]), "same_id.json")
    assert overview(model)["devices"][0]["name"] == "AMD Instinct MI300X"


def test_mtia_device_activity_is_kernels_copies_and_sync() -> None:
    path = real_trace("hta/mtia_inference_trace/mtia_inference_rank_0.json.gz")
    ccp = [e for e in _events(path) if e.get("cat") == "mtia_ccp_events" and e.get("ph") == "X"]
    model = load_trace(str(path))
    kinds = SliceKinds(model)
    names = np.array(model.strings, dtype=object)[model.slices.name]

    def by_name(events: list[dict[str, Any]]) -> dict[str, int]:
        return {n: sum(1 for e in events if e["name"] == n) for n in {e["name"] for e in events}}

    compute = [e for e in ccp if e["name"] not in ("dma_request", "event_record", "event_wait")]
    assert compute, "the trace has MTIA compute events"
    rows = {r["name"]: r for r in kernels(model)["rows"]}
    assert {n: r["calls"] for n, r in rows.items()} == by_name(compute)
    for name, row in rows.items():
        assert row["total"] == pytest.approx(sum(e["dur"] for e in compute if e["name"] == name), abs=0.01)
    assert sorted(set(names[kinds.memcpy])) == ["dma_request"]
    assert int(kinds.memcpy.sum()) == by_name(ccp)["dma_request"]
    assert sorted(set(names[kinds.device_sync])) == ["event_record", "event_wait"]
    (device,) = overview(model)["devices"]
    with gzip.open(path, "rt") as f:
        (properties,) = json.load(f)["deviceProperties"]
    assert (device["id"], device["label"], device["kind"], device["name"]) == (
        properties["id"], f"MTIA {properties['id']}", "MTIA", properties["name"])
    assert device["utilization"] > 0 and device["tensor_core_share"] is None
    assert kernels(model)["device_kind"] == "MTIA"


# --- values the trace wrote short ----------------------------------------------------------------------


def test_float32_values_are_shown_as_the_trace_wrote_them(tmp_path: Path) -> None:
    gpu = {"pid": 0, "tid": 7}
    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        x("ProfilerStep#1", 0, 100, cat="user_annotation", args={"External id": 1}),
        x("aten::relu", 5, 10, args={"External id": 2}),
        x("cudaLaunchKernel", 6, 2, cat="cuda_runtime", args={"correlation": 3, "External id": 2}),
        x("relu_kernel", 20, 10, cat="kernel", **gpu,
          args={"correlation": 3, "External id": 2, "device": 0, "blocks per SM": 2.8, "warps per SM": 11.2,
                "est. achieved occupancy %": 12.3}),
        x("relu_kernel", 40, 30, cat="kernel", **gpu,
          args={"device": 0, "blocks per SM": 2.8, "est. achieved occupancy %": 12.3}),
    ]
    model = _load(tmp_path, trace(events, deviceProperties=[{"id": 0, "name": "NVIDIA A100", "numSms": 108}]))
    (row,) = kernels(model)["rows"]
    # Exactly what the trace wrote (as float32, 2.8 would read 2.799999952316284 and 12.3% 12.300000190734863%).
    assert row["blocks_per_sm"] == 2.8 and row["achieved_occupancy"] * 100 == pytest.approx(12.3, abs=1e-12)
    (device,) = overview(model)["devices"]
    assert device["achieved_occupancy"] * 100 == pytest.approx(12.3, abs=1e-12)
    kernel_row = int(np.flatnonzero(SliceKinds(model).kernel)[0])
    args = trace_event(model, int(model.slices.event_id[kernel_row]))["args"]
    assert (args["blocks per SM"], args["warps per SM"], args["est. achieved occupancy %"]) == (2.8, 11.2, 12.3)


def test_utilization_sm_efficiency_and_occupancy_cover_the_same_steps(tmp_path: Path) -> None:
    """One window for every figure of a device: the steps (0-100 µs). A kernel after them counts in none; one
    that straddles their end counts for its 10 µs inside."""
    gpu = {"pid": 0, "tid": 7}
    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        x("ProfilerStep#1", 0, 100, cat="user_annotation", args={"External id": 1}),
        x("inside", 20, 40, cat="kernel", **gpu,
          args={"device": 0, "blocks per SM": 0.5, "est. achieved occupancy %": 50}),
        x("straddling", 90, 40, cat="kernel", **gpu,
          args={"device": 0, "blocks per SM": 1.0, "est. achieved occupancy %": 20}),
        x("after", 300, 100, cat="kernel", **gpu,
          args={"device": 0, "blocks per SM": 1.0, "est. achieved occupancy %": 10}),
    ]
    model = _load(tmp_path, trace(events, deviceProperties=[{"id": 0, "name": "NVIDIA H100", "numSms": 132}]))
    (device,) = overview(model)["devices"]
    assert device["utilization"] == pytest.approx(50 / 100)
    assert device["sm_efficiency"] == pytest.approx((0.5 * 40 + 1.0 * 10) / 100)
    assert device["achieved_occupancy"] == pytest.approx((0.50 * 40 + 0.20 * 10) / 50)
    assert device["kernel_time"] == pytest.approx(50)
    assert device["tensor_core_share"] == 0.0 and device["unavailable"] == {}
