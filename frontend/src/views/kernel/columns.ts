// Columns of the kernel table, for each grouping: the name shortened (the full name in its tooltip), the operator
// when grouped by it, time, occupancy, and the Tensor Core column only where kernel names can tell.
import { efficiencyOf } from "../../api/efficiency";
import type { KernelGrouping, KernelRow } from "../../api/kernels";
import { efficiencyColumns } from "../../components/efficiency_columns";
import type { TableColumn } from "../../components/virtual_table";
import { formatCount, formatPercent } from "../../lib/format";
import { formatFixed, formatMicrosNumber, shortKernelName } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";

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
