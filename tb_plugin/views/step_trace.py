"""Step trace: each training step split into iteration gap, forward, backward, optimizer,
communication and tail, from the markers the framework (or the user) left in the trace.

A step is a window of ``find_steps`` (the overview's steps). Points per step:

- forward start (``fp``): torch: the first operator after the step's DataLoader ranges (outside
  data loading and optimizer ranges); Paddle: the first ``Forward`` event; or the first slice
  named ``fp_point`` when the user names one.
- backward: torch: ``autograd::engine::evaluate_function: ...`` ranges, ``...Backward``/
  ``AccumulateGrad`` operators, and every operator of an autograd thread (a host thread other
  than the steps' one that runs such operators), with the device work they launched; Paddle:
  ``Backward`` events. ``bp_point`` names the operator whose last end closes backward.
- optimizer: ``Optimizer.step#…`` / ``Optimizer.zero_grad#…`` ranges (and their device work);
  Paddle: ``Optimization`` events.
- communication: communication not overlapped by computation, as ``accounting`` defines both
  (collective kernels, and host collectives such as Gloo's; computation is device work on spans
  with any, else host work less each thread's own time in a collective). It equals the overview's
  Communication category.

Time base: on a CPU-only span (and Paddle's, whose summary counts host time) points are host
times in the steps' host ranges. When device work is linked to its launches, each point is moved
to the device: forward starts with the first device work launched at or after ``fp``, backward
ends with the last device work launched by the end of the backward ranges, the optimizer is the
device work its ranges launched, in the steps' device-extended windows (the CPU may run a whole
step ahead of the GPU, so host points would fall outside the step they belong to).

Every instant of a step gets exactly one phase, by priority: communication (not overlapped),
optimizer, backward, forward, then by position: before forward starts is the iteration gap,
after the last backward/optimizer work is the tail, anything else is ``other``. Forward is the
interval from ``fp`` to the start of backward (Paddle: its ``Forward`` events; an inference span:
to the end of the last operator). Phases therefore sum to the step's duration. A phase that
cannot be derived is ``null`` and listed in the step's ``missing`` with a note; its time falls
into ``other``, or into ``fp_and_bp`` when only the forward/backward split is unknown (then the
known phases plus ``fp_and_bp`` sum to the step's duration).

MindSpore Ascend runs carry the profiler's own step trace table (``ingest/mindspore/step_trace.py``):
when the span has one, its rows are the answer (gap, forward+backward, tail).

MindSpore's table is ``step_trace_raw_<id>_detail_time.csv`` beside an Ascend timeline
(``ascend_timeline_display_<id>.json``), in system-counter counts of 10 ns, read through the storage by its known name
only. Checked against Paddle's Model Summary (within 2%) and torch's key_averages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..ingest.mindspore.step_trace import StepTraceTable
from ..model import intervals
from ..model.categories import SliceKinds
from ..model.steps import Steps, find_steps
from ..model.trace_model import SliceTable, TraceModel
from ..model.tree import levels
from ..model.units import NS_PER_US
from .quantities import accounting, recording

PHASES = ("gap", "forward", "backward", "optimizer", "communication", "tail", "other")
NONE = np.iinfo(np.int64).min  # "no such point in this step"

_OPTIMIZER_NAME = re.compile(r"^Optimizer\.(step|zero_grad)#")
_BACKWARD_NAME = re.compile(r"^autograd::engine::evaluate_function: |Backward\d*$|^torch::autograd::AccumulateGrad$")
# Paddle's phase events (TracerEventType names, kept as categories by ingest/paddle.py).
_PADDLE_FORWARD, _PADDLE_BACKWARD, _PADDLE_OPTIMIZER = "Forward", "Backward", "Optimization"


@dataclass(frozen=True)
class _Timeline:
    """Where the points of a step are measured.

    ``host``: on the host ranges themselves, in the steps' host windows (CPU-only spans, Paddle).
    ``device``: on the device work the host ranges launched, in the steps' windows extended to
    that work: the CPU often runs ahead of the device (a whole step in GPU-bound jobs), so host
    points would fall outside the device-extended step they belong to.
    """

    model: TraceModel
    kinds: SliceKinds
    steps: Steps
    device: bool
    windows: intervals.Intervals
    host_step: np.ndarray  # per slice row: the step whose host range holds its start (-1: none)
    device_rows: np.ndarray  # device work with a known launcher
    launch_time: np.ndarray  # per device row: its launching runtime call's start
    launch_step: np.ndarray  # per device row: the step of that call

    @property
    def n(self) -> int:
        return len(self.steps)

    def first_start(self, mask: np.ndarray) -> np.ndarray:
        """Per step: the earliest start of the ``mask`` rows (host) or of the device work launched at or
        after that host start (device)."""
        s = self.model.slices
        host = _per_step(self.host_step[mask], s.start[mask], self.n, "min")
        if not self.device:
            return host
        bound = host[np.maximum(self.launch_step, 0)]
        pick = (self.launch_step >= 0) & (bound != NONE) & (self.launch_time >= bound)
        rows = self.device_rows[pick]
        return _per_step(self.launch_step[pick], s.start[rows], self.n, "min")

    def last_end(self, mask: np.ndarray) -> np.ndarray:
        """Per step: the latest end of the ``mask`` rows (host) or of the device work launched no later
        than that host end (device)."""
        s = self.model.slices
        host = _per_step(self.host_step[mask], s.end_at(mask), self.n, "max")
        if not self.device:
            return host
        bound = host[np.maximum(self.launch_step, 0)]
        pick = (self.launch_step >= 0) & (bound != NONE) & (self.launch_time <= bound)
        rows = self.device_rows[pick]
        return _per_step(self.launch_step[pick], s.end_at(rows), self.n, "max")

    def cover(self, inside: np.ndarray) -> intervals.Intervals:
        """The time of the ``inside`` rows (ranges with their descendants): host ranges, or the device work
        they launched."""
        s = self.model.slices
        if not self.device:
            return intervals.merge(s.start[inside], s.end_at(inside))
        rows = self.device_rows[inside[self.model.links.op[self.device_rows]]]
        return intervals.merge(s.start[rows], s.end_at(rows))

    def cover_end(self, inside: np.ndarray) -> np.ndarray:
        """Per step: the end of ``cover(inside)``'s work that belongs to the step."""
        s = self.model.slices
        if not self.device:
            return _per_step(self.host_step[inside], s.end_at(inside), self.n, "max")
        pick = inside[self.model.links.op[self.device_rows]]
        return _per_step(self.launch_step[pick], s.end_at(self.device_rows[pick]), self.n, "max")


