// Data pipeline: "is my job waiting for data?" in one place. The verdict with its evidence, the
// time each step waits for data against the time it computes (stacked columns), what to change,
// and MindSpore's MindData pipeline (operators in data-flow order with how full their output
// queues stay, the device queue, the bottleneck operator) when the span has its files.
// Every name shown comes from the trace or the profiler's files: text nodes only.
import {
  fetchDataPipeline,
  operatorsInFlowOrder,
  type DataPipelineData,
  type MindDataOperator,
  type MindDataPipeline,
  type VerdictStatus,
} from "../../api/data_pipeline";
import type { Recommendation } from "../../api/overview";
import { createStackedColumnChart } from "../../components/chart";
import { el, injectStyleOnce, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { passiveTip } from "../../components/tooltip";
import { injectViewStyles } from "../../components/view_styles";
import { keyValueList, metricLabel, spanRefOf } from "../../components/view_parts";
import { stepAxisLabels, stepAxisTitle } from "../../lib/chart_data";
import { formatCount, formatPercent } from "../../lib/format";
import { evidenceLabel, formatAxisDuration, formatEvidenceValue, formatTime, orDash } from "../../lib/metric_format";
import { CATEGORY_INFO } from "../../lib/metrics";
import type { ViewContext, ViewDefinition } from "../types";

const STYLE_ELEMENT_ID = "profscope-data-pipeline-styles";
const CSS = `
.ps-dp-verdict { border-left: 4px solid var(--ps-fg-muted); }
.ps-dp-verdict[data-status="data_bound"] { border-left-color: var(--ps-error-fg); }
.ps-dp-verdict[data-status="some_wait"] { border-left-color: var(--ps-accent); }
.ps-dp-verdict[data-status="not_data_bound"] { border-left-color: var(--ps-ok); }
.ps-dp-headline { font-size: 18px; font-weight: 500; margin: 0 0 4px; }
.ps-dp-verdict[data-status="data_bound"] .ps-dp-headline { color: var(--ps-error-fg); }
.ps-dp-verdict[data-status="not_data_bound"] .ps-dp-headline { color: var(--ps-ok); }
.ps-dp-text { margin: 0 0 10px; }
.ps-dp-chain { display: flex; flex-wrap: wrap; align-items: stretch; gap: 6px; }
.ps-dp-arrow { align-self: center; color: var(--ps-fg-muted); font-size: 18px; }
.ps-dp-op { flex: 0 1 190px; min-width: 150px; border: 1px solid var(--ps-border); border-radius: 6px; padding: 8px 10px;
  background: var(--ps-bg-raised); font-size: 12px; display: flex; flex-direction: column; gap: 4px; }
.ps-dp-op[data-bottleneck="true"] { border: 2px solid var(--ps-error-fg); }
.ps-dp-op h3 { margin: 0; font-size: 13px; overflow-wrap: anywhere; }
.ps-dp-op .ps-dp-badge { color: var(--ps-error-fg); font-weight: 600; font-size: 11px; text-transform: uppercase; }
.ps-dp-muted { color: var(--ps-fg-muted); }
.ps-dp-meter { height: 10px; border-radius: 2px; background: var(--ps-bg); border: 1px solid var(--ps-border); overflow: hidden; }
.ps-dp-meter > span { display: block; height: 100%; }
.ps-dp-notes { margin: 0; padding-left: 18px; color: var(--ps-fg-muted); }
.ps-dp-notes li { margin: 2px 0; }
`;

function injectStyles(doc: Document): void {
  injectViewStyles(doc);
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}

const HEADLINES: Readonly<Record<VerdictStatus, string>> = {
  data_bound: "Data-bound",
  some_wait: "Partly waiting for data",
  not_data_bound: "Not data-bound",
  unknown: "Cannot tell",
};

const DATA_WAIT_DEF =
  "Waiting for data: time inside DataLoader ranges (enumerate(DataLoader)#..., Paddle's Dataloader events) while no " +
  "kernel, copy, collective or runtime call runs: the Overview's DataLoader category.";
const COMPUTE_DEF = "Computing: the Overview's Kernel, Memcpy, Memset, Communication, Runtime and CPU Exec categories.";
const OTHER_DEF = "Other: time in a step that no range of the trace covers.";
const SHARE_DEF = "Share of the step time spent waiting for data, over all steps (total wait / total step time).";
const USAGE_DEF =
  "Output queue usage: the mean of the sampled fill levels of the operator's output queue, divided by its capacity. " +
  "A slow operator leaves the queue after it mostly empty and the queue before it full.";

const LAYERS = [
  { key: "data_wait", label: "Waiting for data", color: CATEGORY_INFO.dataloader.color, definition: DATA_WAIT_DEF },
  { key: "compute", label: "Computing", color: CATEGORY_INFO.kernel.color, definition: COMPUTE_DEF },
  { key: "other", label: "Other", color: CATEGORY_INFO.other.color, definition: OTHER_DEF },
] as const;

function loaderText(data: DataPipelineData): string {
  const loader = data.loader;
  if (loader.calls === 0) return "no data-loading ranges in the trace";
  let workers: string;
  if (loader.num_workers === 0) workers = "no workers: batches are loaded in the training process";
  else if (loader.num_workers !== null) workers = `${formatCount(loader.num_workers)} worker${loader.num_workers === 1 ? "" : "s"}`;
  else workers = loader.multiprocess === true ? "worker processes (how many is not recorded)" : "workers unknown";
  return `${formatCount(loader.calls)} batches fetched, ${workers}`;
}

function verdictSection(data: DataPipelineData): HTMLElement {
  const { verdict, summary } = data;
  const traceBased = verdict.basis === "trace";
  return el(
    "section",
    { className: "ps-section ps-panel ps-dp-verdict", testId: "datapipeline-verdict", attrs: { "data-status": verdict.status } },
    el("h2", {}, "Is the job waiting for data?"),
    el("p", { className: "ps-dp-headline", testId: "datapipeline-verdict-headline" }, HEADLINES[verdict.status]),
    el("p", { className: "ps-dp-text", testId: "datapipeline-verdict-text" }, verdict.text),
    keyValueList([
      {
        label: "Waiting for data",
        tip: SHARE_DEF,
        value: traceBased ? formatPercent(summary.data_share) : "—",
        testId: "datapipeline-share",
      },
      { label: "Mean wait per step", tip: DATA_WAIT_DEF, value: traceBased ? formatTime(summary.mean_data_wait) : "—" },
      { label: "Mean step time", value: formatTime(summary.mean_step_time) },
      { label: "Steps", value: formatCount(summary.steps) },
      { label: "DataLoader", value: loaderText(data), testId: "datapipeline-loader" },
      ...(data.loader.iterators.length > 0 ? [{ label: "Ranges", value: data.loader.iterators.join(", ") }] : []),
    ]),
  );
}

function stepChartSection(data: DataPipelineData, signal: AbortSignal): HTMLElement {
  const readout = el("p", { className: "ps-legend-title", testId: "datapipeline-hover" });
  const cells = new Map<string, HTMLElement>();
  const legend = el(
    "ul",
    { className: "ps-legend" },
    ...LAYERS.map((layer) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = layer.color;
      const value = el("span", { className: "ps-legend-value" });
      cells.set(layer.key, value);
      return el("li", {}, swatch, metricLabel(layer.label, layer.definition), value);
    }),
  );
  const summary = data.summary;
  function show(index: number | null): void {
    const step = index !== null ? data.steps[index] : undefined;
    const total = step !== undefined ? step.dur : summary.mean_step_time;
    readout.textContent = step !== undefined ? `${step.name}: ${formatTime(step.dur)}` : `Mean per step: ${formatTime(total)}`;
    const values: Readonly<Record<(typeof LAYERS)[number]["key"], number>> =
      step !== undefined
        ? { data_wait: step.data_wait, compute: step.compute, other: step.other }
        : { data_wait: summary.mean_data_wait, compute: summary.mean_compute, other: summary.mean_other };
    for (const layer of LAYERS) {
      const value = values[layer.key];
      const cell = cells.get(layer.key);
      if (cell !== undefined) cell.textContent = `${formatTime(value)} (${formatPercent(total > 0 ? value / total : Number.NaN)})`;
    }
  }
  show(null);
  const chart =
    data.steps.length > 0
      ? createStackedColumnChart({
          columnLabels: stepAxisLabels(data.steps.map((step) => step.name)),
          layers: LAYERS.map((layer) => ({
            label: layer.label,
            color: layer.color,
            values: data.steps.map((step) => {
              const value = step[layer.key];
              return Number.isFinite(value) ? value : 0;
            }),
          })),
          valueFormat: formatAxisDuration,
          xLabel: stepAxisTitle(data.steps.map((step) => step.name)),
          yLabel: "Step time",
          ariaLabel: `Time waiting for data and computing in ${data.steps.length} steps`,
          testId: "datapipeline-chart",
          onHover: show,
          signal,
        })
      : el("p", { className: "ps-muted" }, "No steps to chart.");
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "datapipeline-steps" },
    el("h2", {}, "Per step: waiting for data against computing"),
    chart,
    readout,
    legend,
  );
}

