"""The views of an allocator memory snapshot: pure functions from a ``SnapshotModel`` to JSON-able answers.

One definition of each quantity, from the model (``ingest/snapshot/build.py`` derives them): *active* bytes are the
live allocations' requested bytes from ``alloc`` to ``free_completed``; *allocated* bytes end at ``free_requested``;
*reserved* bytes are the segments the allocator holds. Every answer gives times on the snapshot's axis
(``axis``: µs since the epoch as torch records them, or the entry's number when the snapshot has no times) and
bytes as integers.

* ``overview``: per device, the peak, the totals at the end against those the snapshot's segments state, the
  out-of-memory events, the allocator settings, the largest allocation sites at the peak.
* ``timeline``: a window at a resolution (``width`` pixels): per pixel the highest and lowest active bytes and the
  live bytes of the largest allocation sites at the instant of the highest (a peak is never lost), reserved and
  allocated bytes, the ``oom``/``snapshot`` entries and ``record_function`` ranges in the window.
* ``at``: what is alive after one entry (by default the peak), grouped by site, stack, category, annotation,
  user metadata, compile context or stream, the largest allocations, and a flame graph of live bytes by stack.
* ``allocation``: one allocation's life and full stack; ``segments``: the allocator's state at a moment;
  ``compare``: two snapshots' live bytes at their peaks, by allocation site.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..model.snapshot import (
    ACTIONS, ALIVE_AT_END, BEFORE_HISTORY, BLOCK_STATES, CPP_FRAME, ENDED_BY_REUSE, FRAME_KINDS, FREED_BEFORE_HISTORY,
    FROM_SEGMENTS, OOM, OTHER_ACTION, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, SNAPSHOT, STACK_OF_FREE,
    USER_FRAME, SnapshotModel,
)
from ..model.trace_model import TraceModel

GROUP_BY = ("site", "stack", "category", "annotation", "user_metadata", "compile_context", "stream")
MAX_WIDTH = 8000
BANDS = 16  # sites drawn as bands of their own in a timeline answer
GROUP_LIMIT = 200
LARGEST = 50
TOP_FRAMES = 6
FLAME_MIN_SHARE = 0.001
MAX_SEGMENTS = 2000
MAX_BLOCKS = 20000
_FLAGS = ((BEFORE_HISTORY, "before_history"), (ALIVE_AT_END, "alive_at_end"), (ENDED_BY_REUSE, "ended_by_reuse"),
          (FROM_SEGMENTS, "from_segments"), (STACK_OF_FREE, "stack_of_free"),
          (FREED_BEFORE_HISTORY, "freed_before_history"))
NO_STACK = "(no stack recorded)"


class SnapshotQueryError(ValueError):
    """A request this snapshot cannot answer (unknown device, row, allocation); the route answers 400."""


def trace_offset_us(model: SnapshotModel, trace: TraceModel) -> Optional[float]:
    """What to add to the snapshot's times to put them on the trace's time base (µs), when both keep a wall clock:
    the snapshot's µs since the epoch, the trace's ``baseTimeNanoseconds``; else None. The one shift the Memory
    snapshot page's chart beside the profile and the trace viewer's snapshot counters both use."""
    base = trace.metadata.get("baseTimeNanoseconds")
    if model.header.get("axis") == "time_us" and isinstance(base, int) and not isinstance(base, bool):
        return -base / 1000.0
    return None


# --- devices, rows, frames ---------------------------------------------------------------------------------


def device_facts(model: SnapshotModel, device: Optional[int] = None) -> dict[str, Any]:
    """A device's facts (``build.py``); by default the device with the most entries."""
    devices = model.devices
    if not devices:
        raise SnapshotQueryError("the snapshot holds no device with trace entries or segments")
    if device is None:
        return max(devices, key=lambda d: (d["entries"], d["segments"], -d["device"]))
    found = model.device(device)
    if found is None:
        raise SnapshotQueryError(f"the snapshot has no device {device} (it has {', '.join(str(d['device']) for d in devices)})")
    return found


def _row_at(model: SnapshotModel, facts: dict[str, Any], row: Optional[int], time: Optional[float]) -> int:
    """The entry row a request names: ``row`` itself, else the last entry at or before ``time``, else the peak.
    -1 (or ``lo - 1``) is the start, before the first entry."""
    lo, hi = facts["rows"]
    if row is not None:
        if not (row == -1 or lo <= row < hi):
            raise SnapshotQueryError(f"row must be -1 or between {lo} and {hi - 1} for device {facts['device']}")
        return row
    if time is not None:
        index = lo + int(np.searchsorted(model.entries.time[lo:hi], time, "right")) - 1
        return index if index >= lo else -1
    return int(facts["peak"]["row"])


def _time_of(model: SnapshotModel, facts: dict[str, Any], row: int) -> int:
    return int(model.entries.time[row]) if row >= 0 else int(facts["start"])


