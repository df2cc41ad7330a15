// The pure half of the Compare page: which two spans are compared (from the URL, or the
// defaults), the span choices of the pickers, the run table's picks, and how deltas read.
// No DOM.
import type { RunInfo, SpanRef } from "../../api/types";
import { formatDuration, formatPercent } from "../../lib/format";
import { formatFixed, formatMicrosNumber } from "../../lib/metric_format";
import { spanFactsText, spanOptionTitle } from "../../lib/span_names";

/** The two spans of a comparison. */
export interface ComparePair {
  readonly base: SpanRef;
  readonly exp: SpanRef;
}

/** URL parameters of the Compare view (each `compare.<name>` in the link). */
export const PAIR_PARAMS = {
  base: { run: "base_run", worker: "base_worker", span: "base_span" },
  exp: { run: "exp_run", worker: "exp_worker", span: "exp_span" },
} as const;

export interface SpanChoice {
  readonly ref: SpanRef;
  /** "run · worker · span 1 of 2". */
  readonly label: string;
  /** The whole span name, for a tooltip (the label shortens nothing but may be cut by the select). */
  readonly title: string;
}

/** A key that identifies a span (names may contain any character, so JSON rather than a separator). */
export function spanKey(ref: SpanRef): string {
  return JSON.stringify([ref.run, ref.worker, ref.span]);
}

export function sameSpan(a: SpanRef, b: SpanRef): boolean {
  return a.run === b.run && a.worker === b.worker && a.span === b.span;
}

/** "run · worker · span 2 of 3" ("run · worker" when the worker has one span): what a person calls a span. */
export function spanChoiceLabel(ref: SpanRef, index: number, count: number): string {
  return count > 1 ? `${ref.run} · ${ref.worker} · span ${index + 1} of ${count}` : `${ref.run} · ${ref.worker}`;
}

/** Every (run, worker, span) the run list names, in run, worker and time order. */
export function spanChoices(runs: readonly RunInfo[]): SpanChoice[] {
  const out: SpanChoice[] = [];
  for (const run of runs) {
    for (const worker of run.workers) {
      worker.spans.forEach((span, index) => {
        const ref = { run: run.name, worker: worker.name, span };
        const facts = spanFactsText(worker.spanFacts?.[index]);
        out.push({
          ref,
          label: `${spanChoiceLabel(ref, index, worker.spans.length)}${facts !== null ? ` · ${facts}` : ""}`,
          title: `${run.name} · ${worker.name} · ${spanOptionTitle(span, worker.spanFacts?.[index])}`,
        });
      });
    }
  }
  return out;
}

function refFromParams(read: (name: string) => string | null, names: { run: string; worker: string; span: string }): SpanRef | null {
  const run = read(names.run);
  const worker = read(names.worker);
  const span = read(names.span);
  return run !== null && worker !== null && span !== null && run !== "" && worker !== "" && span !== "" ? { run, worker, span } : null;
}

/**
 * The span compared with `base` when the link names none: the next span of the same worker,
 * else the first span of the next run (the run list's order, wrapping round), else `base` itself.
 */
export function defaultExperiment(choices: readonly SpanChoice[], base: SpanRef): SpanRef {
  const at = choices.findIndex((choice) => sameSpan(choice.ref, base));
  if (at < 0) return choices.find((choice) => !sameSpan(choice.ref, base))?.ref ?? base;
  const next = choices[at + 1];
  if (next !== undefined && next.ref.run === base.run && next.ref.worker === base.worker) return next.ref;
  for (let step = 1; step < choices.length; step += 1) {
    const candidate = choices[(at + step) % choices.length];
    if (candidate !== undefined && candidate.ref.run !== base.run) return candidate.ref;
  }
  return choices.find((choice) => !sameSpan(choice.ref, base))?.ref ?? base;
}

/**
 * The pair to compare: from the URL when it names both sides; a side it does not name
 * defaults to the current selection (baseline) and the span after it (experiment).
 * Null when there is nothing to compare at all.
 */
export function resolvePair(
  read: (name: string) => string | null,
  current: SpanRef | null,
  choices: readonly SpanChoice[],
): ComparePair | null {
  const base = refFromParams(read, PAIR_PARAMS.base) ?? current ?? choices[0]?.ref ?? null;
  if (base === null) return null;
  const exp = refFromParams(read, PAIR_PARAMS.exp) ?? defaultExperiment(choices, base);
  return { base, exp };
}

