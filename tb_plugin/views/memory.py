"""Memory view: allocated/reserved over time per device, allocations, and who allocated what.

Source: ``[memory]`` instant events (``profile_memory=True``): address, bytes (negative
for a free), the allocator's totals after the event, device type and index. Each event
belongs to the innermost slice on its thread that contains it, like torch's own
``key_averages`` counts memory: an operator's self bytes are its own events (allocations
minus frees), its total bytes include everything nested inside it.

Older Kineto (PyTorch 1.8/1.9) wrote only ``Bytes``, ``Device Type`` and ``Device Id``: no
address and no allocator totals. For a device whose events carry no totals, allocated is
rebuilt by adding the events' bytes up in time order, from the least amount that the span's
frees imply was already held at its first event (memory held before the span is otherwise
unknown); reserved stays unknown, and without addresses no allocation is paired with its free
(its free time, lifetime and whether it was freed are unknown). The answer's ``notes`` say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..model import tree
from ..model.build import slice_at
from ..model.categories import SliceKinds
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from .quantities import recording
from .quantities.devices import memory_device

EVENT_LIMIT = 5000
MAX_CURVE_POINTS = 20000
# The query of a plain page load (no device, range or filter): its answer is precomputed.
DEFAULT_QUERY = {"device": None, "start_us": None, "end_us": None, "min_bytes": 0, "name_filter": "",
                 "limit": EVENT_LIMIT}
HOW_TO_RECORD = ("This span has no memory events. Record them with "
                 "torch.profiler.profile(profile_memory=True, record_shapes=True).")


@dataclass(frozen=True)
class MemoryEvents:
    """The memory instants, in time order, with their owner slice and pairing."""

    rows: np.ndarray  # instant rows
    ts: np.ndarray
    addr: np.ndarray
    nbytes: np.ndarray
    allocated: np.ndarray
    reserved: np.ndarray
    device_key: np.ndarray  # device_type * 65536 + (device_id + 1)
    owner: np.ndarray  # slice row of the innermost enclosing slice (-1)
    operator: np.ndarray  # slice row of the innermost enclosing operator (-1)
    freed_at: np.ndarray  # for allocations: index (into these arrays) of the matching free, -1 if never
    paired: np.ndarray  # bool: the event has an address, so its allocation and free can be paired
    rebuilt: frozenset[int]  # device keys whose allocated totals are rebuilt from the events' bytes


def _device_key(device_type: np.ndarray, device_id: np.ndarray) -> np.ndarray:
    return device_type.astype(np.int64) * 65536 + (device_id.astype(np.int64) + 1)


def _route_id_and_label(model: TraceModel, key: int) -> tuple[str, str]:
    """(id for the route, label) of a device key: "gpu0" / "GPU 0" (named in ``views/quantities/devices.py``)."""
    ident = memory_device(model, *_key_device(key))[0]
    return ident.lower().replace(" ", ""), ident


def _key_device(key: int) -> tuple[int, int]:
    dtype, did = divmod(int(key), 65536)
    return dtype, did - 1


def memory_events(model: TraceModel) -> MemoryEvents:
    return model.memo("memory_events", lambda: _memory_events(model))


def _memory_events(model: TraceModel) -> MemoryEvents:
    inst = model.instants
    memory_name = model.string_id("[memory]")
    sized = (inst.name == memory_name) & (inst.bytes != 0) if memory_name >= 0 else np.zeros(len(inst), dtype=bool)
    rows = np.flatnonzero((inst.addr >= 0) | (inst.total_allocated >= 0) | sized)
    rows = rows[np.lexsort((inst.event_id[rows], inst.ts[rows]))]
    ts = inst.ts[rows]
    owner = slice_at(model.slices, inst.track[rows], ts).astype(np.int64)
    kinds = SliceKinds(model)
    op_flag = kinds.operator
    nearest_op = tree.nearest_ancestor_where(model.slices, op_flag)
    has_owner = owner >= 0
    operator = np.full(len(rows), -1, dtype=np.int64)
    operator[has_owner] = np.where(op_flag[owner[has_owner]], owner[has_owner], nearest_op[owner[has_owner]])
    device_key = _device_key(inst.device_type[rows], inst.device_id[rows])
    nbytes = inst.bytes[rows]
    addr = inst.addr[rows]
    paired = addr >= 0
    freed_at = _pair_frees(device_key, addr, nbytes, paired)
    allocated = inst.total_allocated[rows].copy()
    rebuilt = []
    for key in np.unique(device_key).tolist():  # one pass per device
        on_device = device_key == key
        if (allocated[on_device] < 0).all():
            running = np.cumsum(nbytes[on_device])
            allocated[on_device] = running + max(0, -int(running.min()))
            rebuilt.append(key)
    return MemoryEvents(rows=rows, ts=ts, addr=addr, nbytes=nbytes, allocated=allocated,
                        reserved=inst.total_reserved[rows], device_key=device_key, owner=owner, operator=operator,
                        freed_at=freed_at, paired=paired, rebuilt=frozenset(rebuilt))


def _pair_frees(device_key: np.ndarray, addr: np.ndarray, nbytes: np.ndarray, paired: np.ndarray) -> np.ndarray:
    """For each allocation with an address, the next event at the same (device, address) if it is a free."""
    n = len(addr)
    freed_at = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return freed_at
    order = np.lexsort((np.arange(n), addr, device_key))  # time order kept within an address
    same_next = np.r_[(device_key[order][1:] == device_key[order][:-1]) & (addr[order][1:] == addr[order][:-1]),
                      False]
    next_idx = np.r_[order[1:], -1]
    is_alloc = nbytes[order] > 0
    next_is_free = np.zeros(n, dtype=bool)
    next_is_free[:-1] = nbytes[order][1:] < 0
    pair = is_alloc & same_next & next_is_free & paired[order]
    freed_at[order[pair]] = next_idx[pair]
    return freed_at


def _decimate(ts: np.ndarray, *series: np.ndarray, limit: int = MAX_CURVE_POINTS) -> list[np.ndarray]:
    """Keep every point when few; else keep, per bucket of points, the ones holding its min and max."""
    if len(ts) <= limit:
        return [ts, *series]
    n = len(ts)
    buckets = limit // 2
    bucket = (np.arange(n) * buckets // n).astype(np.int64)
    main = series[0].astype(np.float64)
    # Position of the max and of the min of each bucket: sort by (bucket, value) once.
    order = np.lexsort((main, bucket))
    first = np.r_[0, np.flatnonzero(np.diff(bucket[order])) + 1]
    last = np.r_[first[1:] - 1, n - 1]
    keep = np.zeros(n, dtype=bool)
    keep[order[first]] = True
    keep[order[last]] = True
    keep[0] = keep[-1] = True
    return [ts[keep], *(s[keep] for s in series)]


def memory(model: TraceModel, device: Optional[str] = None, start_us: Optional[float] = None,
           end_us: Optional[float] = None, min_bytes: int = 0, name_filter: str = "",
           limit: int = EVENT_LIMIT) -> dict[str, Any]:
    ev = memory_events(model)
    if len(ev.rows) == 0:
        return {"available": False, "hint": "This span has no memory events. " + recording.record_memory(model),
                "devices": [], "curves": {}, "peak": {}, "events": [],
                "by_operator": [], "notes": []}
    devices, curves, peaks = model.memo("memory_curves", lambda: _curves(model, ev))
    chosen = [d["id"] for d in devices] if device in (None, "") else [device]
    window = _window_mask(ev, model, start_us, end_us)
    chosen_keys = [k for k in np.unique(ev.device_key).tolist() if _route_id_and_label(model, k)[0] in chosen]
    selected = window & np.isin(ev.device_key, chosen_keys)
    return {
        "available": True,
        "span_start": model.start / NS_PER_US,
        "devices": devices,
        "curves": curves,
        "peak": peaks,
        "events": allocation_table(model, ev, selected, min_bytes, name_filter, limit),
        "by_operator": operator_stats(model, ev, selected),
        "notes": rebuilt_notes(model, ev),
    }


def rebuilt_notes(model: TraceModel, ev: MemoryEvents) -> list[str]:
    """What the memory events of the span do not say, per device whose totals are rebuilt."""
    notes = []
    for key in sorted(ev.rebuilt):
        label = _route_id_and_label(model, key)[1]
        without_address = not ev.paired[ev.device_key == key].any()
        notes.append(
            f"{label}: the memory events (an older profiler's format) give each allocation's and free's size but not "
            f"the allocator's totals. Allocated is rebuilt by adding them up in time order, from the least amount the "
            f"span's frees imply was already held at its start (memory held before the span is not known); reserved "
            f"is not known." + (" They carry no address: no allocation is paired with its free (free time, lifetime "
                                "and whether it was freed are unknown, and so is what was live at the peak)."
                                if without_address else ""))
    return notes


def _curves(model: TraceModel, ev: MemoryEvents) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Per device: its description, its allocated/reserved curves (decimated) and its peak."""
    devices: list[dict[str, Any]] = []
    curves: dict[str, Any] = {}
    peaks: dict[str, Any] = {}
    for key in np.unique(ev.device_key).tolist():
        ident, label = _route_id_and_label(model, key)
        capacity = memory_device(model, *_key_device(key))[1]
        sel = ev.device_key == key
        ts, allocated, reserved = _decimate(ev.ts[sel], ev.allocated[sel], ev.reserved[sel])
        if model.end > int(ts[-1]):  # the last values hold to the span's end: the chart spans the whole span
            ts, allocated, reserved = (np.r_[ts, model.end], np.r_[allocated, allocated[-1]],
                                       np.r_[reserved, reserved[-1]])
        peak_i = int(np.argmax(ev.allocated[sel]))
        devices.append({"id": ident, "name": label, "capacity": capacity,
                        "events": int(sel.sum()), "allocated_rebuilt": key in ev.rebuilt})
        curves[ident] = {"time": (ts / NS_PER_US).tolist(), "allocated": allocated.tolist(),
                         "reserved": reserved.tolist()}
        peaks[ident] = {"allocated": int(ev.allocated[sel][peak_i]), "time": float(ev.ts[sel][peak_i]) / NS_PER_US,
                        "reserved": int(ev.reserved[sel].max())}
    return devices, curves, peaks


