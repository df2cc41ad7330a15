"""Ranks side by side: a rank × step matrix of step time and communication, and the time shifts that
put the same step of several ranks on one time axis.

Every figure is ``accounting.step_times`` of the rank's span (the steps of ``steps.find_steps``):
step time, communication and exposed communication (communication minus its overlap with
computation, the overview's Communication category). The matrix does not compute anything of its
own; a rank's row averages to the Distributed view's per-rank numbers.

Steps are matched across ranks by name (``ProfilerStep#12`` of every rank is one column); a rank
without a step of that name has an empty cell. Columns are ordered by step number, then by first
appearance.

Aligning ranks on one time axis (``rank_alignment``): by the step's start (every rank's step starts
at 0, so the spread of a collective's start is each rank's lateness within the step), or by time
(each trace's clock made absolute with its ``baseTimeNanoseconds``: 0 is the earliest start of the
step on any rank, so a rank that started the step late shows so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..quantities.accounting import step_times
from .rank_summary import RankSummary

ALIGNMENTS = ("step", "time")
_STEP_NUMBER = re.compile(r"#(\d+)$")


@dataclass(frozen=True)
class RankSteps:
    """One rank's steps and the shared per-step quantities (int64 ns)."""

    worker: str
    rank: int
    span: str
    names: list[str]
    start: np.ndarray
    duration: np.ndarray
    communication: np.ndarray
    exposed_communication: np.ndarray


def rank_steps(worker: str, rank: int, span: str, model: TraceModel) -> RankSteps:
    times = step_times(model)
    return RankSteps(worker=worker, rank=rank, span=span, names=list(times.steps.names), start=times.steps.start,
                     duration=times.duration, communication=times.communication,
                     exposed_communication=times.exposed_communication)


def steps_of_summary(summary: RankSummary, rank: int) -> RankSteps:
    """A rank's steps from its summary (``rank_summary.py``: the same columns as ``rank_steps``)."""
    steps = summary.steps
    return RankSteps(worker=summary.worker, rank=rank, span=summary.span, names=list(steps.texts["name"]),
                     start=steps.numbers["start"], duration=steps.numbers["duration"],
                     communication=steps.numbers["communication"],
                     exposed_communication=steps.numbers["exposed_communication"])


def step_columns(ranks: Sequence[RankSteps]) -> list[str]:
    """Every step name of any rank, by step number (``ProfilerStep#N``), then by first appearance."""
    first_seen: dict[str, int] = {}
    for r in ranks:
        for name in r.names:
            first_seen.setdefault(name, len(first_seen))

    def key(name: str) -> tuple[int, int, int]:
        m = _STEP_NUMBER.search(name)
        return (0, int(m.group(1)), first_seen[name]) if m else (1, 0, first_seen[name])

    return sorted(first_seen, key=key)


def _cells(ranks: Sequence[RankSteps], columns: list[str], field: str) -> np.ndarray:
    """rank × step in µs, NaN where a rank has no step of that name."""
    index = {name: i for i, name in enumerate(columns)}
    out = np.full((len(ranks), len(columns)), np.nan)
    for row, r in enumerate(ranks):  # one iteration per rank, whole arrays within
        cols = np.fromiter((index[n] for n in r.names), dtype=np.int64, count=len(r.names))
        out[row, cols] = getattr(r, field) / NS_PER_US
    return out


def _nullable(matrix: np.ndarray) -> list[list[Optional[float]]]:
    """Rows of floats with NaN as None (JSON null)."""
    rows = matrix.tolist()
    if np.isnan(matrix).any():
        return [[None if v != v else v for v in row] for row in rows]
    return rows


