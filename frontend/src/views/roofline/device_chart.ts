// The Roofline page's chart of one device: its title and notes, the groups of calls as circles (sized by time,
// coloured by category) under the device's roofs on log–log axes, a tooltip with the point's shapes and figures, a
// click that opens its first call in the trace, the legend of roofs and categories, and where the peaks come from.
import uPlot from "uplot";
import type { DeviceRoofs, RooflineData, RooflinePoint } from "../../api/roofline";
import { cssColor, mountResponsiveChart } from "../../components/chart";
import { el } from "../../components/dom";
import { formatByteRate, formatFigure, formatFlopRate } from "../../lib/efficiency";
import { formatPercent } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";
import { CATEGORY_COLORS, ROOF_COLORS, devicePlot, pointAt, pointText, type ChartPoint, type DevicePlot } from "./model";

const CHART_HEIGHT = 420;
const FORMAT = { time: formatTime, rate: formatFlopRate, figure: formatFigure, percent: (f: number) => formatPercent(f) };

/** The chart of one device: its points under its roofs. */
export function deviceChart(
  device: DeviceRoofs,
  data: RooflineData,
  onOpen: (point: RooflinePoint) => void,
  signal: AbortSignal,
): HTMLElement {
  const plot = devicePlot(device, data.points);
  const title =
    device.name !== null
      ? `${device.name} · memory ${formatByteRate(device.bandwidth)}`
      : device.device < 0
        ? "Host (CPU-only span)"
        : `Device ${device.device}`;
  return el(
    "section",
    { className: "ps-panel", testId: "roofline-device" },
    el("h3", { className: "ps-roofline-device" }, title),
    device.reason !== "" ? el("p", { className: "ps-note", testId: "roofline-no-peaks" }, `No roofs: ${device.reason}.`) : null,
    plot.points.length === 0 ? el("p", { className: "ps-note" }, "No operator group of this device has both FLOPs and bytes to place.") : null,
    chartFigure(device, plot, data, onOpen, signal),
    legend(plot, data),
    device.source !== undefined && device.source !== "" ? el("p", { className: "ps-note" }, `Peaks: ${device.source}${device.note !== undefined && device.note !== "" ? ` (${device.note})` : ""}.`) : null,
  );
}

/** The chart itself, redrawn at the page's width, with the tooltip and the click on a point. */
function chartFigure(device: DeviceRoofs, plot: DevicePlot, data: RooflineData, onOpen: (point: RooflinePoint) => void, signal: AbortSignal): HTMLElement {
  const canvasHost = el("div", { className: "ps-uplot" });
  const tipBox = el("div", { className: "ps-roofline-tip", hidden: true, testId: "roofline-tooltip" });
  const root = el(
    "figure",
    {
      className: "ps-chart ps-roofline-chart",
      testId: "roofline-chart",
      attrs: { role: "img", "aria-label": "Achieved FLOP/s against arithmetic intensity, under the device's roofs" },
    },
    canvasHost,
    tipBox,
  );
  root.dataset["points"] = String(plot.points.length);
  root.dataset["roofs"] = String(plot.roofs.length);
  root.dataset["device"] = String(device.device);
  const options = chartOptions(plot);
  const position = (u: uPlot) => (point: ChartPoint): [number, number] => [u.valToPos(point.x, "x"), u.valToPos(point.y, "y")];
  const chartOf = mountResponsiveChart(canvasHost, CHART_HEIGHT, signal, (width) => {
    const u = new uPlot({ ...options, width }, [plot.xs, ...plot.series] as uPlot.AlignedData, canvasHost);
    const hovered = (event: MouseEvent): ChartPoint | null => {
      const rect = u.over.getBoundingClientRect();
      return pointAt(plot.points, event.clientX - rect.left, event.clientY - rect.top, position(u));
    };
    u.over.addEventListener("mousemove", (event) => {
      const point = hovered(event);
      if (point === null) {
        tipBox.hidden = true;
        u.over.style.cursor = "";
        return;
      }
      tipBox.textContent = `${pointText(data.points[point.index]!, FORMAT)}\nClick to open its first call in the trace.`;
      tipBox.hidden = false;
      u.over.style.cursor = "pointer";
      const [x, y] = position(u)(point);
      const left = u.over.offsetLeft + x + 14;
      tipBox.style.left = `${Math.min(left, Math.max(0, canvasHost.clientWidth - 380))}px`;
      tipBox.style.top = `${Math.max(0, u.over.offsetTop + y - 20)}px`;
    });
    u.over.addEventListener("mouseleave", () => {
      tipBox.hidden = true;
    });
    u.over.addEventListener("click", (event) => {
      const point = hovered(event);
      if (point !== null) onOpen(data.points[point.index]!);
    });
    return u;
  });
  void chartOf;
  return root;
}

