// The rank × step heat map's drawing: the cells (a pixel row the worst of its ranks, gaps only where cells are big
// enough), each step's straggler framed, and around the canvas the rank and step labels (text nodes: worker names
// are trace strings) and the colour legend of the figure shown.
import type { Cells, StepMatrix } from "../../api/rank_steps";
import { el } from "../../components/dom";
import { heatColour, maxCell, rankAxisLabels, stepAxisLabels, stragglerRow, worstRank, type HeatMetric, type RowLayout } from "../../lib/heatmap_model";

/** Size the canvas to the layout's rows and `colWidth` px per step (CSS px); its width. */
export function sizeHeatCanvas(canvas: HTMLCanvasElement, steps: number, layout: RowLayout, colWidth: number): number {
  const width = colWidth * steps;
  const height = layout.rows * layout.rowHeight;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  return width;
}

/** Draw the cells of `metric` on the sized canvas; false when it has no 2D context. */
export function drawHeatCells(canvas: HTMLCanvasElement, matrix: StepMatrix, cells: Cells, metric: HeatMetric, layout: RowLayout, colWidth: number): boolean {
  const max = maxCell(cells);
  const ratio = window.devicePixelRatio || 1;
  const context = canvas.getContext("2d");
  if (context === null) return false;
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
  if (metric === "step_time") markStragglers(context, matrix, layout, colWidth);
  return true;
}

/**
 * Each step's slowest rank, when clearly slower than the step's median, framed at least 5 px tall: with
 * 1,000 ranks its row is one pixel, and the frame keeps it visible at a glance.
 */
function markStragglers(context: CanvasRenderingContext2D, matrix: StepMatrix, layout: RowLayout, colWidth: number): void {
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

/** The rank labels left of the canvas and the step labels below it (`width`: the canvas's, CSS px). */
export function drawHeatAxes(axis: HTMLElement, stepAxis: HTMLElement, matrix: StepMatrix, layout: RowLayout, colWidth: number, width: number): void {
  axis.replaceChildren();
  axis.style.height = `${layout.rows * layout.rowHeight}px`;
  axis.style.minWidth = "90px";
  for (const { at, text } of rankAxisLabels(matrix, layout)) {
    const label = el("div", {}, text);
    label.style.position = "absolute";
    label.style.top = `${at}px`;
    label.style.whiteSpace = "nowrap";
    axis.appendChild(label);
  }
  stepAxis.replaceChildren();
  stepAxis.style.width = `${width}px`;
  stepAxis.style.height = "16px";
  for (const { at, text } of stepAxisLabels(matrix.steps, colWidth)) {
    const label = el("span", {}, text);
    label.style.position = "absolute";
    label.style.left = `${at}px`;
    label.style.whiteSpace = "nowrap";
    stepAxis.appendChild(label);
  }
}

/** The colours of the figure shown: relative to the step's median for step time, else from none to the most. */
export function heatLegend(metric: HeatMetric): HTMLElement {
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
