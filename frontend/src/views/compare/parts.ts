// The parts of the Compare page built from a `compare` answer: the pair pickers, the step
// time headline with paired stacked bars (baseline above experiment, on one scale), the
// per-category table with delta and ratio, and the notes.
import { pairedCategory, type CompareData, type CompareGrouping, type Paired } from "../../api/compare";
import type { BreakdownCategory } from "../../api/overview";
import { el } from "../../components/dom";
import { passiveTip } from "../../components/tooltip";
import { keyValueList, metricLabel } from "../../components/view_parts";
import { formatCount, formatPercent } from "../../lib/format";
import { formatMicros } from "../../lib/metric_format";
import { EFFICIENCY_DEFINITIONS } from "../../lib/efficiency";
import { CATEGORY_INFO, METRIC_DEFINITIONS as DEF, STEP_SOURCE_TEXT } from "../../lib/metrics";
import {
  autoChoiceText,
  formatChange,
  formatRatio,
  formatSignedMicrosUnit,
  parseBatchSize,
  sameSpan,
  sampleTimeSentence,
  spanKey,
  stepTimeSentence,
  timeDirection,
  type AutoChoice,
  type ComparePair,
  type SpanChoice,
} from "./model";

const GROUPINGS: readonly { value: CompareGrouping; label: string }[] = [
  { value: "name", label: "Operator name" },
  { value: "input_shape", label: "Operator + input shapes" },
];

export const PAIR_DEF = {
  delta: "Experiment minus baseline, in mean time per step.",
  ratio: "Experiment / baseline (below 1: the experiment spends less time).",
  bars: "Mean step time of each span, stacked by category, on one scale: the longer bar is the slower span.",
  batch:
    "Samples per step of this span. From the writer's manifest (batch_size=) when it recorded one; a number " +
    "entered here wins. With both known, Compare also compares per sample (step time / batch size), which is " +
    "the fair measure when the batch sizes differ.",
  perSample: "Mean step time divided by the span's batch size: the time one sample costs.",
  throughput: "Samples per second: batch size / mean step time. More is better.",
} as const;

/** Batch sizes of the two sides. */
export interface BatchSizes {
  readonly base: number | null;
  readonly exp: number | null;
}

export interface PairPickerOptions {
  readonly choices: readonly SpanChoice[];
  readonly pair: ComparePair;
  readonly groupBy: CompareGrouping;
  readonly onPair: (pair: ComparePair) => void;
  readonly onGroupBy: (groupBy: CompareGrouping) => void;
  /** Entered in the page (URL state). */
  readonly batch: BatchSizes;
  /** From the manifests (shown as the inputs' placeholders). */
  readonly manifestBatch: BatchSizes;
  readonly onBatch: (batch: BatchSizes) => void;
  /** How the page chose a span the link did not name; null once the pair is the person's. */
  readonly auto: AutoChoice | null;
}

/** The note under the pickers that says a span was chosen automatically, and how it differs from the baseline. */
function autoNote(auto: AutoChoice | null): HTMLElement | null {
  if (auto === null) return null;
  const warn = auto.differences.length > 0 || auto.reason === "only_span";
  return el(
    "p",
    {
      className: `ps-cmp-auto${warn ? " ps-cmp-auto-warn" : ""}`,
      testId: "compare-auto-note",
      attrs: { "data-reason": auto.reason, "data-differs": auto.differences.map((d) => d.what).join(" ") },
    },
    autoChoiceText(auto),
  );
}

function batchInput(which: "base" | "exp", options: PairPickerOptions, changed: () => void): HTMLInputElement {
  const known = options.manifestBatch[which];
  const input = el("input", {
    className: "ps-input ps-cmp-batch",
    testId: `compare-batch-${which}`,
    attrs: {
      type: "number",
      min: "1",
      step: "1",
      inputmode: "numeric",
      placeholder: known !== null ? `${known} (manifest)` : "unknown",
      "aria-label": `${which === "base" ? "Baseline" : "Experiment"} batch size`,
    },
  });
  const entered = options.batch[which];
  input.value = entered !== null ? String(entered) : "";
  input.addEventListener("change", changed);
  return input;
}

