"""Duration events (``ph: B``/``E``) and async events (``ph: b``/``e``) → slices.

The Trace Event Format lets a writer give a slice as two events instead of one ``X``: a
``B`` where it begins and an ``E`` where it ends, on one thread (pid, tid). Such events must
nest on their thread, so an ``E`` closes the most recent ``B`` still open there; its own
name, category and args are not needed (they are optional in the format). Nestable async
events (``b``/``e``) work the same way, but per (pid, category, id) rather than per thread;
each such id becomes a track of its own here (``async <cat>:<id>``).

What cannot be paired is said, not hidden: a ``B`` still open at the end of the trace is
closed at the trace's last timestamp (counted as ``closed_at_end``), an ``E`` with nothing
open on its thread is dropped (``unmatched_ends``); the counts go to the parse stats
(``stats["begin_end"]``, ``stats["async"]``). Pairs keep the begin's name, category, pid and
tid; their arguments are not read (no External id, shapes or stacks).

How: ``collect`` runs inside the decoder, per chunk, only on chunks that have such events
(it keeps their times, names and threads as columns); ``pair`` runs once after the whole
document is decoded (a pair may straddle chunks) and appends the slices to the decoded
columns. Pairing is array arithmetic, O(n log n) in the number of B/E events, no loop per
event: per thread, the open depth is a running sum of +1/-1 reflected at zero (an ``E`` at
depth zero is an unmatched one), and a begin pairs with the next end that returns to its
depth (sorting by (thread, depth, time) puts them next to each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from ...model.raw_columns import RawColumns

# The phases handled here: B/E (per thread) and nestable async b/e (per category and id).
PHASES = frozenset({"B", "E", "b", "e"})
TABLE = "begin_end"
# Columns of TABLE that hold string ids (a merge of two decoded halves must renumber them).
STRING_COLUMNS = ("name", "cat", "pid", "tid")

_BEGIN, _END, _ASYNC_BEGIN, _ASYNC_END = range(4)
_KIND = {"B": _BEGIN, "E": _END, "b": _ASYNC_BEGIN, "e": _ASYNC_END}
_ASYNC_PREFIX = "async "

# Every slice column the decoder writes, with its dtype and "absent" value (chunk_reader.ChunkReader._read_slices).
_SLICE_DEFAULTS: dict[str, tuple[Any, Any]] = {
    "external_id": (np.int64, -1), "correlation": (np.int64, -1), "input_dims": (np.int32, -1),
    "input_type": (np.int32, -1), "concrete_inputs": (np.int32, -1), "call_stack": (np.int32, -1),
    "sequence": (np.int64, -1), "collective": (np.int32, -1), "in_msg_nelems": (np.int64, -1),
    "out_msg_nelems": (np.int64, -1),
    "dtype": (np.int32, -1), "group_size": (np.int32, -1), "process_group": (np.int32, -1),
    "collective_seq": (np.int64, -1), "python_id": (np.int64, -1),
    "python_parent_id": (np.int64, -1), "device": (np.int32, -1), "stream": (np.int64, -1),
    "grid": (np.int32, -1), "block": (np.int32, -1), "blocks_per_sm": (np.float32, np.nan),
    "warps_per_sm": (np.float32, np.nan), "occupancy": (np.float32, np.nan), "nbytes": (np.int64, -1),
}


@dataclass(frozen=True)
class _ThreadName:
    """The ``args`` of a ``thread_name`` metadata event (model.build reads ``.name``)."""

    name: str


def collect(out: RawColumns, events: Sequence[Any], phase_ids: np.ndarray, phases: Sequence[str],
            event_id: np.ndarray, names: np.ndarray, cats: np.ndarray, pids: np.ndarray, tids: np.ndarray,
            ts: np.ndarray) -> None:
    """Keep this chunk's B/E/b/e events (columns of one decoded chunk) for ``pair``."""
    kind_of_phase = np.array([_KIND.get(p, -1) for p in phases], dtype=np.int8)
    kind = kind_of_phase[phase_ids]
    rows = np.flatnonzero(kind >= 0)
    if len(rows) == 0:
        return
    kind = kind[rows]
    tid = tids[rows].astype(np.int32, copy=True)
    async_at = np.flatnonzero(kind >= _ASYNC_BEGIN)
    if len(async_at):  # an async id is a track of its own: a tid text per (category, id)
        strings = out.strings
        get_id = attrgetter("id")
        texts = strings.strings
        tid[async_at] = [
            strings[f"{_ASYNC_PREFIX}{texts[int(cats[r])]}:{get_id(events[r])}"] for r in rows[async_at].tolist()
        ]
    out.add(
        TABLE, event_id=event_id[rows], pid=pids[rows], tid=tid, ts=ts[rows], name=names[rows], cat=cats[rows],
        begins=(kind == _BEGIN) | (kind == _ASYNC_BEGIN), is_async=kind >= _ASYNC_BEGIN,
    )