def _timeline(model: TraceModel, kinds: SliceKinds, steps: Steps, host_only: bool) -> _Timeline:
    s = model.slices
    launcher = model.links.launcher
    device_rows = np.flatnonzero(kinds.device_work & (launcher >= 0) & (model.links.op >= 0))
    device = bool(len(device_rows)) and not host_only
    windows = (steps.start, steps.end) if device else _host_windows(steps)
    host_step = _host_step(steps, s.start)
    launch_time = s.start[launcher[device_rows]]
    return _Timeline(model=model, kinds=kinds, steps=steps, device=device, windows=windows, host_step=host_step,
                     device_rows=device_rows, launch_time=launch_time, launch_step=_host_step(steps, launch_time))


@dataclass(frozen=True)
class _Points:
    """Per step points (int64 ns, NONE when unknown) and the interval sets of the breakdown."""

    fp: np.ndarray
    bp_start: np.ndarray
    bp_end: np.ndarray
    work_end: np.ndarray  # end of the last backward/optimizer work (forward's, without backward)
    forward_cover: Optional[intervals.Intervals]  # event-based forward (Paddle); None: positional
    backward_cover: Optional[intervals.Intervals]
    optimizer: intervals.Intervals
    dataloader: intervals.Intervals  # host ranges
    markers: dict[str, Optional[str]]
    step_notes: list[list[str]]
    span_notes: list[str]
    has_backward: bool
    has_optimizer: bool


def step_trace(model: TraceModel, fp_point: Optional[str] = None, bp_point: Optional[str] = None,
               table: Optional[StepTraceTable] = None, table_error: Optional[str] = None) -> dict[str, Any]:
    """The step trace of a span. ``table``: MindSpore's own step trace, used unless points are named."""
    if table is not None and table.rows and fp_point is None and bp_point is None:
        return from_mindspore_table(table)
    answer = model.memo(("step_trace", fp_point, bp_point), lambda: _from_model(model, fp_point, bp_point))
    extra: list[str] = []
    if table is not None:
        extra.append(f"{table.file_name} is not used: points were named." if table.rows
                     else f"{table.file_name} has no step rows.")
    if table_error:
        extra.append(f"MindSpore's step trace file could not be read: {table_error}")
    return dict(answer, notes=[*answer["notes"], *extra]) if extra else answer


