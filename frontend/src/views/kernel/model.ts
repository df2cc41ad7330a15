// The Kernel page, the pure part: kernel time and its Tensor Core share over the rows a filter keeps, and the note
// saying how much of the kernel time lies within the steps. No DOM.
import type { KernelRow, KernelsData } from "../../api/kernels";
import { formatTime } from "../../lib/metric_format";

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
