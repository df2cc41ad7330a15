"""Tree arithmetic over the nesting of slices (``parent``/``depth`` columns), vectorised per level.

Self time, subtree sums and "has an ancestor with property X" are computed level by level
(one numpy pass per nesting depth), never per slice.
"""

from __future__ import annotations

import numpy as np

from .factorize import unique_rows
from .trace_model import SliceTable


def levels(slices: SliceTable) -> list[np.ndarray]:
    """Rows grouped by depth, shallowest first."""
    depth = slices.depth
    if len(depth) == 0:
        return []
    order = np.argsort(depth, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(depth[order])) + 1)


def self_time(slices: SliceTable) -> np.ndarray:
    """Duration minus the durations of direct children (ns; negative when children overrun)."""
    children = np.zeros(len(slices), dtype=np.int64)
    has_parent = slices.parent >= 0
    np.add.at(children, slices.parent[has_parent], slices.dur[has_parent])
    return slices.dur - children


def subtree_sum(slices: SliceTable, values: np.ndarray) -> np.ndarray:
    """Per row: its value plus the values of all its descendants."""
    total = values.astype(np.float64 if values.dtype.kind == "f" else np.int64, copy=True)
    for rows in reversed(levels(slices)):
        p = slices.parent[rows]
        has = p >= 0
        np.add.at(total, p[has], total[rows[has]])
    return total


def has_ancestor(slices: SliceTable, flag: np.ndarray) -> np.ndarray:
    """Per row: whether any strict ancestor has ``flag``."""
    inherited = np.zeros(len(slices), dtype=bool)
    for rows in levels(slices):
        p = slices.parent[rows]
        has = p >= 0
        inherited[rows[has]] = inherited[p[has]] | flag[p[has]]
    return inherited


def nearest_ancestor_where(slices: SliceTable, flag: np.ndarray) -> np.ndarray:
    """Per row: the nearest strict ancestor with ``flag`` (-1 if none)."""
    nearest = np.full(len(slices), -1, dtype=np.int64)
    for rows in levels(slices):
        p = slices.parent[rows]
        has = p >= 0
        parents = p[has]
        nearest[rows[has]] = np.where(flag[parents], parents, nearest[parents])
    return nearest


def frame_chains(slices: SliceTable, is_frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Call stacks made of the frame slices above each row (e.g. ``python_function`` events).

    Returns (chain per row, parent chain per chain, frame name per chain): chain 0 is the
    empty stack; a row's chain includes the row itself when it is a frame. Equal stacks get
    equal ids, so grouping by stack is grouping by an integer.
    """
    n = len(slices)
    chain = np.zeros(n, dtype=np.int64)
    chain_parent = [np.zeros(1, dtype=np.int64)]
    chain_name = [np.full(1, -1, dtype=np.int64)]
    next_id = 1
    for rows in levels(slices):
        p = slices.parent[rows]
        above = np.where(p >= 0, chain[np.maximum(p, 0)], 0)
        frames = is_frame[rows]
        chain[rows] = above
        if frames.any():
            frame_rows = rows[frames]
            key = np.stack([above[frames], slices.name[frame_rows].astype(np.int64)], axis=1)
            unique, inverse = unique_rows(key)
            chain[frame_rows] = next_id + inverse.reshape(-1)
            chain_parent.append(unique[:, 0])
            chain_name.append(unique[:, 1])
            next_id += len(unique)
    parents, names = np.concatenate(chain_parent), np.concatenate(chain_name)
    # The same stack can arise at different depths (non-frame slices in between): merge them.
    # Parents have smaller ids than their children, so one pass in id order suffices.
    canonical = np.zeros(len(parents), dtype=np.int64)
    seen: dict[tuple[int, int], int] = {}
    for cid in range(1, len(parents)):  # one step per distinct stack, not per event
        key = (int(canonical[parents[cid]]), int(names[cid]))
        canonical[cid] = seen.setdefault(key, cid)
    return canonical[chain], canonical[parents], names


def chain_frames(chain: int, chain_parent: np.ndarray, chain_name: np.ndarray) -> list[int]:
    """The frame names (string ids) of a chain, innermost first."""
    frames = []
    while chain > 0:
        frames.append(int(chain_name[chain]))
        chain = int(chain_parent[chain])
    return frames
