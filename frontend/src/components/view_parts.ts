// Pieces the analysis views share: labelled metrics with tooltips, key/value lists, the
// loading and empty notes, the group-by/filter bar above a table, and the span reference.
import type { SpanRef } from "../api/types";
import { formatCount, formatPercent } from "../lib/format";
import type { Selection } from "../state/selection";
import { el, type Child } from "./dom";
import { tip } from "./tooltip";

/** The (run, worker, span) a span-scoped view is about; the shell mounts such views only with all three. */
export function spanRefOf(selection: Selection): SpanRef | null {
  const { run, worker, span } = selection;
  return run !== null && worker !== null && span !== null ? { run: run.name, worker: worker.name, span } : null;
}

/** A metric's name, underlined, with a tooltip saying how it is computed. */
export function metricLabel(text: string, definition: string): HTMLElement {
  return tip(el("span", { className: "ps-has-tip" }, text), definition);
}

export interface KeyValue {
  readonly label: string;
  /** How the value is computed (tooltip); omitted for plain facts such as the run name. */
  readonly tip?: string;
  readonly value: Child;
  readonly testId?: string;
}

export function keyValueList(entries: readonly KeyValue[], testId?: string): HTMLElement {
  return el(
    "dl",
    { className: "ps-kv", ...(testId !== undefined ? { testId } : {}) },
    ...entries.flatMap((entry) => [
      el("dt", {}, entry.tip !== undefined ? metricLabel(entry.label, entry.tip) : entry.label),
      el("dd", entry.testId !== undefined ? { testId: entry.testId } : {}, entry.value),
    ]),
  );
}

/** "Preparing the operators… 40%" while the backend still loads the run. */
export function loadingNote(what: string, progress: number | null, testId: string): HTMLElement {
  const percent = progress !== null ? ` ${formatPercent(progress, 0)}` : "";
  return el("p", { className: "ps-view-loading", testId, attrs: { role: "status" } }, `Loading ${what}…${percent}`);
}

/** A section title with something beside it on the right (a CSV download). */
export function sectionHead(title: Child, ...extra: Child[]): HTMLElement {
  return el("div", { className: "ps-section-head" }, el("h3", {}, title), ...extra);
}

export function emptyNote(testId: string, title: string, text: string, ...extra: Child[]): HTMLElement {
  return el("section", { className: "ps-view-empty ps-panel", testId }, el("h2", {}, title), el("p", {}, text), ...extra);
}

/** An empty state that says why the view is empty and what would make it appear. */
export function emptyStateNote(testId: string, state: { title: string; why: string; how: string }, ...extra: Child[]): HTMLElement {
  return emptyNote(testId, state.title, state.why, el("p", { className: "ps-empty-how", testId: `${testId}-how` }, state.how), ...extra);
}

export interface GroupingOption<G extends string> {
  readonly value: G;
  readonly label: string;
}

export interface TableControlsOptions<G extends string> {
  readonly groupings: readonly GroupingOption<G>[];
  readonly groupBy: G;
  readonly onGroupBy: (value: G) => void;
  readonly filter: string;
  readonly onFilter: (query: string) => void;
  /** What a row is, for the count ("operators", "kernels"). */
  readonly noun: string;
  readonly testIdPrefix: string;
}

export interface TableControls {
  readonly root: HTMLElement;
  readonly select: HTMLSelectElement;
  readonly filter: HTMLInputElement;
  setCount(shown: number, total: number): void;
}

/** Group-by selector, filter box and row count above a table. */
export function createTableControls<G extends string>(options: TableControlsOptions<G>): TableControls {
  const select = el("select", { className: "ps-select", testId: `${options.testIdPrefix}-group-by` });
  for (const grouping of options.groupings) select.appendChild(new Option(grouping.label, grouping.value));
  select.value = options.groupBy;
  select.addEventListener("change", () => {
    const chosen = options.groupings.find((grouping) => grouping.value === select.value);
    if (chosen !== undefined) options.onGroupBy(chosen.value);
  });
  const filter = el("input", {
    className: "ps-input",
    testId: `${options.testIdPrefix}-filter`,
    attrs: { type: "search", placeholder: "Filter by name…", "aria-label": `Filter ${options.noun} by name`, spellcheck: "false" },
  });
  filter.value = options.filter;
  let frame: number | null = null;
  filter.addEventListener("input", () => {
    // One filter pass per frame, however fast the typing.
    if (frame !== null) return;
    frame = requestAnimationFrame(() => {
      frame = null;
      options.onFilter(filter.value);
    });
  });
  const count = el("span", { className: "ps-count", testId: `${options.testIdPrefix}-count`, attrs: { "aria-live": "polite" } });
  const root = el(
    "div",
    { className: "ps-controls" },
    el("label", {}, "Group by", select),
    el("label", {}, "Filter", filter),
    count,
  );
  return {
    root,
    select,
    filter,
    setCount(shown, total) {
      count.textContent =
        shown === total ? `${formatCount(total)} ${options.noun}` : `${formatCount(shown)} of ${formatCount(total)} ${options.noun}`;
    },
  };
}

/** A plain (not virtualised) table for short lists such as drill-down details. */
export interface SimpleColumn<T> {
  readonly label: string;
  readonly unit?: string;
  readonly tip?: string;
  readonly numeric?: boolean;
  readonly cell: (row: T) => Child;
}

export function simpleTable<T>(rows: readonly T[], columns: readonly SimpleColumn<T>[], testId: string): HTMLElement {
  const head = el(
    "tr",
    {},
    ...columns.map((column) => {
      const text = column.unit !== undefined ? `${column.label} (${column.unit})` : column.label;
      return el("th", column.numeric === true ? { className: "ps-num" } : {}, column.tip !== undefined ? metricLabel(text, column.tip) : text);
    }),
  );
  const body = rows.map((row) =>
    el(
      "tr",
      {},
      ...columns.map((column) => el("td", { className: column.numeric === true ? "ps-num" : "ps-name-cell" }, column.cell(row))),
    ),
  );
  return el("table", { className: "ps-table", testId }, el("thead", {}, head), el("tbody", {}, ...body));
}
