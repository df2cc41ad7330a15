"""The user's own ranges: ``record_function`` / ``user_annotation`` ranges on the host and their copies on the device
(``gpu_user_annotation``), as a table by name, like the operator table.

Per name, over the overview's steps (a host range counts when it starts inside the steps' host ranges, a device copy
when it starts inside the device-extended steps): calls and host time (the ranges' durations); the device copies'
count and time (from the first to the last device work of the range, as the profiler draws them; HTA's
``get_gpu_user_annotation_breakdown`` sums the same durations); and the device work launched while the range is
open: the kernels, copies and memsets whose launching runtime call starts inside the range, on any thread of the
range's process (``DEVICE_WORK_RULE``). Not only the operators nested in it: autograd launches the backward pass's
kernels from its own thread, so a ``## backward ##`` range on the main thread encloses few launches of its own (and
its device copy, which Kineto draws from those launches, is as short). A range counts work launched by other
threads at the same time too (a data loader's pinned copies, another stream's work). The steps' own ranges
(``ProfilerStep#N``) are the steps, not annotations.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.categories import SliceKinds
from ...model.steps import find_steps
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..quantities import recording

HOST_CATEGORIES = frozenset({"user_annotation", "UserDefined", "PythonUserDefined"})
DEVICE_CATEGORY = "gpu_user_annotation"
DEVICE_WORK_RULE = ("kernels, copies and memsets whose launch starts inside the range, on any thread of its process "
                    "(autograd launches backward work from its own thread)")


def _inside(times: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    k = np.searchsorted(starts, times, side="right") - 1
    return (k >= 0) & (times < ends[np.maximum(k, 0)])


def device_work_launched_in(model: TraceModel, ranges: np.ndarray) -> np.ndarray:
    """Per host range (rows): ns of device work (kernels, copies, memsets) whose launching runtime call starts
    inside the range, on any thread of the range's process."""
    s = model.slices
    out = np.zeros(len(ranges), dtype=np.float64)
    work = np.flatnonzero(SliceKinds(model).device_work & (model.links.launcher >= 0))
    if not len(work) or not len(ranges):
        return out
    process = np.unique(np.array([t.pid for t in model.tracks], dtype=object), return_inverse=True)[1].reshape(-1)
    launcher = model.links.launcher[work]
    launch_process, launch_time = process[s.track[launcher]], s.start[launcher]
    range_process = process[s.track[ranges]]
    for pid in np.unique(range_process).tolist():  # one pass per process, not per range
        mine = launch_process == pid
        order = np.argsort(launch_time[mine], kind="stable")
        times = launch_time[mine][order]
        summed = np.r_[0, np.cumsum(s.dur[work][mine][order])]
        at = range_process == pid
        lo = np.searchsorted(times, s.start[ranges[at]], side="left")
        hi = np.searchsorted(times, s.end_at(ranges[at]), side="left")
        out[at] = summed[hi] - summed[lo]
    return out


def annotations(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    s = model.slices
    kinds = SliceKinds(model)
    steps = find_steps(model, marker)
    category = np.fromiter((c in HOST_CATEGORIES for c in model.strings), dtype=bool, count=len(model.strings))
    host = np.flatnonzero(category[s.cat] & kinds.on_host & ~kinds.step) if len(s) else np.zeros(0, np.int64)
    host = host[_inside(s.start[host], steps.host_start, steps.host_end)]
    device_cat = model.string_id(DEVICE_CATEGORY)
    device = np.flatnonzero((s.cat == device_cat) & ~kinds.step) if device_cat >= 0 else np.zeros(0, np.int64)
    device = device[_inside(s.start[device], steps.start, steps.end)]
    base: dict[str, Any] = {"steps": len(steps), "has_device_copies": bool(len(device)), "rows": []}
    if len(host) == 0 and len(device) == 0:
        return {**base, "available": False,
                "reason": "No record_function or user annotation ranges in the steps. " + recording.record_annotations(model)}

    names = np.r_[s.name[host], s.name[device]].astype(np.int64)
    unique, inverse = np.unique(names, return_inverse=True)
    inverse = inverse.reshape(-1)
    of_host, of_device = inverse[:len(host)], inverse[len(host):]
    n = len(unique)
    has_device = bool(kinds.device_work.any())
    work = device_work_launched_in(model, host)

    def total(index: np.ndarray, values: np.ndarray) -> np.ndarray:
        return np.bincount(index, weights=values.astype(np.float64), minlength=n)

    calls, device_calls = np.bincount(of_host, minlength=n), np.bincount(of_device, minlength=n)
    host_total, device_total, device_work = total(of_host, s.dur[host]), total(of_device, s.dur[device]), total(of_host, work)
    host_max = np.zeros(n, dtype=np.int64)
    np.maximum.at(host_max, of_host, s.dur[host])
    # An example range of each name, to show it in the trace viewer: its longest host range, else device copy.
    example = np.full(n, -1, dtype=np.int64)
    rows_all = np.r_[host, device]
    by_length = np.argsort(s.dur[rows_all], kind="stable")  # longest last: it wins the assignment
    example[inverse[by_length]] = rows_all[by_length]
    rows = []
    for i, name in enumerate(unique.tolist()):
        rows.append({"name": model.strings[name], "calls": int(calls[i]),
                     "host_total": host_total[i] / NS_PER_US,
                     "host_mean": host_total[i] / calls[i] / NS_PER_US if calls[i] else None,
                     "host_max": int(host_max[i]) / NS_PER_US if calls[i] else None,
                     "device_calls": int(device_calls[i]),
                     "device_total": device_total[i] / NS_PER_US if device_calls[i] else None,
                     "device_work": device_work[i] / NS_PER_US if calls[i] and has_device else None,
                     "example_id": int(s.event_id[example[i]]), "example_start": int(s.start[example[i]]) / NS_PER_US,
                     "example_end": int(s.end_at(example[i])) / NS_PER_US})
    rows.sort(key=lambda r: (-r["host_total"], -(r["device_total"] or 0.0)))
    return {**base, "available": True, "reason": None, "has_device": has_device,
            "device_work_rule": DEVICE_WORK_RULE if has_device else None, "rows": rows}