def _window_mask(ev: MemoryEvents, model: TraceModel, start_us: Optional[float], end_us: Optional[float]) -> np.ndarray:
    lo = -np.inf if start_us is None else start_us * NS_PER_US
    hi = np.inf if end_us is None else end_us * NS_PER_US
    return (ev.ts >= lo) & (ev.ts <= hi)


def _operator_names(model: TraceModel, operator: np.ndarray) -> np.ndarray:
    """The name (string id) of each event's operator, -1 where it has none (a span may hold
    ``[memory]`` events and no slice at all)."""
    names = np.full(len(operator), -1, dtype=np.int64)
    has = operator >= 0
    names[has] = model.slices.name[operator[has]]
    return names


def allocation_table(model: TraceModel, ev: MemoryEvents, selected: np.ndarray, min_bytes: int, name_filter: str,
                     limit: int) -> dict[str, Any]:
    """Allocations (with their free when there is one), largest first."""
    alloc = np.flatnonzero(selected & (ev.nbytes > 0) & (ev.nbytes >= min_bytes))
    op_name = _operator_names(model, ev.operator[alloc])
    if name_filter:
        match = model.string_ids_where(lambda t: name_filter.lower() in t.lower())
        alloc = alloc[(op_name >= 0) & match[np.maximum(op_name, 0)]]
        op_name = _operator_names(model, ev.operator[alloc])
    order = np.argsort(-ev.nbytes[alloc], kind="stable")[:limit]
    alloc, op_name = alloc[order], op_name[order]
    freed = ev.freed_at[alloc]
    free_ts = np.where(freed >= 0, ev.ts[np.maximum(freed, 0)], -1)
    labels = {key: _route_id_and_label(model, key)[1] for key in np.unique(ev.device_key[alloc]).tolist()}
    return {
        "total": int(len(order)),
        "columns": ["addr", "bytes", "operator", "device", "alloc_time", "free_time", "lifetime", "never_freed"],
        "addr": [a if a >= 0 else None for a in ev.addr[alloc].tolist()],
        "bytes": ev.nbytes[alloc].tolist(),
        "operator": [model.strings[int(n)] if n >= 0 else "" for n in op_name.tolist()],
        "device": [labels[k] for k in ev.device_key[alloc].tolist()],
        "alloc_time": (ev.ts[alloc] / NS_PER_US).tolist(),
        "free_time": [t / NS_PER_US if t >= 0 else None for t in free_ts.tolist()],
        "lifetime": [(f - a) / NS_PER_US if f >= 0 else None for a, f in zip(ev.ts[alloc].tolist(), free_ts.tolist())],
        "never_freed": [bool(f < 0) if known else None for f, known in zip(freed.tolist(), ev.paired[alloc].tolist())],
    }


