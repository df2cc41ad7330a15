"""Queue length per device stream over time: how much launched work waits on each stream (HTA's queue length).

The length goes up by one when a runtime call that launches work on the stream begins, and down by one when that
work starts on the device; a ``cudaGraphLaunch`` adds every kernel of its graph at once. The series is a step
function (a point at each change), served as a counter track of the trace viewer (``c:queue:<track>``). Over the
overview's steps, per stream: the deepest queue, the time-weighted mean length and the time spent with an empty
queue (nothing launched is waiting: the stream either runs its last work or waits for the host).

As HTA's ``get_queue_length_time_series``, with every runtime call that launched work counted (HTA counts
``cudaLaunchKernel(ExC)``, ``cuLaunchKernel``, ``cudaMemcpyAsync``, ``cudaMemsetAsync`` and HIP's launches); HTA's
summary describes the points of the series, this one weighs each length by the time it lasted.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.categories import SliceKinds
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from .stream_work import no_device_work_reason, stream_label, stream_work, time_in_windows

TRACK_PREFIX = "c:queue:"


def _series_all(model: TraceModel) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Track id → (change times, queue length after each change), over the whole span."""
    def compute() -> dict[int, tuple[np.ndarray, np.ndarray]]:
        s = model.slices
        rows = np.flatnonzero(SliceKinds(model).device_work & (model.links.launcher >= 0))
        launcher = model.links.launcher[rows]
        track = np.r_[s.track[rows], s.track[rows]].astype(np.int64)
        ts = np.r_[s.start[launcher], s.start[rows]]
        delta = np.r_[np.ones(len(rows), dtype=np.int64), -np.ones(len(rows), dtype=np.int64)]
        # By stream, then time; at equal times an enqueue comes first.
        order = np.lexsort((-delta, ts, track))
        track, ts, delta = track[order], ts[order], delta[order]
        out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if len(track) == 0:
            return out
        bounds = np.flatnonzero(np.r_[True, track[1:] != track[:-1], True])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):  # one pass per stream
            length = np.cumsum(delta[lo:hi])
            times = ts[lo:hi]
            last = np.r_[times[1:] != times[:-1], True]  # one point per time: the length after all its changes
            out[int(track[lo])] = (times[last], length[last])
        return out

    return model.memo("queue_series", compute)


def queue_tracks(model: TraceModel) -> list[dict[str, Any]]:
    """Counter tracks of the trace viewer, one per stream that work was launched on (beside its device's lanes)."""
    out = []
    for track in sorted(_series_all(model)):
        t = model.tracks[track]
        out.append({"id": f"{TRACK_PREFIX}{track}", "name": f"{stream_label(model, track)} queue", "kind": "counter",
                    "group": t.process_name, "unit": "launches", "max_depth": 0})
    return out


def queue_series(model: TraceModel, track_id: str) -> Optional[dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The series of a ``c:queue:<track>`` counter track, as the trace viewer's counters route wants it."""
    text = track_id[len(TRACK_PREFIX):] if track_id.startswith(TRACK_PREFIX) else ""
    if not text.isdigit():
        return None
    series = _series_all(model).get(int(text))
    if series is None:
        return None
    return {"queue": (series[0], series[1].astype(np.float64))}


def queue_length(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    work = stream_work(model, marker)
    base: dict[str, Any] = {"steps": len(work.steps), "step_time": work.step_time / NS_PER_US,
                            "device_kind": work.device_kind, "streams": []}
    reason = no_device_work_reason(model, work)
    series = _series_all(model)
    if reason is None and not any(t in series for t in work.tracks):
        reason = "No device work in the steps is linked to the runtime call that launched it (no correlation ids)."
    if reason:
        return {**base, "available": False, "reason": reason}
    windows = work.windows
    lo, hi = int(windows[0][0]), int(windows[1][-1])
    total = work.step_time
    streams = []
    for index, track in enumerate(work.tracks):  # one row per stream
        if track not in series:
            continue
        times, length = series[track]
        # Segments between changes, bounded by the steps' span; the length before the first change is 0.
        k = np.searchsorted(times, lo, side="right") - 1
        seg_start = np.r_[lo, times[(times > lo) & (times < hi)]]
        seg_len = np.r_[length[k] if k >= 0 else 0, length[(times > lo) & (times < hi)]]
        seg_end = np.r_[seg_start[1:], hi]
        inside = time_in_windows(windows, seg_start, seg_end)
        counted = inside > 0
        weighted = float((seg_len * inside).sum())
        streams.append({"stream": work.labels[index], "track": f"s{track}", "counter": f"{TRACK_PREFIX}{track}",
                        "max": int(seg_len[counted].max()) if counted.any() else 0,
                        "mean": weighted / total if total > 0 else 0.0,
                        "empty": float(inside[seg_len <= 0].sum()) / NS_PER_US,
                        "empty_share": float(inside[seg_len <= 0].sum()) / total if total > 0 else 0.0,
                        "changes": int(((times >= lo) & (times < hi)).sum())})
    streams.sort(key=lambda row: (-row["max"], row["stream"]))
    return {**base, "available": True, "reason": None, "streams": streams}
