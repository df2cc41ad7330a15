// The Memory page's bytes per operator: the table with its name filter (filtered here, in the table), the count of
// rows shown, the CSV, and above the tables the operators holding the most of the peak as bars (for the rows the
// filter leaves).
import type { QueryParams } from "../../api/client";
import type { MemoryData, OperatorMemoryRow } from "../../api/memory";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext } from "../types";
import { operatorCountText, shownDevicePeak, type MemoryChoices } from "./choices";
import { operatorMemoryColumns, peakHolders } from "./tables";

export interface OperatorsPart {
  /** The bars of the operators holding the most of the peak (placed above both tables). */
  readonly peakBars: HTMLElement;
  /** The heading with the filter, count and CSV link; the table. */
  readonly parts: readonly HTMLElement[];
  setRows(data: MemoryData): void;
}

/** `memory`: the page's first answer (its devices and peaks); `routeParams` as the allocations' part. */
export function createOperatorsPart(
  ctx: ViewContext,
  memory: MemoryData,
  choices: MemoryChoices,
  routeParams: () => QueryParams,
): OperatorsPart {
  const opColumns = operatorMemoryColumns();
  const opInput = el("input", {
    className: "ps-input",
    testId: "memory-operator-filter",
    attrs: { type: "search", placeholder: "Filter by name…", "aria-label": "Filter operators by name", spellcheck: "false" },
  });
  opInput.value = choices.opFilter;
  const opCount = el("span", { className: "ps-count", testId: "memory-operator-count", attrs: { "aria-live": "polite" } });
  const opTable: VirtualTable<OperatorMemoryRow> = createVirtualTable({
    columns: opColumns,
    rowKey: (row) => row.name,
    filterText: (row) => row.name,
    sort: parseSortParam(ctx.param("op_sort"), opColumns.map((column) => column.id), { column: "self_peak_bytes", direction: "desc" }),
    onSortChange: (next) => ctx.setParams({ op_sort: formatSortParam(next) }),
    onActivate: (row) => opTable.setSelected(row.name),
    label: "Memory by operator",
    testId: "memory-operator-table",
    emptyText: "No operator matches the filter.",
    maxHeight: 420,
    signal: ctx.signal,
  });
  let operatorTotal = 0;
  const updateOpCount = (): void => {
    opCount.textContent = operatorCountText(opTable.visibleRows().length, operatorTotal);
  };
  let loaded = false;
  const peakBars = el("div", {});
  function drawPeakBars(): void {
    if (!loaded) return;
    replaceChildren(peakBars, peakHolders(opTable.visibleRows(), shownDevicePeak(memory, choices), choices.range !== null, choices.opFilter));
  }
  opInput.addEventListener("input", () => {
    choices.opFilter = opInput.value;
    ctx.setParams({ op_filter: choices.opFilter === "" ? null : choices.opFilter });
    opTable.setFilter(choices.opFilter);
    updateOpCount();
    drawPeakBars();
  });
  const opCsv = csvDownloadLink({
    api: ctx.api,
    route: "memory",
    params: routeParams,
    state: () => ({ table: "operators", sort: opTable.sortState(), filter: choices.opFilter }),
    testId: "memory-operator-csv",
    what: "the memory per operator",
  });
  opTable.setFilter(choices.opFilter);
  const heading = el(
    "div",
    {},
    el("h3", {}, "Memory by operator"),
    el("div", { className: "ps-controls" }, el("label", {}, "Filter", opInput), opCount, opCsv),
  );
  return {
    peakBars,
    parts: [heading, opTable.root],
    setRows(data) {
      loaded = true;
      operatorTotal = data.byOperator.length;
      opTable.setRows(data.byOperator);
      updateOpCount();
      drawPeakBars();
    },
  };
}
