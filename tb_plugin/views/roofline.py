"""Roofline page: where each operator runs against the roofs of its device.

One point per group of identical operator calls (operator, recorded arguments, precision, device: the groups of
``quantities/efficiency.work_summary``) at its arithmetic intensity (FLOPs per byte) and achieved FLOP/s; the roofs
of each device per precision (matrix and vector peaks) meet the memory roof (bandwidth x intensity) at the ridge
point (peak / bandwidth). The gaps table ranks the groups by the time they spend above their roofline time
(measured minus roofline: what could be saved at the roof), weighted by how long they run: what to optimise first.
Beside them, the bandwidth of the span's copies and memsets per direction (``quantities/copies.py``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ..model.operator_categories import LABELS
from ..model.trace_model import TraceModel
from .quantities.copies import copies
from .quantities.efficiency import HOST, Roofs, figures, group_figures, peaks_description
from .quantities.work_formulas import MATRIX

GAPS = 20
# The precisions a roof is drawn for, in the legend's order, and their names on the page.
ROOF_PRECISIONS = (("fp8", "FP8"), ("int8", "INT8"), ("bf16", "BF16"), ("fp16", "FP16"), ("tf32", "TF32"),
                   ("fp32", "FP32"), ("fp64", "FP64"))


def roofline(model: TraceModel, summary: Mapping[str, Any], roofs: Roofs) -> dict[str, Any]:
    """The Roofline page's answer from the span's work summary (``quantities/efficiency.work_summary``) and the
    device peaks."""
    groups = summary["groups"]
    fig = group_figures(summary, roofs)
    points = []
    for i in range(len(groups["name"])):
        calls = groups["calls"][i]
        row = figures(groups["flops"][i] * calls, groups["bytes"][i] * calls, groups["time"][i],
                      float(fig.roofline_time[i]), float(fig.compute_time[i]), float(fig.memory_time[i]))
        points.append({
            "name": groups["name"][i], "input_shape": groups["input_shape"][i], "input_type": groups["input_type"][i],
            "params": groups["params"][i], "category": groups["category"][i],
            "category_label": LABELS[groups["category"][i]], "unit": groups["unit"][i],
            "precision": groups["precision"][i], "device": groups["device"][i], "calls": calls,
            "flops_per_call": groups["flops"][i], "bytes_per_call": groups["bytes"][i], "time": groups["time"][i],
            "first_start": groups["first_start"][i], "first_dur": groups["first_dur"][i],
            "first_event_id": groups["first_event_id"][i], "roofline_reason": fig.reason[i], **row,
        })
    used = {int(d) for d in groups["device"]} - {HOST}  # the devices that ran counted work, else every device
    devices = sorted(used or set(roofs.resolved) - {HOST}) if summary["time_basis"] == "device" else [HOST]
    device_roofs = [_roofs(entry) for entry in peaks_description(roofs, devices)]
    gap = np.array([p["time"] - p["roofline_time"] if p["roofline_time"] is not None else -math.inf for p in points])
    order = [int(i) for i in np.argsort(-gap, kind="stable") if math.isfinite(gap[i]) and gap[i] > 0][:GAPS]
    total_time = summary["device_time"]
    return {
        "time_basis": summary["time_basis"],
        "devices": device_roofs,
        "points": points,
        "gaps": [dict(points[i], index=i, gap=float(gap[i]),
                      gap_share=float(gap[i]) / total_time if total_time > 0 else None) for i in order],
        "uncounted": summary["uncounted"],
        "total_time": total_time,
        "peaks_error": roofs.peaks_error,
        "copies": copies(summary["copies"], _first_peaks(roofs)),
    }


def _first_peaks(roofs: Roofs) -> Any:
    """The peaks of the span's first device that has them (its copies' links)."""
    return next((r.peaks for d, r in sorted(roofs.resolved.items()) if d != HOST and r.peaks is not None), None)


def _roofs(entry: dict[str, Any]) -> dict[str, Any]:
    """A device's roofs: memory bandwidth (bytes/s), and per precision and unit the peak (FLOP/s) and the ridge
    point (FLOPs per byte where the memory roof meets it)."""
    peaks = entry["peaks"]
    if peaks is None:
        return {"device": entry["device"], "name": None, "reason": entry["reason"], "bandwidth": None, "roofs": []}
    bandwidth = peaks["memory_bandwidth_gbps"] * 1e9 if peaks["memory_bandwidth_gbps"] else None
    tflops = peaks["tflops"]
    out = []
    for key, label in ROOF_PRECISIONS:
        matrix = tflops.get(f"{key}_matrix", tflops.get(key)) if key in ("fp32", "fp64") else tflops.get(key)
        if matrix:
            out.append(_roof(f"{label} matrix" if f"{key}_matrix" in tflops else label, key, MATRIX, matrix * 1e12,
                             bandwidth))
    for key, label in (("fp32", "FP32 vector"), ("fp64", "FP64 vector")):
        if tflops.get(key) and f"{key}_matrix" in tflops:
            out.append(_roof(label, key, "vector", tflops[key] * 1e12, bandwidth))
    return {"device": entry["device"], "name": peaks["name"], "reason": "", "bandwidth": bandwidth, "roofs": out,
            "source": peaks["source"], "note": peaks["note"]}


def _roof(label: str, precision: str, unit: str, peak: float, bandwidth: Any) -> dict[str, Any]:
    return {"label": label, "precision": precision, "unit": unit, "peak": peak,
            "ridge": peak / bandwidth if bandwidth else None}
