// Columns of the Compare page's operator and kernel tables: each number for the baseline and
// the experiment side by side, then the change per step and the ratio. A row that only one
// side has is marked in the "In" column and its other side reads "—".
import type { CompareGrouping, CompareKernelRow, CompareOperatorRow, RowSide } from "../../api/compare";
import type { KernelRow } from "../../api/kernels";
import type { OperatorRow } from "../../api/operators";
import type { TableColumn } from "../../components/virtual_table";
import { formatCount } from "../../lib/format";
import { formatMicrosNumber, formatTime } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { formatRatio, formatSignedMicros, timeDirection } from "./model";

export const SIDE_TEXT: Readonly<Record<RowSide, string>> = {
  both: "both",
  base: "baseline only",
  exp: "experiment only",
};

export const COMPARE_DEF = {
  side: "Which spans have this row. A row that only one span has counts as zero on the other side.",
  impact:
    "Change of the row's time per step: experiment minus baseline. Time per step is the span's total divided by its " +
    "number of steps (device total time when that span's operators launched GPU work, else host total time; for " +
    "kernels, their total time). Negative means the experiment spends less. Sorting uses its size, largest first.",
  ratio: "Experiment time per step / baseline time per step (below 1: the experiment is faster). — when a side lacks the row.",
  impactPerSample:
    "Change of the row's time per sample: its time per step divided by that span's batch size, experiment minus " +
    "baseline. With different batch sizes this is the fair comparison of work per sample. Sorting uses its size.",
  deltaCalls: "Calls in the experiment minus calls in the baseline (span totals).",
  deltaMean: "Mean kernel duration in the experiment minus in the baseline.",
} as const;

/** The "better"/"worse" look of a change of time (less is better). */
function directionClass(base: number | null, exp: number | null): string | null {
  const direction = timeDirection(base, exp);
  return direction === "same" ? null : `ps-cmp-${direction}`;
}

function sideColumn<T extends { side: RowSide }>(): TableColumn<T> {
  return {
    id: "side",
    label: "In",
    tip: COMPARE_DEF.side,
    width: 124,
    firstDirection: "asc",
    sortValue: (row) => row.side,
    text: (row) => SIDE_TEXT[row.side],
    cellClass: (row) => (row.side === "both" ? "ps-muted" : `ps-cmp-only ps-cmp-only-${row.side}`),
  };
}

/** One number of each side: "Host total" with "µs · base" / "µs · exp" under it (the header tooltip says which span). */
function pairedColumns<T, S>(
  id: string,
  label: string,
  tipText: string,
  unit: "µs" | "",
  side: (row: T, which: "base" | "exp") => S | null,
  value: (sideRow: S) => number,
  width = 96,
): TableColumn<T>[] {
  return (["base", "exp"] as const).map((which) => ({
    id: `${id}_${which}`,
    label,
    unit: `${unit === "" ? "" : `${unit} · `}${which}`,
    tip: `${tipText}\n(${which === "base" ? "Baseline" : "Experiment"} span.)`,
    width,
    align: "right" as const,
    sortValue: (row: T) => {
      const sideRow = side(row, which);
      return sideRow === null ? null : value(sideRow);
    },
    text: (row: T) => {
      const sideRow = side(row, which);
      if (sideRow === null) return "—";
      return unit === "µs" ? formatMicrosNumber(value(sideRow)) : formatCount(value(sideRow));
    },
  }));
}

interface ImpactRow {
  readonly impact: number;
  readonly ratio: number | null;
  readonly per_step: { readonly base: number | null; readonly exp: number | null };
  /** Only with both batch sizes known. */
  readonly per_sample?: { readonly base: number | null; readonly exp: number | null; readonly impact: number };
}

function perSampleColumn<T extends ImpactRow>(): TableColumn<T> {
  return {
    id: "impact_per_sample",
    label: "Δ per sample",
    unit: "µs",
    tip: COMPARE_DEF.impactPerSample,
    width: 112,
    align: "right",
    sortValue: (row) => (row.per_sample === undefined ? null : Math.abs(row.per_sample.impact)),
    text: (row) => (row.per_sample === undefined ? "—" : formatSignedMicros(row.per_sample.impact)),
    cellClass: (row) => (row.per_sample === undefined ? null : directionClass(row.per_sample.base, row.per_sample.exp)),
    cellTip: (row) =>
      row.per_sample === undefined
        ? null
        : [perSampleText("Baseline", row.per_sample.base), perSampleText("Experiment", row.per_sample.exp)].join("\n"),
  };
}

function perSampleText(label: string, value: number | null): string {
  return `${label}: ${value === null ? "—" : `${formatTime(value)} per sample`}`;
}

