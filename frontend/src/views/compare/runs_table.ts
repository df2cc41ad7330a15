// The run table of the Compare page: every span of the logdir in one sortable row (steps, mean
// step time, each breakdown category, GPU utilization, peak memory, batch size). Clicking
// rows picks a baseline and an experiment; "Compare" opens that pair. Spans still loading
// are listed without numbers (the page remounts when their run is ready). The columns are runs_table_columns.ts.
import { fetchRunTable, type RunTableData, type RunTableRow } from "../../api/compare";
import type { ApiClient } from "../../api/client";
import type { SpanRef } from "../../api/types";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { metricLabel } from "../../components/view_parts";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import { canComparePicks, pickText, runTableTitle, spanKey, togglePick, type ComparePair } from "./model";
import { RUN_TABLE_DEF, runTableColumns, tagsText } from "./runs_table_columns";

const DEFAULT_SORT: SortState = { column: "run", direction: "asc" };

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

  const pickLine = el("span", { className: "ps-cmp-pick-text", testId: "runs-table-picks" });
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
      pickLine,
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
    replaceChildren(
      pickLine,
      el("span", { className: "ps-cmp-role ps-cmp-role-base" }, "Baseline"),
      ` ${pickText(rows, base)}  ·  `,
      el("span", { className: "ps-cmp-role ps-cmp-role-exp" }, "Experiment"),
      ` ${pickText(rows, exp)}`,
    );
    compareButton.disabled = !canComparePicks(picks, current);
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
    summary.textContent = "";
    summary.append(metricLabel(runTableTitle(rows), RUN_TABLE_DEF.pick));
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
