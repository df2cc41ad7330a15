// Analyses page, idle time: each device stream's idle time in the steps split by its cause (waiting on the
// host, on the previous kernels, other), as stacked columns and a table, and the longest gaps with a way
// into the trace viewer.
import { ANALYSIS_ROUTES, type IdleGap, type IdleStream, type IdleTimeData } from "../../api/analyses";
import { createStackedColumnChart } from "../../components/chart";
import { keyValueList } from "../../components/view_parts";
import { formatCount, formatPercent } from "../../lib/format";
import { formatAxisDuration, formatTime, shortKernelName } from "../../lib/metric_format";
import {
  analysisSection,
  microsColumn,
  sectionTable,
  showInTrace,
  SHOW_IN_TRACE_HINT,
  type SectionContext,
} from "./section_frame";
import { el } from "../../components/dom";
import { busiestStream, idleSplitText, streamHostWaitShare } from "./model";

export const IDLE_DEFINITIONS = {
  hostWait:
    "Host wait: gaps after which the next work's runtime call began only after the previous work had ended: the stream " +
    "waited for the CPU to enqueue something.",
  kernelWait:
    "Kernel wait: other gaps shorter than 30 µs (HTA's threshold): the cost of starting back-to-back kernels.",
  other: "Other: the remaining gaps, e.g. a kernel waiting on an event of another stream or on a collective.",
  noWork: "Before the stream's first work and after its last work in the steps.",
} as const;

const HOW =
  "A stream is idle between two consecutive pieces of its work (kernels, copies, memsets), inside the Overview's steps. " +
  "Each gap takes the cause of the work that ends it. " +
  `${IDLE_DEFINITIONS.hostWait} ${IDLE_DEFINITIONS.kernelWait} ${IDLE_DEFINITIONS.other} ` +
  "As HTA's idle time breakdown, measured inside the steps only and per stream of each device; the time before the " +
  "first and after the last work is shown apart, so that the parts add up to the stream's idle time. " +
  "The headline is the busiest stream's: nearly idle side streams say little about the stream that does the work.";

const HOST_WAIT_SHARE = "Host wait / the stream's idle time: how much of its idle time the stream waited for the CPU.";

const LAYERS = [
  { key: "host_wait", label: "Host wait", color: "#e15759", definition: IDLE_DEFINITIONS.hostWait },
  { key: "kernel_wait", label: "Kernel wait", color: "#f28e2b", definition: IDLE_DEFINITIONS.kernelWait },
  { key: "other", label: "Other", color: "#76b7b2", definition: IDLE_DEFINITIONS.other },
  { key: "no_work", label: "Before first / after last work", color: "#bab0ac", definition: IDLE_DEFINITIONS.noWork },
] as const;

const CATEGORY_LABELS: Readonly<Record<string, string>> = { host_wait: "Host wait", kernel_wait: "Kernel wait", other: "Other" };

function render(data: IdleTimeData, ctx: SectionContext, signal: AbortSignal): HTMLElement[] {
  return [idleSummary(data), ...idleChart(data, signal), streamsTable(data, ctx, signal), gapsTable(data, ctx, signal)];
}

/** The busiest stream's figures: the headline of the section. */
function idleSummary(data: IdleTimeData): HTMLElement {
  const busiest = busiestStream(data);
  const stepShare = (us: number): string => formatPercent(data.step_time > 0 ? us / data.step_time : Number.NaN);
  return keyValueList([
    { label: "Steps", value: formatCount(data.steps) },
    { label: "Step time", value: formatTime(data.step_time) },
    { label: "Streams", value: formatCount(data.streams.length) },
    ...(busiest === null
      ? []
      : [
          {
            label: "Busiest stream",
            tip: "The stream that runs the most work in the steps; the figures below are its own.",
            value: `${busiest.stream} · busy ${formatTime(busiest.busy)} (${stepShare(busiest.busy)} of the steps)`,
            testId: "analysis-idle-busiest",
          },
          { label: "Its idle time", value: `${formatTime(busiest.idle)} (${stepShare(busiest.idle)} of the steps)` },
          {
            label: "Waiting on the host",
            tip: `${HOST_WAIT_SHARE} ${IDLE_DEFINITIONS.hostWait}`,
            value: formatPercent(streamHostWaitShare(busiest)),
            testId: "analysis-idle-host-share",
          },
          { label: "Its idle time split", value: idleSplitText(busiest), testId: "analysis-idle-busiest-split" },
        ]),
  ]);
}

