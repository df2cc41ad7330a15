// The columns of the Compare page's run table: which span a row is and whether it is picked, its figures (steps,
// step time, each breakdown category any span spends time in, GPU utilization, MFU, peak memory per device type,
// batch size, throughput), what it ran on, and its tags.
import type { RunTableRow } from "../../api/compare";
import { BREAKDOWN_CATEGORIES, type BreakdownCategory } from "../../api/overview";
import type { SpanRef } from "../../api/types";
import type { TableColumn } from "../../components/virtual_table";
import { EFFICIENCY_DEFINITIONS } from "../../lib/efficiency";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import { CATEGORY_INFO, METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { pickRole } from "./model";

export const RUN_TABLE_DEF = {
  pick: "Click rows to pick the baseline (first) and the experiment (second); click a picked row again to unpick it.",
  span: "The span's position among its worker's spans, in time order; the tooltip has its name.",
  status: "ready: loaded; loading: still being parsed (no numbers yet); error: the trace could not be loaded.",
  gpuUtilization: "GPU utilization: mean over the span's GPUs of the time at least one kernel runs / the steps' time.",
  peakMemory: "Peak allocated memory: the highest total allocated bytes recorded by the allocator on any device of this type ([memory] events, profile_memory=True).",
  tags: "User tags from the writer's span manifest.",
} as const;

function statusText(row: RunTableRow): string {
  if (row.status === "loading") return row.progress !== undefined ? `loading ${formatPercent(row.progress, 0)}` : "loading";
  return row.status;
}

/** A span's tags as "key=value, …" (its cell and what the filter searches). */
export function tagsText(row: RunTableRow): string {
  return row.tags === null ? "" : Object.entries(row.tags).map(([key, value]) => `${key}=${value}`).join(", ");
}

/** Categories worth a column: those any loaded span spends time in. */
export function tableCategories(rows: readonly RunTableRow[]): BreakdownCategory[] {
  return BREAKDOWN_CATEGORIES.filter((category) => rows.some((row) => (row.breakdown?.[category] ?? 0) > 0));
}

/** Device types with a peak in any row ("GPU" first). */
export function peakMemoryTypes(rows: readonly RunTableRow[]): string[] {
  const types = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row.peak_memory ?? {})) types.add(key);
  return [...types].sort((a, b) => (a === "GPU" ? -1 : b === "GPU" ? 1 : a.localeCompare(b)));
}

/** A number column: "—" where the row has no value (a span still loading, a figure the trace cannot give). */
function numberColumn(
  id: string,
  label: string,
  tipText: string,
  value: (row: RunTableRow) => number | null,
  format: (value: number) => string,
  unit?: string,
  width = 92,
): TableColumn<RunTableRow> {
  return {
    id,
    label,
    tip: tipText,
    ...(unit !== undefined ? { unit } : {}),
    width,
    align: "right",
    sortValue: (row) => value(row),
    text: (row) => {
      const v = value(row);
      return v === null || !Number.isFinite(v) ? "—" : format(v);
    },
  };
}

/**
 * The table's columns: which span a row is (with its pick), its figures (a breakdown column per category any
 * span spends time in, a peak memory column per device type), then what it ran on and its tags (when any span has).
 */
export function runTableColumns(rows: readonly RunTableRow[], picks: () => readonly SpanRef[]): TableColumn<RunTableRow>[] {
  return [...spanColumns(picks), ...figureColumns(rows), ...setupColumns(rows)];
}

