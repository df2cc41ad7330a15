// Ranks side by side in the trace viewer, the pure part: which tracks of a worker are shown, where each
// worker's rows lie, the common time axis and the window each worker is asked for in its own time,
// which slices are collectives (drawn strong: a late collective shows at a glance). No DOM.
import type { PlacedWorker } from "../../api/rank_steps";
import type { TrackInfo } from "../../api/trace";

/** Rows of one track drawn at most (deeper nesting is left to the single-span viewer). */
export const MAX_DEPTHS = 3;
/** Tracks of one worker drawn at most. */
export const MAX_TRACKS = 4;
export const ROW_PX = 14;
export const HEADER_PX = 18;
/** A rank's one row when compact (every track in it, collectives on top). */
export const COMPACT_PX = 12;
/** Above this many ranks the stack starts compact, so 64 ranks fit on a screen. */
export const COMPACT_ABOVE = 16;

/**
 * The tracks that tell a rank's step: its device streams (kernels, collectives among them), else its
 * host threads (a CPU-only job, whose collectives are host ranges). Slice tracks only, in their order.
 */
export function stackedTracks(tracks: readonly TrackInfo[]): TrackInfo[] {
  const slices = tracks.filter((track) => track.id.startsWith("s"));
  const device = slices.filter((track) => track.kind === "gpu");
  return (device.length > 0 ? device : slices.filter((track) => track.kind === "cpu")).slice(0, MAX_TRACKS);
}

export interface TrackRows {
  readonly track: TrackInfo;
  /** Top of its first row, CSS px from the canvas top. */
  readonly top: number;
  readonly depths: number;
}

export interface WorkerRows {
  readonly worker: PlacedWorker;
  /** Top of the worker's header line (compact: of its one row). */
  readonly top: number;
  readonly tracks: readonly TrackRows[];
  /** Below its last row. */
  readonly bottom: number;
  /** One row for the whole rank: every track drawn into it. */
  readonly compact: boolean;
}

/**
 * Each worker: a header line, then the rows of its tracks (up to MAX_DEPTHS each); compact, one row per
 * worker that all its tracks share (the rank's label in the gutter).
 */
export function layoutWorkers(
  workers: readonly PlacedWorker[],
  tracksOf: (worker: PlacedWorker) => readonly TrackInfo[],
  compact = false,
): WorkerRows[] {
  const out: WorkerRows[] = [];
  let top = 0;
  if (compact) {
    for (const worker of workers) {
      const tracks = tracksOf(worker).map((track) => ({ track, top, depths: Math.min(MAX_DEPTHS, Math.max(0, track.maxDepth) + 1) }));
      out.push({ worker, top, tracks, bottom: top + COMPACT_PX, compact: true });
      top += COMPACT_PX;
    }
    return out;
  }
  for (const worker of workers) {
    const header = top;
    top += HEADER_PX;
    const rows: TrackRows[] = [];
    for (const track of tracksOf(worker)) {
      const depths = Math.min(MAX_DEPTHS, Math.max(0, track.maxDepth) + 1);
      rows.push({ track, top, depths });
      top += depths * ROW_PX;
    }
    top += 4;
    out.push({ worker, top: header, tracks: rows, bottom: top, compact: false });
  }
  return out;
}

export interface AxisWindow {
  /** µs on the common axis. */
  readonly start: number;
  readonly end: number;
}

/** The step on every worker, on the common axis, with a margin of 3% each side. */
export function initialWindow(workers: readonly PlacedWorker[]): AxisWindow {
  if (workers.length === 0) return { start: 0, end: 1 };
  const start = Math.min(...workers.map((w) => w.step_start + w.shift));
  const end = Math.max(...workers.map((w) => w.step_end + w.shift));
  const margin = Math.max((end - start) * 0.03, 1);
  return { start: start - margin, end: end + margin };
}

/** The window to ask a worker for, in its own trace time. */
export function workerWindow(window: AxisWindow, worker: PlacedWorker): AxisWindow {
  return { start: window.start - worker.shift, end: window.end - worker.shift };
}

/** x (CSS px from the plot's left) of a time on the common axis. */
export function xOf(time: number, window: AxisWindow, width: number): number {
  return ((time - window.start) / (window.end - window.start)) * width;
}

/** The window zoomed by `factor` (<1 zooms in) about the axis time under `x`. */
export function zoomWindow(window: AxisWindow, factor: number, x: number, width: number): AxisWindow {
  const span = window.end - window.start;
  const anchor = window.start + (x / Math.max(width, 1)) * span;
  const next = Math.max(span * factor, 0.01);
  const start = anchor - ((anchor - window.start) / span) * next;
  return { start, end: start + next };
}

/** The window moved by `dx` pixels (dragging right shows earlier time). */
export function panWindow(window: AxisWindow, dx: number, width: number): AxisWindow {
  const shift = (dx / Math.max(width, 1)) * (window.end - window.start);
  return { start: window.start - shift, end: window.end - shift };
}

const COLLECTIVE = /nccl|rccl|hccl|gloo|all_?reduce|all_?gather|reduce_?scatter|broadcast|all_?to_?all|c10d::|record_param_comms/i;

/** Slices drawn strong: collectives (NCCL/RCCL/HCCL kernels, Gloo and c10d ranges). */
export function isCollectiveName(name: string): boolean {
  return COLLECTIVE.test(name);
}

/** How a worker is labelled: rank, worker, and (aligned by time) how late it started the step. */
export function workerLabel(worker: PlacedWorker, alignedByTime: boolean, formatDuration: (us: number) => string): string {
  const late = alignedByTime && worker.late > 0 ? ` · started ${formatDuration(worker.late)} late` : "";
  return `rank ${worker.rank} · ${worker.worker}${late}`;
}

/** 1, 2 or 5 times a power of ten, at least `raw` (the axis' tick spacing). */
export function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const k of [1, 2, 5, 10]) if (k * power >= raw) return k * power;
  return 10 * power;
}
