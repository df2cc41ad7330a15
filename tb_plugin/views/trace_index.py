"""Level-of-detail index of a span's slices, for the trace viewer.

Per (track, depth), slices are sorted by start. Level 0 holds the slices themselves;
each further level halves the detail four times over (resolution x4): slices shorter
than the level's resolution, and blocks of the level below, are merged with their
neighbours into busy blocks (start, end, count) when the gap between them is shorter
than the resolution. A window query picks the finest level whose resolution is at most
the requested one, so it touches at most a few items per pixel whatever the trace size,
then merges once more at the exact resolution.

Invariant (tested): every slice of a window is either returned as a slice or counted in
exactly one block.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..cache import derived_path, read_arrays, write_arrays
from ..model.trace_model import TraceModel

INDEX_SUFFIX = "lod"

LEVEL_FACTOR = 4
BASE_RESOLUTION_NS = 1_000  # level 1 merges what is shorter than 1 µs


@dataclass(frozen=True)
class Level:
    """Items of one detail level, sorted by (lane, start). A lane is one (track, depth)."""

    resolution: int  # ns; 0 for level 0
    lane: np.ndarray  # int64 lane id
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    count: np.ndarray  # int64 slices represented
    row: np.ndarray  # int64 slice row for single slices kept as such, -1 for blocks
    reach: np.ndarray  # running maximum of end within the lane (for the window's first item)
    lane_offsets: np.ndarray  # first item of each lane (len = lanes + 1)


@dataclass(frozen=True)
class TraceIndex:
    lanes_track: np.ndarray  # lane → track
    lanes_depth: np.ndarray  # lane → depth
    levels: list[Level]

    def level_for(self, resolution: int) -> Level:
        best = self.levels[0]
        for level in self.levels:
            if level.resolution <= resolution:
                best = level
        return best


def trace_index(model: TraceModel) -> TraceIndex:
    """The model's index: read from beside its cache file, else built (and stored there)."""
    return model.memo("trace_index", lambda: _load_or_build(model))


def _load_or_build(model: TraceModel) -> TraceIndex:
    path = derived_path(model, INDEX_SUFFIX)
    if path and os.path.exists(path):
        try:
            return index_from_arrays(*read_arrays(path))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # damaged or stale: rebuild below
    index = build_index(model)
    if path:
        try:
            write_arrays(path, *index_to_arrays(index))
        except OSError:
            pass  # a read-only or full cache only costs a rebuild next time
    return index


def index_to_arrays(index: TraceIndex) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    arrays = {"lanes_track": index.lanes_track, "lanes_depth": index.lanes_depth}
    for i, level in enumerate(index.levels):
        for name in ("lane", "start", "end", "count", "row", "reach", "lane_offsets"):
            arrays[f"{i}.{name}"] = getattr(level, name)
    return {"levels": [level.resolution for level in index.levels]}, arrays


