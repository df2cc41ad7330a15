"""Reports to read outside TensorBoard: what they show about a span, and how their numbers read.

``collect_span`` gathers the answers of the overview, operator, kernel and memory views
for one span (the same answers the routes serve, precomputed ones included). The
renderers are pure functions of those answers:

* ``summary.py`` — ``summary_text``: column-aligned plain text, like torch's
  ``key_averages().table()`` and Paddle's ``summary()``: step-time breakdown, GPU summary,
  benchmark, top operators and kernels, memory peak; ``summary_json`` and ``summary_csv``
  for scripts.
* ``report_html.py`` — ``report_html``: one HTML file that opens without a network: inline
  CSS, charts as inline SVG, no script, no external address.

This module holds what both show: the span's answers (``SpanViews``), the number formats,
the rows they select and the lines and cells they share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from ..views import answers
from ..views.overview import CATEGORIES


# Labels and colours of the breakdown categories, as the PROFSCOPE tab shows them
# (frontend/src/lib/metrics.ts, CATEGORY_INFO).
CATEGORY_LABELS: dict[str, str] = {
    "kernel": "Kernel", "memcpy": "Memcpy", "memset": "Memset", "communication": "Communication",
    "runtime": "Runtime", "dataloader": "DataLoader", "cpu_exec": "CPU Exec", "other": "Other",
}
CATEGORY_COLORS: dict[str, str] = {
    "kernel": "#4e79a7", "memcpy": "#f28e2b", "memset": "#edc948", "communication": "#e15759",
    "runtime": "#b07aa1", "dataloader": "#59a14f", "cpu_exec": "#76b7b2", "other": "#bab0ac",
}
STEP_SOURCE_TEXT: dict[str, str] = {
    "ProfilerStep": "ProfilerStep#N ranges",
    "user": "ranges named by the step marker",
    "span": "no step ranges found: the whole span counts as one step",
}

# Operator table sort keys (all descending).
OPERATOR_SORT_KEYS = ("device_self", "device_total", "host_self", "host_total", "calls")
SORT_LABELS: dict[str, str] = {
    "device_self": "device self time", "device_total": "device total time", "host_self": "host self time",
    "host_total": "host total time", "calls": "calls",
}
NAME_WIDTH = 60
SHAPE_WIDTH = 40
ELLIPSIS = "…"
DASH = "—"


# --- what a report shows about one span ---------------------------------------------------


@dataclass(frozen=True)
class SpanViews:
    """One span's identity and the view answers a report renders."""

    label: str  # how the report names the span: "run · worker · span", or a file name
    framework: str
    start_us: float  # the span's first timestamp, so memory peaks read as offsets into the span
    overview: dict[str, Any]
    operators: dict[str, Any]
    kernels: dict[str, Any]
    memory: dict[str, Any]  # the memory view's "available", "hint", "devices", "peak" and "notes"
    details: dict[str, str] = field(default_factory=dict)  # run / worker / span / file, as known
    # The span's allocator memory snapshot, when it has one (views/answers.snapshot_peak_summary).
    snapshot: Optional[dict[str, Any]] = None


def collect_span(model: TraceModel, label: str, group_by: str = "name", batch_size: Optional[int] = None,
                 details: Optional[dict[str, str]] = None,
                 peaks: Optional[answers.PeaksSetting] = None) -> SpanViews:
    """The answers of the overview, operator, kernel and memory views for ``model``.

    Each is asked of ``views/answers.py`` as the routes ask it: the parser pool's precomputed
    answer when the cache holds one, else computed here; the figures that need a device peak with ``peaks`` (the
    user's file, else the built-in table).
    """
    memory = answers.memory(model)
    return SpanViews(
        label=label,
        framework=model.framework,
        start_us=model.start / NS_PER_US,
        overview=answers.overview(model, batch_size=batch_size, peaks=peaks),
        operators=answers.operators(model, group_by, peaks),
        kernels=answers.kernels(model, "name", peaks),
        memory={key: memory.get(key) for key in ("available", "hint", "devices", "peak", "notes")},
        details=dict(details or {}),
    )


# --- formatting ----------------------------------------------------------------------------