/** Each stream's idle time stacked by cause, with its legend. */
function idleChart(data: IdleTimeData, signal: AbortSignal): HTMLElement[] {
  const chart = createStackedColumnChart({
    columnLabels: data.streams.map((s) => s.stream),
    layers: LAYERS.map((layer) => ({ label: layer.label, color: layer.color, values: data.streams.map((s) => s[layer.key]) })),
    valueFormat: formatAxisDuration,
    xLabel: "Stream",
    yLabel: "Idle time",
    ariaLabel: `Idle time of ${data.streams.length} streams by cause`,
    testId: "analysis-idle-chart",
    height: 200,
    signal,
  });
  const legend = el(
    "ul",
    { className: "ps-legend" },
    ...LAYERS.map((layer) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = layer.color;
      return el("li", {}, swatch, layer.label);
    }),
  );
  return [chart, legend];
}

function streamsTable(data: IdleTimeData, ctx: SectionContext, signal: AbortSignal): HTMLElement {
  return sectionTable<IdleStream>(
    ctx,
    {
      title: "Streams",
      tip: HOW,
      columns: [
        { id: "stream", label: "Stream", width: 170, grow: 2, firstDirection: "asc", sortValue: (r) => r.stream, text: (r) => r.stream },
        microsColumn("busy", "Busy", "Time the stream runs work inside the steps.", (r) => r.busy),
        microsColumn("idle", "Idle", "The steps' time less the stream's busy time.", (r) => r.idle),
        microsColumn("host_wait", "Host wait", IDLE_DEFINITIONS.hostWait, (r) => r.host_wait),
        microsColumn("kernel_wait", "Kernel wait", IDLE_DEFINITIONS.kernelWait, (r) => r.kernel_wait),
        microsColumn("other", "Other", IDLE_DEFINITIONS.other, (r) => r.other),
        microsColumn("no_work", "Edges", IDLE_DEFINITIONS.noWork, (r) => r.no_work),
        { id: "idle_share", label: "Idle share", tip: "Idle time / the steps' time.", width: 86, align: "right",
          sortValue: (r) => r.idle_share, text: (r) => formatPercent(r.idle_share) },
        { id: "host_wait_share", label: "Host wait share", tip: HOST_WAIT_SHARE, width: 96, align: "right",
          sortValue: (r) => r.host_wait_share, text: (r) => formatPercent(streamHostWaitShare(r)) },
      ],
      rows: data.streams,
      rowKey: (r) => r.track,
      filterText: (r) => r.stream,
      sort: { column: "busy", direction: "desc" },
      route: ANALYSIS_ROUTES.idle,
      table: "streams",
      testId: "analysis-idle-streams",
    },
    signal,
  );
}

function gapsTable(data: IdleTimeData, ctx: SectionContext, signal: AbortSignal): HTMLElement {
  return sectionTable<IdleGap>(
    ctx,
    {
      title: "Longest gaps",
      tip: `The longest idle gaps of any stream, with the work on either side. ${SHOW_IN_TRACE_HINT}`,
      columns: [
        { id: "stream", label: "Stream", width: 140, firstDirection: "asc", sortValue: (r) => r.stream, text: (r) => r.stream },
        microsColumn("dur", "Gap", "Length of the gap.", (r) => r.dur),
        { id: "category", label: "Cause", width: 96, firstDirection: "asc", sortValue: (r) => r.category,
          text: (r) => CATEGORY_LABELS[r.category] ?? r.category },
        { id: "before", label: "Work before", width: 160, grow: 2, firstDirection: "asc", sortValue: (r) => shortKernelName(r.before),
          text: (r) => shortKernelName(r.before), cellTip: (r) => r.before },
        { id: "after", label: "Work after", width: 160, grow: 2, firstDirection: "asc", sortValue: (r) => shortKernelName(r.after),
          text: (r) => shortKernelName(r.after), cellTip: (r) => r.after },
      ],
      rows: data.longest_gaps,
      rowKey: (r) => `${r.stream}\u0000${r.start}`,
      filterText: (r) => `${r.stream} ${r.before} ${r.after}`,
      sort: { column: "dur", direction: "desc" },
      route: ANALYSIS_ROUTES.idle,
      table: "gaps",
      testId: "analysis-idle-gaps",
      onActivate: (r) => showInTrace(ctx, r.start, r.end, r.after_id),
    },
    signal,
  );
}

export const idleSection = analysisSection({
  id: "idle",
  title: "Idle time",
  how: HOW,
  route: ANALYSIS_ROUTES.idle,
  what: "idle time",
  render,
});