def _live_at_peak(ev: MemoryEvents, selected: np.ndarray) -> np.ndarray:
    """Per event: the bytes of an allocation still live at its device's peak (0 otherwise)."""
    live = np.zeros(len(ev.ts), dtype=np.int64)
    for key in np.unique(ev.device_key[selected]).tolist():
        on_device = ev.device_key == key
        peak_ts = ev.ts[on_device][int(np.argmax(ev.allocated[on_device]))]
        freed = ev.freed_at
        free_ts = np.where(freed >= 0, ev.ts[np.maximum(freed, 0)], np.iinfo(np.int64).max)
        alive = on_device & ev.paired & (ev.nbytes > 0) & (ev.ts <= peak_ts) & (free_ts > peak_ts)
        live[alive] = ev.nbytes[alive]
    return live


def operator_stats(model: TraceModel, ev: MemoryEvents, selected: np.ndarray) -> list[dict[str, Any]]:
    """Per slice name: allocations, frees and bytes, self and including nested slices."""
    s = model.slices
    n = len(s)
    sel = selected & (ev.owner >= 0)
    owner = ev.owner[sel]
    nbytes = ev.nbytes[sel]
    is_alloc = nbytes > 0

    def per_slice(weights: np.ndarray) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        np.add.at(out, owner, weights)
        return out

    self_net = per_slice(nbytes)
    self_peak = per_slice(_live_at_peak(ev, selected)[sel])
    self_alloc_bytes = per_slice(np.where(is_alloc, nbytes, 0))
    self_allocs = per_slice(is_alloc.astype(np.int64))
    self_frees = per_slice((~is_alloc).astype(np.int64))
    total_net = tree.subtree_sum(s, self_net)
    total_alloc_bytes = tree.subtree_sum(s, self_alloc_bytes)
    total_peak = tree.subtree_sum(s, self_peak)
    touched = tree.subtree_sum(s, self_allocs + self_frees) > 0
    rows = np.flatnonzero(touched & SliceKinds(model).host_op)
    if len(rows) == 0:
        return []
    names = s.name[rows]
    unique, inverse, calls = np.unique(names, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)

    def agg(values: np.ndarray) -> np.ndarray:
        return np.bincount(inverse, weights=values[rows].astype(np.float64), minlength=len(unique))

    all_calls = np.bincount(s.name[SliceKinds(model).host_op], minlength=len(model.strings))
    peak_known = bool(ev.paired[selected].any())  # what is live at the peak needs allocations paired with frees
    out = []
    sums = {k: agg(v) for k, v in (("self_bytes", self_net), ("total_bytes", total_net),
                                   ("self_alloc_bytes", self_alloc_bytes), ("total_alloc_bytes", total_alloc_bytes),
                                   ("allocations", self_allocs), ("frees", self_frees),
                                   ("self_peak_bytes", self_peak), ("total_peak_bytes", total_peak))}
    for i, name_id in enumerate(unique.tolist()):
        out.append({
            "name": model.strings[name_id],
            "calls": int(all_calls[name_id]),
            "allocations": int(sums["allocations"][i]),
            "frees": int(sums["frees"][i]),
            "self_bytes": int(sums["self_bytes"][i]),
            "total_bytes": int(sums["total_bytes"][i]),
            "self_alloc_bytes": int(sums["self_alloc_bytes"][i]),
            "total_alloc_bytes": int(sums["total_alloc_bytes"][i]),
            "self_peak_bytes": int(sums["self_peak_bytes"][i]) if peak_known else None,
            "total_peak_bytes": int(sums["total_peak_bytes"][i]) if peak_known else None,
        })
    out.sort(key=lambda r: -abs(r["total_bytes"]))
    return out