function impactColumns<T extends ImpactRow>(explain: (row: T) => string, perSample: boolean): TableColumn<T>[] {
  const columns: TableColumn<T>[] = [
    {
      id: "impact",
      label: "Δ per step",
      unit: "µs",
      tip: COMPARE_DEF.impact,
      width: 104,
      align: "right",
      sortValue: (row) => Math.abs(row.impact),
      text: (row) => formatSignedMicros(row.impact),
      cellClass: (row) => directionClass(row.per_step.base, row.per_step.exp),
      cellTip: explain,
    },
    {
      id: "ratio",
      label: "Ratio",
      unit: "exp / base",
      tip: COMPARE_DEF.ratio,
      width: 84,
      align: "right",
      sortValue: (row) => row.ratio,
      text: (row) => formatRatio(row.ratio),
      cellClass: (row) => directionClass(row.per_step.base, row.per_step.exp),
    },
  ];
  if (perSample) columns.splice(1, 0, perSampleColumn<T>());
  return columns;
}

function perStepText(label: string, value: number | null): string {
  return `${label}: ${value === null ? "—" : `${formatTime(value)} per step`}`;
}

function nameColumn<T extends { name: string }>(label: string): TableColumn<T> {
  return {
    id: "name",
    label,
    width: 240,
    grow: 3,
    firstDirection: "asc",
    sortValue: (row) => row.name,
    text: (row) => row.name,
    cellTip: (row) => row.name,
  };
}

export function compareOperatorKey(row: CompareOperatorRow): string {
  return `${row.name}\u0000${row.input_shape ?? ""}`;
}

export function compareOperatorColumns(groupBy: CompareGrouping, hasDevice: boolean, perSample = false): TableColumn<CompareOperatorRow>[] {
  const side = (row: CompareOperatorRow, which: "base" | "exp"): OperatorRow | null => row[which];
  const columns: TableColumn<CompareOperatorRow>[] = [nameColumn("Operator")];
  if (groupBy === "input_shape") {
    columns.push({
      id: "input_shape",
      label: "Input shapes",
      tip: DEF.inputShape,
      width: 160,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => row.input_shape ?? "",
      text: (row) => row.input_shape ?? "",
      cellTip: (row) => row.input_shape ?? null,
    });
  }
  columns.push(sideColumn(), ...impactColumns<CompareOperatorRow>((row) => {
    const lines = [perStepText("Baseline", row.per_step.base), perStepText("Experiment", row.per_step.exp)];
    if (hasDevice) lines.push(`Δ device total (span): ${formatSignedMicros(row.delta.device_total)} µs`);
    lines.push(`Δ host total (span): ${formatSignedMicros(row.delta.host_total)} µs`);
    return lines.join("\n");
  }, perSample));
  columns.push(...pairedColumns("calls", "Calls", DEF.calls, "", side, (r) => r.calls, 84));
  if (hasDevice) {
    columns.push(
      ...pairedColumns("device_self", "Device self", DEF.deviceSelf, "µs", side, (r) => r.device_self),
      ...pairedColumns("device_total", "Device total", DEF.deviceTotal, "µs", side, (r) => r.device_total),
    );
  }
  columns.push(
    ...pairedColumns("host_self", "Host self", DEF.hostSelf, "µs", side, (r) => r.host_self),
    ...pairedColumns("host_total", "Host total", DEF.hostTotal, "µs", side, (r) => r.host_total),
  );
  return columns;
}

export function compareKernelColumns(perSample = false): TableColumn<CompareKernelRow>[] {
  const side = (row: CompareKernelRow, which: "base" | "exp"): KernelRow | null => row[which];
  return [
    nameColumn("Kernel"),
    sideColumn(),
    ...impactColumns<CompareKernelRow>((row) =>
      [
        perStepText("Baseline", row.per_step.base),
        perStepText("Experiment", row.per_step.exp),
        `Δ total (span): ${formatSignedMicros(row.delta.total)} µs`,
      ].join("\n"),
      perSample,
    ),
    ...pairedColumns("calls", "Calls", DEF.calls, "", side, (r) => r.calls, 84),
    ...pairedColumns("total", "Total", DEF.kernelTotal, "µs", side, (r) => r.total),
    ...pairedColumns("mean", "Mean", DEF.kernelMean, "µs", side, (r) => r.mean),
    {
      id: "delta_mean",
      label: "Δ mean",
      unit: "µs",
      tip: COMPARE_DEF.deltaMean,
      width: 92,
      align: "right",
      sortValue: (row) => row.delta.mean,
      text: (row) => (row.delta.mean === null ? "—" : formatSignedMicros(row.delta.mean)),
      cellClass: (row) => (row.base !== null && row.exp !== null ? directionClass(row.base.mean, row.exp.mean) : null),
    },
  ];
}
