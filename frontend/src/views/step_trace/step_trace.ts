// Step trace: each step split into iteration gap, forward, backward, optimizer, communication and
// tail, as a stacked column chart and a table. The FP/BP points (operator names that start forward
// and end backward, overriding the trace's markers) live in the URL as `steps.fp_point` and
// `steps.bp_point`; applying them reloads the page's data in place. URL: steps.sort.
import { fetchStepTrace, type StepTraceData, type StepTraceRow } from "../../api/step_trace";
import type { QueryParams } from "../../api/client";
import type { SpanRef } from "../../api/types";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { createStackedColumnChart } from "../../components/chart";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { keyValueList, metricLabel, sectionHead, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { createVirtualTable, type TableColumn } from "../../components/virtual_table";
import { stepAxisLabels, stepAxisTitle } from "../../lib/chart_data";
import { formatPercent } from "../../lib/format";
import { formatAxisDuration, formatLegendMicros, formatMicros, formatMicrosNumber, formatTime } from "../../lib/metric_format";
import {
  PHASE_INFO,
  averageOf,
  chartLayers,
  dominantPhase,
  layerValue,
  markerLines,
  pointParam,
  visibleLayers,
  type StepLayer,
} from "../../lib/step_trace_model";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import type { ViewContext, ViewDefinition } from "../types";

const FP_PARAM = "fp_point";
const BP_PARAM = "bp_point";

interface PointsFormHandlers {
  apply(fpPoint: string, bpPoint: string): void;
}

function pointInput(testId: string, label: string, placeholder: string, value: string): HTMLInputElement {
  const input = el("input", {
    className: "ps-input",
    testId,
    attrs: { type: "text", placeholder, spellcheck: "false", "aria-label": label },
  });
  input.value = value;
  return input;
}

/** The FP/BP point inputs: operator names, empty for the trace's own markers. */
function pointsForm(fpPoint: string, bpPoint: string, handlers: PointsFormHandlers): HTMLElement {
  const fp = pointInput("fp-point-input", "FP point", "first forward operator", fpPoint);
  const bp = pointInput("bp-point-input", "BP point", "last backward operator", bpPoint);
  const apply = el("button", { className: "ps-button", testId: "step-points-apply", attrs: { type: "submit" } }, "Apply");
  const reset = el("button", { className: "ps-button", testId: "step-points-reset", attrs: { type: "button" } }, "Use markers");
  reset.hidden = fpPoint === "" && bpPoint === "";
  const form = el(
    "form",
    { className: "ps-marker-form", testId: "step-points-form" },
    el("label", {}, metricLabel("FP point", "Name of the operator whose first occurrence in a step starts the forward pass.")),
    fp,
    el("label", {}, metricLabel("BP point", "Name of the operator whose last occurrence in a step ends the backward pass.")),
    bp,
    apply,
    reset,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    handlers.apply(pointParam(fp.value), pointParam(bp.value));
  });
  reset.addEventListener("click", () => handlers.apply("", ""));
  form.style.margin = "10px 0";
  return form;
}

function summarySection(data: StepTraceData, form: HTMLElement): HTMLElement {
  const dominant = dominantPhase(data);
  const headline =
    dominant !== null
      ? el(
          "p",
          { className: "ps-callout-main", testId: "step-trace-headline" },
          `${PHASE_INFO[dominant.layer].label} takes the largest share of a step: ${formatPercent(dominant.share)} of ` +
            `${formatTime(data.average.dur ?? Number.NaN)} on average over ${data.average.steps} step(s).`,
        )
      : null;
  const notes =
    data.notes.length > 0
      ? el("ul", { className: "ps-note", testId: "step-trace-notes" }, ...data.notes.map((note) => el("li", {}, note)))
      : null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "step-trace-summary" },
    el("div", { className: "ps-callout" }, headline ?? el("p", {}, "No steps.")),
    form,
    el("h3", {}, "Markers used"),
    keyValueList(markerLines(data).map((line) => ({ label: line.label, value: line.value })), "step-trace-markers"),
    notes,
  );
}

function chartSection(data: StepTraceData, layers: readonly StepLayer[], signal: AbortSignal): HTMLElement {
  const title = el("p", { className: "ps-legend-title", testId: "step-trace-hover" });
  const cells = new Map<StepLayer, HTMLElement>();
  const legend = el(
    "ul",
    { className: "ps-legend", testId: "step-trace-legend" },
    ...layers.map((layer) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = PHASE_INFO[layer].color;
      const value = el("span", { className: "ps-legend-value", attrs: { "data-layer": layer } });
      cells.set(layer, value);
      return el("li", {}, swatch, metricLabel(PHASE_INFO[layer].label, PHASE_INFO[layer].definition), value);
    }),
  );

  function show(index: number | null): void {
    const step = index !== null ? data.steps[index] : undefined;
    const total = step !== undefined ? step.dur : (data.average.dur ?? Number.NaN);
    // In µs, as the steps table under the chart: the legend and the table read the same figures.
    title.textContent = step !== undefined ? `${step.name}: ${formatMicros(step.dur)}` : `Mean per step: ${formatMicros(total)}`;
    for (const layer of layers) {
      const value = step !== undefined ? layerValue(step.phases, step.fp_and_bp, layer) : averageOf(data, layer);
      const cell = cells.get(layer);
      if (cell === undefined) continue;
      cell.textContent = value === null ? "not derived" : formatLegendMicros(value, total);
    }
  }
  show(null);

  const chart =
    data.steps.length > 0
      ? createStackedColumnChart({
          columnLabels: stepAxisLabels(data.steps.map((step) => step.name)),
          layers: chartLayers(data, layers),
          valueFormat: formatAxisDuration,
          xLabel: stepAxisTitle(data.steps.map((step) => step.name)),
          yLabel: "Step time",
          ariaLabel: `Step trace of ${data.steps.length} steps, stacked by phase`,
          testId: "step-trace-chart",
          onHover: show,
          signal,
        })
      : el("p", { className: "ps-muted" }, "No steps to chart.");
  return el("section", { className: "ps-section ps-panel", testId: "step-trace-chart-section" }, el("h2", {}, "Phases per step"), chart, title, legend);
}

