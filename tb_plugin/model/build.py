"""Raw event columns → TraceModel: tracks, sorting, nesting, links, flows and steps.

Everything here is array arithmetic over whole columns; nothing loops per event.
"""

from __future__ import annotations

import concurrent.futures
import re
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .categories import DEVICE_CATEGORIES
from .factorize import factorize, factorize_parts
from .interning import cut_long_texts
from .nesting import nesting
from .raw_columns import FLOW_END, FLOW_START, RawColumns
from .trace_model import (
    CounterTable,
    FlowTable,
    InstantTable,
    LinkTable,
    SliceTable,
    StepTable,
    TraceModel,
    Track,
)
from .tree import nearest_ancestor_where

RUNTIME_CATEGORIES = frozenset(
    {"cuda_runtime", "cuda_driver", "Runtime", "hip_runtime", "hip_driver", "mtia_runtime", "xpu_runtime",
     "xpu_driver", "privateuse1_runtime", "privateuse1_driver", "CudaRuntime", "MluRuntime", "CustomRuntime"}
)
# torch's ProfilerStep#N and Paddle's ProfileStep#N.
_STEP_NAME = re.compile(r"^Profiler?Step#(\d+)$")
_GPU_PROCESS = re.compile(r"^(?:GPU|gpu|Device|device)\s*(\d+)")
# Device processes already named after an accelerator that is not a GPU keep their name.
_ACCELERATOR_PROCESS = re.compile(r"(?i)\b(?:ascend|npu|mlu|xpu|mtia|dipu|hpu)\b")


# Where the build puts a large column: (its name in the model file, dtype, length) → an array to fill, or None for
# one in memory (``array_file.ArrayFileWriter.allocate``: the parser builds a model straight into its cache file).
Allocate = Callable[[str, Any, int], Optional[np.ndarray]]


def build_model(raw: RawColumns, framework: str = "pytorch", allocate: Optional[Allocate] = None) -> TraceModel:
    strings = raw.strings
    text = strings.strings
    track_of, tracks_info = _assign_tracks(raw)

    slices = _build_slices(raw, track_of, allocate)
    tracks = _describe_tracks(raw, tracks_info, slices)
    instants = _build_instants(raw, track_of)
    counters = _build_counters(raw, track_of)
    flows = _build_flows(raw, track_of, slices)
    links = _build_links(slices, text, flows)
    steps = _build_steps(slices, tracks, text, raw.stats)
    times = [a for a in (slices.start, slices.end, instants.ts, counters.ts) if len(a)]
    start = int(min(a.min() for a in times)) if times else 0
    end = int(max(a.max() for a in times)) if times else 0
    kept, long_texts = cut_long_texts(list(text))
    return TraceModel(
        strings=kept, long_texts=long_texts, tracks=tracks, slices=slices, instants=instants, counters=counters, flows=flows,
        links=links, steps=steps, metadata=raw.metadata, stats=raw.stats, framework=framework,
        num_events=raw.num_events, start=start, end=end,
    )


