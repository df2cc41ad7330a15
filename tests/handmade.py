"""Small hand-made Kineto traces for exact-number tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Optional


def x(name: str, ts: float, dur: float, *, cat: str = "cpu_op", pid: Any = 1, tid: Any = 1,
      args: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        event["args"] = args
    return event


def trace(events: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": [], **top}
    doc["traceEvents"] = events
    return doc


def write(path: Path, doc: Any, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def gpu_step_trace() -> dict[str, Any]:
    """One training step on one GPU: an op launching a kernel and a copy, with flows."""
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main thread"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        x("ProfilerStep#7", 100, 900, cat="user_annotation", args={"External id": 1}),
        x("aten::conv2d", 110, 300, args={"External id": 2, "Input Dims": [[8, 3, 32, 32], [16, 3, 3, 3]]}),
        x("aten::convolution", 120, 280, args={"External id": 3}),
        x("cudaLaunchKernel", 150, 20, cat="cuda_runtime", args={"correlation": 42, "External id": 3}),
        x("aten::copy_", 500, 100, args={"External id": 4}),
        x("cudaMemcpyAsync", 510, 30, cat="cuda_runtime", args={"correlation": 43, "External id": 4}),
        x("implicit_convolve_sgemm", 200, 400, cat="kernel", pid=0, tid=7,
          args={"correlation": 42, "External id": 3, "device": 0, "stream": 7, "grid": [8, 1, 1],
                "block": [128, 1, 1], "blocks per SM": 0.1, "est. achieved occupancy %": 12}),
        x("Memcpy HtoD (Pageable -> Device)", 650, 50, cat="gpu_memcpy", pid=0, tid=7,
          args={"correlation": 43, "External id": 4, "device": 0, "stream": 7, "bytes": 4096}),
        {"ph": "s", "id": 42, "pid": 1, "tid": 1, "ts": 150, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 200, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        {"ph": "s", "id": 43, "pid": 1, "tid": 1, "ts": 510, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 43, "pid": 0, "tid": 7, "ts": 650, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 115, "cat": "cpu_instant_event",
         "args": {"Addr": 1000, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048, "Device Type": 1,
                  "Device Id": 0}},
        {"ph": "C", "name": "GPU Utilization", "pid": 0, "tid": 0, "ts": 200, "args": {"util": 0.5}},
    ]
    return trace(events, deviceProperties=[{"id": 0, "name": "Test GPU", "totalGlobalMem": 1 << 34,
                                            "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
                 distributedInfo={"rank": 0, "world_size": 1, "backend": "nccl"}, baseTimeNanoseconds=0)


def rank_job_trace(rank: int, world_size: int, steps: list[tuple[int, float, float, float]],
                   base_time_ns: int = 0) -> dict[str, Any]:
    """A CPU-only rank of a Gloo job: per step (number, length, all_reduce start within the step, all_reduce
    length), step N starting at N x 1000 µs, with an operator on the main thread and the all_reduce on a second."""
    events: list[dict[str, Any]] = []
    for number, length, comm_start, comm_dur in steps:
        t = number * 1000.0
        events += [
            x(f"ProfilerStep#{number}", t, length, cat="user_annotation"),
            x("aten::mm", t + 10, 100),
            x("gloo:all_reduce", t + comm_start, comm_dur, tid=2),
        ]
    return trace(events, distributedInfo={"rank": rank, "world_size": world_size, "backend": "gloo"},
                 baseTimeNanoseconds=base_time_ns)
