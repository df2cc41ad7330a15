"""What lies in a time range of the trace viewer (an area selection, as Perfetto has).

``range_summary(model, start_us, end_us, track_ids)`` answers, for the slices of the chosen tracks
(every slice track when none are given) that overlap the range:

* per track kind (cpu, gpu, other) and slice name: how many slices overlap the range, their time
  inside the range (``total``: each slice clipped to the range) and their self time inside the
  range (``self``: the clipped time minus their direct children's clipped time), largest total
  first;
* the overview's step breakdown of the steps that lie inside the range: the same per-step
  numbers as the Overview (``overview.step_breakdown``), averaged over just those steps. A step
  that only partly lies in the range is counted in ``steps.partial`` and left out;
* ``breakdown``: the range itself split by the Overview's categories, with the Overview's priority
  rule (each instant counted once), so a range that is not whole steps still has an overview;
* ``counters``: the counter tracks given (``counter_stats``: each series' value at the range's start and end, its
  lowest and highest value inside the range and its time-weighted mean), so a selection over the trace's memory
  counter and a memory snapshot's track reads both peaks.

Times are µs in the trace viewer's time base (the model's ns / 1000). Whole-array work: one
overlap test over the slice columns, then grouping with ``np.unique``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from ...model.trace_model import TraceModel
from ...model import intervals
from ...model.units import NS_PER_US
from ..overview import CATEGORIES, category_intervals, step_breakdown

KINDS = ("cpu", "gpu", "other")
ROW_LIMIT = 2000
STEP_SLACK_NS = 1000


def _track_rows(model: TraceModel, track_ids: Optional[Sequence[str]]) -> Optional[np.ndarray]:
    """Model track rows of the trace viewer's slice-track ids (``s<id>``); None means every track.
    Counter tracks and unknown ids are ignored."""
    if not track_ids:
        return None
    known = {f"s{t.id}": t.id for t in model.tracks}
    return np.array(sorted({known[t] for t in track_ids if t in known}), dtype=np.int64)


class CounterTrack(NamedTuple):
    """A counter track of the trace viewer (its ``trace/tracks`` entry) with its series: name -> (times ns, values)."""

    track: dict[str, Any]
    series: dict[str, tuple[np.ndarray, np.ndarray]]


def counter_stats(ts: np.ndarray, values: np.ndarray, lo: int, hi: int) -> Optional[dict[str, Any]]:
    """A counter (a step function: each value holds until the next sample) over [lo, hi) ns: the value in force at
    ``lo`` (``first``) and at the end (``last``), the lowest and highest value it takes, and its time-weighted mean
    over the part of the range where it has a value (``known_from``: where that part starts, µs). None when the
    counter has no value in the range."""
    before = int(np.searchsorted(ts, lo, side="right"))
    until = int(np.searchsorted(ts, hi, side="left"))
    times = ts[before:until]
    points = values[before:until]
    if before > 0:  # the value in force when the range starts
        times = np.concatenate([[lo], times])
        points = np.concatenate([[values[before - 1]], points])
    if len(times) == 0:
        return None
    weight = np.diff(np.append(times, hi)).astype(np.float64)
    mean = float((points * weight).sum() / weight.sum()) if weight.sum() > 0 else float(points[-1])
    return {"first": float(points[0]), "last": float(points[-1]), "min": float(points.min()),
            "max": float(points.max()), "mean": mean, "known_from": float(times[0]) / NS_PER_US}


def _counters(tracks: Sequence[CounterTrack], lo: int, hi: int) -> list[dict[str, Any]]:
    out = []
    for counter in tracks:
        stats = {name: counter_stats(ts, values, lo, hi) for name, (ts, values) in counter.series.items()}
        known = {name: value for name, value in stats.items() if value is not None}
        if known:
            track = counter.track
            out.append({"id": track["id"], "name": track["name"], "unit": track.get("unit", ""), "series": known})
    return out


def range_summary(model: TraceModel, start_us: float, end_us: float,
                  track_ids: Optional[Sequence[str]] = None, limit: int = ROW_LIMIT,
                  counters: Sequence[CounterTrack] = ()) -> dict[str, Any]:
    if not end_us > start_us:
        raise ValueError("end must be after start")
    lo, hi = int(round(start_us * NS_PER_US)), int(round(end_us * NS_PER_US))
    s = model.slices
    start, end = s.start, s.start + s.dur
    # Overlapping the range; an instant-like slice (dur 0) counts when it lies inside it.
    overlap = (start < hi) & ((end > lo) | ((s.dur == 0) & (start >= lo)))
    tracks = _track_rows(model, track_ids)
    if tracks is not None:
        overlap &= np.isin(s.track, tracks)
    rows = np.flatnonzero(overlap)
    clipped = np.minimum(end[rows], hi) - np.maximum(start[rows], lo)
    # Self time inside the range: minus the clipped time of direct children (a child always overlaps
    # the range where its parent does not extend beyond it, and it lies on its parent's track).
    parent = s.parent[rows]
    pos = np.searchsorted(rows, parent)
    pos_ok = (parent >= 0) & (pos < len(rows))
    pos_ok[pos_ok] &= rows[pos[pos_ok]] == parent[pos_ok]
    children = np.zeros(len(rows), dtype=np.int64)
    np.add.at(children, pos[pos_ok], clipped[pos_ok])
    self_time = clipped - children

    kind_of_track = np.array([KINDS.index(t.kind) if t.kind in KINDS else 2 for t in model.tracks] or [2], dtype=np.int64)
    kind = kind_of_track[s.track[rows]]
    names = s.name[rows].astype(np.int64)
    key = kind * (len(model.strings) + 1) + names
    unique, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    totals = np.bincount(inverse, weights=clipped, minlength=len(unique))
    selfs = np.bincount(inverse, weights=self_time, minlength=len(unique))
    order = np.argsort(-totals, kind="stable")
    out_rows = []
    for i in order[:limit].tolist():
        k, name = divmod(int(unique[i]), len(model.strings) + 1)
        out_rows.append({"kind": KINDS[k], "name": model.strings[name], "count": int(counts[i]),
                         "total": totals[i] / NS_PER_US, "self": selfs[i] / NS_PER_US})
    kinds = []
    for k, label in enumerate(KINDS):
        mine = kind == k
        if mine.any():
            kinds.append({"kind": label, "slices": int(mine.sum()), "names": int(np.count_nonzero(unique // (len(model.strings) + 1) == k)),
                          "total": float(clipped[mine].sum()) / NS_PER_US, "self": float(self_time[mine].sum()) / NS_PER_US})
    return {
        "start": start_us,
        "end": end_us,
        "duration": end_us - start_us,
        "tracks": None if tracks is None else [f"s{t}" for t in tracks.tolist()],
        "slices": int(len(rows)),
        "kinds": kinds,
        "rows": out_rows,
        "truncated": max(0, len(unique) - limit),
        "breakdown": _range_breakdown(model, lo, hi),
        "steps": _steps_in_range(model, lo, hi),
        "counters": _counters(counters, lo, hi),
    }


def _range_breakdown(model: TraceModel, lo: int, hi: int) -> dict[str, float]:
    """µs of [lo, hi] in each overview category, by the overview's priority (``other``: none of them)."""
    cats = category_intervals(model)
    per = intervals.exclusive_breakdown((np.array([lo], dtype=np.int64), np.array([hi], dtype=np.int64)),
                                        [cats[c] for c in CATEGORIES[:-1]])
    return {c: float(per[0, j]) / NS_PER_US for j, c in enumerate(CATEGORIES)}


