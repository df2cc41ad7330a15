"""torch-tb-profiler's expected numbers on its small distributed traces, where Profscope's definitions are its.

torch-tb-profiler's test suite (pytorch/kineto, ``tb_plugin/test/test_profiler.py``: the NCCL, Gloo-on-GPU and
Gloo-on-CPU two-worker cases) gives exact step breakdowns and communication/overlap splits for small traces. The
traces here are written anew with the same events; the expected numbers are its, except where Profscope's
definition differs on purpose (``views/accounting.py``), which each test says:

* the host range that only enqueues an NCCL kernel is not communication (the kernel is), where torch-tb-profiler
  counts both;
* on a CPU-only span communication takes priority over host work, in the Distributed view as in the overview, so
  nothing of it counts as overlapped (torch-tb-profiler overlaps Gloo ranges with every host operator there);
* a collective's total is the sum of its calls' durations, and its wait is measured against the last rank's start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.ingest import load_trace
from profscope.tb_plugin.views.distributed import distributed
from profscope.tb_plugin.views.overview import CATEGORIES, overview

from handmade import trace, write, x

BROADCAST_INPUT = ([[53120]], ["float"])  # 212,480 bytes
ALLREDUCE_INPUT = ([[2049000]], ["float"])  # 8,196,000 bytes


def _kernel(name: str, ts: float, dur: float, external_id: int, stream: str = "stream 7") -> dict[str, Any]:
    return x(name, ts, dur, cat="Kernel", pid=0, tid=stream,
             args={"device": 0, "correlation": external_id + 1_000_000, "external id": external_id})


def _op(name: str, ts: float, dur: float, external_id: int, tid: str = "23803",
        inputs: tuple[list[Any], list[str]] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"External id": external_id}
    if inputs is not None:
        args["Input Dims"], args["Input type"] = inputs
    return x(name, ts, dur, pid=23803, tid=tid, args=args)


def _gloo(times: tuple[tuple[float, float], ...], on_gpu: bool) -> list[dict[str, Any]]:
    """Three gloo:broadcast and two gloo:all_reduce ranges on two threads; an add and a mul (a kernel on GPU)."""
    b1, b2, b3, add, mul, a1, a2 = times
    events = [_op("gloo:broadcast", *b1, 165, inputs=BROADCAST_INPUT),
              _op("gloo:broadcast", *b2, 166, tid="23805", inputs=BROADCAST_INPUT),
              _op("gloo:broadcast", *b3, 167, inputs=BROADCAST_INPUT),
              _op("aten::add_", *add, 24504, tid="23800"),
              _op("gloo:all_reduce", *a1, 2513, tid="23805", inputs=ALLREDUCE_INPUT),
              _op("gloo:all_reduce", *a2, 2516, inputs=ALLREDUCE_INPUT)]
    events.append(_kernel("void at::native::vectorized_elementwise_kernel", *mul, 24504) if on_gpu
                  else _op("aten::mul", *mul, 24505, tid="23800"))
    return events


GLOO_WORKER0 = ((16, 38), (25, 36), (66, 18), (0, 20), (30, 101), (110, 18), (120, 36))
GLOO_WORKER1 = ((20, 28), (28, 30), (77, 6), (0, 30), (70, 70), (88, 38), (130, 16))


def _ranks(tmp_path: Path, label: str, workers: list[list[dict[str, Any]]]) -> list[tuple[str, Any]]:
    return [(f"worker{i}", load_trace(str(write(tmp_path / f"{label}{i}.json", trace(events)))))
            for i, events in enumerate(workers)]


def _costs(model: Any) -> list[float]:
    """torch-tb-profiler's ``steps_costs``: the one step's categories in its order, then the step time."""
    (step,) = overview(model)["steps"]
    return [step["breakdown"][c] for c in CATEGORIES] + [step["dur"]]


def _overlap(rank: dict[str, Any]) -> list[float]:
    """torch-tb-profiler's ``steps_to_overlap``: computation only, overlap, communication only, other."""
    return [rank["compute"] - rank["overlap"], rank["overlap"], rank["communication"] - rank["overlap"], rank["other"]]


def test_gloo_on_gpu(tmp_path: Path) -> None:
    """Gloo collectives run on the host: they are communication on a GPU span too (39 and 44 µs exposed)."""
    ranks = _ranks(tmp_path, "gloo_gpu", [_gloo(GLOO_WORKER0, True), _gloo(GLOO_WORKER1, True)])
    # Kernel, Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec, Other; step.
    assert _costs(ranks[0][1]) == [101, 0, 0, 39, 0, 0, 16, 0, 156]
    assert _costs(ranks[1][1]) == [70, 0, 0, 44, 0, 0, 20, 12, 146]
    result = distributed(ranks)
    worker0, worker1 = result["ranks"]
    assert _overlap(worker0) == [31, 70, 39, 16]
    assert _overlap(worker1) == [16, 54, 44, 32]
    sizes = {row["name"]: [r["bytes"] for r in row["per_rank"]] for row in result["collectives"]}
    assert sizes == {"broadcast": [637440, 637440], "allreduce": [16392000, 16392000]}


