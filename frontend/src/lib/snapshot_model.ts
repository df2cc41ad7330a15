// Pure helpers of the Memory snapshot page: the timeline's window (zoom and pan within the snapshot's span), what lies
// under the pointer (which band of the stack at a height), colours by site, axis labels, frame text, and the trace's
// memory curve resampled on the snapshot's pixels (beside the profile), the device and window the page opens at, and
// the headings of what is alive at a moment. No DOM.
import type { SnapshotAt } from "../api/snapshot";
import { formatBytes, formatCount, formatDuration } from "./format";

export interface Window {
  readonly start: number;
  readonly end: number;
}

/** The narrowest window (axis units): a µs, or an entry. */
export const MIN_WINDOW = 1;

/** `window` clamped into `span`, at least MIN_WINDOW wide (or the whole span when it is narrower). */
export function clampWindow(window: Window, span: Window): Window {
  const full = span.end - span.start;
  if (!(full > MIN_WINDOW)) return span;
  let width = Math.min(Math.max(window.end - window.start, MIN_WINDOW), full);
  if (!Number.isFinite(width)) width = full;
  let start = Math.min(Math.max(window.start, span.start), span.end - width);
  if (!Number.isFinite(start)) start = span.start;
  return { start, end: start + width };
}

/** Zoom by `factor` (< 1 zooms in) keeping the point at `anchor` (0..1 across the window) where it is. */
export function zoomWindow(window: Window, span: Window, anchor: number, factor: number): Window {
  const width = window.end - window.start;
  const at = window.start + width * Math.min(Math.max(anchor, 0), 1);
  const next = width * factor;
  return clampWindow({ start: at - (at - window.start) * factor, end: at - (at - window.start) * factor + next }, span);
}

/** Move by `fraction` of the window's width (positive: later). */
export function panWindow(window: Window, span: Window, fraction: number): Window {
  const shift = (window.end - window.start) * fraction;
  return clampWindow({ start: window.start + shift, end: window.end + shift }, span);
}

/** What lies at `bytes` height in pixel column `x` of a timeline: a band (index into its sites), "other", or none. */
export type BandHit = { readonly kind: "band"; readonly index: number } | { readonly kind: "other" } | null;

export function bandAt(bands: readonly ArrayLike<number>[], other: ArrayLike<number>, x: number, bytes: number): BandHit {
  if (!(bytes >= 0)) return null;
  let top = 0;
  for (let index = 0; index < bands.length; index += 1) {
    top += bands[index]?.[x] ?? 0;
    if (bytes < top) return { kind: "band", index };
  }
  top += other[x] ?? 0;
  return bytes < top ? { kind: "other" } : null;
}

/** A stable colour for a site (the same site keeps its colour across windows and snapshots). */
export function siteColor(key: string | number): string {
  const text = String(key);
  let hash = 2166136261;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 16777619);
  }
  const hue = (hash >>> 0) % 360;
  return `hsl(${hue}, 62%, 58%)`;
}

/** A time on the snapshot's axis as the page shows it: from the snapshot's start, or as an entry number. */
export function axisText(value: number, axis: "time_us" | "entry", origin: number): string {
  if (!Number.isFinite(value)) return "—";
  return axis === "entry" ? `entry ${Math.round(value)}` : `+${formatDuration(value - origin)}`;
}

export interface FrameLike {
  readonly file: string | null;
  readonly line: number | null;
  readonly name: string | null;
  readonly kind: string;
}

/** `name (file:line)`, the file without its folders; C++ frames by name only. */
export function frameText(frame: FrameLike): string {
  const name = frame.name ?? "?";
  if (frame.kind === "cpp") return name;
  const file = (frame.file ?? "?").replace(/\\/g, "/").split("/").pop() ?? "?";
  return frame.line !== null ? `${name} (${file}:${frame.line})` : `${name} (${file})`;
}

/** A step curve (times ascending, the value held until the next time) read at each of `at` (NaN before it starts). */
export function stepValuesAt(times: readonly number[], values: readonly number[], at: ArrayLike<number>): Float64Array {
  const out = new Float64Array(at.length);
  let index = -1;
  for (let i = 0; i < at.length; i += 1) {
    const t = at[i] ?? Number.NaN;
    while (index + 1 < times.length && (times[index + 1] ?? Number.POSITIVE_INFINITY) <= t) index += 1;
    out[i] = index >= 0 ? (values[index] ?? Number.NaN) : Number.NaN;
  }
  return out;
}

/** The highest finite value of `values` whose time lies in [start, end], or NaN. */
export function maxInRange(times: ArrayLike<number>, values: ArrayLike<number>, start: number, end: number): number {
  let best = Number.NaN;
  for (let i = 0; i < times.length; i += 1) {
    const t = times[i] ?? Number.NaN;
    const v = values[i] ?? Number.NaN;
    if (t >= start && t <= end && Number.isFinite(v) && !(v <= best)) best = v;
  }
  return best;
}

/** The device shown: the URL's, else the snapshot's default, else its first; undefined when it has none. */
export function chooseDevice<D extends { readonly device: number }>(
  overview: { readonly devices: readonly D[]; readonly default_device: number | null },
  wanted: number,
): D | undefined {
  return overview.devices.find((d) => d.device === wanted) ?? overview.devices.find((d) => d.device === overview.default_device) ?? overview.devices[0];
}

/** The device's whole timeline: its first to its last entry, at least one unit wide. */
export function deviceSpan(device: { readonly start: number; readonly end: number }): Window {
  return { start: device.start, end: Math.max(device.end, device.start + 1) };
}

/** The window the timeline opens at: the URL's (snapshot.start / snapshot.end) when it is one, else the whole span. */
export function startWindow(span: Window, start: number, end: number): Window {
  return Number.isFinite(start) && Number.isFinite(end) && end > start ? { start, end } : span;
}

/** The URL's window parameters for a window: none for the whole span. */
export function windowParams(window: Window, span: Window): { start: string | null; end: string | null } {
  const whole = window.start === span.start && window.end === span.end;
  return { start: whole ? null : String(window.start), end: whole ? null : String(window.end) };
}

/** "Alive at the peak (+1.2 ms): 3.0 GB in 1,204 allocations" (the start, or the picked moment, likewise). */
export function momentHeading(at: Pick<SnapshotAt, "is_peak" | "row" | "time" | "live_bytes" | "count">, axisOf: (value: number) => string): string {
  const moment = at.is_peak ? `the peak (${axisOf(at.time)})` : at.row < 0 ? "the start" : axisOf(at.time);
  return `Alive at ${moment}: ${formatBytes(at.live_bytes)} in ${formatCount(at.count)} allocations`;
}

/** The largest allocations' heading: of the site asked for (a clicked band), else of every site. */
export function largestHeading(at: Pick<SnapshotAt, "site" | "largest">): string {
  return at.site !== undefined && at.site !== null && at.largest[0] !== undefined ? `Largest live allocations of ${at.largest[0].label}` : "Largest live allocations";
}
