// The side panel of an area selection (shift+drag, or a drag on the time axis): what lies in the
// range — its breakdown by the overview's categories, the steps inside it with their mean
// breakdown, and the slices by track kind and name with their time and self time inside the
// range (a sortable, filterable table with a CSV download of exactly what it shows).
import type { ApiClient, QueryParams } from "../../api/client";
import { BREAKDOWN_CATEGORIES } from "../../api/overview";
import type { RangeRow, RangeSummary } from "../../api/trace_range";
import { createShareBar } from "../../components/bars";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { injectViewStyles } from "../../components/view_styles";
import { createVirtualTable, type TableColumn } from "../../components/virtual_table";
import { formatBytes, formatCount, formatDuration, formatPercent } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import { CATEGORY_INFO } from "../../lib/metrics";
import { traceButton } from "../toolbar";
import { offsetLabel } from "./details";

export interface RangePanelCallbacks {
  zoomToRange(): void;
  close(): void;
  /** A row of the table: search for its name (the search box then steps through its occurrences). */
  searchFor(name: string): void;
}

export const RANGE_DEF = {
  total: "Time of these slices inside the range: each slice is clipped to the range, then summed (nested slices count in each level).",
  self: "Self time inside the range: each slice's clipped time minus that of its direct children.",
  count: "Slices of this name that overlap the range, even partly.",
  breakdown:
    "The range split by the Overview's categories, each instant counted once in the first category that covers it " +
    "(Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other).",
  steps: "Steps that lie entirely inside the range, with the Overview's breakdown averaged over just them.",
  counterMean: "Time-weighted over the part of the range where the counter has a value (each value holds until the next).",
} as const;

/** A counter's values as its track's unit says (trace/tracks: bytes, fraction, launches or none). */
export function counterFormat(unit: string): (value: number) => string {
  if (unit === "bytes") return (value) => formatBytes(value);
  if (unit === "fraction") return (value) => formatPercent(value);
  return (value) => (Number.isInteger(value) ? formatCount(value) : value.toFixed(2));
}

const KIND_TEXT: Readonly<Record<string, string>> = { cpu: "CPU", gpu: "GPU", other: "other" };

function rangeColumns(): TableColumn<RangeRow>[] {
  const micros = (id: "total" | "self", label: string, tip: string): TableColumn<RangeRow> => ({
    id,
    label,
    unit: "µs",
    tip,
    width: 84,
    align: "right",
    sortValue: (row) => row[id],
    text: (row) => formatMicrosNumber(row[id]),
  });
  return [
    { id: "kind", label: "Kind", width: 58, firstDirection: "asc", sortValue: (row) => row.kind, text: (row) => KIND_TEXT[row.kind] ?? row.kind },
    { id: "name", label: "Name", width: 140, grow: 3, firstDirection: "asc", sortValue: (row) => row.name, text: (row) => row.name, cellTip: (row) => row.name },
    { id: "count", label: "Slices", tip: RANGE_DEF.count, width: 64, align: "right", sortValue: (row) => row.count, text: (row) => formatCount(row.count) },
    micros("total", "Time", RANGE_DEF.total),
    micros("self", "Self", RANGE_DEF.self),
  ];
}

export class RangePanel {
  readonly root = el("aside", { className: "ps-trace-details ps-trace-range", testId: "trace-range", hidden: true });

  constructor(
    private readonly api: ApiClient,
    private readonly callbacks: RangePanelCallbacks,
    /** Span start, trace µs: times are shown as offsets from it. */
    private readonly spanStart: number,
  ) {}

  private header(): HTMLElement {
    const close = el("button", { className: "ps-trace-icon-button", testId: "trace-range-close", attrs: { type: "button", title: "Clear the range (Esc)" } }, "×");
    close.addEventListener("click", () => this.callbacks.close());
    return el("header", { className: "ps-trace-details-header" }, el("h3", { testId: "trace-range-title" }, "Selected range"), close);
  }

