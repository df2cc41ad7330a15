// The parts of the Overview page, each built from the parsed `overview` answer.
import { overviewEfficiency, type DeviceSummary, type HostCpu, type OverviewData, type Recommendation, type UtilizationFigures } from "../../api/overview";
import { deviceCardFields, isGpu, summaryTitle, type DeviceCardField } from "../../lib/devices";
import { createStackedColumnChart } from "../../components/chart";
import { fewSamplesText } from "../../lib/host_cpu";
import { el, replaceChildren, type Child } from "../../components/dom";
import { tip } from "../../components/tooltip";
import { createTimeChart } from "../../components/time_chart";
import { keyValueList, metricLabel, simpleTable } from "../../components/view_parts";
import { createBarList } from "../../components/bars";
import { EFFICIENCY_DEFINITIONS, formatFigure } from "../../lib/efficiency";
import { stepAxisLabels, stepAxisTitle } from "../../lib/chart_data";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import {
  evidenceLabel,
  formatAxisDuration,
  formatEvidenceValue,
  formatLegendMicros,
  formatMicros,
  formatQuantity,
  formatTime,
  orDash,
} from "../../lib/metric_format";
import { CATEGORY_INFO, METRIC_DEFINITIONS as DEF } from "../../lib/metrics";

function percentOrDash(value: number | null): string {
  return orDash(value, (share) => formatPercent(share));
}

/** A device figure: its value, or "n/a" with the reason the trace cannot support it (as a tooltip). */
function deviceFigure(device: DeviceSummary, field: string, value: number | null): Child {
  const reason = device.unavailable[field];
  if (value === null && reason !== undefined) {
    return tip(el("span", { className: "ps-has-tip ps-muted", testId: `unavailable-${field}` }, "n/a"), `Not available: ${reason}.`);
  }
  return percentOrDash(value);
}

function deviceCard(device: DeviceSummary): HTMLElement {
  const gpu = isGpu(device);
  const rows: Record<DeviceCardField, Parameters<typeof keyValueList>[0][number]> = {
    name: { label: "Name", tip: DEF.deviceName, value: device.name },
    memory: { label: "Memory", tip: DEF.deviceMemory, value: orDash(device.memory, formatBytes) },
    computeCapability: { label: "Compute capability", tip: DEF.computeCapability, value: device.compute_capability ?? "—" },
    numSms: { label: "SMs", tip: DEF.numSms, value: orDash(device.num_sms, formatCount) },
    utilization: {
      label: gpu ? "GPU utilization" : "Utilization",
      tip: gpu ? DEF.utilization : DEF.deviceUtilization,
      value: percentOrDash(device.utilization),
      testId: "gpu-utilization",
    },
    smEfficiency: { label: "Est. SM efficiency", tip: DEF.smEfficiency, value: deviceFigure(device, "sm_efficiency", device.sm_efficiency) },
    achievedOccupancy: {
      label: "Est. achieved occupancy",
      tip: DEF.achievedOccupancy,
      value: deviceFigure(device, "achieved_occupancy", device.achieved_occupancy),
    },
    tensorCoreShare: {
      label: "Tensor Core share",
      tip: DEF.tensorCoreShare,
      value: deviceFigure(device, "tensor_core_share", device.tensor_core_share),
    },
    kernelTime: { label: "Kernel time", tip: DEF.kernelTime, value: orDash(device.kernel_time, formatTime) },
    communicationTime: {
      label: "Communication time",
      tip: DEF.communicationTime,
      value: orDash(device.communication_time ?? null, formatTime),
    },
  };
  return el(
    "article",
    { className: "ps-card", testId: "gpu-card", attrs: { "data-device": String(device.id) } },
    el("h3", {}, ...(device.name === device.label ? [device.name] : [`${device.label}: `, device.name])),
    keyValueList(deviceCardFields(device).map((field) => rows[field])),
  );
}

export function gpuSummarySection(data: OverviewData): HTMLElement | null {
  if (data.devices.length === 0) return null;
  return el(
    "section",
    { className: "ps-section", testId: "gpu-summary" },
    el("h2", {}, summaryTitle(data.devices)),
    el("div", { className: "ps-cards" }, ...data.devices.map(deviceCard)),
  );
}

