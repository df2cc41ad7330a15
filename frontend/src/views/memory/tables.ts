// The Memory view's tables: the allocations (largest first) and the bytes per operator, with
// the operators holding the most of the peak as bars above them.
import type { AllocationRow, OperatorMemoryRow } from "../../api/memory";
import { createBarList } from "../../components/bars";
import type { TableColumn } from "../../components/virtual_table";
import { MEMORY_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { topN } from "../../lib/chart_data";
import { formatBytes, formatCount } from "../../lib/format";
import { formatAddress } from "../../lib/memory_model";
import { formatMicrosNumber, formatTime } from "../../lib/metric_format";

const PEAK_BAR_COLOR = "#e15759";
const TOP_COUNT = 10;

function bytesColumn<T>(id: string, label: string, tip: string, value: (row: T) => number): TableColumn<T> {
  return { id, label, tip, width: 96, align: "right", sortValue: value, text: (row) => formatBytes(value(row)) };
}

function countColumn<T>(id: string, label: string, tip: string, value: (row: T) => number): TableColumn<T> {
  return { id, label, tip, width: 84, align: "right", sortValue: value, text: (row) => formatCount(value(row)) };
}

/** Columns of the allocation table; times are shown from `origin` (the span's start). */
export function allocationColumns(origin: number): TableColumn<AllocationRow>[] {
  const since = (value: number | null): number | null => (value === null ? null : value - origin);
  return [
    {
      id: "addr",
      label: "Address",
      tip: DEF.address,
      width: 150,
      firstDirection: "asc",
      sortValue: (row) => row.addr,
      text: (row) => formatAddress(row.addr),
    },
    bytesColumn("bytes", "Size", DEF.size, (row) => row.bytes),
    {
      id: "operator",
      label: "Operator",
      tip: DEF.operator,
      width: 180,
      grow: 3,
      firstDirection: "asc",
      sortValue: (row) => row.operator,
      text: (row) => (row.operator === "" ? "(no operator)" : row.operator),
      cellTip: (row) => row.operator,
    },
    { id: "device", label: "Device", width: 70, firstDirection: "asc", sortValue: (row) => row.device, text: (row) => row.device },
    {
      id: "alloc_time",
      label: "Allocated at",
      unit: "µs",
      tip: DEF.allocTime,
      width: 100,
      align: "right",
      firstDirection: "asc",
      sortValue: (row) => row.allocTime,
      text: (row) => formatMicrosNumber(row.allocTime - origin),
    },
    {
      id: "free_time",
      label: "Freed at",
      unit: "µs",
      tip: DEF.freeTime,
      width: 100,
      align: "right",
      firstDirection: "asc",
      sortValue: (row) => since(row.freeTime),
      text: (row) => (row.freeTime === null ? "—" : formatMicrosNumber(row.freeTime - origin)),
    },
    {
      id: "lifetime",
      label: "Lifetime",
      unit: "µs",
      tip: DEF.lifetime,
      width: 96,
      align: "right",
      sortValue: (row) => row.lifetime,
      text: (row) => (row.lifetime === null ? "—" : formatMicrosNumber(row.lifetime)),
    },
    {
      id: "never_freed",
      label: "Never freed",
      tip: DEF.neverFreed,
      width: 104,
      align: "center",
      sortValue: (row) => row.neverFreed,
      text: (row) => (row.neverFreed === null ? "unknown" : row.neverFreed ? "never freed" : ""),
      cellClass: (row) => (row.neverFreed === true ? "ps-badge" : null),
    },
  ];
}

export function allocationKey(row: AllocationRow): string {
  return `${row.device}\u0000${row.addr}\u0000${row.allocTime}`;
}

export function operatorMemoryColumns(): TableColumn<OperatorMemoryRow>[] {
  return [
    {
      id: "name",
      label: "Operator",
      width: 200,
      grow: 4,
      firstDirection: "asc",
      sortValue: (row) => row.name,
      text: (row) => row.name,
      cellTip: (row) => row.name,
    },
    countColumn("calls", "Calls", DEF.opCalls, (row) => row.calls),
    countColumn("allocations", "Allocs", DEF.allocations, (row) => row.allocations),
    countColumn("frees", "Frees", DEF.frees, (row) => row.frees),
    bytesColumn("self_bytes", "Self net", DEF.selfBytes, (row) => row.self_bytes),
    bytesColumn("total_bytes", "Total net", DEF.totalBytes, (row) => row.total_bytes),
    bytesColumn("self_alloc_bytes", "Self alloc.", DEF.selfAllocBytes, (row) => row.self_alloc_bytes),
    bytesColumn("total_alloc_bytes", "Total alloc.", DEF.totalAllocBytes, (row) => row.total_alloc_bytes),
    bytesColumn("self_peak_bytes", "Peak self", DEF.selfPeakBytes, (row) => row.self_peak_bytes ?? Number.NaN),
    bytesColumn("total_peak_bytes", "Peak total", DEF.totalPeakBytes, (row) => row.total_peak_bytes ?? Number.NaN),
  ];
}

/**
 * The operators whose own allocations hold the most bytes at the peak. `peak` is the peak
 * allocated bytes when the tables are about one device (the title then says how much of it
 * operators account for; the rest was allocated outside any operator or before the span).
 */
export function peakHolders(rows: readonly OperatorMemoryRow[], peak: number | null, inRange: boolean, filter = ""): HTMLElement {
  const matching = filter.trim() !== "" ? ` matching “${filter.trim()}”` : "";
  // Null where nothing is paired with its free (events without an address): what is live at the peak is unknown.
  const livePeak = (row: OperatorMemoryRow): number => row.self_peak_bytes ?? 0;
  const holders = topN(
    rows.filter((row) => livePeak(row) > 0),
    livePeak,
    TOP_COUNT,
  );
  const held = rows.reduce((sum, row) => sum + livePeak(row), 0);
  return createBarList(
    holders.map((row) => ({
      label: row.name,
      value: livePeak(row),
      valueText: formatBytes(livePeak(row)),
      tip: `${row.name}\n${formatBytes(livePeak(row))} of its own allocations are live at the peak ` +
        `(${formatCount(row.allocations)} allocations in ${formatCount(row.calls)} calls)`,
    })),
    {
      title:
        `Who holds the peak: top ${TOP_COUNT} operators${matching} by their own allocations live at the peak` +
        (inRange ? ", allocated in the selected range" : "") +
        (peak !== null && peak > 0
          ? ` (${matching !== "" ? "these operators" : "operators"} hold ${formatBytes(held)} of the ${formatBytes(peak)} peak)`
          : ` (${formatBytes(held)} in all)`),
      titleTip: DEF.selfPeakBytes,
      testId: "memory-peak-operators",
      color: PEAK_BAR_COLOR,
      emptyText: matching !== "" ? "No operator matching the filter holds memory at the peak." : "No allocation in the selection is live at the peak.",
    },
  );
}

/** "12 allocations" / "the 5,000 largest allocations" when the route cut the list. */
export function allocationCountText(shown: number, total: number, limit: number): string {
  const base = total >= limit ? `the ${formatCount(total)} largest allocations` : `${formatCount(total)} allocation${total === 1 ? "" : "s"}`;
  return shown === total ? base : `${formatCount(shown)} of ${base}`;
}

/** "Whole span" or "12.3 ms – 20.1 ms (7.8 ms)" for the selection bar. */
export function rangeText(range: { start: number; end: number } | null, origin: number): string {
  if (range === null) return "Whole span";
  return `Selected ${formatTime(range.start - origin)} – ${formatTime(range.end - origin)} (${formatTime(range.end - range.start)})`;
}
