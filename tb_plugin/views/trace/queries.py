"""Trace viewer queries: tracks, windows of slices at a resolution, counters, one event, search.

The browser never receives the whole trace: ``slices`` answers a window at a resolution
(ns per pixel, a power of two) with the slices at least that long and busy blocks for the
rest, so a payload is bounded by pixels x rows whatever the trace size. Times cross the
wire in microseconds in the trace's own time base.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from ...model import intervals
from ...model.categories import SliceKinds
from ...model.float32 import value_as_written
from ...model.trace_index import query, resolution_for, trace_index
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..distributed.ranks import collective_call
from ..quantities.copies import copy_call
from ..quantities.devices import device_label, memory_device
from ..analyses.queues import TRACK_PREFIX as QUEUE_TRACK_PREFIX, queue_series, queue_tracks

MAX_WIDTH = 8192
SEARCH_PAGE = 100
# Counter tiles kept per model: the viewer asks for windows snapped to the resolution, so pans and
# zooms back and forth hit the same tiles.
COUNTER_TILE_CACHE = 512
_SLICE_TRACK = re.compile(r"^s(\d+)$")


def _us(ns: Any) -> float:
    return float(ns) / NS_PER_US


def _counter_tracks(model: TraceModel) -> list[dict[str, Any]]:
    """Counter tracks: GPU utilization from kernels, queue length per stream, memory per device, and the trace's own
    counters."""
    out: list[dict[str, Any]] = []
    kinds = SliceKinds(model)
    s = model.slices
    devices = sorted({int(d) for d in np.unique(s.device[kinds.kernel]) if d >= 0}) if kinds.kernel.any() else []
    for d in devices:
        label = device_label(model, d)
        lanes = [t.process_name for t in model.tracks if t.kind == "gpu" and t.device == d]
        out.append({"id": f"c:gpu_util:{d}", "name": f"{label} utilization", "kind": "counter",
                    "group": lanes[0] if lanes else label,  # beside the device's own lanes
                    "unit": "fraction", "max_depth": 0})
    out += queue_tracks(model)  # launched work waiting on each stream
    inst = model.instants
    mem = inst.total_allocated >= 0
    for dtype, did in sorted({(int(a), int(b)) for a, b in zip(inst.device_type[mem], inst.device_id[mem])}):
        label, _capacity = memory_device(model, dtype, did)
        out.append({"id": f"c:mem:{dtype}:{did}", "name": f"{label} memory", "kind": "counter", "group": "Memory",
                    "unit": "bytes", "series": ["allocated", "reserved"], "max_depth": 0})
    c = model.counters
    if len(c):
        keys = np.unique(np.stack([c.name.astype(np.int64), c.series.astype(np.int64)], axis=1), axis=0)
        for name, series in keys.tolist():
            out.append({"id": f"c:counter:{name}:{series}", "name": f"{model.strings[name]} · {model.strings[series]}",
                        "kind": "counter", "group": "Counters", "unit": "", "max_depth": 0})
    return out


def compute_tracks(model: TraceModel) -> dict[str, Any]:
    """The viewer's rows: slice tracks in display order, then counter tracks (``views/answers.tracks``: stored by
    the parser)."""
    ordered = sorted(model.tracks, key=lambda t: (t.kind == "gpu", t.process_sort, t.process_name, t.thread_sort,
                                                  t.thread_name, t.id))
    has_slices = np.bincount(model.slices.track, minlength=len(model.tracks)) > 0
    out = [
        {"id": f"s{t.id}", "name": t.thread_name, "kind": t.kind, "group": t.process_name,
         "max_depth": t.max_depth, "pid": t.pid, "tid": t.tid, "device": t.device}
        for t in ordered if has_slices[t.id]
    ]
    return {"start": _us(model.start), "end": _us(model.end), "tracks": out + _counter_tracks(model)}


def _window(model: TraceModel, start_us: Optional[float], end_us: Optional[float]) -> tuple[int, int]:
    t0 = model.start if start_us is None else int(round(start_us * NS_PER_US))
    t1 = model.end if end_us is None else int(round(end_us * NS_PER_US))
    if t1 <= t0:
        raise ValueError("end must be after start")
    return t0, t1


def slices(model: TraceModel, start_us: Optional[float], end_us: Optional[float], width: int,
           track_ids: Optional[list[str]]) -> dict[str, Any]:
    width = max(1, min(int(width), MAX_WIDTH))
    t0, t1 = _window(model, start_us, end_us)
    resolution = resolution_for(t0, t1, width)
    index = trace_index(model)
    wanted = _slice_track_ids(model, track_ids)
    lane_mask = np.isin(index.lanes_track, wanted)
    lanes = np.flatnonzero(lane_mask)
    result = query(index, lanes, t0, t1, resolution)
    s = model.slices
    is_slice = result.row >= 0
    rows = result.row[is_slice]
    names_used, name_index = np.unique(s.name[rows], return_inverse=True)
    track_of_item = index.lanes_track[result.lanes]
    depth_of_item = index.lanes_depth[result.lanes]
    out_tracks = []
    for track in wanted.tolist():
        on_track = track_of_item == track
        sl = on_track & is_slice
        bl = on_track & ~is_slice
        sl_pos = np.flatnonzero(sl[is_slice]) if is_slice.any() else np.zeros(0, dtype=np.int64)
        out_tracks.append({
            "id": f"s{track}",
            "slices": {
                "id": s.event_id[result.row[sl]].tolist(),
                "start": (result.start[sl] / NS_PER_US).tolist(),
                "dur": ((result.end[sl] - result.start[sl]) / NS_PER_US).tolist(),
                "depth": depth_of_item[sl].tolist(),
                "name": name_index.reshape(-1)[sl_pos].tolist(),
            },
            "blocks": {
                "start": (result.start[bl] / NS_PER_US).tolist(),
                "end": (result.end[bl] / NS_PER_US).tolist(),
                "depth": depth_of_item[bl].tolist(),
                "count": result.count[bl].tolist(),
            },
        })
    return {
        "start": _us(t0), "end": _us(t1), "resolution": resolution / NS_PER_US,
        "names": [model.strings[int(n)] for n in names_used],
        "tracks": out_tracks,
    }


def _slice_track_ids(model: TraceModel, track_ids: Optional[list[str]]) -> np.ndarray:
    if not track_ids:
        return np.array([t.id for t in model.tracks], dtype=np.int64)
    ids = []
    for text in track_ids:
        m = _SLICE_TRACK.match(text)
        if m and int(m.group(1)) < len(model.tracks):
            ids.append(int(m.group(1)))
    return np.array(sorted(set(ids)), dtype=np.int64)


Series = dict[str, tuple[np.ndarray, np.ndarray]]


def counters(model: TraceModel, start_us: Optional[float], end_us: Optional[float], width: int,
             track_ids: list[str], extra: Optional[Callable[[str], Optional[tuple[object, Series]]]] = None
             ) -> dict[str, Any]:
    """Counter tracks down-sampled to min/max per pixel bucket. ``extra``: the series of tracks from outside the
    trace (a memory snapshot's, ``snapshot_counters.py``) by id, with a token their tiles are cached under."""
    width = max(1, min(int(width), MAX_WIDTH))
    t0, t1 = _window(model, start_us, end_us)
    resolution = resolution_for(t0, t1, width)
    cache: dict[tuple[str, int, int, int, object], Any] = model.memo("counter_tiles", dict)
    out = []
    for track_id in track_ids:
        outside = extra(track_id) if extra is not None else None
        key = (track_id, t0, t1, resolution, outside[0] if outside is not None else None)
        tile = cache.get(key)
        if tile is None:
            series = outside[1] if outside is not None else counter_series(model, track_id)
            if series is None:
                continue
            tile = {"id": track_id, "series": {name: _downsample(ts, values, t0, t1, resolution)
                                               for name, (ts, values) in series.items()}}
            if len(cache) >= COUNTER_TILE_CACHE:
                cache.pop(next(iter(cache)))  # oldest first
            cache[key] = tile
        out.append(tile)
    return {"start": _us(t0), "end": _us(t1), "resolution": resolution / NS_PER_US, "tracks": out}


def counter_series(model: TraceModel, track_id: str) -> Optional[Series]:
    """The step functions of one of the trace's own counter tracks (``_counter_tracks``), None for another id."""
    parts = track_id.split(":")
    if parts[:2] == ["c", "gpu_util"] and len(parts) == 3 and parts[2].lstrip("-").isdigit():
        return {"utilization": gpu_utilization_steps(model, int(parts[2]))}
    if track_id.startswith(QUEUE_TRACK_PREFIX):
        return queue_series(model, track_id)
    if parts[:2] == ["c", "mem"] and len(parts) == 4 and all(p.lstrip("-").isdigit() for p in parts[2:]):
        inst = model.instants
        rows = (inst.device_type == int(parts[2])) & (inst.device_id == int(parts[3])) & (inst.total_allocated >= 0)
        order = np.argsort(inst.ts[rows], kind="stable")
        ts = inst.ts[rows][order]
        return {"allocated": (ts, inst.total_allocated[rows][order].astype(np.float64)),
                "reserved": (ts, inst.total_reserved[rows][order].astype(np.float64))}
    if parts[:2] == ["c", "counter"] and len(parts) == 4 and parts[2].isdigit() and parts[3].isdigit():
        c = model.counters
        rows = (c.name == int(parts[2])) & (c.series == int(parts[3]))
        order = np.argsort(c.ts[rows], kind="stable")
        return {"value": (c.ts[rows][order], c.value[rows][order])}
    return None


def gpu_utilization_steps(model: TraceModel, device: int) -> tuple[np.ndarray, np.ndarray]:
    """A step function: 1 while any kernel runs on the device, else 0 (points at each change)."""
    def compute() -> tuple[np.ndarray, np.ndarray]:
        kinds = SliceKinds(model)
        s = model.slices
        rows = kinds.kernel & (s.device == device)
        starts, ends = intervals.merge(s.start[rows], s.end_at(rows))
        ts = np.empty(2 * len(starts), dtype=np.int64)
        ts[0::2], ts[1::2] = starts, ends
        values = np.empty(2 * len(starts))
        values[0::2], values[1::2] = 1.0, 0.0
        return ts, values

    return model.memo(("gpu_util_steps", device), compute)


def _downsample(ts: np.ndarray, values: np.ndarray, t0: int, t1: int, resolution: int) -> dict[str, list[float]]:
    """Per bucket of ``resolution``: time-weighted mean, min and max of a step function."""
    if len(ts) == 0:
        return {"time": [], "mean": [], "min": [], "max": []}
    buckets = max(1, int(np.ceil((t1 - t0) / resolution)))
    edges = t0 + np.arange(buckets + 1, dtype=np.int64) * resolution
    # Value in force at each bucket start, then per-bucket min/max over the samples inside it.
    idx = np.searchsorted(ts, edges[:-1], side="right") - 1
    at_start = np.where(idx >= 0, values[np.maximum(idx, 0)], np.nan)
    lo = at_start.copy()
    hi = at_start.copy()
    inside = (ts >= t0) & (ts < t1)
    b = ((ts[inside] - t0) // resolution).astype(np.int64)
    v = values[inside]
    lo_fill = np.where(np.isnan(lo), np.inf, lo)
    hi_fill = np.where(np.isnan(hi), -np.inf, hi)
    np.minimum.at(lo_fill, b, v)
    np.maximum.at(hi_fill, b, v)
    # Time-weighted mean over each bucket of the step function.
    points_t = np.concatenate([edges[:-1], ts[inside]])
    points_v = np.concatenate([at_start, v])
    order = np.argsort(points_t, kind="stable")
    points_t, points_v = points_t[order], np.nan_to_num(points_v[order])
    seg_end = np.r_[points_t[1:], edges[-1]]
    seg_bucket = ((points_t - t0) // resolution).astype(np.int64)
    seg_end = np.minimum(seg_end, edges[seg_bucket + 1])
    weight = (seg_end - points_t).astype(np.float64)
    mean = np.bincount(seg_bucket, weights=points_v * weight, minlength=buckets) / resolution
    keep = np.isfinite(lo_fill) | np.isfinite(hi_fill)
    return {
        "time": (edges[:-1][keep] / NS_PER_US).tolist(),
        "mean": mean[keep].tolist(),
        "min": np.where(np.isfinite(lo_fill), lo_fill, 0.0)[keep].tolist(),
        "max": np.where(np.isfinite(hi_fill), hi_fill, 0.0)[keep].tolist(),
    }


def _row_of_event(model: TraceModel, event_id: int) -> int:
    ids = model.memo("event_id_order", lambda: np.argsort(model.slices.event_id, kind="stable"))
    sorted_ids = model.slices.event_id[ids]
    pos = int(np.searchsorted(sorted_ids, event_id))
    if pos >= len(ids) or sorted_ids[pos] != event_id:
        raise KeyError(event_id)
    return int(ids[pos])


def _brief(model: TraceModel, row: int) -> dict[str, Any]:
    s = model.slices
    return {"id": int(s.event_id[row]), "name": model.strings[int(s.name[row])], "track": f"s{int(s.track[row])}",
            "start": _us(s.start[row]), "dur": _us(s.dur[row]), "depth": int(s.depth[row])}


def event(model: TraceModel, event_id: int, full_text: bool = False) -> dict[str, Any]:
    """All the model knows of one slice: fields, known args, links, flows and ancestors. Its own name and argument
    texts are cut like every text of an answer (``interning.MAX_TEXT_CHARS``), unless ``full_text``."""
    row = _row_of_event(model, event_id)
    s = model.slices
    text = model.strings
    own_text = model.full_text if full_text else text.__getitem__

    def opt_string(value: int) -> Optional[str]:
        return own_text(value) if value >= 0 else None

    def opt_int(value: int) -> Optional[int]:
        return int(value) if value >= 0 else None

    def opt_float(value: np.floating) -> Optional[float]:
        return value_as_written(value) if np.isfinite(value) else None  # float32 columns, as the trace wrote them

    track = model.tracks[int(s.track[row])]
    args = {
        "External id": opt_int(s.external_id[row]), "correlation": opt_int(s.correlation[row]),
        "Input Dims": opt_string(s.input_dims[row]), "Input type": opt_string(s.input_type[row]),
        "Concrete Inputs": opt_string(s.concrete_inputs[row]),
        "Sequence number": opt_int(s.sequence[row]), "Python id": opt_int(s.python_id[row]),
        "Python parent id": opt_int(s.python_parent_id[row]), "device": opt_int(s.device[row]),
        "stream": opt_int(s.stream[row]), "grid": opt_string(s.grid[row]), "block": opt_string(s.block[row]),
        "blocks per SM": opt_float(s.blocks_per_sm[row]), "warps per SM": opt_float(s.warps_per_sm[row]),
        "est. achieved occupancy %": opt_float(s.occupancy[row]), "bytes": opt_int(s.nbytes[row]),
        "Collective name": opt_string(s.collective[row]), "In msg nelems": opt_int(s.in_msg_nelems[row]),
        "Out msg nelems": opt_int(s.out_msg_nelems[row]), "dtype": opt_string(s.dtype[row]),
        "Group size": opt_int(s.group_size[row]), "Process Group Name": opt_string(s.process_group[row]),
        "Seq": opt_int(s.collective_seq[row]),
    }
    stack = opt_string(s.call_stack[row])
    ancestors = []
    p = int(s.parent[row])
    while p >= 0 and len(ancestors) < 256:
        ancestors.append(_brief(model, p))
        p = int(s.parent[p])
    flows = model.flows
    touching = np.flatnonzero(((flows.src == row) | (flows.dst == row)) & (flows.src >= 0) & (flows.dst >= 0))
    out_flows = [
        {"cat": text[int(flows.cat[i])], "direction": "out" if flows.src[i] == row else "in",
         "other": _brief(model, int(flows.dst[i] if flows.src[i] == row else flows.src[i]))}
        for i in touching[:64].tolist()
    ]
    launcher = int(model.links.launcher[row])
    op = int(model.links.op[row])
    launched = np.flatnonzero(model.links.launcher == row)[:64]
    return {
        **_brief(model, row),
        "name": own_text(int(s.name[row])),
        "cat": own_text(int(s.cat[row])),
        "end": _us(s.end_at(row)),
        "thread": track.thread_name, "process": track.process_name, "kind": track.kind,
        "args": {k: v for k, v in args.items() if v is not None},
        "stack": stack.split(";") if stack else _python_frames_above(model, row),
        "ancestors": ancestors,
        "flows": out_flows,
        "launched_by": _brief(model, launcher) if launcher >= 0 else None,
        "operator": _brief(model, op) if op >= 0 else None,
        "launches": [_brief(model, int(r)) for r in launched],
        "bandwidth": copy_call(model, row) or collective_call(model, row),
    }


def _python_frames_above(model: TraceModel, row: int) -> list[str]:
    python = SliceKinds(model).python
    s = model.slices
    frames = []
    p = int(s.parent[row])
    while p >= 0 and len(frames) < 256:
        if python[p]:
            frames.append(model.strings[int(s.name[p])])
        p = int(s.parent[p])
    return frames


def search(model: TraceModel, q: str, offset: int = 0, limit: int = SEARCH_PAGE) -> dict[str, Any]:
    """Slices whose name contains ``q`` (case-insensitive), in time order, paged."""
    q = q.strip().lower()
    limit = max(1, min(limit, 1000))
    if not q:
        return {"query": q, "total": 0, "offset": offset, "matches": []}
    match = model.string_ids_where(lambda t: q in t.lower())
    s = model.slices
    rows = np.flatnonzero(match[s.name]) if len(s) else np.zeros(0, dtype=np.int64)
    rows = rows[np.argsort(s.start[rows], kind="stable")]
    page = rows[offset: offset + limit]
    return {"query": q, "total": int(len(rows)), "offset": offset, "matches": [_brief(model, int(r)) for r in page]}
