// Memory: how much memory each device holds over time, when it peaks, and which operators
// allocated it. A drag on a chart selects a time range; the tables then cover only that range.
// URL parameters: memory.device, memory.start / memory.end (µs, the trace's time base),
// memory.min_bytes, memory.name (allocations by operator name), memory.op_filter,
// memory.alloc_sort, memory.op_sort.
import { fetchMemory, memoryParams, type AllocationRow, type MemoryData, type MemoryQuery, type OperatorMemoryRow } from "../../api/memory";
import type { ApiResult, SpanRef } from "../../api/types";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, replaceChildren } from "../../components/dom";
import { csvDownloadLink } from "../../components/csv_download";
import { createHostLoader, createSignalSlot, loadInto } from "../../components/loader";
import { emptyNote, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { formatCount } from "../../lib/format";
import {
  formatRangeParams,
  MIN_SIZE_CHOICES,
  parseMinBytes,
  parseRangeParams,
  timeOrigin,
  type TimeRange,
} from "../../lib/memory_model";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import { deviceChart, peakCard, type DeviceChart } from "./charts";
import {
  allocationColumns,
  allocationCountText,
  allocationKey,
  operatorMemoryColumns,
  peakHolders,
  rangeText,
} from "./tables";
import type { ViewContext, ViewDefinition } from "../types";

/** Allocations the route lists at most (largest first). */
const ALLOCATION_LIMIT = 5000;
const FILTER_DELAY_MS = 300;

interface MemoryPage {
  readonly memory: MemoryData;
  /** The span's start (µs): times are shown from it, as in the trace. */
  readonly origin: number;
}

/** The memory answer, with its own statement of the span's start as the page's time origin (one request). */
async function fetchMemoryPage(ctx: ViewContext, ref: SpanRef, query: MemoryQuery, signal: AbortSignal): Promise<ApiResult<MemoryPage>> {
  const memory = await fetchMemory(ctx.api, ref, query, signal);
  if (memory.kind !== "ok") return memory;
  return { kind: "ok", data: { memory: memory.data, origin: timeOrigin(memory.data) } };
}

function mountMemory(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "memory-page" });
  host.appendChild(page);
  if (ref === null) return;

  let device = ctx.param("device") ?? "";
  let range: TimeRange | null = parseRangeParams(ctx.param("start"), ctx.param("end"));
  let minBytes = parseMinBytes(ctx.param("min_bytes"));
  let nameFilter = ctx.param("name") ?? "";
  let opFilter = ctx.param("op_filter") ?? "";
  const query = (): MemoryQuery => ({
    device,
    start: range?.start,
    end: range?.end,
    minBytes,
    name: nameFilter,
    limit: ALLOCATION_LIMIT,
  });

  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Memory"), body);

  void loadInto(
    {
      host: body,
      fetch: (signal) => fetchMemoryPage(ctx, ref, query(), signal),
      what: "the memory events",
      testIdPrefix: "memory",
      errorTitle: "The memory view could not be computed",
      render: (data) => show(data),
    },
    ctx.signal,
  );

  function show({ memory, origin }: MemoryPage): void {
    if (!memory.available || memory.devices.length === 0) {
      replaceChildren(
        body,
        emptyNote(
          "memory-unavailable",
          "This span has no memory events",
          memory.hint ?? "Record with torch.profiler.profile(profile_memory=True, record_shapes=True) to see memory.",
        ),
      );
      return;
    }
    if (device !== "" && !memory.devices.some((candidate) => candidate.id === device)) device = "";

    // --- device picker and selected range -------------------------------------------------
    const devicePicker = el("select", { className: "ps-select", testId: "memory-device", attrs: { "aria-label": "Device" } });
    devicePicker.appendChild(new Option(memory.devices.length > 1 ? "All devices" : memory.devices[0]?.name ?? "", ""));
    if (memory.devices.length > 1) for (const candidate of memory.devices) devicePicker.appendChild(new Option(candidate.name, candidate.id));
    devicePicker.value = device;
    devicePicker.disabled = memory.devices.length < 2;
    const rangeLabel = el("span", { className: "ps-range-text", testId: "memory-range" });
    const clearButton = el("button", { className: "ps-button", testId: "memory-clear-range", attrs: { type: "button" } }, "Clear selection");
    const traceButton = el("button", { className: "ps-button", testId: "memory-open-trace", attrs: { type: "button" } }, "Open range in trace");
    const rangeBar = el("div", { className: "ps-range-bar" }, rangeLabel, clearButton, traceButton);
    const controls = el("div", { className: "ps-controls", testId: "memory-controls" }, el("label", {}, "Device", devicePicker), rangeBar);

    const cardsHost = el("div", { className: "ps-cards", testId: "memory-peaks" });
    const chartsHost = el("div", { className: "ps-page" });
    let charts: DeviceChart[] = [];
    const chartSignals = createSignalSlot(ctx.signal);

    function renderDevices(): void {
      const chartSignal = chartSignals.next();
      const shown = memory.devices.filter((candidate) => device === "" || candidate.id === device);
      replaceChildren(cardsHost, ...shown.map((candidate) => peakCard(candidate, memory.peaks.get(candidate.id) ?? null, origin)));
      charts = shown.flatMap((candidate) => {
        const curve = memory.curves.get(candidate.id);
        if (curve === undefined || curve.time.length === 0) return [];
        return [
          deviceChart({
            device: candidate,
            curve,
            peak: memory.peaks.get(candidate.id) ?? null,
            origin,
            selection: range,
            onBrush: (next) => setRange(next),
            signal: chartSignal,
          }),
        ];
      });
      replaceChildren(chartsHost, ...charts.map((chart) => chart.root));
    }

    function renderRange(): void {
      rangeLabel.textContent = rangeText(range, origin);
      rangeBar.dataset["selected"] = String(range !== null);
      clearButton.hidden = range === null;
      traceButton.hidden = range === null;
    }

    function setRange(next: TimeRange | null): void {
      range = next;
      ctx.setParams(formatRangeParams(range));
      for (const chart of charts) chart.setSelection(range);
      renderRange();
      refreshTables();
    }

    devicePicker.addEventListener("change", () => {
      device = devicePicker.value;
      ctx.setParams({ device: device === "" ? null : device });
      renderDevices();
      refreshTables();
    });
    clearButton.addEventListener("click", () => setRange(null));
    traceButton.addEventListener("click", () => {
      if (range !== null) ctx.navigate("trace", { start: String(range.start), end: String(range.end), select: null });
    });

    // --- allocations ----------------------------------------------------------------------
    const sizePicker = el("select", { className: "ps-select", testId: "memory-min-bytes", attrs: { "aria-label": "Minimum size" } });
    for (const choice of MIN_SIZE_CHOICES) sizePicker.appendChild(new Option(choice.label, String(choice.bytes)));
    sizePicker.value = String(minBytes);
    const nameInput = el("input", {
      className: "ps-input",
      testId: "memory-name-filter",
      attrs: { type: "search", placeholder: "Operator name…", "aria-label": "Filter allocations by operator name", spellcheck: "false" },
    });
    nameInput.value = nameFilter;
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
      minBytes = parseMinBytes(sizePicker.value);
      ctx.setParams({ min_bytes: minBytes > 0 ? String(minBytes) : null });
      refreshTables();
    });
    nameInput.addEventListener("input", () => {
      window.clearTimeout(filterTimer);
      // The filter runs on the backend (it searches every allocation, not only the listed ones).
      filterTimer = window.setTimeout(() => {
        nameFilter = nameInput.value.trim();
        ctx.setParams({ name: nameFilter === "" ? null : nameFilter });
        refreshTables();
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
    opInput.value = opFilter;
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
      opFilter = opInput.value;
      ctx.setParams({ op_filter: opFilter === "" ? null : opFilter });
      opTable.setFilter(opFilter);
      updateOpCount();
      drawPeakBars();
    });
    const routeParams = () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, ...memoryParams(query()) });
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
      state: () => ({ table: "operators", sort: opTable.sortState(), filter: opFilter }),
      testId: "memory-operator-csv",
      what: "the memory per operator",
    });
    let lastTables: MemoryData | null = null;
    function drawPeakBars(): void {
      if (lastTables === null) return;
      const shownDevices = memory.devices.filter((candidate) => device === "" || candidate.id === device);
      const onlyDevice = shownDevices.length === 1 ? shownDevices[0] : undefined;
      replaceChildren(
        peakBars,
        peakHolders(
          opTable.visibleRows(),
          onlyDevice !== undefined ? (memory.peaks.get(onlyDevice.id)?.allocated ?? null) : null,
          range !== null,
          opFilter,
        ),
      );
    }
    opTable.setFilter(opFilter);

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

    function renderTables(data: MemoryData): void {
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
    function refreshTables(): void {
      void tablesLoader.load({
        host: tablesStatus,
        fetch: (signal) => fetchMemory(ctx.api, ref!, query(), signal),
        what: "the tables for this selection",
        testIdPrefix: "memory-tables",
        errorTitle: "The tables could not be updated",
        stateOn: tables,
        render: (data) => renderTables(data),
      });
    }

    const notes = memory.notes.map((note) => el("p", { className: "ps-note", testId: "memory-note" }, note));
    replaceChildren(body, controls, ...notes, cardsHost, chartsHost, tables);
    renderRange();
    renderDevices();
    renderTables(memory);
  }
}

export const memoryView: ViewDefinition = {
  id: "memory",
  label: "Memory",
  scope: "span",
  mount: mountMemory,
};