/** The stacked column chart of the steps, with a legend that reads out the hovered step. */
export function breakdownChartSection(data: OverviewData, signal: AbortSignal, download: HTMLElement | null = null): HTMLElement {
  const legendTitle = el("p", { className: "ps-legend-title", testId: "breakdown-hover" });
  const valueCells = new Map<string, HTMLElement>();
  const legend = el(
    "ul",
    { className: "ps-legend", testId: "breakdown-legend" },
    ...data.categories.map((category) => {
      const info = CATEGORY_INFO[category];
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = info.color;
      const value = el("span", { className: "ps-legend-value" });
      valueCells.set(category, value);
      return el("li", {}, swatch, metricLabel(info.label, info.definition), value);
    }),
  );

  function showStep(index: number | null): void {
    const step = index !== null ? data.steps[index] : undefined;
    const total = step !== undefined ? step.dur : data.mean_step_time;
    // In µs, as the averages table beside the chart: the legend and the table read the same figures.
    legendTitle.textContent =
      step !== undefined ? `${step.name}: ${formatMicros(step.dur)}` : `Mean per step: ${formatMicros(data.mean_step_time)}`;
    for (const category of data.categories) {
      const value = (step !== undefined ? step.breakdown[category] : data.breakdown[category]) ?? Number.NaN;
      const cell = valueCells.get(category);
      if (cell !== undefined) cell.textContent = formatLegendMicros(value, total);
    }
  }
  showStep(null);

  const chart =
    data.steps.length > 0
      ? createStackedColumnChart({
          columnLabels: stepAxisLabels(data.steps.map((step) => step.name)),
          layers: data.categories.map((category) => ({
            label: CATEGORY_INFO[category].label,
            color: CATEGORY_INFO[category].color,
            values: data.steps.map((step) => step.breakdown[category] ?? 0),
          })),
          valueFormat: formatAxisDuration,
          xLabel: stepAxisTitle(data.steps.map((step) => step.name)),
          yLabel: "Step time",
          ariaLabel: `Step time breakdown of ${data.steps.length} steps, stacked by category`,
          testId: "breakdown-chart",
          onHover: showStep,
          signal,
        })
      : el("p", { className: "ps-muted" }, "No steps to chart.");
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "breakdown-section" },
    el("div", { className: "ps-section-head" }, el("h2", {}, metricLabel("Step time breakdown", DEF.stepTime)), download),
    chart,
    legendTitle,
    legend,
  );
}

/** Mean time per category and its share of the mean step time. */
export function averagesSection(data: OverviewData): HTMLElement {
  const mean = data.mean_step_time;
  const rows = data.categories.map((category) => {
    const info = CATEGORY_INFO[category];
    const value = data.breakdown[category] ?? Number.NaN;
    const share = mean > 0 ? value / mean : Number.NaN;
    const swatch = el("span", { className: "ps-swatch" });
    swatch.style.background = info.color;
    const bar = el("span", {});
    bar.style.width = `${Number.isFinite(share) ? Math.min(100, share * 100) : 0}%`;
    bar.style.background = info.color;
    return el(
      "tr",
      { attrs: { "data-category": category } },
      el("td", {}, swatch, metricLabel(info.label, info.definition)),
      el("td", { className: "ps-num", testId: `average-${category}` }, formatMicros(value)),
      el(
        "td",
        { className: "ps-num", testId: `share-${category}` },
        formatPercent(share),
        el("span", { className: "ps-inline-bar", attrs: { "aria-hidden": "true" } }, bar),
      ),
    );
  });
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "averages-section" },
    el("h2", {}, "Average per step"),
    el(
      "table",
      { className: "ps-table", testId: "averages-table" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", {}, "Category"),
          el("th", { className: "ps-num" }, metricLabel("Mean per step", DEF.meanStepTime)),
          el("th", { className: "ps-num" }, metricLabel("% of step time", DEF.share)),
        ),
      ),
      el("tbody", {}, ...rows),
      el(
        "tfoot",
        {},
        el(
          "tr",
          {},
          el("td", {}, metricLabel("Step time", DEF.meanStepTime)),
          el("td", { className: "ps-num", testId: "average-step-time" }, formatMicros(mean)),
          el("td", { className: "ps-num" }, formatPercent(mean > 0 ? 1 : Number.NaN)),
        ),
      ),
    ),
  );
}

export function benchmarkSection(data: OverviewData): HTMLElement | null {
  const figures = data.benchmark;
  if (figures === null) return null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "benchmark-section" },
    el("h2", {}, "Benchmark"),
    keyValueList([
      { label: "Steps", tip: DEF.benchmarkSteps, value: formatCount(figures.steps) },
      { label: "Mean step time", tip: DEF.meanStepTime, value: formatTime(figures.mean_step_time) },
      { label: "Min step time", tip: DEF.minStepTime, value: formatTime(figures.min_step_time) },
      { label: "Max step time", tip: DEF.maxStepTime, value: formatTime(figures.max_step_time) },
      { label: "Steps per second", tip: DEF.stepsPerSecond, value: formatQuantity(figures.steps_per_second ?? Number.NaN) },
      { label: "Reader cost", tip: DEF.readerCost, value: formatTime(figures.reader_cost) },
      { label: "DataLoader share", tip: DEF.dataloaderShare, value: formatPercent(figures.dataloader_share) },
      { label: "Batch size", tip: DEF.batchSize, value: orDash(figures.batch_size, formatCount) },
      { label: "Samples per second", tip: DEF.samplesPerSecond, value: orDash(figures.samples_per_second, (v) => formatQuantity(v)) },
    ]),
  );
}

