// The Memory snapshot timeline, the drawing: per pixel the largest sites' live bytes stacked and the rest in grey,
// the highest active bytes, reserved bytes (dashed), the device's capacity, out-of-memory entries, record_function
// ranges in the lane above, the pinned allocation's life, and the axes. An answer of another window is drawn
// stretched onto the current one while the next loads. Texts are drawn with fillText, never parsed as markup.
import type { SnapshotTimeline } from "../../api/snapshot";
import { formatBytes } from "../../lib/format";
import { axisText, siteColor, type Window } from "../../lib/snapshot_model";
import { timelineMax } from "./timeline_model";

/** The canvas's height, the lane of ranges above the plot, the bytes column left of it (CSS px). */
export const HEIGHT = 280;
export const LANE = 18;
export const LEFT = 64;
/** The plot's height below the lane and above the axis text. */
export const PLOT_HEIGHT = HEIGHT - LANE - 20;
const FONT = "11px system-ui, sans-serif";

export interface PinnedLife {
  readonly start: number;
  readonly end: number;
  readonly size: number;
  readonly label: string;
}

/** What one frame draws. */
export interface TimelineFrame {
  readonly data: SnapshotTimeline;
  readonly window: Window;
  readonly span: Window;
  readonly axis: "time_us" | "entry";
  readonly capacity: number | null;
  readonly reservedKnown: boolean;
  readonly pinned: PinnedLife | null;
  /** The canvas's width and the plot's, CSS px. */
  readonly width: number;
  readonly plotWidth: number;
}

