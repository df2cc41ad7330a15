// Roofline: how far each operator runs from what its device can do. A log–log chart of the groups of identical
// operator calls (operator × recorded shapes × precision) at their arithmetic intensity and achieved FLOP/s, sized
// by time and coloured by category, under the device's roofs (memory bandwidth × intensity, then the peak of each
// precision; the bend is the ridge point). Hovering shows a point's shapes and figures; clicking opens its first call
// in the trace. Below: the time-weighted biggest gaps to the roof (what to optimise first), copy and memset
// bandwidth per direction beside the link's peak, and the calls that have no number and why.
import uPlot from "uplot";
import { fetchRoofline, type DeviceRoofs, type RooflineData, type RooflinePoint } from "../../api/roofline";
import type { SpanRef } from "../../api/types";
import { cssColor, injectChartStyles, mountResponsiveChart } from "../../components/chart";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { emptyNote, metricLabel, sectionHead, simpleTable, spanRefOf } from "../../components/view_parts";
import { EFFICIENCY_DEFINITIONS as DEF, formatByteRate, formatFigure, formatFlopRate } from "../../lib/efficiency";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";
import type { ViewContext, ViewDefinition } from "../types";
import { copiesOverTime } from "./copies_chart";
import {
  CATEGORY_COLORS,
  ROOF_COLORS,
  chartPoints,
  decadeRange,
  pointAt,
  pointText,
  roofVertices,
  roofsToDraw,
  type ChartPoint,
} from "./model";

const CHART_HEIGHT = 420;
const STYLE_ID = "profscope-roofline-styles";
const STYLES = `
.ps-roofline-chart { position: relative; }
.ps-roofline-tip { position: absolute; pointer-events: none; white-space: pre; font-size: 12px; line-height: 1.35;
  background: var(--ps-bg, #fff); color: var(--ps-fg, #202124); border: 1px solid var(--ps-border, #ccc);
  border-radius: 4px; padding: 6px 8px; box-shadow: 0 2px 6px rgba(0,0,0,.15); max-width: 520px; overflow: hidden;
  text-overflow: ellipsis; z-index: 5; }
.ps-roofline-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; margin: 6px 0 0; }
.ps-roofline-legend span { display: inline-flex; align-items: center; gap: 5px; }
.ps-roofline-swatch { width: 10px; height: 10px; border-radius: 50%; display: inline-block; }
.ps-roofline-line { width: 16px; height: 0; border-top: 2px solid; display: inline-block; }
.ps-roofline-device { margin: 0 0 4px; }
.ps-roofline-open { font: inherit; font-size: 12px; padding: 1px 6px; cursor: pointer; white-space: nowrap; }
`;

function injectStyles(doc: Document): void {
  if (doc.getElementById(STYLE_ID) !== null) return;
  const style = doc.createElement("style");
  style.id = STYLE_ID;
  style.textContent = STYLES;
  doc.head.appendChild(style);
}

const FORMAT = { time: formatTime, rate: formatFlopRate, figure: formatFigure, percent: (f: number) => formatPercent(f) };