# Model-derived --------------------------------------------------------------------------------


def _from_model(model: TraceModel, fp_point: Optional[str], bp_point: Optional[str]) -> dict[str, Any]:
    steps = find_steps(model)
    kinds = SliceKinds(model)
    forward_category = model.string_id(_PADDLE_FORWARD)
    paddle = forward_category >= 0 and bool((model.slices.cat == forward_category).any())
    timeline = _timeline(model, kinds, steps, host_only=paddle)
    points = _points(timeline, paddle, fp_point, bp_point)
    comm, comm_marker = _communication(model)
    points.markers["communication"] = comm_marker
    points.markers["time_base"] = "device" if timeline.device else "host"
    n = len(steps)
    start, end = timeline.windows

    def clip(lo: np.ndarray, hi: np.ndarray) -> intervals.Intervals:
        known = (lo != NONE) & (hi != NONE)
        a = np.where(known, np.clip(lo, start, end), start)
        b = np.where(known, np.clip(hi, start, end), start)
        return a, np.maximum(a, b)

    has_bp = points.bp_start != NONE
    split = (points.fp != NONE) & has_bp & (points.fp <= points.bp_start)
    if points.forward_cover is not None:
        forward = points.forward_cover
    else:
        forward = clip(np.where(split | ~has_bp, points.fp, NONE), np.where(has_bp, points.bp_start, points.work_end))
    backward = points.backward_cover if points.backward_cover is not None else clip(points.bp_start, points.bp_end)
    # When forward starts after backward does, only [fp, bp_end) as a whole is known.
    joint = clip(np.where(~split & has_bp, points.fp, NONE), points.bp_end)
    gap = clip(np.where(points.fp != NONE, start, NONE), points.fp)
    tail = clip(points.work_end, np.where(points.work_end != NONE, end, NONE))
    categories = [comm, points.optimizer, backward, forward, joint, gap, tail]
    table = intervals.exclusive_breakdown(timeline.windows, categories)
    # Data loading (host): host time within the step's own host range (informative; part of the gap). The overview's
    # DataLoader category (waiting for data) counts only the part while nothing of higher priority runs.
    dataloader = intervals.covered_length_in(_host_windows(steps), points.dataloader)

    rows = []
    for i in range(n):  # one row per step
        notes = list(points.step_notes[i])
        us = table[i] / NS_PER_US
        values: dict[str, Optional[float]] = {
            "gap": us[5], "forward": us[3], "backward": us[2], "optimizer": us[1], "communication": us[0],
            "tail": us[6], "other": us[7],
        }
        fp_and_bp: Optional[float] = None
        if points.fp[i] == NONE:
            values["gap"] = values["forward"] = None
        if not has_bp[i]:
            values["backward"] = None
            if points.has_backward:
                notes.append("no backward work in this step")
        elif not split[i] and points.fp[i] != NONE:
            # Forward starts after backward does: only their sum is known (what either category got, and
            # the joint interval).
            fp_and_bp = float(us[2] + us[3] + us[4])
            values["forward"] = values["backward"] = None
            notes.append("forward starts after backward does: only forward + backward together is known")
        if values["forward"] is not None and values["backward"] is not None:
            fp_and_bp = float(values["forward"] + values["backward"])
        if not points.has_optimizer:
            values["optimizer"] = None
        if points.work_end[i] == NONE:
            values["tail"] = None
        rows.append({
            "name": steps.names[i], "start": float(start[i]) / NS_PER_US, "dur": float(end[i] - start[i]) / NS_PER_US,
            "phases": {p: (None if values[p] is None else float(values[p])) for p in PHASES},  # type: ignore[arg-type]
            "fp_and_bp": fp_and_bp,
            "dataloader": float(dataloader[i]) / NS_PER_US if points.markers["dataloader"] else None,
            "forward_start": _relative_us(points.fp[i], start[i]),
            "backward_end": _relative_us(points.bp_end[i], start[i]),
            "missing": [p for p in PHASES if values[p] is None], "notes": notes,
        })
    return {
        "source": "trace",
        "step_source": steps.source,
        "phases": list(PHASES),
        "steps": rows,
        "average": _averages(rows),
        "markers": points.markers,
        "points": {"fp_point": fp_point, "bp_point": bp_point},
        "notes": points.span_notes,
    }