def step_matrix(ranks: Sequence[RankSteps]) -> dict[str, Any]:
    """The rank × step matrix (µs). ``ranks`` in the order the rows are shown (by rank)."""
    columns = step_columns(ranks)
    step_time = _cells(ranks, columns, "duration")
    communication = _cells(ranks, columns, "communication")
    exposed = _cells(ranks, columns, "exposed_communication")
    start = _cells(ranks, columns, "start")
    present = ~np.isnan(step_time)
    # Every column has at least one rank with that step (columns come from the ranks' own steps).
    median = np.nanmedian(step_time, axis=0) if len(ranks) else np.zeros(0)
    # Per step, the rank with the longest step time (the column's straggler), -1 for an empty column.
    filled = np.where(present, step_time, -np.inf)
    slowest = np.where(present.any(axis=0), np.argmax(filled, axis=0), -1) if len(ranks) else np.zeros(0, np.int64)
    return {
        "ranks": [{"worker": r.worker, "rank": r.rank, "span": r.span} for r in ranks],
        "steps": columns,
        "step_time": _nullable(step_time),
        "communication": _nullable(communication),
        "exposed_communication": _nullable(exposed),
        "step_start": _nullable(start),
        "step_median": [None if v != v else float(v) for v in np.asarray(median).tolist()],
        "slowest_rank": [int(i) for i in np.asarray(slowest).tolist()],
    }


def matrix_rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The matrix as one row per (rank, step) present: the CSV table."""
    rows = []
    for i, r in enumerate(answer["ranks"]):
        for j, step in enumerate(answer["steps"]):
            if answer["step_time"][i][j] is None:
                continue
            rows.append({"rank": r["rank"], "worker": r["worker"], "step": step,
                         "step_time": answer["step_time"][i][j], "communication": answer["communication"][i][j],
                         "exposed_communication": answer["exposed_communication"][i][j]})
    return rows


def _base_time_ns(model: TraceModel) -> Optional[int]:
    base = model.metadata.get("baseTimeNanoseconds")
    return base if isinstance(base, int) and not isinstance(base, bool) else None


def rank_alignment(ranks: Sequence[tuple[RankSteps, TraceModel]], align: str, step: Optional[str]) -> dict[str, Any]:
    """Where each rank's ``step`` lies on one time axis: ``shift`` (µs) added to the rank's trace times.

    ``step`` defaults to the first step every rank has (else the first of any rank). Ranks without
    that step are listed in ``missing``.
    """
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be one of {', '.join(ALIGNMENTS)}")
    columns = step_columns([r for r, _ in ranks])
    common = [c for c in columns if all(c in r.names for r, _ in ranks)]
    if step is None:
        step = (common or columns or [None])[0]
    elif step not in columns:
        raise ValueError(f"no rank has a step named {step!r}")
    notes: list[str] = []
    placed: list[tuple[RankSteps, TraceModel, int]] = []
    missing = []
    for r, model in ranks:
        if step in r.names:
            placed.append((r, model, r.names.index(step)))
        else:
            missing.append(r.worker)
    bases = [_base_time_ns(model) for _, model, _ in placed]
    if align == "time" and any(b is None for b in bases):
        notes.append("Some traces record no baseTimeNanoseconds: their times are taken as written.")
    # Absolute start of the step per rank (ns, integers: epoch nanoseconds exceed a double's precision).
    absolute = [(b or 0) + int(r.start[i]) for (r, _, i), b in zip(placed, bases)]
    origin = min(absolute) if absolute else 0
    workers = []
    for (r, model, i), b, start_abs in zip(placed, bases, absolute):
        start, end = int(r.start[i]), int(r.start[i] + r.duration[i])
        shift_ns = -start if align == "step" else (b or 0) - origin
        workers.append({
            "worker": r.worker, "rank": r.rank, "span": r.span, "shift": shift_ns / NS_PER_US,
            "step_start": start / NS_PER_US, "step_end": end / NS_PER_US,
            "late": (start_abs - origin) / NS_PER_US,
            "base_time_ns": b,
            "steps": [{"name": n, "start": float(s) / NS_PER_US, "end": float(s + d) / NS_PER_US}
                      for n, s, d in zip(r.names, r.start.tolist(), r.duration.tolist())],
        })
    return {"align": align, "step": step, "steps": columns, "common_steps": common, "workers": workers,
            "missing": missing, "notes": notes}
