// Ranks side by side, the drawing: the time axis, then each worker's header (or its one compact row), the
// step's bounds on it and its tracks' slices at the common axis, collectives strong. Names are canvas text.
// Returns the boxes drawn with their tooltip's lines, for the pointer to find.
import type { RankAlign } from "../../api/rank_steps";
import type { SlicesData } from "../../api/trace";
import { formatDuration } from "../../lib/format";
import { colorForName } from "../render/colors";
import {
  COMPACT_PX,
  HEADER_PX,
  ROW_PX,
  type AxisWindow,
  type Drawn,
  type WorkerRows,
  isCollectiveName,
  niceStep,
  workerLabel,
  xOf,
} from "./rank_stack_model";

/** Height of the time axis above the first worker, CSS px. */
export const AXIS_PX = 22;
const STRONG = "rgb(230, 81, 0)";

/** What one frame draws: the workers' rows, the axis window, the slices fetched so far per worker. */
export interface StackFrame {
  readonly rows: readonly WorkerRows[];
  readonly window: AxisWindow;
  readonly slicesOf: ReadonlyMap<string, SlicesData>;
  readonly align: RankAlign;
  /** Width of the names' column left of the plot, CSS px. */
  readonly gutter: number;
}

/** Draw the frame on the canvas (sized to its rows, the page's colours read from `root`). */
export function drawRankStack(canvas: HTMLCanvasElement, root: HTMLElement, frame: StackFrame): Drawn[] {
  const { rows, window, slicesOf, gutter } = frame;
  const width = canvas.clientWidth || 1000;
  const height = AXIS_PX + (rows.length > 0 ? rows[rows.length - 1]!.bottom : 0);
  const ratio = globalThis.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.height = `${height}px`;
  const drawn: Drawn[] = [];
  const ctx = canvas.getContext("2d");
  if (ctx === null) return drawn;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  const styles = getComputedStyle(root);
  const fg = styles.getPropertyValue("--ps-fg").trim() || "#222";
  const muted = styles.getPropertyValue("--ps-fg-muted").trim() || "#666";
  const raised = styles.getPropertyValue("--ps-bg-raised").trim() || "#f3f4f6";
  ctx.clearRect(0, 0, width, height);
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  const plot = width - gutter;
  drawAxis(ctx, canvas.clientHeight, frame, plot, muted);
  for (const worker of rows) {
    const w = worker.worker;
    const top = AXIS_PX + worker.top;
    const label = workerLabel(w, frame.align === "time", formatDuration);
    const headerPx = worker.compact ? 0 : HEADER_PX;
    if (worker.compact) {
      ctx.fillStyle = fg;
      ctx.fillText(label, 4, top + COMPACT_PX / 2, gutter - 8);
    } else {
      ctx.fillStyle = raised;
      ctx.fillRect(0, top, width, HEADER_PX - 2);
      ctx.fillStyle = fg;
      ctx.fillText(label, 4, top + HEADER_PX / 2 - 1, gutter + plot - 8);
    }
    drawn.push({ x: 0, y: top, w: width, h: worker.bottom - worker.top, lines: [label, "Click to open this rank's span here"] });
    // The step's bounds on this worker.
    const s0 = Math.max(gutter, gutter + xOf(w.step_start + w.shift, window, plot));
    const s1 = Math.min(width, gutter + xOf(w.step_end + w.shift, window, plot));
    ctx.fillStyle = "rgba(120, 120, 120, 0.12)";
    ctx.fillRect(s0, top + headerPx, Math.max(0, s1 - s0), worker.bottom - worker.top - headerPx - (worker.compact ? 1 : 4));
    drawWorkerSlices(ctx, worker, slicesOf.get(w.worker), frame, { width, plot, muted }, drawn);
  }
  return drawn;
}