def _host_windows(steps: Steps) -> intervals.Intervals:
    """The steps' host ranges, each cut at the next one's start (the breakdown needs disjoint windows)."""
    host_end = np.minimum(steps.host_end, np.r_[steps.host_start[1:], np.iinfo(np.int64).max])
    return steps.host_start, np.maximum(host_end, steps.host_start)


def _relative_us(point: int, start: int) -> Optional[float]:
    return None if point == NONE else (int(point) - int(start)) / NS_PER_US


def _per_step(step: np.ndarray, values: np.ndarray, n: int, reduce: str) -> np.ndarray:
    """Per step: min or max of ``values`` of the rows with that step index (NONE where none)."""
    big = np.iinfo(np.int64).max
    out = np.full(n, big if reduce == "min" else NONE, dtype=np.int64)
    keep = step >= 0
    (np.minimum if reduce == "min" else np.maximum).at(out, step[keep], values[keep].astype(np.int64))
    if reduce == "min":
        out[out == big] = NONE
    return out


def _host_step(steps: Steps, starts: np.ndarray) -> np.ndarray:
    """The step whose host range contains each start (-1 outside every step)."""
    if len(steps) == 0:
        return np.full(len(starts), -1, dtype=np.int64)
    step = np.searchsorted(steps.host_start, starts, side="right") - 1
    inside = (step >= 0) & (starts < steps.host_end[np.maximum(step, 0)])
    return np.where(inside, step, -1)