def pair(out: RawColumns) -> None:
    """Turn the collected events into slices (appended to ``out``'s slice columns), in place."""
    if TABLE not in out.parts:
        return
    col = out.column
    event_id, pid, tid = col(TABLE, "event_id", np.int64), col(TABLE, "pid", np.int64), col(TABLE, "tid", np.int64)
    ts, name, cat = col(TABLE, "ts", np.int64), col(TABLE, "name", np.int32), col(TABLE, "cat", np.int32)
    begins, is_async = col(TABLE, "begins", bool), col(TABLE, "is_async", bool)
    del out.parts[TABLE]
    starts, ends, unclosed, unmatched_ends = _pair_on_tracks((pid << 32) | tid, ts, begins)  # rows in file order
    rows = np.concatenate([starts, unclosed])  # the begin of each slice gives its name, category and thread
    trace_end = _trace_end(out, ts) if len(unclosed) else 0
    end_ts = np.concatenate([ts[ends], np.full(len(unclosed), trace_end, dtype=np.int64)])
    closed_at_end = np.r_[np.zeros(len(starts), dtype=bool), np.ones(len(unclosed), dtype=bool)]
    _append_slices(out, event_id[rows], pid[rows].astype(np.int32), tid[rows].astype(np.int32), ts[rows],
                   np.maximum(end_ts - ts[rows], 0), name[rows], cat[rows])
    _add_async_thread_names(out, pid[rows][is_async[rows]], tid[rows][is_async[rows]])
    for key, mask in (("begin_end", ~is_async), ("async", is_async)):
        if mask.any():
            out.stats[key] = {
                "slices": int(np.count_nonzero(mask[rows])),
                "closed_at_end": int(np.count_nonzero(mask[rows] & closed_at_end)),
                "unmatched_ends": int(np.count_nonzero(mask[unmatched_ends])),
            }
    skipped = out.stats.get("skipped_phases", {})
    for phase in PHASES:
        skipped.pop(phase, None)


