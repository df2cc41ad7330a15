"""The critical path of a training step: the chain of dependent work that decides how long the step lasts.

The step's work is a graph whose nodes are the start and the end of each of its slices: the host slices that lie in
the step's host range (operators, annotations, runtime calls; any thread; not Kineto's own range over the recording,
``PyTorch Profiler (0)``), the device work they launched (kernels, copies, memsets, device-side sync records), and
the device work queued before the step that still runs or waits in its stream when the step starts (launched before
its host range, or by a call the trace does not hold: the profiler started with a full queue), taken from the step's
start. Its edges are the dependencies a trace shows:

* ``duration``: a slice's start → its end;
* on a host thread, ``nesting``: a range's start → each child's start; ``return``: a child's end → its parent's end;
  ``order``: a child's end → its next sibling's start; ``thread``: a top-level slice's end → the next top-level
  slice's start on the same thread; ``cross_thread``: the latest start or end on the step's own thread → a top-level
  slice of another thread that starts after it (the step's thread hands work to autograd's backward thread), and
  ``join``: that slice's end → the step's thread's first start or end after it (the step's thread goes on);
* ``launch``: a runtime call's start → the start of the device work it launched (by the model's correlation links);
  ``own_work``: a copy's end (or a device sync record's) → its call's end when the call returned after it (a
  synchronous copy: a pageable ``cudaMemcpyAsync``, ``cudaMemcpy``; a kernel's launch returns whether or not its
  kernel has run);
* ``stream``: on one device stream, the activity that ended last before an activity started → its start (a stream
  runs in order; the kernels of a CUDA graph reported on the launching stream may overlap);
* ``sync``: the end of the device work that a blocking sync waited for → the end of the sync
  (``cudaDeviceSynchronize``, ``cudaStreamSynchronize``, ``cudaEventSynchronize``, their HIP names, MTIA's
  ``synchronizeStream`` and ``synchronize``, and the device's own sync records): the work that ends last among everything launched before the sync began and finished
  by its end (on the synced stream only where a ``Stream Sync`` record names it);
* ``wait_event``: ``cudaStreamWaitEvent``: the last device work launched before the thread's latest
  ``cudaEventRecord`` → the first work the thread launches after the wait on another stream;
* ``start``: the step's start → every slice's start (what a slice that nothing else released follows: the first
  slice of a thread).

Every edge weighs the time between its two nodes, so every path from the step's start to a node has the same
length — the node's time less the step's start — and the longest-path recursion over the graph in topological order,
``dist[v] = max(dist[u] + w(u, v))``, is a tie everywhere. What decides the path is which dependency a node actually
waited for: of its incoming edges, the one whose source came last (the edge with no slack, as in critical path
profiling of a recorded run). That choice is a local argmax, computed for all nodes at once with one sort of the
edge arrays; the path is then read back from the step's last node. Its length telescopes to the last node's time
less the first: the step's span from the start of its host range (its first CPU event) to the end of the last device
work it launched (or the end of the host range when that is later) — ``steps.find_steps``' end of the step.

Nodes at one instant are common (integer microseconds: one slice ends at the very microsecond the next starts), and
their order decides which edges exist (``_rank``): ends of device work, then the host, then starts of device work;
within the host and within the device, the order of a walk of the nesting (a slice that ends at an instant comes
before the sibling that starts then, a child's end before its parent's).

Each edge's time goes to one kind: ``cpu_op`` (host operators and annotations: the time inside the innermost host
range), ``launch`` (runtime and driver calls other than syncs, and the delay from a launch to its work's start),
``kernel``, ``copy`` (memcpy and memset), ``sync`` (blocking sync calls and device sync records, the time from the
awaited work's end to the sync's end, cross-stream waits), ``idle`` (a stream waiting between two activities, a
thread between two top-level slices, a thread's first slice after the step's start).

How this differs from HTA's ``CriticalPathAnalysis`` (HTA 0.5.0), which builds the same kinds of edges but takes the
path of greatest weight with its dependency and sync edges (between top-level operators on a thread, from a kernel
to the sync that waited for it) and the rest of a blocking call weighing zero; it counts only operators and runtime
calls on the host (not annotations such as the step's own range); its graph holds the device work launched by the
step's host calls, one kernel per ``cudaGraphLaunch``; a kernel whose launch found work queued on its stream follows
the stream's previous kernel of that graph, however long the stream then sat idle (its "kernel-kernel overhead");
it finds syncs and cross-stream waits only through the device's sync records (``cuda_sync``). Where these models
meet (a step bound by its kernels, or by its host) the device time on both paths agrees within 1%; where they do not,
``tests/test_critical_path.py`` measures the difference and its causes on HTA's own test traces.

``tests/test_critical_path.py`` checks exact paths on hand-made traces, the length on every real trace and every
hostile-corpus file, and the device time against HTA's path on eleven steps of real traces. The parser pool
precomputes the first step (``views/answers.parser_answers``); the trace viewer highlights the path (ids of its
slices, and its stretches per row) and shows the breakdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ...model.categories import SliceKinds
from ...model.steps import find_steps
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US


KINDS = ("cpu_op", "launch", "kernel", "copy", "sync", "idle")
_CPU_OP, _LAUNCH, _KERNEL, _COPY, _SYNC, _IDLE = range(len(KINDS))

# Edge types; when two incoming edges of a node come from the same instant, the later one in this list wins
# (a node that waited on the device is shown waiting on the device).
EDGES = ("start", "thread", "cross_thread", "join", "duration", "nesting", "order", "return", "launch", "stream",
         "own_work", "wait_event", "sync")
(_E_START, _E_THREAD, _E_CROSS_THREAD, _E_JOIN, _E_DURATION, _E_NESTING, _E_ORDER, _E_RETURN, _E_LAUNCH, _E_STREAM,
 _E_OWN_WORK, _E_WAIT_EVENT, _E_SYNC) = range(len(EDGES))

PROFILER_RANGE_CATEGORY = "Trace"
_KIND_NAMES = np.array(KINDS, dtype=object)
_EDGE_NAMES = np.array(EDGES, dtype=object)
BLOCKING_SYNC_NAME = re.compile(r"^((cuda|hip)(Device|Stream|Event)Synchronize|synchronize(Stream)?)$")  # MTIA's
STREAM_WAIT_EVENT_NAME = re.compile(r"^(cuda|hip)StreamWaitEvent$")
EVENT_RECORD_NAME = re.compile(r"^(cuda|hip)EventRecord(WithFlags)?$")


def _name_table(model: TraceModel, pattern: re.Pattern[str]) -> np.ndarray:
    """Per interned string: does it match ``pattern`` (once per model)."""
    return model.memo(("critical_path_names", pattern.pattern),
                      lambda: model.string_ids_where(lambda text: bool(pattern.match(text))))


class StepNotFound(ValueError):
    """The step asked for is not one of the span's steps."""


