// Pure helpers of the Analyses page (no DOM): what its sections compute from the answers.
import type { IdleTimeData, KernelSequence } from "../../api/analyses";
import { formatTime, shortKernelName } from "../../lib/metric_format";

/** The share of all the streams' idle time that waits for the host: the headline of launch-bound work. */
export function hostWaitShare(data: IdleTimeData): number {
  const idle = data.streams.reduce((sum, s) => sum + s.idle, 0);
  const host = data.streams.reduce((sum, s) => sum + s.host_wait, 0);
  return idle > 0 ? host / idle : Number.NaN;
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