function spanSelect(testId: string, label: string, choices: readonly SpanChoice[], selected: ComparePair["base"]): HTMLSelectElement {
  const select = el("select", { className: "ps-select", testId, attrs: { "aria-label": label } });
  const known = choices.some((choice) => sameSpan(choice.ref, selected));
  // A linked span the run list does not (yet) have stays selectable, so the link is kept.
  const all = known ? choices : [{ ref: selected, label: `${selected.run} · ${selected.worker} · ${selected.span} (not found)`, title: "" }, ...choices];
  let group: HTMLOptGroupElement | null = null;
  for (const choice of all) {
    if (group === null || group.label !== choice.ref.run) {
      group = el("optgroup", { attrs: { label: choice.ref.run } });
      select.appendChild(group);
    }
    const option = new Option(choice.label, spanKey(choice.ref));
    if (choice.title !== "") option.title = choice.title;
    group.appendChild(option);
  }
  select.value = spanKey(selected);
  return select;
}

/** Baseline and experiment pickers (any run, worker and span each), a swap button and the operator grouping. */
export function pairPickers(options: PairPickerOptions): HTMLElement {
  const refOf = (key: string): ComparePair["base"] | null =>
    options.choices.find((choice) => spanKey(choice.ref) === key)?.ref ?? null;
  const base = spanSelect("compare-base", "Baseline span", options.choices, options.pair.base);
  const exp = spanSelect("compare-exp", "Experiment span", options.choices, options.pair.exp);
  const changed = (): void => {
    const next = { base: refOf(base.value) ?? options.pair.base, exp: refOf(exp.value) ?? options.pair.exp };
    options.onPair(next);
  };
  base.addEventListener("change", changed);
  exp.addEventListener("change", changed);
  const swap = el("button", { className: "ps-button", testId: "compare-swap", attrs: { type: "button", title: "Swap baseline and experiment" } }, "⇄ Swap");
  swap.addEventListener("click", () => options.onPair({ base: options.pair.exp, exp: options.pair.base }));
  const grouping = el("select", { className: "ps-select", testId: "compare-group-by", attrs: { "aria-label": "Join operators by" } });
  for (const option of GROUPINGS) grouping.appendChild(new Option(option.label, option.value));
  grouping.value = options.groupBy;
  grouping.addEventListener("change", () => {
    const chosen = GROUPINGS.find((option) => option.value === grouping.value);
    if (chosen !== undefined) options.onGroupBy(chosen.value);
  });
  const batchChanged = (): void => options.onBatch({ base: parseBatchSize(baseBatch.value), exp: parseBatchSize(expBatch.value) });
  const baseBatch = batchInput("base", options, batchChanged);
  const expBatch = batchInput("exp", options, batchChanged);
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "compare-pair" },
    el("h2", {}, "Compare two spans"),
    el(
      "div",
      { className: "ps-cmp-pair" },
      el("label", {}, el("span", { className: "ps-cmp-role ps-cmp-role-base" }, "Baseline"), base),
      el("div", { className: "ps-cmp-actions" }, swap),
      el("label", {}, el("span", { className: "ps-cmp-role ps-cmp-role-exp" }, "Experiment"), exp),
      el("label", {}, "Join operators by", grouping),
    ),
    autoNote(options.auto),
    el(
      "div",
      { className: "ps-cmp-batches" },
      metricLabel("Batch size", PAIR_DEF.batch),
      el("label", {}, el("span", { className: "ps-cmp-role ps-cmp-role-base" }, "Baseline"), baseBatch),
      el("label", {}, el("span", { className: "ps-cmp-role ps-cmp-role-exp" }, "Experiment"), expBatch),
    ),
  );
}