/** The chart of one device: its points under its roofs. */
function deviceChart(
  device: DeviceRoofs,
  data: RooflineData,
  onOpen: (point: RooflinePoint) => void,
  signal: AbortSignal,
): HTMLElement {
  const points = chartPoints(data.points).filter((point) => data.points[point.index]!.device === device.device);
  const roofs = roofsToDraw(device, data.points);
  const ridges = roofs.map((roof) => roof.ridge ?? Number.NaN);
  const [xMin, xMax] = decadeRange([...points.map((p) => p.x), ...ridges], [0.1, 1000]);
  const peaks = roofs.map((roof) => roof.peak);
  const lowest = roofs.flatMap((roof) => roofVertices(roof, device.bandwidth, xMin, xMax).map(([, y]) => y));
  const [yMin, yMax] = decadeRange([...points.map((p) => p.y), ...peaks, ...lowest], [1e9, 1e15]);
  const vertices = roofs.map((roof) => roofVertices(roof, device.bandwidth, xMin, xMax));
  const xs = [...new Set(vertices.flatMap((list) => list.map(([x]) => x)).concat([xMin, xMax]))].sort((a, b) => a - b);
  const series = vertices.map((list) => xs.map((x) => list.find(([vx]) => vx === x)?.[1] ?? null));

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
  root.dataset["points"] = String(points.length);
  root.dataset["roofs"] = String(roofs.length);
  root.dataset["device"] = String(device.device);
  const font = "11px system-ui, sans-serif";
  const axisStroke = (): string => cssColor("--ps-fg-muted", "#616161");
  const gridStroke = (): string => cssColor("--ps-border", "#e0e0e0");

  function drawPoints(u: uPlot): void {
    const ctx = u.ctx;
    const ratio = window.devicePixelRatio || 1;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    // Largest first, so small points stay visible on top.
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

  const options: uPlot.Options = {
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
      ...roofs.map((roof) => ({
        label: roof.label,
        stroke: ROOF_COLORS[roof.precision] ?? "#555",
        width: 2,
        ...(roof.unit === "vector" ? { dash: [6, 4] } : {}),
        spanGaps: true,
        points: { show: false },
      })),
    ],
    hooks: { draw: [drawPoints] },
  };

  const position = (u: uPlot) => (point: ChartPoint): [number, number] => [u.valToPos(point.x, "x"), u.valToPos(point.y, "y")];
  const chartOf = mountResponsiveChart(canvasHost, CHART_HEIGHT, signal, (width) => {
    const u = new uPlot({ ...options, width }, [xs, ...series] as uPlot.AlignedData, canvasHost);
    const hovered = (event: MouseEvent): ChartPoint | null => {
      const rect = u.over.getBoundingClientRect();
      return pointAt(points, event.clientX - rect.left, event.clientY - rect.top, position(u));
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

  const categories = [...new Set(points.map((point) => data.points[point.index]!.category))];
  const legend = el(
    "div",
    { className: "ps-roofline-legend", testId: "roofline-legend" },
    ...roofs.map((roof) => {
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
    points.length === 0 ? el("p", { className: "ps-note" }, "No operator group of this device has both FLOPs and bytes to place.") : null,
    root,
    legend,
    device.source !== undefined && device.source !== "" ? el("p", { className: "ps-note" }, `Peaks: ${device.source}${device.note !== undefined && device.note !== "" ? ` (${device.note})` : ""}.`) : null,
  );
}

function gapsTable(data: RooflineData, onOpen: (point: RooflinePoint) => void): HTMLElement {
  if (data.gaps.length === 0) {
    return el("p", { className: "ps-muted", testId: "roofline-gaps" }, "No operator group with a roofline runs above its roofline time.");
  }
  return simpleTable(
    data.gaps,
    [
      { label: "Operator", cell: (row) => row.name },
      { label: "Input shapes", cell: (row) => row.input_shape ?? "" },
      { label: "Precision", cell: (row) => row.precision.toUpperCase() },
      { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
      { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      { label: "% of roofline", tip: DEF.rooflineShare, numeric: true, cell: (row) => (row.roofline_share === null ? "—" : formatPercent(row.roofline_share)) },
      { label: "Bound", tip: DEF.bound, cell: (row) => row.bound ?? "—" },
      {
        label: "Above the roof",
        tip: "Measured time minus roofline time: what the calls would save at the roof.",
        numeric: true,
        cell: (row) => formatTime(row.gap),
      },
      {
        label: "Share of device time",
        numeric: true,
        cell: (row) => (row.gap_share === null ? "—" : formatPercent(row.gap_share)),
      },
      {
        label: "",
        cell: (row) => {
          const button = el("button", { className: "ps-roofline-open", attrs: { type: "button" } }, "Trace");
          button.addEventListener("click", () => onOpen(row));
          return button;
        },
      },
    ],
    "roofline-gaps",
  );
}

function copiesTable(data: RooflineData): HTMLElement {
  if (data.copies.directions.length === 0) return el("p", { className: "ps-muted", testId: "roofline-copies" }, "The span has no copies or memsets.");
  return simpleTable(
    data.copies.directions,
    [
      { label: "Direction", cell: (row) => row.label },
      { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
      { label: "Bytes", numeric: true, cell: (row) => formatBytes(row.bytes) },
      { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      { label: "Bandwidth", tip: "Bytes of the calls that recorded their size over their time.", numeric: true, cell: (row) => formatByteRate(row.bandwidth) },
      { label: "Median per call", numeric: true, cell: (row) => formatByteRate(row.bandwidth_median) },
      { label: "Link peak", numeric: true, cell: (row) => formatByteRate(row.peak) },
      { label: "Link", cell: (row) => row.link },
      { label: "% of peak", numeric: true, cell: (row) => (row.peak_share === null ? "—" : formatPercent(row.peak_share)) },
    ],
    "roofline-copies",
  );
}

function uncountedList(data: RooflineData): HTMLElement | null {
  if (data.uncounted.length === 0) return null;
  return el(
    "section",
    { className: "ps-panel", testId: "roofline-uncounted" },
    el("h3", {}, "Calls without a number"),
    simpleTable(
      data.uncounted,
      [
        { label: "Why", cell: (row) => row.reason },
        { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
        { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      ],
      "roofline-uncounted-table",
    ),
  );
}

function mountRoofline(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectChartStyles(document);
  injectStyles(document);
  const ref: SpanRef | null = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "roofline-page" });
  host.appendChild(page);
  if (ref === null) return;
  const body = el("div", {});
  page.append(
    el("h2", {}, "Roofline"),
    el(
      "p",
      { className: "ps-note" },
      metricLabel("Arithmetic intensity", DEF.intensity),
      " against achieved FLOP/s, per group of identical operator calls (operator, shapes, precision), under the roofs of the device. ",
      metricLabel("FLOPs", DEF.gflops),
      " and bytes come from the recorded shapes (record_shapes=True).",
    ),
    body,
  );
  const loader = createHostLoader(ctx.signal);

  function open(point: RooflinePoint): void {
    ctx.navigate("trace", {
      start: String(point.first_start),
      end: String(point.first_start + point.first_dur),
      select: String(point.first_event_id),
    });
  }

  function render(data: RooflineData, signal: AbortSignal): void {
    if (data.points.length === 0 && data.uncounted.length === 0) {
      replaceChildren(
        body,
        emptyNote(
          "roofline-empty",
          "No operator with FLOPs",
          "No operator call of this span has a formula and recorded shapes. Profile with record_shapes=True to give " +
            "products, convolutions, attention and elementwise operators their FLOPs and bytes.",
        ),
        copiesSection(data, signal),
      );
      return;
    }
    const devices: readonly DeviceRoofs[] = data.devices.length > 0 ? data.devices : [{ device: -1, name: null, reason: "", bandwidth: null, roofs: [] }];
    replaceChildren(
      body,
      data.peaks_error !== "" ? el("p", { className: "ps-note", testId: "roofline-peaks-error" }, `The device peaks file was not used: ${data.peaks_error}`) : null,
      ...devices.map((device) => deviceChart(device, data, open, signal)),
      el(
        "section",
        { className: "ps-panel" },
        sectionHead(
          "Biggest gaps to the roof",
          csvDownloadLink({
            api: ctx.api,
            route: "roofline",
            params: () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, table: "gaps" }),
            state: () => ({ sort: null, filter: "" }),
            testId: "roofline-csv",
            what: "the gaps to the roof",
          }),
        ),
        el("p", { className: "ps-note" }, "Groups with the most time above their roofline time: what to optimise first."),
        gapsTable(data, open),
      ),
      copiesSection(data, signal),
      uncountedList(data),
    );
  }

  function copiesSection(data: RooflineData, signal: AbortSignal): HTMLElement {
    return el("section", { className: "ps-panel" }, el("h3", {}, "Copies and memsets"), copiesTable(data), copiesOverTime(data.copies, signal));
  }

  void loader.load({
    host: body,
    fetch: (signal) => fetchRoofline(ctx.api, ref, signal),
    what: "the roofline",
    testIdPrefix: "roofline",
    errorTitle: "The roofline could not be computed",
    render,
  });
}

export const rooflineView: ViewDefinition = {
  id: "roofline",
  label: "Roofline",
  scope: "span",
  mount: mountRoofline,
};