def _totals_after(model: SnapshotModel, facts: dict[str, Any], row: int) -> dict[str, int]:
    if row < 0:
        return dict(facts["baseline"])
    e = model.entries
    return {"active": int(e.active[row]), "allocated": int(e.allocated[row]), "reserved": int(e.reserved[row])}


def frame_json(model: SnapshotModel, frame: int) -> dict[str, Any]:
    f = model.frames
    if frame < 0 or frame >= len(f):
        return {"file": None, "line": None, "name": None, "kind": "cpp"}
    line = int(f.line[frame])
    return {"file": model.text(int(f.file[frame])), "line": line if line >= 0 else None,
            "name": model.text(int(f.name[frame])), "kind": FRAME_KINDS[int(f.kind[frame])]}


def stack_frames(model: SnapshotModel, stack: int) -> list[int]:
    if stack < 0:
        return []
    s = model.stacks
    return s.frames[int(s.offsets[stack]):int(s.offsets[stack + 1])].tolist()


def top_frames(model: SnapshotModel, stack: int, limit: int = TOP_FRAMES) -> list[dict[str, Any]]:
    """A stack's frames, user code first (innermost first), then other Python frames, then C++ frames."""
    frames = stack_frames(model, stack)
    kinds = model.frames.kind
    ordered = ([f for f in frames if f >= 0 and kinds[f] == USER_FRAME]
               + [f for f in frames if f >= 0 and kinds[f] != USER_FRAME and kinds[f] != CPP_FRAME]
               + [f for f in frames if f < 0 or kinds[f] == CPP_FRAME])
    return [frame_json(model, f) for f in ordered[:limit]]


def site_label(model: SnapshotModel, site: int) -> str:
    if site < 0:
        return NO_STACK
    frame = frame_json(model, site)
    name = frame["name"] or "?"
    if frame["kind"] == "cpp":
        return name
    file = (frame["file"] or "?").replace("\\", "/").rsplit("/", 1)[-1]
    return f"{file}:{frame['line']} {name}" if frame["line"] is not None else f"{file} {name}"


def site_key(model: SnapshotModel, site: int) -> str:
    """A site's identity across snapshots (file, line and function), for ``compare``."""
    if site < 0:
        return NO_STACK
    frame = frame_json(model, site)
    return f"{frame['file']}:{frame['line']}:{frame['name']}"


def _flags(value: int) -> list[str]:
    return [name for bit, name in _FLAGS if value & bit]


# --- overview ------------------------------------------------------------------------------------------------


def _oom_events(model: SnapshotModel, limit: int = 50) -> list[dict[str, Any]]:
    e = model.entries
    rows = np.flatnonzero(e.action == OOM)[:limit]
    out = []
    for row in rows.tolist():
        device = int(e.device[row])
        facts = model.device(device) or device_facts(model)
        before = _totals_after(model, facts, row - 1 if row - 1 >= facts["rows"][0] else -1)
        stack = int(e.stack[row])
        out.append({
            "device": device, "row": row, "time": int(e.time[row]), "requested": int(e.size[row]),
            "device_free": int(e.addr[row]), "stream": int(e.stream[row]),
            "active": before["active"], "allocated": before["allocated"], "reserved": before["reserved"],
            "site": site_label(model, int(model.stacks.site[stack]) if stack >= 0 else -1),
            "frames": top_frames(model, stack, 12),
        })
    return out


def overview(model: SnapshotModel) -> dict[str, Any]:
    """What the snapshot says as a whole (see the module docstring)."""
    default = device_facts(model) if model.devices else None
    e = model.entries
    devices = []
    for facts in model.devices:
        lo, hi = facts["rows"]
        actions = np.bincount(e.action[lo:hi], minlength=256) if hi > lo else np.zeros(256, dtype=np.int64)
        devices.append({
            "device": facts["device"], "entries": facts["entries"], "allocations": facts["allocations"],
            "segments": facts["segments"], "start": facts["start"], "end": facts["end"], "peak": facts["peak"],
            "reserved_peak": facts["reserved_peak"], "at_start": facts["baseline"], "at_end": facts["at_end"],
            "stated": facts["stated"],
            "actions": {name: int(actions[code]) for code, name in enumerate(ACTIONS) if actions[code]}
            | ({"other": int(actions[OTHER_ACTION])} if actions[OTHER_ACTION] else {}),
        })
    peak_groups: list[dict[str, Any]] = []
    if default is not None:
        peak_groups = at(model, default["device"], group_by="site", limit=10, flame=False)["groups"]
    return {
        "axis": model.header["axis"],
        "reserved_known": bool(model.header.get("reserved_known", True)),
        "devices": devices,
        "default_device": default["device"] if default else None,
        "allocator_settings": model.header.get("allocator_settings"),
        "oom": _oom_events(model),
        "annotations": int(len(model.annotations)),
        "notes": list(model.header.get("notes", [])),
        "peak_sites": peak_groups,
    }