def _steps_in_range(model: TraceModel, lo: int, hi: int) -> dict[str, Any]:
    """The overview's per-step breakdown of the steps inside [lo, hi] ns, and how many only partly are."""
    breakdown = step_breakdown(model, None)
    steps = breakdown.steps
    if len(steps) == 0:
        return {"count": 0, "partial": 0, "names": [], "source": steps.source, "breakdown": None, "mean_step_time": None}
    # 1 µs of slack: the range comes in as float µs, and traces record µs.
    inside = (steps.start >= lo - STEP_SLACK_NS) & (steps.end <= hi + STEP_SLACK_NS)
    partial = (steps.start < hi) & (steps.end > lo) & ~inside
    chosen = np.flatnonzero(inside)
    result: dict[str, Any] = {
        "count": int(len(chosen)),
        "partial": int(partial.sum()),
        "names": [steps.names[i] for i in chosen.tolist()],
        "source": steps.source,
        "breakdown": None,
        "mean_step_time": None,
    }
    if len(chosen):
        per_step = breakdown.per_step[chosen]
        mean = per_step.mean(axis=0)
        result["breakdown"] = {c: float(mean[j]) / NS_PER_US for j, c in enumerate(CATEGORIES)}
        result["mean_step_time"] = float((steps.end[chosen] - steps.start[chosen]).mean()) / NS_PER_US
    return result