  showLoading(): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "loading";
    replaceChildren(this.root, this.header(), el("p", { className: "ps-trace-muted" }, "Summarising the range…"));
  }

  showMessage(text: string, state: "error" | "empty"): void {
    this.root.hidden = false;
    this.root.dataset["state"] = state;
    replaceChildren(this.root, this.header(), el("p", { className: state === "error" ? "ps-trace-error" : "ps-trace-muted", testId: "trace-range-message" }, text));
  }

  hide(): void {
    this.root.hidden = true;
    this.root.dataset["state"] = "empty";
    replaceChildren(this.root);
  }

  show(summary: RangeSummary, params: QueryParams, signal: AbortSignal): void {
    injectViewStyles(this.root.ownerDocument);
    this.root.hidden = false;
    this.root.dataset["state"] = "ready";
    const zoom = traceButton("Zoom to range", "trace-range-zoom", "Show this range across the timeline (F)", () => this.callbacks.zoomToRange());
    const plural = (count: number, noun: string): string => `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;
    const counters = summary.counters.length > 0 ? ` · ${plural(summary.counters.length, "counter")}` : "";
    const trackText = summary.tracks === null ? "every track" : plural(summary.tracks.length, "slice track") + counters;
    const fields: [string, string][] = [
      ["Start", offsetLabel(summary.start - this.spanStart)],
      ["Duration", formatDuration(summary.duration)],
      ["Tracks", trackText],
      ["Slices", formatCount(summary.slices)],
    ];
    const list = el("dl", { className: "ps-trace-fields", testId: "trace-range-fields" });
    for (const [term, value] of fields) list.append(el("dt", {}, term), el("dd", {}, value));

    replaceChildren(
      this.root,
      this.header(),
      list,
      el("div", { className: "ps-trace-details-actions" }, zoom),
      this.breakdown(summary),
      this.steps(summary),
      this.counters(summary),
      this.table(summary, params, signal),
    );
  }

  /** Each counter of the selection: per series its value at the range's start and end, lowest, highest and mean. */
  private counters(summary: RangeSummary): HTMLElement | null {
    if (summary.counters.length === 0) return null;
    const body = el("tbody");
    for (const counter of summary.counters) {
      const format = counterFormat(counter.unit);
      for (const [name, figures] of Object.entries(counter.series)) {
        const from = figures.known_from > summary.start ? ` (from ${offsetLabel(figures.known_from - this.spanStart)})` : "";
        body.appendChild(
          el(
            "tr",
            { attrs: { "data-counter": counter.id, "data-series": name } },
            el("th", { attrs: { scope: "row" } }, `${counter.name} · ${name}`),
            el("td", {}, format(figures.first)),
            el("td", {}, format(figures.last)),
            el("td", {}, format(figures.min)),
            el("td", {}, format(figures.max)),
            el("td", { attrs: { title: RANGE_DEF.counterMean } }, format(figures.mean) + from),
          ),
        );
      }
    }
    const head = el("thead", {}, el("tr", {}, ...["Counter", "At start", "At end", "Lowest", "Highest", "Mean"].map((label) => el("th", { attrs: { scope: "col" } }, label))));
    return this.section("Counters in the range", "trace-range-counters", el("table", { className: "ps-trace-args ps-trace-range-counters" }, head, body));
  }

  private section(title: string, testId: string, ...children: (Node | string | null)[]): HTMLElement {
    return el("section", { className: "ps-trace-section", testId }, el("h4", { attrs: { title: "" } }, title), ...children);
  }

  private breakdown(summary: RangeSummary): HTMLElement {
    const total = summary.duration;
    const parts = BREAKDOWN_CATEGORIES.filter((category) => (summary.breakdown[category] ?? 0) > 0).map((category) => {
      const value = summary.breakdown[category] ?? 0;
      return {
        label: CATEGORY_INFO[category].label,
        share: total > 0 ? value / total : 0,
        valueText: `${formatPercent(total > 0 ? value / total : Number.NaN)} · ${formatDuration(value)}`,
        color: CATEGORY_INFO[category].color,
      };
    });
    return this.section("Breakdown of the range", "trace-range-breakdown", createShareBar(parts, "", RANGE_DEF.breakdown, "trace-range-share"));
  }

  private steps(summary: RangeSummary): HTMLElement {
    const steps = summary.steps;
    const partial = steps.partial > 0 ? ` ${formatCount(steps.partial)} more partly inside (left out).` : "";
    if (steps.count === 0 || steps.breakdown === null) {
      return this.section(
        "Steps inside",
        "trace-range-steps",
        el("p", { className: "ps-trace-muted" }, `No step lies entirely inside the range.${partial} Widen it to whole steps for their overview.`),
      );
    }
    const names = steps.names.length <= 4 ? steps.names.join(", ") : `${steps.names.slice(0, 3).join(", ")}, … ${steps.names[steps.names.length - 1] ?? ""}`;
    const mean = steps.mean_step_time ?? 0;
    const rows = BREAKDOWN_CATEGORIES.filter((category) => (steps.breakdown?.[category] ?? 0) > 0).map((category) => {
      const value = steps.breakdown?.[category] ?? 0;
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = CATEGORY_INFO[category].color;
      return el(
        "tr",
        { attrs: { "data-category": category } },
        el("th", { attrs: { scope: "row" } }, swatch, CATEGORY_INFO[category].label),
        el("td", {}, `${formatDuration(value)} (${formatPercent(mean > 0 ? value / mean : Number.NaN)})`),
      );
    });
    return this.section(
      `Steps inside (${formatCount(steps.count)})`,
      "trace-range-steps",
      el("p", { className: "ps-trace-muted", attrs: { title: RANGE_DEF.steps } }, `${names}: ${formatDuration(mean)} per step on average.${partial}`),
      el("table", { className: "ps-trace-args", testId: "trace-range-step-breakdown" }, el("tbody", {}, ...rows)),
    );
  }

  private table(summary: RangeSummary, params: QueryParams, signal: AbortSignal): HTMLElement {
    const columns = rangeColumns();
    const table = createVirtualTable<RangeRow>({
      columns,
      rowKey: (row) => `${row.kind}\u0000${row.name}`,
      filterText: (row) => `${row.kind} ${row.name}`,
      sort: { column: "total", direction: "desc" },
      onActivate: (row) => this.callbacks.searchFor(row.name),
      label: "Slices in the range",
      testId: "trace-range-table",
      emptyText: "No slice matches the filter.",
      maxHeight: 360,
      stickyColumns: 0,
      signal,
    });
    table.setRows(summary.rows);
    const filter = el("input", {
      className: "ps-input ps-trace-range-filter",
      testId: "trace-range-filter",
      attrs: { type: "search", placeholder: "Filter by name or kind (cpu, gpu)…", "aria-label": "Filter the slices of the range", spellcheck: "false" },
    });
    filter.addEventListener("input", () => table.setFilter(filter.value));
    const download = csvDownloadLink({
      api: this.api,
      route: "trace/range",
      params: () => params,
      state: () => ({ sort: table.sortState(), filter: filter.value }),
      testId: "trace-range-csv",
      what: "the slices of this range",
    });
    const cut = summary.truncated > 0 ? el("p", { className: "ps-trace-muted" }, `${formatCount(summary.truncated)} smaller names are left out.`) : null;
    return this.section(
      "Slices by name",
      "trace-range-slices",
      el("div", { className: "ps-trace-range-controls" }, filter, download),
      table.root,
      cut,
      el("p", { className: "ps-trace-muted" }, "Click a row to search for its name (N / Shift+N step through its occurrences)."),
    );
  }
}