def _pair_on_tracks(track: np.ndarray, ts: np.ndarray,
                    begins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of (begin, end) pairs, of begins left open, and of ends with nothing open (input rows, in file order)."""
    empty = np.zeros(0, dtype=np.int64)
    n = len(track)
    if n == 0:
        return empty, empty, empty, empty
    # Per track in time order; equal times keep the file's order (an E then a B at one instant):
    # lexsort is stable and the rows come in file order.
    order = np.lexsort((ts, track))
    track_sorted = track[order]
    delta = np.where(begins[order], 1, -1).astype(np.int64)
    new_track = np.r_[True, track_sorted[1:] != track_sorted[:-1]]
    segment = np.cumsum(new_track) - 1
    first = np.flatnonzero(new_track)
    running = np.cumsum(delta)
    level = running - (running - delta)[first][segment]  # open count after each event, unreflected
    # Running minimum per track: shifting each track down by more than any level keeps
    # earlier tracks out of a later track's minimum.
    shift = segment * (2 * n + 2)
    lowest = np.minimum.accumulate(level - shift) + shift
    depth_after = level - np.minimum(lowest, 0)  # reflected at zero: an E at depth 0 closes nothing
    depth_before = np.where(new_track, 0, np.r_[0, depth_after[:-1]])
    is_begin = delta > 0
    matched_end = ~is_begin & (depth_before > 0)
    # A begin at depth d pairs with the next end on its track that comes back to depth d:
    # grouped by (track, depth) in time order, begins and ends alternate, an open begin last.
    pair_depth = np.where(is_begin, depth_before, depth_after)
    keep = np.flatnonzero(is_begin | matched_end)
    group_key = segment[keep] * (int(pair_depth.max(initial=0)) + 1) + pair_depth[keep]
    grouped = keep[np.argsort(group_key, kind="stable")]  # stable: time order within a group
    group_segment, group_depth, group_begin = segment[grouped], pair_depth[grouped], is_begin[grouped]
    next_in_group = np.r_[(group_segment[1:] == group_segment[:-1]) & (group_depth[1:] == group_depth[:-1]), False]
    paired = group_begin & next_in_group & np.r_[~group_begin[1:], False]
    starts = order[grouped[paired]]
    ends = order[grouped[np.flatnonzero(paired) + 1]]
    unclosed = order[grouped[group_begin & ~paired]]
    unmatched_ends = order[~is_begin & ~matched_end]
    return starts, ends, unclosed, unmatched_ends


def _trace_end(out: RawColumns, begin_end_ts: np.ndarray) -> int:
    """The last timestamp of the trace (ns): slice ends, instants, counters and B/E events."""
    store = out.parts
    candidates = [int(begin_end_ts.max())] if len(begin_end_ts) else []
    slices = store.get("slices", {})
    for start, dur in zip(slices.get("start", []), slices.get("dur", [])):
        if len(start):
            candidates.append(int((start + dur).max()))
    for table in ("instants", "counters"):
        candidates.extend(int(chunk.max()) for chunk in store.get(table, {}).get("ts", []) if len(chunk))
    return max(candidates) if candidates else 0


def _append_slices(out: RawColumns, event_id: np.ndarray, pid: np.ndarray, tid: np.ndarray, start: np.ndarray,
                   dur: np.ndarray, name: np.ndarray, cat: np.ndarray) -> None:
    """Add slices with the given columns; every other slice column gets its "absent" value."""
    n = len(event_id)
    if n == 0:
        return
    given = dict(event_id=event_id, pid=pid, tid=tid, start=start, dur=dur, name=name, cat=cat)
    store = out.parts.get("slices", {})
    columns: dict[str, np.ndarray] = {}
    # With X slices already decoded, match their columns exactly (dtype of each), else the decoder's set.
    keys = list(store) if store else list(given) + list(_SLICE_DEFAULTS)
    for key in keys:
        if key in given:
            columns[key] = given[key]
            continue
        known = _SLICE_DEFAULTS.get(key)
        chunks = store.get(key, [])
        dtype = chunks[0].dtype if chunks else known[0] if known else np.int64
        missing = known[1] if known else (np.nan if np.issubdtype(dtype, np.floating) else -1)
        columns[key] = np.full(n, missing, dtype=dtype)
    out.add("slices", **columns)


def _add_async_thread_names(out: RawColumns, pids: np.ndarray, tids: np.ndarray) -> None:
    """Name each async track after its category and id (the tid's text, without the prefix)."""
    if len(pids) == 0:
        return
    texts = out.strings.strings
    for pid, tid in np.unique(np.stack([pids, tids], axis=1), axis=0).tolist():
        out.meta_events.append(("thread_name", int(pid), int(tid), _ThreadName(texts[int(tid)])))
