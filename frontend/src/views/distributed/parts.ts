// The Distributed view's parts: per-rank stacked bars, the rank table's columns, and the
// collectives table whose rows expand into one row per rank.
import type { CollectiveRow, RankRow } from "../../api/distributed";
import { el, type Child } from "../../components/dom";
import { passiveTip } from "../../components/tooltip";
import { metricLabel } from "../../components/view_parts";
import type { TableColumn } from "../../components/virtual_table";
import { DISTRIBUTED_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { formatBandwidth, meanMessageBytes, RANK_PART_LABELS, rankSegments, type RankPart } from "../../lib/distributed_model";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { formatMicrosNumber, formatTime } from "../../lib/metric_format";

export const PART_COLORS: Readonly<Record<RankPart, string>> = {
  compute: "#4e79a7",
  overlap: "#b07aa1",
  communication: "#e15759",
  other: "#bab0ac",
};
const PART_TIPS: Readonly<Record<RankPart, string>> = {
  compute: DEF.compute,
  overlap: DEF.overlap,
  communication: DEF.communication,
  other: DEF.other,
};
export const WAIT_COLOR = "#f28e2b";
export const TRANSFER_COLOR = "#59a14f";

export interface BarPart {
  readonly label: string;
  readonly value: number;
  readonly color: string;
}

export interface RankBarRow {
  readonly rank: RankRow;
  readonly parts: readonly BarPart[];
  /** What the bar's length stands for (step time, communication time), µs. */
  readonly total: number;
}

function legend(items: readonly { label: string; color: string; tip: string }[]): HTMLElement {
  return el(
    "ul",
    { className: "ps-legend" },
    ...items.map((item) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = item.color;
      return el("li", {}, swatch, metricLabel(item.label, item.tip));
    }),
  );
}

/** One horizontal stacked bar per rank; lengths relative to the longest total. */
export function rankBars(
  rows: readonly RankBarRow[],
  options: { title: string; titleTip: string; testId: string; stragglerWorker: string | null; legendItems: readonly { label: string; color: string; tip: string }[] },
): HTMLElement {
  const longest = rows.reduce((max, row) => (Number.isFinite(row.total) && row.total > max ? row.total : max), 0);
  const bars = rows.map((row) => {
    const bar = el("div", { className: "ps-rank-bar" });
    bar.style.width = `${longest > 0 ? (row.total / longest) * 100 : 0}%`;
    const sum = row.parts.reduce((total, part) => total + part.value, 0);
    for (const part of row.parts) {
      if (!(part.value > 0) || !(sum > 0)) continue;
      const segment = el("span", { className: "ps-share-segment" });
      segment.style.width = `${(part.value / sum) * 100}%`;
      segment.style.background = part.color;
      passiveTip(segment, `${row.rank.worker}: ${part.label} ${formatTime(part.value)} per step (${formatPercent(part.value / sum)})`);
      bar.appendChild(segment);
    }
    const straggler = row.rank.worker === options.stragglerWorker;
    return el(
      "div",
      { className: "ps-rank-row", testId: "rank-bar", attrs: { "data-worker": row.rank.worker, "data-straggler": String(straggler) } },
      passiveTip(
        el("span", { className: "ps-rank-name" }, `rank ${Number.isFinite(row.rank.rank) ? row.rank.rank : "?"} · ${row.rank.worker}${straggler ? " (slowest)" : ""}`),
        row.rank.worker,
      ),
      el("div", { className: "ps-rank-track" }, bar),
      el("span", { className: "ps-rank-value" }, formatTime(row.total)),
    );
  });
  return el(
    "figure",
    { className: "ps-chart", testId: options.testId },
    el("figcaption", {}, metricLabel(options.title, options.titleTip)),
    el("div", { className: "ps-rank-chart", attrs: { role: "list" } }, ...bars),
    legend(options.legendItems),
  );
}

export function stepBars(ranks: readonly RankRow[], stragglerWorker: string | null): HTMLElement {
  const parts: RankPart[] = ["compute", "overlap", "communication", "other"];
  return rankBars(
    ranks.map((rank) => ({
      rank,
      total: rank.step_time,
      parts: rankSegments(rank).map((segment) => ({ label: RANK_PART_LABELS[segment.part], value: segment.value, color: PART_COLORS[segment.part] })),
    })),
    {
      title: "Mean step per rank: computation, overlap, communication and other",
      titleTip: DEF.stepTime,
      testId: "distributed-step-chart",
      stragglerWorker,
      legendItems: parts.map((part) => ({ label: RANK_PART_LABELS[part], color: PART_COLORS[part], tip: PART_TIPS[part] })),
    },
  );
}

export function waitBars(ranks: readonly RankRow[], stragglerWorker: string | null): HTMLElement {
  return rankBars(
    ranks.map((rank) => ({
      rank,
      total: rank.communication,
      parts: [
        { label: "Wait", value: rank.wait, color: WAIT_COLOR },
        { label: "Transfer", value: rank.transfer, color: TRANSFER_COLOR },
      ],
    })),
    {
      title: "Communication per step: waiting for other ranks vs transfer",
      titleTip: DEF.wait,
      testId: "distributed-wait-chart",
      stragglerWorker,
      legendItems: [
        { label: "Wait", color: WAIT_COLOR, tip: DEF.wait },
        { label: "Transfer", color: TRANSFER_COLOR, tip: DEF.transfer },
      ],
    },
  );
}