def peak_summary(model: SnapshotModel, name: str, top: int = 10) -> dict[str, Any]:
    """What the HTML report and ``profscope summary`` say of a span's snapshot: the default device's peak (µs after
    the snapshot's first entry, or its entry number), the largest allocation sites alive then, and the OOM count."""
    facts = device_facts(model)
    groups = at(model, facts["device"], group_by="site", limit=top, flame=False)
    return {
        "snapshot": name, "axis": model.header["axis"], "device": facts["device"], "peak": facts["peak"]["bytes"],
        "peak_after": facts["peak"]["time"] - facts["start"], "reserved_peak": facts["reserved_peak"]
        if model.header.get("reserved_known", True) else None,
        "oom": int((model.entries.action == OOM).sum()),
        "sites": [{"label": g["label"], "bytes": g["bytes"], "count": g["count"], "share": g["share"]}
                  for g in groups["groups"]],
    }


# --- timeline ------------------------------------------------------------------------------------------------


def _bin_rows(time: np.ndarray, lo: int, start: float, end: float, width: int) -> np.ndarray:
    """Row bounds of each pixel: pixel i holds the rows [r[i], r[i + 1]) whose time lies in it."""
    edges = start + (end - start) * np.arange(width + 1, dtype=np.float64) / width
    bounds = lo + np.searchsorted(time, edges, "left").astype(np.int64)
    bounds[-1] = lo + int(np.searchsorted(time, end, "right"))  # the last pixel holds an entry at the window's end
    return bounds


def timeline(model: SnapshotModel, device: Optional[int] = None, start: Optional[float] = None,
             end: Optional[float] = None, width: int = 1000) -> dict[str, Any]:
    """Active memory over a window at ``width`` pixels (see the module docstring)."""
    facts = device_facts(model, device)
    lo, hi = facts["rows"]
    if not 1 <= width <= MAX_WIDTH:
        raise SnapshotQueryError(f"width must be between 1 and {MAX_WIDTH}")
    span_start, span_end = float(facts["start"]), float(max(facts["end"], facts["start"] + 1))
    start = span_start if start is None else float(start)
    end = span_end if end is None else float(end)
    if not end > start:
        raise SnapshotQueryError("end must be after start")
    e = model.entries
    time = e.time[lo:hi]
    bounds = _bin_rows(time, lo, start, end, width)
    first, after = bounds[:-1], bounds[1:]
    entering = first - 1  # the state a pixel starts in: after the last row before it (or the start)
    active = e.active
    base = facts["baseline"]

    def after_row(column: np.ndarray, rows: np.ndarray, baseline: int) -> np.ndarray:
        return np.where(rows >= lo, column[np.maximum(rows, 0)], baseline)

    enter_active = after_row(active, entering, base["active"])
    high = enter_active.copy()
    low = enter_active.copy()
    sample = entering.copy()  # the row whose state is the pixel's highest
    busy = np.flatnonzero(after > first)
    if len(busy):
        # Busy pixels are consecutive in rows (the empty ones between hold none), so each reduce runs from a pixel's
        # first row to the next busy pixel's first row, that is to its own end; the last one ends at its own end too.
        window = active[:int(after[busy[-1]])]
        seg_max = np.maximum.reduceat(window, first[busy])
        seg_min = np.minimum.reduceat(window, first[busy])
        higher = seg_max > high[busy]
        high[busy] = np.maximum(high[busy], seg_max)
        low[busy] = np.minimum(low[busy], seg_min)
        # The first row of each busy pixel that reaches its maximum.
        for_max = busy[higher]
        if len(for_max):
            counts = (after[for_max] - first[for_max])
            rows = np.repeat(first[for_max], counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                                                            counts))
            hits = active[rows] == np.repeat(high[for_max], counts)
            owner = np.repeat(np.arange(len(for_max)), counts)
            firsts = np.full(len(for_max), -1, dtype=np.int64)
            hit_owner, hit_first = np.unique(owner[hits], return_index=True)
            firsts[hit_owner] = rows[hits][hit_first]
            sample[for_max] = firsts
    reserved = after_row(e.reserved, sample, base["reserved"])
    allocated = after_row(e.allocated, sample, base["allocated"])

    # Bands: the live bytes of the largest sites at each pixel's sample.
    series = model.site_series
    mine = np.flatnonzero(series.device == facts["device"])
    bands = []
    for index in mine.tolist():
        a, b = int(series.offsets[index]), int(series.offsets[index + 1])
        position, value = series.position[a:b], series.value[a:b]
        at_sample = np.searchsorted(position, sample, "right") - 1
        values = np.where(at_sample >= 0, value[np.maximum(at_sample, 0)], 0)
        if values.any():
            bands.append((int(values.max()), int(series.site[index]), values))
    bands.sort(key=lambda item: -item[0])
    shown = bands[:BANDS]
    other = high - (np.sum([v for _, _, v in shown], axis=0) if shown else 0)

    markers = []
    window = slice(int(bounds[0]), int(bounds[-1]))
    marked = window.start + np.flatnonzero(np.isin(e.action[window], (OOM, SNAPSHOT)))
    for row in marked[:200].tolist():
        action = int(e.action[row])
        marker = {"row": row, "time": int(e.time[row]), "action": ACTIONS[action], "size": int(e.size[row])}
        if action == OOM:
            marker["device_free"] = int(e.addr[row])
        markers.append(marker)
    return {
        "device": facts["device"], "axis": model.header["axis"], "start": start, "end": end, "width": width,
        "span": {"start": span_start, "end": span_end}, "resolution": (end - start) / width,
        "time": (start + (end - start) * np.arange(width) / width).tolist(),
        "active_max": high.tolist(), "active_min": low.tolist(), "allocated": allocated.tolist(),
        "reserved": reserved.tolist(), "sample_row": sample.tolist(),
        "sites": [{"site": site, "label": site_label(model, site), "frame": frame_json(model, site) if site >= 0
                   else None, "max": peak} for peak, site, _ in shown],
        "bands": [values.tolist() for _, _, values in shown],
        "other": np.maximum(other, 0).tolist(),
        "peak": facts["peak"], "reserved_peak": facts["reserved_peak"],
        "markers": markers, "annotations": _annotation_ranges(model, facts["device"], start, end),
    }