@dataclass(frozen=True)
class _Graph:
    rows: np.ndarray  # slice rows of the step's nodes: node k is start(rows[k]), node n + k is end(rows[k])
    kind: np.ndarray  # int8 per local slice: one of KINDS
    ts: np.ndarray  # int64 ns per node; node 2n is the step's start
    src: np.ndarray  # int64 edge arrays
    dst: np.ndarray
    edge: np.ndarray  # int8: one of EDGES
    owner: np.ndarray  # int64: local slice the edge's time is attributed to (-1: none)
    owner_kind: np.ndarray  # int8: one of KINDS


def critical_path(model: TraceModel, step: Optional[int] = None, marker: Optional[str] = None) -> dict[str, Any]:
    """The critical path of step ``step`` (an index into the overview's steps; the first step by default)."""
    steps = find_steps(model, marker)
    index = 0 if step is None else int(step)
    if not 0 <= index < len(steps):
        raise StepNotFound(f"step must be between 0 and {len(steps) - 1}")
    return model.memo(("critical_path_view", marker, index), lambda: _critical_path(model, marker, index))


def _critical_path(model: TraceModel, marker: Optional[str], index: int) -> dict[str, Any]:
    steps = find_steps(model, marker)
    host_start, host_end = int(steps.host_start[index]), int(steps.host_end[index])
    s = model.slices
    # The step's own range (ProfilerStep#N, or the marker's range), when the step is one.
    own = np.flatnonzero((s.start == host_start) & (s.name == model.string_id(steps.names[index])))
    own = own[s.end_at(own) == host_end]
    return {
        "step": {"index": index, "name": steps.names[index], "id": int(s.event_id[own[0]]) if len(own) else None,
                 "start": host_start / NS_PER_US, "end": int(steps.end[index]) / NS_PER_US},
        "steps": [{"name": name, "start": int(a) / NS_PER_US, "end": int(b) / NS_PER_US}
                  for name, a, b in zip(steps.names, steps.host_start.tolist(), steps.end.tolist())],
        **path_of_window(model, host_start, host_end),
    }


