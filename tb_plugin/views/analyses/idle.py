"""Idle time per device stream, split by its cause (HTA's idle time breakdown), over the overview's steps.

A stream is idle between two consecutive pieces of work on it (``stream_work``). Each gap takes the cause of the
work that ends it:

* **host wait**: the runtime call that launched the next work began after the previous work had ended: the host
  had not enqueued anything, the stream waited for the CPU;
* **kernel wait**: otherwise, a gap shorter than ``kernel_wait_us`` (30 µs, HTA's default): the cost of starting
  back-to-back work;
* **other**: the rest, such as a kernel waiting on an event of another stream, or on a collective.

As HTA's ``get_idle_time_breakdown`` does, the gaps between consecutive work count; unlike it, gaps are measured
inside the steps only, streams are lanes (a device's stream, not a stream number shared by several devices), and
the idle time before the stream's first work and after its last work in the steps is reported too (``no_work``),
so that the four parts add up to the steps' time less the stream's busy time. Each stream's ``host_wait_share`` is
its host wait over its own idle time: a share over all streams together would let nearly idle side streams speak
for a main stream that is busy (the page leads with the busiest stream, the first of ``streams``).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from .stream_work import no_device_work_reason, stream_reference, stream_work, time_in_windows

KERNEL_WAIT_US = 30.0
CATEGORIES = ("host_wait", "kernel_wait", "other")
HOST_WAIT, KERNEL_WAIT, OTHER = 0, 1, 2
LONGEST_GAPS = 20


def idle_time(model: TraceModel, marker: Optional[str] = None, kernel_wait_us: float = KERNEL_WAIT_US) -> dict[str, Any]:
    work = stream_work(model, marker)
    s = model.slices
    step_time = work.step_time
    base: dict[str, Any] = {"steps": len(work.steps), "step_time": step_time / NS_PER_US,
                            "kernel_wait_us": kernel_wait_us, "device_kind": work.device_kind,
                            "streams": [], "longest_gaps": []}
    reason = no_device_work_reason(model, work)
    if reason:
        return {**base, "available": False, "reason": reason}

    n_streams = len(work.tracks)
    # Consecutive work on the same stream: the gap from the latest end so far to the next start.
    same = np.r_[False, work.stream[1:] == work.stream[:-1]]
    group_start = np.flatnonzero(~same)
    reach = _running_max_per_group(work.end, group_start)
    prev_end = np.r_[0, reach[:-1]]
    gap = same & (work.start > prev_end)
    g = np.flatnonzero(gap)
    g_start, g_end = prev_end[g], work.start[g]
    launcher = model.links.launcher[work.rows[g]]
    launched_after = (launcher >= 0) & (s.start[np.maximum(launcher, 0)] > g_start)
    category = np.where(launched_after, HOST_WAIT,
                        np.where(g_end - g_start < kernel_wait_us * NS_PER_US, KERNEL_WAIT, OTHER))
    length = time_in_windows(work.windows, g_start, g_end)
    stream_of_gap = work.stream[g]
    split = np.zeros((n_streams, len(CATEGORIES)), dtype=np.int64)
    np.add.at(split, (stream_of_gap, category), length)

    busy = np.zeros(n_streams, dtype=np.int64)
    busy_len = time_in_windows(work.windows, np.maximum(work.start, prev_end * same), work.end)
    np.add.at(busy, work.stream, busy_len)
    streams = []
    for i in range(n_streams):  # one row per stream
        idle = step_time - int(busy[i])
        parts = {name: int(split[i, k]) / NS_PER_US for k, name in enumerate(CATEGORIES)}
        no_work = idle - int(split[i].sum())
        streams.append({**stream_reference(model, work, i), "busy": int(busy[i]) / NS_PER_US,
                        "idle": idle / NS_PER_US, **parts, "no_work": no_work / NS_PER_US,
                        "idle_share": idle / step_time if step_time > 0 else 0.0,
                        "host_wait_share": int(split[i, HOST_WAIT]) / idle if idle > 0 else None,
                        "gaps": int((stream_of_gap == i).sum())})
    streams.sort(key=lambda row: -row["busy"])

    top = np.argsort(-length, kind="stable")[:LONGEST_GAPS]
    top = top[length[top] > 0]
    prev_row = work.rows[g - 1]
    longest = [{"stream": work.labels[int(stream_of_gap[k])], "track": f"s{work.tracks[int(stream_of_gap[k])]}",
                "start": int(g_start[k]) / NS_PER_US, "end": int(g_end[k]) / NS_PER_US,
                "dur": int(g_end[k] - g_start[k]) / NS_PER_US, "category": CATEGORIES[int(category[k])],
                "before": model.strings[int(s.name[prev_row[k]])], "before_id": int(s.event_id[prev_row[k]]),
                "after": model.strings[int(s.name[work.rows[g[k]]])], "after_id": int(s.event_id[work.rows[g[k]]])}
               for k in top.tolist()]
    totals = {name: float(split[:, k].sum()) / NS_PER_US for k, name in enumerate(CATEGORIES)}
    return {**base, "available": True, "reason": None, "streams": streams, "longest_gaps": longest,
            "totals": totals}


def _running_max_per_group(values: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` restarting at each index of ``group_start`` (values are non-negative
    times: each group is lifted above the previous groups' values, so one running maximum serves all)."""
    if len(values) == 0:
        return values.copy()
    group = np.cumsum(np.isin(np.arange(len(values)), group_start)) - 1
    span = int(values.max()) - int(values.min()) + 1
    lifted = (values - values.min()) + group.astype(np.int64) * span
    return np.maximum.accumulate(lifted) - group.astype(np.int64) * span + values.min()
