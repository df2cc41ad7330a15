"""Kernel launches: for each runtime call that launched device work in the steps, how long the call took on the
CPU, how long its work waited in the queue (launch delay) and how long it ran on the device (HTA's kernel launch
statistics).

Per launch (one runtime call, by correlation): the CPU duration is the call's; the launch delay is from the call's
end to the start of its first device work (0 when the work started before the call returned, as HTA clips it);
the device duration is the sum of the work it launched. A ``cudaGraphLaunch`` launches a whole graph: one launch
with many kernels, its delay to the graph's first kernel and its device time the graph's kernels together (HTA
would pair the one call with each kernel). Every runtime call that launched work counts (``cudaLaunchKernel``,
``cuLaunchKernel``, ``cudaMemcpyAsync``, ``cudaMemcpy``, ``cudaGraphLaunch``, HIP's...), where HTA lists
``cudaLaunchKernel(ExC)``, ``cudaMemcpyAsync`` and ``cudaMemsetAsync``. A launch belongs to the steps when its
first device work starts inside them.

*Short* launches ran for less time on the device than the call took on the CPU: a stream fed by such launches
cannot stay busy, the job is launch-bound (CUDA graphs or fused kernels help).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from .stream_work import no_device_work_reason, stream_work

# HTA's outlier cutoffs: a runtime call over 50 µs, a launch delay over 100 µs.
RUNTIME_CUTOFF_US = 50.0
LAUNCH_DELAY_CUTOFF_US = 100.0
TOP = 20
# Histogram bin edges (µs), on a 1-2-5 scale: launch costs span from a microsecond to milliseconds.
HISTOGRAM_EDGES_US = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def launch_table(model: TraceModel, marker: Optional[str] = None) -> dict[str, np.ndarray]:
    """Per launch (columns, sorted by the call's start): runtime row, CPU duration, delay, device time, work count,
    first work row (all ns)."""
    def compute() -> dict[str, np.ndarray]:
        work = stream_work(model, marker)
        s = model.slices
        rows = work.rows
        launcher = model.links.launcher[rows]
        linked = launcher >= 0
        rows, launcher = rows[linked], launcher[linked].astype(np.int64)
        calls, inverse = np.unique(launcher, return_inverse=True)
        inverse = inverse.reshape(-1)
        n = len(calls)
        first_start = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_start, inverse, s.start[rows])
        # The first work of each launch: its row, for naming it.
        is_first = s.start[rows] == first_start[inverse]
        first_row = np.full(n, -1, dtype=np.int64)
        first_row[inverse[is_first][::-1]] = rows[is_first][::-1]
        inside = _starts_inside(work.windows, first_start)
        device = np.bincount(inverse, weights=s.dur[rows].astype(np.float64), minlength=n).astype(np.int64)
        count = np.bincount(inverse, minlength=n)
        calls, first_start, first_row, device, count = (a[inside] for a in (calls, first_start, first_row, device, count))
        order = np.argsort(s.start[calls], kind="stable")
        calls, first_start, first_row, device, count = (a[order] for a in (calls, first_start, first_row, device, count))
        cpu = s.dur[calls].astype(np.int64)
        delay = np.maximum(first_start - s.end_at(calls), 0)
        return {"call": calls, "cpu": cpu, "delay": delay, "device": device, "count": count, "first": first_row}

    return model.memo(("launch_table", marker), compute)


def _starts_inside(windows: tuple[np.ndarray, np.ndarray], times: np.ndarray) -> np.ndarray:
    starts, ends = windows
    k = np.searchsorted(starts, times, side="right") - 1
    return (k >= 0) & (times < ends[np.maximum(k, 0)])


def _stats(values: np.ndarray) -> dict[str, Optional[float]]:
    if len(values) == 0:
        return {"total": 0.0, "mean": None, "median": None, "p95": None, "max": None}
    v = values.astype(np.float64) / NS_PER_US
    return {"total": float(v.sum()), "mean": float(v.mean()), "median": float(np.median(v)),
            "p95": float(np.percentile(v, 95)), "max": float(v.max())}


def _histogram(values: np.ndarray) -> list[int]:
    edges = np.array(HISTOGRAM_EDGES_US[1:], dtype=np.float64) * NS_PER_US
    return np.bincount(np.searchsorted(edges, values, side="right"), minlength=len(edges) + 1).tolist()


def launches(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    work = stream_work(model, marker)
    table = launch_table(model, marker)
    s = model.slices
    call, cpu, delay, device, count, first = (table[k] for k in ("call", "cpu", "delay", "device", "count", "first"))
    n = len(call)
    short = device < cpu
    base: dict[str, Any] = {"steps": len(work.steps), "device_kind": work.device_kind,
                            "runtime_cutoff_us": RUNTIME_CUTOFF_US, "launch_delay_cutoff_us": LAUNCH_DELAY_CUTOFF_US,
                            "histogram_edges_us": list(HISTOGRAM_EDGES_US)}
    reason = no_device_work_reason(model, work)
    if reason is None and n == 0:
        reason = "No device work in the steps is linked to the runtime call that launched it (no correlation ids)."
    if reason:
        return {**base, "available": False, "reason": reason, "launches": 0, "by_call": [], "short_kernels": [],
                "longest_calls": [], "longest_delays": []}

    summary = {
        "launches": n, "device_activities": int(count.sum()),
        "graph_launches": int((count > 1).sum()),
        "short": int(short.sum()), "short_share": float(short.mean()),
        "short_cpu": float(cpu[short].sum()) / NS_PER_US, "short_device": float(device[short].sum()) / NS_PER_US,
        "runtime_outliers": int((cpu > RUNTIME_CUTOFF_US * NS_PER_US).sum()),
        "delay_outliers": int((delay > LAUNCH_DELAY_CUTOFF_US * NS_PER_US).sum()),
        "cpu": _stats(cpu), "delay": _stats(delay), "device": _stats(device),
    }
    histograms = {"cpu": _histogram(cpu), "delay": _histogram(delay), "device": _histogram(device)}

    by_call = _by_name(model, s.name[call], cpu=cpu, delay=delay, device=device, count=count, short=short)
    first_name = s.name[first]
    short_kernels = _by_name(model, first_name[short], cpu=cpu[short], delay=delay[short], device=device[short],
                             count=count[short], short=short[short])

    def listed(order: np.ndarray) -> list[dict[str, Any]]:
        return [{"name": model.strings[int(s.name[call[k]])], "id": int(s.event_id[call[k]]),
                 "start": int(s.start[call[k]]) / NS_PER_US, "cpu": int(cpu[k]) / NS_PER_US,
                 "delay": int(delay[k]) / NS_PER_US, "device": int(device[k]) / NS_PER_US,
                 "activities": int(count[k]), "kernel": model.strings[int(first_name[k])],
                 "kernel_id": int(s.event_id[first[k]]), "track": f"s{int(s.track[call[k]])}"}
                for k in order.tolist()]

    return {**base, "available": True, "reason": None, **summary, "histograms": histograms, "by_call": by_call,
            "short_kernels": short_kernels,
            "longest_calls": listed(np.argsort(-cpu, kind="stable")[:TOP]),
            "longest_delays": listed(np.argsort(-delay, kind="stable")[:TOP])}


def _by_name(model: TraceModel, names: np.ndarray, **columns: np.ndarray) -> list[dict[str, Any]]:
    """Launches grouped by a name (the runtime call's, or its first kernel's)."""
    if len(names) == 0:
        return []
    unique, inverse, calls = np.unique(names, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    sums = {k: np.bincount(inverse, weights=v.astype(np.float64), minlength=len(unique)) for k, v in columns.items()}
    most = {}
    for key in ("cpu", "delay"):
        most[key] = np.zeros(len(unique), dtype=np.int64)
        np.maximum.at(most[key], inverse, columns[key])
    rows = []
    for i, name in enumerate(unique.tolist()):
        rows.append({"name": model.strings[int(name)], "calls": int(calls[i]),
                     "activities": int(sums["count"][i]), "short": int(sums["short"][i]),
                     "cpu_total": sums["cpu"][i] / NS_PER_US, "cpu_mean": sums["cpu"][i] / calls[i] / NS_PER_US,
                     "cpu_max": int(most["cpu"][i]) / NS_PER_US,
                     "delay_mean": sums["delay"][i] / calls[i] / NS_PER_US, "delay_max": int(most["delay"][i]) / NS_PER_US,
                     "device_total": sums["device"][i] / NS_PER_US,
                     "device_mean": sums["device"][i] / calls[i] / NS_PER_US})
    rows.sort(key=lambda r: -r["cpu_total"])
    return rows
