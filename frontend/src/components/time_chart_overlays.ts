// What a time chart draws over its lines (device pixels, clipped to the plot): the selected range as a band, the
// reference lines dashed with their labels (one above the axis's top named at the top edge), and the marked points
// with a dashed vertical line and a label on the side with room.
import type uPlot from "uplot";
import type { TimeRange } from "../lib/memory_model";
import type { ChartMarker, ReferenceLine } from "./time_chart";

export interface Overlays {
  readonly origin: number;
  readonly yTop: number;
  readonly selection: TimeRange | null;
  readonly lines: readonly ReferenceLine[];
  readonly markers: readonly ChartMarker[];
}

export function drawOverlays(self: uPlot, overlays: Overlays): void {
  const ctx = self.ctx;
  const dpr = window.devicePixelRatio || 1;
  const { left, top, width, height: plotHeight } = self.bbox;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, plotHeight);
  ctx.clip();
  const selection = overlays.selection;
  if (selection !== null) {
    const x0 = self.valToPos(selection.start - overlays.origin, "x", true);
    const x1 = self.valToPos(selection.end - overlays.origin, "x", true);
    ctx.fillStyle = "rgba(245, 124, 0, 0.14)";
    ctx.fillRect(Math.min(x0, x1), top, Math.abs(x1 - x0), plotHeight);
    ctx.strokeStyle = "rgba(245, 124, 0, 0.8)";
    ctx.lineWidth = dpr;
    ctx.strokeRect(Math.min(x0, x1), top, Math.abs(x1 - x0), plotHeight);
  }
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  ctx.textBaseline = "bottom";
  for (const line of overlays.lines) drawLine(self, ctx, line, overlays.yTop, dpr);
  for (const marker of overlays.markers) drawMarker(self, ctx, marker, dpr);
  ctx.restore();
}

function drawLine(self: uPlot, ctx: CanvasRenderingContext2D, line: ReferenceLine, yTop: number, dpr: number): void {
  const { left, top, width } = self.bbox;
  if (line.y > yTop) {
    // Off the chart: say where it is, at the top edge.
    ctx.fillStyle = line.color;
    ctx.textAlign = "right";
    ctx.textBaseline = "top";
    ctx.fillText(`${line.label} ↑ above the chart`, left + width - 4 * dpr, top + 2 * dpr);
    ctx.textBaseline = "bottom";
    return;
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

function drawMarker(self: uPlot, ctx: CanvasRenderingContext2D, marker: ChartMarker, dpr: number): void {
  const { left, top, width, height: plotHeight } = self.bbox;
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
