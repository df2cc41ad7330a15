// The run table of the Compare page: every span of the logdir in one sortable row (steps, mean
// step time, each breakdown category, GPU utilization, peak memory, batch size). Clicking
// rows picks a baseline and an experiment; "Compare" opens that pair. Spans still loading
// are listed without numbers (the page remounts when their run is ready).
import { fetchRunTable, type RunTableData, type RunTableRow } from "../../api/compare";
import type { ApiClient } from "../../api/client";
import { BREAKDOWN_CATEGORIES, type BreakdownCategory } from "../../api/overview";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { metricLabel } from "../../components/view_parts";
import { createVirtualTable, type TableColumn, type VirtualTable } from "../../components/virtual_table";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import { EFFICIENCY_DEFINITIONS } from "../../lib/efficiency";
import { CATEGORY_INFO, METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import type { SpanRef } from "../../api/types";
import { pickRole, sameSpan, spanKey, togglePick, type ComparePair } from "./model";

export const RUN_TABLE_DEF = {
  pick: "Click rows to pick the baseline (first) and the experiment (second); click a picked row again to unpick it.",
  span: "The span's position among its worker's spans, in time order; the tooltip has its name.",
  status: "ready: loaded; loading: still being parsed (no numbers yet); error: the trace could not be loaded.",
  gpuUtilization: "GPU utilization: mean over the span's GPUs of the time at least one kernel runs / the steps' time.",
  peakMemory: "Peak allocated memory: the highest total allocated bytes recorded by the allocator on any device of this type ([memory] events, profile_memory=True).",
  tags: "User tags from the writer's span manifest.",
} as const;

const DEFAULT_SORT: SortState = { column: "run", direction: "asc" };

function statusText(row: RunTableRow): string {
  if (row.status === "loading") return row.progress !== undefined ? `loading ${formatPercent(row.progress, 0)}` : "loading";
  return row.status;
}

function tagsText(row: RunTableRow): string {
  return row.tags === null ? "" : Object.entries(row.tags).map(([key, value]) => `${key}=${value}`).join(", ");
}

/** Categories worth a column: those any loaded span spends time in. */
export function tableCategories(rows: readonly RunTableRow[]): BreakdownCategory[] {
  return BREAKDOWN_CATEGORIES.filter((category) => rows.some((row) => (row.breakdown?.[category] ?? 0) > 0));
}

/** Device types with a peak in any row ("GPU" first). */
export function peakMemoryTypes(rows: readonly RunTableRow[]): string[] {
  const types = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row.peak_memory ?? {})) types.add(key);
  return [...types].sort((a, b) => (a === "GPU" ? -1 : b === "GPU" ? 1 : a.localeCompare(b)));
}