function spanColumns(picks: () => readonly SpanRef[]): TableColumn<RunTableRow>[] {
  return [
    {
      id: "pick",
      label: "Pick",
      tip: RUN_TABLE_DEF.pick,
      width: 112,
      sortValue: (row) => pickRole(picks(), row),
      text: (row) => pickRole(picks(), row) ?? "",
      cellClass: (row) => {
        const role = pickRole(picks(), row);
        return role === null ? null : `ps-cmp-pick-${role}`;
      },
    },
    {
      id: "run",
      label: "Run",
      width: 160,
      grow: 2,
      firstDirection: "asc",
      sortValue: (row) => `${row.run}\u0000${row.worker}\u0000${String(row.span_index).padStart(6, "0")}`,
      text: (row) => row.run,
      cellTip: (row) => row.run,
    },
    {
      id: "worker",
      label: "Worker",
      width: 96,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => row.worker,
      text: (row) => row.worker,
      cellTip: (row) => row.worker,
    },
    {
      id: "span",
      label: "Span",
      tip: RUN_TABLE_DEF.span,
      width: 64,
      align: "right",
      sortValue: (row) => row.span_index,
      text: (row) => String(row.span_index + 1),
      cellTip: (row) => row.span,
    },
    {
      id: "status",
      label: "Status",
      tip: RUN_TABLE_DEF.status,
      width: 96,
      firstDirection: "asc",
      sortValue: (row) => row.status,
      text: statusText,
      cellClass: (row) => (row.status === "ready" ? null : `ps-cmp-status-${row.status}`),
      cellTip: (row) => row.error ?? null,
    },
  ];
}

function figureColumns(rows: readonly RunTableRow[]): TableColumn<RunTableRow>[] {
  const number = numberColumn;
  const columns: TableColumn<RunTableRow>[] = [
    number("steps", "Steps", DEF.stepCount, (row) => row.steps ?? null, formatCount, undefined, 64),
    number("mean_step_time", "Step time", DEF.meanStepTime, (row) => row.mean_step_time ?? null, formatMicrosNumber, "µs", 100),
  ];
  for (const category of tableCategories(rows)) {
    const info = CATEGORY_INFO[category];
    columns.push({
      ...number(category, info.label, info.definition, (row) => row.breakdown?.[category] ?? null, formatMicrosNumber, "µs"),
      cellTip: (row) => {
        const share = row.shares?.[category];
        return share === undefined || share === null ? null : `${info.label}: ${formatPercent(share)} of the mean step time`;
      },
    });
  }
  columns.push(number("gpu_utilization", "GPU util.", RUN_TABLE_DEF.gpuUtilization, (row) => row.gpu_utilization ?? null, (v) => formatPercent(v), undefined, 84));
  columns.push(number("mfu", "MFU", EFFICIENCY_DEFINITIONS.mfu, (row) => row.mfu ?? null, (v) => formatPercent(v), undefined, 72));
  for (const type of peakMemoryTypes(rows)) {
    columns.push(number(`peak_${type}`, `Peak ${type} mem.`, RUN_TABLE_DEF.peakMemory, (row) => row.peak_memory?.[type] ?? null, formatBytes, undefined, 104));
  }
  columns.push(number("batch_size", "Batch", DEF.batchSize, (row) => row.batch_size, formatCount, undefined, 64));
  columns.push(
    number("samples_per_second", "Samples/s", DEF.samplesPerSecond, (row) => row.samples_per_second ?? null, (v) => formatCount(Math.round(v)), undefined, 92),
  );
  return columns;
}

function setupColumns(rows: readonly RunTableRow[]): TableColumn<RunTableRow>[] {
  const columns: TableColumn<RunTableRow>[] = [
    {
      id: "framework",
      label: "Framework",
      width: 92,
      firstDirection: "asc",
      sortValue: (row) => row.framework,
      text: (row) => row.framework ?? "",
    },
    {
      id: "devices",
      label: "Devices",
      width: 140,
      grow: 1,
      firstDirection: "asc",
      sortValue: (row) => (row.devices ?? []).join(", "),
      text: (row) => (row.status !== "ready" ? "" : (row.devices ?? []).length > 0 ? (row.devices ?? []).join(", ") : "CPU only"),
      cellTip: (row) => (row.devices ?? []).join(", "),
    },
  ];
  if (rows.some((row) => row.tags !== null)) {
    columns.push({ id: "tags", label: "Tags", tip: RUN_TABLE_DEF.tags, width: 140, grow: 1, firstDirection: "asc", sortValue: tagsText, text: tagsText, cellTip: tagsText });
  }
  return columns;
}
