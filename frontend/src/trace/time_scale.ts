// The one place that converts time to pixels and back, and moves the visible window.
//
// Coordinate spaces (named so they are never mixed up):
//  - trace time: µs in the trace's own time base, as the API speaks it (often ~1.6e15 µs,
//    since the epoch, where a double only resolves 0.25 µs);
//  - offset time: µs since the span start — everything the viewer keeps and draws is in
//    offsets, which stay exact enough at any zoom;
//  - timeline px: CSS pixels from the left edge of the timeline area (not the canvas).
// Converting back to trace time happens only at the API and URL boundary (see `toTraceTime`).

/** A window of offset time, µs. */
export interface Viewport {
  readonly start: number;
  readonly end: number;
}

/** Narrowest window the viewer zooms to: 10 ns (the API's times are µs with fractions). */
export const MIN_VIEW_US = 0.01;

export function viewDuration(view: Viewport): number {
  return view.end - view.start;
}

/** Maps a viewport onto `width` pixels. */
export class TimeScale {
  readonly pxPerUs: number;

  constructor(
    readonly view: Viewport,
    readonly width: number,
  ) {
    const duration = viewDuration(view);
    this.pxPerUs = duration > 0 && width > 0 ? width / duration : 0;
  }

  timeToPx(offsetUs: number): number {
    return (offsetUs - this.view.start) * this.pxPerUs;
  }

  pxToTime(px: number): number {
    return this.pxPerUs > 0 ? this.view.start + px / this.pxPerUs : this.view.start;
  }

  durationToPx(us: number): number {
    return us * this.pxPerUs;
  }

  pxToDuration(px: number): number {
    return this.pxPerUs > 0 ? px / this.pxPerUs : 0;
  }
}

/** Offset time → trace time (for the API and the URL). */
export function toTraceTime(spanStart: number, offsetUs: number): number {
  return spanStart + offsetUs;
}

/** Trace time → offset time. */
export function toOffset(spanStart: number, traceUs: number): number {
  return traceUs - spanStart;
}

/**
 * Keeps a window inside [0, spanDuration] and at least MIN_VIEW_US wide, moving it rather
 * than shrinking it where it can.
 */
export function clampView(view: Viewport, spanDuration: number): Viewport {
  const maxDuration = Math.max(spanDuration, MIN_VIEW_US);
  let duration = viewDuration(view);
  if (!Number.isFinite(duration) || duration <= 0) duration = maxDuration;
  duration = Math.min(maxDuration, Math.max(MIN_VIEW_US, duration));
  let start = Number.isFinite(view.start) ? view.start : 0;
  if (start < 0) start = 0;
  if (start + duration > maxDuration) start = maxDuration - duration;
  return { start, end: start + duration };
}

/**
 * Zooms by `factor` (<1 zooms in) keeping `anchor` (offset µs) at the same place on screen —
 * the point under the cursor stays under the cursor.
 */
export function zoomAround(view: Viewport, anchor: number, factor: number, spanDuration: number): Viewport {
  const duration = viewDuration(view);
  const wanted = Math.min(Math.max(spanDuration, MIN_VIEW_US), Math.max(MIN_VIEW_US, duration * factor));
  const fraction = duration > 0 ? (anchor - view.start) / duration : 0.5;
  const start = anchor - fraction * wanted;
  return clampView({ start, end: start + wanted }, spanDuration);
}

/** Moves the window by `deltaUs` (positive: later). */
export function panBy(view: Viewport, deltaUs: number, spanDuration: number): Viewport {
  return clampView({ start: view.start + deltaUs, end: view.end + deltaUs }, spanDuration);
}

/**
 * A window that shows [start, start+duration] with context around it: the interval takes
 * the middle third of the screen (at least a few µs, so an instant is visible too).
 */
export function focusWindow(start: number, duration: number, spanDuration: number): Viewport {
  const shown = Math.max(duration * 3, 2);
  const middle = start + duration / 2;
  return clampView({ start: middle - shown / 2, end: middle + shown / 2 }, spanDuration);
}

