"""Device activity: links to the operators that launched it, what each device is called and which of its
summary figures the trace can support, accelerators other than GPUs (ROCm, MTIA, Ascend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from profscope.tb_plugin.ingest import load_trace
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.views.operators import operators

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