function recommendationsSection(recommendations: readonly Recommendation[]): HTMLElement | null {
  if (recommendations.length === 0) return null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "datapipeline-recommendations" },
    el("h2", {}, "What to change"),
    el(
      "ul",
      { className: "ps-recos" },
      ...recommendations.map((recommendation) => {
        const evidence = Object.entries(recommendation.evidence).map(([key, value]) =>
          el("div", {}, el("dt", {}, evidenceLabel(key)), el("dd", {}, formatEvidenceValue(key, value))),
        );
        return el(
          "li",
          { className: "ps-reco", testId: "datapipeline-recommendation", attrs: { "data-id": recommendation.id } },
          el("p", {}, recommendation.text),
          evidence.length > 0 ? el("dl", { className: "ps-evidence" }, ...evidence) : null,
        );
      }),
    ),
  );
}

/** A horizontal meter of a 0..1 value, coloured by how alarming it is in its context. */
function meter(fraction: number | null, color: string, label: string): HTMLElement {
  const fill = el("span", {});
  const width = fraction !== null && Number.isFinite(fraction) ? Math.max(0, Math.min(1, fraction)) : 0;
  fill.style.width = `${width * 100}%`;
  fill.style.background = color;
  return el("div", { className: "ps-dp-meter", attrs: { role: "img", "aria-label": label } }, fill);
}

