// The pure half of the Distributed view: how a rank's step splits into computation,
// overlap, communication and other; the straggler sentence; span choices; bandwidth.
import type { RankRow, Straggler } from "../api/distributed";
import type { RunInfo } from "../api/runs";
import { formatDuration, formatPercent } from "./format";

export type RankPart = "compute" | "overlap" | "communication" | "other";

export interface RankSegment {
  readonly part: RankPart;
  /** µs per step. */
  readonly value: number;
}

export const RANK_PART_LABELS: Readonly<Record<RankPart, string>> = {
  compute: "Computation only",
  overlap: "Overlap (both at once)",
  communication: "Communication only",
  other: "Other",
};

const nonNegative = (value: number): number => (Number.isFinite(value) && value > 0 ? value : 0);

/**
 * A rank's mean step as four parts that add up to its step time: computation alone,
 * computation overlapped with communication, communication alone, and the rest. (The route's
 * compute and communication both include the overlap.)
 */
export function rankSegments(rank: Pick<RankRow, "compute" | "communication" | "overlap" | "other">): RankSegment[] {
  const overlap = nonNegative(rank.overlap);
  return [
    { part: "compute", value: nonNegative(rank.compute - overlap) },
    { part: "overlap", value: overlap },
    { part: "communication", value: nonNegative(rank.communication - overlap) },
    { part: "other", value: nonNegative(rank.other) },
  ];
}

/** Below this share above the others, the slowest rank is not called a straggler. */
export const STRAGGLER_MIN_SHARE = 0.02;

/** "rank 3 (worker rank3)", or just the worker when the rank is unknown. */
export function rankLabel(rank: number, worker: string): string {
  return Number.isFinite(rank) ? `rank ${rank} (worker ${worker})` : `worker ${worker}`;
}

/**
 * The straggler in words: "rank 3 (worker rank3) is the slowest: 12.3 ms per step, 8.0% above
 * the median of the others (11.4 ms)." With two ranks "the median of the others" is "the other
 * rank"; when the slowest is within 2% of the others, the sentence says there is no straggler.
 */
export function stragglerSentence(straggler: Straggler, rankCount: number): string {
  const who = rankLabel(straggler.rank, straggler.worker);
  const reference = rankCount === 2 ? "the other rank" : "the median of the others";
  const share = straggler.excess_share;
  if (share !== null && Number.isFinite(share) && share < STRAGGLER_MIN_SHARE) {
    return (
      `No clear straggler: the slowest, ${who}, takes ${formatDuration(straggler.step_time)} per step, ` +
      `only ${formatPercent(share)} above ${reference} (${formatDuration(straggler.median_of_others)}).`
    );
  }
  const above =
    share !== null && Number.isFinite(share)
      ? `${formatPercent(share)} above ${reference} (${formatDuration(straggler.median_of_others)})`
      : `${formatDuration(straggler.excess)} more than ${reference}`;
  return `${who.charAt(0).toUpperCase()}${who.slice(1)} is the slowest: ${formatDuration(straggler.step_time)} per step, ${above}.`;
}

/** How many span indices the run offers: the most spans any worker has. */
export function spanIndexCount(run: RunInfo | null): number {
  if (run === null) return 0;
  return run.workers.reduce((most, worker) => Math.max(most, worker.spans.length), 0);
}

/** A span index from the URL, within 0..count-1 (0 otherwise). */
export function parseSpanIndex(text: string | null, count: number): number {
  const value = Number(text);
  return text !== null && Number.isInteger(value) && value >= 0 && value < count ? value : 0;
}

/** Bytes per second as decimal GB/s, the unit network and interconnect speeds use. */
export function formatBandwidth(bytesPerSecond: number | null): string {
  if (bytesPerSecond === null || !Number.isFinite(bytesPerSecond)) return "—";
  const gb = bytesPerSecond / 1e9;
  return `${gb >= 100 ? gb.toFixed(0) : gb >= 10 ? gb.toFixed(1) : gb.toFixed(2)} GB/s`;
}

/** Mean message size of a collective: bytes over calls; null when unknown. */
export function meanMessageBytes(bytes: number | null, calls: number): number | null {
  return bytes !== null && Number.isFinite(bytes) && calls > 0 ? bytes / calls : null;
}

/** Above this many ranks, the per-rank bar charts show the ranks that matter most, not every rank. */
export const BAR_RANKS_LIMIT = 32;

/**
 * The ranks a bar chart draws: all of them up to ``limit``; beyond it the ``limit`` ranks with the largest
 * ``key`` (the slowest, the most waiting), in rank order, so that a chart of a thousand ranks stays readable
 * (the rank table and the heat map keep every rank).
 */
export function barRanks<T extends { readonly rank: number }>(ranks: readonly T[], key: (rank: T) => number, limit = BAR_RANKS_LIMIT): { shown: T[]; hidden: number } {
  if (ranks.length <= limit) return { shown: [...ranks], hidden: 0 };
  const value = (rank: T): number => {
    const v = key(rank);
    return Number.isFinite(v) ? v : Number.NEGATIVE_INFINITY;
  };
  const shown = [...ranks].sort((a, b) => value(b) - value(a) || a.rank - b.rank).slice(0, limit);
  shown.sort((a, b) => a.rank - b.rank);
  return { shown, hidden: ranks.length - limit };
}