def annotation_ranges(model: SnapshotModel, device: int) -> dict[str, np.ndarray]:
    """``record_function`` ranges of a device from the START/END annotations: each END closes the latest open START
    of the same name (a START left open ends at the device's last entry). Memoised."""

    def compute() -> dict[str, np.ndarray]:
        a = model.annotations
        rows = np.flatnonzero(a.device == device)
        rows = rows[np.argsort(a.time[rows], kind="stable")]
        starts: list[int] = []
        ends: list[int] = []
        names: list[int] = []
        depth: list[int] = []
        open_by_name: dict[int, list[int]] = {}
        open_count = 0
        stage_text = {i: (model.text(i) or "").upper() for i in set(a.stage[rows].tolist())}
        facts = model.device(device)
        last = facts["end"] if facts else 0
        for row in rows.tolist():
            name, stage = int(a.name[row]), stage_text[int(a.stage[row])]
            if stage == "START":
                open_by_name.setdefault(name, []).append(len(starts))
                starts.append(int(a.time[row]))
                ends.append(-1)
                names.append(name)
                depth.append(open_count)
                open_count += 1
            elif stage == "END" and open_by_name.get(name):
                ends[open_by_name[name].pop()] = int(a.time[row])
                open_count = max(open_count - 1, 0)
        end = np.asarray(ends, dtype=np.int64)
        end[end < 0] = max(last, max(starts, default=0))
        return {"start": np.asarray(starts, dtype=np.int64), "end": end, "name": np.asarray(names, dtype=np.int64),
                "depth": np.asarray(depth, dtype=np.int64)}

    return model.memo(("annotation_ranges", device), compute)


def _annotation_ranges(model: SnapshotModel, device: int, start: float, end: float,
                       limit: int = 400) -> list[dict[str, Any]]:
    ranges = annotation_ranges(model, device)
    inside = np.flatnonzero((ranges["end"] >= start) & (ranges["start"] <= end))
    if len(inside) > limit:  # the longest ones
        inside = inside[np.argsort(-(ranges["end"][inside] - ranges["start"][inside]), kind="stable")[:limit]]
        inside.sort()
    return [{"name": model.text(int(ranges["name"][i])), "start": int(ranges["start"][i]),
             "end": int(ranges["end"][i]), "depth": int(ranges["depth"][i])} for i in inside.tolist()]


def _annotation_of_allocations(model: SnapshotModel, device: int) -> np.ndarray:
    """Per allocation of the model, the innermost ``record_function`` range open when it was allocated (a string id,
    -1 for none; -2 for an allocation from before the recorded history). Memoised per device."""

    def compute() -> np.ndarray:
        al = model.allocs
        out = np.full(len(al), -1, dtype=np.int64)
        ranges = annotation_ranges(model, device)
        mine = al.device == device
        out[mine & (al.start < 0)] = -2
        rows = np.flatnonzero(mine & (al.start >= 0))
        if not len(ranges["start"]) or not len(rows):
            return out
        times = model.entries.time[al.start[rows]]
        # Nested ranges: the innermost open one at time t is the latest started whose end is at or after t.
        order = np.argsort(ranges["start"], kind="stable")
        starts, ends, names = ranges["start"][order], ranges["end"][order], ranges["name"][order]
        candidate = np.searchsorted(starts, times, "right") - 1
        found = np.full(len(rows), -1, dtype=np.int64)
        pending = np.flatnonzero(candidate >= 0)
        # Walk back over ranges that ended before t (a few steps: ranges nest shallowly).
        for _ in range(64):
            if not len(pending):
                break
            c = candidate[pending]
            ok = ends[c] >= times[pending]
            found[pending[ok]] = names[c[ok]]
            pending = pending[~ok]
            candidate[pending] -= 1
            pending = pending[candidate[pending] >= 0]
        out[rows] = found
        return out

    return model.memo(("allocation_annotations", device), compute)


