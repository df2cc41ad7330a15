// The Memory page's tables for the range and filters chosen: the allocations (size and operator filters, asked of
// the backend), the bytes per operator (filtered here) with the operators holding the most of the peak as bars above
// them, and each table's CSV. A new choice asks the memory route again; the tables keep their rows until it answers.
import { fetchMemory, memoryParams, type AllocationRow, type MemoryData, type OperatorMemoryRow } from "../../api/memory";
import type { SpanRef } from "../../api/types";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { formatCount } from "../../lib/format";
import { MIN_SIZE_CHOICES, parseMinBytes } from "../../lib/memory_model";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext } from "../types";
import { ALLOCATION_LIMIT, memoryQuery, type MemoryChoices } from "./choices";
import { allocationColumns, allocationCountText, allocationKey, operatorMemoryColumns, peakHolders } from "./tables";

const FILTER_DELAY_MS = 300;

export interface TablesSection {
  readonly root: HTMLElement;
  /** Shows an answer's tables. */
  render(data: MemoryData): void;
  /** Asks for the tables of the choices as they are now. */
  refresh(): void;
}

/** The section for the page's first answer `memory` (its devices and peaks); times are shown from `origin`. */
export function createTablesSection(ctx: ViewContext, ref: SpanRef, memory: MemoryData, origin: number, choices: MemoryChoices): TablesSection {
  // --- allocations ----------------------------------------------------------------------
  const sizePicker = el("select", { className: "ps-select", testId: "memory-min-bytes", attrs: { "aria-label": "Minimum size" } });
  for (const choice of MIN_SIZE_CHOICES) sizePicker.appendChild(new Option(choice.label, String(choice.bytes)));
  sizePicker.value = String(choices.minBytes);
  const nameInput = el("input", {
    className: "ps-input",
    testId: "memory-name-filter",
    attrs: { type: "search", placeholder: "Operator name…", "aria-label": "Filter allocations by operator name", spellcheck: "false" },
  });
  nameInput.value = choices.nameFilter;
  const allocCount = el("span", { className: "ps-count", testId: "memory-alloc-count", attrs: { "aria-live": "polite" } });
  const allocColumns = allocationColumns(origin);
  const allocTable: VirtualTable<AllocationRow> = createVirtualTable({
    columns: allocColumns,
    rowKey: allocationKey,
    filterText: (row) => row.operator,
    sort: parseSortParam(ctx.param("alloc_sort"), allocColumns.map((column) => column.id), { column: "bytes", direction: "desc" }),
    onSortChange: (next) => ctx.setParams({ alloc_sort: formatSortParam(next) }),
    onActivate: (row) => allocTable.setSelected(allocationKey(row)),
    label: "Allocations",
    testId: "memory-alloc-table",
    emptyText: "No allocation matches.",
    maxHeight: 360,
    signal: ctx.signal,
  });
  const allocEmpty = el("p", { className: "ps-muted", testId: "memory-alloc-empty", hidden: true }, "No allocation in this selection matches the filters.");
  let filterTimer: number | undefined;
  sizePicker.addEventListener("change", () => {
    choices.minBytes = parseMinBytes(sizePicker.value);
    ctx.setParams({ min_bytes: choices.minBytes > 0 ? String(choices.minBytes) : null });
    refresh();
  });
  nameInput.addEventListener("input", () => {
    window.clearTimeout(filterTimer);
    // The filter runs on the backend (it searches every allocation, not only the listed ones).
    filterTimer = window.setTimeout(() => {
      choices.nameFilter = nameInput.value.trim();
      ctx.setParams({ name: choices.nameFilter === "" ? null : choices.nameFilter });
      refresh();
    }, FILTER_DELAY_MS);
  });
  ctx.signal.addEventListener("abort", () => window.clearTimeout(filterTimer), { once: true });

  // --- operators --------------------------------------------------------------------------
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
    const shown = opTable.visibleRows().length;
    opCount.textContent = shown === operatorTotal ? `${formatCount(operatorTotal)} operators` : `${formatCount(shown)} of ${formatCount(operatorTotal)} operators`;
  };
  opInput.addEventListener("input", () => {
    choices.opFilter = opInput.value;
    ctx.setParams({ op_filter: choices.opFilter === "" ? null : choices.opFilter });
    opTable.setFilter(choices.opFilter);
    updateOpCount();
    drawPeakBars();
  });
  const routeParams = () => ({ run: ref.run, worker: ref.worker, span: ref.span, ...memoryParams(memoryQuery(choices)) });
  const allocCsv = csvDownloadLink({
    api: ctx.api,
    route: "memory",
    params: routeParams,
    state: () => ({ table: "events", sort: allocTable.sortState(), filter: "" }),
    testId: "memory-alloc-csv",
    what: "the allocations",
  });
  const opCsv = csvDownloadLink({
    api: ctx.api,
    route: "memory",
    params: routeParams,
    state: () => ({ table: "operators", sort: opTable.sortState(), filter: choices.opFilter }),
    testId: "memory-operator-csv",
    what: "the memory per operator",
  });
  let lastTables: MemoryData | null = null;
  function drawPeakBars(): void {
    if (lastTables === null) return;
    const shownDevices = memory.devices.filter((candidate) => choices.device === "" || candidate.id === choices.device);
    const onlyDevice = shownDevices.length === 1 ? shownDevices[0] : undefined;
    replaceChildren(
      peakBars,
      peakHolders(
        opTable.visibleRows(),
        onlyDevice !== undefined ? (memory.peaks.get(onlyDevice.id)?.allocated ?? null) : null,
        choices.range !== null,
        choices.opFilter,
      ),
    );
  }
  opTable.setFilter(choices.opFilter);

  const peakBars = el("div", {});
  const tablesStatus = el("div", { testId: "memory-tables-status" });
  const tables = el(
    "section",
    { className: "ps-page", testId: "memory-tables" },
    tablesStatus,
    peakBars,
    el(
      "div",
      {},
      el("h3", {}, "Allocations"),
      el(
        "div",
        { className: "ps-controls" },
        el("label", {}, "Size", sizePicker),
        el("label", {}, "Operator", nameInput),
        allocCount,
        allocCsv,
      ),
    ),
    allocTable.root,
    allocEmpty,
    el(
      "div",
      {},
      el("h3", {}, "Memory by operator"),
      el("div", { className: "ps-controls" }, el("label", {}, "Filter", opInput), opCount, opCsv),
    ),
    opTable.root,
  );

  function render(data: MemoryData): void {
    replaceChildren(tablesStatus);
    tables.dataset["state"] = "ready";
    lastTables = data;
    allocTable.setRows(data.allocations);
    allocCount.textContent = allocationCountText(data.allocations.length, data.allocations.length, ALLOCATION_LIMIT);
    allocEmpty.hidden = data.allocations.length > 0;
    operatorTotal = data.byOperator.length;
    opTable.setRows(data.byOperator);
    updateOpCount();
    drawPeakBars();
  }

  const tablesLoader = createHostLoader(ctx.signal);
  function refresh(): void {
    void tablesLoader.load({
      host: tablesStatus,
      fetch: (signal) => fetchMemory(ctx.api, ref, memoryQuery(choices), signal),
      what: "the tables for this selection",
      testIdPrefix: "memory-tables",
      errorTitle: "The tables could not be updated",
      stateOn: tables,
      render: (data) => render(data),
    });
  }

  return { root: tables, render, refresh };
}
