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
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .array_file import check_array, derived_path, read_arrays, write_arrays
from .factorize import factorize
from .trace_model import DamagedModel, TraceModel

INDEX_SUFFIX = "lod"
INDEX_VERSION = 2  # 2: compact levels (no lane column, 32-bit counts and rows, reach only where it differs)

LEVEL_FACTOR = 4
BASE_RESOLUTION_NS = 1_000  # level 1 merges what is shorter than 1 µs
# A level is kept where it holds at most 3/4 of the items of the finer kept level: otherwise the finer one answers its
# queries with at most 4/3 as many items, and the level is not worth its memory and writing (10 M events: 2 of the
# 4 finest levels held 77-90% of the items of the level below; without them the index file is 425 -> 187 MB).
_KEEP_LEVEL_BELOW = 0.75
_LEVEL_ARRAYS = ("start", "end", "count", "row", "reach", "lane_offsets")


@dataclass(frozen=True)
class Level:
    """Items of one detail level, sorted by (lane, start). A lane is one (track, depth).

    Stored compactly: ``count`` is None where every item is one slice, ``reach`` where it equals ``end``
    (the items of a lane do not overlap, as in any properly nested trace)."""

    resolution: int  # ns; 0 for level 0
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    count: Optional[np.ndarray]  # int32 slices represented, None: one each
    row: np.ndarray  # int32 slice row for single slices kept as such, -1 for blocks
    own_reach: Optional[np.ndarray]  # running maximum of end within the lane, None: ``end`` is
    lane_offsets: np.ndarray  # first item of each lane (len = lanes + 1)

    @property
    def reach(self) -> np.ndarray:
        return self.end if self.own_reach is None else self.own_reach

    def counts(self, first: int, last: int) -> np.ndarray:
        if self.count is None:
            return np.ones(last - first, dtype=np.int64)
        return self.count[first:last].astype(np.int64)

    def lanes(self) -> np.ndarray:
        """The lane of every item (from the offsets)."""
        return np.repeat(np.arange(len(self.lane_offsets) - 1, dtype=np.int64), np.diff(self.lane_offsets))


@dataclass(frozen=True)
class TraceIndex:
    lanes_track: np.ndarray  # lane → track
    lanes_depth: np.ndarray  # lane → depth
    resolutions: list[int]
    # Level i, made on first use (a stored level is checked against its checksums then).
    _make_level: Callable[[int], Level] = field(repr=False, compare=False)
    _levels: dict[int, Level] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def level(self, i: int) -> Level:
        found = self._levels.get(i)
        if found is None:
            with self._lock:
                found = self._levels.get(i)
                if found is None:
                    found = self._levels[i] = self._make_level(i)
        return found

    @property
    def levels(self) -> list[Level]:
        return [self.level(i) for i in range(len(self.resolutions))]

    def level_for(self, resolution: int) -> Level:
        best = 0
        for i, level_resolution in enumerate(self.resolutions):
            if level_resolution <= resolution:
                best = i
        return self.level(best)


def _in_memory(lanes_track: np.ndarray, lanes_depth: np.ndarray, levels: list[Level]) -> TraceIndex:
    return TraceIndex(lanes_track, lanes_depth, [level.resolution for level in levels], levels.__getitem__,
                      dict(enumerate(levels)))


def trace_index(model: TraceModel) -> TraceIndex:
    """The model's index: read from beside its cache file, else built (and stored there)."""
    return model.memo("trace_index", lambda: _load_or_build(model))


def _load_or_build(model: TraceModel) -> TraceIndex:
    path = derived_path(model, INDEX_SUFFIX)
    if path and os.path.exists(path):
        try:
            return _index_from_file(path, model)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # damaged or stale: rebuilt below
    index = build_index(model)
    if path and model.writable:
        store_index(index, path)
    return index


def store_index(index: TraceIndex, path: str) -> None:
    """Write ``index`` beside its model (a read-only or full cache only costs a rebuild next time)."""
    try:
        write_arrays(path, *index_to_arrays(index))
    except OSError:
        pass


def index_to_arrays(index: TraceIndex) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    arrays = {"lanes_track": index.lanes_track, "lanes_depth": index.lanes_depth}
    for i, level in enumerate(index.levels):
        stored = {"start": level.start, "end": level.end, "count": level.count, "row": level.row,
                  "reach": level.own_reach, "lane_offsets": level.lane_offsets}
        arrays.update({f"{i}.{name}": array for name, array in stored.items() if array is not None})
    return {"levels": index.resolutions, "version": INDEX_VERSION}, arrays


