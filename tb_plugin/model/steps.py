"""Training steps of a span, as the overview, distributed and compare views count them.

Steps are the host ranges of ``ProfilerStep#N`` (or of a user-chosen ``record_function``
name), extended to the end of the device work they launched: a step's device activities
are those launched by runtime calls lying inside its host range, and a step starts no
earlier than the previous one ends. Trailing steps that launched no device work are
dropped (the profiler stopped before their kernels were recorded), as is a last step
that launched clearly less work than the one before. Where no device work is linked to
the steps (CPU-only spans), the same rule counts the host operators that started in each
step: a stub step cut by the profiler's stop would otherwise pull the mean step time down.
With no markers, the whole span is one step. Every step left out is listed with its reason
(``Steps.left_out``), which the pages show: the step count is the same everywhere, and a
framework's own summary that counts the stub too (Paddle's) is explained.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .categories import SliceKinds
from .trace_model import TraceModel

# A last step with less than this share of the previous step's device activities is cut.
_INCOMPLETE_LAST_STEP = 0.8
# Without device work, such a step must also last less than this share of the previous one.
_STUB_HOST_STEP = 0.25


@dataclass(frozen=True)
class Steps:
    names: list[str]
    host_start: np.ndarray  # int64 ns
    host_end: np.ndarray
    start: np.ndarray  # int64 ns, after extension to the device side
    end: np.ndarray
    device_activities: np.ndarray  # device activities launched from inside each step
    source: str  # "ProfilerStep", "user" or "span"
    left_out: tuple[tuple[str, str], ...] = ()  # (name, why) of each trailing step of the trace left out

    def __len__(self) -> int:
        return len(self.names)

    @property
    def durations(self) -> np.ndarray:
        return self.end - self.start


def find_steps(model: TraceModel, marker: Optional[str] = None) -> Steps:
    return model.memo(("steps", marker), lambda: _find_steps(model, marker))


def _find_steps(model: TraceModel, marker: Optional[str]) -> Steps:
    kinds = SliceKinds(model)
    s = model.slices
    if marker:
        pattern = re.compile(re.escape(marker) + r"(#\d+)?$")
        rows = np.flatnonzero(model.string_ids_where(lambda t: bool(pattern.match(t)))[s.name] & kinds.on_host)
        rows = rows[np.argsort(s.start[rows], kind="stable")]
        names = [model.strings[int(n)] for n in s.name[rows]]
        host_start, host_end, source = s.start[rows], s.end_at(rows), "user"
    elif len(model.steps):
        names = [model.strings[int(n)] for n in model.steps.name]
        host_start, host_end, source = model.steps.start, model.steps.end, "ProfilerStep"
    else:
        names, source = [], "span"
        host_start = host_end = np.zeros(0, dtype=np.int64)
    if len(names) == 0:
        host = kinds.host_op
        lo = int(s.start[host].min()) if host.any() else model.start
        hi = int(s.end_at(host).max()) if host.any() else model.end
        names, source = ["span"], "span"
        host_start, host_end = np.array([lo], dtype=np.int64), np.array([hi], dtype=np.int64)
    return _extend_to_device(model, kinds, names, host_start, host_end, source)


def _extend_to_device(model: TraceModel, kinds: SliceKinds, names: list[str], host_start: np.ndarray,
                      host_end: np.ndarray, source: str) -> Steps:
    s = model.slices
    n = len(names)
    device_rows = np.flatnonzero(kinds.device_activity & (model.links.launcher >= 0))
    launcher = model.links.launcher[device_rows]
    # The step whose host range fully contains the launching runtime call.
    step = np.searchsorted(host_start, s.start[launcher], side="right") - 1
    inside = (step >= 0) & (s.end_at(launcher) <= host_end[np.maximum(step, 0)])
    step, device_rows = step[inside], device_rows[inside]
    counts = np.bincount(step, minlength=n)
    big = np.iinfo(np.int64).max
    device_min = np.full(n, big, dtype=np.int64)
    device_max = np.full(n, -big, dtype=np.int64)
    np.minimum.at(device_min, step, s.start[device_rows])
    np.maximum.at(device_max, step, s.end_at(device_rows))

    start, end = host_start.copy(), host_end.copy()
    if counts.sum() > 0:
        prev_end = int(host_start[0])
        if counts[0] > 0:
            # Device work launched before the first step that was still running when it began.
            launched = np.zeros(len(s), dtype=bool)
            launched[device_rows] = True
            earlier = kinds.device_activity & ~launched & (s.end < device_min[0])
            if earlier.any():
                prev_end = max(prev_end, int(s.end_at(earlier).max()))
        for i in range(n):  # one iteration per step, not per event
            start[i] = max(prev_end, int(host_start[i]))
            end[i] = max(int(host_end[i]), int(device_max[i])) if counts[i] else max(int(host_end[i]), int(start[i]))
            end[i] = max(end[i], start[i])
            prev_end = int(end[i])
    left_out: list[tuple[str, str]] = []
    if counts.sum() > 0:
        if n > 1:
            last = int(np.flatnonzero(counts > 0)[-1]) if (counts > 0).any() else -1
            keep = last + 1
            if last > 0 and counts[last - 1] * _INCOMPLETE_LAST_STEP > counts[last]:
                keep = last
                left_out.append((names[last], f"it launched {int(counts[last])} device activities against "
                                              f"{int(counts[last - 1])} in the step before: the profiler stopped "
                                              f"inside it"))
            left_out += [(names[i], "it launched no device work: the profiler stopped before its work was recorded")
                         for i in range(last + 1, n)]
            if 0 < keep < n:
                names, host_start, host_end = names[:keep], host_start[:keep], host_end[:keep]
                start, end, counts = start[:keep], end[:keep], counts[:keep]
            else:
                left_out = []
    elif n > 1:
        keep, left_out = _complete_host_steps(model, kinds, names, host_start, host_end)
        if keep < n:
            names, host_start, host_end = names[:keep], host_start[:keep], host_end[:keep]
            start, end, counts = start[:keep], end[:keep], counts[:keep]
    return Steps(names=list(names), host_start=host_start, host_end=host_end, start=start, end=end,
                 device_activities=counts, source=source, left_out=tuple(left_out))


def _complete_host_steps(model: TraceModel, kinds: SliceKinds, names: list[str], host_start: np.ndarray,
                         host_end: np.ndarray) -> tuple[int, list[tuple[str, str]]]:
    """How many leading steps to keep when no device work is linked to the steps, and why the others are left out:
    trailing steps in which no operator started are dropped, then a last step that ran clearly fewer operators
    than the one before (the rule of device activities) and lasted less than a quarter of it: the profiler
    stopped inside it. A short step that ran a different path (no backward) is kept."""
    s = model.slices
    rows = np.flatnonzero(kinds.operator)
    starts = s.start[rows]
    step = np.searchsorted(host_start, starts, side="right") - 1
    inside = (step >= 0) & (starts < host_end[np.maximum(step, 0)])
    counts = np.bincount(step[inside], minlength=len(host_start))
    if not (counts > 0).any():
        return len(host_start), []
    last = int(np.flatnonzero(counts > 0)[-1])
    durations = host_end - host_start
    empty = [(names[i], "no operator started in it: the profiler stopped before it ran")
             for i in range(last + 1, len(names))]
    if (last > 0 and counts[last - 1] * _INCOMPLETE_LAST_STEP > counts[last]
            and durations[last] < _STUB_HOST_STEP * durations[last - 1]):
        stub = (names[last], f"it ran {int(counts[last])} operators in {durations[last] / 1e3:,.0f} µs against "
                             f"{int(counts[last - 1])} in {durations[last - 1] / 1e3:,.0f} µs in the step before: the "
                             f"profiler stopped inside it")
        return last, [stub] + empty
    return last + 1, empty