function recommendationItem(recommendation: Recommendation): HTMLElement {
  const evidence = Object.entries(recommendation.evidence).map(([key, value]) =>
    el("div", {}, el("dt", {}, evidenceLabel(key)), el("dd", {}, formatEvidenceValue(key, value))),
  );
  return el(
    "li",
    { className: "ps-reco", testId: "recommendation", attrs: { "data-id": recommendation.id } },
    el("p", {}, recommendation.text),
    evidence.length > 0 ? el("dl", { className: "ps-evidence" }, ...evidence) : null,
  );
}

export function recommendationsSection(data: OverviewData): HTMLElement {
  const body =
    data.recommendations.length > 0
      ? el("ul", { className: "ps-recos" }, ...data.recommendations.map(recommendationItem))
      : el("p", { className: "ps-muted" }, "Nothing stands out in this span.");
  return el("section", { className: "ps-section ps-panel", testId: "recommendations" }, el("h2", {}, "Recommendations"), body);
}

// --- host CPU (sampled by the writer over the span) ------------------------------------------

const PROCESS_COLOR = "#4e79a7";
const SYSTEM_COLOR = "#e15759";

export const HOST_CPU_DEFINITIONS = {
  process:
    "CPU (process): CPU time of the profiled process (all its threads, not its child processes such as " +
    "DataLoader workers) / elapsed time. 100% is one CPU kept busy; the most is the number of CPUs × 100%.",
  system: "CPU (system): busy time of all the machine's CPUs / their busy and idle time (every process), 0–100%.",
  mean: "Over the span: from the counters at its start and end.",
  max: "The highest utilization of one sampling interval in the span.",
} as const;

/** "1.2 s sampled every 100 ms · 8 CPUs": what the figures cover. */
export function hostCpuCoverage(cpu: HostCpu): string {
  const parts = [`${formatTime(cpu.duration)} of the span`];
  if (cpu.interval !== null) parts.push(`sampled every ${formatTime(cpu.interval)}`);
  if (cpu.cpu_count !== null) parts.push(cpu.cpu_count === 1 ? "1 CPU" : `${formatCount(cpu.cpu_count)} CPUs`);
  return parts.join(" · ");
}

function utilizationRow(label: string, definition: string, figures: UtilizationFigures | null, id: string): HTMLElement {
  return el(
    "tr",
    { testId: `host-cpu-${id}` },
    el("td", {}, metricLabel(label, definition)),
    el("td", { className: "ps-num", testId: `host-cpu-${id}-mean` }, figures !== null ? formatPercent(figures.mean) : "—"),
    el("td", { className: "ps-num", testId: `host-cpu-${id}-max` }, figures !== null ? percentOrDash(figures.max) : "—"),
  );
}

function hostCpuChart(cpu: HostCpu, signal: AbortSignal): HTMLElement | null {
  const samples = cpu.samples;
  if (samples === null) return null;
  // Each value holds over its interval: a last point at the end closes the last one.
  const time = [...samples.time, cpu.duration];
  const closed = (values: readonly number[]): number[] => [...values, values[values.length - 1] ?? 0];
  const hover = el("p", { className: "ps-hover-line", testId: "host-cpu-hover", attrs: { "aria-live": "off" } });
  const series = [
    { label: "Process", color: PROCESS_COLOR, values: closed(samples.process), fill: "rgba(78, 121, 167, 0.12)" },
    ...(samples.system !== null ? [{ label: "System", color: SYSTEM_COLOR, values: closed(samples.system) }] : []),
  ];
  const chart = createTimeChart({
    time,
    origin: 0,
    series,
    xFormat: formatAxisDuration,
    yFormat: (value) => formatPercent(value, 0),
    xLabel: "time since the start of the span",
    yLabel: "CPU utilization",
    ariaLabel: `Host CPU utilization over ${formatTime(cpu.duration)} of the span`,
    testId: "host-cpu-chart",
    height: 180,
    // Few readings: dots, so a single one reads as one reading, not a flat line over the span.
    points: samples.time.length <= POINTS_UP_TO,
    selection: null,
    onHover: (index) => {
      // The closing point at the end reads as the last interval.
      const at = index === null ? -1 : Math.min(index, samples.time.length - 1);
      const start = samples.time[at];
      if (start === undefined) {
        replaceChildren(hover);
        return;
      }
      const parts = [`at ${formatTime(start)}`, `process ${formatPercent(samples.process[at] ?? Number.NaN)}`];
      if (samples.system !== null) parts.push(`system ${formatPercent(samples.system[at] ?? Number.NaN)}`);
      replaceChildren(hover, parts.join(" · "));
    },
    signal,
  });
  const legendItem = (color: string, label: string, definition: string): HTMLElement => {
    const swatch = el("span", { className: "ps-swatch" });
    swatch.style.background = color;
    return el("li", {}, swatch, metricLabel(label, definition));
  };
  const legend = el(
    "ul",
    { className: "ps-legend", testId: "host-cpu-legend" },
    legendItem(PROCESS_COLOR, "CPU (process)", HOST_CPU_DEFINITIONS.process),
    samples.system !== null ? legendItem(SYSTEM_COLOR, "CPU (system)", HOST_CPU_DEFINITIONS.system) : null,
  );
  return el("div", {}, chart.root, hover, legend, fewSamplesNote(cpu));
}