/** Size the canvas to `width` and clear it (before the first answer, that is all it shows). */
export function clearTimeline(canvas: HTMLCanvasElement, width: number): CanvasRenderingContext2D | null {
  const dpr = globalThis.devicePixelRatio || 1;
  canvas.width = Math.floor(width * dpr);
  canvas.height = Math.floor(HEIGHT * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${HEIGHT}px`;
  const context = canvas.getContext("2d");
  if (context === null) return null;
  context.setTransform(dpr, 0, 0, dpr, 0, 0);
  context.clearRect(0, 0, width, HEIGHT);
  context.font = FONT;
  return context;
}

/** The answer's geometry on the canvas: the bytes scale and where its times lie in the current window. */
interface Geometry {
  readonly frame: TimelineFrame;
  readonly max: number;
  readonly y: (bytes: number) => number;
  readonly xOf: (t: number) => number;
  /** Axis units per column of the answer, and CSS px per axis unit. */
  readonly step: number;
  readonly scale: number;
}

/** Draw an answer; returns its columns and their width in CSS px (for the page's data attributes). */
export function drawTimeline(context: CanvasRenderingContext2D, frame: TimelineFrame): { readonly columns: number; readonly columnWidth: number } {
  const { data: d, window } = frame;
  const pixels = d.time.length;
  const max = timelineMax(d, frame.reservedKnown, frame.capacity);
  // Where this answer's window lies in the current one (drawn stretched while the next one loads).
  const scale = frame.plotWidth / (window.end - window.start);
  const g: Geometry = {
    frame,
    max,
    y: (bytes) => LANE + PLOT_HEIGHT - (max > 0 ? (bytes / max) * PLOT_HEIGHT : 0),
    xOf: (t) => LEFT + (t - window.start) * scale,
    step: (d.end - d.start) / Math.max(pixels, 1),
    scale,
  };
  drawBands(context, g);
  drawCurves(context, g);
  drawMarks(context, g);
  drawAxes(context, g);
  return { columns: pixels, columnWidth: frame.plotWidth / Math.max(pixels, 1) };
}

/** Per column, the sites' live bytes stacked (a colour each) and the other sites' above them in grey. */
function drawBands(context: CanvasRenderingContext2D, { frame, y, xOf, step, scale }: Geometry): void {
  const d = frame.data;
  for (let x = 0; x < d.time.length; x += 1) {
    const left = xOf(d.start + x * step);
    const cw = Math.max(1, step * scale + 0.5);
    let base = 0;
    for (let band = 0; band < d.bands.length; band += 1) {
      const value = d.bands[band]?.[x] ?? 0;
      if (value <= 0) continue;
      context.fillStyle = siteColor(d.sites[band]?.label ?? band);
      context.fillRect(left, y(base + value), cw, y(base) - y(base + value));
      base += value;
    }
    const other = d.other[x] ?? 0;
    if (other > 0) {
      context.fillStyle = "rgba(150, 150, 150, 0.55)";
      context.fillRect(left, y(base + other), cw, y(base) - y(base + other));
    }
  }
}

/** The highest active bytes per column, the reserved bytes (dashed) where known, the device's capacity. */
function drawCurves(context: CanvasRenderingContext2D, { frame, max, y, xOf, step }: Geometry): void {
  const d = frame.data;
  const curve = (values: readonly number[]): void => {
    context.beginPath();
    for (let x = 0; x < d.time.length; x += 1) {
      const px = xOf(d.start + (x + 0.5) * step);
      const py = y(values[x] ?? 0);
      if (x === 0) context.moveTo(px, py);
      else context.lineTo(px, py);
    }
    context.stroke();
  };
  // The envelope: highest and lowest active bytes per pixel.
  context.strokeStyle = "rgba(20, 20, 20, 0.85)";
  context.lineWidth = 1;
  curve(d.active_max);
  if (frame.reservedKnown) {
    context.setLineDash([4, 3]);
    context.strokeStyle = "rgba(40, 90, 200, 0.9)";
    curve(d.reserved);
    context.setLineDash([]);
  }
  if (frame.capacity !== null && frame.capacity <= max) {
    context.strokeStyle = "rgba(200, 40, 40, 0.8)";
    context.beginPath();
    context.moveTo(LEFT, y(frame.capacity));
    context.lineTo(frame.width, y(frame.capacity));
    context.stroke();
    context.fillStyle = "rgba(200, 40, 40, 0.9)";
    context.fillText(`capacity ${formatBytes(frame.capacity)}`, LEFT + 4, y(frame.capacity) - 3);
  }
}

/** Out-of-memory entries, record_function ranges in the lane above, and the pinned allocation's life. */
function drawMarks(context: CanvasRenderingContext2D, { frame, xOf }: Geometry): void {
  const d = frame.data;
  const w = frame.width;
  for (const marker of d.markers) {
    if (marker.action !== "oom") continue;
    const px = xOf(marker.time);
    context.fillStyle = "rgba(220, 30, 30, 0.9)";
    context.fillRect(px - 1, LANE, 2, PLOT_HEIGHT);
    context.fillText("out of memory", px + 3, LANE + 12);
  }
  // record_function ranges in the lane above.
  for (const range of d.annotations) {
    const left = Math.max(LEFT, xOf(range.start));
    const right = Math.min(w, xOf(range.end));
    if (right - left < 1) continue;
    const name = range.name ?? "";
    context.fillStyle = siteColor(name);
    context.globalAlpha = 0.45;
    context.fillRect(left, 1 + Math.min(range.depth, 2) * 5, right - left, LANE - 12);
    context.globalAlpha = 1;
    if (right - left > 40) {
      context.fillStyle = "#222";
      context.fillText(name, left + 2, LANE - 4, right - left - 4);
    }
  }
  if (frame.pinned !== null) {
    const left = Math.max(LEFT, xOf(frame.pinned.start));
    const right = Math.min(w, xOf(frame.pinned.end));
    context.strokeStyle = "rgba(255, 140, 0, 1)";
    context.lineWidth = 2;
    context.strokeRect(left, LANE, Math.max(2, right - left), PLOT_HEIGHT);
    context.fillStyle = "rgba(255, 140, 0, 0.12)";
    context.fillRect(left, LANE, Math.max(2, right - left), PLOT_HEIGHT);
    context.lineWidth = 1;
  }
}

/** Axes: bytes on the left, the window's ends below. */
function drawAxes(context: CanvasRenderingContext2D, { frame, max, y }: Geometry): void {
  const { window, width: w } = frame;
  context.fillStyle = "#444";
  for (let tick = 0; tick <= 4; tick += 1) {
    const value = (max / 4) * tick;
    context.fillText(formatBytes(value), 2, y(value) + 4, LEFT - 6);
  }
  const origin = frame.span.start;
  context.fillText(axisText(window.start, frame.axis, origin), LEFT, HEIGHT - 4);
  const endText = axisText(window.end, frame.axis, origin);
  context.fillText(endText, w - context.measureText(endText).width - 2, HEIGHT - 4);
}