def _assign_tracks(raw: RawColumns) -> tuple[dict[str, np.ndarray], list[tuple[int, int]]]:
    """Map every (pid, tid) of slices, instants, counters and flows to a track id.

    Track ids follow the order of (pid, tid) string ids. pid and tid are interned strings, so
    both are factorised without sorting, then their pair.
    """
    tables = ("slices", "instants", "flows", "counters")
    pids = [raw.column(table, "pid", np.int32) for table in tables]
    # Counters are drawn per process: their tid is not meaningful. One id past every string stands for it.
    no_thread = len(raw.strings.strings)
    tids = [raw.column(table, "tid", np.int32) for table in tables[:3]]
    tids.append(np.full(len(pids[-1]), no_thread, dtype=np.int32))
    pid_values, pid_codes = factorize_parts(pids)
    tid_values, tid_codes = factorize_parts(tids)
    del pids, tids
    width = max(len(tid_values), 1)
    wide = len(pid_values) * width >= 1 << 31  # pair keys beyond int32
    pair_values, pair_codes = factorize_parts(
        [(p.astype(np.int64) if wide else p) * width + t for p, t in zip(pid_codes, tid_codes)])
    track_of = dict(zip(tables, pair_codes))
    tracks_info = [(int(pid_values[pair // width]), int(tid_values[pair % width])) for pair in pair_values.tolist()]
    return track_of, tracks_info


def _build_slices(raw: RawColumns, track_of: dict[str, np.ndarray], allocate: Optional[Allocate]) -> SliceTable:
    track = track_of["slices"]
    start = raw.column("slices", "start", np.int64)
    dur = raw.column("slices", "dur", np.int64)
    event_id = raw.column("slices", "event_id", np.int64)
    order = _slice_order(track, start, dur, event_id)

    def ordered(name: str, values: np.ndarray) -> np.ndarray:
        return np.take(values, order, out=allocate(f"slices.{name}", values.dtype, len(order)) if allocate else None)

    track, start, dur, event_id = (ordered("track", track), ordered("start", start), ordered("dur", dur),
                                   ordered("event_id", event_id))
    columns = _OrderedColumns(raw, "slices", order, allocate)
    if len(order) < _GATHER_THREAD_MIN_ROWS:
        depth, parent = nesting(track, start, start + dur)
        gathered = columns.gather(_SLICE_COLUMNS)
    else:  # the gathers release the GIL: one thread puts the columns in order while this one nests the slices
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # joined here: forking stays safe
            future = pool.submit(columns.gather, _SLICE_COLUMNS)
            depth, parent = nesting(track, start, start + dur)
            gathered = future.result()
    return SliceTable(event_id=event_id, track=track, start=start, dur=dur, depth=depth, parent=parent, **gathered)


# The slice columns the build only puts in order (the others it computes), with their dtypes.
_SLICE_COLUMNS = (
    ("name", np.int32), ("cat", np.int32), ("external_id", np.int64), ("correlation", np.int64),
    ("input_dims", np.int32), ("input_type", np.int32), ("concrete_inputs", np.int32), ("call_stack", np.int32),
    ("sequence", np.int64), ("python_id", np.int64), ("python_parent_id", np.int64), ("device", np.int32), ("stream", np.int64),
    ("grid", np.int32), ("block", np.int32), ("blocks_per_sm", np.float32), ("warps_per_sm", np.float32),
    ("occupancy", np.float32), ("nbytes", np.int64), ("collective", np.int32), ("in_msg_nelems", np.int64),
    ("out_msg_nelems", np.int64), ("dtype", np.int32), ("group_size", np.int32), ("process_group", np.int32),
    ("collective_seq", np.int64),
)
# From this many slices, the gathers run in a thread beside the nesting (10 M slices: ~1 s saved).
_GATHER_THREAD_MIN_ROWS = 1 << 20


class _OrderedColumns:
    """A table's raw columns, each concatenated from its parts and put in ``order`` (into the array ``allocate``
    gives, if any).

    Fresh memory is what a large build pays for most (on a virtual machine whose host reclaims freed pages, a first
    touch costs ~2 s per GB): every column is concatenated into one reused scratch buffer, and a column holding one
    value throughout (the collective columns of a trace without collectives...) becomes a read-only broadcast view of
    that value, as the cache stores it, with no copy at all.
    """

    def __init__(self, raw: RawColumns, table: str, order: np.ndarray, allocate: Optional[Allocate]) -> None:
        self.table = table
        self.parts = raw.parts.get(table, {})
        self.order = order
        self.allocate = allocate
        self.scratch: Optional[np.ndarray] = None

    def gather(self, columns: Sequence[tuple[str, Any]]) -> dict[str, np.ndarray]:
        return {key: self(key, dtype) for key, dtype in columns}

    def __call__(self, key: str, dtype: Any) -> np.ndarray:
        n = len(self.order)
        parts = self.parts.get(key, [])
        if n == 0 or not parts:
            return np.zeros(0, dtype=dtype)[self.order]
        value = _one_value(parts, dtype)
        if value is not None:
            parts.clear()
            return np.broadcast_to(value, (n,))
        if self.scratch is None:
            self.scratch = np.empty(n * 8, dtype=np.uint8)
        whole = self.scratch[: n * np.dtype(dtype).itemsize].view(dtype)
        np.concatenate(parts, out=whole, casting="unsafe")
        parts.clear()  # free the parts as soon as the whole column exists
        return np.take(whole, self.order, out=self.allocate(f"{self.table}.{key}", dtype, n) if self.allocate else None)


def _one_value(parts: list[np.ndarray], dtype: Any) -> Optional[np.ndarray]:
    """The value (a 0-d array of ``dtype``) that every part holds throughout, else None (NaN counts as one value)."""
    first: Optional[np.ndarray] = None
    for part in parts:
        if len(part) == 0:
            continue
        values = part.astype(dtype, copy=False)
        bits = values.view(f"u{values.dtype.itemsize}")
        if first is None:
            first = values[:1].copy()
        if not (bits == first.view(bits.dtype)[0]).all():
            return None
    return None if first is None else first.reshape(())


def _slice_order(track: np.ndarray, start: np.ndarray, dur: np.ndarray, event_id: np.ndarray) -> np.ndarray:
    """The order of ``np.lexsort((event_id, -dur, start, track))``, computed faster.

    One stable sort of a (track, start) key does most of it (event ids grow in file order, so
    stability orders them); only slices tying on (track, start) are re-sorted by -dur.
    """
    if len(start) == 0:
        return np.zeros(0, dtype=np.intp)
    t0 = int(start.min())
    span = int(start.max()) - t0 + 1
    if int(track.max()) >= (1 << 62) // span or not bool(np.all(event_id[1:] > event_id[:-1])):
        return np.lexsort((event_id, -dur, start, track))
    key = track.astype(np.int64) * span + (start - t0)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    tie = sorted_key[1:] == sorted_key[:-1]
    if tie.any():
        in_group = np.r_[tie, False] | np.r_[False, tie]
        rows = np.flatnonzero(in_group)
        group = np.cumsum(np.r_[True, sorted_key[1:] != sorted_key[:-1]])[rows]
        tied = order[rows]
        order[rows] = tied[np.lexsort((event_id[tied], -dur[tied], group))]
    return order


def _describe_tracks(raw: RawColumns, tracks_info: list[tuple[int, int]], slices: SliceTable) -> list[Track]:
    text = raw.strings.strings
    process_name: dict[int, str] = {}
    process_sort: dict[int, int] = {}
    process_labels: dict[int, str] = {}
    thread_name: dict[tuple[int, int], str] = {}
    thread_sort: dict[tuple[int, int], int] = {}
    for kind, pid, tid, args in raw.meta_events:
        if kind == "process_name" and args.name:
            process_name[pid] = args.name
        elif kind == "process_labels" and args.labels:
            process_labels[pid] = args.labels
        elif kind == "process_sort_index" and args.sort_index >= 0:
            process_sort[pid] = args.sort_index
        elif kind == "thread_name" and args.name:
            thread_name[(pid, tid)] = args.name
        elif kind == "thread_sort_index" and args.sort_index >= 0:
            thread_sort[(pid, tid)] = args.sort_index

    n_tracks = len(tracks_info)
    device_cat = np.fromiter((s in DEVICE_CATEGORIES for s in text), dtype=bool, count=len(text))
    on_device = np.zeros(n_tracks, dtype=bool)
    if len(slices):
        on_device[np.unique(slices.track[device_cat[slices.cat]])] = True
    max_depth = np.zeros(n_tracks, dtype=np.int64)
    if len(slices):
        np.maximum.at(max_depth, slices.track, slices.depth.astype(np.int64))
    device_of = np.full(n_tracks, -1, dtype=np.int64)
    if len(slices):
        has_device = slices.device >= 0
        device_of[slices.track[has_device]] = slices.device[has_device]

    tracks: list[Track] = []
    for track_id, (pid, tid) in enumerate(tracks_info):
        pid_text, tid_text = text[pid], text[tid] if tid < len(text) else ""
        pname = process_name.get(pid, "")
        gpu_match = _GPU_PROCESS.match(pname)
        is_gpu = bool(on_device[track_id]) or bool(gpu_match)
        device = int(device_of[track_id]) if device_of[track_id] >= 0 else None
        if device is None and gpu_match:
            device = int(gpu_match.group(1))
        if device is None and is_gpu and pid_text.isdigit():
            device = int(pid_text)
        if is_gpu and device is not None and "gpu" not in pname.lower() and not _ACCELERATOR_PROCESS.search(pname):
            pname = f"GPU {device}"  # device lanes are grouped by device, whatever the host process is called
        tracks.append(
            Track(
                id=track_id, pid=pid_text, tid=tid_text, kind="gpu" if is_gpu else "cpu",
                process_name=pname or f"process {pid_text}",
                thread_name=thread_name.get((pid, tid), "") or _default_thread_name(tid_text, is_gpu),
                process_sort=process_sort.get(pid, int(pid_text) if pid_text.lstrip("-").isdigit() else 0),
                thread_sort=thread_sort.get((pid, tid), int(tid_text) if tid_text.lstrip("-").isdigit() else 0),
                device=device, max_depth=int(max_depth[track_id]),
            )
        )
    return tracks


def _default_thread_name(tid: str, is_gpu: bool) -> str:
    if is_gpu:
        return tid if tid.startswith("stream") else f"stream {tid}"
    return f"thread {tid}"


def _build_instants(raw: RawColumns, track_of: dict[str, np.ndarray]) -> InstantTable:
    c = raw.column
    return InstantTable(
        event_id=c("instants", "event_id", np.int64), track=track_of["instants"], ts=c("instants", "ts", np.int64),
        name=c("instants", "name", np.int32), cat=c("instants", "cat", np.int32),
        addr=c("instants", "addr", np.int64), bytes=c("instants", "bytes", np.int64),
        total_allocated=c("instants", "total_allocated", np.int64),
        total_reserved=c("instants", "total_reserved", np.int64),
        device_type=c("instants", "device_type", np.int16), device_id=c("instants", "device_id", np.int16),
    )


def _build_counters(raw: RawColumns, track_of: dict[str, np.ndarray]) -> CounterTable:
    c = raw.column
    return CounterTable(
        event_id=c("counters", "event_id", np.int64), track=track_of["counters"], ts=c("counters", "ts", np.int64),
        name=c("counters", "name", np.int32), series=c("counters", "series", np.int32),
        value=c("counters", "value", np.float64),
    )


def slice_at(slices: SliceTable, track: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Row of the innermost slice on ``track`` that contains ``ts`` (-1 if none)."""
    if len(slices) == 0 or len(ts) == 0:
        return np.full(len(ts), -1, dtype=np.int32)
    # Slices are sorted by (track, start): the queries of each track search that track's starts (a composite key over
    # every slice cost two whole-column temporaries, 0.8 s at ten million slices).
    order = np.argsort(track, kind="stable")
    sorted_track = track[order]
    group = np.flatnonzero(np.r_[True, sorted_track[1:] != sorted_track[:-1]])
    lows = np.searchsorted(slices.track, sorted_track[group], side="left")
    highs = np.searchsorted(slices.track, sorted_track[group], side="right")
    candidate = np.full(len(ts), -1, dtype=np.int64)
    for first, last, lo, hi in zip(group.tolist(), np.r_[group[1:], len(ts)].tolist(), lows.tolist(), highs.tolist()):
        if lo < hi:
            queries = order[first:last]
            row = np.searchsorted(slices.start[lo:hi], ts[queries], side="right") - 1
            candidate[queries] = np.where(row >= 0, row + lo, -1)
    found = np.full(len(ts), -1, dtype=np.int64)
    # Walk up the parents until the slice contains ts (a few steps at most).
    for _ in range(64):
        ok = (candidate >= 0) & (found < 0)
        if not ok.any():
            break
        idx = np.where(ok, candidate, 0)
        contains = ok & (slices.start[idx] <= ts) & (slices.start[idx] + slices.dur[idx] >= ts)
        found = np.where(contains, candidate, found)
        candidate = np.where(ok & ~contains, slices.parent[idx].astype(np.int64), -1)
    return found.astype(np.int32)


def _build_flows(raw: RawColumns, track_of: dict[str, np.ndarray], slices: SliceTable) -> FlowTable:
    """Pair flow starts with flow ends of the same (category, id) and bind both to slices."""
    flow_id = raw.column("flows", "flow_id", np.int64)
    phase = raw.column("flows", "phase", np.int8)
    cat = raw.column("flows", "cat", np.int32)
    ts = raw.column("flows", "ts", np.int64)
    track = track_of["flows"]
    raw.column("flows", "enclosing", bool)  # read to free it: binding uses the innermost slice at ts
    bound = slice_at(slices, track, ts)
    starts = np.flatnonzero(phase == FLOW_START)
    ends = np.flatnonzero(phase == FLOW_END)
    # For each end, the start with the same (category, id): the last one seen, if ids were reused.
    # Flow categories are few (ac2g, fwdbwd...): one id lookup per category.
    source = np.full(len(ends), -1, dtype=np.int64)
    categories, cat_code = factorize(cat)
    for code in range(len(categories)):
        cat_starts = starts[cat_code[starts] == code]
        in_cat = np.flatnonzero(cat_code[ends] == code)
        source[in_cat] = _lookup(flow_id[cat_starts], cat_starts, flow_id[ends[in_cat]])
    matched = source >= 0
    src_rows = source[matched]
    dst_rows = ends[matched]
    return FlowTable(
        cat=cat[dst_rows], src=bound[src_rows], dst=bound[dst_rows], src_ts=ts[src_rows], dst_ts=ts[dst_rows]
    )


def _build_links(slices: SliceTable, text: list[str], flows: FlowTable) -> LinkTable:
    """Device activity → launching runtime call (correlation) → operator (External id).

    Writers that give no correlation still draw a flow from the launch to its device activity
    (DeepLink's DIPU: ``ac2g``; Ascend's timelines: ``HostToDevice``): any flow from a runtime call
    to a device activity links them instead.

    An External id is only a number, and some writers reuse numbers across kinds of event (a trace
    whose runtime calls carry their correlation id as External id: those ids then name unrelated
    operators). So a runtime call keeps the operator its External id names only where that operator
    encloses the call in time (it launched it); otherwise, and without an External id, the call
    belongs to the innermost operator that encloses it on its thread. Device activity takes the
    operator of the runtime call that launched it; only activity with no launching call is linked
    by its own External id (to an operator that started before it: work never runs before its launch)."""
    n = len(slices)
    launcher = np.full(n, -1, dtype=np.int32)
    op = np.full(n, -1, dtype=np.int32)
    if n == 0:
        return LinkTable(launcher=launcher, op=op)
    cat_is = lambda names: np.fromiter((s in names for s in text), dtype=bool, count=len(text))  # noqa: E731
    is_device = cat_is(DEVICE_CATEGORIES)[slices.cat]
    is_runtime = cat_is(RUNTIME_CATEGORIES)[slices.cat]
    is_operator = cat_is({"cpu_op", "Operator", "user_annotation"})[slices.cat]

    runtime_rows = np.flatnonzero(is_runtime)
    device_rows = np.flatnonzero(is_device & (slices.correlation >= 0))
    correlated = runtime_rows[slices.correlation[runtime_rows] >= 0]
    launcher[device_rows] = _lookup(slices.correlation[correlated], correlated, slices.correlation[device_rows])
    if len(flows.src):
        launch_flow = (flows.src >= 0) & (flows.dst >= 0)
        src, dst = flows.src[launch_flow], flows.dst[launch_flow]
        unlinked = (launcher[dst] < 0) & is_device[dst] & is_runtime[src]
        if unlinked.any():
            launcher[dst[unlinked]] = src[unlinked]
            # Rows are below n: a mask merges them in O(n) (np.union1d hashes or sorts them all: 0.7 s at 10 M slices).
            rows = np.zeros(n, dtype=bool)
            rows[device_rows] = True
            rows[dst[unlinked]] = True
            device_rows = np.flatnonzero(rows)

    op_rows = np.flatnonzero(is_operator & (slices.external_id >= 0))
    # Several slices can share an External id (an annotation and its op); keep the innermost.
    op_rows = op_rows[np.argsort(slices.depth[op_rows], kind="stable")]
    end = slices.start + slices.dur

    named = _lookup(slices.external_id[op_rows], op_rows, slices.external_id[runtime_rows])
    safe = np.maximum(named, 0)
    encloses = (named >= 0) & (slices.start[safe] <= slices.start[runtime_rows]) & (end[safe] >= end[runtime_rows])
    enclosing = nearest_ancestor_where(slices, is_operator)[runtime_rows]
    op[runtime_rows] = np.where(encloses, named, enclosing)

    launched = device_rows[launcher[device_rows] >= 0]
    op[launched] = op[launcher[launched]]
    unlaunched = np.flatnonzero(is_device & (launcher < 0) & (slices.external_id >= 0))
    named = _lookup(slices.external_id[op_rows], op_rows, slices.external_id[unlaunched])
    before = (named >= 0) & (slices.start[np.maximum(named, 0)] <= slices.start[unlaunched])
    op[unlaunched] = np.where(before, named, -1)
    return LinkTable(launcher=launcher, op=op)


def _lookup(keys: np.ndarray, rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """rows[k] for the last k with keys[k] == query, else -1 (vectorised dict lookup)."""
    if len(keys) == 0 or len(queries) == 0:
        return np.full(len(queries), -1, dtype=np.int32)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pos = np.searchsorted(sorted_keys, queries, side="right") - 1
    safe = np.maximum(pos, 0)
    hit = (pos >= 0) & (sorted_keys[safe] == queries)
    return np.where(hit, rows[order[safe]], -1).astype(np.int32)


def _build_steps(slices: SliceTable, tracks: list[Track], text: list[str], stats: dict[str, Any]) -> StepTable:
    """``ProfilerStep#N`` (Paddle: ``ProfileStep#N``) ranges on host tracks.

    The GPU-side annotation copies are not steps. A marker whose number does not fit 64 bits is no step
    (a note in ``stats`` says so)."""
    step_number = np.full(len(text), -1, dtype=np.int64)
    too_large = []
    for i, s in enumerate(text):
        m = _STEP_NAME.match(s)
        if m:
            number = int(m.group(1))
            if number < 2**63:
                step_number[i] = number
            else:
                too_large.append(s)
    if too_large:
        shown = too_large[0] if len(too_large[0]) <= 40 else too_large[0][:37] + "..."
        stats.setdefault("notes", []).append(
            f"{len(too_large)} step marker name(s) with a number too large to read ({shown}): not counted as steps.")
    if len(slices) == 0 or not (step_number >= 0).any():
        return StepTable(*(np.zeros(0, dtype=t) for t in (np.int64, np.int32, np.int64, np.int64, np.int32)))
    host_track = np.array([t.kind == "cpu" for t in tracks], dtype=bool)
    rows = np.flatnonzero((step_number[slices.name] >= 0) & host_track[slices.track])
    # One range per step number (a step can show up on several host threads: keep the longest).
    rows = rows[np.lexsort((-slices.dur[rows], step_number[slices.name[rows]]))]
    numbers = step_number[slices.name[rows]]
    first = np.r_[True, numbers[1:] != numbers[:-1]] if len(rows) else np.zeros(0, bool)
    rows = rows[first]
    rows = rows[np.argsort(slices.start[rows], kind="stable")]
    return StepTable(
        number=step_number[slices.name[rows]], name=slices.name[rows], start=slices.start[rows],
        end=slices.end_at(rows), slice_row=rows.astype(np.int32),
    )
