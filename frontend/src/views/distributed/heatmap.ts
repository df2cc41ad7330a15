// The Distributed view's rank × step heat map (like a cluster view): one canvas as wide as the page, whatever
// the number of ranks (rows up to 28 px; 1,000 ranks are 560 rows of pixels, each the worst of its ranks), a text-only tooltip with
// the cell's figures, a click that opens that rank's step in the trace viewer.
import type { StepMatrix } from "../../api/rank_steps";
import { el } from "../../components/dom";
import { injectRanksStyles } from "../../components/ranks_styles";
import { csvDownloadLink } from "../../components/csv_download";
import { metricLabel, sectionHead } from "../../components/view_parts";
import type { ApiClient } from "../../api/client";
import {
  HEAT_DEFINITIONS,
  HEAT_METRICS,
  type CellHit,
  type HeatMetric,
  cellAt,
  cellLines,
  cellWindow,
  cellsOf,
  columnWidth,
  heatColour,
  isHeatMetric,
  maxCell,
  rowLayout,
  stragglerRow,
  worstRank,
} from "../../lib/heatmap_model";
import { formatCount } from "../../lib/format";

export interface HeatmapOptions {
  readonly api: ApiClient;
  readonly run: string;
  readonly spanIndex: number;
  readonly metric: string | null;
  readonly onMetricChange: (metric: HeatMetric) => void;
  /** A cell clicked: open the worker's span at the step's window (its own trace time, µs). */
  readonly onOpen: (worker: string, span: string, window: { start: number; end: number }) => void;
  readonly signal: AbortSignal;
}

function legend(metric: HeatMetric): HTMLElement {
  const swatch = (colour: string): HTMLElement => {
    const box = el("span", { className: "ps-heatmap-swatch" });
    box.style.background = colour;
    return box;
  };
  if (metric === "step_time") {
    return el(
      "div",
      { className: "ps-heatmap-legend" },
      swatch(heatColour(metric, 0.5, 1, 1)),
      "−50%",
      swatch(heatColour(metric, 1, 1, 1)),
      "step median",
      swatch(heatColour(metric, 1.5, 1, 1)),
      "+50% or slower",
      swatch(heatColour(metric, null, 1, 1)),
      "no such step",
    );
  }
  return el(
    "div",
    { className: "ps-heatmap-legend" },
    swatch(heatColour(metric, 0, null, 1)),
    "none",
    swatch(heatColour(metric, 1, null, 1)),
    "the most of any cell",
    swatch(heatColour(metric, null, null, 1)),
    "no such step",
  );
}

