"""torch-tb-profiler's expected numbers on its small distributed traces, where Profscope's definitions are its.

torch-tb-profiler's test suite (pytorch/kineto, ``tb_plugin/test/test_profiler.py``) gives exact numbers for small
traces: step breakdowns with every category, steps extended to their device work, trailing steps without kernels,
pure-CPU steps, the NCCL, Gloo-on-GPU and Gloo-on-CPU two-worker cases, kernels by operator, memory per operator.
The traces here are written anew with the same events; the expected numbers are its, except where Profscope's
definition differs on purpose (``views/quantities/accounting.py``), which each test says:

* the host range that only enqueues an NCCL kernel is not communication (the kernel is), where torch-tb-profiler
  counts both;
* on a CPU-only span the overview's Communication category is the communication no host work hides, the
  Distributed view's "communication only" (torch-tb-profiler's overview puts every Gloo range before CPU Exec, so
  its two pages disagree there: 109 µs against 35 µs on the Gloo CPU case);
* a collective's total is the sum of its calls' durations, and its wait is measured against the last rank's start;
* kernels by operator are not split further by launch configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.distributed.ranks import distributed
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
    worker0, worker1 = distributed(ranks)["ranks"]
    # torch-tb-profiler's Distributed view, exactly: the add and mul on thread 23800 compute while the Gloo ranges
    # of threads 23803/23805 run (worker 0 by hand: [16, 20) + [30, 61) + [66, 84) + [110, 131) = 74 µs of the
    # 109 µs of communication), and none of those threads' own ranges during its collective compute.
    assert _overlap(worker0) == [47, 74, 35, 0]
    assert _overlap(worker1) == [36, 64, 34, 12]
    # The overview: Communication is what no computation hides (torch-tb-profiler's overview: 109 and 98, with CPU
    # Exec 47 and 36, the same step time and Other).
    assert _costs(ranks[0][1]) == [0, 0, 0, 35, 0, 0, 121, 0, 156]
    assert _costs(ranks[1][1]) == [0, 0, 0, 34, 0, 0, 100, 12, 146]


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


# --- the step breakdown: every category, steps extended to the device work they launched ----------------------

HOST = {"pid": 13721, "tid": "123"}


def _host(name: str, ts: float, dur: float, tid: str = "123") -> dict[str, Any]:
    return x(name, ts, dur, cat="Operator", pid=13721, tid=tid)


def _runtime(name: str, ts: float, dur: float, correlation: int, tid: str = "123") -> dict[str, Any]:
    return x(name, ts, dur, cat="Runtime", pid=13721, tid=tid, args={"correlation": correlation})


def _device(cat: str, name: str, ts: float, dur: float, correlation: int) -> dict[str, Any]:
    return x(name, ts, dur, cat=cat, pid=0, tid="stream 7", args={"correlation": correlation, "device": 0, "stream": 7})


def _breakdowns(tmp_path: Path, events: list[dict[str, Any]]) -> list[list[float]]:
    steps = overview(load_trace(str(write(tmp_path / "steps.json", trace(events)))))["steps"]
    return [[step["breakdown"][c] for c in CATEGORIES] + [step["dur"]] for step in steps]


def test_all_categories(tmp_path: Path) -> None:
    events = [_host("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 100, 180),
              _host("aten::to", 200, 60), _host("aten::nll_loss_backward", 340, 70, tid="456"),
              _host("ProfilerStep#1", 50, 400),
              _device("Memcpy", "Memcpy HtoD (Pageable -> Device)", 405, 10, 334),
              _runtime("cudaMemcpyAsync", 360, 20, 334, tid="456"),
              _device("Memset", "Memset (Device)", 420, 5, 40344),
              _runtime("cudaMemsetAsync", 390, 10, 40344, tid="456"),
              _device("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", 430, 15, 40348),
              _runtime("cudaLaunchKernel", 405, 5, 40348, tid="456")]
    # Kernel, Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec, Other; step.
    assert _breakdowns(tmp_path, events) == [[15, 10, 5, 0, 30, 180, 35, 125, 400]]


def _two_steps(early_kernel: bool) -> list[dict[str, Any]]:
    events = [_host("ProfilerStep#1", 100, 200), _host("aten::to", 200, 60),
              _host("ProfilerStep#2", 350, 150), _host("aten::mm", 360, 50),
              _runtime("cudaMemcpyAsync", 250, 5, 334),
              _device("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", 410, 200, 40348),
              _runtime("cudaLaunchKernel", 400, 5, 40348)]
    if early_kernel:  # launched before the profiled steps, still running when step 1 begins
        events += [_device("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", 150, 90, 123),
                   _device("Memcpy", "Memcpy HtoD (Pageable -> Device)", 280, 100, 334)]
    else:
        events.append(_device("Memcpy", "Memcpy HtoD (Pageable -> Device)", 280, 40, 334))
    return events


def test_multiple_steps_extended_to_their_device_work(tmp_path: Path) -> None:
    assert _breakdowns(tmp_path, _two_steps(early_kernel=False)) == [
        [0, 40, 0, 0, 5, 0, 60 - 5, 200 - 60 - 20, 320 - 100],
        [200, 0, 0, 0, 5, 0, 50 - 5, 360 - 350, 610 - 350]]


def test_multiple_steps_whose_device_work_overlaps_the_next(tmp_path: Path) -> None:
    # Step 1 starts when the kernel launched before it ends (240); step 2 when step 1's copy ends (380).
    assert _breakdowns(tmp_path, _two_steps(early_kernel=True)) == [
        [0, 100, 0, 0, 5, 0, (200 + 60) - (150 + 90) - 5, 280 - (200 + 60), (280 + 100) - (150 + 90)],
        [200, 0, 0, 0, 5, 0, (280 + 100) - 360 + (410 - 405), 0, 610 - (280 + 100)]]


def test_kernels_by_operator_and_name(tmp_path: Path) -> None:
    """torch-tb-profiler's kernel table by operator also splits rows by grid, block, registers and shared memory
    (op1's kernel1 is two rows there: 2 calls of 25 µs with block [16,16,16], 1 of 13 µs with [16,16,64]); Profscope
    groups by operator and kernel name, so those rows are one here."""
    from profscope.tb_plugin.views.kernels import kernels

    def kernel(ts: float, dur: float, correlation: int, block: list[int]) -> dict[str, Any]:
        return x("kernel1", ts, dur, cat="Kernel", pid=0, tid="stream 7",
                 args={"correlation": correlation, "device": 0, "grid": [16, 1, 1], "block": block,
                       "registers per thread": 18, "shared memory": 0})

    events = [x("op1", 200, 60, cat="Operator", pid=13721, tid="123", args={"External id": 3}),
              x("op2", 340, 70, cat="Operator", pid=13721, tid="456", args={"External id": 4}),
              kernel(230, 15, 1000, [16, 16, 16]), kernel(250, 10, 1001, [16, 16, 16]),
              kernel(250, 13, 1002, [16, 16, 64]), kernel(250, 17, 1003, [16, 16, 64])]
    for ts, correlation, external_id in ((210, 1000, 3), (215, 1001, 3), (220, 1002, 3), (350, 1003, 4)):
        events.append(x("cudaLaunchKernel", ts, 5, cat="Runtime", pid=13721, tid="456",
                        args={"correlation": correlation, "external id": external_id}))
    model = load_trace(str(write(tmp_path / "kernels.json", trace(events))))
    rows = {(r["op"], r["name"]): r for r in kernels(model, "op_and_name")["rows"]}
    assert {key: (r["calls"], r["total"], r["min"], r["max"]) for key, r in rows.items()} == {
        ("op1", "kernel1"): (3, 15 + 10 + 13, 10, 15), ("op2", "kernel1"): (1, 17, 17, 17)}
    assert rows[("op1", "kernel1")]["mean"] == pytest.approx((15 + 10 + 13) / 3)


# --- memory: bytes per operator, per device ---------------------------------------------------------------------

_MEMORY_OPS = [  # name, start, duration (host thread 123)
    ("aten::to", 10, 10), ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 100, 180),
    ("aten::to", 200, 60), ("aten::nll_loss_backward", 340, 70), ("ProfilerStep#1", 50, 400),
    ("ProfilerStep#2", 500, 500), ("aten::to", 510, 150), ("aten::copy_", 520, 100), ("aten::liner", 700, 100),
    ("aten::t", 705, 40), ("aten::transpose", 710, 30), ("aten::tranas_stride", 720, 10), ("aten::addmm", 750, 40),
    ("aten::to", 900, 100),
]
_MEMORY_EVENTS = [  # time, device type (0 CPU, 1 GPU), address, bytes (negative: a free)
    (90, 0, 90, 4), (150, 0, 150, 4), (200, 0, 200, 4), (210, 1, 210, 4), (265, 1, 265, 4), (300, 1, 300, 4),
    (350, 1, 350, 10), (360, 1, 350, -10), (450, 0, 450, 1000000), (515, 1, 515, 100), (520, 1, 520, 100),
    (600, 1, 520, -100), (690, 1, 690, 100), (701, 1, 701, 100), (796, 1, 515, -100), (708, 1, 708, 100),
    (742, 1, 708, -100), (715, 1, 715, 50), (735, 1, 715, -50), (725, 1, 725, 50), (728, 1, 725, -50),
    (729, 0, 729, 50), (746, 0, 746, 100), (747, 1, 747, 20), (749, 0, 690, -100), (760, 1, 760, 30),
    (780, 1, 760, -30), (795, 1, 795, 10), (799, 1, 795, -10),
]


def test_memory_by_operator(tmp_path: Path) -> None:
    """torch-tb-profiler's per-operator memory statistics: self increase, self allocation bytes and count,
    total increase, total allocation bytes, calls (its total allocation count is not a Profscope column)."""
    from profscope.tb_plugin.views.memory import memory

    events = [x(name, ts, dur, cat="Operator", pid=13721, tid="123") for name, ts, dur in _MEMORY_OPS]
    events += [{"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": 123, "ts": ts,
                "args": {"Device Type": kind, "Device Id": 0 if kind else -1, "Addr": addr, "Bytes": nbytes}}
               for ts, kind, addr, nbytes in _MEMORY_EVENTS]
    model = load_trace(str(write(tmp_path / "memory.json", trace(events))))

    def stats(device: str) -> dict[str, list[int]]:
        rows = memory(model, device=device)["by_operator"]
        return {r["name"]: [r["self_bytes"], r["self_alloc_bytes"], r["allocations"], r["total_bytes"],
                            r["total_alloc_bytes"], r["calls"]] for r in rows}

    gpu = stats("gpu0")
    assert {name: gpu[name] for name in ("aten::to", "aten::nll_loss_backward", "aten::copy_", "aten::addmm",
                                         "aten::tranas_stride", "aten::transpose", "aten::t", "aten::liner")} == {
        "aten::to": [104, 104, 2, 104, 204, 4], "aten::nll_loss_backward": [0, 10, 1, 0, 10, 1],
        "aten::copy_": [0, 100, 1, 0, 100, 1], "aten::addmm": [0, 30, 1, 0, 30, 1],
        "aten::tranas_stride": [0, 50, 1, 0, 50, 1], "aten::transpose": [0, 50, 1, 0, 100, 1],
        "aten::t": [0, 100, 1, 0, 200, 1], "aten::liner": [20, 130, 3, 20, 360, 1]}
    cpu = stats("cpu")
    assert {name: cpu[name] for name in ("aten::to", "aten::liner", "aten::tranas_stride", "aten::transpose",
                                         "aten::t")} == {
        "aten::to": [4, 4, 1, 4, 4, 4], "aten::liner": [0, 100, 1, 50, 150, 1],
        "aten::tranas_stride": [50, 50, 1, 50, 50, 1], "aten::transpose": [0, 0, 0, 50, 50, 1],
        "aten::t": [0, 0, 0, 50, 50, 1]}
