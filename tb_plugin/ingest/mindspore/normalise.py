"""MindSpore's timeline (``ASCEND_PROFILER_OUTPUT/trace_view.json``) → the model's conventions.

MindSpore writes a bare JSON array of Chrome-trace events; ``chrome/decode.py`` decodes it
(its ``ts``/``dur`` strings are read exactly to the ns there, see ``events.times_ns``). This
module then normalises the decoded columns (``normalise``), before ``model.build`` sees them:

* Categories: every event has ``"cat": ""``; what a slice is, MindSpore says with the name of its
  process. The CPU profiler writes two: ``"CPU OP"`` (one slice per kernel execution, named by
  the operator's full scope name such as ``Default/network-WithLossCell/.../Conv2D-op0``, or its
  bare type in PyNative mode, ``"MatMul"``) and ``"Scope Layer"`` (the scope hierarchy, one
  thread per depth). Slices of those processes take the process name as their category, so
  ``model/categories.py`` can classify them (``MINDSPORE_*``) and the trace view shows
  MindSpore's own terms. The layers of an Ascend ``trace_view.json`` (``Ascend Hardware``, ``CANN``,
  ``HCCL``, ``Overlap Analysis``...; msprof's ``msprof_<ts>.json`` has the same) are mapped by
  ``ascend_layers.py``.
* Steps: the CPU profiler records none (no step markers, data loading or memory in the
  timeline), so the whole span is one step, as for any trace without steps.
* Memory: the timeline has none; the memory record beside it (``FRAMEWORK/cpu_ms_memory_record_<id>.txt``)
  maps onto ``[memory]`` totals with ``memory_record.py``.

The older device timelines of MindSpore's profiler folder (``ascend_timeline_display_<id>.json``,
``gpu_timeline_display_<id>.json``) have no ``process_name`` metadata at all: fixed process ids
say what a slice is there, and ``timeline.py`` maps them (``normalise`` hands them over).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.categories import MINDSPORE_CATEGORIES
from . import ascend_layers, timeline

if TYPE_CHECKING:
    from ...model.raw_columns import RawColumns


def normalise(raw: RawColumns) -> None:
    """Apply MindSpore's conventions in place: the CPU profiler's process names as categories, or
    the MindInsight-era device timeline's roles (``timeline.py``)."""
    if timeline.is_device_timeline(raw):
        timeline.normalise(raw)
        return
    _categories_from_process_names(raw)
    ascend_layers.normalise(raw)


def _categories_from_process_names(raw: RawColumns) -> None:
    """Give the slices of MindSpore's known processes their process name as category, in place."""
    strings = raw.strings
    category_of_pid: dict[int, int] = {}
    for kind, pid, _tid, args in raw.meta_events:
        name = getattr(args, "name", "")
        if kind == "process_name" and name in MINDSPORE_CATEGORIES:
            category_of_pid[pid] = strings[name]
    store = raw.parts.get("slices", {})
    if not category_of_pid or not store:
        return
    empty = strings[""]
    counts = raw.stats.setdefault("categories", {})
    for pids, cats in zip(store.get("pid", []), store.get("cat", [])):
        for pid, category in category_of_pid.items():
            rows = (pids == pid) & (cats == empty)
            moved = int(np.count_nonzero(rows))
            if moved:
                cats[rows] = category
                text = strings.strings[category]
                counts[text] = counts.get(text, 0) + moved
                counts[""] = counts.get("", 0) - moved
    if counts.get("") == 0:
        del counts[""]