def path_of_window(model: TraceModel, host_start: int, host_end: int) -> dict[str, Any]:
    """The critical path of the work in a host range (ns): its host slices and the device work they launched."""
    s = model.slices
    graph = _build_graph(model, host_start, host_end)
    n = len(graph.rows)
    pred, pred_edge = _last_arrivals(graph, 2 * n + 1)
    sink = _sink(graph.ts, n)
    nodes, edges = _walk_back(pred, pred_edge, sink, source=2 * n)

    # Per path edge: time and the slice and kind it is attributed to.
    edge_time = graph.ts[nodes[1:]] - graph.ts[nodes[:-1]]
    owner, owner_kind = graph.owner[edges], graph.owner_kind[edges]
    by_kind = np.bincount(owner_kind, weights=edge_time, minlength=len(KINDS)).astype(np.int64)
    length = int(graph.ts[sink] - graph.ts[2 * n])
    path = _path_columns(model, graph, nodes, edges, edge_time, owner, owner_kind)
    # Every slice the path enters or leaves: what the trace viewer highlights.
    slice_nodes = nodes[nodes < 2 * n]
    on_path = np.unique(np.where(slice_nodes >= n, slice_nodes - n, slice_nodes))
    return {
        "length": length / NS_PER_US,
        "span": {"start": int(graph.ts[2 * n]) / NS_PER_US, "end": int(graph.ts[sink]) / NS_PER_US},
        "breakdown": [{"kind": kind, "time": int(by_kind[k]) / NS_PER_US,
                       "share": float(by_kind[k] / length) if length > 0 else 0.0}
                      for k, kind in enumerate(KINDS)],
        "path": path,
        "ids": s.event_id[graph.rows[on_path]].tolist(),
        "graph": {"slices": n, "edges": int(len(graph.src))},
    }


@dataclass(frozen=True)
class _Roles:
    """What each slice of the model is to the critical path (computed once per model)."""

    kind: np.ndarray  # int8: one of KINDS
    host: np.ndarray  # bool: a host slice (not device activity, not the profiler's own range)
    profiler_range: np.ndarray  # bool: Kineto's range over the recording
    device: np.ndarray  # bool: device work or a device sync record, launched by a runtime call
    work: np.ndarray  # bool: device work (kernels, copies, memsets), launched by a runtime call in the trace or not
    device_sync: np.ndarray  # bool: a device sync record
    blocking_sync: np.ndarray  # bool: a runtime call that blocks until device work is done


def _roles(model: TraceModel) -> _Roles:
    def compute() -> _Roles:
        kinds, s = SliceKinds(model), model.slices
        blocking = kinds.runtime & _name_table(model, BLOCKING_SYNC_NAME)[s.name]
        kind = np.full(len(s), _CPU_OP, dtype=np.int8)
        kind[kinds.runtime] = _LAUNCH
        kind[kinds.kernel] = _KERNEL
        kind[kinds.memcpy | kinds.memset] = _COPY
        kind[kinds.device_sync | blocking] = _SYNC
        device = (kinds.device_work | kinds.device_sync) & (model.links.launcher >= 0)
        # Kineto's own range over the recording (``PyTorch Profiler (0)``, category Trace) is no work of the job.
        profiler_range = s.cat == model.string_id(PROFILER_RANGE_CATEGORY)
        return _Roles(kind=kind, host=~kinds.device_activity & ~profiler_range, profiler_range=profiler_range, device=device, work=kinds.device_work,
                      device_sync=kinds.device_sync, blocking_sync=blocking)

    return model.memo("critical_path_roles", compute)