def format_duration(us: Optional[float]) -> str:
    """A duration in µs with a unit that keeps it short: "850.0 µs", "142.46 ms", "1.23 s"."""
    if us is None or not math.isfinite(us):
        return DASH
    sign = "-" if us < 0 else ""
    size = abs(us)
    # The limits sit just below 1000 of a unit, so that rounding never shows "1000.0 µs".
    if size < 999.95:
        return f"{sign}{size:.1f} µs"
    if size < 999_995:
        return f"{sign}{size / 1e3:.2f} ms"
    return f"{sign}{size / 1e6:.2f} s"


def format_signed_duration(us: Optional[float]) -> str:
    """A delta: "+1.20 ms", "-850.0 µs", "0.0 µs"."""
    if us is None or not math.isfinite(us):
        return DASH
    return ("+" if us > 0 else "") + format_duration(us)


def format_us(us: Optional[float]) -> str:
    """Whole microseconds with thousands separators, as torch-tb-profiler's overview shows them: "98,589 µs"."""
    if us is None or not math.isfinite(us):
        return DASH
    return f"{us:,.0f} µs"


def format_percent(fraction: Optional[float], decimals: int = 1) -> str:
    if fraction is None or not math.isfinite(fraction):
        return DASH
    return f"{fraction * 100:.{decimals}f}%"


def format_ratio(ratio: Optional[float]) -> str:
    if ratio is None or not math.isfinite(ratio):
        return DASH
    return f"{ratio:.2f}×"


def format_bytes(count: Optional[float]) -> str:
    """Binary units, as the PROFSCOPE tab shows sizes: "512 B", "5.45 MiB"."""
    if count is None or not math.isfinite(count):
        return DASH
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    sign = "-" if count < 0 else ""
    value = float(abs(count))
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{sign}{value:.0f} {units[unit]}" if unit == 0 else f"{sign}{value:.2f} {units[unit]}"


def format_count(count: Optional[float]) -> str:
    return DASH if count is None else f"{count:,.0f}"


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    text = " ".join(text.split())  # names may hold newlines or tabs: keep one line per row
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def _evidence_value(key: str, value: Any) -> str:
    """An evidence value in the unit its key says."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        if key.endswith("_us"):
            return format_duration(float(value))
        if key.endswith("bytes"):
            return format_bytes(float(value))
        if key.endswith(("share", "utilization")):
            return format_percent(float(value))
        return format_count(value) if isinstance(value, int) else f"{value:.3g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def evidence_items(evidence: Any) -> list[tuple[str, str]]:
    if not isinstance(evidence, dict):
        return []
    return [(str(key).replace("_", " "), _evidence_value(str(key), value)) for key, value in evidence.items()]


# --- shared selections -----------------------------------------------------------------------


def shown_categories(overview: dict[str, Any]) -> list[str]:
    """The overview's categories, without Communication when the span has none (as torch-tb-profiler)."""
    categories = overview.get("categories") or list(CATEGORIES)
    total = overview["breakdown"].get("communication", 0.0) + sum(
        step["breakdown"].get("communication", 0.0) for step in overview.get("steps", []))
    return [c for c in categories if c != "communication" or total > 0]


def compared_categories(comparison: dict[str, Any]) -> list[str]:
    """The comparison's categories that either side spent time in."""
    breakdown = comparison["breakdown"]
    return [c for c in comparison["categories"] if breakdown["base"][c] > 0 or breakdown["exp"][c] > 0]


def default_sort(operators: dict[str, Any]) -> str:
    return "device_self" if operators.get("has_device") else "host_self"


def operator_sort(operators: dict[str, Any], sort: Optional[str]) -> str:
    """The sort key to use: the default for None, and host time instead of device time when no operator
    launched device work (every device time is then 0)."""
    key = sort or default_sort(operators)
    if key.startswith("device_") and not operators.get("has_device"):
        return key.replace("device_", "host_")
    return key


def top_operators(operators: dict[str, Any], top: int, sort: Optional[str] = None) -> list[dict[str, Any]]:
    key = operator_sort(operators, sort)
    if key not in OPERATOR_SORT_KEYS:
        raise ValueError(f"sort must be one of {OPERATOR_SORT_KEYS}")
    rows = list(operators.get("rows", []))
    rows.sort(key=lambda row: (-float(row[key]), str(row["name"])))  # stable: ties by name
    return rows[:top]