/** The URL parameters that name a pair. */
export function pairParams(pair: ComparePair): Record<string, string> {
  return {
    [PAIR_PARAMS.base.run]: pair.base.run,
    [PAIR_PARAMS.base.worker]: pair.base.worker,
    [PAIR_PARAMS.base.span]: pair.base.span,
    [PAIR_PARAMS.exp.run]: pair.exp.run,
    [PAIR_PARAMS.exp.worker]: pair.exp.worker,
    [PAIR_PARAMS.exp.span]: pair.exp.span,
  };
}

// --- how a change reads -------------------------------------------------------------------

/** Which way a change goes for time: less is better. */
export type Direction = "better" | "worse" | "same";

/** Changes smaller than this share of the larger value read as "same" (noise between runs). */
const SAME_WITHIN = 0.005;

export function timeDirection(base: number | null, exp: number | null): Direction {
  const a = base ?? 0;
  const b = exp ?? 0;
  const scale = Math.max(Math.abs(a), Math.abs(b));
  if (!Number.isFinite(a) || !Number.isFinite(b) || scale === 0 || Math.abs(b - a) <= scale * SAME_WITHIN) return "same";
  return b < a ? "better" : "worse";
}

/** A signed duration for people: "+1.25 ms", "-22.7 ms", "0 µs". */
export function formatSignedTime(us: number): string {
  if (!Number.isFinite(us)) return "—";
  if (us === 0) return "0 µs";
  return us > 0 ? `+${formatDuration(us)}` : formatDuration(us);
}

/** A signed µs number for table cells under a "µs" header: "+1,234", "-80", "0". */
export function formatSignedMicros(us: number): string {
  if (!Number.isFinite(us)) return "—";
  const text = formatMicrosNumber(us);
  return us > 0 && text !== "0" ? `+${text}` : text;
}

/** A signed count: "+2", "-1", "0". */
export function formatSignedCount(value: number): string {
  if (!Number.isFinite(value)) return "—";
  const text = formatFixed(value, 0);
  return value > 0 ? `+${text}` : text;
}

/** experiment / baseline as a factor with three significant digits: "0.872×", "1.00×", "12.5×"; "—" without a baseline. */
export function formatRatio(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return "—";
  if (ratio > 0 && ratio < 0.001) return "<0.001×";
  return `${ratio >= 1000 ? formatFixed(ratio, 0) : ratio.toPrecision(3)}×`;
}

/** The relative change: ratio 0.872 → "-12.8%", 1.5 → "+50.0%". */
export function formatChange(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return "—";
  const change = ratio - 1;
  const text = formatPercent(change);
  return change > 0 && text !== "0.0%" ? `+${text}` : text;
}

type PairedTime = { readonly base: number; readonly exp: number; readonly delta: number; readonly ratio: number | null };

function verdict(pair: PairedTime, unit: string, qualified: boolean): string {
  const direction = timeDirection(pair.base, pair.exp);
  const per = qualified ? ` per ${unit}` : "";
  return direction === "better" ? `the experiment is faster${per}` : direction === "worse" ? `the experiment is slower${per}` : `about the same${per}`;
}

/**
 * The headline: "-22.7 ms per step (-12.8%): the experiment is faster." With `perSampleToo` (both
 * batch sizes known) the verdict says "per step", since per sample may say otherwise.
 */
export function stepTimeSentence(step: PairedTime, perSampleToo = false): string {
  return `${formatSignedTime(step.delta)} per step (${formatChange(step.ratio)}): ${verdict(step, "step", perSampleToo)}.`;
}

/** "-6.09 µs per sample (-19.7%): the experiment is faster per sample." */
export function sampleTimeSentence(sample: PairedTime): string {
  return `${formatSignedTime(sample.delta)} per sample (${formatChange(sample.ratio)}): ${verdict(sample, "sample", true)}.`;
}

/** A batch size from the URL or an input: a positive whole number, else null (unknown: the manifest's applies). */
export function parseBatchSize(text: string | null): number | null {
  if (text === null || !/^\s*\d+\s*$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

// --- run table picks ----------------------------------------------------------------------

/**
 * The run table's picks after a click on `ref`: a picked row is unpicked; a new one becomes
 * the baseline when none is picked, else the experiment (replacing the previous experiment).
 */
export function togglePick(picks: readonly SpanRef[], ref: SpanRef): SpanRef[] {
  if (picks.some((pick) => sameSpan(pick, ref))) return picks.filter((pick) => !sameSpan(pick, ref));
  const first = picks[0];
  return first === undefined ? [ref] : [first, ref];
}

/** "baseline" / "experiment" / null: the role of a row among the picks. */
export function pickRole(picks: readonly SpanRef[], ref: SpanRef): "baseline" | "experiment" | null {
  const index = picks.findIndex((pick) => sameSpan(pick, ref));
  return index === 0 ? "baseline" : index === 1 ? "experiment" : null;
}