def _build_graph(model: TraceModel, host_start: int, host_end: int) -> _Graph:
    s, roles = model.slices, _roles(model)
    host_rows = np.flatnonzero(roles.host & (s.start >= host_start) & (s.end <= host_end))
    in_host = np.zeros(len(s), dtype=bool)
    in_host[host_rows] = True
    launcher = model.links.launcher
    linked = roles.device.copy()
    linked[linked] = in_host[launcher[linked]]
    own_rows = np.flatnonzero(linked)
    carried_rows = _carried_work(model, roles, host_start, host_end, own_rows)
    device_rows = np.concatenate([own_rows, carried_rows])
    device_rows.sort(kind="stable")
    rows = np.concatenate([host_rows, device_rows])
    n, n_host = len(rows), len(host_rows)
    local = np.full(len(s), -1, dtype=np.int64)
    local[rows] = np.arange(n)
    # Work carried over from before the step is taken from the step's start: what the step waited for.
    start, end = np.maximum(s.start[rows], host_start), s.end_at(rows)
    source_ts = host_start
    ts = np.concatenate([start, end, [source_ts]]).astype(np.int64)
    kind = roles.kind[rows]
    source = 2 * n
    parts: list[tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]] = []

    def add(src: np.ndarray, dst: np.ndarray, edge: int, owner: np.ndarray, owner_kind: Any) -> None:
        owner_kind = np.broadcast_to(np.asarray(owner_kind, dtype=np.int8), src.shape)
        parts.append((src.astype(np.int64), dst.astype(np.int64), edge, owner.astype(np.int64), owner_kind))

    everyone = np.arange(n)
    add(everyone, everyone + n, _E_DURATION, everyone, kind)

    # Nesting among the step's slices: the nearest enclosing slice of the graph (the profiler's own range is
    # skipped; a parent outside the step counts as none).
    parent_row = s.parent[rows].astype(np.int64)
    while True:
        skipped = np.flatnonzero(parent_row >= 0)
        skipped = skipped[roles.profiler_range[parent_row[skipped]]]
        if not len(skipped):
            break
        parent_row[skipped] = s.parent[parent_row[skipped]]
    parent_all = np.where(parent_row >= 0, local[np.maximum(parent_row, 0)], -1)
    launch = np.where(launcher[device_rows] >= 0, local[launcher[device_rows]], -1)  # -1: launched before the step
    rank = _rank(ts, n, n_host, parent_all, s.depth[rows], launch)

    # Host threads: nesting, then program order among siblings and among top-level slices.
    host = np.arange(n_host)
    parent = parent_all[:n_host]
    nested = host[parent >= 0]
    add(parent[parent >= 0], nested, _E_NESTING, parent[parent >= 0], kind[parent[parent >= 0]])
    add(nested + n, parent[parent >= 0] + n, _E_RETURN, parent[parent >= 0], kind[parent[parent >= 0]])
    track = s.track[host_rows].astype(np.int64)
    order = np.lexsort((start[:n_host], parent, track))
    same = (track[order][1:] == track[order][:-1]) & (parent[order][1:] == parent[order][:-1])
    prev, nxt = order[:-1][same], order[1:][same]
    top = parent[nxt] < 0
    add(prev[~top] + n, nxt[~top], _E_ORDER, parent[nxt[~top]], kind[parent[nxt[~top]]])
    add(prev[top] + n, nxt[top], _E_THREAD, nxt[top], _IDLE)
    # Every start can follow the step's start: the fallback of a slice that nothing else released.
    add(np.full(n, source), everyone, _E_START, everyone, _IDLE)
    _add_cross_thread_edges(ts, rank, track, parent, kind, n, n_host, add)

    # Device work: its launch, stream order, and the calls that waited for it.
    dev = np.arange(n_host, n)
    has_launch = launch >= 0
    add(launch[has_launch], dev[has_launch], _E_LAUNCH, launch[has_launch], _LAUNCH)
    # Only a copy, or a sync the device records, holds its call until it is done (a launch returns whether or not
    # its kernel has run).
    copy = has_launch & ((kind[dev] == _COPY) | (kind[dev] == _SYNC))
    add(dev[copy] + n, launch[copy] + n, _E_OWN_WORK, launch[copy], _SYNC)
    work = dev[~roles.device_sync[device_rows]]
    _add_stream_edges(rank, s.track[rows[work]].astype(np.int64), work, n, add)
    _add_sync_edges(model, roles, rows, local, ts, n, n_host, work, add)
    _add_wait_event_edges(model, rows, local, ts, n, n_host, work, add)

    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    edge = np.concatenate([np.full(len(p[0]), p[2], dtype=np.int8) for p in parts])
    owner = np.concatenate([p[3] for p in parts])
    owner_kind = np.concatenate([p[4] for p in parts])
    forward = rank[src] < rank[dst]  # an edge back in time is a clock artefact, never a dependency
    return _Graph(rows=rows, kind=kind, ts=ts, src=src[forward], dst=dst[forward], edge=edge[forward],
                  owner=owner[forward], owner_kind=owner_kind[forward])


