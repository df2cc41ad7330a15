// Canvas charts drawn with uPlot (bundled; its stylesheet is injected as a string, so the
// bundle stays self-contained). The wrapper sizes the chart to its container, follows the
// theme, reports the hovered column, and tears everything down when the view goes away.
import uPlot from "uplot";
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "text" };
import { stackColumns, type ChartLayer } from "../lib/chart_data";
import { el, injectStyleOnce } from "./dom";

const STYLE_ELEMENT_ID = "profscope-uplot-styles";

export function injectChartStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, uplotCss);
}

/** A theme colour from the shell's CSS variables, read at draw time so theme switches apply. */
export function cssColor(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value !== "" ? value : fallback;
}

export interface StackedColumnChartOptions {
  /** One label per column (x axis). */
  readonly columnLabels: readonly string[];
  /** Layers BOTTOM first (the breakdown's priority order). */
  readonly layers: readonly ChartLayer[];
  /** Formats y values (axis). */
  readonly valueFormat: (value: number) => string;
  readonly yLabel: string;
  readonly xLabel: string;
  readonly ariaLabel: string;
  readonly testId: string;
  readonly height?: number;
  /** Called with the column under the pointer, or null when it leaves. */
  readonly onHover?: (index: number | null) => void;
  readonly signal: AbortSignal;
}

/** Minimum horizontal room per x label, px: labels are thinned out below it. */
const LABEL_SPACE_PX = 44;

/** Stacked columns (one per step, stacked by category). */
export function createStackedColumnChart(options: StackedColumnChartOptions): HTMLElement {
  injectChartStyles(document);
  const count = options.columnLabels.length;
  const stacked = stackColumns(count, options.layers);
  const height = options.height ?? 280;
  const canvasHost = el("div", { className: "ps-uplot" });
  const root = el(
    "figure",
    { className: "ps-chart ps-columns-chart", testId: options.testId, attrs: { role: "img", "aria-label": options.ariaLabel } },
    canvasHost,
  );
  root.dataset["columns"] = String(count);

  const bars = uPlot.paths.bars?.({ size: [0.72, 72], align: 0 });
  const axisStroke = (): string => cssColor("--ps-fg-muted", "#616161");
  const gridStroke = (): string => cssColor("--ps-border", "#e0e0e0");
  const font = "11px system-ui, sans-serif";

  function xSplits(self: uPlot): number[] {
    const width = self.bbox.width / (window.devicePixelRatio || 1);
    const every = Math.max(1, Math.ceil((count * LABEL_SPACE_PX) / Math.max(width, 1)));
    return stacked.x.filter((index) => index % every === 0);
  }

  const chartOptions: uPlot.Options = {
    width: 600,
    height,
    legend: { show: false },
    cursor: {
      drag: { x: false, y: false, setScale: false },
      points: { show: false },
      y: false,
    },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: { time: false, range: () => [-0.5, Math.max(0, count - 1) + 0.5] },
      y: { range: (_self, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
    },
    axes: [
      {
        stroke: axisStroke,
        font,
        labelFont: font,
        label: options.xLabel,
        labelSize: 18,
        grid: { show: false },
        ticks: { show: false },
        splits: xSplits,
        values: (_self, splits) => splits.map((index) => options.columnLabels[index] ?? ""),
      },
      {
        stroke: axisStroke,
        font,
        labelFont: font,
        label: options.yLabel,
        labelSize: 18,
        size: 64,
        grid: { stroke: gridStroke, width: 1 },
        ticks: { stroke: gridStroke, width: 1, size: 4 },
        values: (_self, splits) => splits.map((value) => options.valueFormat(value)),
      },
    ],
    series: [
      {},
      ...stacked.layers.map((layer) => ({
        label: layer.label,
        fill: layer.color,
        stroke: layer.color,
        width: 0,
        points: { show: false },
        ...(bars !== undefined ? { paths: bars } : {}),
      })),
    ],
    hooks: {
      setCursor: [
        (self: uPlot) => {
          const index = self.cursor.idx;
          options.onHover?.(index === null || index === undefined ? null : index);
        },
      ],
    },
  };

  mountResponsiveChart(canvasHost, height, options.signal, (width) => {
    const chart = new uPlot({ ...chartOptions, width }, [stacked.x, ...stacked.tops], canvasHost);
    chart.root.addEventListener("mouseleave", () => options.onHover?.(null));
    return chart;
  });
  return root;
}

/**
 * Creates a uPlot chart once its host has a width, keeps it sized to the host, redraws it when the
 * theme changes, and destroys it when `signal` aborts. Returns a getter for the chart (null until
 * the host is laid out).
 */
export function mountResponsiveChart(
  canvasHost: HTMLElement,
  height: number,
  signal: AbortSignal,
  create: (width: number) => uPlot,
): () => uPlot | null {
  let chart: uPlot | null = null;
  const observer = new ResizeObserver(() => {
    const width = Math.floor(canvasHost.clientWidth);
    if (width <= 0) return;
    if (chart === null) {
      chart = create(width);
    } else if (chart.width !== width) {
      chart.setSize({ width, height });
    }
  });
  observer.observe(canvasHost);
  const themeWatcher = new MutationObserver(() => chart?.redraw(false, true));
  themeWatcher.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  signal.addEventListener(
    "abort",
    () => {
      observer.disconnect();
      themeWatcher.disconnect();
      chart?.destroy();
      chart = null;
    },
    { once: true },
  );
  return () => chart;
}