# --- at a moment -----------------------------------------------------------------------------------------------


def alive_at(model: SnapshotModel, device: int, row: int) -> np.ndarray:
    """Rows of the allocations of ``device`` alive after entry ``row`` (-1: at the start)."""
    al = model.allocs
    started = al.start <= row if row >= 0 else al.start < 0
    return np.flatnonzero((al.device == device) & started & ((al.end < 0) | (al.end > row)))


def _group_keys(model: SnapshotModel, device: int, rows: np.ndarray, group_by: str) -> np.ndarray:
    al = model.allocs
    if group_by == "site":
        return al.site[rows].astype(np.int64)
    if group_by == "stack":
        return al.stack[rows].astype(np.int64)
    if group_by == "category":
        return al.category[rows].astype(np.int64)
    if group_by == "annotation":
        return _annotation_of_allocations(model, device)[rows]
    if group_by in ("user_metadata", "compile_context"):
        column = getattr(model.entries, group_by)
        source = np.where(al.start[rows] >= 0, al.start[rows], al.end[rows])
        return np.where(source >= 0, column[np.maximum(source, 0)], -1).astype(np.int64)
    if group_by == "stream":
        return al.stream[rows].astype(np.int64)
    raise SnapshotQueryError(f"group_by must be one of {', '.join(GROUP_BY)}")


def _group_label(model: SnapshotModel, group_by: str, key: int) -> str:
    if group_by == "site":
        return site_label(model, key)
    if group_by == "stack":
        return site_label(model, int(model.stacks.site[key])) if key >= 0 else NO_STACK
    if group_by == "stream":
        return f"stream {key}"
    if group_by == "annotation" and key == -2:
        return "(allocated before the recorded history)"
    if key < 0:
        return {"category": "(no category)", "annotation": "(no record_function range)"}.get(
            group_by, "(none)")
    return model.text(key) or ""


def at(model: SnapshotModel, device: Optional[int] = None, row: Optional[int] = None, time: Optional[float] = None,
       group_by: str = "site", limit: int = GROUP_LIMIT, flame: bool = True, site: Optional[int] = None) -> dict[str, Any]:
    """What is alive after one entry (see the module docstring); ``site``: the largest allocations listed are that
    site's (a click on a band of the timeline pins its largest)."""
    if group_by not in GROUP_BY:
        raise SnapshotQueryError(f"group_by must be one of {', '.join(GROUP_BY)}")
    facts = device_facts(model, device)
    row = _row_at(model, facts, row, time)
    dev = facts["device"]
    alive = model.memo(("alive", dev, row), lambda: alive_at(model, dev, row))
    al = model.allocs
    size = al.size[alive]
    total = int(size.sum())
    keys = _group_keys(model, dev, alive, group_by)
    groups: list[dict[str, Any]] = []
    if len(alive):
        unique, inverse = np.unique(keys, return_inverse=True)
        sums = np.bincount(inverse, weights=size.astype(np.float64))
        counts = np.bincount(inverse)
        largest = np.zeros(len(unique), dtype=np.int64)
        np.maximum.at(largest, inverse, size)
        # A representative stack per group: its largest allocation's.
        order = np.lexsort((-size, inverse))
        first_of = order[np.r_[True, inverse[order][1:] != inverse[order][:-1]]]
        for g in np.argsort(-sums, kind="stable")[:limit].tolist():
            key = int(unique[g])
            stack = int(al.stack[alive[first_of[g]]])
            groups.append({
                "key": key, "label": _group_label(model, group_by, key), "bytes": int(round(sums[g])),
                "count": int(counts[g]), "share": float(sums[g] / total) if total else 0.0,
                "largest": int(largest[g]), "frames": top_frames(model, stack),
            })
    pool, pool_size = (alive, size) if site is None else (alive[al.site[alive] == site], size[al.site[alive] == site])
    biggest = pool[np.argsort(-pool_size, kind="stable")[:LARGEST]] if len(pool) else pool
    answer = {
        "device": dev, "axis": model.header["axis"], "row": row, "time": _time_of(model, facts, row),
        "is_peak": row == facts["peak"]["row"], "totals": _totals_after(model, facts, row), "live_bytes": total,
        "count": int(len(alive)), "group_by": group_by, "groups": groups,
        "groups_total": int(len(np.unique(keys))) if len(alive) else 0,
        "largest": [allocation_row(model, int(i)) for i in biggest.tolist()], "site": site,
    }
    if flame:
        answer["flamegraph"] = flamegraph(model, alive)
    return answer


