// Kernel: which device kernels cost most, their occupancy, and how much kernel time runs on
// Tensor Cores (NVIDIA GPUs only: elsewhere kernel names cannot tell). The title names the device
// ("GPU kernels", "Ascend kernels"). URL parameters: kernel.group_by, kernel.sort, kernel.filter. The table's
// columns are columns.ts, the charts charts.ts, their figures model.ts.
import { fetchKernels, isKernelGrouping, type KernelGrouping, type KernelRow, type KernelsData } from "../../api/kernels";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { createTableControls, emptyStateNote, spanRefOf } from "../../components/view_parts";
import { noKernelsState } from "../../lib/empty_states";
import { createVirtualTable, type VirtualTable } from "../../components/virtual_table";
import { kernelsTitle } from "../../lib/devices";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext, ViewDefinition } from "../types";
import { charts } from "./charts";
import { kernelColumns, kernelRowKey } from "./columns";

const GROUPINGS = [
  { value: "name", label: "Kernel name" },
  { value: "op_and_name", label: "Operator + kernel name" },
] as const;

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