def _add_stream_edges(rank: np.ndarray, lane: np.ndarray, work: np.ndarray, n: int, add: Any) -> None:
    """A stream runs its work in order: each activity waits for the activity of its lane that ended last before it
    started (the previous one; where a lane's activities overlap, as the kernels of a CUDA graph reported on the
    launching stream can, the latest one that had ended)."""
    if not len(work):
        return
    by_end = np.lexsort((rank[work + n], lane))
    end_lane, end_rank = lane[by_end], rank[work[by_end] + n]
    # Per activity: the last activity of its lane (in the order of ends) that ended before it started.
    lane_lo = np.searchsorted(end_lane, lane, side="left")
    key_lane = np.concatenate([end_lane, lane])
    key_rank = np.concatenate([end_rank, rank[work]])
    merged = np.lexsort((np.r_[np.zeros(len(work)), np.ones(len(work))], key_rank, key_lane))
    # The position of each start among the ends of all lanes, counted in the merged order.
    is_start = merged >= len(work)
    ends_before = np.cumsum(~is_start)[is_start] - 1
    at = np.empty(len(work), dtype=np.int64)
    at[merged[is_start] - len(work)] = ends_before
    has = at >= lane_lo
    prev = work[by_end[at[has]]]
    add(prev + n, work[has], _E_STREAM, work[has], _IDLE)


def _carried_work(model: TraceModel, roles: _Roles, host_start: int, host_end: int,
                  own_rows: np.ndarray) -> np.ndarray:
    """Device work launched before the step's host range that still runs, or waits in its stream's queue, when the
    step starts, and ends by the end of the step's own work: the work a step of a device-bound job waits for
    first (the previous step's kernels ahead of its own on the stream, the copy a blocking call waited for)."""
    s, launcher = model.slices, model.links.launcher
    step_end = max(host_end, int(s.end_at(own_rows).max())) if len(own_rows) else host_end
    candidates = np.flatnonzero(roles.work & (s.start < step_end) & (s.end > host_start))
    launch = launcher[candidates]
    # Work whose launch is not in the trace (queued before the profiler started) was launched before the step too.
    before = (launch < 0) | (s.start[np.maximum(launch, 0)] < host_start)
    return candidates[before & (s.end_at(candidates) <= step_end)]


def _path_columns(model: TraceModel, graph: _Graph, nodes: np.ndarray, edges: np.ndarray, edge_time: np.ndarray,
                  owner: np.ndarray, owner_kind: np.ndarray) -> dict[str, Any]:
    """The path as columns, one entry per stretch of time given to one slice (or to no slice) in a row; edges that
    take no time are left out (``ids`` still lists the slices they pass)."""
    s = model.slices
    timed = np.flatnonzero(edge_time > 0)
    owner_t, kind_t = owner[timed], owner_kind[timed]
    new_entry = np.ones(len(timed), dtype=bool)
    new_entry[1:] = (owner_t[1:] != owner_t[:-1]) | (kind_t[1:] != kind_t[:-1])
    first = np.flatnonzero(new_entry)
    last = np.append(first[1:], len(timed))[:len(first)] - 1  # no timed edge: no entry (an empty path)
    times = np.add.reduceat(edge_time[timed], first) if len(first) else np.zeros(0, dtype=np.int64)
    start_ns, end_ns = graph.ts[nodes[timed[first]]], graph.ts[nodes[timed[last] + 1]]
    has_slice = owner_t[first] >= 0
    rows = np.where(has_slice, graph.rows[np.maximum(owner_t[first], 0)], 0)
    name_ids, name_index = np.unique(s.name[rows], return_inverse=True)
    names = [model.strings[int(i)] for i in name_ids]
    track_ids, track_index = np.unique(s.track[rows], return_inverse=True)
    tracks = [f"s{int(i)}" for i in track_ids]

    everywhere = bool(has_slice.all())

    def column(values: np.ndarray) -> list[Any]:
        if everywhere:
            return values.tolist()
        out = values.astype(object)
        out[~has_slice] = None
        return out.tolist()

    return {
        "names": names,
        "id": column(s.event_id[rows]),
        "name": column(name_index),
        "track": column(np.array(tracks, dtype=object)[track_index] if len(tracks) else np.zeros(0)),
        "depth": column(s.depth[rows]),
        "kind": _KIND_NAMES[kind_t[first]].tolist(),
        "edge": _EDGE_NAMES[graph.edge[edges[timed[first]]]].tolist(),
        "start": (start_ns / NS_PER_US).tolist(),
        "end": (end_ns / NS_PER_US).tolist(),
        "time": (times / NS_PER_US).tolist(),
    }