function deltaCell(paired: Paired, testId?: string): HTMLElement {
  const direction = timeDirection(paired.base, paired.exp);
  return el(
    "td",
    { className: `ps-num${direction === "same" ? "" : ` ps-cmp-${direction}`}`, ...(testId !== undefined ? { testId } : {}) },
    formatSignedMicrosUnit(paired.delta),
  );
}

function ratioCell(paired: Paired, testId?: string): HTMLElement {
  return el("td", { className: "ps-num", ...(testId !== undefined ? { testId } : {}) }, formatRatio(paired.ratio));
}

function stackedBar(data: CompareData, which: "base" | "exp", scale: number): HTMLElement {
  const segments = data.categories.map((category) => {
    const value = data.breakdown[which][category];
    const segment = el("span", { className: "ps-cmp-segment" });
    segment.style.width = `${scale > 0 && Number.isFinite(value) ? (value / scale) * 100 : 0}%`;
    segment.style.background = CATEGORY_INFO[category].color;
    const total = data.step_time[which];
    return passiveTip(segment, `${CATEGORY_INFO[category].label}: ${formatMicros(value)} (${formatPercent(total > 0 ? value / total : Number.NaN)})`);
  });
  return el(
    "div",
    { className: "ps-cmp-track", testId: `compare-bar-${which}`, attrs: { role: "img", "aria-label": `${which === "base" ? "Baseline" : "Experiment"}: ${formatMicros(data.step_time[which])} per step` } },
    el("div", { className: "ps-cmp-stack" }, ...segments),
  );
}

function sideLabel(data: CompareData, which: "base" | "exp"): HTMLElement {
  const info = data[which];
  const label = el(
    "div",
    { className: "ps-cmp-bar-label" },
    el("span", { className: `ps-cmp-role ps-cmp-role-${which}` }, which === "base" ? "Baseline" : "Experiment"),
    el("small", {}, `${info.run} · ${info.worker}`),
  );
  return passiveTip(label, `${info.run} · ${info.worker} · ${info.span}`);
}

/** Headline, paired stacked bars and the per-category table. */
export function stepTimeSection(data: CompareData): HTMLElement {
  const scale = Math.max(data.step_time.base, data.step_time.exp);
  const direction = timeDirection(data.step_time.base, data.step_time.exp);
  const headline = el(
    "p",
    { className: `ps-cmp-headline${direction === "same" ? "" : ` ps-cmp-${direction}`}`, testId: "compare-headline" },
    stepTimeSentence(data.step_time, data.per_sample !== null),
  );
  const perSample = data.per_sample;
  const sampleDirection = perSample !== null ? timeDirection(perSample.base, perSample.exp) : "same";
  const sampleHeadline =
    perSample === null
      ? el(
          "p",
          { className: "ps-note", testId: "compare-per-sample-missing" },
          "Per sample: enter the batch sizes above (or record batch_size= with the writer) to compare the time per sample as well.",
        )
      : el(
          "p",
          { className: `ps-cmp-headline${sampleDirection === "same" ? "" : ` ps-cmp-${sampleDirection}`}`, testId: "compare-headline-sample" },
          sampleTimeSentence(perSample),
          el(
            "span",
            { className: "ps-cmp-throughput" },
            ` Throughput ${throughputText(perSample.samples_per_second.base)} → ${throughputText(perSample.samples_per_second.exp)} samples/s` +
              ` (batch ${formatCount(data.base.batch_size ?? 0)} → ${formatCount(data.exp.batch_size ?? 0)}).`,
          ),
        );
  const sides = data.mfu;
  const mfu =
    sides !== undefined && (sides.base !== null || sides.exp !== null)
      ? el(
          "p",
          { className: "ps-note", testId: "compare-mfu" },
          metricLabel("Model FLOPs utilization", EFFICIENCY_DEFINITIONS.mfu),
          `: ${sides.base === null ? "n/a" : formatPercent(sides.base)} → ${sides.exp === null ? "n/a" : formatPercent(sides.exp)}.`,
        )
      : null;
  const bars = el(
    "div",
    { className: "ps-cmp-bars", testId: "compare-bars" },
    sideLabel(data, "base"),
    stackedBar(data, "base", scale),
    // In the table's unit: the bars and the table below them read the same figures.
    el("span", { className: "ps-cmp-bar-value", testId: "compare-bar-value-base" }, formatMicros(data.step_time.base)),
    sideLabel(data, "exp"),
    stackedBar(data, "exp", scale),
    el("span", { className: "ps-cmp-bar-value", testId: "compare-bar-value-exp" }, formatMicros(data.step_time.exp)),
  );
  const legend = el(
    "ul",
    { className: "ps-legend" },
    ...data.categories.map((category) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = CATEGORY_INFO[category].color;
      return el("li", {}, swatch, metricLabel(CATEGORY_INFO[category].label, CATEGORY_INFO[category].definition));
    }),
  );
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "compare-step-time" },
    el("h2", {}, metricLabel("Step time", PAIR_DEF.bars)),
    headline,
    sampleHeadline,
    mfu,
    bars,
    legend,
    categoryTable(data, scale),
  );
}