function runTableColumns(rows: readonly RunTableRow[], picks: () => readonly SpanRef[]): TableColumn<RunTableRow>[] {
  const number = (
    id: string,
    label: string,
    tipText: string,
    value: (row: RunTableRow) => number | null,
    format: (value: number) => string,
    unit?: string,
    width = 92,
  ): TableColumn<RunTableRow> => ({
    id,
    label,
    tip: tipText,
    ...(unit !== undefined ? { unit } : {}),
    width,
    align: "right",
    sortValue: (row) => value(row),
    text: (row) => {
      const v = value(row);
      return v === null || !Number.isFinite(v) ? "—" : format(v);
    },
  });
  const columns: TableColumn<RunTableRow>[] = [
    {
      id: "pick",
      label: "Pick",
      tip: RUN_TABLE_DEF.pick,
      width: 112,
      sortValue: (row) => pickRole(picks(), row),
      text: (row) => pickRole(picks(), row) ?? "",
      cellClass: (row) => {
        const role = pickRole(picks(), row);
        return role === null ? null : `ps-cmp-pick-${role}`;
      },
    },
    {
      id: "run",
      label: "Run",
      width: 160,
      grow: 2,
      firstDirection: "asc",
      sortValue: (row) => `${row.run}\u0000${row.worker}\u0000${String(row.span_index).padStart(6, "0")}`,
      text: (row) => row.run,
      cellTip: (row) => row.run,
    },
    {
      id: "worker",
      label: "Worker",
      width: 96,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => row.worker,
      text: (row) => row.worker,
      cellTip: (row) => row.worker,
    },
    {
      id: "span",
      label: "Span",
      tip: RUN_TABLE_DEF.span,
      width: 64,
      align: "right",
      sortValue: (row) => row.span_index,
      text: (row) => String(row.span_index + 1),
      cellTip: (row) => row.span,
    },
    {
      id: "status",
      label: "Status",
      tip: RUN_TABLE_DEF.status,
      width: 96,
      firstDirection: "asc",
      sortValue: (row) => row.status,
      text: statusText,
      cellClass: (row) => (row.status === "ready" ? null : `ps-cmp-status-${row.status}`),
      cellTip: (row) => row.error ?? null,
    },
    number("steps", "Steps", DEF.stepCount, (row) => row.steps ?? null, formatCount, undefined, 64),
    number("mean_step_time", "Step time", DEF.meanStepTime, (row) => row.mean_step_time ?? null, formatMicrosNumber, "µs", 100),
  ];
  for (const category of tableCategories(rows)) {
    const info = CATEGORY_INFO[category];
    columns.push({
      ...number(category, info.label, info.definition, (row) => row.breakdown?.[category] ?? null, formatMicrosNumber, "µs"),
      cellTip: (row) => {
        const share = row.shares?.[category];
        return share === undefined || share === null ? null : `${info.label}: ${formatPercent(share)} of the mean step time`;
      },
    });
  }
  columns.push(number("gpu_utilization", "GPU util.", RUN_TABLE_DEF.gpuUtilization, (row) => row.gpu_utilization ?? null, (v) => formatPercent(v), undefined, 84));
  columns.push(number("mfu", "MFU", EFFICIENCY_DEFINITIONS.mfu, (row) => row.mfu ?? null, (v) => formatPercent(v), undefined, 72));
  for (const type of peakMemoryTypes(rows)) {
    columns.push(number(`peak_${type}`, `Peak ${type} mem.`, RUN_TABLE_DEF.peakMemory, (row) => row.peak_memory?.[type] ?? null, formatBytes, undefined, 104));
  }
  columns.push(number("batch_size", "Batch", DEF.batchSize, (row) => row.batch_size, formatCount, undefined, 64));
  columns.push(
    number("samples_per_second", "Samples/s", DEF.samplesPerSecond, (row) => row.samples_per_second ?? null, (v) => formatCount(Math.round(v)), undefined, 92),
  );
  columns.push(
    {
      id: "framework",
      label: "Framework",
      width: 92,
      firstDirection: "asc",
      sortValue: (row) => row.framework,
      text: (row) => row.framework ?? "",
    },
    {
      id: "devices",
      label: "Devices",
      width: 140,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => (row.devices ?? []).join(", "),
      text: (row) => (row.status !== "ready" ? "" : (row.devices ?? []).length > 0 ? (row.devices ?? []).join(", ") : "CPU only"),
      cellTip: (row) => (row.devices ?? []).join(", "),
    },
  );
  if (rows.some((row) => row.tags !== null)) {
    columns.push({ id: "tags", label: "Tags", tip: RUN_TABLE_DEF.tags, width: 140, grow: 1, firstDirection: "asc", sortValue: tagsText, text: tagsText, cellTip: tagsText });
  }
  return columns;
}

export interface RunTableSectionOptions {
  readonly api: ApiClient;
  /** The pair compared now: its rows start picked. */
  readonly pair: ComparePair | null;
  readonly sort: string | null;
  readonly onSortChange: (sort: string) => void;
  readonly onCompare: (pair: ComparePair) => void;
  readonly signal: AbortSignal;
}

export interface RunTableSection {
  readonly root: HTMLElement;
  /** Shows `pair` as the picked rows (after the pickers changed it). */
  setPair(pair: ComparePair | null): void;
}