def allocation_row(model: SnapshotModel, index: int) -> dict[str, Any]:
    al = model.allocs
    e = model.entries
    facts = model.device(int(al.device[index])) or device_facts(model)
    start, end, freed = int(al.start[index]), int(al.end[index]), int(al.freed[index])
    site = int(al.site[index])
    return {
        "id": index, "device": int(al.device[index]), "addr": int(al.addr[index]), "size": int(al.size[index]),
        "stream": int(al.stream[index]), "site": site, "label": site_label(model, site),
        "start": int(e.time[start]) if start >= 0 else None, "end": int(e.time[end]) if end >= 0 else None,
        "freed": int(e.time[freed]) if freed >= 0 else None, "start_row": start, "end_row": end,
        "span_start": facts["start"], "span_end": facts["end"], "flags": _flags(int(al.flags[index])),
    }


def allocation(model: SnapshotModel, index: int) -> dict[str, Any]:
    """One allocation: its life, where it was allocated (every frame) and what it is."""
    al = model.allocs
    if not 0 <= index < len(al):
        raise SnapshotQueryError(f"no allocation {index}")
    row = allocation_row(model, index)
    stack = int(al.stack[index])
    category = int(al.category[index])
    source = row["start_row"] if row["start_row"] >= 0 else row["end_row"]
    e = model.entries
    row.update({
        "category": model.text(category) if category >= 0 else None,
        "user_metadata": model.text(int(e.user_metadata[source])) if source >= 0 else None,
        "compile_context": model.text(int(e.compile_context[source])) if source >= 0 else None,
        "annotation": _group_label(model, "annotation",
                                   int(_annotation_of_allocations(model, row["device"])[index])),
        "frames": [frame_json(model, f) for f in stack_frames(model, stack)],
    })
    return row


def flamegraph(model: SnapshotModel, alive: np.ndarray, min_share: float = FLAME_MIN_SHARE) -> dict[str, Any]:
    """Live bytes by stack as a call tree (root first: outermost frame at the top), in the flame graph's columnar
    shape (``views/stacks.flamegraph``), values in bytes. Stacks holding under ``min_share`` of the total are one
    node, "(smaller stacks)", under the root, so that the root's children add up to the total."""
    al = model.allocs
    stacks = al.stack[alive]
    sizes = al.size[alive].astype(np.float64)
    total = float(sizes.sum())
    parent, name, self_b, total_b, calls = [-1], [-1], [0.0], [total], [int(len(alive))]
    children: dict[tuple[int, int], int] = {}
    if len(alive):
        unique, inverse = np.unique(stacks, return_inverse=True)
        by_stack = np.bincount(inverse, weights=sizes)
        count_by_stack = np.bincount(inverse)
        small = by_stack < min_share * total
        for stack, value, count, is_small in zip(unique.tolist(), by_stack.tolist(), count_by_stack.tolist(),
                                                 small.tolist()):
            node = 0
            path = [-3] if is_small else reversed(stack_frames(model, stack)) if stack >= 0 else [-2]
            for frame in path:
                child = children.get((node, frame))
                if child is None:
                    child = children[(node, frame)] = len(parent)
                    parent.append(node)
                    name.append(frame)
                    self_b.append(0.0)
                    total_b.append(0.0)
                    calls.append(0)
                total_b[child] += value
                calls[child] += count
                node = child
            self_b[node] += value
    names: list[str] = []
    index_of: dict[int, int] = {}
    name_index = []
    for frame in name:
        if frame not in index_of:
            index_of[frame] = len(names)
            if frame == -1:
                names.append("all")
            elif frame == -2:
                names.append(NO_STACK)
            elif frame == -3:
                names.append("(smaller stacks)")
            else:
                f = frame_json(model, frame)
                label = f["name"] or "?"
                names.append(label if f["kind"] == "cpp" else f"{label} ({(f['file'] or '?').rsplit('/', 1)[-1]}:{f['line']})")
        name_index.append(index_of[frame])
    return {"unit": "bytes", "total": total, "names": names,
            "nodes": {"parent": parent, "name": name_index, "self": self_b, "total": total_b, "calls": calls}}


# --- allocator state ----------------------------------------------------------------------------------------------