function throughputText(value: number | null): string {
  return value === null || !Number.isFinite(value) ? "—" : formatCount(Math.round(value));
}

function miniBars(paired: Paired, color: string, scale: number): HTMLElement {
  const bar = (value: number, className: string): HTMLElement => {
    const span = el("span", { className });
    span.style.width = `${scale > 0 && Number.isFinite(value) ? Math.max(0, (value / scale) * 100) : 0}%`;
    span.style.background = color;
    return span;
  };
  return el("span", { className: "ps-cmp-mini", attrs: { "aria-hidden": "true" } }, bar(paired.base, "ps-cmp-mini-base"), bar(paired.exp, "ps-cmp-mini-exp"));
}

function categoryRow(data: CompareData, category: BreakdownCategory, scale: number): HTMLElement {
  const info = CATEGORY_INFO[category];
  const paired = pairedCategory(data.breakdown, category);
  const swatch = el("span", { className: "ps-swatch" });
  swatch.style.background = info.color;
  return el(
    "tr",
    { attrs: { "data-category": category } },
    el("td", {}, swatch, metricLabel(info.label, info.definition)),
    el("td", { className: "ps-num" }, formatMicros(paired.base)),
    el("td", { className: "ps-num" }, formatMicros(paired.exp)),
    el("td", {}, miniBars(paired, info.color, scale)),
    deltaCell(paired, `compare-delta-${category}`),
    el("td", { className: "ps-num" }, formatChange(paired.ratio)),
    ratioCell(paired, `compare-ratio-${category}`),
  );
}

