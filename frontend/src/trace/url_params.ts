// The trace viewer's URL parameters (the shell prefixes them with "trace."): the window in trace time, the selected
// event and the pinned tracks. Pure.
import { formatPinned } from "./layout";
import { clampView, type Viewport } from "./time_scale";

/** URL parameter names (the shell prefixes them with "trace."). */
export const PARAM_START = "start";
export const PARAM_END = "end";
export const PARAM_SELECT = "select";
export const PARAM_PINNED = "pinned";

/** A trace time for the URL: µs with at most 3 decimals, shortest text. */
export function formatTraceTime(us: number): string {
  return String(Number(us.toFixed(3)));
}

/** The first window: the URL's when it is valid, else the whole span. */
export function initialView(spanStart: number, spanEnd: number, start: number | null, end: number | null): Viewport {
  const duration = spanEnd - spanStart;
  if (start !== null && end !== null && Number.isFinite(start) && Number.isFinite(end) && end > start) {
    return clampView({ start: start - spanStart, end: end - spanStart }, duration);
  }
  return { start: 0, end: duration };
}

/** What the URL says of a view (offsets from the span start), a selected event and pinned tracks; null removes one. */
export function viewerParams(
  view: Viewport,
  spanStart: number,
  spanDuration: number,
  selected: number | null,
  pinned: readonly string[],
): Record<string, string | null> {
  const whole = view.start <= 0 && view.end >= spanDuration;
  return {
    [PARAM_START]: whole ? null : formatTraceTime(spanStart + view.start),
    [PARAM_END]: whole ? null : formatTraceTime(spanStart + view.end),
    [PARAM_SELECT]: selected !== null ? String(selected) : null,
    [PARAM_PINNED]: formatPinned(pinned),
  };
}
