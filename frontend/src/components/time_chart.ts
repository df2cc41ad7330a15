// A line chart over time (uPlot, stepped lines: a memory counter holds its value until the
// next event) with marked points, horizontal reference lines, a hover read-out, and a drag to
// select a time range (the "brush"), drawn as a band until it is cleared.
import uPlot from "uplot";
import { brushToRange, type TimeRange } from "../lib/memory_model";
import { el } from "./dom";
import { cssColor, injectChartStyles, mountResponsiveChart } from "./chart";

export interface TimeSeries {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
  /** Fill under the line (a translucent colour). */
  readonly fill?: string;
}

export interface ChartMarker {
  /** In the chart's own x units (after subtracting the origin). */
  readonly x: number;
  readonly y: number;
  readonly label: string;
  readonly color: string;
}

export interface ReferenceLine {
  readonly y: number;
  readonly label: string;
  readonly color: string;
  /** False: the y axis scales to the data only; a line above it is named at the chart's top edge instead. */
  readonly inScale?: boolean;
}

export interface TimeChartOptions {
  /** x values in µs of the trace's time base; the chart shows them relative to `origin`. */
  readonly time: readonly number[];
  readonly origin: number;
  readonly series: readonly TimeSeries[];
  readonly markers?: readonly ChartMarker[];
  readonly lines?: readonly ReferenceLine[];
  /** Formats x offsets from the origin (µs) and y values. */
  readonly xFormat: (us: number) => string;
  readonly yFormat: (value: number) => string;
  /** The y ticks for a data maximum (the axis ends at the last one); default: uPlot's own. */
  readonly yTicks?: (max: number) => number[];
  /** Draw each data point as a dot (few points: a single reading is not a flat line). */
  readonly points?: boolean;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly ariaLabel: string;
  readonly testId: string;
  readonly height?: number;
  /** The selected range shown as a band (trace time base), or null. */
  readonly selection: TimeRange | null;
  /** A drag selected a range (trace time base). */
  readonly onBrush?: (range: TimeRange) => void;
  /** The point under the pointer (index into `time`), or null when it leaves. */
  readonly onHover?: (index: number | null) => void;
  readonly signal: AbortSignal;
}

export interface TimeChart {
  readonly root: HTMLElement;
  setSelection(range: TimeRange | null): void;
}

const FONT = "11px system-ui, sans-serif";

