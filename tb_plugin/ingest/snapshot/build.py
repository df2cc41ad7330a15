"""A read snapshot (``columns.ReadResult``) → the snapshot model (``model/snapshot.py``), with whole-array arithmetic.

What is derived, per device:

* **Allocations** from the trace entries of each (device, address), in entry order. An allocation lives from its
  ``alloc`` to the next ``free_completed`` (its memory is "active" until then, as torch's ``active_bytes`` and
  memory_viz count it); the ``free_requested`` in between ends it as "allocated" (torch's ``allocated_bytes``). A
  ``free_completed`` first for its address frees memory allocated before the recorded history began (the history
  is a ring buffer: its oldest entries are gone): that allocation lives from the start. An ``alloc`` followed by
  another ``alloc`` of the same address lost its free: it ends there (flagged). Blocks the snapshot's segments hold
  as active (``active_allocated``, ``active_pending_free``) with no live allocation from the trace were allocated
  before the history and never freed: they live from start to end, with the block's requested size and stack.
* **Totals after every entry**: active and allocated bytes (the allocations above), reserved bytes (segments:
  ``segment_alloc``/``segment_map`` add, ``segment_free``/``segment_unmap`` remove; the start is what the snapshot's
  segments hold at the end minus what the history added). The peak is the first entry where active bytes are
  highest.
* **Sites** (``sites.py``) and, for the timeline's bands, the live bytes of the largest sites after every entry.

Sizes are the requested sizes the trace entries carry; the segments' blocks add the allocator's rounding
(``size`` against ``requested_size``), shown with the allocator state.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.snapshot import (
    ALIVE_AT_END, ALLOC, BEFORE_HISTORY, BLOCK_STATES, ENDED_BY_REUSE, FREE_COMPLETED, FREE_REQUESTED,
    FREED_BEFORE_HISTORY, FROM_SEGMENTS,
    MISSING_TIME, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, STACK_OF_FREE, SnapshotModel, arrays_of,
)
from .columns import ReadResult
from .sites import classify_frames, stack_sites

# Sites that get a band of their own in the timeline, per device (the rest is "other").
TOP_SITES = 24
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _int(value: Any, default: int = 0) -> int:
    return value if type(value) is int and _INT64_MIN <= value <= _INT64_MAX else default


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON-able copy of an allocator setting: scalars, and dicts/lists of them two levels deep at most."""
    if value is None or type(value) in (bool, str):
        return value
    if type(value) is int:
        return value if _INT64_MIN <= value <= _INT64_MAX else str(value)
    if type(value) is float:
        return value if value == value and abs(value) != float("inf") else None
    if depth < 2 and type(value) is dict:
        return {str(k): _plain(v, depth + 1) for k, v in list(value.items())[:256] if type(k) in (str, int)}
    if depth < 2 and type(value) in (list, tuple):
        return [_plain(v, depth + 1) for v in list(value)[:256]]
    return None