/** The heat map section; null when there is nothing to draw. */
export function createHeatmap(matrix: StepMatrix, options: HeatmapOptions): HTMLElement | null {
  if (matrix.ranks.length === 0 || matrix.steps.length === 0) return null;
  const doc = document;
  injectRanksStyles(doc);
  let metric: HeatMetric = isHeatMetric(options.metric) ? options.metric : "step_time";

  const picker = el("select", { className: "ps-select", testId: "heatmap-metric", attrs: { "aria-label": "Heat map figure" } });
  for (const m of HEAT_METRICS) picker.appendChild(new Option(m.label, m.id));
  picker.value = metric;
  const canvas = el("canvas", { className: "ps-heatmap-canvas", testId: "heatmap-canvas", attrs: { role: "img" } });
  const axis = el("div", { className: "ps-heatmap-axis", testId: "heatmap-rank-axis" });
  const stepAxis = el("div", { className: "ps-heatmap-axis", testId: "heatmap-step-axis" });
  const legendHost = el("div", {});
  const definition = el("div", {});
  const tipBox = el("div", { className: "ps-ranks-tip", testId: "heatmap-tooltip" });
  tipBox.hidden = true;
  const scrollBox = el("div", { className: "ps-heatmap-scroll" }, canvas, stepAxis);
  const root = el(
    "section",
    { className: "ps-heatmap", testId: "distributed-heatmap", attrs: { "data-ranks": String(matrix.ranks.length), "data-steps": String(matrix.steps.length) } },
    sectionHead(
      "Ranks × steps",
      el("label", {}, "Figure ", picker),
      csvDownloadLink({
        api: options.api,
        route: "distributed/matrix",
        params: () => ({ run: options.run, span_index: options.spanIndex }),
        state: () => ({ table: "matrix", sort: null, filter: "" }),
        testId: "heatmap-csv",
        what: "the rank × step figures",
      }),
    ),
    definition,
    el("div", { className: "ps-heatmap-frame" }, axis, scrollBox),
    legendHost,
    tipBox,
  );

  const layout = rowLayout(matrix.ranks.length);
  let colWidth = 0;

  function draw(): void {
    const cells = cellsOf(matrix, metric);
    const max = maxCell(cells);
    // The width the page leaves beside the rank labels (the canvas's 1 px border on either side comes on top).
    const available = Math.max(240, (scrollBox.clientWidth || (root.clientWidth || 800) - 110) - 2);
    colWidth = columnWidth(matrix.steps.length, available);
    const width = colWidth * matrix.steps.length;
    const height = layout.rows * layout.rowHeight;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    canvas.setAttribute(
      "aria-label",
      `${HEAT_METRICS.find((m) => m.id === metric)?.label ?? ""} of ${formatCount(matrix.ranks.length)} ranks over ${formatCount(matrix.steps.length)} steps`,
    );
    const context = canvas.getContext("2d");
    if (context === null) return;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    // Gaps between cells only where cells are big enough to keep them readable.
    const gapX = colWidth >= 8 ? 1 : 0;
    const gapY = layout.rowHeight >= 6 ? 1 : 0;
    for (let row = 0; row < layout.rows; row += 1) {
      for (let step = 0; step < matrix.steps.length; step += 1) {
        const rank = worstRank(cells, layout, row, step);
        const value = rank >= 0 ? (cells[rank]?.[step] ?? null) : null;
        context.fillStyle = heatColour(metric, value, matrix.step_median[step] ?? null, max);
        context.fillRect(step * colWidth, row * layout.rowHeight, colWidth - gapX, layout.rowHeight - gapY);
      }
    }
    if (metric === "step_time") markStragglers(context);
    drawAxes(width);
    legendHost.replaceChildren(legend(metric));
    definition.replaceChildren(el("p", { className: "ps-note" }, metricLabel("How it is computed", HEAT_DEFINITIONS[metric])));
  }

  /**
   * Each step's slowest rank, when clearly slower than the step's median, framed at least 5 px tall: with
   * 1,000 ranks its row is one pixel, and the frame keeps it visible at a glance.
   */
  function markStragglers(context: CanvasRenderingContext2D): void {
    context.strokeStyle = "rgb(150, 0, 0)";
    context.lineWidth = 1.5;
    for (let step = 0; step < matrix.steps.length; step += 1) {
      const row = stragglerRow(matrix, layout, step);
      if (row < 0) continue;
      const height = Math.max(5, layout.rowHeight);
      const top = Math.max(0, row * layout.rowHeight + layout.rowHeight / 2 - height / 2);
      context.strokeRect(step * colWidth + 0.75, top + 0.75, colWidth - 1.5, height - 1.5);
    }
  }

  function drawAxes(width: number): void {
    // Rank labels: a few, spaced so they never overlap (text nodes: worker names are trace strings).
    axis.replaceChildren();
    axis.style.height = `${layout.rows * layout.rowHeight}px`;
    axis.style.minWidth = "90px";
    const every = Math.max(1, Math.ceil(14 / layout.rowHeight));
    for (let row = 0; row < layout.rows; row += every) {
      const rank = matrix.ranks[layout.first[row] ?? 0];
      if (rank === undefined) continue;
      const label = el("div", {}, layout.rowHeight >= 14 ? `${rank.rank} ${rank.worker}` : `rank ${rank.rank}`);
      label.style.position = "absolute";
      label.style.top = `${row * layout.rowHeight + Math.max(0, (layout.rowHeight - 14) / 2)}px`;
      label.style.whiteSpace = "nowrap";
      axis.appendChild(label);
    }
    stepAxis.replaceChildren();
    stepAxis.style.width = `${width}px`;
    stepAxis.style.height = "16px";
    const stepEvery = Math.max(1, Math.ceil(64 / Math.max(colWidth, 1)));
    for (let step = 0; step < matrix.steps.length; step += stepEvery) {
      const name = matrix.steps[step] ?? "";
      const label = el("span", {}, name.replace(/^ProfilerStep/, ""));
      label.style.position = "absolute";
      label.style.left = `${step * colWidth}px`;
      label.style.whiteSpace = "nowrap";
      stepAxis.appendChild(label);
    }
  }

  function hitAt(event: MouseEvent): CellHit | null {
    const rect = canvas.getBoundingClientRect();
    return cellAt(matrix, metric, layout, colWidth, event.clientX - rect.left, event.clientY - rect.top);
  }

  function showTip(event: MouseEvent): void {
    const hit = hitAt(event);
    if (hit === null) {
      tipBox.hidden = true;
      return;
    }
    tipBox.replaceChildren(...cellLines(matrix, hit).map((line) => el("p", {}, line)));
    tipBox.dataset["rank"] = String(matrix.ranks[hit.rank]?.rank ?? "");
    tipBox.dataset["step"] = matrix.steps[hit.step] ?? "";
    tipBox.hidden = false;
    const margin = 12;
    const width = tipBox.offsetWidth;
    const height = tipBox.offsetHeight;
    const left = event.clientX + margin + width > window.innerWidth ? event.clientX - margin - width : event.clientX + margin;
    const top = event.clientY + margin + height > window.innerHeight ? event.clientY - margin - height : event.clientY + margin;
    tipBox.style.left = `${Math.max(0, left)}px`;
    tipBox.style.top = `${Math.max(0, top)}px`;
  }

  canvas.addEventListener("mousemove", showTip, { signal: options.signal });
  canvas.addEventListener("mouseleave", () => (tipBox.hidden = true), { signal: options.signal });
  canvas.addEventListener(
    "click",
    (event) => {
      const hit = hitAt(event);
      if (hit === null) return;
      const rank = matrix.ranks[hit.rank];
      const window = cellWindow(matrix, hit);
      if (rank !== undefined && window !== null) options.onOpen(rank.worker, rank.span, window);
    },
    { signal: options.signal },
  );
  picker.addEventListener(
    "change",
    () => {
      if (!isHeatMetric(picker.value)) return;
      metric = picker.value;
      options.onMetricChange(metric);
      draw();
    },
    { signal: options.signal },
  );
  // Drawn once attached (its width decides the columns), and again when the page is resized.
  requestAnimationFrame(draw);
  const observer = new ResizeObserver(() => draw());
  observer.observe(root);
  options.signal.addEventListener("abort", () => observer.disconnect(), { once: true });
  return root;
}
