// The Memory page's devices: the device picker and the selected range's bar (clear, open in the trace), a peak card
// and a chart per device shown. A drag on a chart selects the range; a new device or range refreshes the tables.
import type { MemoryData } from "../../api/memory";
import { el, replaceChildren } from "../../components/dom";
import { createSignalSlot } from "../../components/loader";
import { formatRangeParams, type TimeRange } from "../../lib/memory_model";
import type { ViewContext } from "../types";
import { deviceChart, peakCard, type DeviceChart } from "./charts";
import type { MemoryChoices } from "./choices";
import { rangeText } from "./tables";

export interface DevicesSection {
  /** The device picker and the range's bar. */
  readonly controls: HTMLElement;
  readonly cards: HTMLElement;
  readonly charts: HTMLElement;
  /** Draws the cards and charts of the devices chosen. */
  renderDevices(): void;
  /** Shows the range chosen in its bar. */
  renderRange(): void;
}

/** The section for the page's first answer; times are shown from `origin` (the span's start). */
export function createDevicesSection(
  ctx: ViewContext,
  memory: MemoryData,
  origin: number,
  choices: MemoryChoices,
  refreshTables: () => void,
): DevicesSection {
  const devicePicker = el("select", { className: "ps-select", testId: "memory-device", attrs: { "aria-label": "Device" } });
  devicePicker.appendChild(new Option(memory.devices.length > 1 ? "All devices" : memory.devices[0]?.name ?? "", ""));
  if (memory.devices.length > 1) for (const candidate of memory.devices) devicePicker.appendChild(new Option(candidate.name, candidate.id));
  devicePicker.value = choices.device;
  devicePicker.disabled = memory.devices.length < 2;
  const rangeLabel = el("span", { className: "ps-range-text", testId: "memory-range" });
  const clearButton = el("button", { className: "ps-button", testId: "memory-clear-range", attrs: { type: "button" } }, "Clear selection");
  const traceButton = el("button", { className: "ps-button", testId: "memory-open-trace", attrs: { type: "button" } }, "Open range in trace");
  const rangeBar = el("div", { className: "ps-range-bar" }, rangeLabel, clearButton, traceButton);
  const controls = el("div", { className: "ps-controls", testId: "memory-controls" }, el("label", {}, "Device", devicePicker), rangeBar);

  const cardsHost = el("div", { className: "ps-cards", testId: "memory-peaks" });
  const chartsHost = el("div", { className: "ps-page" });
  let charts: DeviceChart[] = [];
  const chartSignals = createSignalSlot(ctx.signal);

  function renderDevices(): void {
    const chartSignal = chartSignals.next();
    const shown = memory.devices.filter((candidate) => choices.device === "" || candidate.id === choices.device);
    replaceChildren(cardsHost, ...shown.map((candidate) => peakCard(candidate, memory.peaks.get(candidate.id) ?? null, origin)));
    charts = shown.flatMap((candidate) => {
      const curve = memory.curves.get(candidate.id);
      if (curve === undefined || curve.time.length === 0) return [];
      return [
        deviceChart({
          device: candidate,
          curve,
          peak: memory.peaks.get(candidate.id) ?? null,
          origin,
          selection: choices.range,
          onBrush: (next) => setRange(next),
          signal: chartSignal,
        }),
      ];
    });
    replaceChildren(chartsHost, ...charts.map((chart) => chart.root));
  }

  function renderRange(): void {
    const range = choices.range;
    rangeLabel.textContent = rangeText(range, origin);
    rangeBar.dataset["selected"] = String(range !== null);
    clearButton.hidden = range === null;
    traceButton.hidden = range === null;
  }

  function setRange(next: TimeRange | null): void {
    choices.range = next;
    ctx.setParams(formatRangeParams(next));
    for (const chart of charts) chart.setSelection(next);
    renderRange();
    refreshTables();
  }

  devicePicker.addEventListener("change", () => {
    choices.device = devicePicker.value;
    ctx.setParams({ device: choices.device === "" ? null : choices.device });
    renderDevices();
    refreshTables();
  });
  clearButton.addEventListener("click", () => setRange(null));
  traceButton.addEventListener("click", () => {
    const range = choices.range;
    if (range !== null) ctx.navigate("trace", { start: String(range.start), end: String(range.end), select: null });
  });

  return { controls, cards: cardsHost, charts: chartsHost, renderDevices, renderRange };
}
