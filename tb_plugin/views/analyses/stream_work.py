"""Device work per stream, with the runtime calls that launched it: what the idle-time, launch and queue analyses
share, over the overview's steps.

A stream is a device lane of the trace (one track: Kineto writes each CUDA/HIP stream as its own thread of the
device's process). Its work is the kernels, copies and memsets on it (``SliceKinds.busy_work``): device-side
annotations and synchronisation are not work, and an Ascend collective whose own tasks are on the streams is
its tasks that copy or reduce, not its span or its notify waits (the Overview's utilization counts the same). The launching runtime call of each is ``links.launcher`` (by
correlation): ``cudaLaunchKernel``, ``cudaMemcpyAsync``, a ``cudaGraphLaunch`` that launched many kernels, ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ...model import intervals
from ...model.categories import SliceKinds
from ...model.steps import Steps, find_steps
from ...model.trace_model import TraceModel
from ..quantities.devices import device_label, devices_noun


@dataclass(frozen=True)
class StreamWork:
    """Device work rows in the steps, sorted by (stream, start, end); times clipped to the steps' span."""

    steps: Steps
    rows: np.ndarray  # slice rows
    stream: np.ndarray  # per row: index into ``tracks``
    start: np.ndarray  # int64 ns, clipped to [steps.start[0], steps.end[-1]]
    end: np.ndarray
    tracks: list[int]  # track id of each stream
    labels: list[str]  # "GPU 0 · stream 7"
    device_kind: str  # "GPU", "Ascend", ... or "device"

    @property
    def windows(self) -> intervals.Intervals:
        return self.steps.start, self.steps.end

    @property
    def step_time(self) -> int:
        return int(self.steps.durations.sum())


def stream_label(model: TraceModel, track: int) -> str:
    t = model.tracks[track]
    device = f"{device_label(model, t.device)} · " if t.device is not None else f"{t.process_name} · "
    return device + (t.thread_name or t.tid).strip()


def stream_work(model: TraceModel, marker: Optional[str] = None) -> StreamWork:
    def compute() -> StreamWork:
        steps = find_steps(model, marker)
        s = model.slices
        work = SliceKinds(model).busy_work
        lo, hi = (int(steps.start[0]), int(steps.end[-1])) if len(steps) else (0, 0)
        rows = np.flatnonzero(work & (s.end > lo) & (s.start < hi))
        start, end = np.clip(s.start[rows], lo, hi), np.clip(s.end_at(rows), lo, hi)
        order = np.lexsort((end, start, s.track[rows]))
        rows, start, end = rows[order], start[order], end[order]
        track_ids, stream = np.unique(s.track[rows], return_inverse=True)
        tracks = track_ids.tolist()
        devices = sorted({d for d in (model.tracks[t].device for t in tracks) if d is not None})
        return StreamWork(steps=steps, rows=rows, stream=stream.reshape(-1).astype(np.int64), start=start, end=end,
                          tracks=tracks, labels=[stream_label(model, t) for t in tracks],
                          device_kind=devices_noun(model, devices))

    return model.memo(("stream_work", marker), compute)


def time_in_windows(windows: intervals.Intervals, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per interval [start, end): how much of it lies inside the (sorted, disjoint) windows."""
    w_start, w_end = windows
    if len(w_start) == 0:
        return np.zeros(len(starts), dtype=np.int64)
    before = np.r_[0, np.cumsum(w_end - w_start)]

    def inside_until(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(w_start, t, side="right") - 1
        within = np.clip(t - w_start[np.maximum(k, 0)], 0, (w_end - w_start)[np.maximum(k, 0)])
        return np.where(k >= 0, before[np.maximum(k, 0)] + within, 0)

    return np.maximum(inside_until(ends) - inside_until(starts), 0)


def stream_reference(model: TraceModel, work: StreamWork, index: int) -> dict[str, Any]:
    """What the page needs to name a stream and to show it in the trace viewer."""
    track = model.tracks[work.tracks[index]]
    return {"stream": work.labels[index], "track": f"s{track.id}", "device": track.device, "tid": track.tid,
            "stream_id": stream_id(model, work.tracks[index])}


def stream_id(model: TraceModel, track: int) -> Optional[int]:
    """The ``stream`` argument of the work on a lane (Kineto's CUDA stream id), when the trace gives one."""
    def compute() -> dict[int, Optional[int]]:
        s = model.slices
        rows = SliceKinds(model).device_work & (s.stream >= 0) & (s.stream < (1 << 31))
        # One integer per (lane, stream) pair: a 1-D unique is a plain sort.
        keys = np.unique((s.track[rows].astype(np.int64) << 32) | s.stream[rows].astype(np.int64))
        found: dict[int, Optional[int]] = {}
        for lane, stream in zip((keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist()):  # one per (lane, stream) pair
            found[lane] = stream if lane not in found else None  # a lane of several streams names none
        return found

    return model.memo("stream_ids", compute).get(track)


def no_device_work_reason(model: TraceModel, work: StreamWork) -> Optional[str]:
    """Why a stream analysis has nothing to show, or None when it has."""
    if len(work.rows):
        return None
    if SliceKinds(model).device_work.any():
        return "No device work runs inside the steps."
    return "This span has no device activity (kernels, copies): it was recorded without a GPU or without CUDA activities."
