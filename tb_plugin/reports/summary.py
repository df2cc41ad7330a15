"""``profscope summary``'s output: plain text (``summary_text``), JSON (``summary_json``) and CSV (``summary_csv``)
of one span's ``report.SpanViews``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from ..views import memory as memory_view
from ..views import table_csv as export
from .report import (
    CATEGORY_LABELS, NAME_WIDTH, SHAPE_WIDTH, SORT_LABELS, STEP_SOURCE_TEXT, SpanViews, benchmark_line,
    communication_line, devices_noun, format_bytes, format_duration, format_percent, format_us, left_out_lines,
    kernel_cells, memory_peaks, operator_cells, operator_headers, operator_sort, shown_categories, snapshot_when,
    top_operators, truncate,
)


# --- plain text ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    header: str
    align: str = ">"  # ">" right (numbers), "<" left (names)
    width: Optional[int] = None  # cut longer cells with an ellipsis


def text_table(columns: Sequence[Column], rows: Iterable[Sequence[str]], indent: str = "") -> str:
    """Rows of cells as aligned columns under a header and a rule."""
    cut = [[truncate(cell, col.width) if col.width else cell for col, cell in zip(columns, row)] for row in rows]
    widths = [max([len(col.header)] + [len(row[i]) for row in cut]) for i, col in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        parts = [f"{cell:{col.align}{width}}" for col, cell, width in zip(columns, cells, widths)]
        return (indent + "  ".join(parts)).rstrip()

    rule = indent + "  ".join("-" * width for width in widths)
    return "\n".join([line([c.header for c in columns]), rule] + [line(row) for row in cut])


def _text_breakdown(overview: dict[str, Any]) -> str:
    mean = overview["mean_step_time"]
    rows = [[CATEGORY_LABELS.get(c, c), format_us(overview["breakdown"][c]),
             format_percent(overview["breakdown"][c] / mean if mean > 0 else None)]
            for c in shown_categories(overview)]
    rows.append(["Step (total)", format_us(mean), format_percent(1.0 if mean > 0 else None)])
    columns = (Column("Category", "<"), Column("Mean per step"), Column("% of step"))
    return "Step-time breakdown (mean per step)\n" + text_table(columns, rows)


def _device_lines(device: dict[str, Any]) -> list[str]:
    facts = [format_bytes(device["memory"]) if device.get("memory") else None,
             f"compute capability {device['compute_capability']}" if device.get("compute_capability") else None,
             f"{device['num_sms']} SMs" if device.get("num_sms") else None]
    described = ", ".join(f for f in facts if f)
    head = f"{device.get('label') or 'GPU ' + str(device['id'])}: {device['name']}" + (f" ({described})" if described else "")
    figures = f"utilization {format_percent(device.get('utilization'))}"
    if device.get("kind", "GPU") == "GPU":  # SM and Tensor Core figures are GPU figures: other devices have none
        figures += (f" · est. SM efficiency {format_percent(device.get('sm_efficiency'))} · "
                    f"est. achieved occupancy {format_percent(device.get('achieved_occupancy'))} · "
                    f"Tensor Cores {format_percent(device.get('tensor_core_share'))} of kernel time")
    if device.get("communication_time"):
        figures += (f" · kernels {format_duration(device.get('kernel_time'))}, "
                    f"collectives {format_duration(device['communication_time'])}")
    return [head, "  " + figures]


def _text_operators(operators: dict[str, Any], top: int, sort: Optional[str]) -> str:
    rows = top_operators(operators, top, sort)
    if not rows:
        return "Operators: none recorded"
    grouping = "name and input shape" if operators.get("group_by") == "input_shape" else "name"
    title = (f"Top {len(rows)} operators by {SORT_LABELS[operator_sort(operators, sort)]} "
             f"(of {len(operators['rows'])}, grouped by {grouping})")
    widths = {"Name": NAME_WIDTH, "Input shape": SHAPE_WIDTH}
    columns = [Column(h, "<", widths[h]) if h in widths else Column(h) for h in operator_headers(operators)]
    return title + "\n" + text_table(columns, [operator_cells(r, operators) for r in rows])


def _text_kernels(kernels: dict[str, Any], top: int) -> str:
    rows = kernels.get("rows", [])[:top]
    if not rows:
        return "Kernels: no GPU kernels in this span"
    total = float(kernels.get("total") or 0.0)
    title = (f"Top {len(rows)} kernels by total time (of {len(kernels['rows'])}; all kernels "
             f"{format_duration(total)}, Tensor Cores {format_percent(kernels.get('tensor_core_share'))})")
    columns = (Column("Name", "<", NAME_WIDTH), Column("Calls"), Column("Total"), Column("Mean"), Column("Min"),
               Column("Max"), Column("% of kernel time"))
    return title + "\n" + text_table(columns, [kernel_cells(r, total) for r in rows])


def _text_memory(span: SpanViews) -> str:
    peaks = memory_peaks(span)
    if not peaks:
        return "Memory peak per device\n" + str(span.memory.get("hint") or memory_view.HOW_TO_RECORD)
    columns = (Column("Device", "<"), Column("Peak allocated"), Column("At (into the span)"), Column("Peak reserved"))
    rows = [[p["device"], format_bytes(p["allocated"]), format_duration(p["offset_us"]), format_bytes(p["reserved"])]
            for p in peaks]
    notes = "".join(f"\n{note}" for note in span.memory.get("notes") or [])
    return "Memory peak per device\n" + text_table(columns, rows) + notes


def _text_snapshot(snapshot: dict[str, Any]) -> str:
    lines = [f"Memory snapshot {snapshot['snapshot']} (device {snapshot['device']}): peak {format_bytes(snapshot['peak'])}"
             f" active at {snapshot_when(snapshot)}"
             + (f", {format_bytes(snapshot['reserved_peak'])} reserved at most" if snapshot["reserved_peak"] else "")
             + (f"; {snapshot['oom']} out-of-memory events" if snapshot["oom"] else "")]
    columns = (Column("Allocation site alive at the peak", "<"), Column("Bytes"), Column("Allocations"), Column("Share"))
    rows = [[truncate(s["label"], 70), format_bytes(s["bytes"]), f"{s['count']:,}", format_percent(s["share"])]
            for s in snapshot["sites"]]
    return "\n".join(lines) + "\n" + text_table(columns, rows)


def summary_text(span: SpanViews, top: int = 10, sort: Optional[str] = None) -> str:
    """The terminal summary of one span."""
    overview = span.overview
    devices = ", ".join(d["name"] for d in overview["devices"]) or (
        "Device activity without device properties" if overview["has_device"] else "CPU only")
    sections = [
        f"Profscope summary: {span.label}\n"
        f"framework {span.framework} · steps from {STEP_SOURCE_TEXT.get(overview['step_source'], overview['step_source'])}"
        f" · {devices}" + "".join(f"\n{line}" for line in left_out_lines(overview)),
        _text_breakdown(overview),
    ]
    if overview["devices"]:
        sections.append(f"{devices_noun(overview['devices'])} summary\n" + "\n".join(line for d in overview["devices"] for line in _device_lines(d)))
    communication = communication_line(overview)
    if communication:
        sections.append("Communication: " + communication)
    sections.append("Benchmark: " + benchmark_line(overview["benchmark"]))
    efficiency_text = efficiency_line(overview.get("efficiency"))
    if efficiency_text:
        sections.append("Efficiency: " + efficiency_text)
    if overview["recommendations"]:
        sections.append("Recommendations\n" + "\n".join(f"- {r['text']}" for r in overview["recommendations"]))
    sections += [_text_operators(span.operators, top, sort), _text_kernels(span.kernels, top), _text_memory(span)]
    if span.snapshot is not None:
        sections.append(_text_snapshot(span.snapshot))
    return "\n\n".join(sections) + "\n"


# --- for scripts: JSON and CSV ---------------------------------------------------------------------


def efficiency_line(figures: Optional[dict[str, Any]]) -> str:
    """MFU and the device time far from its roofline, as one line (the Overview's Efficiency section)."""
    if not figures:
        return ""
    mfu = figures["mfu"]
    parts = [f"MFU {mfu['mean']:.1%}" if mfu["mean"] is not None else f"MFU n/a ({mfu['reason']})"]
    low = figures["low_roofline"]
    if low["share"] is not None:
        parts.append(f"{low['share']:.1%} of device time under half its roofline")
    top = sorted(figures["categories"], key=lambda c: -c["time"])[:3]
    if top:
        parts.append("most device time in " + ", ".join(
            f"{c['label']} ({c['share']:.0%})" if c["share"] is not None else c["label"] for c in top))
    return "; ".join(parts)


def summary_json(span: SpanViews, top: int = 10, sort: Optional[str] = None) -> dict[str, Any]:
    """``summary --json``: the span, the overview answer, the top operators and kernels and the memory peaks,
    in the routes' units (µs, bytes, fractions 0..1)."""
    key = sort or ("device_self" if span.operators.get("has_device") else "host_self")
    return {
        "span": {"label": span.label, "framework": span.framework, **span.details},
        "overview": span.overview,
        "operators": {"group_by": span.operators.get("group_by", "name"), "sort": key, "total_rows": len(span.operators.get("rows", [])),
                      "rows": top_operators(span.operators, top, sort)},
        "kernels": {"total_rows": len(span.kernels.get("rows", [])), "rows": list(span.kernels.get("rows", []))[:top]},
        "memory": {"available": bool(span.memory.get("available")), "peaks": memory_peaks(span),
                   "notes": list(span.memory.get("notes") or [])},
        "memory_snapshot": span.snapshot,
    }


def summary_csv(span: SpanViews, table: str, sort: Optional[str] = None) -> str:
    """``summary --csv TABLE``: every row of one table, with the columns of the page's CSV download."""
    if table == "operators":
        return export.to_csv(export.operators_table(span.operators), f"{sort}:desc" if sort else None)
    if table == "kernels":
        return export.to_csv(export.kernels_table(span.kernels))
    if table == "steps":
        return export.to_csv(export.overview_table(span.overview))
    raise ValueError(f"no table {table!r}")