def _rank(ts: np.ndarray, n: int, n_host: int, parent: np.ndarray, depth: np.ndarray,
          launch: np.ndarray) -> np.ndarray:
    """A topological order of the nodes: by time; at one instant, device work that ends then, then the host, then
    device work that starts then (device work ends before the sync that waited for it returns; a launch comes before
    its work). Among the host nodes, and among the device nodes, of one instant the order is that of a walk of the
    slices' nesting (a slice's start, its children, its end; then its next sibling): a slice that ends at the very
    instant the next one starts (the rule with integer microseconds) comes before it, a zero-length slice's start
    before its end, a parent's start before its child's, a child's end before its parent's. Zero-length device
    activity (a sync record, mostly) is walked as if it were the first child of the call that launched it.
    ``launch``: the local launcher of each device slice. Edges that go against the order are dropped, so the graph
    has no cycle."""
    local = np.arange(n)
    # The walk's position: a slice's start at its own row (rows are in nesting order: by track, start, longest
    # first), its end after the last row of its subtree, a child's end before its parent's. The last row of a
    # subtree is that of its last child's subtree: followed by pointer doubling (log2 of the depth rounds).
    last = local.copy()
    nested = parent >= 0
    np.maximum.at(last, parent[nested], local[nested])
    while True:
        further = last[last]
        if np.array_equal(further, last):
            break
        last = further
    walk = np.concatenate([8 * local, 8 * last + 4, [-1]])
    inner = np.concatenate([np.zeros(n, dtype=np.int64), -depth.astype(np.int64), [0]])
    group = np.full(2 * n + 1, 2, dtype=np.int8)  # the host
    group[2 * n] = 0  # the step's start
    device = local >= n_host
    zero = ts[n:2 * n] == ts[:n]
    group[n:2 * n][device] = 1
    group[:n][device] = 3
    instant = np.flatnonzero(device & zero)
    group[instant] = group[instant + n] = 2
    walk[instant] = 8 * launch[instant - n_host] + 1
    walk[instant + n] = 8 * launch[instant - n_host] + 2
    order = np.lexsort((inner, walk, group, ts))
    rank = np.empty(2 * n + 1, dtype=np.int64)
    rank[order] = np.arange(2 * n + 1)
    return rank


def _add_cross_thread_edges(ts: np.ndarray, rank: np.ndarray, track: np.ndarray, parent: np.ndarray, kind: np.ndarray, n: int,
                            n_host: int, add: Any) -> None:
    """A top-level slice of another thread (autograd's backward thread, a data worker's thread) is released by the
    step's own thread: an edge from that thread's latest node before the slice's start (in the nodes' order). The
    time between goes to the range open on the step's thread then (the slice whose start it was, or the parent of
    the slice whose end it was)."""
    if not n_host:
        return
    host = np.arange(n_host)
    first = int(np.lexsort((-(ts[host + n] - ts[host]), rank[host]))[0])
    main = np.flatnonzero(track == track[first])
    others = np.flatnonzero((track != track[first]) & (parent < 0))
    if not len(others):
        return
    node = np.concatenate([main, main + n])
    node_rank = rank[node]
    order = np.argsort(node_rank)
    node, node_rank = node[order], node_rank[order]
    at = np.searchsorted(node_rank, rank[others], side="left") - 1
    has = at >= 0
    src, dst = node[at[has]], others[has]
    owner = np.where(src < n, src, parent[np.where(src >= n, src - n, src)])
    owner_kind = np.where(owner >= 0, kind[np.maximum(owner, 0)], _IDLE).astype(np.int8)
    add(src, dst, _E_CROSS_THREAD, owner, owner_kind)
    # And the step's thread goes on after that work: its first start or end after the slice's end.
    at = np.searchsorted(node_rank, rank[others + n], side="right")
    has = at < len(node)
    src, dst = others[has] + n, node[at[has]]
    owner = np.where(dst >= n, dst - n, parent[np.minimum(dst, n_host - 1)])
    owner_kind = np.where(owner >= 0, kind[np.maximum(owner, 0)], _IDLE).astype(np.int8)
    add(src, dst, _E_JOIN, owner, owner_kind)