def test_gloo_on_cpu(tmp_path: Path) -> None:
    ranks = _ranks(tmp_path, "gloo_cpu", [_gloo(GLOO_WORKER0, False), _gloo(GLOO_WORKER1, False)])
    assert _costs(ranks[0][1]) == [0, 0, 0, 109, 0, 0, 47, 0, 156]
    assert _costs(ranks[1][1]) == [0, 0, 0, 98, 0, 0, 36, 12, 146]
    worker0, worker1 = distributed(ranks)["ranks"]
    # torch-tb-profiler: [47, 74, 35, 0] and [36, 64, 34, 12], overlapping Gloo with host operators. Here the
    # overview's priority holds (communication before CPU Exec), so the Distributed view agrees with it:
    # communication only = the overview's Communication, and no overlap.
    assert _overlap(worker0) == [47, 0, 109, 0]
    assert _overlap(worker1) == [36, 0, 98, 12]


def _nccl(worker: int) -> list[dict[str, Any]]:
    if worker == 0:
        broadcast, broadcast_kernel, add, add_kernel, allreduce_kernel = (0, 75), (16, 16), (100, 20), (130, 161), (162, 1556)
    else:
        broadcast, broadcast_kernel, add, add_kernel, allreduce_kernel = (0, 20), (8, 31), (25, 20), (30, 161), (562, 1058)
    return [
        _op("nccl:broadcast", *broadcast, 146, inputs=BROADCAST_INPUT),
        _kernel("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)", *broadcast_kernel, 146, "stream 16"),
        _op("aten::add_", *add, 24504),
        _kernel("void at::native::vectorized_elementwise_kernel", *add_kernel, 24504),
        _op("nccl:all_reduce", 160, 75, 2513, tid="25166", inputs=ALLREDUCE_INPUT),
        _kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", *allreduce_kernel, 2513, "stream 16"),
    ]


def test_nccl(tmp_path: Path) -> None:
    ranks = _ranks(tmp_path, "nccl", [_nccl(0), _nccl(1)])
    # torch-tb-profiler: [105, 0, 0, 75, 0, 0, 20, 35, 235], counting the host nccl:broadcast range [0, 75) as
    # communication. Here its kernel [16, 32) is the communication; the rest of the range is the host's work
    # (CPU Exec: 75 - 16 + the add's 20 = 79). Kernel time and the step are torch-tb-profiler's.
    assert _costs(ranks[0][1]) == [105, 0, 0, 16, 0, 0, 79, 35, 235]
    assert _costs(ranks[1][1])[0] == 161 and _costs(ranks[1][1])[-1] == 235
    result = distributed(ranks)
    worker0 = result["ranks"][0]
    # Communication: the broadcast kernel 16 and the all-reduce kernel within the step [162, 235) = 73,
    # all of it under the add kernel [130, 291).
    assert (worker0["communication"], worker0["overlap"], worker0["compute"]) == (89, 73, 105)
    # Message sizes come from the operators that launched the kernels (torch-tb-profiler's 212480 and 8196000).
    sizes = {row["name"]: [r["bytes"] for r in row["per_rank"]] for row in result["collectives"]}
    assert sizes == {"broadcast": [212480, 212480], "allreduce": [8196000, 8196000]}


def test_pure_cpu(tmp_path: Path) -> None:
    """Two CPU-only steps of one operator each: both kept (neither is a stub), CPU Exec and Other per step."""
    events = [x("ProfilerStep#1", 100, 200, cat="Operator", pid=13721, tid="123"),
              x("aten::to", 120, 10, cat="Operator", pid=13721, tid="123"),
              x("ProfilerStep#2", 300, 100, cat="Operator", pid=13721, tid="123"),
              x("aten::mm", 350, 40, cat="Operator", pid=13721, tid="123")]
    steps = overview(load_trace(str(write(tmp_path / "cpu.json", trace(events)))))["steps"]
    assert [(s["dur"], s["breakdown"]["cpu_exec"], s["breakdown"]["other"]) for s in steps] == [
        (200, 10, 190), (100, 40, 60)]


def test_last_steps_without_kernels_are_dropped(tmp_path: Path) -> None:
    """Steps 2 and 3 launched nothing (the profiler stopped first); step 1 runs from the end of the kernel
    launched before it to the end of the kernel it launched: (150 + 180) - (90 + 20)."""
    host = {"pid": 13721, "tid": "123"}
    events = [x("ProfilerStep#1", 100, 200, cat="Operator", **host),
              x("aten::to", 120, 10, cat="Operator", **host, args={"External id": 2}),
              x("ProfilerStep#2", 300, 100, cat="Operator", **host),
              x("ProfilerStep#3", 400, 50, cat="Operator", **host),
              _kernel("void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", 90, 20, 123),
              x("cudaMemcpyAsync", 125, 5, cat="Runtime", **host, args={"correlation": 334, "external id": 2}),
              x("void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", 150, 180, cat="Kernel", pid=0,
                tid="stream 7", args={"correlation": 334, "external id": 2, "device": 0})]
    steps = overview(load_trace(str(write(tmp_path / "gpu.json", trace(events)))))["steps"]
    assert [(s["name"], s["dur"]) for s in steps] == [("ProfilerStep#1", (150 + 180) - (90 + 20))]
