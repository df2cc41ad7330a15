"""DeepLink (torch_dipu) traces: DIOPI kernels, launches, allocations, detection and the run's framework.

The trace is built from DeepLink's profiler source (``tests/deeplink_trace.py`` says where each
field comes from); the expected numbers are worked out by hand from its timeline.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views.kernels import kernels
from profscope.tb_plugin.views.overview import overview

from openapi_contract import check_schema
from deeplink_trace import EXPECTED, deeplink_trace
from handmade import write

NS_PER_US = 1000.0


@pytest.fixture
def model(tmp_path: Path) -> TraceModel:
    return load_trace(str(write(tmp_path / "worker0.1.pt.trace.json", deeplink_trace())))


def _names(model: TraceModel, mask: np.ndarray) -> list[str]:
    return sorted(model.strings[int(n)] for n in model.slices.name[mask])


def test_kernels_are_the_diopi_calls_with_their_device_time(model: TraceModel) -> None:
    rows = kernels(model)["rows"]
    assert {r["name"]: (r["calls"], r["total"]) for r in rows} == EXPECTED["kernels"]
    # Neither the wrappers that enclose them nor the allocations are kernels.
    assert kernels(model)["total"] == sum(total for _, total in EXPECTED["kernels"].values())


def test_kernels_by_operator_follow_the_external_id(model: TraceModel) -> None:
    rows = kernels(model, group_by="op_and_name")["rows"]
    assert {(r["op"], r["name"]) for r in rows} == {
        ("aten::convolution_overrideable", "diopiConvolution2d"), ("aten::batch_norm", "diopiBatchNorm")}


def test_allocator_time_is_not_compute(model: TraceModel) -> None:
    kinds = SliceKinds(model)
    device_allocations = kinds.allocator & ~kinds.on_host
    assert _names(model, device_allocations) == ["empty", "empty"]
    assert model.slices.dur[device_allocations].sum() / NS_PER_US == EXPECTED["allocator_device_time"]
    assert _names(model, kinds.allocator & kinds.on_host) == ["LaunchKernel_empty", "LaunchKernel_empty"]
    assert not (kinds.allocator & kinds.kernel).any()

    result = overview(model)
    [step] = result["steps"]
    assert (step["start"], step["dur"]) == EXPECTED["step"]
    expected = {category: 0.0 for category in result["breakdown"]}
    expected.update(EXPECTED["breakdown"])
    assert result["breakdown"] == pytest.approx(expected, abs=1e-9)
    assert result["devices"][0]["kernel_time"] == 260.0


def test_launches_are_runtime_calls_with_flows_to_their_device_ranges(model: TraceModel) -> None:
    kinds = SliceKinds(model)
    launches = np.flatnonzero(model.string_ids_where(lambda s: s.startswith("LaunchKernel_"))[model.slices.name])
    assert len(launches) == 6 and kinds.runtime[launches].all() and kinds.on_host[launches].all()
    flows = model.flows
    pairs = sorted((model.strings[int(model.slices.name[a])], model.strings[int(model.slices.name[b])])
                   for a, b in zip(flows.src, flows.dst))
    assert pairs == sorted((f"LaunchKernel_{name}", name) for name in
                           ["dipu_convolution_overrideable", "empty", "diopiConvolution2d", "dipu_native_batch_norm",
                            "empty", "diopiBatchNorm"])
    # The operator wrappers stay device activities (on the stream, in the trace), not kernels.
    wrappers = model.string_ids_where(lambda s: s.startswith("dipu_"))[model.slices.name]
    assert (wrappers & kinds.device_activity & ~kinds.kernel).sum() == 2


def test_detected_as_deeplink_by_content(tmp_path: Path) -> None:
    data = json.dumps(deeplink_trace()).encode()
    assert detect_framework(data[:HEAD_BYTES]) == "deeplink"
    # torch's trace handler names it like a torch trace: the content decides.
    assert detect_framework(data[:HEAD_BYTES], "worker0.1795303442092317655.pt.trace.json") == "deeplink"
    # In a long trace DIPU's records come after the CPU operators: only the tail shows them.
    doc = deeplink_trace()
    filler = [{"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1}
              for i in range(2000)]
    doc["traceEvents"] = filler + doc["traceEvents"][3:]
    long = json.dumps(doc).encode()
    assert detect_framework(long[:HEAD_BYTES]) == "pytorch"
    assert detect_framework(long[:HEAD_BYTES], "", long[-HEAD_BYTES:]) == "deeplink"
    long_file = tmp_path / "worker0.1795303442092317655.pt.trace.json"
    long_file.write_bytes(long)
    assert load_trace(str(long_file)).framework == "deeplink"  # the loader looks at the tail too
    assert load_trace(str(write(tmp_path / "renamed.json", deeplink_trace()))).framework == "deeplink"


def test_torch_traces_are_not_deeplink() -> None:
    head = json.dumps({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel", "pid": 0, "tid": 7,
         "ts": 1, "dur": 1},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]}).encode()
    assert detect_framework(head) == "pytorch"


def test_the_run_shows_the_framework(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    path = write(logdir / "dipu_run" / "worker0.1795303442092317655.pt.trace.json", deeplink_trace())
    old = time.time() - 120
    os.utime(path, (old, old))
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    [run] = body["runs"]
    assert (run["status"], run["framework"]) == ("ready", "deeplink")
    status, summary = client.get("summary", run="dipu_run", worker="worker0")
    assert status == 200 and summary["framework"] == "deeplink"
    check_schema(summary, "Summary")
    # A real torch-like run: steps, device work, operators; only memory is missing. The launches
    # carry no correlation: their ac2g flows link them to their kernels instead.
    assert [item["id"] for item in summary["limitations"]] == ["no_memory"]
    status, table = client.get("kernels", run="dipu_run", worker="worker0")
    assert status == 200
    assert {r["name"]: (r["calls"], r["total"]) for r in table["rows"]} == EXPECTED["kernels"]


def test_kernels_are_linked_to_their_launch_and_operator_by_flow(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "dipu.json", deeplink_trace())))
    s, text = model.slices, model.strings
    kernel_rows = [i for i in range(len(s)) if text[int(s.name[i])].startswith("diopi")]
    assert kernel_rows
    for row in kernel_rows:
        launcher = int(model.links.launcher[row])
        assert launcher >= 0 and text[int(s.name[launcher])] == "LaunchKernel_" + text[int(s.name[row])]
        assert int(model.links.op[row]) >= 0  # and through the launch's External id, its operator
