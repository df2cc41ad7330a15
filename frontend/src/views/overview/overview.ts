// Overview: where a step's time goes, how busy each GPU and the host CPU are, benchmark
// figures and recommendations. The step marker (a record_function name that marks user steps) lives
// in the URL as `overview.step_marker` and reloads the page's data in place.
import { fetchOverview, type OverviewData } from "../../api/overview";
import { csvDownloadLink } from "../../components/csv_download";
import { emptyStateNote } from "../../components/view_parts";
import { noGpuState } from "../../lib/empty_states";
import { spanFacts } from "../../api/runs";
import type { SpanRef } from "../../api/types";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { keyValueList, metricLabel, spanRefOf } from "../../components/view_parts";
import { passiveTip } from "../../components/tooltip";
import { formatCount } from "../../lib/format";
import { spanOptionLabel, spanOptionTitle } from "../../lib/span_names";
import { formatTime } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF, STEP_SOURCE_TEXT } from "../../lib/metrics";
import type { ViewContext, ViewDefinition } from "../types";
import {
  averagesSection,
  benchmarkSection,
  breakdownChartSection,
  efficiencySection,
  gpuSummarySection,
  hostCpuSection,
  recommendationsSection,
} from "./sections";

const MARKER_PARAM = "step_marker";

/** Where the GPU summary would be: why there is none and how to record it (a span with device work has cards). */
function noGpuNote(data: OverviewData, framework: string | undefined): HTMLElement | null {
  return data.has_device ? null : emptyStateNote("gpu-summary-unavailable", noGpuState(framework));
}

function markerForm(current: string, onApply: (marker: string) => void): HTMLElement {
  const input = el("input", {
    className: "ps-input",
    testId: "step-marker-input",
    attrs: { type: "text", placeholder: "ProfilerStep", spellcheck: "false", "aria-label": "Step marker" },
  });
  input.value = current;
  const apply = el("button", { className: "ps-button", testId: "step-marker-apply", attrs: { type: "submit" } }, "Apply");
  const reset = el("button", { className: "ps-button", attrs: { type: "button" } }, "Use ProfilerStep");
  reset.hidden = current === "";
  const form = el(
    "form",
    { className: "ps-marker-form", testId: "step-marker-form" },
    el("label", {}, metricLabel("Step marker", DEF.stepMarker)),
    input,
    apply,
    reset,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onApply(input.value.trim());
  });
  reset.addEventListener("click", () => onApply(""));
  return form;
}

function configurationSection(
  ctx: ViewContext,
  ref: SpanRef,
  data: OverviewData,
  marker: string,
  onMarker: (marker: string) => void,
): HTMLElement {
  const { worker, spanIndex } = ctx.selection;
  const facts = spanFacts(worker, spanIndex);
  const spanText = worker !== null ? spanOptionLabel(spanIndex, worker.spans.length, ref.span, facts) : ref.span;
  const devices =
    data.devices.length > 0
      ? data.devices.map((device) => device.name).join(", ")
      : data.has_device
        ? "Device activity without device properties"
        : "CPU only";
  const markerMissed =
    marker !== "" && data.step_source !== "user"
      ? el(
          "p",
          { className: "ps-warn", testId: "step-marker-missed" },
          `No range named "${marker}" was found in this span: ${STEP_SOURCE_TEXT[data.step_source]}.`,
        )
      : null;
  return el(
    "section",
    { className: "ps-section ps-panel", testId: "overview-config" },
    el("h2", {}, "Configuration"),
    el(
      "div",
      { className: "ps-config" },
      keyValueList(
        [
          { label: "Run", value: ref.run },
          { label: "Worker", value: ref.worker },
          { label: "Span", value: passiveTip(el("span", { testId: "overview-span" }, spanText), spanOptionTitle(ref.span, facts)) },
          { label: "Devices", value: devices },
        ],
        "overview-selection",
      ),
      keyValueList([
        { label: "Step source", tip: DEF.stepSource, value: STEP_SOURCE_TEXT[data.step_source], testId: "step-source" },
        { label: "Steps", tip: DEF.stepCount, value: formatCount(data.steps.length), testId: "step-count" },
        { label: "Mean step time", tip: DEF.meanStepTime, value: formatTime(data.mean_step_time) },
      ]),
      el("div", {}, markerForm(marker, onMarker), markerMissed),
      ...(data.steps_left_out ?? []).map((step) =>
        el("p", { className: "ps-note", testId: "step-left-out" }, `${step.name} is left out of every figure: ${step.reason}.`),
      ),
    ),
  );
}

function mountOverview(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "overview-page" });
  host.appendChild(page);
  if (ref === null) return;
  let marker = ctx.param(MARKER_PARAM) ?? "";
  /** Aborts the previous load (and its chart) when the marker changes. */
  const loader = createHostLoader(ctx.signal);

  function load(): void {
    void loader.load({
      host: page,
      fetch: (signal) => fetchOverview(ctx.api, ref!, marker, signal),
      what: "the overview",
      testIdPrefix: "overview",
      errorTitle: "The overview could not be computed",
      render: (data, signal) =>
        replaceChildren(
          page,
          configurationSection(ctx, ref!, data, marker, (next) => {
            if (next === marker) return;
            marker = next;
            ctx.setParams({ [MARKER_PARAM]: next === "" ? null : next });
            load();
          }),
          gpuSummarySection(data) ?? noGpuNote(data, ctx.selection.run?.framework),
          hostCpuSection(data, signal),
          breakdownChartSection(
            data,
            signal,
            csvDownloadLink({
              api: ctx.api,
              route: "overview",
              params: () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, step_marker: marker === "" ? undefined : marker }),
              state: () => ({ table: "steps", sort: null, filter: "" }),
              testId: "breakdown-csv",
              what: "each step's time by category",
            }),
          ),
          el("div", { className: "ps-row" }, averagesSection(data), benchmarkSection(data)),
          efficiencySection(data),
          recommendationsSection(data),
        ),
    });
  }
  load();
}

export const overviewView: ViewDefinition = {
  id: "overview",
  label: "Overview",
  scope: "span",
  mount: mountOverview,
};
