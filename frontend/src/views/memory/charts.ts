// The Memory view's per-device parts: the peak card and the allocated/reserved chart with the
// peak marked, the capacity line, and the brush that selects a time range.
import type { MemoryCurve, MemoryDevice, MemoryPeak } from "../../api/memory";
import { el, replaceChildren } from "../../components/dom";
import { createTimeChart, type TimeChart } from "../../components/time_chart";
import { keyValueList, metricLabel } from "../../components/view_parts";
import { MEMORY_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { formatBytes, formatCount } from "../../lib/format";
import type { TimeRange } from "../../lib/memory_model";
import { seriesMax } from "../../lib/memory_model";
import { formatAxisDuration, formatTime } from "../../lib/metric_format";
import { byteTicks, formatAxisBytes } from "../../lib/chart_ticks";

export const ALLOCATED_COLOR = "#4e79a7";
export const RESERVED_COLOR = "#f28e2b";
export const PEAK_COLOR = "#e15759";
export const CAPACITY_COLOR = "#9c755f";

export function peakCard(device: MemoryDevice, peak: MemoryPeak | null, origin: number): HTMLElement {
  const peakValue = el(
    "span",
    {},
    el("span", { className: "ps-big", testId: "memory-peak-value", attrs: { "data-device": device.id } }, peak !== null ? formatBytes(peak.allocated) : "—"),
    peak !== null ? el("span", { className: "ps-muted" }, ` at ${formatTime(peak.time - origin)}`) : null,
  );
  return el(
    "section",
    { className: "ps-card", testId: "memory-peak-card", attrs: { "data-device": device.id } },
    el("h3", {}, device.name),
    keyValueList([
      { label: "Peak allocated", tip: DEF.peak, value: peakValue },
      {
        label: "Peak reserved",
        tip: DEF.peakReserved,
        value: peak !== null && peak.reserved > 0 ? formatBytes(peak.reserved) : "not recorded",
        testId: "memory-peak-reserved",
      },
      { label: "Capacity", tip: DEF.capacity, value: device.capacity !== null ? formatBytes(device.capacity) : "unknown", testId: "memory-capacity" },
      { label: "Memory events", tip: DEF.events, value: formatCount(device.events), testId: "memory-device-events" },
    ]),
  );
}

export interface DeviceChartOptions {
  readonly device: MemoryDevice;
  readonly curve: MemoryCurve;
  readonly peak: MemoryPeak | null;
  readonly origin: number;
  readonly selection: TimeRange | null;
  readonly onBrush: (range: TimeRange) => void;
  readonly signal: AbortSignal;
}

export interface DeviceChart {
  readonly root: HTMLElement;
  setSelection(range: TimeRange | null): void;
}

function legendItem(color: string, label: string, tipText: string | null, dashed = false): HTMLElement {
  const swatch = el("span", { className: "ps-swatch" });
  swatch.style.background = dashed ? "transparent" : color;
  if (dashed) swatch.style.border = `2px dashed ${color}`;
  return el("li", {}, swatch, tipText !== null ? metricLabel(label, tipText) : el("span", {}, label));
}

export function deviceChart(options: DeviceChartOptions): DeviceChart {
  const { device, curve, peak, origin } = options;
  const hasReserved = seriesMax(curve.reserved) > 0;
  const hover = el("p", { className: "ps-hover-line", testId: "memory-hover", attrs: { "aria-live": "off" } });
  const series = [
    { label: "Allocated", color: ALLOCATED_COLOR, values: curve.allocated, fill: "rgba(78, 121, 167, 0.12)" },
    ...(hasReserved ? [{ label: "Reserved", color: RESERVED_COLOR, values: curve.reserved }] : []),
  ];
  const capacity = device.capacity !== null && device.capacity > 0 ? device.capacity : null;
  let selection = options.selection;
  // The curve is scaled to the data; the capacity (80 GB against a 97 MB peak) is named at the top
  // unless the person asks to scale to it.
  const build = (toCapacity: boolean): TimeChart =>
    createTimeChart({
      time: curve.time,
      origin,
      series,
      markers: peak !== null ? [{ x: peak.time - origin, y: peak.allocated, label: `peak ${formatBytes(peak.allocated)}`, color: PEAK_COLOR }] : [],
      lines: capacity !== null ? [{ y: capacity, label: `capacity ${formatBytes(capacity)}`, color: CAPACITY_COLOR, inScale: toCapacity }] : [],
      xFormat: formatAxisDuration,
      yFormat: formatAxisBytes,
      yTicks: (max) => byteTicks(max),
      xLabel: "time since the start of the span",
      yLabel: "bytes",
      ariaLabel: `Memory of ${device.name} over time` + (peak !== null ? `; peak ${formatBytes(peak.allocated)} allocated at ${formatTime(peak.time - origin)}` : ""),
      testId: "memory-chart",
      selection,
      onBrush: (range) => {
        selection = range;
        options.onBrush(range);
      },
      onHover: (index) => {
        if (index === null) {
          replaceChildren(hover);
          return;
        }
        const time = curve.time[index];
        if (time === undefined) return;
        const parts = [`at ${formatTime(time - origin)}`, `allocated ${formatBytes(curve.allocated[index] ?? Number.NaN)}`];
        if (hasReserved) parts.push(`reserved ${formatBytes(curve.reserved[index] ?? Number.NaN)}`);
        replaceChildren(hover, parts.join(" · "));
      },
      signal: options.signal,
    });
  let chart = build(false);
  const chartHost = el("div", {}, chart.root);
  const capacityToggle =
    capacity !== null
      ? el("input", { testId: "memory-capacity-scale", attrs: { type: "checkbox", "aria-label": "Scale the chart to the device's capacity" } })
      : null;
  capacityToggle?.addEventListener("change", () => {
    chart = build(capacityToggle.checked);
    chart.root.dataset["device"] = device.id;
    replaceChildren(chartHost, chart.root);
  });
  chart.root.dataset["device"] = device.id;
  const legend = el(
    "ul",
    { className: "ps-legend" },
    legendItem(ALLOCATED_COLOR, "Allocated", DEF.allocated),
    hasReserved ? legendItem(RESERVED_COLOR, "Reserved", DEF.reserved) : el("li", { className: "ps-muted" }, "Reserved: not recorded for this device"),
    peak !== null ? legendItem(PEAK_COLOR, "Peak", DEF.peak) : null,
    device.capacity !== null ? legendItem(CAPACITY_COLOR, "Capacity", DEF.capacity, true) : null,
  );
  const root = el(
    "section",
    { className: "ps-panel", testId: "memory-device-chart", attrs: { "data-device": device.id } },
    el(
      "div",
      { className: "ps-chart-head" },
      el("h3", {}, `${device.name}: memory over time`),
      el("span", { className: "ps-note" }, "Drag across the chart to select a time range for the tables below."),
      capacityToggle !== null ? el("label", { className: "ps-note ps-chart-option" }, capacityToggle, "Scale to capacity") : null,
    ),
    chartHost,
    hover,
    legend,
  );
  return {
    root,
    setSelection: (range) => {
      selection = range;
      chart.setSelection(range);
    },
  };
}