function drawAxis(ctx: CanvasRenderingContext2D, canvasHeight: number, frame: StackFrame, plot: number, muted: string): void {
  const { window, gutter } = frame;
  const span = window.end - window.start;
  const step = niceStep(span / 8);
  ctx.fillStyle = muted;
  ctx.strokeStyle = "rgba(128,128,128,0.35)";
  for (let t = Math.ceil(window.start / step) * step; t <= window.end; t += step) {
    const x = gutter + xOf(t, window, plot);
    ctx.fillText(formatDuration(t), x + 2, AXIS_PX / 2);
    ctx.beginPath();
    ctx.moveTo(x + 0.5, 0);
    ctx.lineTo(x + 0.5, canvasHeight);
    ctx.stroke();
  }
}

/** One worker's tracks: names (unless compact), the merged blocks, then the slices; each slice pushed to `drawn`. */
function drawWorkerSlices(
  ctx: CanvasRenderingContext2D,
  worker: WorkerRows,
  data: SlicesData | undefined,
  frame: StackFrame,
  size: { readonly width: number; readonly plot: number; readonly muted: string },
  drawn: Drawn[],
): void {
  const { window, gutter } = frame;
  const { width, plot, muted } = size;
  const w = worker.worker;
  // Compact: every track in the rank's one row, the outermost slices first, collectives (any depth) on top.
  const passes = worker.compact ? [false, true] : [null];
  for (const collectivesOnly of passes) {
    for (const track of worker.tracks) {
      if (!worker.compact) {
        ctx.fillStyle = muted;
        ctx.fillText(track.track.name, 12, AXIS_PX + track.top + ROW_PX / 2, gutter - 16);
      }
      const window_ = data?.tracks.find((t) => t.id === track.track.id);
      if (data === undefined || window_ === undefined) continue;
      const rowY = (depth: number): number => AXIS_PX + track.top + (worker.compact ? 0 : depth * ROW_PX);
      const rowH = worker.compact ? COMPACT_PX - 1 : ROW_PX - 1;
      if (collectivesOnly !== true) {
        const b = window_.blocks;
        ctx.fillStyle = "rgba(128, 128, 128, 0.55)";
        for (let i = 0; i < b.start.length; i += 1) {
          const depth = b.depth[i]!;
          if (depth >= track.depths || (worker.compact && depth > 0)) continue;
          const x0 = Math.max(gutter, gutter + xOf(b.start[i]! + w.shift, window, plot));
          const x1 = gutter + xOf(b.end[i]! + w.shift, window, plot);
          if (x1 < gutter || x0 > width) continue;
          ctx.fillRect(x0, rowY(depth), Math.max(1, x1 - x0), rowH);
        }
      }
      const s = window_.slices;
      for (let i = 0; i < s.start.length; i += 1) {
        const depth = s.depth[i]!;
        if (depth >= track.depths) continue;
        const name = data.names[s.name[i]!] ?? "";
        const collective = isCollectiveName(name);
        if (collectivesOnly === true && !collective) continue;
        if (collectivesOnly === false && (collective || depth > 0)) continue;
        const start = s.start[i]! + w.shift;
        const x0 = gutter + xOf(start, window, plot);
        const x1 = gutter + xOf(start + s.dur[i]!, window, plot);
        if (x1 < gutter || x0 > width) continue;
        const left = Math.max(gutter, x0);
        const wide = Math.max(1, x1 - left);
        const y = rowY(depth);
        ctx.globalAlpha = collective ? 1 : worker.compact ? 0.35 : 0.5;
        ctx.fillStyle = collective ? STRONG : colorForName(name);
        ctx.fillRect(left, y, wide, rowH);
        ctx.globalAlpha = 1;
        if (wide > 40 && !worker.compact) {
          ctx.fillStyle = "#111";
          ctx.fillText(name, left + 2, y + ROW_PX / 2, wide - 4);
        }
        drawn.push({
          x: left, y, w: wide, h: rowH,
          lines: [name, `rank ${w.rank} · ${w.worker} · ${track.track.name}`, `starts at ${formatDuration(start)} on the axis, lasts ${formatDuration(s.dur[i]!)}`],
        });
      }
    }
  }
}
