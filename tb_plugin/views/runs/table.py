"""The run table: every span of the logdir in one row, to sort and pick two to compare.

One row per (run, worker, span) the plugin knows, loaded or not: a span still loading is
listed with ``status: "loading"`` (and its progress) and no numbers, a span that failed with
``status: "error"`` and its message. Numbers come from the views' own answers, as the parser
pool precomputed them (else computed once per model): the overview for steps, breakdown and
GPU utilization, the memory view for peaks. Nothing here loads a span: the caller passes only
the models the run manager already has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import isfinite
from typing import Any, Callable, Optional

import numpy as np

from ...model.trace_model import TraceModel
from ..quantities import efficiency
from ..overview import CATEGORIES

_DEVICE_NUMBER = re.compile(r"\s+\d+$")


@dataclass(frozen=True)
class TableSpan:
    """What the caller knows of one span: where it is, its load status, and its model when ready."""

    run: str
    worker: str
    span: str
    span_index: int  # position among the worker's spans, in time order
    status: str  # "ready" | "loading" | "error"
    model: Optional[TraceModel] = None
    progress: Optional[float] = None
    error: Optional[str] = None
    framework: Optional[str] = None  # known from the file name for writer spans, else from the model
    manifest: dict[str, Any] = field(default_factory=dict)


def manifest_batch_size(manifest: Optional[dict[str, Any]]) -> Optional[int]:
    """The manifest's batch size when it is a positive integer (manifests are files: untrusted)."""
    value = (manifest or {}).get("batch_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _tags(manifest: dict[str, Any]) -> Optional[dict[str, Any]]:
    tags = manifest.get("tags")
    if not isinstance(tags, dict):
        return None
    kept = {str(k): v for k, v in tags.items()
            if isinstance(v, (str, int, float)) and not isinstance(v, bool) and (not isinstance(v, float) or isfinite(v))}
    return kept or None


def peak_memory(answer: dict[str, Any]) -> Optional[dict[str, int]]:
    """Peak allocated bytes per device type ("CPU", "GPU"): the highest of its devices' peaks in
    the memory view's answer; None when the span has no memory events."""
    peaks: dict[str, int] = {}
    for device in answer.get("devices", []):
        peak = answer.get("peak", {}).get(device["id"])
        if peak is None or peak.get("allocated") is None or peak["allocated"] < 0:
            continue
        device_type = _DEVICE_NUMBER.sub("", device["name"])  # "GPU 0" → "GPU"
        peaks[device_type] = max(peaks.get(device_type, 0), int(peak["allocated"]))
    return peaks or None


def span_numbers(framework: str, overview: dict[str, Any], memory: dict[str, Any]) -> dict[str, Any]:
    """A loaded span's numbers in its row, from its overview (default step marker, with its efficiency figures) and
    memory answers."""
    mean = overview["mean_step_time"]
    utilizations = [d["utilization"] for d in overview["devices"] if d.get("utilization") is not None]
    return {
        "framework": framework,
        "steps": len(overview["steps"]),
        "step_source": overview["step_source"],
        "mean_step_time": mean,
        "breakdown": dict(overview["breakdown"]),
        "shares": {c: (overview["breakdown"][c] / mean if mean > 0 else None) for c in CATEGORIES},
        "has_device": bool(overview["has_device"]),
        "devices": [d["name"] for d in overview["devices"]],
        "gpu_utilization": float(np.mean(utilizations)) if utilizations else None,
        "peak_memory": peak_memory(memory),
        "samples_per_second": overview["benchmark"].get("samples_per_second") if overview["benchmark"] else None,
        "mfu": efficiency.mean_mfu(overview),
    }


def run_table(spans: list[TableSpan],
              numbers: Callable[[TraceModel, Optional[int]], dict[str, Any]]) -> dict[str, Any]:
    """The ``runs/table`` route's answer: ``{"categories", "rows"}``, rows in run, worker, span order.
    ``numbers(model, batch_size)``: a loaded span's numbers (``views/answers.run_table`` gives ``span_numbers`` of
    its answers)."""
    rows = []
    for item in spans:
        batch_size = manifest_batch_size(item.manifest)
        row: dict[str, Any] = {
            "run": item.run,
            "worker": item.worker,
            "span": item.span,
            "span_index": item.span_index,
            "status": item.status,
            "framework": item.framework,
            "batch_size": batch_size,
            "tags": _tags(item.manifest),
        }
        if item.status == "ready" and item.model is not None:
            row.update(numbers(item.model, batch_size))
        elif item.status == "loading":
            row["progress"] = item.progress if item.progress is not None else 0.0
        elif item.error is not None:
            row["error"] = item.error
        rows.append(row)
    return {"categories": list(CATEGORIES), "rows": rows}
