// Where linked events sit on the timeline: a slice's place from its brief, and the arrows between the selected
// slice and the events its flows and launch links point to. Pure.
import type { EventBrief, EventDetail } from "../api/trace";
import type { FlowArrow, SlicePlace } from "./render/renderer";

/** A slice's place in offset time (µs since the span start). */
export function placeOf(brief: EventBrief, spanStart: number): SlicePlace {
  return { trackId: brief.track, start: brief.start - spanStart, dur: brief.dur, depth: brief.depth };
}

/** Arrows between the selected slice and the events its flows and launch links point to. */
export function flowArrows(detail: EventDetail, spanStart: number): FlowArrow[] {
  const self = placeOf(detail, spanStart);
  const arrows: FlowArrow[] = [];
  const seen = new Set<string>();
  const add = (other: EventBrief, outgoing: boolean): void => {
    const key = `${outgoing ? "out" : "in"}:${other.id}`;
    if (seen.has(key) || other.id === detail.id) return;
    seen.add(key);
    const far = placeOf(other, spanStart);
    const selfEnd = { trackId: self.trackId, depth: self.depth, time: self.start };
    const otherEnd = { trackId: far.trackId, depth: far.depth, time: far.start };
    arrows.push(outgoing ? { from: selfEnd, to: otherEnd } : { from: otherEnd, to: selfEnd });
  };
  for (const flow of detail.flows) add(flow.other, flow.direction === "out");
  if (detail.launchedBy !== null) add(detail.launchedBy, false);
  for (const launched of detail.launches) add(launched, true);
  return arrows;
}