/** True when [start, start+duration] lies inside the window with a small margin. */
export function isInView(view: Viewport, start: number, duration: number): boolean {
  return start >= view.start && start + duration <= view.end;
}

// --- ticks ----------------------------------------------------------------------------

export interface TimeUnit {
  readonly suffix: string;
  /** µs per unit. */
  readonly us: number;
}

const UNITS: readonly TimeUnit[] = [
  { suffix: "s", us: 1e6 },
  { suffix: "ms", us: 1e3 },
  { suffix: "µs", us: 1 },
  { suffix: "ns", us: 1e-3 },
];

export interface Tick {
  /** Offset µs. */
  readonly time: number;
  readonly label: string;
}

export interface Ticks {
  /** µs between ticks: 1, 2 or 5 times a power of ten. */
  readonly step: number;
  readonly unit: TimeUnit;
  readonly ticks: readonly Tick[];
}

/** The smallest 1/2/5 × 10^k that is at least `minimum`. */
export function niceStep(minimum: number): number {
  if (!(minimum > 0) || !Number.isFinite(minimum)) return 1;
  const power = 10 ** Math.floor(Math.log10(minimum));
  for (const multiple of [1, 2, 5, 10]) {
    // Relative slack: 3 * 1e-3 must count as 0.003, not a hair above it.
    if (multiple * power >= minimum * (1 - 1e-9)) return multiple * power;
  }
  return 10 * power;
}

/** The largest unit that `magnitude` (µs) is at least one of: 81 ms → ms. */
export function unitForMagnitude(magnitude: number): TimeUnit {
  for (const unit of UNITS) {
    if (Math.abs(magnitude) >= unit.us * (1 - 1e-9)) return unit;
  }
  return UNITS[UNITS.length - 1] as TimeUnit;
}

/** Labels keep at most this many decimals; beyond, they switch to a smaller unit. */
const MAX_LABEL_DECIMALS = 4;

/**
 * The unit of tick labels: the one of the largest offset shown (so labels read "81.5 ms",
 * not "81500 µs"), or smaller when the step would need too many decimals in it.
 */
export function unitForTicks(magnitude: number, step: number): TimeUnit {
  let index = UNITS.indexOf(unitForMagnitude(Math.max(Math.abs(magnitude), step)));
  while (index < UNITS.length - 1 && decimalsFor(step, UNITS[index] as TimeUnit) > MAX_LABEL_DECIMALS) index += 1;
  return UNITS[index] as TimeUnit;
}

/** Decimals that tell two ticks `step` apart in `unit` (step 0.5 ms → 1). */
export function decimalsFor(step: number, unit: TimeUnit): number {
  const inUnit = step / unit.us;
  return Math.max(0, Math.min(9, -Math.floor(Math.log10(inUnit) + 1e-9)));
}

/** A tick label: the offset from the span start in the step's unit ("120 ms", "1.5 s"). */
export function formatTick(time: number, unit: TimeUnit, decimals: number): string {
  const value = time / unit.us;
  const text = value.toFixed(decimals);
  // -0.0 reads oddly at the span start.
  return `${/^-0(\.0+)?$/.test(text) ? text.slice(1) : text} ${unit.suffix}`;
}

/**
 * Ticks for a window drawn `width` px wide, at least `minSpacingPx` apart, on round
 * offsets from the span start.
 */
export function timeTicks(view: Viewport, width: number, minSpacingPx = 80): Ticks {
  const duration = viewDuration(view);
  const step = niceStep(width > 0 && duration > 0 ? (duration * minSpacingPx) / width : duration);
  const unit = unitForTicks(Math.max(Math.abs(view.start), Math.abs(view.end)), step);
  const decimals = decimalsFor(step, unit);
  const ticks: Tick[] = [];
  const first = Math.ceil(view.start / step - 1e-9);
  const last = Math.floor(view.end / step + 1e-9);
  // Bounded: width / minSpacing ticks at most (plus the edges).
  for (let index = first; index <= last && ticks.length < 1000; index++) {
    const time = index * step;
    ticks.push({ time, label: formatTick(time, unit, decimals) });
  }
  return { step, unit, ticks };
}