function categoryTable(data: CompareData, scale: number): HTMLElement {
  const maxCategory = Math.max(0, ...data.categories.flatMap((c) => [data.breakdown.base[c], data.breakdown.exp[c]]).filter(Number.isFinite));
  const head = el(
    "tr",
    {},
    el("th", {}, "Category"),
    el("th", { className: "ps-num" }, metricLabel("Baseline", DEF.meanStepTime)),
    el("th", { className: "ps-num" }, metricLabel("Experiment", DEF.meanStepTime)),
    el("th", {}, ""),
    el("th", { className: "ps-num" }, metricLabel("Δ per step", PAIR_DEF.delta)),
    el("th", { className: "ps-num" }, "Change"),
    el("th", { className: "ps-num" }, metricLabel("Ratio", PAIR_DEF.ratio)),
  );
  const total = el(
    "tr",
    {},
    el("td", {}, metricLabel("Step time", DEF.meanStepTime)),
    el("td", { className: "ps-num", testId: "compare-step-base" }, formatMicros(data.step_time.base)),
    el("td", { className: "ps-num", testId: "compare-step-exp" }, formatMicros(data.step_time.exp)),
    el("td", {}, miniBars(data.step_time, "var(--ps-fg-muted)", scale)),
    deltaCell(data.step_time, "compare-delta-step"),
    el("td", { className: "ps-num" }, formatChange(data.step_time.ratio)),
    ratioCell(data.step_time, "compare-ratio-step"),
  );
  const footer: HTMLElement[] = [total];
  const perSample = data.per_sample;
  if (perSample !== null) {
    footer.push(
      el(
        "tr",
        { testId: "compare-sample-row" },
        el("td", {}, metricLabel("Time per sample", PAIR_DEF.perSample)),
        el("td", { className: "ps-num", testId: "compare-sample-base" }, formatMicros(perSample.base)),
        el("td", { className: "ps-num", testId: "compare-sample-exp" }, formatMicros(perSample.exp)),
        el("td", {}, miniBars(perSample, "var(--ps-fg-muted)", Math.max(perSample.base, perSample.exp))),
        deltaCell(perSample, "compare-delta-sample"),
        el("td", { className: "ps-num" }, formatChange(perSample.ratio)),
        ratioCell(perSample, "compare-ratio-sample"),
      ),
      el(
        "tr",
        { testId: "compare-throughput-row" },
        el("td", {}, metricLabel("Samples per second", PAIR_DEF.throughput)),
        el("td", { className: "ps-num" }, throughputText(perSample.samples_per_second.base)),
        el("td", { className: "ps-num" }, throughputText(perSample.samples_per_second.exp)),
        el("td", {}, ""),
        el("td", {}, ""),
        el("td", { className: "ps-num" }, formatChange(perSample.samples_per_second.ratio)),
        el("td", { className: "ps-num" }, formatRatio(perSample.samples_per_second.ratio)),
      ),
    );
  }
  return el(
    "table",
    { className: "ps-table", testId: "compare-categories" },
    el("thead", {}, head),
    el("tbody", {}, ...data.categories.map((category) => categoryRow(data, category, maxCategory))),
    el("tfoot", {}, ...footer),
  );
}

function sideFacts(data: CompareData, which: "base" | "exp"): HTMLElement {
  const info = data[which];
  return el(
    "div",
    {},
    el("h3", {}, el("span", { className: `ps-cmp-role ps-cmp-role-${which}` }, which === "base" ? "Baseline" : "Experiment")),
    keyValueList(
      [
        { label: "Run", value: info.run },
        { label: "Worker", value: info.worker },
        { label: "Span", value: info.span },
        { label: "Devices", value: info.devices.length > 0 ? info.devices.join(", ") : info.has_device ? "Device activity without device properties" : "CPU only" },
        { label: "Steps", tip: DEF.stepCount, value: `${formatCount(info.steps)} (${STEP_SOURCE_TEXT[info.step_source]})` },
        {
          label: "Batch size",
          tip: PAIR_DEF.batch,
          value: info.batch_size === null ? "unknown" : `${formatCount(info.batch_size)} (${info.batch_size_source === "page" ? "entered" : "manifest"})`,
        },
        { label: "Framework", value: info.framework },
      ],
      `compare-facts-${which}`,
    ),
  );
}

/** Which spans are compared: run, worker, span, devices, steps, framework of each. */
export function pairFactsSection(data: CompareData): HTMLElement {
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "compare-facts" },
    el("h2", {}, "The two spans"),
    el("div", { className: "ps-row" }, sideFacts(data, "base"), sideFacts(data, "exp")),
  );
}

/** What a reader must know before trusting the deltas (different hardware, step counts, ...). */
export function notesSection(data: CompareData): HTMLElement | null {
  if (data.notes.length === 0) return null;
  return el(
    "section",
    { className: "ps-cmp-callout", testId: "compare-notes" },
    el(
      "ul",
      { className: "ps-cmp-notes" },
      ...data.notes.map((note) => el("li", { testId: "compare-note", attrs: { "data-id": note.id } }, note.text)),
    ),
  );
}
