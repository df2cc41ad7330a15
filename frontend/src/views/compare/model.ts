// The pure half of the Compare page: which two spans are compared (from the URL, or the
// defaults), the span choices of the pickers, the run table's picks, and how deltas read.
// No DOM.
import { spanFacts, type RunInfo } from "../../api/runs";
import type { SpanRef } from "../../api/types";
import { formatCount, formatDuration, formatPercent } from "../../lib/format";
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
  /** What makes it comparable with another span; absent facts are unknown. */
  readonly profile?: SpanProfile;
}

/** What a span must share with another to compare like with like: the run list's facts of it. */
export interface SpanProfile {
  /** The profiler that wrote it ("pytorch", "paddle", ...); null until known. */
  readonly framework: string | null;
  /** What its work ran on (the device's name, its kind, or "CPU"); null until its trace is loaded. */
  readonly device: string | null;
  /** How many workers its run has. */
  readonly workers: number;
  /** Its run failed to load: nothing to compare. */
  readonly failed?: boolean;
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
        const facts = spanFactsText(spanFacts(worker, index));
        out.push({
          ref,
          label: `${spanChoiceLabel(ref, index, worker.spans.length)}${facts !== null ? ` · ${facts}` : ""}`,
          title: `${run.name} · ${worker.name} · ${spanOptionTitle(span, spanFacts(worker, index))}`,
          profile: {
            framework: run.framework ?? null,
            device: spanFacts(worker, index)?.device ?? null,
            workers: run.workers.length,
            ...(run.status === "error" ? { failed: true } : {}),
          },
        });
      });
    }
  }
  return out;
}

/** One side of a link: a run, and maybe a worker and a span (a link may name the runs only). */
interface LinkSide {
  readonly run: string;
  readonly worker: string | null;
  readonly span: string | null;
}

function sideFromParams(read: (name: string) => string | null, names: { run: string; worker: string; span: string }): LinkSide | null {
  const value = (name: string): string | null => {
    const text = read(name);
    return text !== null && text !== "" ? text : null;
  };
  const run = value(names.run);
  return run === null ? null : { run, worker: value(names.worker), span: value(names.span) };
}

/** The workers of a run, in the run list's order. */
function workersOf(choices: readonly SpanChoice[], run: string): string[] {
  const out: string[] = [];
  for (const choice of choices) if (choice.ref.run === run && !out.includes(choice.ref.worker)) out.push(choice.ref.worker);
  return out;
}

/**
 * The span a side of a link names: all three parts as given; a run alone (or a run and a worker) takes the
 * worker `preferredWorker` names when the run has it, else its first, and that worker's first span. Null when
 * the run lists no such worker or no span.
 */
function completeSide(side: LinkSide, choices: readonly SpanChoice[], preferredWorker: string | null): SpanRef | null {
  if (side.worker !== null && side.span !== null) return { run: side.run, worker: side.worker, span: side.span };
  const workers = workersOf(choices, side.run);
  const worker = side.worker ?? (preferredWorker !== null && workers.includes(preferredWorker) ? preferredWorker : (workers[0] ?? null));
  if (worker === null) return null;
  return choices.find((choice) => choice.ref.run === side.run && choice.ref.worker === worker)?.ref ?? null;
}

/** A way two spans differ that makes their comparison one of unlike things. */
export interface ProfileDifference {
  readonly what: "framework" | "device" | "workers";
  readonly base: string;
  readonly exp: string;
}

/** How two spans differ in framework, device and worker count; a fact unknown on either side is no difference. */
export function profileDifferences(base: SpanProfile | undefined, exp: SpanProfile | undefined): ProfileDifference[] {
  if (base === undefined || exp === undefined) return [];
  const out: ProfileDifference[] = [];
  if (base.framework !== null && exp.framework !== null && base.framework !== exp.framework) {
    out.push({ what: "framework", base: base.framework, exp: exp.framework });
  }
  if (base.device !== null && exp.device !== null && base.device !== exp.device) out.push({ what: "device", base: base.device, exp: exp.device });
  if (base.workers !== exp.workers) out.push({ what: "workers", base: String(base.workers), exp: String(exp.workers) });
  return out;
}

/**
 * How far apart two spans are: a CPU run against a device run, or another profiler, counts double; two
 * different devices (an H100 against a V100), or another worker count, once.
 */