function micros(id: string, label: string, tip: string, value: (row: RankRow) => number, width = 80): TableColumn<RankRow> {
  return { id, label, unit: "µs", tip, width, align: "right", sortValue: value, text: (row) => formatMicrosNumber(value(row)) };
}

export function rankColumns(): TableColumn<RankRow>[] {
  return [
    { id: "rank", label: "Rank", width: 64, align: "right", firstDirection: "asc", sortValue: (row) => row.rank, text: (row) => formatCount(row.rank) },
    { id: "worker", label: "Worker", width: 100, grow: 2, firstDirection: "asc", sortValue: (row) => row.worker, text: (row) => row.worker, cellTip: (row) => row.worker },
    { id: "backend", label: "Backend", width: 70, firstDirection: "asc", sortValue: (row) => row.backend, text: (row) => row.backend ?? "—" },
    { id: "steps", label: "Steps", width: 56, align: "right", sortValue: (row) => row.steps, text: (row) => formatCount(row.steps) },
    micros("step_time", "Step time", DEF.stepTime, (row) => row.step_time, 92),
    micros("compute", "Computation", DEF.compute, (row) => row.compute, 104),
    micros("communication", "Communication", DEF.communication, (row) => row.communication, 124),
    micros("overlap", "Overlap", DEF.overlap, (row) => row.overlap),
    micros("other", "Other", DEF.other, (row) => row.other),
    micros("wait", "Wait", DEF.wait, (row) => row.wait),
    micros("transfer", "Transfer", DEF.transfer, (row) => row.transfer),
    {
      id: "collective_calls",
      label: "Collectives",
      tip: DEF.collectiveCalls,
      width: 92,
      align: "right",
      sortValue: (row) => row.collective_calls,
      text: (row) => formatCount(row.collective_calls),
    },
  ];
}

function th(label: string, tip: string | null, numeric = true, unit?: string): HTMLElement {
  const text = unit !== undefined ? `${label} (${unit})` : label;
  return el("th", numeric ? { className: "ps-num", attrs: { scope: "col" } } : { attrs: { scope: "col" } }, tip !== null ? metricLabel(text, tip) : text);
}

function td(content: Child, numeric = true): HTMLElement {
  return el("td", { className: numeric ? "ps-num" : "ps-name-cell" }, content);
}

/** The collectives, largest total first; a row's toggle shows its per-rank rows under it. */
export function collectivesTable(rows: readonly CollectiveRow[]): HTMLElement {
  const head = el(
    "tr",
    {},
    th("Collective", null, false),
    th("Calls", DEF.calls),
    th("Message size", DEF.messageSize),
    th("Total", DEF.total, true, "µs"),
    th("Mean", DEF.mean, true, "µs"),
    th("Wait", DEF.collectiveWait, true, "µs"),
    th("Transfer", DEF.collectiveTransfer, true, "µs"),
    th("Bandwidth", DEF.bandwidth),
    th("Bus bw (rank)", DEF.busbw),
    th("Bus bw (transfer)", DEF.transferBusbw),
  );
  const body = el("tbody", {});
  for (const row of rows) {
    const size = meanMessageBytes(row.bytes, row.calls);
    const toggle = el(
      "button",
      { className: "ps-toggle", testId: "collective-toggle", attrs: { type: "button", "aria-expanded": "false", "aria-label": `Show ${row.name} per rank` } },
      "▸",
    );
    const mainRow = el(
      "tr",
      { testId: "collective-row", attrs: { "data-name": row.name } },
      td(el("span", { className: "ps-tree-name" }, toggle, row.name), false),
      td(formatCount(row.calls)),
      td(size !== null ? formatBytes(size) : "—"),
      td(formatMicrosNumber(row.total)),
      td(formatMicrosNumber(row.mean)),
      td(formatMicrosNumber(row.wait)),
      td(formatMicrosNumber(row.transfer)),
      td(formatBandwidth(row.bandwidth)),
      td(formatBandwidth(row.busbw ?? null)),
      td(formatBandwidth(row.transfer_busbw ?? null)),
    );
    const subRows = row.per_rank.map((entry) => {
      const entrySize = meanMessageBytes(entry.bytes, entry.calls);
      return el(
        "tr",
        { className: "ps-sub-row", testId: "collective-rank-row", hidden: true, attrs: { "data-worker": entry.worker } },
        td(`rank ${Number.isFinite(entry.rank) ? entry.rank : "?"} · ${entry.worker}`, false),
        td(formatCount(entry.calls)),
        td(entrySize !== null ? formatBytes(entrySize) : "—"),
        td(formatMicrosNumber(entry.total)),
        td(formatMicrosNumber(entry.mean)),
        td(formatMicrosNumber(entry.wait)),
        td(formatMicrosNumber(entry.total - entry.wait)),
        td(""),
        td(""),
        td(""),
      );
    });
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? "▾" : "▸";
      for (const sub of subRows) sub.hidden = !open;
    });
    if (subRows.length === 0) toggle.disabled = true;
    body.append(mainRow, ...subRows);
  }
  return el(
    "table",
    { className: "ps-table", testId: "distributed-collectives" },
    el("thead", {}, head),
    rows.length > 0 ? body : el("tbody", {}, el("tr", {}, el("td", { attrs: { colspan: "10" }, className: "ps-muted" }, "No collective calls recorded."))),
  );
}
