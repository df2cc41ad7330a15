// The Kernel page's charts of the rows the filter keeps: the top-10 kernels by total time and, where kernel names
// tell Tensor Core use, the share of kernel time on Tensor Cores; without a filter, what of it lies within the steps.
import type { KernelRow, KernelsData } from "../../api/kernels";
import { createBarList, createShareBar } from "../../components/bars";
import { el } from "../../components/dom";
import { shares, topN } from "../../lib/chart_data";
import { formatCount, formatPercent } from "../../lib/format";
import { formatTime, shortKernelName } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { filteredKernelTotals, inStepsNote } from "./model";

const TOP_COUNT = 10;
const KERNEL_COLOR = "#4e79a7";
const TENSOR_CORE_COLOR = "#59a14f";
const OTHER_COLOR = "#bab0ac";

/** The charts of the rows the filter keeps, with the in-steps note when there is no filter. */
export function charts(data: KernelsData, rows: readonly KernelRow[], filter: string): HTMLElement {
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
