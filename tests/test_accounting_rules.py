"""The rules of ``views/accounting.py`` on hand-made traces, exact to the microsecond.

Each case is the smallest trace that shows one rule; the real traces that the rules came from are checked in
test_hta_agreement.py, test_distributed_view.py and test_tb_profiler_reference.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model import intervals
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views import accounting
from profscope.tb_plugin.views.overview import overview

from handmade import trace, write, x

ANNOTATION = "user_annotation"


def _launch(name: str, ts: float, dur: float, correlation: int, kernel_ts: float, kernel_dur: float,
            stream: int = 7) -> list[dict[str, Any]]:
    """A cudaLaunchKernel on the main thread and its kernel on the stream, joined by correlation and a flow."""
    return [
        x("cudaLaunchKernel", ts, dur, cat="cuda_runtime", args={"correlation": correlation}),
        x(name, kernel_ts, kernel_dur, cat="kernel", pid=0, tid=stream,
          args={"correlation": correlation, "device": 0, "stream": stream}),
        {"ph": "s", "id": correlation, "pid": 1, "tid": 1, "ts": ts, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": correlation, "pid": 0, "tid": stream, "ts": kernel_ts, "cat": "ac2g", "name": "ac2g",
         "bp": "e"},
    ]


def _load(tmp_path: Path, events: list[dict[str, Any]], **top: Any) -> Any:
    meta = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]
    return load_trace(str(write(tmp_path / "rank.pt.trace.json", trace(meta + events, **top))))


def _us(ns: Any) -> float:
    return float(np.sum(ns)) / 1000.0


def _names(model: Any, mask: np.ndarray) -> list[str]:
    return sorted(model.strings[int(i)] for i in model.slices.name[mask])


# --- a collective's work is its own kernels and runtime calls ------------------------------------------------


def _enclosing_annotation() -> list[dict[str, Any]]:
    """A collective annotation [10, 1500) that outlives its collective and encloses the forward pass
    [100, 1400): the forward's aten::mm launches a gemm kernel [400, 900)."""
    return [
        x("ProfilerStep#1", 0, 2000, cat=ANNOTATION),
        x("hccl:all_to_all", 10, 1490, cat=ANNOTATION),
        x("## forward ##", 100, 1300, cat=ANNOTATION),
        x("aten::mm", 200, 100),
        *_launch("gemm_kernel", 210, 10, 1, 400, 500),
    ]


def test_kernels_inside_a_collective_annotation_compute(tmp_path: Path) -> None:
    model = _load(tmp_path, _enclosing_annotation())
    kinds = SliceKinds(model)
    assert not kinds.collective_kernel.any()  # the gemm's launch is the forward's aten::mm's, not the collective's
    times = accounting.step_times(model)
    assert _us(times.computation) == 500  # the gemm
    # The annotation's own time: [10, 100) and [1400, 1500); its forward pass is not communication.
    assert _us(times.communication) == 90 + 100
    assert _us(times.overlap) == 0
    assert overview(model)["breakdown"]["kernel"] == 500


def test_a_kernel_launched_by_the_collective_range_is_communication(tmp_path: Path) -> None:
    events = _enclosing_annotation() + _launch("all_to_all_kernel", 1420, 10, 2, 1450, 200)
    model = _load(tmp_path, events)
    assert _names(model, SliceKinds(model).collective_kernel) == ["all_to_all_kernel"]
    times = accounting.step_times(model)
    # The collective ran on the device: its kernel is the communication, its host range is not.
    assert _us(times.communication) == 200
    assert _us(times.computation) == 500