export function differenceCost(differences: readonly ProfileDifference[]): number {
  let cost = 0;
  for (const d of differences) {
    const cpuAgainstDevice = d.what === "device" && (d.base === "CPU") !== (d.exp === "CPU");
    cost += d.what === "framework" || cpuAgainstDevice ? 2 : 1;
  }
  return cost;
}

/** "device (Tesla V100 against CPU), workers (8 against 1)". */
export function differencesText(differences: readonly ProfileDifference[]): string {
  const noun = { framework: "profiler", device: "device", workers: "workers" } as const;
  return differences.map((d) => `${noun[d.what]} (${d.base} against ${d.exp})`).join(", ");
}

/** Why the page chose a span the link did not name. */
export type AutoReason =
  /** The same worker's next span (the usual case: two spans of one job). */
  | "next_span"
  /** Another span with the same framework, device and worker count. */
  | "similar"
  /** No span is like the baseline: the one with the fewest differences. */
  | "closest"
  /** The link named the runs only: a worker and the first span of each. */
  | "link_runs"
  /** The only span there is. */
  | "only_span";

export interface AutoChoice {
  readonly ref: SpanRef;
  readonly reason: AutoReason;
  /** How the chosen span differs from the baseline (framework, device, workers). */
  readonly differences: readonly ProfileDifference[];
}

/**
 * The spans that could be compared with `base`, in the order ties are broken: the same worker's later
 * spans, then the other runs in the run list's order from the baseline's (wrapping round; in each run, the
 * worker of the baseline's name first), then the baseline run's other workers and the same worker's earlier spans.
 */
function candidates(choices: readonly SpanChoice[], at: number): SpanChoice[] {
  const base = choices[at];
  if (base === undefined) return [...choices];
  const runs: string[] = [];
  for (const choice of choices) if (!runs.includes(choice.ref.run)) runs.push(choice.ref.run);
  const first = runs.indexOf(base.ref.run);
  const order = [...runs.slice(first + 1), ...runs.slice(0, first)];
  const out: SpanChoice[] = choices.slice(at + 1).filter((c) => c.ref.run === base.ref.run && c.ref.worker === base.ref.worker);
  for (const run of order) {
    const inRun = choices.filter((c) => c.ref.run === run);
    out.push(...inRun.filter((c) => c.ref.worker === base.ref.worker), ...inRun.filter((c) => c.ref.worker !== base.ref.worker));
  }
  out.push(...choices.filter((c) => c.ref.run === base.ref.run && c.ref.worker !== base.ref.worker));
  out.push(...choices.slice(0, at).filter((c) => c.ref.run === base.ref.run && c.ref.worker === base.ref.worker));
  return out;
}

/**
 * The span compared with `base` when the link names none: the most similar one (same framework, device and
 * worker count; a device not known yet costs a little, a run that failed to load is left out), the same
 * worker's next span first, then in the order of
 * `candidates`; when no span is like it, the closest (`differenceCost`), said so (`closest`).
 */
export function chooseExperiment(choices: readonly SpanChoice[], base: SpanRef): AutoChoice {
  const at = choices.findIndex((choice) => sameSpan(choice.ref, base));
  const baseProfile = choices[at]?.profile;
  let best: AutoChoice | null = null;
  let bestCost = Infinity;
  for (const candidate of candidates(choices, at)) {
    if (sameSpan(candidate.ref, base) || candidate.profile?.failed === true) continue;
    const differences = profileDifferences(baseProfile, candidate.profile);
    // A span whose device is not known yet (its trace still loading) comes after one known to be like the baseline.
    const unknown = baseProfile?.device != null && candidate.profile?.device == null ? 0.5 : 0;
    const cost = differenceCost(differences) + unknown;
    if (cost < bestCost) {
      bestCost = cost;
      const nextSpan: boolean = best === null && candidate.ref.run === base.run && candidate.ref.worker === base.worker && choices.indexOf(candidate) > at;
      best = { ref: candidate.ref, reason: differences.length > 0 ? "closest" : nextSpan ? "next_span" : "similar", differences };
      if (cost === 0) break;
    }
  }
  return best ?? { ref: base, reason: "only_span", differences: [] };
}

/** The span compared with `base` when the link names none (`chooseExperiment`'s span). */
export function defaultExperiment(choices: readonly SpanChoice[], base: SpanRef): SpanRef {
  return chooseExperiment(choices, base).ref;
}