def _segments(document: dict[str, Any], segment_stack: np.ndarray,
              block_stack: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    """The segments and blocks tables, walked as ``columns.segment_stacks`` walks them (its stacks by position)."""
    seg_rows: dict[str, list[int]] = {name: [] for name in (
        "device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream", "is_large",
        "is_expandable", "pool0", "pool1", "stack", "first_block")}
    block_rows: dict[str, list[int]] = {name: [] for name in (
        "segment", "address", "size", "requested_size", "state", "stack")}
    notes: list[str] = []
    derived_totals = 0
    unknown_states = 0
    segments = document.get("segments")
    if type(segments) is list:
        for segment in segments:
            if type(segment) is not dict:
                continue
            index = len(seg_rows["device"])
            address = _int(segment.get("address"))
            blocks = segment.get("blocks")
            blocks = [b for b in blocks if type(b) is dict] if type(blocks) is list else []
            first = len(block_rows["segment"])
            offset = address
            allocated = active = requested = 0
            for block in blocks:
                size = _int(block.get("size"))
                req = block.get("requested_size")
                if type(req) is not int:
                    history = block.get("history")
                    first_history = history[0] if type(history) is list and history and type(history[0]) is dict \
                        else {}
                    req = first_history.get("real_size", size)
                req = _int(req, size)
                state_name = block.get("state")
                state = BLOCK_STATES.index(state_name) if state_name in BLOCK_STATES else 2
                unknown_states += state_name not in BLOCK_STATES
                block_address = _int(block.get("address"), offset) if "address" in block else offset
                block_rows["segment"].append(index)
                block_rows["address"].append(block_address)
                block_rows["size"].append(size)
                block_rows["requested_size"].append(req)
                block_rows["state"].append(state)
                block_rows["stack"].append(int(block_stack[len(block_rows["stack"])]))
                offset = block_address + size
                allocated += size if state == 0 else 0
                active += size if state < 2 else 0
                requested += req if state < 2 else 0
            total = _int(segment.get("total_size"), offset - address)
            stated = [segment.get(key) for key in ("allocated_size", "active_size", "requested_size")]
            derived_totals += any(type(v) is not int for v in stated)
            pool = segment.get("segment_pool_id")
            pool = pool if type(pool) in (tuple, list) and len(pool) == 2 else (0, 0)
            for name, value in (
                ("device", _int(segment.get("device"))), ("address", address), ("total_size", total),
                ("allocated_size", _int(stated[0], allocated)), ("active_size", _int(stated[1], active)),
                ("requested_size", _int(stated[2], requested)), ("stream", _int(segment.get("stream"))),
                ("is_large", int(segment.get("segment_type") == "large" or (segment.get("segment_type") is None
                                                                        and total > 1 << 20))),
                ("is_expandable", int(segment.get("is_expandable") is True)), ("pool0", _int(pool[0])),
                ("pool1", _int(pool[1])), ("stack", int(segment_stack[index])), ("first_block", first),
            ):
                seg_rows[name].append(value)
    if derived_totals:
        notes.append(f"{derived_totals} segments do not state their allocated, active or requested size: computed "
                     "from their blocks")
    if unknown_states:
        notes.append(f"{unknown_states} blocks have a state this version does not know: counted as inactive")
    dtypes = {"is_large": np.int8, "is_expandable": np.int8, "stack": np.int32, "state": np.int8,
              "segment": np.int32, "device": np.int32}
    segments_table = {k: np.asarray(v, dtype=dtypes.get(k, np.int64)) for k, v in seg_rows.items()}
    blocks_table = {k: np.asarray(v, dtype=dtypes.get(k, np.int64)) for k, v in block_rows.items()}
    return segments_table, blocks_table, notes


def _device_cumsum(deltas: np.ndarray, bounds: list[tuple[int, int]], baselines: list[int]) -> np.ndarray:
    """Running totals per device's contiguous rows, each from its baseline."""
    out = np.empty(len(deltas), dtype=np.int64)
    for (lo, hi), base in zip(bounds, baselines):
        if hi > lo:
            np.cumsum(deltas[lo:hi], out=out[lo:hi])
            out[lo:hi] += base
    return out


def _allocations(c: dict[str, np.ndarray], blocks: dict[str, np.ndarray], segments: dict[str, np.ndarray],
                 notes: list[str]) -> dict[str, np.ndarray]:
    """The allocations' lives (see the module docstring)."""
    action, device, addr = c["action"], c["device"], c["addr"]
    sel = np.flatnonzero((action == ALLOC) | (action == FREE_REQUESTED) | (action == FREE_COMPLETED))
    order = np.lexsort((sel, addr[sel], device[sel]))
    seq = sel[order]
    dev_s, addr_s, act_s = device[seq], addr[seq], action[seq]
    new_group = np.ones(len(seq), dtype=bool)
    new_group[1:] = (dev_s[1:] != dev_s[:-1]) | (addr_s[1:] != addr_s[:-1])
    group_start = np.flatnonzero(new_group)
    group = np.cumsum(new_group) - 1

    ac_mask = act_s != FREE_REQUESTED
    ac = seq[ac_mask]
    ac_act = act_s[ac_mask]
    ac_group = group[ac_mask]
    m = len(ac)
    same_next = np.zeros(m, dtype=bool)
    if m > 1:
        same_next[:-1] = ac_group[1:] == ac_group[:-1]
    same_prev = np.zeros(m, dtype=bool)
    same_prev[1:] = same_next[:-1]
    next_act = np.full(m, -1, dtype=np.int16)
    next_act[:-1] = ac_act[1:]
    is_alloc = ac_act == ALLOC

    a_pos = np.flatnonzero(is_alloc)
    paired = same_next[a_pos] & (next_act[a_pos] == FREE_COMPLETED)
    reused = same_next[a_pos] & (next_act[a_pos] == ALLOC)
    nxt = np.minimum(a_pos + 1, max(m - 1, 0))
    a_start = ac[a_pos]
    a_end = np.where(paired | reused, ac[nxt] if m else a_pos, -1)
    a_flags = np.where(paired | reused, 0, ALIVE_AT_END) | np.where(reused, ENDED_BY_REUSE, 0)

    c_pos = np.flatnonzero(~is_alloc)
    first_in_group = ~same_prev[c_pos]
    orphan = c_pos[first_in_group]
    doubled = int((same_prev[c_pos] & (ac_act[np.maximum(c_pos - 1, 0)] == FREE_COMPLETED)).sum())
    if doubled:
        notes.append(f"{doubled} frees have no allocation before them though their address was freed already: "
                     "left out")
    if int(reused.sum()):
        notes.append(f"{int(reused.sum())} allocations have no free before their address is allocated again: "
                     "each ends there")
    o_end = ac[orphan]

    n_lives = len(a_pos) + len(orphan)
    start = np.concatenate([a_start, np.full(len(orphan), -1, dtype=np.int64)]).astype(np.int64)
    end = np.concatenate([a_end, o_end]).astype(np.int64)
    flags = np.concatenate([a_flags, np.full(len(orphan), BEFORE_HISTORY | STACK_OF_FREE)]).astype(np.int32)
    # The entry that describes each life (its alloc, else its free).
    source = np.where(start >= 0, start, end)

    # free_requested: the one after its life's alloc (or, for a life from before the history, before its free).
    freed = np.full(n_lives, -1, dtype=np.int64)
    if len(seq):
        life_of_entry = np.full(len(action), -1, dtype=np.int64)
        life_of_entry[a_start] = np.arange(len(a_pos))
        orphan_life = np.full(len(action), -1, dtype=np.int64)
        orphan_life[o_end] = np.arange(len(a_pos), n_lives)
        positions = np.arange(len(seq))
        group_first = group_start[group]
        before = np.maximum.accumulate(np.where(ac_mask, positions, -1))
        before = np.where(before >= group_first, before, -1)
        group_last = np.append(group_start[1:], len(seq))[group] - 1
        after_marks = np.where(ac_mask, positions, len(seq))
        after = np.minimum.accumulate(after_marks[::-1])[::-1]
        after = np.where(after <= group_last, after, -1)
        r_pos = np.flatnonzero(~ac_mask)
        owner = np.full(len(r_pos), -1, dtype=np.int64)
        prev_ac = before[r_pos]
        has_prev = prev_ac >= 0
        prev_is_alloc = has_prev & (act_s[np.maximum(prev_ac, 0)] == ALLOC)
        owner[prev_is_alloc] = life_of_entry[seq[prev_ac[prev_is_alloc]]]
        next_ac = after[r_pos]
        to_orphan = ~has_prev & (next_ac >= 0)
        owner[to_orphan] = orphan_life[seq[next_ac[to_orphan]]]
        valid = owner >= 0
        if valid.any():
            lives, first = np.unique(owner[valid], return_index=True)
            freed[lives] = seq[r_pos[valid][first]]
    # A life from before the history whose free_requested is not recorded either was requested before it began.
    flags[(start < 0) & (freed < 0)] |= FREED_BEFORE_HISTORY

    size = c["size"][source]
    lives = {
        "device": device[source].astype(np.int32), "addr": addr[source], "size": size,
        "stream": c["stream"][source], "stack": c["stack"][source].astype(np.int32),
        "category": c["category"][source].astype(np.int32), "start": start, "end": end, "freed": freed,
        "flags": flags,
    }
    # Blocks active at the end with no live allocation from the trace: allocated before the history, never freed.
    active_blocks = np.flatnonzero(blocks["state"] < 2) if len(blocks["state"]) else np.zeros(0, dtype=np.int64)
    if len(active_blocks):
        b_device = segments["device"][blocks["segment"][active_blocks]]
        b_addr = blocks["address"][active_blocks]
        alive = end < 0
        known = _pair_keys(lives["device"][alive], lives["addr"][alive])
        wanted = _pair_keys(b_device, b_addr)
        missing = active_blocks[~np.isin(wanted, known)] if known is not None and wanted is not None \
            else active_blocks[~_pairs_in(b_device, b_addr, lives["device"][alive], lives["addr"][alive])]
        if len(missing):
            seg = blocks["segment"][missing]
            requested = blocks["requested_size"][missing]
            extra = {
                "device": segments["device"][seg].astype(np.int32), "addr": blocks["address"][missing],
                "size": np.where(requested > 0, requested, blocks["size"][missing]),
                "stream": segments["stream"][seg], "stack": blocks["stack"][missing].astype(np.int32),
                "category": np.full(len(missing), -1, dtype=np.int32),
                "start": np.full(len(missing), -1, dtype=np.int64), "end": np.full(len(missing), -1, dtype=np.int64),
                "freed": np.full(len(missing), -1, dtype=np.int64),
                "flags": (BEFORE_HISTORY | ALIVE_AT_END | FROM_SEGMENTS
                          | np.where(blocks["state"][missing] == 1, FREED_BEFORE_HISTORY, 0)).astype(np.int32),
            }
            lives = {k: np.concatenate([lives[k], extra[k].astype(lives[k].dtype)]) for k in lives}
    return lives


def _pair_keys(device: np.ndarray, addr: np.ndarray) -> Optional[np.ndarray]:
    """(device, address) as one int64 when addresses fit 56 bits (every GPU's do), else None."""
    if len(addr) and (addr.min() < 0 or addr.max() >= 1 << 56 or device.min() < 0 or device.max() >= 127):
        return None
    return device.astype(np.int64) << 56 | addr


def _pairs_in(d1: np.ndarray, a1: np.ndarray, d2: np.ndarray, a2: np.ndarray) -> np.ndarray:
    known = set(zip(d2.tolist(), a2.tolist()))
    return np.fromiter(((d, a) in known for d, a in zip(d1.tolist(), a1.tolist())), dtype=bool, count=len(d1))


def _site_series(lives: dict[str, np.ndarray], device_ids: list[int]) -> dict[str, np.ndarray]:
    """For each device, the live bytes of its ``TOP_SITES`` sites with the highest live bytes at any moment, as
    (entry row, bytes after it) steps; row -1 is the start."""
    out: dict[str, list[Any]] = {"device": [], "site": [], "offsets": [0], "position": [], "value": []}
    for dev in device_ids:
        mine = np.flatnonzero(lives["device"] == dev)
        if not len(mine):
            continue
        site = lives["site"][mine].astype(np.int64)
        size = lives["size"][mine]
        ends = lives["end"][mine]
        ended = ends >= 0
        pos = np.concatenate([lives["start"][mine], ends[ended]])
        val = np.concatenate([size, -size[ended]])
        key = np.concatenate([site, site[ended]])
        sign = np.concatenate([np.ones(len(mine), dtype=np.int8), np.zeros(int(ended.sum()), dtype=np.int8)])
        order = np.lexsort((sign, pos, key))  # per site, by row; at one row frees before allocations
        key, pos, val = key[order], pos[order], val[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        cum = np.cumsum(val)
        group_base = np.repeat(np.r_[0, cum[starts[1:] - 1]] if len(starts) > 1 else np.zeros(1, np.int64),
                               np.diff(np.r_[starts, len(key)]))
        cum = cum - group_base
        peaks = np.maximum.reduceat(cum, starts)
        top = np.argsort(-peaks, kind="stable")[:TOP_SITES]
        for g in sorted(top.tolist(), key=lambda g: -int(peaks[g])):
            lo = starts[g]
            hi = starts[g + 1] if g + 1 < len(starts) else len(key)
            p, v = pos[lo:hi], cum[lo:hi]
            last = np.r_[p[1:] != p[:-1], True]  # the value after the last change at each row
            out["device"].append(dev)
            out["site"].append(int(key[lo]))
            out["position"].append(p[last])
            out["value"].append(v[last])
            out["offsets"].append(out["offsets"][-1] + int(last.sum()))
    return {
        "device": np.asarray(out["device"], dtype=np.int32), "site": np.asarray(out["site"], dtype=np.int32),
        "offsets": np.asarray(out["offsets"], dtype=np.int64),
        "position": np.concatenate(out["position"]).astype(np.int64) if out["position"] else np.zeros(0, np.int64),
        "value": np.concatenate(out["value"]).astype(np.int64) if out["value"] else np.zeros(0, np.int64),
    }


def build_model(result: ReadResult, notes: Optional[list[str]] = None) -> tuple[SnapshotModel, dict[str, np.ndarray]]:
    """The snapshot model and the flat arrays its file stores (``model/snapshot.write_snapshot_model``)."""
    c = dict(result.columns)
    notes = list(result.notes) + list(notes or [])
    document = result.document
    n = len(c["action"])
    if n and np.any(np.diff(c["device"]) < 0):  # entries grouped by device (torch's lists are)
        order = np.argsort(c["device"], kind="stable")
        for name in ("device", "action", "addr", "size", "stream", "time_us", "stack", "compile_context",
                     "user_metadata", "category"):
            c[name] = c[name][order]
    segments, blocks, segment_notes = _segments(document, c["segment_stack"], c["block_stack"])
    notes += segment_notes

    device = c["device"]
    device_ids = sorted(set(np.unique(device).tolist()) | set(np.unique(segments["device"]).tolist()))
    bounds = [(int(np.searchsorted(device, d, "left")), int(np.searchsorted(device, d, "right"))) for d in device_ids]
    raw_time = c["time_us"]
    has_time = bool(n) and bool((raw_time != MISSING_TIME).all())
    time = np.empty(n, dtype=np.int64)
    for lo, hi in bounds:
        if hi > lo:
            time[lo:hi] = np.maximum.accumulate(raw_time[lo:hi]) if has_time else np.arange(hi - lo)
    if has_time and n and np.any(np.diff(raw_time) < 0) and not all(
            np.all(np.diff(raw_time[lo:hi]) >= 0) for lo, hi in bounds):
        notes.append("some trace entries are recorded earlier than the entry before them: each is placed at the "
                     "time of the one before")
    if not has_time and n:
        notes.append("the trace entries have no times (a snapshot from before torch 2.1, or made from a profile): "
                     "the time axis counts entries")

    # Frames, stacks and sites.
    strings = result.strings
    frame_file, frame_name = c["frame_file"], c["frame_name"]
    files = [strings[i] if i >= 0 else None for i in frame_file.tolist()]
    names = [strings[i] if i >= 0 else None for i in frame_name.tolist()]
    kinds, plumbing = classify_frames(files, names)
    stack_offsets, stack_frames = c["stack_offsets"], c["stack_frames"]
    if len(stack_frames) and stack_frames.min() < 0:  # a frame list item that was no frame dict
        notes.append("some stack frames are not frame records: shown as unknown")
    site = stack_sites(kinds, plumbing, stack_offsets, np.maximum(stack_frames, 0)) if len(stack_offsets) > 1 \
        else np.zeros(0, dtype=np.int32)

    lives = _allocations(c, blocks, segments, notes)
    lives["site"] = np.where(lives["stack"] >= 0, site[np.maximum(lives["stack"], 0)] if len(site) else -1,
                             -1).astype(np.int32)

    # Totals after every entry.
    action, size = c["action"], c["size"]
    start, end, freed, lsize = lives["start"], lives["end"], lives["freed"], lives["size"]
    active_delta = np.zeros(n, dtype=np.int64)
    allocated_delta = np.zeros(n, dtype=np.int64)
    begun = start >= 0
    np.add.at(active_delta, start[begun], lsize[begun])
    np.add.at(allocated_delta, start[begun], lsize[begun])
    ended = end >= 0
    np.add.at(active_delta, end[ended], -lsize[ended])
    # Allocated: to free_requested (or free_completed where none is recorded); not at all for a life whose
    # free_requested came before the history began.
    counted = (lives["flags"] & FREED_BEFORE_HISTORY) == 0
    stop = np.where(freed >= 0, freed, end)
    stopped = (stop >= 0) & counted
    np.add.at(allocated_delta, stop[stopped], -lsize[stopped])
    # A snapshot made from a profile (torch.cuda._memory_viz._profile_to_snapshot) has one made-up segment per
    # device spanning the addresses its allocations used: not memory an allocator reserved.
    segment_actions = np.isin(action, (SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP))
    reserved_known = bool(segment_actions.any()) or has_time or not any(
        "made from their blocks" in note or "computed from their blocks" in note for note in segment_notes)
    if not reserved_known:
        notes.append("the snapshot was made from a profile: its segments are the address ranges its allocations "
                     "used, not memory an allocator reserved, so no reserved memory is shown")
    reserve_sign = np.zeros(n, dtype=np.int64)
    reserve_sign[(action == SEGMENT_ALLOC) | (action == SEGMENT_MAP)] = 1
    reserve_sign[(action == SEGMENT_FREE) | (action == SEGMENT_UNMAP)] = -1
    reserved_delta = reserve_sign * size

    devices: list[dict[str, Any]] = []
    base_active, base_allocated, base_reserved = [], [], []
    for dev, (lo, hi) in zip(device_ids, bounds):
        mine = lives["device"] == dev
        before = mine & ~begun
        base_active.append(int(lsize[before].sum()))
        base_allocated.append(int(lsize[before & counted].sum()))
        seg_mine = segments["device"] == dev
        reserved_end = int(segments["total_size"][seg_mine].sum()) if reserved_known else 0
        base_reserved.append(reserved_end - int(reserved_delta[lo:hi].sum()))
    active = _device_cumsum(active_delta, bounds, base_active)
    allocated = _device_cumsum(allocated_delta, bounds, base_allocated)
    reserved = _device_cumsum(reserved_delta, bounds, base_reserved)
    if any(b < 0 for b in base_reserved):
        notes.append("the history frees more segment memory than the snapshot's segments and its history account "
                     "for: reserved memory at the start is shown as 0 where negative")

    for dev, (lo, hi), b_active, b_allocated, b_reserved in zip(device_ids, bounds, base_active, base_allocated,
                                                                 base_reserved):
        seg_mine = segments["device"] == dev
        facts: dict[str, Any] = {
            "device": int(dev), "rows": [lo, hi], "entries": hi - lo,
            "allocations": int((lives["device"] == dev).sum()),
            "start": int(time[lo]) if hi > lo else 0, "end": int(time[hi - 1]) if hi > lo else 0,
            "baseline": {"active": b_active, "allocated": b_allocated, "reserved": max(b_reserved, 0)},
            "at_end": {
                "active": int(active[hi - 1]) if hi > lo else b_active,
                "allocated": int(allocated[hi - 1]) if hi > lo else b_allocated,
                "reserved": int(reserved[hi - 1]) if hi > lo else max(b_reserved, 0),
            },
            "stated": {key: int(segments[key][seg_mine].sum()) for key in
                       ("total_size", "allocated_size", "active_size", "requested_size")},
            "segments": int(seg_mine.sum()),
        }
        if hi > lo:
            row = lo + int(np.argmax(active[lo:hi]))
            peak = int(active[row])
            if b_active >= peak:
                facts["peak"] = {"bytes": b_active, "row": -1, "time": facts["start"]}
            else:
                facts["peak"] = {"bytes": peak, "row": row, "time": int(time[row])}
            facts["reserved_peak"] = max(int(reserved[lo:hi].max()), b_reserved)
        else:
            facts["peak"] = {"bytes": b_active, "row": -1, "time": 0}
            facts["reserved_peak"] = max(b_reserved, 0)
        devices.append(facts)

    series = _site_series(lives, device_ids)
    settings = _plain(document.get("allocator_settings"))
    header = {
        "strings": strings,
        "axis": "time_us" if has_time else "entry",
        "devices": devices,
        "allocator_settings": settings if isinstance(settings, dict) else None,
        "reserved_known": reserved_known,
        "notes": notes,
        "keys": sorted(str(k) for k in list(document)[:64]),
        "device_lists": len(document.get("device_traces")) if type(document.get("device_traces")) is list else 0,
    }
    tables = {
        "entries": {
            "action": c["action"], "device": c["device"].astype(np.int32), "addr": c["addr"], "size": c["size"],
            "stream": c["stream"], "time": time, "stack": c["stack"], "compile_context": c["compile_context"],
            "user_metadata": c["user_metadata"], "category": c["category"], "active": active,
            "allocated": allocated, "reserved": np.maximum(reserved, 0),
        },
        "frames": {"file": frame_file, "line": c["frame_line"], "name": frame_name, "kind": kinds},
        "stacks": {"offsets": stack_offsets, "frames": stack_frames, "site": site},
        "allocs": lives,
        "segments": segments,
        "blocks": blocks,
        "annotations": {"device": c["annotation_device"], "time": c["annotation_time_us"],
                        "stage": c["annotation_stage"], "name": c["annotation_name"]},
        "site_series": series,
    }
    arrays = arrays_of(tables)
    return SnapshotModel(header, arrays), arrays
