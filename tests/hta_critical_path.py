"""HTA's critical path of a step beside Profscope's, laid over one time axis (tests/test_critical_path.py).

HTA (Holistic Trace Analysis 0.5.0, ``CriticalPathAnalysis``) runs as its users run it, on a folder holding the one
trace, its sub-microsecond times kept. Its events are indexed by their place in the file's ``traceEvents``, as
Profscope's slices are (``event_id``), so the two paths compare slice by slice. The device time on a path is the time
of its kernels and copies (HTA: the weight of its operator edges on device events; Profscope: the kernel and copy
entries). Where the two differ, each microsecond of the difference is put in one class:

Device work on Profscope's path only:

* ``not_in_hta_graph``: HTA's graph does not hold it: work queued before the step (launched before the step's host
  range, or by a call the trace does not hold) and the kernels of a ``cudaGraphLaunch`` but one (HTA keeps the work
  whose launch lies in the step, one per launch);
* ``hta_in_stream_gap``: HTA's path is on a kernel-kernel edge then (its stream sat idle; HTA weighs the gap as
  device overhead and goes through it);
* ``hta_outside``: before HTA's first node or after its last (HTA's path starts at a node without predecessor and
  ends where its weight ends, not at the step's bounds);
* ``hta_zero_weight``: HTA's path is on one of its zero-weight edges (between top-level operators, a sync);
* ``hta_elsewhere``: HTA's path is on host work or on other device work then.

Device work on HTA's path only:

* ``ours_on_host``: Profscope's path is in host work then (an operator, a runtime call: the host decided the
  step's length while the device ran this work in its shadow);
* ``ours_on_device``: Profscope's path is on other device work;
* ``ours_idle``: Profscope's path waits (idle).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from profscope.tb_plugin.model.trace_model import TraceModel

OURS_ONLY = ("not_in_hta_graph", "hta_in_stream_gap", "hta_outside", "hta_zero_weight", "hta_elsewhere")
HTA_ONLY = ("ours_on_host", "ours_on_device", "ours_idle")


@dataclass
class Comparison:
    """Device time (µs) on each path, and the difference by class."""

    ours: float
    hta: float
    length: float
    classes: dict[str, float] = field(default_factory=dict)
    hta_edges: list[tuple[float, float, str, float]] = field(default_factory=list)  # (start, end, type, weight)
    # Device work on both paths, with another time on each (a kernel queued before the step is taken from the step's
    # start; sub-microsecond rounding).
    on_both: float = 0.0
    hta_only_work: list[tuple[float, float]] = field(default_factory=list)  # (start, end) on HTA's path only

    @property
    def ours_only(self) -> float:
        return sum(self.classes.get(c, 0.0) for c in OURS_ONLY)

    @property
    def hta_only(self) -> float:
        return sum(self.classes.get(c, 0.0) for c in HTA_ONLY)


def hta_graph(trace: Path, folder: Path, annotation: str, instance: int) -> Any:
    """HTA's critical path graph of one instance of ``annotation`` ("": the whole trace)."""
    import os

    from hta.analyzers.critical_path_analysis import CriticalPathAnalysis
    from hta.trace_analysis import TraceAnalysis

    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    logging.getLogger("hta").setLevel(logging.ERROR)
    folder.mkdir(parents=True)
    shutil.copy(trace, folder)
    analysis = TraceAnalysis(trace_dir=str(folder), include_last_profiler_step=True)
    rank = next(iter(analysis.t.traces))
    graph, ok = CriticalPathAnalysis.critical_path_analysis(analysis.t, rank, annotation, instance)
    assert ok, "HTA found no critical path"
    return graph


def compare(model: TraceModel, answer: dict[str, Any], graph: Any) -> Comparison:
    """Lay HTA's path (``graph``) and Profscope's (``answer``, the critical_path view of the same step) over one time
    axis and class every microsecond of device time that is on one path only (see the module's docstring)."""
    s = model.slices
    event_ids = np.asarray(s.event_id)
    by_event = np.argsort(event_ids, kind="stable")

    def row_of(event: int) -> int:
        at = int(np.searchsorted(event_ids, event, sorter=by_event))
        assert at < len(by_event) and event_ids[by_event[at]] == event, event
        return int(by_event[at])

    df = graph.trace_df
    first_event = int(df.index[0])
    offset = s.start[row_of(first_event)] / 1000.0 - float(df.ts.loc[first_event])
    # HTA's path as intervals on Profscope's time axis, and its device work with its time on the path.
    nodes = [graph.node_list[i] for i in graph.critical_path_nodes]
    hta_edges: list[tuple[float, float, str, float]] = []
    hta_device: dict[int, float] = {}
    for u, v in zip(nodes, nodes[1:]):
        edge = graph.edges[u.idx, v.idx]["object"]
        kind = edge.type.name
        event = graph.get_event_attribution_for_edge(edge)
        on_device = kind == "OPERATOR_KERNEL" and event is not None and int(df.stream.loc[event]) >= 0
        if on_device:
            hta_device[int(event)] = hta_device.get(int(event), 0.0) + float(edge.weight)
            kind = "DEVICE"
        elif edge.weight == 0 and v.ts > u.ts:
            kind = "ZERO_WEIGHT"
        hta_edges.append((u.ts + offset, v.ts + offset, kind, float(edge.weight)))
    in_hta_graph = {int(e) for e in df.index[(df.stream >= 0)] if int(e) in graph.event_to_start_node_map}

    path = answer["path"]
    ours_device: dict[int, float] = {}
    our_entries = list(zip(path["start"], path["end"], path["kind"], path["id"], path["track"]))
    for start, end, kind, event, _ in our_entries:
        if kind in ("kernel", "copy"):
            ours_device[int(event)] = ours_device.get(int(event), 0.0) + end - start
    hta_span = (nodes[0].ts + offset, nodes[-1].ts + offset)

    def overlap(a: float, b: float, c: float, d: float) -> float:
        return max(0.0, min(b, d) - max(a, c))

    classes = {name: 0.0 for name in OURS_ONLY + HTA_ONLY}
    for start, end, kind, event, _ in our_entries:
        if kind not in ("kernel", "copy") or int(event) in hta_device:
            continue
        if int(event) not in in_hta_graph:
            classes["not_in_hta_graph"] += end - start
            continue
        outside = overlap(start, end, -np.inf, hta_span[0]) + overlap(start, end, hta_span[1], np.inf)
        classes["hta_outside"] += outside
        for a, b, hta_kind, _ in hta_edges:
            shared = overlap(start, end, a, b)
            if hta_kind == "KERNEL_KERNEL_DELAY":
                classes["hta_in_stream_gap"] += shared
            elif hta_kind == "ZERO_WEIGHT":
                classes["hta_zero_weight"] += shared
            else:
                classes["hta_elsewhere"] += shared
    hta_only: list[tuple[float, float]] = []
    for event, time in hta_device.items():
        if event in ours_device:
            continue
        row = row_of(event)
        start = s.start[row] / 1000.0
        end = start + time
        hta_only.append((start, end))
        for a, b, kind, _, track in our_entries:
            shared = overlap(start, end, a, b)
            if kind in ("kernel", "copy"):
                classes["ours_on_device"] += shared
            elif kind == "idle":
                classes["ours_idle"] += shared
            else:
                classes["ours_on_host"] += shared
    both = sum(ours_device[e] - hta_device[e] for e in ours_device.keys() & hta_device.keys())
    return Comparison(ours=sum(ours_device.values()), hta=sum(hta_device.values()), length=answer["length"],
                      classes=classes, hta_edges=hta_edges, on_both=both, hta_only_work=hta_only)