def _index_from_file(path: str, model: TraceModel) -> TraceIndex:
    header, arrays = read_arrays(path)
    if header.get("version") != INDEX_VERSION:
        raise ValueError("an index of another version")
    checksums = header["checksums"]
    for name in ("lanes_track", "lanes_depth"):
        check_array(arrays[name], checksums.get(name), f"the trace index's {name}")

    def make_level(i: int) -> Level:
        stored = {name: arrays.get(f"{i}.{name}") for name in _LEVEL_ARRAYS}
        try:
            for name, array in stored.items():
                if array is not None:
                    check_array(array, checksums.get(f"{i}.{name}"), f"level {i} of the trace index")
        except DamagedModel:
            # The index is derived: a damaged one is built again from the model (and stored again).
            fresh = build_index(model)
            store_index(fresh, path)
            return fresh.level(i) if i < len(fresh.resolutions) else fresh.level(len(fresh.resolutions) - 1)
        return Level(header["levels"][i], stored["start"], stored["end"], stored["count"], stored["row"],
                     stored["reach"], stored["lane_offsets"])

    return TraceIndex(arrays["lanes_track"], arrays["lanes_depth"], list(header["levels"]), make_level)


def _level(resolution: int, lane: np.ndarray, start: np.ndarray, end: np.ndarray, count: Optional[np.ndarray],
           row: np.ndarray, n_lanes: int) -> Level:
    reach = _lane_running_max(lane, end)
    offsets = np.searchsorted(lane, np.arange(n_lanes + 1), side="left").astype(np.int64)
    return Level(resolution, start, end, None if count is None else count.astype(np.int32, copy=False),
                 row.astype(np.int32, copy=False), None if np.array_equal(reach, end) else reach, offsets)


def _lane_running_max(lane: np.ndarray, end: np.ndarray) -> np.ndarray:
    if len(end) == 0:
        return end.copy()
    lo = int(end.min())
    span = int(end.max()) - lo + 1
    lane_base = lane.astype(np.int64) * span
    shifted = lane_base + (end - lo)
    np.maximum.accumulate(shifted, out=shifted)
    shifted -= lane_base
    shifted += lo
    return shifted


def build_index(model: TraceModel) -> TraceIndex:
    s = model.slices
    # Slices are sorted by (track, start): a stable sort by lane keeps start order within each lane.
    unique_lanes, lane = factorize(s.track.astype(np.int64) * 65536 + s.depth.astype(np.int64))
    n_lanes = len(unique_lanes)
    order = np.argsort(lane.astype(np.int16 if n_lanes < (1 << 15) else np.int64), kind="stable")
    # 32-bit lanes, counts and rows (as stored): half the memory traffic of the merges below.
    lane = lane[order].astype(np.int32, copy=False)
    start = s.start[order]
    end = start + s.dur[order]
    count = np.ones(len(order), dtype=np.int32)
    row = order.astype(np.int32)
    levels = [_level(0, lane, start, end, None, row, n_lanes)]
    span = max(model.end - model.start, 1)
    resolution = BASE_RESOLUTION_NS
    kept = len(start)
    while True:
        lane, start, end, count, row = merge_small(lane, start, end, count, row, resolution)
        last = resolution > span or len(start) <= 2 * n_lanes
        if last or len(start) < _KEEP_LEVEL_BELOW * kept:
            levels.append(_level(resolution, lane, start, end, count, row, n_lanes))
            kept = len(start)
        if last:
            break
        resolution *= LEVEL_FACTOR
    return _in_memory((unique_lanes // 65536).astype(np.int64), (unique_lanes % 65536).astype(np.int64), levels)


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
    first = np.flatnonzero(breaks)
    if len(first) == len(si):  # every small item stays alone: nothing merges at this resolution
        return lane, start, end, count, row
    group_sizes = np.diff(np.r_[first, len(si)])
    b_lane = s_lane[first]
    b_start = s_start[first]
    b_end = np.maximum.reduceat(s_end, first)
    b_count = np.add.reduceat(s_count, first)
    # A group of one single slice stays a slice (it is short, but alone).
    b_row = np.where((group_sizes == 1) & (s_count[first] == 1), row[si][first], -1)
    big_rows = np.flatnonzero(big)
    # Both parts are sorted by (lane, start): one stable sort of their concatenation merges the two runs.
    out_lane = np.concatenate([lane[big_rows], b_lane])
    out_start = np.concatenate([start[big_rows], b_start])
    lo = int(out_start.min())
    width = int(out_start.max()) - lo + 1
    if int(out_lane.max()) < (1 << 62) // width:
        order = np.argsort(out_lane.astype(np.int64) * width + (out_start - lo), kind="stable")
    else:
        order = np.lexsort((out_start, out_lane))
    out_end = np.concatenate([end[big_rows], b_end])[order]
    out_count = np.concatenate([count[big_rows], b_count])[order]
    out_row = np.concatenate([row[big_rows], b_row])[order]
    return out_lane[order], out_start[order], out_end, out_count, out_row


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
    raw: Optional[Level] = None  # the slices themselves, for blocks cut by the window's edges (read when needed)
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
        count = level.counts(first, last)
        row = level.row[first:last].astype(np.int64)
        keep = end > t0
        edge = np.flatnonzero(keep & (row < 0) & ((start < t0) | (end > t1)))
        if len(edge):
            raw = raw or index.level(0)
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