def _round_block(size: np.ndarray) -> np.ndarray:
    """The allocator's rounding of a request without ``roundup_power2_divisions``: at least 512, multiples of 512."""
    return np.maximum(512, -(-size // 512) * 512)


def segments(model: SnapshotModel, device: Optional[int] = None, row: Optional[int] = None,
             time: Optional[float] = None) -> dict[str, Any]:
    """The allocator's segments and blocks at a moment, and its fragmentation: free bytes inside reserved segments
    and the largest free block. At the snapshot's end (the default) as the snapshot states them; at an earlier
    moment rebuilt from the history (segments from their ``segment_*`` entries, blocks from the live allocations,
    their sizes rounded as the allocator rounds), and said so (``exact``)."""
    facts = device_facts(model, device)
    lo, hi = facts["rows"]
    dev = facts["device"]
    end_row = hi - 1 if hi > lo else -1
    if row is None and time is None:
        row = end_row
    else:
        row = _row_at(model, facts, row, time)
    seg, blk = model.segments, model.blocks
    if row == end_row:
        rows = np.flatnonzero(seg.device == dev)
        segments_out = []
        blocks_out = []
        free_blocks = []
        for s in rows[:MAX_SEGMENTS].tolist():
            first = int(seg.first_block[s])
            last = int(seg.first_block[s + 1]) if s + 1 < len(seg) else len(blk)
            segments_out.append({
                "address": int(seg.address[s]), "size": int(seg.total_size[s]), "stream": int(seg.stream[s]),
                "allocated": int(seg.allocated_size[s]), "active": int(seg.active_size[s]),
                "requested": int(seg.requested_size[s]), "large": bool(seg.is_large[s]),
                "expandable": bool(seg.is_expandable[s]), "blocks": last - first,
            })
            for b in range(first, last):
                state = int(blk.state[b])
                if state == 2:
                    free_blocks.append(int(blk.size[b]))
                if len(blocks_out) < MAX_BLOCKS:
                    blocks_out.append({"segment": len(segments_out) - 1, "address": int(blk.address[b]),
                                       "size": int(blk.size[b]), "requested": int(blk.requested_size[b]),
                                       "state": BLOCK_STATES[state], "stack": int(blk.stack[b]),
                                       "label": site_label(model, int(model.stacks.site[int(blk.stack[b])]))
                                       if blk.stack[b] >= 0 else NO_STACK})
        mine_blocks = np.isin(blk.segment, rows)
        reserved = int(seg.total_size[rows].sum())
        active_blocks = mine_blocks & (blk.state < 2)
        free_external = int(blk.size[mine_blocks & (blk.state == 2)].sum())
        free_internal = int((blk.size[active_blocks] - blk.requested_size[active_blocks]).sum())
        return {
            "device": dev, "row": row, "time": _time_of(model, facts, row), "exact": True,
            "reserved": reserved, "allocated": int(seg.allocated_size[rows].sum()),
            "active": int(seg.active_size[rows].sum()), "requested": int(seg.requested_size[rows].sum()),
            "free": free_external, "free_in_blocks": free_internal,
            "largest_free": max(free_blocks, default=0),
            "fragmentation": free_external / reserved if reserved else 0.0,
            "segments": segments_out, "blocks": blocks_out, "truncated": len(rows) > MAX_SEGMENTS,
            "allocator_settings": model.header.get("allocator_settings"),
        }
    return _segments_rebuilt(model, facts, row)


def _segments_rebuilt(model: SnapshotModel, facts: dict[str, Any], row: int) -> dict[str, Any]:
    e, seg = model.entries, model.segments
    lo, hi = facts["rows"]
    dev = facts["device"]
    # Segment ranges alive after `row`: those the snapshot holds at the end, undone back to `row` (a segment
    # allocated after `row` removed, one freed after `row` put back), as memory_viz replays them.
    ranges: dict[int, list[int]] = {}  # address -> [size, stream]
    for s in np.flatnonzero(seg.device == dev).tolist():
        ranges[int(seg.address[s])] = [int(seg.total_size[s]), int(seg.stream[s])]
    later = np.arange(max(row + 1, lo), hi)
    kinds = e.action[later]
    for r in later[np.isin(kinds, (SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP))][::-1].tolist():
        action, addr, size = int(e.action[r]), int(e.addr[r]), int(e.size[r])
        if action in (SEGMENT_ALLOC, SEGMENT_MAP):
            _unmap(ranges, addr, size)
        else:
            _map(ranges, addr, size, int(e.stream[r]))
    starts = np.asarray(sorted(ranges), dtype=np.int64)
    sizes = np.asarray([ranges[a][0] for a in starts.tolist()], dtype=np.int64)
    alive = alive_at(model, dev, row)
    al = model.allocs
    addr = al.addr[alive]
    rounded = _round_block(al.size[alive])
    owner = np.searchsorted(starts, addr, "right") - 1
    inside = (owner >= 0) & (addr < starts[np.maximum(owner, 0)] + sizes[np.maximum(owner, 0)]) if len(starts) \
        else np.zeros(len(addr), dtype=bool)
    used = np.bincount(owner[inside], weights=rounded[inside], minlength=len(starts)).astype(np.int64) \
        if len(starts) else np.zeros(0, dtype=np.int64)
    largest_free = 0
    order = np.lexsort((addr[inside], owner[inside]))
    o_owner, o_addr, o_size = owner[inside][order], addr[inside][order], rounded[inside][order]
    for s in range(len(starts)):
        a, b = np.searchsorted(o_owner, s, "left"), np.searchsorted(o_owner, s, "right")
        edges_start = np.r_[starts[s], o_addr[a:b] + o_size[a:b]]
        edges_end = np.r_[o_addr[a:b], starts[s] + sizes[s]]
        gaps = edges_end - edges_start
        largest_free = max(largest_free, int(gaps.max()) if len(gaps) else 0)
    reserved = int(sizes.sum())
    totals = _totals_after(model, facts, row)
    free = max(reserved - int(used.sum()), 0)
    return {
        "device": dev, "row": row, "time": _time_of(model, facts, row), "exact": False,
        "note": "rebuilt from the history: segments from their segment entries, blocks from the live allocations "
                "with their sizes rounded to 512 bytes as the allocator rounds them",
        "reserved": reserved, "allocated": totals["allocated"], "active": int(used.sum()),
        "requested": totals["active"], "free": free, "free_in_blocks": int(used.sum()) - totals["active"],
        "largest_free": largest_free, "fragmentation": free / reserved if reserved else 0.0,
        "segments": [{"address": int(a), "size": int(s), "stream": ranges[int(a)][1], "allocated": int(u),
                      "active": int(u), "requested": None, "large": bool(s > (1 << 21)), "expandable": None,
                      "blocks": None} for a, s, u in zip(starts[:MAX_SEGMENTS], sizes, used)],
        "blocks": [], "truncated": len(starts) > MAX_SEGMENTS,
        "allocator_settings": model.header.get("allocator_settings"),
    }


def _map(ranges: dict[int, list[int]], addr: int, size: int, stream: int) -> None:
    """Put a range back (undoing its free or unmap), merged with an adjacent range of the same stream."""
    ranges[addr] = [size, stream]
    for other in sorted(ranges):
        if other != addr and other + ranges[other][0] == addr and ranges[other][1] == stream:
            ranges[other][0] += ranges.pop(addr)[0]
            addr = other
            break
    after = addr + ranges[addr][0]
    if after in ranges and ranges[after][1] == stream:
        ranges[addr][0] += ranges.pop(after)[0]


def _unmap(ranges: dict[int, list[int]], addr: int, size: int) -> None:
    """Take a range out (undoing its allocation or map), splitting the range that holds it."""
    holder = next((a for a in ranges if a <= addr < a + ranges[a][0]), None)
    if holder is None:
        return
    total, stream = ranges.pop(holder)
    if addr > holder:
        ranges[holder] = [addr - holder, stream]
    if addr + size < holder + total:
        ranges[addr + size] = [holder + total - addr - size, stream]


# --- compare ------------------------------------------------------------------------------------------------------


def compare(base: SnapshotModel, exp: SnapshotModel, base_device: Optional[int] = None,
            exp_device: Optional[int] = None, limit: int = GROUP_LIMIT) -> dict[str, Any]:
    """Live bytes at each snapshot's peak by allocation site (file, line, function), and what grew."""
    sides = {}
    for label, model, device in (("base", base, base_device), ("exp", exp, exp_device)):
        facts = device_facts(model, device)
        alive = alive_at(model, facts["device"], int(facts["peak"]["row"]))
        sites = model.allocs.site[alive].astype(np.int64)
        sizes = model.allocs.size[alive]
        by_key: dict[str, list[Any]] = {}
        if len(alive):
            unique, inverse = np.unique(sites, return_inverse=True)
            sums = np.bincount(inverse, weights=sizes.astype(np.float64))
            counts = np.bincount(inverse)
            for site, value, count in zip(unique.tolist(), sums.tolist(), counts.tolist()):
                entry = by_key.setdefault(site_key(model, site), [0, 0, site_label(model, site)])
                entry[0] += int(round(value))
                entry[1] += int(count)
        sides[label] = (facts, by_key)
    keys = set(sides["base"][1]) | set(sides["exp"][1])
    rows = []
    for key in keys:
        b = sides["base"][1].get(key)
        x = sides["exp"][1].get(key)
        rows.append({"site": key, "label": (x or b)[2], "base_bytes": b[0] if b else 0, "exp_bytes": x[0] if x else 0,
                     "base_count": b[1] if b else 0, "exp_count": x[1] if x else 0,
                     "delta": (x[0] if x else 0) - (b[0] if b else 0)})
    rows.sort(key=lambda r: (-abs(r["delta"]), r["site"]))
    return {
        "base": {"device": sides["base"][0]["device"], "peak": sides["base"][0]["peak"]},
        "exp": {"device": sides["exp"][0]["device"], "peak": sides["exp"][0]["peak"]},
        "delta": sides["exp"][0]["peak"]["bytes"] - sides["base"][0]["peak"]["bytes"],
        "rows": rows[:limit], "sites": len(rows),
    }
