// Operator: which framework operators cost most on the host and on the device, grouped by
// name, input shape or call stack. URL parameters: operator.group_by, operator.sort,
// operator.filter, and operator.op / operator.op_shape for the open drill-down. The charts are top_charts.ts, the
// drill-down detail_section.ts.
import { fetchOperators, isOperatorGrouping, type OperatorGrouping, type OperatorRow, type OperatorsData } from "../../api/operators";
import type { SpanRef } from "../../api/types";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { createTableControls, emptyStateNote, spanRefOf } from "../../components/view_parts";
import { noOperatorsState } from "../../lib/empty_states";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import { operatorColumns, operatorRowKey } from "./columns";
import { createDetailSection } from "./detail_section";
import { defaultSort, wantedRow } from "./model";
import { topCharts } from "./top_charts";
import type { ViewContext, ViewDefinition } from "../types";

const GROUPINGS = [
  { value: "name", label: "Operator name" },
  { value: "input_shape", label: "Operator + input shapes" },
  { value: "stack", label: "Operator + call stack" },
] as const;

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

  const chartsHost = el("div", {});
  const tableHost = el("div", {});
  const detail = createDetailSection(ctx, ref, (key) => table?.setSelected(key));
  const controls = createTableControls({
    groupings: GROUPINGS,
    groupBy,
    noun: "rows",
    testIdPrefix: "operator",
    filter,
    onGroupBy: (next) => {
      groupBy = next;
      ctx.setParams({ group_by: next === "name" ? null : next, op: null, op_shape: null });
      detail.close();
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
  page.append(el("h2", {}, "Operators"), controls.root, chartsHost, tableHost, detail.root);

  function drawCharts(): void {
    if (table === null || data === null) return;
    replaceChildren(chartsHost, topCharts(data, table.visibleRows(), filter, (row) => openDetail(row, true)));
  }

  function updateCount(): void {
    if (table !== null && data !== null) controls.setCount(table.visibleRows().length, data.rows.length);
  }

  function openDetail(row: OperatorRow, writeUrl: boolean): void {
    if (data !== null) detail.open(row, groupBy, data.has_device ?? false, writeUrl);
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
    const row = wantedRow(loaded.rows, ctx.param("op"), ctx.param("op_shape"));
    if (row !== undefined) openDetail(row, false);
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
