// A line chart over time (uPlot, stepped lines: a memory counter holds its value until the
// next event) with marked points, horizontal reference lines, a hover read-out, and a drag to
// select a time range (the "brush"), drawn as a band until it is cleared. The overlays' drawing is
// time_chart_overlays.ts, the scales lib/chart_data.ts's timeScale.
import uPlot from "uplot";
import { timeScale } from "../lib/chart_data";
import { brushToRange, type TimeRange } from "../lib/memory_model";
import { el } from "./dom";
import { cssColor, injectChartStyles, mountResponsiveChart } from "./chart";
import { drawOverlays } from "./time_chart_overlays";

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
  const { xs, xMax, yTop, ticks } = timeScale(options.time, origin, options.series, options.lines ?? [], options.yTicks);
  const axisStroke = (): string => cssColor("--ps-fg-muted", "#616161");
  const gridStroke = (): string => cssColor("--ps-border", "#e0e0e0");
  const stepped = uPlot.paths.stepped?.({ align: 1 });

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
      draw: [(self: uPlot) => drawOverlays(self, { origin, yTop, selection, lines: options.lines ?? [], markers: options.markers ?? [] })],
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