# Rounds of stepping back before the searches that remain are done one by one.
_STEP_BACK_ROUNDS = 64
STREAM_SYNC_RECORD = "Stream Sync"  # Kineto's device record of a cudaStreamSynchronize, on the stream it waited for


def _add_sync_edges(model: TraceModel, roles: _Roles, rows: np.ndarray, local: np.ndarray, ts: np.ndarray,
                    n: int, n_host: int, work: np.ndarray, add: Any) -> None:
    """A blocking sync (host call by name, or the device's sync record) ends after the device work that it waited
    for: of the work launched before the sync began and finished by its end, the one that ends last. A stream sync
    with its device record (``Stream Sync``, on the stream it waited for) looks at that stream only."""
    s = model.slices
    host_sync = np.flatnonzero(roles.blocking_sync[rows[:n_host]])
    device_sync = n_host + np.flatnonzero(roles.device_sync[rows[n_host:]])
    waiting = np.concatenate([host_sync, device_sync])
    if not len(waiting) or not len(work):
        return
    # When a sync began: a host call's start, a device record's launch.
    launcher = model.links.launcher
    began = ts[waiting].copy()
    is_device = waiting >= n_host
    began[is_device] = ts[local[launcher[rows[waiting[is_device]]]]]
    # The stream a sync waited for (-1: any): a Stream Sync record's own lane, and its call's.
    lane = np.full(len(waiting), -1, dtype=np.int64)
    stream_record = is_device & (s.name[rows[waiting]] == model.string_id(STREAM_SYNC_RECORD))
    lane[stream_record] = s.track[rows[waiting[stream_record]]]
    call_lane = np.full(n, -1, dtype=np.int64)
    call_lane[local[launcher[rows[waiting[stream_record]]]]] = lane[stream_record]
    lane[~is_device] = call_lane[waiting[~is_device]]
    work_lane = s.track[rows[work]].astype(np.int64)
    launch = launcher[rows[work]]
    launched_at = np.where(launch >= 0, s.start[np.maximum(launch, 0)], np.iinfo(np.int64).min)
    for wanted in np.unique(lane).tolist():  # one round per stream named by a sync record, one for the rest
        syncs = np.flatnonzero(lane == wanted)
        pool = np.flatnonzero(work_lane == wanted) if wanted >= 0 else np.arange(len(work))
        found = _latest_finished(launched_at[pool], ts[work[pool] + n], began[syncs], ts[waiting[syncs] + n])
        has = found >= 0
        awaited = work[pool[found[has]]]
        add(awaited + n, waiting[syncs[has]] + n, _E_SYNC, waiting[syncs[has]], _SYNC)


def _latest_finished(launched_at: np.ndarray, ends: np.ndarray, began: np.ndarray, until: np.ndarray) -> np.ndarray:
    """Per sync, the work (index) that ends last among those launched before ``began`` and ended by ``until``; -1 for
    none. Work sorted by end: start at the last that ended by ``until`` and step back past later launches, all syncs
    at once (a few rounds: work launched after a sync began rarely ends before it returns)."""
    order = np.argsort(ends, kind="stable")
    launched_sorted = launched_at[order]
    pos = np.searchsorted(ends[order], until, side="right") - 1
    for _ in range(_STEP_BACK_ROUNDS):
        late = np.flatnonzero(pos >= 0)
        late = late[launched_sorted[pos[late]] >= began[late]]
        if not len(late):
            break
        pos[late] -= 1
    else:  # the few syncs still unsettled: a whole-array search each
        for i in np.flatnonzero((pos >= 0) & (launched_sorted[np.maximum(pos, 0)] >= began)).tolist():
            candidates = np.flatnonzero(launched_sorted[:pos[i] + 1] < began[i])
            pos[i] = candidates[-1] if len(candidates) else -1
    return np.where(pos >= 0, order[np.maximum(pos, 0)], -1)


