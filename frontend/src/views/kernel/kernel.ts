// Kernel: which device kernels cost most, their occupancy, and how much kernel time runs on
// Tensor Cores (NVIDIA GPUs only: elsewhere kernel names cannot tell). The title names the device
// ("GPU kernels", "Ascend kernels"). URL parameters: kernel.group_by, kernel.sort, kernel.filter.
import { fetchKernels, isKernelGrouping, type KernelGrouping, type KernelRow, type KernelsData } from "../../api/kernels";
import { createBarList, createShareBar } from "../../components/bars";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { createTableControls, emptyStateNote, spanRefOf } from "../../components/view_parts";
import { noKernelsState } from "../../lib/empty_states";
import { createVirtualTable, type TableColumn, type VirtualTable } from "../../components/virtual_table";
import { shares, topN } from "../../lib/chart_data";
import { kernelsTitle } from "../../lib/devices";
import { formatCount, formatPercent } from "../../lib/format";
import { formatFixed, formatMicrosNumber, formatTime, shortKernelName } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { efficiencyOf } from "../../api/efficiency";
import { efficiencyColumns } from "../../components/efficiency_columns";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext, ViewDefinition } from "../types";

const GROUPINGS = [
  { value: "name", label: "Kernel name" },
  { value: "op_and_name", label: "Operator + kernel name" },
] as const;

const TOP_COUNT = 10;
const KERNEL_COLOR = "#4e79a7";
const TENSOR_CORE_COLOR = "#59a14f";
const OTHER_COLOR = "#bab0ac";

function micros(id: string, label: string, tipText: string, value: (row: KernelRow) => number): TableColumn<KernelRow> {
  return { id, label, unit: "µs", tip: tipText, width: 92, align: "right", sortValue: value, text: (row) => formatMicrosNumber(value(row)) };
}

/** The table's columns; the Tensor Core column only where kernel names can tell Tensor Core use. */
export function kernelColumns(groupBy: KernelGrouping, tensorCoresKnown = true, efficiency = false): TableColumn<KernelRow>[] {
  const columns: TableColumn<KernelRow>[] = [
    {
      id: "name",
      label: "Kernel",
      width: 190,
      grow: 4,
      firstDirection: "asc",
      // Shown without "void " and the parameter list; the tooltip and the filter use the full name.
      sortValue: (row) => shortKernelName(row.name),
      text: (row) => shortKernelName(row.name),
      cellTip: (row) => row.name,
    },
  ];
  if (groupBy === "op_and_name") {
    columns.push({
      id: "op",
      label: "Operator",
      tip: DEF.kernelOp,
      width: 150,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => row.op ?? "",
      text: (row) => row.op ?? "",
      cellTip: (row) => row.op ?? null,
    });
  }
  columns.push(
    { id: "calls", label: "Calls", tip: DEF.calls, width: 72, align: "right", sortValue: (row) => row.calls, text: (row) => formatCount(row.calls) },
    micros("total", "Total", DEF.kernelTotal, (row) => row.total),
    micros("mean", "Mean", DEF.kernelMean, (row) => row.mean),
    micros("min", "Min", DEF.kernelMin, (row) => row.min),
    micros("max", "Max", DEF.kernelMax, (row) => row.max),
    {
      id: "blocks_per_sm",
      label: "Blocks/SM",
      tip: DEF.blocksPerSm,
      width: 90,
      align: "right",
      sortValue: (row) => row.blocks_per_sm,
      text: (row) => (row.blocks_per_sm === null ? "—" : formatFixed(row.blocks_per_sm, 2)),
    },
    {
      id: "achieved_occupancy",
      label: "Est. occupancy",
      tip: DEF.kernelOccupancy,
      width: 116,
      align: "right",
      sortValue: (row) => row.achieved_occupancy,
      text: (row) => (row.achieved_occupancy === null ? "—" : formatPercent(row.achieved_occupancy)),
    },
  );
  if (tensorCoresKnown) {
    columns.push({
      id: "tensor_cores",
      label: "TC used",
      tip: DEF.tensorCores,
      width: 84,
      align: "center",
      sortValue: (row) => row.tensor_cores,
      text: (row) => (row.tensor_cores ? "yes" : "no"),
    });
  }
  if (efficiency) columns.push(...efficiencyColumns((row: KernelRow) => efficiencyOf(row)));
  return columns;
}