def memory_peaks(span: SpanViews) -> list[dict[str, Any]]:
    """Per device with memory events: its name, peak allocated bytes, when (µs into the span), peak reserved."""
    memory = span.memory
    if not memory.get("available"):
        return []
    peaks = memory.get("peak") or {}
    out = []
    for device in memory.get("devices") or []:
        peak = peaks.get(device["id"])
        if not peak:
            continue
        reserved = peak.get("reserved")
        out.append({
            "device": str(device.get("name", device["id"])),
            "allocated": peak.get("allocated"),
            "offset_us": float(peak["time"]) - span.start_us if peak.get("time") is not None else None,
            "reserved": reserved if isinstance(reserved, (int, float)) and reserved > 0 else None,
            "capacity": device.get("capacity"),
        })
    return out


# --- lines and cells both renderers show ------------------------------------------------------


def left_out_lines(overview: dict[str, Any]) -> list[str]:
    """A sentence per trailing step of the trace that no figure counts, with why (``steps_left_out``)."""
    return [f"{step['name']} is left out of every figure: {step['reason']}."
            for step in overview.get("steps_left_out") or []]


def communication_line(overview: dict[str, Any]) -> Optional[str]:
    """Communication per step and its overlap with computation (the Distributed view's numbers), or None."""
    comm = overview.get("communication") or {}
    if not comm.get("total"):
        return None
    return (f"{format_duration(comm['total'])} per step, {format_duration(comm['overlap'])} of it overlapped by "
            f"computation ({format_percent(comm.get('overlap_ratio'))}), {format_duration(comm['exposed'])} exposed")


def benchmark_line(benchmark: dict[str, Any]) -> str:
    if not benchmark:
        return "no steps"
    steps = benchmark["steps"]
    parts = [f"{steps} step{'s' if steps != 1 else ''}",
             f"mean step time {format_duration(benchmark['mean_step_time'])} "
             f"(min {format_duration(benchmark['min_step_time'])}, max {format_duration(benchmark['max_step_time'])})"]
    if benchmark.get("steps_per_second"):
        parts.append(f"{benchmark['steps_per_second']:.2f} steps/s")
    if benchmark.get("samples_per_second"):
        parts.append(f"{benchmark['samples_per_second']:,.1f} samples/s (batch size {benchmark['batch_size']})")
    parts.append(f"reader cost {format_duration(benchmark['reader_cost'])} per step "
                 f"({format_percent(benchmark['dataloader_share'])})")
    return ", ".join(parts)


def operator_headers(operators: dict[str, Any]) -> list[str]:
    """Column headers of an operator table: no input shape unless grouped by it, no device columns on a CPU-only span."""
    headers = ["Name"] + (["Input shape"] if operators.get("group_by") == "input_shape" else [])
    headers += ["Calls", "Host self", "Host total"]
    return headers + (["Device self", "Device total"] if operators.get("has_device") else [])


def operator_cells(row: dict[str, Any], operators: dict[str, Any]) -> list[str]:
    cells = [str(row["name"])]
    if operators.get("group_by") == "input_shape":
        cells.append(str(row.get("input_shape") or ""))
    cells += [format_count(row["calls"]), format_duration(row["host_self"]), format_duration(row["host_total"])]
    if operators.get("has_device"):
        cells += [format_duration(row["device_self"]), format_duration(row["device_total"])]
    return cells


def kernel_cells(row: dict[str, Any], total: float) -> list[str]:
    return [str(row["name"]), format_count(row["calls"]), format_duration(row["total"]),
            format_duration(row["mean"]), format_duration(row["min"]), format_duration(row["max"]),
            format_percent(row["total"] / total if total > 0 else None)]


def devices_noun(devices: list[dict[str, Any]]) -> str:
    """ "GPU" when every device is one (``views/quantities/devices.py`` names them), else "Device"."""
    return "GPU" if all(d.get("kind", "GPU") == "GPU" for d in devices) else "Device"


def snapshot_when(snapshot: dict[str, Any]) -> str:
    """When a snapshot peaked: time into the snapshot, or the entry's number for a snapshot without times."""
    after = snapshot["peak_after"]
    return f"entry {after}" if snapshot["axis"] == "entry" else f"{format_duration(after)} into the snapshot"
