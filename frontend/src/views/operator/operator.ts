// Operator: which framework operators cost most on the host and on the device, grouped by
// name, input shape or call stack. URL parameters: operator.group_by, operator.sort,
// operator.filter, and operator.op / operator.op_shape for the open drill-down.
import {
  fetchOperators,
  isOperatorGrouping,
  type OperatorGrouping,
  type OperatorKey,
  type OperatorRow,
  type OperatorsData,
} from "../../api/operators";
import { fetchSpanSummary, type SpanSummary } from "../../api/summary";
import type { SpanRef } from "../../api/types";
import { createBarList } from "../../components/bars";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader, createSignalSlot } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { createTableControls, emptyStateNote, spanRefOf } from "../../components/view_parts";
import { noOperatorsState } from "../../lib/empty_states";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { topN } from "../../lib/chart_data";
import { formatTime } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import { createOperatorDetailPanel } from "./detail";
import { operatorColumns, operatorRowKey, stackSummary } from "./columns";
import type { ViewContext, ViewDefinition } from "../types";

const GROUPINGS = [
  { value: "name", label: "Operator name" },
  { value: "input_shape", label: "Operator + input shapes" },
  { value: "stack", label: "Operator + call stack" },
] as const;

const TOP_COUNT = 10;
const DEVICE_COLOR = "#4e79a7";
const HOST_COLOR = "#76b7b2";

function rowLabel(row: OperatorRow, groupBy: OperatorGrouping): string {
  if (groupBy === "input_shape") return `${row.name} ${row.input_shape ?? ""}`.trim();
  if (groupBy === "stack") return `${row.name} · ${stackSummary(row.stack ?? null)}`;
  return row.name;
}

/** The top-10 charts of the rows the filter keeps (all rows without a filter). */
function topCharts(data: OperatorsData, rows: readonly OperatorRow[], filter: string, onSelect: (row: OperatorRow) => void): HTMLElement {
  const matching = filter.trim() !== "" ? ` matching “${filter.trim()}”` : "";
  const chart = (title: string, tipText: string, testId: string, color: string, value: (row: OperatorRow) => number) => {
    const top = topN(rows, value, TOP_COUNT);
    return createBarList(
      top.map((row) => ({
        label: rowLabel(row, data.group_by),
        value: value(row),
        valueText: formatTime(value(row)),
        tip: `${rowLabel(row, data.group_by)}\n${formatTime(value(row))} in ${row.calls} calls`,
      })),
      {
        title: `${title}${matching}`,
        titleTip: tipText,
        testId,
        color,
        emptyText: matching !== "" ? "No operator matches the filter." : "No operator time recorded.",
        onSelect: (index) => {
          const row = top[index];
          if (row !== undefined) onSelect(row);
        },
      },
    );
  };
  return el(
    "div",
    { className: "ps-row" },
    data.has_device
      ? chart(`Top ${TOP_COUNT} by device self time`, DEF.deviceSelf, "top-operators-device", DEVICE_COLOR, (row) => row.device_self)
      : null,
    chart(`Top ${TOP_COUNT} by host self time`, DEF.hostSelf, "top-operators-host", HOST_COLOR, (row) => row.host_self),
  );
}

function defaultSort(hasDevice: boolean): SortState {
  return { column: hasDevice ? "device_self" : "host_self", direction: "desc" };
}