export function kernelRowKey(row: KernelRow): string {
  return `${row.op ?? ""}\u0000${row.name}`;
}

/** Kernel time and its Tensor Core share over the rows the filter keeps (the span's figures without a filter). */
export function filteredKernelTotals(
  data: KernelsData,
  rows: readonly KernelRow[],
  filtered: boolean,
): { total: number; tensorCoreShare: number | null } {
  if (!filtered || !data.tensor_cores_known || data.tensor_core_share === null) {
    const total = filtered ? rows.reduce((sum, row) => sum + row.total, 0) : data.total;
    return { total, tensorCoreShare: data.tensor_cores_known ? data.tensor_core_share : null };
  }
  const total = rows.reduce((sum, row) => sum + row.total, 0);
  const tensorCores = rows.reduce((sum, row) => sum + (row.tensor_cores ? row.total : 0), 0);
  return { total, tensorCoreShare: total > 0 ? tensorCores / total : 0 };
}

/** What of the span's kernel time lies within the steps, when some lies outside: the Overview's device
 *  figures (kernel time, utilization, Tensor Core share) are over the steps only. */
export function inStepsNote(data: KernelsData): string | null {
  const inside = data.in_steps === null ? null : data.in_steps.total;
  if (inside === null || !(data.total > 0) || Math.abs(data.total - inside) <= 0.005 * data.total) return null;
  return `${formatTime(inside)} of the ${formatTime(data.total)} kernel time lies within the steps, the window of the Overview's device figures.`;
}

function charts(data: KernelsData, rows: readonly KernelRow[], filter: string): HTMLElement {
  const row = chartRow(data, rows, filter);
  const note = filter.trim() === "" ? inStepsNote(data) : null;
  return note === null ? row : el("div", {}, row, el("p", { className: "ps-note", testId: "kernel-in-steps" }, note));
}

function chartRow(data: KernelsData, rows: readonly KernelRow[], filter: string): HTMLElement {
  const filtered = filter.trim() !== "";
  const matching = filtered ? ` matching “${filter.trim()}”` : "";
  const { total, tensorCoreShare } = filteredKernelTotals(data, rows, filtered);
  const top = topN(rows, (row) => row.total, TOP_COUNT);
  const fullName = (row: KernelRow): string => (data.group_by === "op_and_name" && row.op !== undefined ? `${row.op} → ${row.name}` : row.name);
  const label = (row: KernelRow): string =>
    data.group_by === "op_and_name" && row.op !== undefined ? `${row.op} → ${shortKernelName(row.name)}` : shortKernelName(row.name);
  const topKernels = createBarList(
    top.map((row) => ({
      label: label(row),
      value: row.total,
      valueText: formatTime(row.total),
      tip: `${fullName(row)}\n${formatTime(row.total)} in ${formatCount(row.calls)} calls (${formatPercent(data.total > 0 ? row.total / data.total : Number.NaN)} of kernel time)`,
    })),
    {
      title: `Top ${TOP_COUNT} kernels by total time${matching}`,
      titleTip: DEF.kernelTotal,
      testId: "top-kernels",
      color: KERNEL_COLOR,
      emptyText: filtered ? "No kernel matches the filter." : "No kernel time recorded.",
    },
  );
  if (tensorCoreShare === null) return el("div", { className: "ps-row" }, topKernels);
  const [tcShare = 0, otherShare = 0] = shares([tensorCoreShare, 1 - tensorCoreShare]);
  return el(
    "div",
    { className: "ps-row" },
    topKernels,
    createShareBar(
      [
        { label: "Tensor Core kernels", share: tcShare, valueText: `${formatPercent(tcShare)} · ${formatTime(total * tcShare)}`, color: TENSOR_CORE_COLOR },
        { label: "Other kernels", share: otherShare, valueText: `${formatPercent(otherShare)} · ${formatTime(total * otherShare)}`, color: OTHER_COLOR },
      ],
      `Tensor Core share of ${formatTime(total)} kernel time${matching}`,
      `${DEF.tensorCoreShare} ${DEF.allKernelTime}`,
      "tensor-core-share",
    ),
  );
}

