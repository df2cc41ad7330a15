// The efficiency columns of the Operator and Kernel tables (the figures from api/efficiency.ts, formatted and
// defined in lib/efficiency.ts).
import type { Efficiency } from "../api/efficiency";
import { EFFICIENCY_DEFINITIONS, formatFigure } from "../lib/efficiency";
import { formatBytes, formatPercent } from "../lib/format";
import type { TableColumn } from "./virtual_table";

const DASH = "—";

function figureColumn<T>(
  id: string,
  label: string,
  tip: string,
  value: (row: T) => number | null,
  format: (value: number | null) => string,
  width = 96,
): TableColumn<T> {
  return { id, label, tip, width, align: "right", sortValue: value, text: (row) => format(value(row)) };
}

/** The efficiency columns of a table whose rows carry an `Efficiency` (the same ids as the CSV's). */
export function efficiencyColumns<T>(of: (row: T) => Efficiency, why?: (row: T) => string | null): TableColumn<T>[] {
  const tipOf = why ?? ((row: T) => of(row).perfReason || of(row).rooflineReason || null);
  return [
    { ...figureColumn("gflops", "GFLOP", EFFICIENCY_DEFINITIONS.gflops, (row: T) => of(row).gflops, formatFigure), cellTip: tipOf },
    figureColumn("bytes", "Data moved", EFFICIENCY_DEFINITIONS.bytes, (row: T) => of(row).bytes, (v) => (v === null ? DASH : formatBytes(v))),
    figureColumn("tflops_per_s", "TFLOP/s", EFFICIENCY_DEFINITIONS.tflopsPerS, (row: T) => of(row).tflopsPerS, formatFigure, 84),
    figureColumn("tb_per_s", "TB/s", EFFICIENCY_DEFINITIONS.tbPerS, (row: T) => of(row).tbPerS, formatFigure, 76),
    figureColumn("intensity", "FLOP/byte", EFFICIENCY_DEFINITIONS.intensity, (row: T) => of(row).intensity, formatFigure, 88),
    {
      id: "bound",
      label: "Bound",
      tip: EFFICIENCY_DEFINITIONS.bound,
      width: 84,
      align: "center",
      sortValue: (row) => of(row).bound,
      text: (row) => of(row).bound ?? DASH,
      cellTip: tipOf,
    },
    {
      ...figureColumn("roofline_share", "% of roofline", EFFICIENCY_DEFINITIONS.rooflineShare, (row: T) => of(row).rooflineShare,
        (v) => (v === null ? DASH : formatPercent(v)), 104),
      cellTip: tipOf,
    },
  ];
}