function mountOperator(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  const ref: SpanRef | null = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "operator-page" });
  host.appendChild(page);
  if (ref === null) return;

  const param = ctx.param("group_by");
  let groupBy: OperatorGrouping = isOperatorGrouping(param) ? param : "name";
  let filter = ctx.param("filter") ?? "";
  let table: VirtualTable<OperatorRow> | null = null;
  let data: OperatorsData | null = null;
  const loader = createHostLoader(ctx.signal);
  const detailSignals = createSignalSlot(ctx.signal);
  let summary: Promise<SpanSummary | null> | null = null;

  const chartsHost = el("div", {});
  const tableHost = el("div", {});
  const detailHost = el("div", {});
  const controls = createTableControls({
    groupings: GROUPINGS,
    groupBy,
    noun: "rows",
    testIdPrefix: "operator",
    filter,
    onGroupBy: (next) => {
      groupBy = next;
      ctx.setParams({ group_by: next === "name" ? null : next, op: null, op_shape: null });
      closeDetail();
      load();
    },
    onFilter: (query) => {
      filter = query;
      ctx.setParams({ filter: query === "" ? null : query });
      table?.setFilter(query);
      updateCount();
      drawCharts();
    },
  });
  controls.root.appendChild(
    csvDownloadLink({
      api: ctx.api,
      route: "operators",
      params: () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, group_by: groupBy }),
      state: () => ({ sort: table?.sortState() ?? null, filter }),
      testId: "operator-csv",
      what: "the operators",
    }),
  );
  page.append(el("h2", {}, "Operators"), controls.root, chartsHost, tableHost, detailHost);

  function drawCharts(): void {
    if (table === null || data === null) return;
    replaceChildren(chartsHost, topCharts(data, table.visibleRows(), filter, (row) => openDetail(row, true)));
  }

  function updateCount(): void {
    if (table !== null && data !== null) controls.setCount(table.visibleRows().length, data.rows.length);
  }

  function spanSummary(): Promise<SpanSummary | null> {
    summary ??= fetchSpanSummary(ctx.api, ref!, ctx.signal).then(
      (result) => (result.kind === "ok" ? result.data : null),
      () => null,
    );
    return summary;
  }

  function closeDetail(): void {
    detailSignals.clear();
    replaceChildren(detailHost);
    table?.setSelected(null);
  }

  function openDetail(row: OperatorRow, writeUrl: boolean): void {
    if (data === null) return;
    const signal = detailSignals.next();
    const key: OperatorKey = { name: row.name, inputShape: groupBy === "input_shape" ? (row.input_shape ?? null) : null };
    if (writeUrl) ctx.setParams({ op: key.name, op_shape: key.inputShape });
    table?.setSelected(operatorRowKey(row));
    const panel = createOperatorDetailPanel({
      api: ctx.api,
      ref: ref!,
      row,
      key,
      hasDevice: data.has_device ?? false,
      summary: spanSummary,
      openInTrace: (occurrence) =>
        ctx.navigate("trace", {
          start: String(occurrence.start),
          end: String(occurrence.start + occurrence.dur),
          select: String(occurrence.event_id),
        }),
      onClose: () => {
        ctx.setParams({ op: null, op_shape: null });
        closeDetail();
      },
      signal,
    });
    replaceChildren(detailHost, panel);
    if (writeUrl) panel.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function show(loaded: OperatorsData, signal: AbortSignal): void {
    data = loaded;
    if (loaded.rows.length === 0) {
      replaceChildren(chartsHost);
      replaceChildren(tableHost, emptyStateNote("operator-empty", noOperatorsState(ctx.selection.run?.framework)));
      controls.setCount(0, 0);
      return;
    }
    const hasDevice = loaded.has_device ?? false; // absent when the span has no operators
    const columns = operatorColumns(groupBy, hasDevice, loaded.efficiency ?? false);
    const sort = parseSortParam(ctx.param("sort"), columns.map((column) => column.id), defaultSort(hasDevice));
    table = createVirtualTable({
      columns,
      rowKey: operatorRowKey,
      filterText: (row) => row.name,
      sort,
      onSortChange: (next) => ctx.setParams({ sort: formatSortParam(next) }),
      onActivate: (row) => openDetail(row, true),
      label: "Operators",
      testId: "operator-table",
      emptyText: "No operator matches the filter.",
      signal,
    });
    table.setRows(loaded.rows);
    table.setFilter(filter);
    replaceChildren(tableHost, table.root);
    drawCharts();
    updateCount();

    const wanted = ctx.param("op");
    if (wanted !== null) {
      const shape = ctx.param("op_shape");
      const row = loaded.rows.find((candidate) => candidate.name === wanted && (shape === null || candidate.input_shape === shape));
      if (row !== undefined) openDetail(row, false);
    }
  }

  function load(): void {
    table = null;
    data = null;
    replaceChildren(chartsHost);
    controls.setCount(0, 0);
    void loader.load({
      host: tableHost,
      fetch: (signal) => fetchOperators(ctx.api, ref!, groupBy, signal),
      what: "the operators",
      testIdPrefix: "operator",
      errorTitle: "The operators could not be computed",
      render: show,
    });
  }

  load();
}

export const operatorView: ViewDefinition = {
  id: "operator",
  label: "Operator",
  scope: "span",
  mount: mountOperator,
};