export function createRunTableSection(options: RunTableSectionOptions): RunTableSection {
  let rows: readonly RunTableRow[] = [];
  let current = options.pair;
  let picks: readonly SpanRef[] = current !== null ? [current.base, current.exp] : [];
  let table: VirtualTable<RunTableRow> | null = null;

  const pickText = el("span", { className: "ps-cmp-pick-text", testId: "runs-table-picks" });
  const compareButton = el("button", { className: "ps-button", testId: "runs-table-compare", attrs: { type: "button" } }, "Compare picked");
  const clearButton = el("button", { className: "ps-button", attrs: { type: "button" } }, "Clear picks");
  const filter = el("input", {
    className: "ps-input",
    testId: "runs-table-filter",
    attrs: { type: "search", placeholder: "Filter runs…", "aria-label": "Filter spans by run, worker, span or tag", spellcheck: "false" },
  });
  const tableHost = el("div", {});
  const summary = el("summary", { testId: "runs-table-summary" }, "All spans");
  const root = el(
    "details",
    { className: "ps-section ps-panel ps-cmp-details", testId: "runs-table-section", attrs: { open: "" } },
    summary,
    el(
      "div",
      { className: "ps-cmp-picks" },
      el("label", {}, filter),
      pickText,
      compareButton,
      clearButton,
      csvDownloadLink({
        api: options.api,
        route: "runs/table",
        params: () => ({}),
        state: () => ({ sort: table?.sortState() ?? null, filter: filter.value }),
        testId: "runs-table-csv",
        what: "every span's numbers",
      }),
    ),
    tableHost,
  );

  function updatePicks(): void {
    const [base, exp] = picks;
    const describe = (ref: SpanRef | undefined): string => {
      if (ref === undefined) return "—";
      const row = rows.find((candidate) => sameSpan(candidate, ref));
      return row !== undefined ? `${row.run} · ${row.worker} · span ${row.span_index + 1}` : `${ref.run} · ${ref.worker}`;
    };
    replaceChildren(
      pickText,
      el("span", { className: "ps-cmp-role ps-cmp-role-base" }, "Baseline"),
      ` ${describe(base)}  ·  `,
      el("span", { className: "ps-cmp-role ps-cmp-role-exp" }, "Experiment"),
      ` ${describe(exp)}`,
    );
    const samePair =
      current !== null && base !== undefined && exp !== undefined && sameSpan(base, current.base) && sameSpan(exp, current.exp);
    compareButton.disabled = base === undefined || exp === undefined || samePair;
    clearButton.disabled = picks.length === 0;
    table?.setRows(rows); // refills the pick column
  }

  compareButton.addEventListener("click", () => {
    const [base, exp] = picks;
    if (base !== undefined && exp !== undefined) options.onCompare({ base, exp });
  });
  clearButton.addEventListener("click", () => {
    picks = [];
    updatePicks();
  });
  filter.addEventListener("input", () => table?.setFilter(filter.value));

  function show(data: RunTableData): void {
    rows = data.rows;
    const ready = rows.filter((row) => row.status === "ready").length;
    summary.textContent = "";
    summary.append(
      metricLabel(`All spans (${formatCount(rows.length)}${ready < rows.length ? `, ${formatCount(ready)} loaded` : ""})`, RUN_TABLE_DEF.pick),
    );
    const columns = runTableColumns(rows, () => picks);
    table = createVirtualTable({
      columns,
      rowKey: spanKey,
      filterText: (row) => `${row.run} ${row.worker} ${row.span} ${tagsText(row)}`,
      sort: parseSortParam(options.sort, columns.map((column) => column.id), DEFAULT_SORT),
      onSortChange: (next) => options.onSortChange(formatSortParam(next)),
      onActivate: (row) => {
        if (row.status === "error") return;
        picks = togglePick(picks, row);
        updatePicks();
      },
      label: "All spans",
      testId: "runs-table",
      emptyText: "No span matches the filter.",
      maxHeight: 300,
      stickyColumns: 2,
      signal: options.signal,
    });
    table.setRows(rows);
    replaceChildren(tableHost, table.root);
    updatePicks();
  }

  void loadInto(
    {
      host: tableHost,
      fetch: (signal) => fetchRunTable(options.api, signal),
      what: "the run table",
      testIdPrefix: "runs-table",
      errorTitle: "The run table could not be read",
      render: show,
    },
    options.signal,
  );
  updatePicks();

  return {
    root,
    setPair(pair) {
      current = pair;
      picks = pair !== null ? [pair.base, pair.exp] : [];
      updatePicks();
    },
  };
}