/** uPlot's options: log axes over the plot's decades, one series per roof (vector roofs dashed), points drawn on top. */
function chartOptions(plot: DevicePlot): uPlot.Options {
  const [xMin, xMax] = plot.x;
  const [yMin, yMax] = plot.y;
  const font = "11px system-ui, sans-serif";
  const axisStroke = (): string => cssColor("--ps-fg-muted", "#616161");
  const gridStroke = (): string => cssColor("--ps-border", "#e0e0e0");
  return {
    width: 600,
    height: CHART_HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, x: false, y: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: { time: false, distr: 3, log: 10, range: () => [xMin, xMax] },
      y: { distr: 3, log: 10, range: () => [yMin, yMax] },
    },
    axes: [
      {
        stroke: axisStroke,
        font,
        labelFont: font,
        label: "Arithmetic intensity (FLOP/byte)",
        labelSize: 18,
        grid: { stroke: gridStroke, width: 1 },
        ticks: { stroke: gridStroke, width: 1, size: 4 },
        values: (_self, splits) => splits.map((value) => (Number.isInteger(Math.log10(value)) ? formatFigure(value) : "")),
      },
      {
        stroke: axisStroke,
        font,
        labelFont: font,
        label: "Achieved FLOP/s",
        labelSize: 18,
        size: 96,
        grid: { stroke: gridStroke, width: 1 },
        ticks: { stroke: gridStroke, width: 1, size: 4 },
        values: (_self, splits) => splits.map((value) => (Number.isInteger(Math.log10(value)) ? formatFlopRate(value) : "")),
      },
    ],
    series: [
      {},
      ...plot.roofs.map((roof) => ({
        label: roof.label,
        stroke: ROOF_COLORS[roof.precision] ?? "#555",
        width: 2,
        ...(roof.unit === "vector" ? { dash: [6, 4] } : {}),
        spanGaps: true,
        points: { show: false },
      })),
    ],
    hooks: { draw: [(u: uPlot) => drawPoints(u, plot.points)] },
  };
}

/** The points as translucent circles inside the plot, largest first so small points stay visible on top. */
function drawPoints(u: uPlot, points: readonly ChartPoint[]): void {
  const ctx = u.ctx;
  const ratio = window.devicePixelRatio || 1;
  ctx.save();
  ctx.beginPath();
  ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
  ctx.clip();
  for (const point of [...points].sort((a, b) => b.radius - a.radius)) {
    const x = u.valToPos(point.x, "x", true);
    const y = u.valToPos(point.y, "y", true);
    ctx.beginPath();
    ctx.arc(x, y, point.radius * ratio, 0, 2 * Math.PI);
    ctx.globalAlpha = 0.55;
    ctx.fillStyle = point.color;
    ctx.fill();
    ctx.globalAlpha = 1;
    ctx.lineWidth = ratio;
    ctx.strokeStyle = point.color;
    ctx.stroke();
  }
  ctx.restore();
}

/** Each roof (its peak and ridge) and each category drawn. */
function legend(plot: DevicePlot, data: RooflineData): HTMLElement {
  const categories = [...new Set(plot.points.map((point) => data.points[point.index]!.category))];
  return el(
    "div",
    { className: "ps-roofline-legend", testId: "roofline-legend" },
    ...plot.roofs.map((roof) => {
      const line = el("span", { className: "ps-roofline-line" });
      line.style.borderColor = ROOF_COLORS[roof.precision] ?? "#555";
      if (roof.unit === "vector") line.style.borderTopStyle = "dashed";
      const ridge = roof.ridge !== null ? `, ridge at ${formatFigure(roof.ridge)} FLOP/byte` : "";
      return el("span", {}, line, `${roof.label} ${formatFlopRate(roof.peak)}${ridge}`);
    }),
    ...categories.map((category) => {
      const swatch = el("span", { className: "ps-roofline-swatch" });
      swatch.style.background = CATEGORY_COLORS[category] ?? CATEGORY_COLORS["other"]!;
      const label = data.points.find((point) => point.category === category)?.category_label ?? category;
      return el("span", {}, swatch, label);
    }),
  );
}
