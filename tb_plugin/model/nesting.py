"""Nesting of slices on a track, computed with sorted-array arithmetic (no per-slice loop).

Slices must be sorted by (track, start, end descending). For properly nested slices,
the depth of slice i is the number of earlier slices on its track that are still open
when it starts: ``i - (earlier slices that ended at or before its start)``. Slices that
end exactly where a later one starts are closed (back-to-back slices are siblings).
A zero-length slice at the same instant as a longer one nests inside it.
"""

from __future__ import annotations

import numpy as np


def nesting(track: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (depth, parent row) for slices sorted by (track, start, -end)."""
    n = len(start)
    if n == 0:
        return np.zeros(0, dtype=np.int16), np.zeros(0, dtype=np.int32)
    # One key space for all tracks: shift each track's times past the previous track's.
    t0 = int(min(start.min(), end.min()))
    span = int(max(start.max(), end.max())) - t0 + 1
    # In place where it can: at ten million slices each temporary is 80 MB, and the build gathers columns beside this.
    offset = track.astype(np.int64)
    offset *= span
    offset -= t0
    start_key = start + offset
    end_key = np.add(end, offset, out=offset)
    zero = end_key == start_key
    # Slices of earlier tracks all "ended" before this track's first start: subtract them too.
    end_key.sort()
    ended = np.searchsorted(end_key, start_key, side="right")
    del end_key, offset
    # Zero-length slices starting at this instant, this one and later ones in the order,
    # were counted as ended although they are not earlier: take them back out.
    ended -= _zero_length_from_here_at_same_start(start_key, zero)
    depth = np.arange(n, dtype=np.int64)  # the rank of each slice
    depth -= ended
    del ended
    np.maximum(depth, 0, out=depth)
    parent = _parents(track, depth)
    # Slices that overrun their parent (a range that starts inside another and ends after it)
    # break the arithmetic above. Those tracks are redone with the stack walk that torch's
    # profiler uses for its own tree: an open slice that does not contain the next one is closed.
    overrun = (parent >= 0) & (end > end[np.maximum(parent, 0)])
    if overrun.any():
        for t in np.unique(track[overrun]).tolist():
            rows = np.flatnonzero(track == t)
            d, p = _stack_walk(start[rows].tolist(), end[rows].tolist())
            depth[rows] = d
            parent[rows] = np.where(p >= 0, rows[np.maximum(p, 0)], -1)
    return depth.astype(np.int16), parent


def _stack_walk(start: list[int], end: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Depth and parent (local indices) by an explicit stack; one Python step per slice of the track."""
    n = len(start)
    depth = np.zeros(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    stack: list[int] = []
    for i in range(n):
        s_i, e_i = start[i], end[i]
        while stack:
            top = stack[-1]
            if s_i >= end[top] and not (s_i == e_i == start[top] and end[top] > start[top]) or e_i > end[top]:
                stack.pop()
            else:
                parent[i] = top
                break
        depth[i] = len(stack)
        stack.append(i)
    return depth, parent


def _zero_length_from_here_at_same_start(start_key: np.ndarray, zero: np.ndarray) -> np.ndarray:
    """For each row: zero-length rows with the same start at this row or after it.

    ``start_key`` is sorted. Each zero-length row j counts for the rows of its start from the first one up to j:
    +1 at that first row and -1 past j, summed once over the stretch of rows they touch (few or none of the
    rows: whole-column prefix sums cost ~0.8 s at ten million slices).
    """
    n = len(start_key)
    out = np.zeros(n, dtype=np.int64)
    rows = np.flatnonzero(zero)
    if len(rows) == 0:
        return out
    first = np.searchsorted(start_key, start_key[rows], side="left")
    lo, hi = int(first[0]), int(rows[-1]) + 2  # first and rows are sorted
    change = np.bincount(first - lo, minlength=hi - lo) - np.bincount(rows + 1 - lo, minlength=hi - lo)
    out[lo : hi - 1] = np.cumsum(change[: hi - 1 - lo])
    return out


def _parents(track: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Parent row = the nearest earlier row on the same track with depth one less."""
    n = len(depth)
    parent = np.full(n, -1, dtype=np.int32)
    if n == 0:
        return parent
    max_depth = int(depth.max())
    rows_at: list[np.ndarray] = [np.flatnonzero(depth == d) for d in range(max_depth + 1)]
    for d in range(1, max_depth + 1):
        children = rows_at[d]
        candidates = rows_at[d - 1]
        if len(children) == 0 or len(candidates) == 0:
            continue
        pos = np.searchsorted(candidates, children, side="left") - 1
        ok = pos >= 0
        found = candidates[np.where(ok, pos, 0)]
        ok &= track[found] == track[children]
        parent[children[ok]] = found[ok]
    return parent
