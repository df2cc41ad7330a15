"""The rules of ``views/quantities/accounting.py`` on hand-made traces, exact to the microsecond.

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
from profscope.tb_plugin.views.quantities import accounting
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


# --- an NCCL collective's host ranges are not communication ---------------------------------------------------


def _nccl_rank(with_gloo: bool) -> list[dict[str, Any]]:
    """An NCCL all-reduce as torch records it: c10d::allreduce_ [100, 200) > record_param_comms > nccl:all_reduce
    launching the NCCL kernel [300, 700); then a second record_param_comms [800, 830) around the collective's wait
    (a cudaStreamWaitEvent, no launch). With ``with_gloo``, a Gloo barrier of a CPU process group on a thread of
    its own [900, 960)."""
    events = [
        x("ProfilerStep#1", 0, 1000, cat=ANNOTATION),
        x("c10d::allreduce_", 100, 100),
        x("record_param_comms", 110, 80),
        x("nccl:all_reduce", 120, 60, cat=ANNOTATION),
        *_launch("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 130, 10, 1, 300, 400),
        x("record_param_comms", 800, 30),
        x("cudaStreamWaitEvent", 805, 2, cat="cuda_runtime", args={"correlation": 2}),
    ]
    if with_gloo:
        events.append(x("gloo:barrier", 900, 60, tid=2))
    return events


@pytest.mark.parametrize("with_gloo", [False, True])
def test_nccl_wait_ranges_are_not_host_communication(tmp_path: Path, with_gloo: bool) -> None:
    model = _load(tmp_path, _nccl_rank(with_gloo), distributedInfo={"rank": 0, "world_size": 2, "backend": "nccl"})
    times = accounting.step_times(model)
    # The kernel [300, 700) is the communication; the wait's record_param_comms is not, the Gloo barrier is.
    assert _us(times.communication) == 400 + (60 if with_gloo else 0)
    assert _names(model, accounting.host_communication(model)) == (["gloo:barrier"] if with_gloo else [])


def test_a_rank_without_collective_kernels_keeps_its_host_collectives(tmp_path: Path) -> None:
    """The same ranges with no NCCL kernel recorded: nothing says the collectives ran on the device."""
    events = [e for e in _nccl_rank(False) if e.get("cat") != "kernel" and e.get("ph") == "X"]
    model = _load(tmp_path, events)
    # c10d::allreduce_ [100, 200) (its launch call included) and the second record_param_comms [800, 830).
    assert _us(accounting.step_times(model).communication) == 100 + 30


# The df_index_resolver rank of HTA's tests: NCCL, each collective with a second record_param_comms around its wait.
NCCL_WAITS = "hta/df_index_resolver/df_index_resolver.json.gz"


def test_nccl_rank_communication_is_its_kernels() -> None:
    from conftest import real_trace

    model = load_trace(str(real_trace(NCCL_WAITS)))
    s = model.slices
    kinds = SliceKinds(model)
    named = model.string_ids_where(lambda t: t == "record_param_comms")[s.name]
    launched = np.zeros(len(s), dtype=np.int64)
    linked = model.links.launcher[kinds.collective_kernel]
    launched[linked[linked >= 0]] = 1
    from profscope.tb_plugin.model.tree import subtree_sum

    waits = named & (subtree_sum(s, launched) == 0)
    assert int(waits.sum()) == 2020 and round(_us(s.dur[waits])) == 9117
    assert not accounting.host_communication(model).any()
    times = accounting.step_times(model)
    windows = (times.steps.start, times.steps.end)
    kernels_only = intervals.covered_length_in(windows, accounting.collective_kernel_intervals(model))
    assert np.array_equal(times.communication, kernels_only)
    # HTA 0.5.0 over these steps (test_hta_agreement.py): 357,343 µs of communication kernels, 0% overlapped.
    assert round(_us(times.communication)) == 357343 and _us(times.overlap) == 0
