"""``profscope report``'s HTML: one file that opens without a network (inline CSS, charts as inline SVG, no script,
no external address). A Content-Security-Policy forbids any fetch or script, so even a string that escaped escaping
could not run or call out.

Every string that comes from a trace (operator, kernel, step and device names, run names) is untrusted: it passes
through ``esc`` (``html.escape``), in text and in attributes alike.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from ..views import memory as memory_view
from .report import (
    CATEGORY_COLORS, CATEGORY_LABELS, DASH, SORT_LABELS, STEP_SOURCE_TEXT, SpanViews, benchmark_line,
    communication_line, compared_categories, devices_noun, evidence_items, format_bytes, format_count,
    format_duration, format_percent, format_ratio, format_signed_duration, format_us, kernel_cells, left_out_lines,
    memory_peaks,
    operator_cells, operator_headers, operator_sort, shown_categories, snapshot_when, top_operators,
)


# --- HTML: building blocks -----------------------------------------------------------------------


def esc(value: Any) -> str:
    """Any value as HTML text or attribute content (quotes escaped too)."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True)
class HtmlColumn:
    header: str
    kind: str = "num"  # "num" (right-aligned), "name" (long text, cut with an ellipsis), "text"


def html_table(columns: Sequence[HtmlColumn], rows: Iterable[Sequence[str]], caption: str = "",
               row_classes: Optional[Sequence[str]] = None, test_id: str = "") -> str:
    """A table; every cell must already be escaped HTML (see ``esc``). Name cells carry their full text
    in a tooltip, since CSS cuts them."""
    head = "".join(f'<th class="{c.kind}">{esc(c.header)}</th>' for c in columns)
    body = []
    for i, row in enumerate(rows):
        cells = []
        for col, cell in zip(columns, row):
            title = f' title="{cell}"' if col.kind == "name" else ""
            cells.append(f'<td class="{col.kind}"{title}>{cell}</td>')
        row_class = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        body.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    caption_html = f"<caption>{esc(caption)}</caption>" if caption else ""
    test_attr = f' data-testid="{esc(test_id)}"' if test_id else ""
    return (f'<div class="table"><table{test_attr}>{caption_html}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _facts(items: Sequence[tuple[str, str]]) -> str:
    """Label/value pairs (values already escaped) as a definition list."""
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def _legend(categories: Sequence[str]) -> str:
    items = "".join(f'<li><span class="swatch" style="background:{CATEGORY_COLORS[c]}"></span>'
                    f"{esc(CATEGORY_LABELS[c])}</li>" for c in categories)
    return f'<ul class="legend">{items}</ul>'


def nice_step(span: float, max_ticks: int = 6) -> float:
    """A tick spacing of 1, 2 or 5 × 10^k giving at most ``max_ticks`` intervals over ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max_ticks
    power = 10.0 ** math.floor(math.log10(raw))
    return next(factor * power for factor in (1.0, 2.0, 5.0, 10.0) if factor * power >= raw)


def format_tick(value: float, tick: float, axis_max: float) -> str:
    """An axis label in the unit of the axis' largest value, with the decimals the tick spacing needs:
    "0", "50 ms", "2.5 s"."""
    if value == 0:
        return "0"
    unit, scale = ("µs", 1.0) if axis_max < 1e3 else ("ms", 1e3) if axis_max < 1e6 else ("s", 1e6)
    decimals = max(0, -math.floor(math.log10(tick / scale) + 1e-9))
    return f"{value / scale:.{decimals}f} {unit}"


def _step_label(name: str, index: int) -> str:
    """"ProfilerStep#12" → "12"; other names keep their position."""
    head, sep, number = name.rpartition("#")
    return number if sep and number.isdigit() else str(index + 1)


def step_chart_svg(overview: dict[str, Any]) -> str:
    """Per step, one column stacked by category (the first category at the bottom), µs on the y axis."""
    steps = overview.get("steps", [])
    categories = shown_categories(overview)
    if not steps:
        return '<p class="muted">No steps.</p>'
    width, height = 760, 280
    left, right, top, bottom = 70, 12, 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max(sum(step["breakdown"][c] for c in categories) for step in steps) or 1.0
    tick = nice_step(highest)
    y_max = math.ceil(highest / tick) * tick

    def y(value: float) -> float:
        return top + plot_h - value / y_max * plot_h

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             f'aria-label="Step time per step, stacked by category">']
    for i in range(int(round(y_max / tick)) + 1):
        value = i * tick
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>'
                     f'<text class="tick" x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f"{esc(format_tick(value, tick, y_max))}</text>")
    slot = plot_w / len(steps)
    bar = max(slot * 0.7, 1.0)
    label_every = max(1, math.ceil(len(steps) / 20))
    for index, step in enumerate(steps):
        x = left + index * slot + (slot - bar) / 2
        base = 0.0
        total = sum(step["breakdown"][c] for c in categories)
        for c in categories:
            value = step["breakdown"][c]
            if value <= 0:
                continue
            share = format_percent(value / total if total > 0 else None)
            parts.append(f'<rect x="{x:.1f}" y="{y(base + value):.1f}" width="{bar:.1f}" '
                         f'height="{max(y(base) - y(base + value), 0.0):.2f}" fill="{CATEGORY_COLORS[c]}">'
                         f"<title>{esc(step['name'])} · {esc(CATEGORY_LABELS[c])}: "
                         f"{esc(format_duration(value))} ({esc(share)})</title></rect>")
            base += value
        if index % label_every == 0:
            parts.append(f'<text class="tick" x="{x + bar / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                         f"{esc(_step_label(str(step['name']), index))}</text>")
    parts.append(f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">step</text>')
    parts.append("</svg>")
    return "".join(parts)


def comparison_chart_svg(comparison: dict[str, Any], base_label: str, exp_label: str) -> str:
    """The mean step of both sides as two horizontal bars, stacked by category, on one scale."""
    categories = compared_categories(comparison)
    sides = (("Baseline", base_label, comparison["breakdown"]["base"]),
             ("Experiment", exp_label, comparison["breakdown"]["exp"]))
    width, left, right, row_h, top = 760, 96, 40, 34, 8
    plot_w = width - left - right
    highest = max(sum(values[c] for c in categories) for _, _, values in sides) or 1.0
    tick = nice_step(highest, 5)
    x_max = math.ceil(highest / tick) * tick
    height = top + row_h * len(sides) + 30

    def x(value: float) -> float:
        return left + value / x_max * plot_w

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             f'aria-label="Mean step time of baseline and experiment, stacked by category">']
    axis_y = top + row_h * len(sides)
    for i in range(int(round(x_max / tick)) + 1):
        value = i * tick
        parts.append(f'<line class="grid" x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top}" y2="{axis_y}"/>'
                     f'<text class="tick" x="{x(value):.1f}" y="{axis_y + 16}" text-anchor="middle">'
                     f"{esc(format_tick(value, tick, x_max))}</text>")
    for row, (side, label, values) in enumerate(sides):
        y = top + row * row_h + 6
        parts.append(f'<text class="axis" x="{left - 8}" y="{y + 15}" text-anchor="end">{esc(side)}</text>')
        start = 0.0
        for c in categories:
            value = values[c]
            if value <= 0:
                continue
            parts.append(f'<rect x="{x(start):.1f}" y="{y}" width="{x(start + value) - x(start):.2f}" height="22" '
                         f'fill="{CATEGORY_COLORS[c]}"><title>{esc(side)} ({esc(label)}) · '
                         f"{esc(CATEGORY_LABELS[c])}: {esc(format_duration(value))}</title></rect>")
            start += value
    parts.append("</svg>")
    return "".join(parts)


# --- HTML: sections ------------------------------------------------------------------------------


def _recommendations_html(recommendations: list[dict[str, Any]]) -> str:
    if not recommendations:
        return '<p class="muted">No recommendation: none of the rules found a problem in this span.</p>'
    items = []
    for rec in recommendations:
        evidence = evidence_items(rec.get("evidence"))
        evidence_html = (
            '<dl class="evidence">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in evidence) + "</dl>"
            if evidence else "")
        items.append(f'<li data-rule="{esc(rec.get("id", ""))}"><p>{esc(rec["text"])}</p>{evidence_html}</li>')
    return f'<ul class="recommendations">{"".join(items)}</ul>'


def _devices_html(devices: list[dict[str, Any]]) -> str:
    """The device summary; the SM, occupancy and Tensor Core columns only where a device is a GPU (other devices'
    answers have none of these figures), and the collectives' time where a device's card states it."""
    gpu = any(d.get("kind", "GPU") == "GPU" for d in devices)
    collectives = any(d.get("communication_time") for d in devices)
    columns = [HtmlColumn(devices_noun(devices), "text"), HtmlColumn("Name", "text"), HtmlColumn("Memory")]
    columns += [HtmlColumn("Compute capability"), HtmlColumn("SMs")] if gpu else []
    columns += [HtmlColumn("Utilization")]
    columns += [HtmlColumn("Est. SM efficiency"), HtmlColumn("Est. achieved occupancy"),
                HtmlColumn("Tensor Core share")] if gpu else []
    columns += [HtmlColumn("Kernel time")] + ([HtmlColumn("Collectives")] if collectives else [])
    rows = []
    for d in devices:
        row = [esc(d.get("label") or d["id"]), esc(d["name"]),
               esc(format_bytes(d.get("memory")) if d.get("memory") else DASH)]
        row += [esc(d.get("compute_capability") or DASH), esc(format_count(d.get("num_sms")))] if gpu else []
        row += [esc(format_percent(d.get("utilization")))]
        row += [esc(format_percent(d.get("sm_efficiency"))), esc(format_percent(d.get("achieved_occupancy"))),
                esc(format_percent(d.get("tensor_core_share")))] if gpu else []
        row += [esc(format_duration(d.get("kernel_time")))]
        row += [esc(format_duration(d.get("communication_time")) if d.get("communication_time") else DASH)] \
            if collectives else []
        rows.append(row)
    return html_table(columns, rows, test_id="gpu-summary")


def _overview_html(span: SpanViews, anchor: str) -> str:
    overview = span.overview
    categories = shown_categories(overview)
    mean = overview["mean_step_time"]
    averages = [[f'<span class="swatch" style="background:{CATEGORY_COLORS[c]}"></span>{esc(CATEGORY_LABELS[c])}',
                 esc(format_us(overview["breakdown"][c])),
                 esc(format_percent(overview["breakdown"][c] / mean if mean > 0 else None))] for c in categories]
    averages.append(["Step (total)", esc(format_us(mean)), esc(format_percent(1.0 if mean > 0 else None))])
    per_step = [[esc(step["name"])] + [esc(format_us(step["breakdown"][c])) for c in categories]
                + [esc(format_us(sum(step["breakdown"][c] for c in categories)))] for step in overview["steps"]]
    parts = [
        f'<h3 id="{anchor}-overview">Overview</h3>',
        _facts([("Steps", esc(format_count(len(overview["steps"])))),
                ("Steps from", esc(STEP_SOURCE_TEXT.get(overview["step_source"], overview["step_source"]))),
                ("Mean step time", esc(format_duration(mean))),
                *([("Communication", esc(communication_line(overview) or ""))] if communication_line(overview) else []),
                ("Benchmark", esc(benchmark_line(overview["benchmark"])))]),
        *(f'<p class="muted">{esc(line)}</p>' for line in left_out_lines(overview)),
        "<h4>Step time per step</h4>",
        f"<figure>{step_chart_svg(overview)}{_legend(categories)}</figure>",
        "<h4>Mean per step</h4>",
        html_table([HtmlColumn("Category", "text"), HtmlColumn("Mean per step"), HtmlColumn("% of step")], averages,
                   row_classes=[""] * len(categories) + ["total"], test_id="breakdown"),
        "<details><summary>Per-step numbers</summary>"
        + html_table([HtmlColumn("Step", "text")] + [HtmlColumn(CATEGORY_LABELS[c]) for c in categories]
                     + [HtmlColumn("Total")], per_step)
        + "</details>",
    ]
    if overview["devices"]:
        parts += [f"<h4>{devices_noun(overview['devices'])} summary</h4>", _devices_html(overview["devices"])]
    parts += ["<h4>Recommendations</h4>", _recommendations_html(overview["recommendations"])]
    return "".join(parts)


def _operators_html(operators: dict[str, Any], top: int) -> str:
    rows = top_operators(operators, top)
    if not rows:
        return '<p class="muted">No operators recorded.</p>'
    columns = [HtmlColumn(h, "name") if h in ("Name", "Input shape") else HtmlColumn(h)
               for h in operator_headers(operators)]
    caption = f"Top {len(rows)} of {len(operators['rows'])} operators by {SORT_LABELS[operator_sort(operators, None)]}"
    return html_table(columns, [[esc(cell) for cell in operator_cells(r, operators)] for r in rows], caption,
                      test_id="operators")


def _kernels_html(kernels: dict[str, Any], top: int) -> str:
    rows = kernels.get("rows", [])[:top]
    if not rows:
        return '<p class="muted">No GPU kernels in this span.</p>'
    total = float(kernels.get("total") or 0.0)
    columns = [HtmlColumn("Name", "name"), HtmlColumn("Calls"), HtmlColumn("Total"), HtmlColumn("Mean"),
               HtmlColumn("Min"), HtmlColumn("Max"), HtmlColumn("% of kernel time")]
    caption = (f"Top {len(rows)} of {len(kernels['rows'])} kernels by total time · all kernels "
               f"{format_duration(total)} · Tensor Cores {format_percent(kernels.get('tensor_core_share'))}")
    return html_table(columns, [[esc(cell) for cell in kernel_cells(r, total)] for r in rows], caption,
                      test_id="kernels")


def _memory_html(span: SpanViews) -> str:
    peaks = memory_peaks(span)
    if not peaks:
        return f'<p class="muted">{esc(span.memory.get("hint") or memory_view.HOW_TO_RECORD)}</p>'
    columns = [HtmlColumn("Device", "text"), HtmlColumn("Peak allocated"), HtmlColumn("At (into the span)"),
               HtmlColumn("Peak reserved"), HtmlColumn("Capacity")]
    rows = [[esc(p["device"]), esc(format_bytes(p["allocated"])), esc(format_duration(p["offset_us"])),
             esc(format_bytes(p["reserved"])), esc(format_bytes(p["capacity"]))] for p in peaks]
    notes = "".join(f'<p class="muted">{esc(note)}</p>' for note in span.memory.get("notes") or [])
    return html_table(columns, rows, test_id="memory") + notes


def _snapshot_html(snapshot: dict[str, Any]) -> str:
    facts = [("Snapshot", esc(snapshot["snapshot"])), ("Device", esc(snapshot["device"])),
             ("Peak active", esc(f"{format_bytes(snapshot['peak'])} at {snapshot_when(snapshot)}"))]
    if snapshot["reserved_peak"]:
        facts.append(("Peak reserved", esc(format_bytes(snapshot["reserved_peak"]))))
    if snapshot["oom"]:
        facts.append(("Out-of-memory events", esc(snapshot["oom"])))
    columns = [HtmlColumn("Allocation site alive at the peak", "text"), HtmlColumn("Bytes"), HtmlColumn("Allocations"),
               HtmlColumn("Share")]
    rows = [[esc(s["label"]), esc(format_bytes(s["bytes"])), esc(f"{s['count']:,}"), esc(format_percent(s["share"]))]
            for s in snapshot["sites"]]
    return _facts(facts) + html_table(columns, rows, test_id="memory-snapshot")


def span_section_html(span: SpanViews, anchor: str, heading: str, top: int) -> str:
    details = [(key.capitalize(), esc(value)) for key, value in span.details.items()]
    details.append(("Framework", esc(span.framework)))
    return (f'<section id="{anchor}"><h2>{esc(heading)}</h2>{_facts(details)}'
            f"{_overview_html(span, anchor)}"
            f'<h3 id="{anchor}-operators">Top operators</h3>{_operators_html(span.operators, top)}'
            f'<h3 id="{anchor}-kernels">Top kernels</h3>{_kernels_html(span.kernels, top)}'
            f'<h3 id="{anchor}-memory">Memory peak</h3>{_memory_html(span)}'
            + (f'<h3 id="{anchor}-memory-snapshot">Memory snapshot at its peak</h3>{_snapshot_html(span.snapshot)}'
               if span.snapshot is not None else "")
            + "</section>")


def _delta_class(delta: Optional[float]) -> str:
    """Lower time is better: a negative delta reads as faster."""
    if delta is None or delta == 0:
        return ""
    return "faster" if delta < 0 else "slower"


def _comparison_rows_html(rows: list[dict[str, Any]], top: int, kind: str) -> str:
    shown = rows[:top]
    if not shown:
        return f'<p class="muted">No {kind}s on either side.</p>'
    with_shape = any("input_shape" in row for row in shown)
    columns = [HtmlColumn("Name", "name")] + ([HtmlColumn("Input shape", "name")] if with_shape else []) + [
        HtmlColumn("Calls (base → exp)"), HtmlColumn("Per step, baseline"), HtmlColumn("Per step, experiment"),
        HtmlColumn("Impact per step"), HtmlColumn("Ratio")]
    cells = []
    for row in shown:
        base_calls = format_count(row["base"]["calls"]) if row["base"] else DASH
        exp_calls = format_count(row["exp"]["calls"]) if row["exp"] else DASH
        line = [esc(row["name"])] + ([esc(row.get("input_shape", ""))] if with_shape else []) + [
            esc(f"{base_calls} → {exp_calls}"), esc(format_duration(row["per_step"]["base"])),
            esc(format_duration(row["per_step"]["exp"])),
            f'<span class="{_delta_class(row["impact"])}">{esc(format_signed_duration(row["impact"]))}</span>',
            esc(format_ratio(row["ratio"]))]
        cells.append(line)
    caption = f"Top {len(shown)} of {len(rows)} {kind}s by impact on step time (|experiment − baseline| per step)"
    return html_table(columns, cells, caption, test_id=f"compare-{kind}s")


def comparison_section_html(comparison: dict[str, Any], base: SpanViews, exp: SpanViews, top: int) -> str:
    step = comparison["step_time"]
    breakdown = comparison["breakdown"]
    categories = compared_categories(comparison)
    rows = [[f'<span class="swatch" style="background:{CATEGORY_COLORS[c]}"></span>{esc(CATEGORY_LABELS[c])}',
             esc(format_us(breakdown["base"][c])), esc(format_us(breakdown["exp"][c])),
             f'<span class="{_delta_class(breakdown["delta"][c])}">'
             f'{esc(format_signed_duration(breakdown["delta"][c]))}</span>',
             esc(format_ratio(breakdown["ratio"][c]))] for c in categories]
    rows.append(["Step (total)", esc(format_us(step["base"])), esc(format_us(step["exp"])),
                 f'<span class="{_delta_class(step["delta"])}">{esc(format_signed_duration(step["delta"]))}</span>',
                 esc(format_ratio(step["ratio"]))])
    ratio = step["ratio"]
    verdict = (DASH if ratio is None else
               f"the experiment's step is {format_ratio(ratio)} the baseline's "
               f"({'faster' if ratio < 1 else 'slower' if ratio > 1 else 'the same'})")
    notes = "".join(f'<li data-note="{esc(n.get("id", ""))}">{esc(n["text"])}</li>' for n in comparison["notes"])
    return (
        '<section id="compare"><h2>Comparison</h2>'
        + _facts([("Baseline", esc(base.label)), ("Experiment", esc(exp.label)),
                  ("Mean step time", esc(f"{format_duration(step['base'])} → {format_duration(step['exp'])}")),
                  ("Verdict", esc(verdict))])
        + (f'<h3>Read this first</h3><ul class="notes">{notes}</ul>' if notes else "")
        + "<h3>Step-time breakdown, mean per step</h3>"
        + f"<figure>{comparison_chart_svg(comparison, base.label, exp.label)}{_legend(categories)}</figure>"
        + html_table([HtmlColumn("Category", "text"), HtmlColumn("Baseline"), HtmlColumn("Experiment"),
                      HtmlColumn("Delta"), HtmlColumn("Ratio")], rows,
                     row_classes=[""] * len(categories) + ["total"], test_id="compare-breakdown")
        + "<h3>Operators</h3>" + _comparison_rows_html(comparison["operators"], top, "operator")
        + "<h3>Kernels</h3>" + _comparison_rows_html(comparison["kernels"], top, "kernel")
        + "</section>"
    )


STYLE = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --band: #f6f8fa;
        --faster: #1a7f37; --slower: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
       Roboto, sans-serif; color: var(--ink); }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 32px 0 8px; padding-top: 12px;
border-top: 2px solid var(--rule); } h3 { font-size: 16px; margin: 24px 0 8px; } h4 { font-size: 14px; margin: 16px 0 6px; }
nav a { margin-right: 12px; } p.subtitle { margin: 0 0 8px; color: var(--muted); overflow-wrap: anywhere; } .muted { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
div.table { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); padding-bottom: 4px; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
th.num, td.num { text-align: right; white-space: nowrap; }
td.text { white-space: nowrap; }
td.name { max-width: 420px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
          font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
tr.total td { font-weight: 600; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; }
ul.legend { list-style: none; padding: 0; margin: 4px 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
figure { margin: 0; } svg.chart { max-width: 100%; height: auto; }
svg .grid { stroke: #e6eaef; stroke-width: 1; } svg text { font-size: 11px; fill: var(--muted); }
svg .axis { font-size: 12px; fill: var(--ink); }
ul.recommendations li, ul.notes li { margin-bottom: 8px; } ul.recommendations p { margin: 0; }
dl.evidence { display: flex; flex-wrap: wrap; gap: 0 14px; margin: 2px 0 0; color: var(--muted); font-size: 12.5px; }
dl.evidence dt::after { content: ":"; } dl.evidence dd { margin: 0 0 0 -10px; color: var(--ink); }
.faster { color: var(--faster); } .slower { color: var(--slower); }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--muted); }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
@media print { nav { display: none; } h2 { break-before: page; } }
"""

# Nothing may be fetched or run: styles are inline, images are inline SVG.
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def report_html(base: SpanViews, top: int = 20, exp: Optional[SpanViews] = None,
                comparison: Optional[dict[str, Any]] = None, generated: str = "") -> str:
    """The whole report page: with ``exp`` and ``comparison`` (``views.compare.compare``'s answer),
    the comparison first, then each span's own sections."""
    if (exp is None) != (comparison is None):
        raise ValueError("exp and comparison go together")
    subtitle = base.label + (f" vs {exp.label}" if exp else "")
    title = f"Profscope report: {subtitle}"
    sections: list[str] = []
    links: list[tuple[str, str]] = []
    if exp is not None and comparison is not None:
        sections.append(comparison_section_html(comparison, base, exp, top))
        links.append(("compare", "Comparison"))
        sections.append(span_section_html(base, "base", f"Baseline: {base.label}", top))
        sections.append(span_section_html(exp, "exp", f"Experiment: {exp.label}", top))
        links += [("base", "Baseline"), ("exp", "Experiment")]
    else:
        sections.append(span_section_html(base, "span", "Span", top))
        links += [("span-overview", "Overview"), ("span-operators", "Operators"), ("span-kernels", "Kernels"),
                  ("span-memory", "Memory")]
    nav = "<nav>" + "".join(f'<a href="#{anchor}">{esc(text)}</a>' for anchor, text in links) + "</nav>"
    footer = (f"<footer>Times are means per step unless said otherwise; µs = microseconds. "
              f"{esc(generated)}</footer>")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CONTENT_SECURITY_POLICY)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n"
        f'<body><header><h1>Profscope report</h1><p class="subtitle">{esc(subtitle)}</p></header>{nav}\n'
        + "\n".join(sections)
        + f"\n{footer}</body></html>\n"
    )