def index_from_arrays(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> TraceIndex:
    levels = [
        Level(resolution, *(arrays[f"{i}.{name}"] for name in ("lane", "start", "end", "count", "row", "reach",
                                                               "lane_offsets")))
        for i, resolution in enumerate(header["levels"])
    ]
    return TraceIndex(lanes_track=arrays["lanes_track"], lanes_depth=arrays["lanes_depth"], levels=levels)


def _level(resolution: int, lane: np.ndarray, start: np.ndarray, end: np.ndarray, count: np.ndarray,
           row: np.ndarray, n_lanes: int) -> Level:
    key_reach = _lane_running_max(lane, end)
    offsets = np.searchsorted(lane, np.arange(n_lanes + 1), side="left")
    return Level(resolution, lane, start, end, count, row, key_reach, offsets)


def _lane_running_max(lane: np.ndarray, end: np.ndarray) -> np.ndarray:
    if len(end) == 0:
        return end.copy()
    lo = int(end.min())
    span = int(end.max()) - lo + 1
    shifted = lane.astype(np.int64) * span + (end - lo)
    return np.maximum.accumulate(shifted) - lane.astype(np.int64) * span + lo


def build_index(model: TraceModel) -> TraceIndex:
    s = model.slices
    lane_key = s.track.astype(np.int64) * 65536 + s.depth.astype(np.int64)
    unique_lanes, lane = np.unique(lane_key, return_inverse=True)
    lane = lane.reshape(-1).astype(np.int64)
    order = np.lexsort((s.start, lane))
    lane = lane[order]
    start, end = s.start[order], s.end[order]
    count = np.ones(len(order), dtype=np.int64)
    row = order.astype(np.int64)
    n_lanes = len(unique_lanes)
    levels = [_level(0, lane, start, end, count, row, n_lanes)]
    span = max(model.end - model.start, 1)
    resolution = BASE_RESOLUTION_NS
    while True:
        lane, start, end, count, row = merge_small(lane, start, end, count, row, resolution)
        levels.append(_level(resolution, lane, start, end, count, row, n_lanes))
        if resolution > span or len(start) <= 2 * n_lanes:
            break
        resolution *= LEVEL_FACTOR
    return TraceIndex(lanes_track=(unique_lanes // 65536).astype(np.int64),
                      lanes_depth=(unique_lanes % 65536).astype(np.int64), levels=levels)


def merge_small(lane: np.ndarray, start: np.ndarray, end: np.ndarray, count: np.ndarray, row: np.ndarray,
                resolution: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Keep items at least ``resolution`` long that are single slices; merge the rest into blocks.

    Small items of a lane merge while the gap to the block so far is under ``resolution``.
    Items must be sorted by (lane, start).
    """
    n = len(start)
    if n == 0:
        return lane, start, end, count, row
    big = ((end - start) >= resolution) & (row >= 0)
    small = ~big
    si = np.flatnonzero(small)
    if len(si) == 0:
        return lane, start, end, count, row
    s_lane, s_start, s_end, s_count = lane[si], start[si], end[si], count[si]
    reach = _lane_running_max(s_lane, s_end)
    new_lane = np.r_[True, s_lane[1:] != s_lane[:-1]]
    gap_break = np.r_[True, s_start[1:] - reach[:-1] >= resolution]
    # A big item lying between two small ones of the lane also separates them.
    breaks = new_lane | gap_break | _big_in_between(si, big)
    group = np.cumsum(breaks) - 1
    first = np.flatnonzero(breaks)
    b_lane = s_lane[first]
    b_start = s_start[first]
    b_end = np.zeros(len(first), dtype=np.int64)
    np.maximum.at(b_end, group, s_end)
    b_count = np.bincount(group, weights=s_count, minlength=len(first)).astype(np.int64)
    # A group of one single slice stays a slice (it is short, but alone).
    singles = np.bincount(group, minlength=len(first)) == 1
    b_row = np.where(singles & (s_count[first] == 1), row[si][first], -1)
    out_lane = np.concatenate([lane[big], b_lane])
    out_start = np.concatenate([start[big], b_start])
    out_end = np.concatenate([end[big], b_end])
    out_count = np.concatenate([count[big], b_count])
    out_row = np.concatenate([row[big], b_row])
    order = np.lexsort((out_start, out_lane))
    return out_lane[order], out_start[order], out_end[order], out_count[order], out_row[order]


def _big_in_between(small_positions: np.ndarray, big: np.ndarray) -> np.ndarray:
    """For each small item: whether a big item sits between it and the previous small item."""
    big_before = np.cumsum(big)  # big items at or before each position
    at = big_before[small_positions]
    prev = np.r_[at[0] if len(at) else 0, at[:-1]]
    out = at > prev
    if len(out):
        out[0] = True
    return out


@dataclass(frozen=True)
class WindowResult:
    lanes: np.ndarray  # lane per returned item
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    row: np.ndarray  # slice row, or -1 for a block


def query(index: TraceIndex, lanes: np.ndarray, t0: int, t1: int, resolution: int) -> WindowResult:
    """Items of ``lanes`` overlapping [t0, t1) at ``resolution`` (ns per pixel).

    Blocks that reach past the window are clipped to it and their count recomputed from
    the slices themselves, so counts add up to exactly the slices overlapping the window.
    """
    level = index.level_for(resolution)
    raw = index.levels[0]
    lane_parts, start_parts, end_parts, count_parts, row_parts = [], [], [], [], []
    for lane_id in lanes.tolist():
        lo, hi = int(level.lane_offsets[lane_id]), int(level.lane_offsets[lane_id + 1])
        if lo == hi:
            continue
        first = lo + int(np.searchsorted(level.reach[lo:hi], t0, side="right"))
        last = lo + int(np.searchsorted(level.start[lo:hi], t1, side="left"))
        if first >= last:
            continue
        start = level.start[first:last].copy()
        end = level.end[first:last].copy()
        count = level.count[first:last].copy()
        row = level.row[first:last]
        keep = end > t0
        edge = np.flatnonzero(keep & (row < 0) & ((start < t0) | (end > t1)))
        if len(edge):
            r_lo, r_hi = int(raw.lane_offsets[lane_id]), int(raw.lane_offsets[lane_id + 1])
            raw_start, raw_reach = raw.start[r_lo:r_hi], raw.reach[r_lo:r_hi]
            for i in edge.tolist():  # at most two blocks per lane: the window's edges
                a = int(np.searchsorted(raw_start, start[i], side="left"))
                b = int(np.searchsorted(raw_start, min(int(end[i]), t1), side="left"))
                a = max(a, int(np.searchsorted(raw_reach, t0, side="right")))
                count[i] = max(b - a, 0)
                start[i], end[i] = max(int(start[i]), t0), min(int(end[i]), t1)
            keep &= count > 0
        lane_parts.append(np.full(int(keep.sum()), lane_id, dtype=np.int64))
        start_parts.append(start[keep])
        end_parts.append(end[keep])
        count_parts.append(count[keep])
        row_parts.append(row[keep])
    if not lane_parts:
        z = np.zeros(0, dtype=np.int64)
        return WindowResult(z, z, z, z, z)
    lane, start, end, count, row = (np.concatenate(p) for p in
                                    (lane_parts, start_parts, end_parts, count_parts, row_parts))
    lane, start, end, count, row = merge_small(lane, start, end, count, row, resolution)
    return WindowResult(lane, start, end, count, row)


def resolution_for(t0: int, t1: int, width: int, minimum: Optional[int] = 1) -> int:
    """ns per pixel rounded up to a power of two (stable cache keys across nearby windows)."""
    raw = max((t1 - t0) / max(width, 1), float(minimum or 1))
    return int(2 ** int(np.ceil(np.log2(raw))))
