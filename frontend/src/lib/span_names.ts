// How a span is named for people: its start time of day, its steps and its length, with the
// span's id (a timestamp or file date) kept for the tooltip. Pure.
import type { SpanFacts } from "../api/runs";
import { formatDuration, spanTimestampMs } from "./format";

function pad(value: number): string {
  return String(value).padStart(2, "0");
}

/** "14:03:27" in the browser's time zone. */
export function timeOfDay(epochSeconds: number): string {
  const date = new Date(epochSeconds * 1000);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** "2026-11-21 14:03:27" in the browser's time zone. */
export function dateAndTime(epochSeconds: number): string {
  const date = new Date(epochSeconds * 1000);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${timeOfDay(epochSeconds)}`;
}

/** "steps 2–4", "step 7", "3 steps" (steps without numbers), with "(1 left out)" when the trace has more; null
 * without steps. */
export function stepRangeText(steps: SpanFacts["steps"]): string | null {
  if (steps === null || steps.count <= 0) return null;
  const leftOut = steps.left_out !== undefined && steps.left_out > 0 ? ` (${steps.left_out} left out)` : "";
  if (steps.first !== null && steps.last !== null) {
    return (steps.first === steps.last ? `step ${steps.first}` : `steps ${steps.first}–${steps.last}`) + leftOut;
  }
  return `${steps.count} step${steps.count === 1 ? "" : "s"}${leftOut}`;
}

/** "14:03:27 · steps 2–4 · 18.7 s": what is known of the span, or null when nothing is. */
export function spanFactsText(facts: SpanFacts | null | undefined): string | null {
  if (facts === null || facts === undefined) return null;
  const parts = [
    facts.start_time !== null ? timeOfDay(facts.start_time) : null,
    stepRangeText(facts.steps),
    facts.duration !== null ? formatDuration(facts.duration) : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0 ? parts.join(" · ") : null;
}

/** The facts, with the start time read from the span's name (a timestamp) when the answer has none. */
function withNameTime(name: string, facts: SpanFacts | null | undefined): SpanFacts {
  const fromName = spanTimestampMs(name);
  const known = facts ?? { start_time: null, duration: null, steps: null, device: null };
  return known.start_time === null && fromName !== null ? { ...known, start_time: fromName / 1000 } : known;
}

/** The span picker's label: "span 1 of 2 · 14:03:27 · steps 2–4 · 18.7 s"; the id when nothing else is known. */
export function spanOptionLabel(index: number, total: number, name: string, facts: SpanFacts | null | undefined): string {
  const prefix = total > 1 ? `span ${index + 1} of ${total} · ` : "";
  return `${prefix}${spanFactsText(withNameTime(name, facts)) ?? name}`;
}

/** The tooltip of a span option: the date and time it started, when known, and its id. */
export function spanOptionTitle(name: string, facts: SpanFacts | null | undefined): string {
  const start = withNameTime(name, facts).start_time;
  return `${start !== null ? `started ${dateAndTime(start)} · ` : ""}id ${name}`;
}