function operatorCard(op: MindDataOperator, bottleneckId: number | null): HTMLElement {
  const isBottleneck = op.op_id === bottleneckId;
  const usage = op.queue_usage;
  const usageText = orDash(usage, (value) => formatPercent(value));
  const card = el(
    "article",
    {
      className: "ps-dp-op",
      testId: "minddata-operator",
      attrs: { "data-op-id": String(op.op_id), "data-bottleneck": String(isBottleneck) },
    },
    isBottleneck ? el("span", { className: "ps-dp-badge", testId: "minddata-bottleneck-badge" }, "Bottleneck") : null,
    el("h3", {}, op.op_type),
    el("span", { className: "ps-dp-muted" }, `operator ${op.op_id} · ${orDash(op.num_workers, formatCount)} workers`),
    el("span", {}, metricLabel("Output queue", USAGE_DEF), ` ${usageText}`, el("span", { className: "ps-dp-muted" },
      op.queue_capacity !== null ? ` of ${formatCount(op.queue_capacity)}` : "")),
    meter(usage, usage !== null && usage < 0.1 ? "var(--ps-error-fg)" : CATEGORY_INFO.dataloader.color, `output queue ${usageText} full`),
    el("span", { className: "ps-dp-muted" }, `empty in ${orDash(op.queue_empty_rate, (v) => formatPercent(v, 0))} of samples`),
    op.cpu_utilization !== null
      ? el("span", { className: "ps-dp-muted" }, `CPU ${formatPercent(op.cpu_utilization, 0)} (${orDash(op.cpu_per_worker, (v) => formatPercent(v, 0))} per worker)`)
      : null,
  );
  return passiveTip(card, `${op.op_type} (operator ${op.op_id})\nsampled queue sizes: ${op.queue_sizes.join(", ") || "none"}`);
}

