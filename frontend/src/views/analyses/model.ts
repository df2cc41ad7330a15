// Pure helpers of the Analyses page (no DOM): what its sections compute from the answers.
import type { IdleStream, IdleTimeData, KernelSequence } from "../../api/analyses";
import { formatPercent } from "../../lib/format";
import { formatTime, shortKernelName } from "../../lib/metric_format";

/**
 * The stream that runs the most work in the steps: the idle time section's headline. A share over all streams
 * together would let nearly idle side streams (a copy or collective stream idle 99% of the time, mostly waiting
 * on the host) speak for a main stream whose queue is hundreds deep. Null without streams; the first of equals.
 */
export function busiestStream(data: IdleTimeData): IdleStream | null {
  let best: IdleStream | null = null;
  for (const stream of data.streams) if (best === null || stream.busy > best.busy) best = stream;
  return best;
}

/** A stream's host wait over its own idle time (the answer's host_wait_share); NaN when it is never idle. */
export function streamHostWaitShare(stream: IdleStream): number {
  return stream.host_wait_share ?? Number.NaN;
}

/** "host wait 84.5% · kernel wait 0.0% · other 0.3% · before first / after last work 15.1%" of a stream's idle time. */
export function idleSplitText(stream: IdleStream): string {
  const share = (part: number): string => formatPercent(stream.idle > 0 ? part / stream.idle : Number.NaN);
  return `host wait ${share(stream.host_wait)} · kernel wait ${share(stream.kernel_wait)} · other ${share(stream.other)} · ` +
    `before first / after last work ${share(stream.no_work)}`;
}

/** Labels of histogram bins from their edges (µs): "0–1 µs", …, "≥ 10 ms" (the last bin is open). */
export function binLabels(edges: readonly number[]): string[] {
  const labels: string[] = [];
  for (let i = 0; i < edges.length; i += 1) {
    const lo = edges[i] ?? 0;
    const hi = edges[i + 1];
    labels.push(hi === undefined ? `≥ ${formatTime(lo)}` : `${formatTime(lo)}–${formatTime(hi)}`);
  }
  return labels;
}

/** Histogram counts without the empty bins past the last non-empty one (they say nothing). */
export function trimmedCounts(counts: readonly number[]): number[] {
  let last = counts.length - 1;
  while (last > 0 && (counts[last] ?? 0) === 0) last -= 1;
  return counts.slice(0, last + 1);
}

/** A sequence's kernels in one line: short names joined by arrows. */
export function sequenceText(sequence: KernelSequence): string {
  return sequence.kernels.map(shortKernelName).join(" → ");
}
