// Analyses page, kernel launches: per runtime call that launched device work, its CPU time, how long the work
// waited to start (launch delay) and how long it ran; launches whose work ran shorter than the call took
// (launch-bound work); histograms; the runtime calls by name, the short kernels and the longest calls and delays.
import {
  ANALYSIS_ROUTES,
  type Launch,
  type LaunchesData,
  type LaunchGroup,
  type LaunchStats,
} from "../../api/analyses";
import { createBarList } from "../../components/bars";
import { el } from "../../components/dom";
import { keyValueList } from "../../components/view_parts";
import type { TableColumn } from "../../components/virtual_table";
import { binLabels, trimmedCounts } from "./model";
import { formatCount, formatPercent } from "../../lib/format";
import { orDash, formatTime, shortKernelName } from "../../lib/metric_format";
import {
  analysisSection,
  microsColumn,
  sectionTable,
  showInTrace,
  SHOW_IN_TRACE_HINT,
  type SectionContext,
} from "./section_frame";

export const LAUNCH_DEFINITIONS = {
  cpu: "CPU duration: how long the runtime call (cudaLaunchKernel, cudaMemcpyAsync, cudaGraphLaunch, …) took on the host.",
  delay:
    "Launch delay: from the end of the runtime call to the start of its first device work (0 when the work started before " +
    "the call returned). Long delays mean a deep queue: the device is behind the host.",
  device: "Device duration: the durations of the work the call launched (all kernels of a CUDA graph together).",
  short: "Short: the launched work ran for less time than the runtime call took: a stream fed by such launches cannot stay busy.",
} as const;

const HOW =
  "Per launch (a runtime call and the device work it launched, paired by correlation id), for the launches whose first " +
  `work starts in the Overview's steps. ${LAUNCH_DEFINITIONS.cpu} ${LAUNCH_DEFINITIONS.delay} ${LAUNCH_DEFINITIONS.device} ` +
  `${LAUNCH_DEFINITIONS.short} As HTA's kernel launch statistics, with every runtime call that launched work counted, and a ` +
  "cudaGraphLaunch counted once with all its kernels (HTA pairs the call with each kernel).";

function histogram(title: string, tipText: string, counts: readonly number[], edges: readonly number[], color: string, testId: string): HTMLElement {
  const labels = binLabels(edges);
  return createBarList(
    trimmedCounts(counts).map((count, i) => ({ label: labels[i] ?? "", value: count, valueText: formatCount(count) })),
    { title, titleTip: tipText, testId, color, emptyText: "No launches." },
  );
}

function statsText(stats: LaunchStats): string {
  return `median ${orDash(stats.median, formatTime)} · p95 ${orDash(stats.p95, formatTime)} · max ${orDash(stats.max, formatTime)}`;
}

function groupColumns(nameLabel: string, kernelNames: boolean): TableColumn<LaunchGroup>[] {
  return [
    {
      id: "name", label: nameLabel, width: 180, grow: 3, firstDirection: "asc",
      sortValue: (r) => (kernelNames ? shortKernelName(r.name) : r.name),
      text: (r) => (kernelNames ? shortKernelName(r.name) : r.name), cellTip: (r) => r.name,
    },
    { id: "calls", label: "Launches", width: 80, align: "right", sortValue: (r) => r.calls, text: (r) => formatCount(r.calls) },
    { id: "short", label: "Short", tip: LAUNCH_DEFINITIONS.short, width: 70, align: "right", sortValue: (r) => r.short, text: (r) => formatCount(r.short) },
    microsColumn("cpu_total", "CPU total", LAUNCH_DEFINITIONS.cpu, (r) => r.cpu_total),
    microsColumn("cpu_mean", "CPU mean", LAUNCH_DEFINITIONS.cpu, (r) => r.cpu_mean),
    microsColumn("delay_mean", "Delay mean", LAUNCH_DEFINITIONS.delay, (r) => r.delay_mean),
    microsColumn("delay_max", "Delay max", LAUNCH_DEFINITIONS.delay, (r) => r.delay_max),
    microsColumn("device_total", "Device total", LAUNCH_DEFINITIONS.device, (r) => r.device_total),
    microsColumn("device_mean", "Device mean", LAUNCH_DEFINITIONS.device, (r) => r.device_mean),
  ];
}

function launchColumns(): TableColumn<Launch>[] {
  return [
    { id: "name", label: "Runtime call", width: 140, firstDirection: "asc", sortValue: (r) => r.name, text: (r) => r.name },
    { id: "kernel", label: "First device work", width: 200, grow: 3, firstDirection: "asc", sortValue: (r) => shortKernelName(r.kernel),
      text: (r) => shortKernelName(r.kernel), cellTip: (r) => r.kernel },
    microsColumn("cpu", "CPU", LAUNCH_DEFINITIONS.cpu, (r) => r.cpu),
    microsColumn("delay", "Delay", LAUNCH_DEFINITIONS.delay, (r) => r.delay),
    microsColumn("device", "Device", LAUNCH_DEFINITIONS.device, (r) => r.device),
    { id: "activities", label: "Activities", width: 80, align: "right", sortValue: (r) => r.activities, text: (r) => formatCount(r.activities) },
  ];
}