/** Charts with at most this many readings show each as a dot. */
const POINTS_UP_TO = 30;

function fewSamplesNote(cpu: HostCpu): HTMLElement | null {
  const text = fewSamplesText(cpu);
  return text === null ? null : el("p", { className: "ps-note", testId: "host-cpu-few-samples" }, text);
}

/** Like the CPU rows of Paddle's "Device Summary": the process's and the whole system's CPU use. */
export function hostCpuSection(data: OverviewData, signal: AbortSignal): HTMLElement | null {
  const cpu = data.host_cpu;
  if (cpu === null) return null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "host-cpu-section" },
    el("h2", {}, "Host CPU"),
    el("p", { className: "ps-note", testId: "host-cpu-coverage" }, hostCpuCoverage(cpu)),
    el(
      "table",
      { className: "ps-table", testId: "host-cpu-table" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", {}, "Device"),
          el("th", { className: "ps-num" }, metricLabel("Utilization", HOST_CPU_DEFINITIONS.mean)),
          el("th", { className: "ps-num" }, metricLabel("Highest interval", HOST_CPU_DEFINITIONS.max)),
        ),
      ),
      el(
        "tbody",
        {},
        utilizationRow("CPU (process)", HOST_CPU_DEFINITIONS.process, cpu.process, "process"),
        utilizationRow("CPU (system)", HOST_CPU_DEFINITIONS.system, cpu.system, "system"),
      ),
    ),
    hostCpuChart(cpu, signal),
  );
}

/** How far from the hardware's peak: MFU (mean and per step), the device time far from its roofline, and device
 * time per operator category (the Roofline page has the detail). */
export function efficiencySection(data: OverviewData): HTMLElement | null {
  const e = overviewEfficiency(data.efficiency);
  if (e === null) return null;
  const mfuText = e.mfu !== null ? formatPercent(e.mfu) : "n/a";
  const categories = e.categories.filter((category) => category.time > 0);
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "efficiency-section" },
    el("h2", {}, "Efficiency"),
    e.peaksError !== "" ? el("p", { className: "ps-note" }, `The device peaks file was not used: ${e.peaksError}`) : null,
    el(
      "div",
      { className: "ps-row" },
      keyValueList([
        {
          label: "MFU (mean of the steps)",
          tip: `${EFFICIENCY_DEFINITIONS.mfu} ${e.mfuCounted}`,
          value: e.mfu === null && e.mfuReason !== "" ? `${mfuText} (${e.mfuReason})` : mfuText,
          testId: "mfu",
        },
        {
          label: "Device time under half its roofline",
          tip: EFFICIENCY_DEFINITIONS.lowRoofline,
          value:
            e.lowRooflineShare === null
              ? "n/a"
              : `${formatPercent(e.lowRooflineShare)}${e.coveredShare !== null ? ` (roofline known for ${formatPercent(e.coveredShare)} of device time)` : ""}`,
          testId: "low-roofline-share",
        },
      ]),
      e.mfuSteps.length > 1
        ? simpleTable(
            e.mfuSteps,
            [
              { label: "Step", cell: (step) => step.name },
              { label: "MFU", tip: EFFICIENCY_DEFINITIONS.mfu, numeric: true, cell: (step) => (step.mfu === null ? "—" : formatPercent(step.mfu)) },
              { label: "Matrix GFLOP", numeric: true, cell: (step) => formatFigure(step.matrixGflops) },
            ],
            "mfu-steps",
          )
        : null,
    ),
    categories.length > 0
      ? createBarList(
          categories.map((category) => ({
            label: category.label,
            value: category.time,
            valueText: `${formatTime(category.time)}${category.share !== null ? ` · ${formatPercent(category.share)}` : ""}`,
          })),
          {
            title: e.timeBasis === "device" ? "Device time per operator category" : "Host self time per operator category",
            titleTip: EFFICIENCY_DEFINITIONS.categoryTime,
            testId: "category-time",
            color: "#4e79a7",
            emptyText: "No operator time recorded.",
          },
        )
      : null,
  );
}