def _points(timeline: _Timeline, paddle: bool, fp_point: Optional[str], bp_point: Optional[str]) -> _Points:
    model, kinds, n = timeline.model, timeline.kinds, timeline.n
    s = model.slices
    host = kinds.on_host
    span_notes: list[str] = []
    step_notes: list[list[str]] = [[] for _ in range(n)]
    markers: dict[str, Optional[str]] = {"steps": _step_marker_text(timeline.steps), "forward_start": None,
                                        "backward": None, "optimizer": None, "dataloader": None,
                                        "communication": None, "time_base": None}

    def by_category(name: str) -> np.ndarray:
        cat = model.string_id(name)
        return (s.cat == cat) & host if cat >= 0 else np.zeros(len(s), dtype=bool)

    def by_name(pattern: re.Pattern[str]) -> np.ndarray:
        return model.string_ids_where(lambda t: bool(pattern.search(t)))[s.name] if len(s) else np.zeros(0, bool)

    def named(name: str, role: str) -> np.ndarray:
        sid = model.string_id(name)
        mask = (s.name == sid) & host if sid >= 0 else np.zeros(len(s), dtype=bool)
        if not mask.any():
            span_notes.append(f"No slice named {name!r} ({role}) in this span.")
        return mask

    def note_missing(values: np.ndarray, text: str) -> None:
        for i in np.flatnonzero(values == NONE).tolist():
            step_notes[i].append(text)

    # Data loading (torch's DataLoader ranges, Paddle's Dataloader events), optimizer and backward
    # ranges, each with everything nested inside (one pass over the nesting levels for all three).
    dataloader = kinds.dataloader & host
    optimizer = by_category(_PADDLE_OPTIMIZER) if paddle else (by_name(_OPTIMIZER_NAME) & kinds.host_op)
    backward = by_category(_PADDLE_BACKWARD) if paddle else (by_name(_BACKWARD_NAME) & kinds.operator)
    dataloader_all, optimizer_all, backward_nested = _with_descendants(s, [dataloader, optimizer, backward])
    if dataloader.any():
        markers["dataloader"] = ("Dataloader events" if paddle else "enumerate(DataLoader)#… ranges") + (
            ": host time in them (the Overview's DataLoader category, waiting for data, counts only the time "
            "nothing of higher priority runs)")

    has_optimizer = bool(optimizer.any())
    if has_optimizer:
        markers["optimizer"] = ("Optimization events" if paddle
                                else "Optimizer.step#… / Optimizer.zero_grad#… ranges")
    else:
        span_notes.append("No optimizer ranges (Optimizer.step#…/zero_grad#…, Paddle's Optimization events) in "
                          "this span: the optimizer phase is not derived.")

    # Backward.
    backward_cover: Optional[intervals.Intervals] = None
    if paddle:
        backward_all = backward_nested
        backward_cover = timeline.cover(backward_all)
        backward_text = "Backward events"
    else:
        threads = _autograd_threads(model, kinds, backward)
        backward_all = backward_nested | (threads[s.track] & kinds.operator)
        parts = (["autograd::engine::evaluate_function ranges"] if backward.any() else []) + (
            ["autograd thread operators"] if threads.any() else [])
        backward_text = " and ".join(parts)
    has_backward = bool(backward_all.any())
    bp_start = timeline.first_start(backward_all)
    bp_end = timeline.last_end(backward_all)
    if has_backward:
        markers["backward"] = backward_text
    if bp_point:
        user = named(bp_point, "bp_point")
        bp_end = timeline.last_end(user)
        backward_cover = None  # positional from here: [backward start, end of the bp_point operator's work)
        has_backward = has_backward or bool(user.any())
        markers["backward"] = f"bp_point {bp_point}" + (f" (start: {backward_text})" if backward_text else "")
        note_missing(bp_end, f"bp_point {bp_point!r} does not occur in this step")
    elif not has_backward:
        span_notes.append("No backward ranges (autograd evaluate_function ranges, …Backward operators, an "
                          "autograd thread, Paddle's Backward events) in this span: backward is not derived "
                          "(an inference span?).")

    # Forward start.
    forward_cover: Optional[intervals.Intervals] = None
    if fp_point:
        forward_rows = named(fp_point, "fp_point")
        markers["forward_start"] = f"fp_point {fp_point}"
        fp = timeline.first_start(forward_rows)
        note_missing(fp, f"fp_point {fp_point!r} does not occur in this step")
    elif paddle:
        forward_rows = by_category(_PADDLE_FORWARD)
        forward_cover = timeline.cover(forward_rows) if not bp_point else None
        markers["forward_start"] = "Forward events"
        fp = timeline.first_start(forward_rows)
        note_missing(fp, "no Forward event in this step")
    else:
        host_step = timeline.host_step
        loaded = _per_step(host_step[dataloader], s.end_at(dataloader), n, "max")
        after = np.where(loaded != NONE, loaded, timeline.steps.host_start)
        forward_rows = (kinds.operator & ~optimizer_all & ~dataloader_all & ~backward_all & ~kinds.collective_op
                        & (host_step >= 0))
        forward_rows &= s.start >= after[np.maximum(host_step, 0)]
        markers["forward_start"] = "first operator after the DataLoader" if dataloader.any() else "first operator"
        fp = timeline.first_start(forward_rows)
        note_missing(fp, "no operator starts the forward pass in this step")
    if paddle and fp_point:
        backward_cover = None  # named points: phases are positional, as for torch

    # The step's last work: backward and optimizer (forward's own end when the step has no backward).
    forward_end = timeline.last_end(forward_rows)
    optimizer_end = timeline.cover_end(optimizer_all)
    work_end = np.maximum(np.where(bp_end != NONE, bp_end, forward_end), optimizer_end)
    if timeline.steps.source == "span":
        span_notes.append("No step markers (ProfilerStep#N / ProfileStep#N): the whole span is one step. "
                          + recording.record_steps(model))
    return _Points(
        fp=fp, bp_start=bp_start, bp_end=bp_end, work_end=work_end, forward_cover=forward_cover,
        backward_cover=backward_cover, optimizer=timeline.cover(optimizer_all),
        dataloader=accounting.dataloader_intervals(model), markers=markers, step_notes=step_notes,
        span_notes=span_notes, has_backward=has_backward, has_optimizer=has_optimizer)

def _with_descendants(slices: SliceTable, masks: list[np.ndarray]) -> list[np.ndarray]:
    """Each mask extended to every slice nested inside a flagged one, in one pass over the nesting levels."""
    bits = np.zeros(len(slices), dtype=np.uint8)
    for i, mask in enumerate(masks):  # at most 8 masks
        bits |= mask.astype(np.uint8) << i
    for rows in levels(slices):  # parents come a level before their children
        parent = slices.parent[rows]
        has = parent >= 0
        bits[rows[has]] |= bits[parent[has]]
    return [(bits >> i & 1).astype(bool) for i in range(len(masks))]


