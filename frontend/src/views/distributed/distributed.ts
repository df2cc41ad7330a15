// Distributed (run level: one span of every worker): computation, communication and their
// overlap per rank, waiting vs transfer, the collectives, and which rank is the straggler.
// URL parameters: distributed.span_index, distributed.sort, distributed.heat (the heat map's figure). The span
// picker is span_picker.ts, the tables rank_tables.ts; the heat map and the cross-rank section load their own routes.
import { fetchDistributed, type DistributedData } from "../../api/distributed";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { emptyStateNote, metricLabel } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { DISTRIBUTED_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { barRanks, barsNoteText, parseSpanIndex, spanIndexCount, stragglerSentence } from "../../lib/distributed_model";
import { singleWorkerState } from "../../lib/empty_states";
import { formatCount } from "../../lib/format";
import type { ViewContext, ViewDefinition } from "../types";
import { loadCrossRank } from "./cross_rank";
import { loadHeatmap } from "./heatmap";
import { stepBars, waitBars } from "./parts";
import { collectivesSection, ranksSection } from "./rank_tables";
import { spanPickerControls } from "./span_picker";

function stragglerCallout(data: DistributedData): HTMLElement | null {
  const straggler = data.straggler;
  if (straggler === null) return null;
  return el(
    "section",
    { className: "ps-callout", testId: "distributed-straggler", attrs: { "data-worker": straggler.worker, "data-rank": String(straggler.rank) } },
    el("p", { className: "ps-callout-main", testId: "distributed-straggler-text" }, stragglerSentence(straggler, data.ranks.length)),
    el("p", { className: "ps-note" }, metricLabel("How the straggler is found", DEF.straggler)),
  );
}

function failedNote(data: DistributedData): HTMLElement | null {
  if (data.failed.length === 0) return null;
  return el(
    "div",
    { className: "ps-warn", testId: "distributed-failed" },
    el("p", {}, `${formatCount(data.failed.length)} worker(s) could not be loaded and are left out:`),
    el("ul", {}, ...data.failed.map((failed) => el("li", {}, `${failed.worker}: ${failed.error}`))),
  );
}

function mountDistributed(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const run = ctx.selection.run;
  const page = el("div", { className: "ps-page", testId: "distributed-page" });
  host.appendChild(page);
  if (run === null) return;

  let spanIndex = parseSpanIndex(ctx.param("span_index"), spanIndexCount(run));
  const controls = spanPickerControls(run, spanIndex, (picked) => {
    spanIndex = picked;
    ctx.setParams({ span_index: spanIndex === 0 ? null : String(spanIndex) });
    load();
  });
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Distributed"), controls, body);
  const loader = createHostLoader(ctx.signal);

  function show(data: DistributedData, signal: AbortSignal): void {
    if (!data.available || data.ranks.length === 0) {
      replaceChildren(
        body,
        failedNote(data),
        emptyStateNote("distributed-unavailable", singleWorkerState(run!.workers.length)),
      );
      return;
    }
    const span = { run: run!.name, spanIndex };
    const stragglerWorker = data.straggler?.worker ?? null;
    const ranks = ranksSection(ctx, span, data, signal);
    const heatmapHost = el("div", { testId: "distributed-heatmap-host" });
    void loadHeatmap(heatmapHost, ctx, span.run, span.spanIndex, signal);
    const crossHost = el("div", { testId: "distributed-cross-host" });
    void loadCrossRank(crossHost, ctx.api, span.run, span.spanIndex, signal);
    // A thousand bars are no chart: beyond a few dozen ranks, the slowest (and the most waiting) are drawn.
    const slowest = barRanks(data.ranks, (rank) => rank.step_time);
    const waiting = barRanks(data.ranks, (rank) => rank.wait);
    const barsNote = barsNoteText(data.ranks.length, slowest, waiting.shown.length);
    replaceChildren(
      body,
      failedNote(data),
      ...(data.notes ?? []).map((note) => el("p", { className: "ps-note", testId: "distributed-note" }, note)),
      stragglerCallout(data),
      barsNote !== null ? el("p", { className: "ps-note", testId: "distributed-bars-note" }, barsNote) : null,
      el("div", { className: "ps-row" }, stepBars(slowest.shown, stragglerWorker), waitBars(waiting.shown, stragglerWorker)),
      data.wait_method !== undefined ? el("p", { className: "ps-note" }, `Wait: collectives ${data.wait_method}.`) : null,
      heatmapHost,
      ranks,
      collectivesSection(ctx, span, data),
      crossHost,
    );
  }

  function load(): void {
    void loader.load({
      host: body,
      fetch: (signal) => fetchDistributed(ctx.api, run!.name, spanIndex, signal),
      what: "every worker's span",
      testIdPrefix: "distributed",
      errorTitle: "The distributed view could not be computed",
      render: show,
    });
  }

  load();
}

export const distributedView: ViewDefinition = {
  id: "distributed",
  label: "Distributed",
  scope: "run",
  mount: mountDistributed,
};