interface IndexedStep {
  readonly index: number;
  readonly step: StepTraceRow;
}

function micros(id: string, label: string, tip: string, value: (row: IndexedStep) => number | null, width = 96): TableColumn<IndexedStep> {
  return {
    id,
    label,
    unit: "µs",
    tip,
    width,
    align: "right",
    sortValue: (row) => value(row),
    text: (row) => {
      const v = value(row);
      return v === null ? "—" : formatMicrosNumber(v);
    },
    cellTip: (row) => (value(row) === null ? "Not derived for this step (see its notes)." : null),
  };
}

/** Room for a header label on one line (about 8 px a character at the table's font, plus padding). */
function headerWidth(label: string): number {
  return Math.max(96, 9 * label.length + 12);
}

function stepColumns(data: StepTraceData, layers: readonly StepLayer[]): TableColumn<IndexedStep>[] {
  const columns: TableColumn<IndexedStep>[] = [
    {
      id: "step",
      label: "Step",
      width: 120,
      firstDirection: "asc",
      sortValue: (row) => row.index,
      text: (row) => row.step.name,
      cellTip: (row) => row.step.name,
    },
    micros("dur", "Duration", "The step's duration (its phases add up to it).", (row) => row.step.dur),
    ...layers.map((layer) =>
      micros(layer, PHASE_INFO[layer].label, PHASE_INFO[layer].definition, (row) => layerValue(row.step.phases, row.step.fp_and_bp, layer), headerWidth(PHASE_INFO[layer].label)),
    ),
  ];
  if (data.steps.some((step) => step.dataloader !== null)) {
    columns.push(
      micros(
        "dataloader",
        "Data loading (host)",
        "Host time in data loading ranges of the step (part of the iteration gap). The Overview's DataLoader category " +
          "(waiting for data) counts only the part while no kernel, copy, collective or runtime call runs.",
        (row) => row.step.dataloader,
        120,
      ),
    );
  }
  columns.push(
    micros("forward_start", "Forward start", "When forward starts, from the step's start.", (row) => row.step.forward_start, 108),
    {
      id: "notes",
      label: "Notes",
      width: 200,
      grow: 2,
      sortValue: (row) => row.step.notes.length,
      text: (row) => row.step.notes.join("; "),
      cellTip: (row) => (row.step.notes.length > 0 ? row.step.notes.join("\n") : null),
    },
  );
  return columns;
}

function tableSection(ctx: ViewContext, data: StepTraceData, layers: readonly StepLayer[], routeParams: QueryParams, signal: AbortSignal): HTMLElement {
  const columns = stepColumns(data, layers);
  const table = createVirtualTable<IndexedStep>({
    columns,
    rowKey: (row) => String(row.index),
    filterText: (row) => row.step.name,
    sort: parseSortParam(ctx.param("sort"), columns.map((column) => column.id), { column: "step", direction: "asc" }),
    onSortChange: (next) => ctx.setParams({ sort: formatSortParam(next) }),
    onActivate: (row) => table.setSelected(String(row.index)),
    label: "Steps",
    testId: "step-trace-table",
    emptyText: "No step matches the filter.",
    maxHeight: 420,
    signal,
  });
  table.setRows(data.steps.map((step, index) => ({ index, step })));
  const csv = csvDownloadLink({
    api: ctx.api,
    route: "steptrace",
    params: () => routeParams,
    state: () => ({ sort: table.sortState(), filter: "" }),
    testId: "step-trace-csv",
    what: "the steps",
  });
  return el("section", { className: "ps-section" }, sectionHead("Steps", csv), table.root);
}

function mountStepTrace(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const ref: SpanRef | null = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "steps-page" });
  host.appendChild(page);
  if (ref === null) return;
  let fpPoint = pointParam(ctx.param(FP_PARAM));
  let bpPoint = pointParam(ctx.param(BP_PARAM));
  const loader = createHostLoader(ctx.signal);

  function load(): void {
    void loader.load({
      host: page,
      fetch: (signal) => fetchStepTrace(ctx.api, ref!, { fpPoint, bpPoint }, signal),
      what: "the step trace",
      testIdPrefix: "step-trace",
      errorTitle: "The step trace could not be computed",
      render: (data, signal) => {
        const layers = visibleLayers(data);
        const form = pointsForm(fpPoint, bpPoint, {
          apply: (fp, bp) => {
            if (fp === fpPoint && bp === bpPoint) return;
            fpPoint = fp;
            bpPoint = bp;
            ctx.setParams({ [FP_PARAM]: fp === "" ? null : fp, [BP_PARAM]: bp === "" ? null : bp });
            load();
          },
        });
        replaceChildren(
          page,
          el("h2", {}, "Step trace"),
          summarySection(data, form),
          chartSection(data, layers, signal),
          tableSection(ctx, data, layers, { run: ref!.run, worker: ref!.worker, span: ref!.span, fp_point: fpPoint.trim() || undefined, bp_point: bpPoint.trim() || undefined }, signal),
        );
      },
    });
  }
  load();
}

export const stepTraceView: ViewDefinition = {
  id: "steps",
  label: "Step trace",
  scope: "span",
  mount: mountStepTrace,
};
