// What every section of the Analyses page shares: a titled panel whose title says in a tooltip how the
// analysis is computed, one load of its route (loading note, 202 polling, error panel), the empty state
// with the backend's reason, tables with a CSV download, and "show in trace" links. A section is a small
// module that only draws its answer; `section_list.ts` lists them in page order.
import type { ApiClient } from "../../api/client";
import { fetchAnalysis, isAvailable, type AnalysisRoute, type Availability, type Available } from "../../api/analyses";
import type { Answer } from "../../api/schema";
import type { SpanRef } from "../../api/types";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren, type Child } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { metricLabel, sectionHead } from "../../components/view_parts";
import { createVirtualTable, type TableColumn } from "../../components/virtual_table";
import { formatMicrosNumber } from "../../lib/metric_format";
import type { SortState } from "../../lib/table_model";
import type { ViewId } from "../../state/url_state";

export interface SectionContext {
  readonly api: ApiClient;
  readonly ref: SpanRef;
  readonly signal: AbortSignal;
  readonly framework: string | null;
  navigate(view: ViewId, params?: Readonly<Record<string, string | null>>): void;
}

export interface AnalysisSection {
  /** `analysis-<id>` is the section's test id. */
  readonly id: string;
  readonly title: string;
  /** How the analysis is computed: the title's tooltip. */
  readonly how: string;
  mount(body: HTMLElement, ctx: SectionContext): void;
}

/** The section's panel: its title with the tooltip, and a body the section fills. */
export function sectionFrame(section: AnalysisSection): { root: HTMLElement; body: HTMLElement } {
  const body = el("div", { className: "ps-analysis-body" });
  const root = el(
    "section",
    { className: "ps-section ps-panel ps-analysis", testId: `analysis-${section.id}` },
    el("h2", {}, metricLabel(section.title, section.how)),
    body,
  );
  return { root, body };
}

export interface SectionLoad<R extends AnalysisRoute> {
  readonly route: R;
  readonly what: string;
  readonly testId: string;
  readonly params?: Readonly<Record<string, string | number | undefined>>;
  readonly render: (data: Available<Answer<R>>, signal: AbortSignal) => Child[];
}

/** Loads the section's answer into its body; an answer that is not available shows its reason. */
export function loadSection<R extends AnalysisRoute>(body: HTMLElement, ctx: SectionContext, load: SectionLoad<R>): Promise<void> {
  return loadInto(
    {
      host: body,
      fetch: (signal) => fetchAnalysis(ctx.api, load.route, ctx.ref, signal, load.params ?? {}),
      what: load.what,
      testIdPrefix: load.testId,
      errorTitle: `The ${load.what} could not be computed`,
      render: (data, signal) => {
        if (!isAvailable(data)) {
          replaceChildren(body, el("p", { className: "ps-muted ps-analysis-empty", testId: `${load.testId}-empty` },
            (data as Availability).reason ?? "Nothing to show for this span."));
          return;
        }
        replaceChildren(body, ...load.render(data, signal));
      },
    },
    ctx.signal,
  );
}

/** What a section is made of: its route, and how it draws an available answer. */
export interface SectionSpec<R extends AnalysisRoute> {
  readonly id: string;
  readonly title: string;
  readonly how: string;
  readonly route: R;
  /** The loading note's subject ("idle time"). */
  readonly what: string;
  readonly render: (data: Available<Answer<R>>, ctx: SectionContext, signal: AbortSignal) => Child[];
}

/** A section that loads its route into its body (test ids `analysis-<id>-loading`, `-error`, `-empty`). */
export function analysisSection<R extends AnalysisRoute>(spec: SectionSpec<R>): AnalysisSection {
  return {
    id: spec.id,
    title: spec.title,
    how: spec.how,
    mount: (body, ctx) =>
      void loadSection(body, ctx, {
        route: spec.route,
        what: spec.what,
        testId: `analysis-${spec.id}`,
        render: (data, signal) => spec.render(data, ctx, signal),
      }),
  };
}

/** A µs column of a section table. */
export function microsColumn<T>(id: string, label: string, tipText: string, value: (row: T) => number | null): TableColumn<T> {
  return {
    id,
    label,
    unit: "µs",
    tip: tipText,
    width: 96,
    align: "right",
    sortValue: value,
    text: (row) => {
      const v = value(row);
      return v === null ? "—" : formatMicrosNumber(v);
    },
  };
}

export interface SectionTable<T> {
  readonly title: string;
  readonly tip: string;
  readonly columns: readonly TableColumn<T>[];
  readonly rows: readonly T[];
  readonly rowKey: (row: T) => string;
  readonly filterText: (row: T) => string;
  readonly sort: SortState;
  readonly route: string;
  /** Which of the route's tables, for the CSV download. */
  readonly table?: string;
  readonly testId: string;
  readonly onActivate?: (row: T) => void;
}

/** A sortable virtual table with its title and a CSV download of the rows as shown. */
export function sectionTable<T>(ctx: SectionContext, options: SectionTable<T>, signal: AbortSignal): HTMLElement {
  const table = createVirtualTable<T>({
    columns: options.columns,
    rowKey: options.rowKey,
    filterText: options.filterText,
    sort: options.sort,
    label: options.title,
    testId: options.testId,
    maxHeight: 320,
    emptyText: "No rows.",
    ...(options.onActivate !== undefined ? { onActivate: options.onActivate } : {}),
    signal,
  });
  table.setRows(options.rows);
  const download = csvDownloadLink({
    api: ctx.api,
    route: options.route,
    params: () => ({ run: ctx.ref.run, worker: ctx.ref.worker, span: ctx.ref.span }),
    state: () => ({ ...(options.table !== undefined ? { table: options.table } : {}), sort: table.sortState(), filter: "" }),
    testId: `${options.testId}-csv`,
    what: options.title.toLowerCase(),
  });
  return el("div", { className: "ps-analysis-table" }, sectionHead(metricLabel(options.title, options.tip), download), table.root);
}

/** Opens the trace viewer on [start, end] µs (with a little margin), selecting an event when given. */
export function showInTrace(ctx: SectionContext, start: number, end: number, select: number | null): void {
  const margin = Math.max((end - start) * 0.1, 1);
  ctx.navigate("trace", { start: String(start - margin), end: String(end + margin), select: select !== null ? String(select) : null });
}

export const SHOW_IN_TRACE_HINT = "Click a row (or press Enter on it) to show it in the Trace view.";
