// The Memory snapshot timeline, the pure part: the top of its bytes scale (one definition for the drawing and for
// reading the bytes at the pointer's height), the answer's column under a point of the window, and the lines the
// pointer reads there (time, active bytes, the site's band or the other sites, reserved bytes). No DOM.
import type { SnapshotTimeline } from "../../api/snapshot";
import { formatBytes } from "../../lib/format";
import { axisText, bandAt, type Window } from "../../lib/snapshot_model";

/**
 * The top of the bytes scale: the highest active (and reserved, where known) bytes of the answer's pixels, raised to
 * the device's capacity when that is under one and a half times as high (so the red line shows), plus 5%.
 */
export function timelineMax(
  data: Pick<SnapshotTimeline, "time" | "active_max" | "reserved">,
  reservedKnown: boolean,
  capacity: number | null,
): number {
  let max = 0;
  for (let x = 0; x < data.time.length; x += 1) max = Math.max(max, data.active_max[x] ?? 0, reservedKnown ? (data.reserved[x] ?? 0) : 0);
  if (capacity !== null && capacity < max * 1.5) max = Math.max(max, capacity);
  return max * 1.05;
}

/** The axis value at `fraction` of the window, and the answer's column holding it (may lie outside the answer). */
export function columnAt(data: Pick<SnapshotTimeline, "start" | "end" | "time">, window: Window, fraction: number): { readonly t: number; readonly column: number } {
  const t = window.start + fraction * (window.end - window.start);
  return { t, column: Math.floor(((t - data.start) / (data.end - data.start)) * data.time.length) };
}

/** What the pointer reads at a column and a height in bytes: the moment and active bytes, what lies there, reserved bytes. */
export function hoverLines(
  data: SnapshotTimeline,
  at: { readonly t: number; readonly column: number; readonly bytes: number },
  axis: { readonly axis: "time_us" | "entry"; readonly origin: number; readonly reservedKnown: boolean },
): string[] {
  const { column } = at;
  const hit = bandAt(data.bands, data.other, column, at.bytes);
  const lines = [`${axisText(at.t, axis.axis, axis.origin)} · active ${formatBytes(data.active_max[column] ?? Number.NaN)}`];
  if (hit?.kind === "band") {
    const site = data.sites[hit.index];
    lines.push(`${site?.label ?? "?"}: ${formatBytes(data.bands[hit.index]?.[column] ?? Number.NaN)}`);
    if (site?.frame?.file) lines.push(`${site.frame.file}:${site.frame.line ?? "?"}`);
  } else if (hit?.kind === "other") {
    lines.push(`other sites: ${formatBytes(data.other[column] ?? Number.NaN)}`);
  }
  if (axis.reservedKnown) lines.push(`reserved ${formatBytes(data.reserved[column] ?? Number.NaN)}`);
  return lines;
}