function mountKernel(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "kernel-page" });
  host.appendChild(page);
  if (ref === null) return;

  const param = ctx.param("group_by");
  let groupBy: KernelGrouping = isKernelGrouping(param) ? param : "name";
  let filter = ctx.param("filter") ?? "";
  let table: VirtualTable<KernelRow> | null = null;
  let total = 0;
  let data: KernelsData | null = null;
  const loader = createHostLoader(ctx.signal);

  const chartsHost = el("div", {});
  const tableHost = el("div", {});
  const controls = createTableControls({
    groupings: GROUPINGS,
    groupBy,
    noun: "rows",
    testIdPrefix: "kernel",
    filter,
    onGroupBy: (next) => {
      groupBy = next;
      ctx.setParams({ group_by: next === "name" ? null : next });
      load();
    },
    onFilter: (query) => {
      filter = query;
      ctx.setParams({ filter: query === "" ? null : query });
      table?.setFilter(query);
      if (table !== null) controls.setCount(table.visibleRows().length, total);
      drawCharts();
    },
  });
  controls.root.appendChild(
    csvDownloadLink({
      api: ctx.api,
      route: "kernels",
      params: () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, group_by: groupBy }),
      state: () => ({ sort: table?.sortState() ?? null, filter }),
      testId: "kernel-csv",
      what: "the kernels",
    }),
  );

  function drawCharts(): void {
    if (table === null || data === null) return;
    replaceChildren(chartsHost, charts(data, table.visibleRows(), filter));
  }

  function openOperators(): HTMLElement {
    const button = el("button", { className: "ps-button", testId: "kernel-empty-operators", attrs: { type: "button" } }, "Open the Operator view");
    button.addEventListener("click", () => ctx.navigate("operator", {}));
    return button;
  }
  const title = el("h2", { testId: "kernel-title" }, "Kernels");
  page.append(title, controls.root, chartsHost, tableHost);

  function show(loaded: KernelsData, signal: AbortSignal): void {
    data = loaded;
    title.textContent = loaded.rows.length > 0 ? kernelsTitle(loaded.device_kind) : "Kernels";
    if (loaded.rows.length === 0) {
      controls.root.hidden = true;
      replaceChildren(chartsHost);
      replaceChildren(
        tableHost,
        emptyStateNote("kernel-empty", noKernelsState(ctx.selection.run?.framework), openOperators()),
      );
      return;
    }
    controls.root.hidden = false;
    total = loaded.rows.length;
    const columns = kernelColumns(loaded.group_by, loaded.tensor_cores_known, loaded.efficiency ?? false);
    const sort = parseSortParam(ctx.param("sort"), columns.map((column) => column.id), { column: "total", direction: "desc" });
    const created = createVirtualTable({
      columns,
      rowKey: kernelRowKey,
      filterText: (row) => (row.op !== undefined ? `${row.name} ${row.op}` : row.name),
      sort,
      onSortChange: (next) => ctx.setParams({ sort: formatSortParam(next) }),
      onActivate: (row) => created.setSelected(kernelRowKey(row)),
      label: kernelsTitle(data.device_kind),
      testId: "kernel-table",
      emptyText: "No kernel matches the filter.",
      signal,
    });
    table = created;
    created.setRows(loaded.rows);
    created.setFilter(filter);
    drawCharts();
    replaceChildren(tableHost, created.root);
    controls.setCount(created.visibleRows().length, total);
  }

  function load(): void {
    table = null;
    data = null;
    replaceChildren(chartsHost);
    void loader.load({
      host: tableHost,
      fetch: (signal) => fetchKernels(ctx.api, ref!, groupBy, signal),
      what: "the kernels",
      testIdPrefix: "kernel",
      errorTitle: "The kernels could not be computed",
      render: show,
    });
  }

  load();
}

export const kernelView: ViewDefinition = {
  id: "kernel",
  label: "Kernel",
  scope: "span",
  mount: mountKernel,
};
