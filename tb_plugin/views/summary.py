"""The span summary: what a loaded trace contains (sizes, time range, tracks, steps, parse notes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.trace_model import TraceModel

NS_PER_US = 1000.0


def span_summary(model: TraceModel) -> dict[str, Any]:
    steps = model.steps
    return {
        "framework": model.framework,
        "events": model.num_events,
        "start": model.start / NS_PER_US,
        "end": model.end / NS_PER_US,
        "duration": (model.end - model.start) / NS_PER_US,
        "counts": {
            "slices": len(model.slices),
            "instants": len(model.instants),
            "counters": len(model.counters),
            "flows": len(model.flows),
            "memory_events": int(np.count_nonzero(model.instants.addr >= 0)) if len(model.instants) else 0,
        },
        "tracks": [
            {"id": t.id, "name": t.thread_name, "group": t.process_name, "kind": t.kind, "max_depth": t.max_depth}
            for t in model.tracks
        ],
        "steps": [
            {"name": model.strings[int(n)], "start": int(s) / NS_PER_US, "dur": int(e - s) / NS_PER_US}
            for n, s, e in zip(steps.name, steps.start, steps.end)
        ],
        "devices": model.metadata.get("deviceProperties") or [],
        "distributed": model.metadata.get("distributedInfo"),
        "parse_notes": {
            "unknown_categories": model.stats.get("unknown_categories", {}),
            "skipped_phases": model.stats.get("skipped_phases", {}),
        },
    }