def _add_wait_event_edges(model: TraceModel, rows: np.ndarray, local: np.ndarray, ts: np.ndarray, n: int,
                          n_host: int, work: np.ndarray, add: Any) -> None:
    """``cudaStreamWaitEvent``: the next work the thread launches on another stream waits for the work recorded by
    the thread's latest ``cudaEventRecord`` (the last work it launched before the record)."""
    s = model.slices
    names = s.name[rows[:n_host]]
    waits = np.flatnonzero(_name_table(model, STREAM_WAIT_EVENT_NAME)[names])
    records = np.flatnonzero(_name_table(model, EVENT_RECORD_NAME)[names])
    if not len(waits) or not len(records) or not len(work):
        return
    thread = s.track[rows].astype(np.int64)
    launcher = model.links.launcher[rows[work]]
    work = work[(launcher >= 0) & (local[launcher] >= 0)]  # launched in the step (not carried over)
    launch = local[model.links.launcher[rows[work]]]
    # Launches keyed by (thread, launch time): one sorted array serves every thread.
    key_launch = np.lexsort((ts[launch], thread[launch]))
    l_thread, l_ts, l_work = thread[launch][key_launch], ts[launch][key_launch], work[key_launch]
    r_order = np.lexsort((ts[records], thread[records]))
    r_thread, r_ts = thread[records][r_order], ts[records][r_order]
    lanes = s.track[rows].astype(np.int64)
    src_list, dst_list, owner_list = [], [], []
    for w in waits.tolist():  # one iteration per cudaStreamWaitEvent call, not per event
        t, w_start, w_end = int(thread[w]), int(ts[w]), int(ts[w + n])
        r = int(np.searchsorted(r_thread, t, side="left"))
        r_hi = int(np.searchsorted(r_thread, t, side="right"))
        r_pos = r + int(np.searchsorted(r_ts[r:r_hi], w_start, side="left")) - 1
        if r_pos < r:
            continue
        lo, hi = int(np.searchsorted(l_thread, t, side="left")), int(np.searchsorted(l_thread, t, side="right"))
        before = lo + int(np.searchsorted(l_ts[lo:hi], r_ts[r_pos], side="left")) - 1
        if before < lo:
            continue
        recorded = int(l_work[before])
        after = lo + int(np.searchsorted(l_ts[lo:hi], w_end, side="left"))
        later = l_work[after:hi]
        other = later[lanes[later] != lanes[recorded]]
        if len(other):
            src_list.append(recorded + n)
            dst_list.append(int(other[0]))
            owner_list.append(int(other[0]))
    if src_list:
        add(np.array(src_list), np.array(dst_list), _E_WAIT_EVENT, np.array(owner_list), _SYNC)


def _last_arrivals(graph: _Graph, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the incoming edge whose source came last (ties: the edge type later in ``EDGES``); -1 for none."""
    order = np.lexsort((graph.edge, graph.ts[graph.src], graph.dst))
    dst = graph.dst[order]
    last = np.flatnonzero(np.r_[dst[1:] != dst[:-1], True]) if len(dst) else np.zeros(0, dtype=np.int64)
    pred = np.full(nodes, -1, dtype=np.int64)
    pred_edge = np.full(nodes, -1, dtype=np.int64)
    pred[dst[last]] = graph.src[order[last]]
    pred_edge[dst[last]] = order[last]
    return pred, pred_edge


def _sink(ts: np.ndarray, n: int) -> int:
    """The step's last instant: the latest end (the last device work's end before a host end at the same time)."""
    if n == 0:
        return 2 * n
    ends = ts[n:2 * n]
    latest = np.flatnonzero(ends == ends.max())
    return int(n + latest[-1])


def _walk_back(pred: np.ndarray, pred_edge: np.ndarray, sink: int, source: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes from the source to the sink along the chosen predecessors, and the edges between them. The chain is
    read by pointer doubling (the source points to itself): the k-th round appends the nodes 2^k further back, so a
    path of L nodes takes log2(L) whole-array rounds instead of L steps."""
    jump = pred.copy()
    jump[source] = source
    missing = jump < 0
    jump[missing] = source  # checked below: no node of the path may lack a predecessor
    chain = np.array([sink], dtype=np.int64)
    while chain[-1] != source:
        if len(chain) > 2 * len(jump):
            raise RuntimeError("critical path: the dependencies form a cycle")
        chain = np.concatenate([chain, jump[chain]])
        jump = jump[jump]
    chain = chain[:int(np.argmax(chain == source)) + 1]
    if missing[chain[:-1]].any():
        raise RuntimeError("critical path: a node has no predecessor")
    nodes = chain[::-1]
    return nodes, pred_edge[nodes[1:]]
