// The Memory page's allocations table: the size and operator-name filters (asked of the backend: they search every
// allocation, not only the listed ones; typing is debounced), the count of rows listed, the CSV, the table itself.
import type { QueryParams } from "../../api/client";
import type { AllocationRow, MemoryData } from "../../api/memory";
import { csvDownloadLink } from "../../components/csv_download";
import { el } from "../../components/dom";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { MIN_SIZE_CHOICES, parseMinBytes } from "../../lib/memory_model";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext } from "../types";
import { ALLOCATION_LIMIT, type MemoryChoices } from "./choices";
import { allocationColumns, allocationCountText, allocationKey } from "./tables";

const FILTER_DELAY_MS = 300;

export interface AllocationsPart {
  /** The heading with the filters, count and CSV link; the table; the note shown when nothing matches. */
  readonly parts: readonly HTMLElement[];
  setRows(data: MemoryData): void;
}

/**
 * `routeParams`: the memory route's parameters for the choices as they are now (the CSV asks for them);
 * `refresh`: ask the route again (a filter changed).
 */
export function createAllocationsPart(
  ctx: ViewContext,
  origin: number,
  choices: MemoryChoices,
  routeParams: () => QueryParams,
  refresh: () => void,
): AllocationsPart {
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
  const allocCsv = csvDownloadLink({
    api: ctx.api,
    route: "memory",
    params: routeParams,
    state: () => ({ table: "events", sort: allocTable.sortState(), filter: "" }),
    testId: "memory-alloc-csv",
    what: "the allocations",
  });
  const heading = el(
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
  );
  return {
    parts: [heading, allocTable.root, allocEmpty],
    setRows(data) {
      allocTable.setRows(data.allocations);
      allocCount.textContent = allocationCountText(data.allocations.length, data.allocations.length, ALLOCATION_LIMIT);
      allocEmpty.hidden = data.allocations.length > 0;
    },
  };
}