def _autograd_threads(model: TraceModel, kinds: SliceKinds, backward: np.ndarray) -> np.ndarray:
    """Per track: whether it is an autograd thread (runs backward operators, holds no step range)."""
    s = model.slices
    is_thread = np.zeros(len(model.tracks), dtype=bool)
    if not backward.any():
        return is_thread
    is_thread[np.unique(s.track[backward & kinds.operator])] = True
    if len(model.steps):
        is_thread[np.unique(s.track[model.steps.slice_row])] = False
    else:
        # Without step ranges, the main thread is the one with the most operators.
        counts = np.bincount(s.track[kinds.operator], minlength=len(model.tracks))
        is_thread[int(np.argmax(counts))] = False
    return is_thread


def _communication(model: TraceModel) -> tuple[intervals.Intervals, Optional[str]]:
    """Communication not overlapped by computation, as ``accounting`` defines both (the overview's
    Communication category and the Distributed view's communication minus overlap)."""
    comm = accounting.communication_intervals(model)
    if len(comm[0]) == 0:
        return intervals.empty(), None
    marker = ("collectives not overlapped by device work" if accounting.has_device_work(model)
              else "collective ranges not overlapped by host work of other threads (a thread's own ranges "
                   "during its collective wait for it)")
    return accounting.exposed_communication_intervals(model), marker


def _step_marker_text(steps: Steps) -> str:
    if steps.source == "span":
        return "whole span (no step markers)"
    if steps.source == "user":
        return "user step marker"
    return "ProfileStep#N" if steps.names and steps.names[0].startswith("ProfileStep#") else "ProfilerStep#N"


def _averages(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean per step of each phase over the steps where it is known (None when known in none)."""
    def mean(values: list[Optional[float]]) -> Optional[float]:
        known = [v for v in values if v is not None]
        return float(sum(known) / len(known)) if known else None

    phases = {p: mean([r["phases"][p] for r in rows]) for p in PHASES}
    return {"dur": mean([r["dur"] for r in rows]), "phases": phases, "fp_and_bp": mean([r["fp_and_bp"] for r in rows]),
            "dataloader": mean([r["dataloader"] for r in rows]), "steps": len(rows)}


# MindSpore's step trace table ---------------------------------------------------------------------


def from_mindspore_table(table: StepTraceTable) -> dict[str, Any]:
    """The answer from MindSpore's own step trace: gap, forward+backward and tail per step."""
    us = StepTraceTable.to_us
    inference = "fp_and_bp" not in table.columns and "fp" in table.columns
    rows = []
    for row in table.rows:
        fp_and_bp = row.fp_and_bp if not inference else None
        known = [v for v in (row.iteration_interval, row.forward if inference else fp_and_bp,
                             None if inference else row.tail) if v is not None]
        values: dict[str, Optional[float]] = {
            "gap": us(row.iteration_interval) if row.iteration_interval is not None else None,
            "forward": us(row.forward) if inference and row.forward is not None else None,
            "backward": None, "optimizer": None,
            "communication": 0.0 if not table.has_reduce_columns else None,
            "tail": us(row.tail) if row.tail is not None and not inference else None,
            "other": us(max(row.total - sum(known), 0)),
        }
        missing = [p for p in PHASES if values[p] is None]
        notes = []
        if row.total != sum(known):
            notes.append("the step's phases in the file do not add up to its total")
        rows.append({
            "name": f"Step {row.step}", "start": None, "dur": us(row.total), "phases": values,
            "fp_and_bp": us(fp_and_bp) if fp_and_bp is not None else None, "dataloader": None,
            "forward_start": us(row.fp_point - row.start) if row.fp_point is not None else None,
            "backward_end": us(row.bp_point - row.start) if row.bp_point is not None else None,
            "missing": missing, "notes": notes,
        })
    split = ("iteration gap and forward (an inference run)" if inference
             else "iteration gap, forward + backward and tail")
    notes = [f"From MindSpore's step trace file {table.file_name} (device system counter, 10 ns per count): "
             f"it splits a step into {split} only."]
    if table.has_reduce_columns:
        notes.append("The file lists collective ranges but not their overlap with computation: "
                     "communication is not derived.")
    return {
        "source": "mindspore_step_trace",
        "step_source": "step trace file",
        "phases": list(PHASES),
        "steps": rows,
        "average": _averages(rows),
        "markers": {"steps": table.file_name, "forward_start": table.points.get("fp_start") or "fp_point column",
                    "backward": table.points.get("bp_end") or ("bp_point column" if not inference else None),
                    "optimizer": None, "dataloader": None, "communication": None},
        "points": {"fp_point": table.points.get("fp_start"), "bp_point": table.points.get("bp_end")},
        "notes": notes,
    }
