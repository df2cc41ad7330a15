// The pure half of the Memory view: the time range a drag on the chart selects, the range
// as kept in the URL, the curve's extent, and the texts of addresses and sizes.
import type { MemoryCurve } from "../api/memory";

export interface TimeRange {
  /** µs, in the trace's time base. */
  readonly start: number;
  readonly end: number;
}

/** A drag narrower than this (px) is a click, not a selection. */
export const MIN_BRUSH_PX = 3;

export interface BrushGeometry {
  /** Left edge and width of the dragged box, px from the plot area's left edge. */
  readonly left: number;
  readonly width: number;
  /** Width of the plot area, px. */
  readonly plotWidth: number;
  /** Values at the plot area's left and right edges (chart x units). */
  readonly min: number;
  readonly max: number;
}

/**
 * The x range (chart units plus `origin`, i.e. the trace's time base) a drag covers, clamped to
 * the plot; null for a click or a degenerate plot.
 */
export function brushToRange(brush: BrushGeometry, origin = 0): TimeRange | null {
  const { left, width, plotWidth, min, max } = brush;
  if (!(width >= MIN_BRUSH_PX) || !(plotWidth > 0) || !(max > min)) return null;
  const clamp = (px: number): number => Math.min(plotWidth, Math.max(0, px));
  const toValue = (px: number): number => min + (clamp(px) / plotWidth) * (max - min);
  const start = toValue(left);
  const end = toValue(left + width);
  return end > start ? { start: start + origin, end: end + origin } : null;
}

/** Reads `start`/`end` URL parameters (µs); a missing, malformed or empty range gives null. */
export function parseRangeParams(start: string | null, end: string | null): TimeRange | null {
  if (start === null || end === null || start.trim() === "" || end.trim() === "") return null;
  const from = Number(start);
  const to = Number(end);
  return Number.isFinite(from) && Number.isFinite(to) && to > from ? { start: from, end: to } : null;
}

/** A range for the URL: to the nanosecond, which is what the trace records. */
export function formatRangeParams(range: TimeRange | null): { start: string | null; end: string | null } {
  if (range === null) return { start: null, end: null };
  const text = (value: number): string => String(Math.round(value * 1000) / 1000);
  return { start: text(range.start), end: text(range.end) };
}

/** The earliest time of any curve (µs), or null without points. */
export function earliestTime(curves: Iterable<MemoryCurve>): number | null {
  let earliest = Number.POSITIVE_INFINITY;
  for (const curve of curves) {
    for (const time of curve.time) if (time < earliest) earliest = time;
  }
  return Number.isFinite(earliest) ? earliest : null;
}

/**
 * Where the page counts times from: the span's start the answer states (the origin of the CSV download and of
 * the trace viewer), else the earliest point of a curve, else 0.
 */
export function timeOrigin(data: { readonly spanStart: number | null; readonly curves: ReadonlyMap<string, MemoryCurve> }): number {
  return data.spanStart ?? earliestTime(data.curves.values()) ?? 0;
}

/** The largest finite value of a series (0 when none). */
export function seriesMax(values: readonly number[]): number {
  let max = 0;
  for (const value of values) if (Number.isFinite(value) && value > max) max = value;
  return max;
}

/** A device address as the allocator prints it: "0x7f3a5c000000". */
export function formatAddress(addr: number): string {
  return Number.isFinite(addr) && addr >= 0 ? `0x${Math.round(addr).toString(16)}` : "—";
}

/** Sizes offered by the allocation table's minimum-size filter, bytes. */
export const MIN_SIZE_CHOICES: readonly { readonly bytes: number; readonly label: string }[] = [
  { bytes: 0, label: "any size" },
  { bytes: 1024, label: "≥ 1 KiB" },
  { bytes: 1024 * 1024, label: "≥ 1 MiB" },
  { bytes: 16 * 1024 * 1024, label: "≥ 16 MiB" },
  { bytes: 256 * 1024 * 1024, label: "≥ 256 MiB" },
  { bytes: 1024 * 1024 * 1024, label: "≥ 1 GiB" },
];

/** The minimum-size parameter, snapped to a choice (unknown values mean "any size"). */
export function parseMinBytes(text: string | null): number {
  const value = Number(text);
  return MIN_SIZE_CHOICES.some((choice) => choice.bytes === value) ? value : 0;
}