/** A pair, and how the page chose what the link did not name (null: the link named both spans). */
export interface ResolvedPair extends ComparePair {
  readonly auto: AutoChoice | null;
}

/**
 * The pair to compare: from the URL when it names both spans. A link that names the runs only (`base_run`
 * and `exp_run`, without worker or span) takes the worker of the same name when both runs have it, else
 * each run's first, and their first spans. A side the link does not name defaults to the current selection
 * (baseline) and the span most like it (experiment). Null when there is nothing to compare at all.
 */
export function resolvePair(
  read: (name: string) => string | null,
  current: SpanRef | null,
  choices: readonly SpanChoice[],
): ResolvedPair | null {
  const baseSide = sideFromParams(read, PAIR_PARAMS.base);
  const expSide = sideFromParams(read, PAIR_PARAMS.exp);
  // The worker name both runs have, when the link leaves it to the page.
  const expWorkers = expSide !== null ? workersOf(choices, expSide.run) : [];
  const shared = baseSide !== null && baseSide.worker === null
    ? (workersOf(choices, baseSide.run).find((worker) => expWorkers.includes(worker)) ?? null)
    : null;
  const base =
    (baseSide !== null ? completeSide(baseSide, choices, shared ?? current?.worker ?? null) : null) ?? current ?? choices[0]?.ref ?? null;
  if (base === null) return null;
  const exp = expSide !== null ? completeSide(expSide, choices, base.worker) : null;
  if (exp !== null) {
    const complete = (side: LinkSide | null): boolean => side !== null && side.worker !== null && side.span !== null;
    if (complete(baseSide) && complete(expSide)) return { base, exp, auto: null };
    const profile = (ref: SpanRef): SpanProfile | undefined => choices.find((choice) => sameSpan(choice.ref, ref))?.profile;
    return { base, exp, auto: { ref: exp, reason: "link_runs", differences: profileDifferences(profile(base), profile(exp)) } };
  }
  const auto = chooseExperiment(choices, base);
  return { base, exp: auto.ref, auto };
}

/** What the note under the pickers says of a span the page chose: why it, and how it differs from the baseline. */
export function autoChoiceText(auto: AutoChoice): string {
  const differ = auto.differences.length > 0 ? ` They differ in ${differencesText(auto.differences)}.` : "";
  switch (auto.reason) {
    case "next_span":
      return "The experiment was chosen automatically: the next span of the same worker.";
    case "similar":
      return "The experiment was chosen automatically: the first span like the baseline (same profiler, device and number of workers).";
    case "closest":
      return `No span is like the baseline, so the experiment was chosen automatically as the closest one.${differ} ` +
        "Pick the spans to compare above, or in the run table.";
    case "link_runs":
      return `The link names the runs only: a worker of the same name in both (else each run's first) and their first spans were chosen.${differ}`;
    case "only_span":
      return "There is no other span to compare with: the baseline is compared with itself.";
  }
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

/** A signed duration in µs with its unit, as a µs table beside it reads: "+1,234 µs", "-23,758 µs", "0 µs". */
export function formatSignedMicrosUnit(us: number): string {
  return Number.isFinite(us) ? `${formatSignedMicros(us)} µs` : "—";
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

/** A pick as the run table's bar names it: run, worker and span position from its row, "—" when none is picked. */
export function pickText(
  rows: readonly (SpanRef & { readonly span_index: number })[],
  ref: SpanRef | undefined,
): string {
  if (ref === undefined) return "—";
  const row = rows.find((candidate) => sameSpan(candidate, ref));
  return row !== undefined ? `${row.run} · ${row.worker} · span ${row.span_index + 1}` : `${ref.run} · ${ref.worker}`;
}

/** "Compare picked" works once two spans are picked that are not the pair compared now. */
export function canComparePicks(picks: readonly SpanRef[], current: ComparePair | null): boolean {
  const [base, exp] = picks;
  if (base === undefined || exp === undefined) return false;
  return !(current !== null && sameSpan(base, current.base) && sameSpan(exp, current.exp));
}

/** The run table's title: every span, and how many are loaded while some still load. */
export function runTableTitle(rows: readonly { readonly status: string }[]): string {
  const ready = rows.filter((row) => row.status === "ready").length;
  return `All spans (${formatCount(rows.length)}${ready < rows.length ? `, ${formatCount(ready)} loaded` : ""})`;
}