export function createTimeChart(options: TimeChartOptions): TimeChart {
  injectChartStyles(document);
  const height = options.height ?? 240;
  const origin = options.origin;
  let selection = options.selection;
  const canvasHost = el("div", { className: "ps-uplot ps-brushable" });
  const root = el(
    "figure",
    { className: "ps-chart ps-time-chart", testId: options.testId, attrs: { role: "img", "aria-label": options.ariaLabel } },
    canvasHost,
  );
  const xs = options.time.map((t) => t - origin);
  const xMax = xs.length > 0 ? Math.max(xs[xs.length - 1] ?? 0, 1) : 1;
  let yMax = 0;
  for (const series of options.series) for (const value of series.values) if (Number.isFinite(value) && value > yMax) yMax = value;
  for (const line of options.lines ?? []) if (line.inScale !== false && line.y > yMax) yMax = line.y;
  // Room above the highest point for its marker; with yTicks the axis ends at a round tick.
  const ticks = options.yTicks?.(yMax > 0 ? yMax * 1.05 : 0) ?? null;
  const yTop = ticks !== null ? (ticks[ticks.length - 1] ?? 1) : yMax > 0 ? yMax * 1.1 : 1;
  const axisStroke = (): string => cssColor("--ps-fg-muted", "#616161");
  const gridStroke = (): string => cssColor("--ps-border", "#e0e0e0");
  const stepped = uPlot.paths.stepped?.({ align: 1 });

  function drawOverlays(self: uPlot): void {
    const ctx = self.ctx;
    const dpr = window.devicePixelRatio || 1;
    const { left, top, width, height: plotHeight } = self.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, plotHeight);
    ctx.clip();
    if (selection !== null) {
      const x0 = self.valToPos(selection.start - origin, "x", true);
      const x1 = self.valToPos(selection.end - origin, "x", true);
      ctx.fillStyle = "rgba(245, 124, 0, 0.14)";
      ctx.fillRect(Math.min(x0, x1), top, Math.abs(x1 - x0), plotHeight);
      ctx.strokeStyle = "rgba(245, 124, 0, 0.8)";
      ctx.lineWidth = dpr;
      ctx.strokeRect(Math.min(x0, x1), top, Math.abs(x1 - x0), plotHeight);
    }
    ctx.font = `${11 * dpr}px system-ui, sans-serif`;
    ctx.textBaseline = "bottom";
    for (const line of options.lines ?? []) {
      if (line.y > yTop) {
        // Off the chart: say where it is, at the top edge.
        ctx.fillStyle = line.color;
        ctx.textAlign = "right";
        ctx.textBaseline = "top";
        ctx.fillText(`${line.label} ↑ above the chart`, left + width - 4 * dpr, top + 2 * dpr);
        ctx.textBaseline = "bottom";
        continue;
      }
      const y = self.valToPos(line.y, "y", true);
      ctx.strokeStyle = line.color;
      ctx.lineWidth = 1.5 * dpr;
      ctx.setLineDash([6 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + width, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = line.color;
      ctx.textAlign = "right";
      ctx.fillText(line.label, left + width - 4 * dpr, y - 2 * dpr);
    }
    for (const marker of options.markers ?? []) {
      const x = self.valToPos(marker.x, "x", true);
      const y = self.valToPos(marker.y, "y", true);
      ctx.strokeStyle = marker.color;
      ctx.lineWidth = dpr;
      ctx.setLineDash([3 * dpr, 3 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + plotHeight);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = marker.color;
      ctx.beginPath();
      ctx.arc(x, y, 4.5 * dpr, 0, 2 * Math.PI);
      ctx.fill();
      // Label beside the point, on the side with room.
      const textWidth = ctx.measureText(marker.label).width;
      const onRight = x + 8 * dpr + textWidth < left + width;
      ctx.textAlign = onRight ? "left" : "right";
      ctx.textBaseline = "middle";
      ctx.fillText(marker.label, onRight ? x + 8 * dpr : x - 8 * dpr, Math.max(top + 8 * dpr, y - 10 * dpr));
    }
    ctx.restore();
  }

  const chartOptions: uPlot.Options = {
    width: 600,
    height,
    legend: { show: false },
    cursor: {
      drag: { x: true, y: false, setScale: false },
      points: { show: false },
      y: false,
    },
    select: { show: true, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: { time: false, range: () => [0, xMax] },
      y: { range: () => [0, yTop] },
    },
    axes: [
      {
        stroke: axisStroke,
        font: FONT,
        labelFont: FONT,
        label: options.xLabel,
        labelSize: 18,
        grid: { show: false },
        ticks: { stroke: gridStroke, width: 1, size: 4 },
        values: (_self, splits) => splits.map((value) => options.xFormat(value)),
      },
      {
        stroke: axisStroke,
        font: FONT,
        labelFont: FONT,
        label: options.yLabel,
        labelSize: 18,
        size: 72,
        ...(ticks !== null ? { splits: () => ticks } : {}),
        grid: { stroke: gridStroke, width: 1 },
        ticks: { stroke: gridStroke, width: 1, size: 4 },
        values: (_self, splits) => splits.map((value) => options.yFormat(value)),
      },
    ],
    series: [
      {},
      ...options.series.map((series) => ({
        label: series.label,
        stroke: series.color,
        width: 1.5,
        points: options.points === true ? { show: true, size: 7, fill: series.color } : { show: false },
        ...(series.fill !== undefined ? { fill: series.fill } : {}),
        ...(stepped !== undefined ? { paths: stepped } : {}),
      })),
    ],
    hooks: {
      draw: [drawOverlays],
      setSelect: [
        (self: uPlot) => {
          const range = brushToRange(
            {
              left: self.select.left,
              width: self.select.width,
              plotWidth: self.bbox.width / (window.devicePixelRatio || 1),
              min: self.scales["x"]?.min ?? 0,
              max: self.scales["x"]?.max ?? 0,
            },
            origin,
          );
          // Our band replaces uPlot's box, so the selection survives redraws and resizes.
          self.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          if (range !== null) options.onBrush?.(range);
        },
      ],
      setCursor: [
        (self: uPlot) => {
          const index = self.cursor.idx;
          options.onHover?.(index === null || index === undefined ? null : index);
        },
      ],
    },
  };

  const data: uPlot.AlignedData = [xs, ...options.series.map((series) => series.values.map((v) => (Number.isFinite(v) ? v : null)))];
  const currentChart = mountResponsiveChart(canvasHost, height, options.signal, (width) => {
    const chart = new uPlot({ ...chartOptions, width }, data, canvasHost);
    chart.root.addEventListener("mouseleave", () => options.onHover?.(null));
    return chart;
  });
  return {
    root,
    setSelection(range) {
      selection = range;
      currentChart()?.redraw(false, false);
    },
  };
}
