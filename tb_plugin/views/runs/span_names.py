"""What a person reads to tell spans apart: when a span started (wall clock), its steps and its length.

Span names are ids (a timestamp in ns, a file's date), so pickers show these facts instead and keep
the id in a tooltip. From the loaded model when there is one, else from the writer's manifest
(``wall_time``, ``step_range``), so a span still loading already has a readable name.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model.categories import SliceKinds
from ...model.steps import find_steps
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_S, NS_PER_US
from ..quantities.devices import device, devices_of_rows

# A wall time is believed only between these years (the trace clock may be relative or monotonic).
_YEAR_2000_S = 946_684_800
_YEAR_2100_S = 4_102_444_800


def wall_time_s(model: TraceModel) -> Optional[float]:
    """The span's start as seconds since the epoch: the trace's start plus ``baseTimeNanoseconds``
    (torch 2.x writes times relative to it), when that lands between 2000 and 2100; else None."""
    base = model.metadata.get("baseTimeNanoseconds")
    base_ns = int(base) if isinstance(base, (int, float)) and not isinstance(base, bool) else 0
    seconds = (model.start + base_ns) / NS_PER_S
    return seconds if _YEAR_2000_S <= seconds < _YEAR_2100_S else None


def _manifest_number(manifest: dict[str, Any], key: str) -> Optional[float]:
    value = manifest.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _manifest_steps(manifest: dict[str, Any]) -> Optional[dict[str, Any]]:
    step_range = manifest.get("step_range")
    if (isinstance(step_range, list) and len(step_range) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in step_range) and step_range[0] <= step_range[1]):
        first, last = step_range
        return {"count": last - first + 1, "first": first, "last": last}
    return None


def span_facts(model: Optional[TraceModel], manifest: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """``{"start_time": epoch s | None, "duration": µs | None, "steps": {"count", "first", "last"} | None,
    "device": text | None}``; ``first``/``last`` are step numbers (``ProfilerStep#N``), or None for steps
    without one; ``device`` what the span's work ran on (``device_text``), None until the trace is loaded."""
    manifest = manifest or {}
    if model is None:
        wall = _manifest_number(manifest, "wall_time")
        return {"start_time": wall if wall is not None and _YEAR_2000_S <= wall < _YEAR_2100_S else None,
                "duration": None, "steps": _manifest_steps(manifest), "device": None}
    return model_facts(model)


def device_text(model: TraceModel) -> str:
    """What the span's work ran on, as a person tells runs apart: the device's own name ("NVIDIA A100-SXM4-80GB";
    its kind, "GPU" or "Ascend", when the trace names none), "CPU" for a span without device work. Several devices
    of one name are that name; of several names, the names joined by " + ". Compare pairs runs by it."""
    rows = np.flatnonzero(SliceKinds(model).device_work)
    if not len(rows):
        return "CPU"
    described = [device(model, d) for d in devices_of_rows(model, rows)]
    # A name that is only the label ("Ascend 1", written by a converter) says no more than the kind.
    names = sorted({d.kind if d.name == d.label else d.name for d in described})
    return " + ".join(names) if names else "device"


def model_facts(model: TraceModel) -> dict[str, Any]:
    """``span_facts`` of a loaded span (``views/answers.span_facts`` keeps it with the first answers)."""
    step_facts = None
    if len(model.steps):
        # The steps every page counts (trailing steps the profiler cut are left out, model/steps.py), and how many
        # of the trace's are not: the picker shows the overview's count.
        counted = find_steps(model)
        kept = len(counted)
        numbers = model.steps.number[:kept]
        known = numbers >= 0
        step_facts = {"count": kept,
                      "first": int(numbers[0]) if kept and known[0] else None,
                      "last": int(numbers[-1]) if kept and known[-1] else None,
                      "left_out": len(counted.left_out)}
    return {"start_time": wall_time_s(model), "duration": (model.end - model.start) / NS_PER_US, "steps": step_facts,
            "device": device_text(model)}
