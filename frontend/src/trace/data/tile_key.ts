// Which window to ask the backend for, so that nearby views share one answer.
//
// The backend answers (window, resolution) where resolution is ns per pixel rounded up to a
// power of two. The viewer asks for the visible window padded by its own width on each
// side, with both edges snapped to a grid of GRID_PX pixels at that resolution: panning
// within the padding, or back and forth, asks the same question again (a cache hit), and a
// new request is needed only when the view leaves the padded window or the resolution
// changes (every halving or doubling of the zoom). All values here are integer ns offsets
// from the span start, so keys are exact.
import type { Viewport } from "../time_scale";

/** The backend's limit on `width`. */
export const MAX_REQUEST_WIDTH = 8192;
/** Window edges are multiples of this many pixels at the tile's resolution. */
export const GRID_PX = 512;

export interface TileWindow {
  /** ns offsets from the span start (integers). */
  readonly startNs: number;
  readonly endNs: number;
  /** ns per pixel, a power of two: what the viewer asked for. */
  readonly resolutionNs: number;
  /** `width` sent to the backend. */
  readonly widthPx: number;
}

/** ns per pixel for a view `widthPx` wide, rounded up to a power of two (≥ 1 ns). */
export function resolutionNs(durationUs: number, widthPx: number): number {
  const raw = (durationUs * 1000) / Math.max(1, widthPx);
  if (!(raw > 1) || !Number.isFinite(raw)) return 1;
  let resolution = 2 ** Math.ceil(Math.log2(raw));
  // log2 of an exact power of two can come out a hair high or low.
  if (resolution / 2 >= raw) resolution /= 2;
  if (resolution < raw) resolution *= 2;
  return resolution;
}

/**
 * Pixels to add to a request so that the backend's own rounding (the window crosses the wire
 * as µs doubles that resolve ~0.25 µs at epoch times) cannot push its resolution above ours.
 */
function roundingSlackPx(resolution: number): number {
  return Math.ceil(1024 / resolution) + 1;
}

/** The padded, snapped window for a view; `spanNs` is the span's length in ns. */
export function paddedWindow(view: Viewport, viewWidthPx: number, spanNs: number): TileWindow {
  const resolution = resolutionNs(view.end - view.start, viewWidthPx);
  const pitch = resolution * GRID_PX;
  const slack = roundingSlackPx(resolution);
  const viewStartNs = view.start * 1000;
  const viewEndNs = view.end * 1000;
  const durationNs = viewEndNs - viewStartNs;
  // Pad by the view's width on each side, less where the backend's width limit needs it.
  const budgetNs = (MAX_REQUEST_WIDTH - slack - 2 * GRID_PX) * resolution;
  const padNs = Math.max(0, Math.min(durationNs, (budgetNs - durationNs) / 2));
  const spanEndNs = Math.max(0, Math.round(spanNs));
  let startNs = Math.floor((viewStartNs - padNs) / pitch) * pitch;
  let endNs = Math.ceil((viewEndNs + padNs) / pitch) * pitch;
  startNs = Math.max(0, startNs);
  endNs = Math.min(spanEndNs, endNs);
  if (endNs <= startNs) endNs = Math.min(spanEndNs, startNs + pitch);
  if (endNs <= startNs) startNs = Math.max(0, endNs - pitch);
  const widthPx = Math.min(MAX_REQUEST_WIDTH, Math.max(1, Math.ceil((endNs - startNs) / resolution) + slack));
  return { startNs, endNs, resolutionNs: resolution, widthPx };
}

/** Cache key of a request: the window, its resolution and the tracks (order-independent). */
export function tileKey(window: TileWindow, tracks: readonly string[]): string {
  return `${window.resolutionNs}|${window.startNs}|${window.endNs}|${window.widthPx}|${[...tracks].sort().join(",")}`;
}

/** True when a tile fetched for `window` can serve `view` at `resolution` without a refetch. */
export function windowServes(window: TileWindow, view: Viewport, resolution: number, spanNs: number): boolean {
  if (window.resolutionNs !== resolution) return false;
  const startOk = window.startNs <= view.start * 1000 + 1e-6 || window.startNs <= 0;
  const endOk = window.endNs >= view.end * 1000 - 1e-6 || window.endNs >= Math.round(spanNs);
  return startOk && endOk;
}

/** Share of the view (0..1) that a window covers. */
export function coverage(window: TileWindow, view: Viewport): number {
  const viewStartNs = view.start * 1000;
  const viewEndNs = view.end * 1000;
  const duration = viewEndNs - viewStartNs;
  if (duration <= 0) return 0;
  const overlap = Math.min(window.endNs, viewEndNs) - Math.max(window.startNs, viewStartNs);
  return Math.max(0, Math.min(1, overlap / duration));
}