function render(data: LaunchesData, ctx: SectionContext, signal: AbortSignal): HTMLElement[] {
  const summary = keyValueList([
    { label: "Launches", value: `${formatCount(data.launches)} (${formatCount(data.device_activities)} device activities)`, testId: "analysis-launches-count" },
    { label: "CUDA graph launches", tip: "Launches of more than one device activity (cudaGraphLaunch): each counted once.", value: formatCount(data.graph_launches) },
    { label: "Short launches", tip: LAUNCH_DEFINITIONS.short, value: `${formatCount(data.short)} (${formatPercent(data.short_share)})`, testId: "analysis-launches-short" },
    { label: "CPU duration", tip: LAUNCH_DEFINITIONS.cpu, value: statsText(data.cpu) },
    { label: "Launch delay", tip: LAUNCH_DEFINITIONS.delay, value: statsText(data.delay) },
    { label: "Device duration", tip: LAUNCH_DEFINITIONS.device, value: statsText(data.device) },
    { label: "Slow runtime calls", tip: `Runtime calls over ${formatTime(data.runtime_cutoff_us)} (HTA's cutoff).`, value: formatCount(data.runtime_outliers) },
    { label: "Long launch delays", tip: `Launch delays over ${formatTime(data.launch_delay_cutoff_us)} (HTA's cutoff).`, value: formatCount(data.delay_outliers) },
  ]);
  const edges = data.histogram_edges_us;
  const histograms = el(
    "div",
    { className: "ps-row" },
    histogram("CPU duration of launches", LAUNCH_DEFINITIONS.cpu, data.histograms.cpu, edges, "#4e79a7", "analysis-launches-hist-cpu"),
    histogram("Launch delay", LAUNCH_DEFINITIONS.delay, data.histograms.delay, edges, "#f28e2b", "analysis-launches-hist-delay"),
    histogram("Device duration of launches", LAUNCH_DEFINITIONS.device, data.histograms.device, edges, "#59a14f", "analysis-launches-hist-device"),
  );
  const common = { route: ANALYSIS_ROUTES.launches, signal };
  const open = (r: Launch): void => showInTrace(ctx, r.start, r.start + r.cpu + r.delay + r.device, r.id);
  return [
    summary,
    histograms,
    sectionTable<LaunchGroup>(ctx, {
      title: "Runtime calls", tip: HOW, columns: groupColumns("Runtime call", false), rows: data.by_call, rowKey: (r) => r.name,
      filterText: (r) => r.name, sort: { column: "cpu_total", direction: "desc" }, route: common.route, table: "calls",
      testId: "analysis-launches-calls",
    }, signal),
    sectionTable<LaunchGroup>(ctx, {
      title: "Short kernels", tip: `${LAUNCH_DEFINITIONS.short} By the name of the launch's first device work.`,
      columns: groupColumns("Kernel", true), rows: data.short_kernels, rowKey: (r) => r.name, filterText: (r) => r.name,
      sort: { column: "calls", direction: "desc" }, route: common.route, table: "short", testId: "analysis-launches-short-kernels",
    }, signal),
    sectionTable<Launch>(ctx, {
      title: "Longest runtime calls", tip: `${LAUNCH_DEFINITIONS.cpu} ${SHOW_IN_TRACE_HINT}`, columns: launchColumns(),
      rows: data.longest_calls, rowKey: (r) => String(r.id), filterText: (r) => `${r.name} ${r.kernel}`,
      sort: { column: "cpu", direction: "desc" }, route: common.route, table: "longest_calls",
      testId: "analysis-launches-longest-calls", onActivate: open,
    }, signal),
    sectionTable<Launch>(ctx, {
      title: "Longest launch delays", tip: `${LAUNCH_DEFINITIONS.delay} ${SHOW_IN_TRACE_HINT}`, columns: launchColumns(),
      rows: data.longest_delays, rowKey: (r) => String(r.id), filterText: (r) => `${r.name} ${r.kernel}`,
      sort: { column: "delay", direction: "desc" }, route: common.route, table: "longest_delays",
      testId: "analysis-launches-longest-delays", onActivate: open,
    }, signal),
  ];
}

export const launchesSection = analysisSection({
  id: "launches",
  title: "Kernel launches",
  how: HOW,
  route: ANALYSIS_ROUTES.launches,
  what: "kernel launches",
  render,
});