function deviceQueueCard(pipeline: MindDataPipeline): HTMLElement | null {
  const queue = pipeline.device_queue;
  if (queue === null) return null;
  const title = queue.source === "dataset_iterator" ? "Dataset iterator queue" : "Device queue";
  return el(
    "article",
    { className: "ps-dp-op", testId: "minddata-device-queue" },
    el("h3", {}, title),
    el("span", {}, `empty for ${formatCount(queue.empty_batches)} of ${formatCount(queue.batches)} batches`),
    meter(queue.empty_rate, "var(--ps-error-fg)", `empty in ${orDash(queue.empty_rate, (v) => formatPercent(v, 0))} of batches`),
    el("span", { className: "ps-dp-muted" }, `capacity ${orDash(queue.capacity, formatCount)} · full ${formatCount(queue.full_batches)} times`),
    queue.mean_batch_time !== null ? el("span", { className: "ps-dp-muted" }, `batch time ${formatTime(queue.mean_batch_time)}`) : null,
    pipeline.get_next !== null
      ? el(
          "span",
          { className: "ps-dp-muted", testId: "minddata-get-next" },
          `device GetNext: empty ${formatCount(pipeline.get_next.empty_batches)} of ${formatCount(pipeline.get_next.batches)}`,
        )
      : null,
  );
}

function mindDataSection(pipeline: MindDataPipeline): HTMLElement {
  const operators = operatorsInFlowOrder(pipeline);
  const bottleneckId = pipeline.bottleneck?.op_id ?? null;
  const chain: (HTMLElement | string)[] = [];
  for (const op of operators) {
    if (chain.length > 0) chain.push(el("span", { className: "ps-dp-arrow", attrs: { "aria-hidden": "true" } }, "→"));
    chain.push(operatorCard(op, bottleneckId));
  }
  const queueCard = deviceQueueCard(pipeline);
  if (queueCard !== null) {
    if (chain.length > 0) chain.push(el("span", { className: "ps-dp-arrow", attrs: { "aria-hidden": "true" } }, "→"));
    chain.push(queueCard);
  }
  const bottleneck = pipeline.bottleneck;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "minddata-section" },
    el("h2", {}, `Dataset pipeline (MindData, device ${pipeline.device_id})`),
    bottleneck !== null
      ? el(
          "p",
          { className: "ps-dp-text", testId: "minddata-bottleneck" },
          `Bottleneck: ${bottleneck.op_type} (operator ${bottleneck.op_id}): ${bottleneck.reason}.`,
        )
      : el("p", { className: "ps-dp-text ps-dp-muted", testId: "minddata-bottleneck" }, "No operator stands out: the queues stay full."),
    chain.length > 0 ? el("div", { className: "ps-dp-chain", testId: "minddata-chain" }, ...chain) : null,
    el("p", { className: "ps-note" }, `Read from ${pipeline.files.join(", ")}.`),
  );
}

function notesSection(notes: readonly string[]): HTMLElement | null {
  if (notes.length === 0) return null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "datapipeline-notes" },
    el("h2", {}, "Notes"),
    el("ul", { className: "ps-dp-notes" }, ...notes.map((note) => el("li", {}, note))),
  );
}

function mountDataPipeline(host: HTMLElement, ctx: ViewContext): void {
  injectStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "datapipeline-page" });
  host.appendChild(page);
  if (ref === null) return;
  void loadInto(
    {
      host: page,
      fetch: (signal) => fetchDataPipeline(ctx.api, ref, signal),
      what: "the data pipeline",
      testIdPrefix: "datapipeline",
      errorTitle: "The data pipeline could not be computed",
      render: (data, signal) =>
        replaceChildren(
          page,
          verdictSection(data),
          stepChartSection(data, signal),
          recommendationsSection(data.recommendations),
          data.minddata !== null ? mindDataSection(data.minddata) : null,
          notesSection(data.notes),
        ),
    },
    ctx.signal,
  );
}

export const dataPipelineView: ViewDefinition = {
  id: "data",
  label: "Data pipeline",
  scope: "span",
  mount: mountDataPipeline,
};
