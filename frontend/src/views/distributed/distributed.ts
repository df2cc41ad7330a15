// Distributed (run level: one span of every worker): computation, communication and their
// overlap per rank, waiting vs transfer, the collectives, and which rank is the straggler.
// URL parameters: distributed.span_index, distributed.sort, distributed.heat (the heat map's figure).
import { fetchDistributed, type DistributedData, type RankRow } from "../../api/distributed";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader, loadInto } from "../../components/loader";
import { emptyStateNote, metricLabel, sectionHead } from "../../components/view_parts";
import { singleWorkerState } from "../../lib/empty_states";
import { injectViewStyles } from "../../components/view_styles";
import { createVirtualTable } from "../../components/virtual_table";
import { DISTRIBUTED_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { barRanks, parseSpanIndex, spanIndexCount, stragglerSentence } from "../../lib/distributed_model";
import { fetchCrossRank } from "../../api/cross_rank";
import { spanFacts } from "../../api/runs";
import { crossRankSection } from "./cross_rank";
import { formatCount } from "../../lib/format";
import { spanFactsText } from "../../lib/span_names";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import { collectivesTable, rankColumns, stepBars, waitBars } from "./parts";
import { fetchStepMatrix } from "../../api/rank_steps";
import { createHeatmap } from "./heatmap";
import type { ViewContext, ViewDefinition } from "../types";

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

  const spanCount = spanIndexCount(run);
  let spanIndex = parseSpanIndex(ctx.param("span_index"), spanCount);
  const spanPicker = el("select", { className: "ps-select", testId: "distributed-span-index", attrs: { "aria-label": "Span index" } });
  for (let index = 0; index < Math.max(spanCount, 1); index += 1) {
    // The first worker's span at this index tells when it ran (every worker's span of one index is one window).
    const first = run.workers.find((worker) => index < worker.spans.length);
    const facts = spanFactsText(spanFacts(first, index));
    spanPicker.appendChild(new Option(`span ${index + 1} of ${Math.max(spanCount, 1)}${facts !== null ? ` · ${facts}` : ""}`, String(index)));
  }
  spanPicker.value = String(spanIndex);
  spanPicker.disabled = spanCount < 2;
  const controls = el(
    "div",
    { className: "ps-controls" },
    el("label", {}, "Span of every worker", spanPicker),
    el("span", { className: "ps-note" }, `Run ${run.name}: ${formatCount(run.workers.length)} worker(s), one span of each compared.`),
  );
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Distributed"), controls, body);

  const loader = createHostLoader(ctx.signal);
  spanPicker.addEventListener("change", () => {
    spanIndex = parseSpanIndex(spanPicker.value, spanCount);
    ctx.setParams({ span_index: spanIndex === 0 ? null : String(spanIndex) });
    load();
  });

  function show(data: DistributedData, signal: AbortSignal): void {
    if (!data.available || data.ranks.length === 0) {
      replaceChildren(
        body,
        failedNote(data),
        emptyStateNote("distributed-unavailable", singleWorkerState(run!.workers.length)),
      );
      return;
    }
    const stragglerWorker = data.straggler?.worker ?? null;
    const columns = rankColumns();
    const table = createVirtualTable<RankRow>({
      columns,
      rowKey: (row) => row.worker,
      filterText: (row) => row.worker,
      sort: parseSortParam(ctx.param("sort"), columns.map((column) => column.id), { column: "rank", direction: "asc" }),
      onSortChange: (next) => ctx.setParams({ sort: formatSortParam(next) }),
      onActivate: (row) => table.setSelected(row.worker),
      label: "Ranks",
      testId: "distributed-rank-table",
      maxHeight: 360,
      signal,
    });
    table.setRows(data.ranks);
    if (stragglerWorker !== null) table.setSelected(stragglerWorker);
    const heatmapHost = el("div", { testId: "distributed-heatmap-host" });
    void loadHeatmap(heatmapHost, signal);
    const crossHost = el("div", { testId: "distributed-cross-host" });
    void loadCrossRank(crossHost, signal);
    // A thousand bars are no chart: beyond a few dozen ranks, the slowest (and the most waiting) are drawn.
    const slowest = barRanks(data.ranks, (rank) => rank.step_time);
    const waiting = barRanks(data.ranks, (rank) => rank.wait);
    const barsNote =
      slowest.hidden > 0
        ? el(
            "p",
            { className: "ps-note", testId: "distributed-bars-note" },
            `${formatCount(data.ranks.length)} ranks: the charts show the ${formatCount(slowest.shown.length)} with the longest step and the ${formatCount(waiting.shown.length)} that waited most; the heat map and the table below have every rank.`,
          )
        : null;
    replaceChildren(
      body,
      failedNote(data),
      ...(data.notes ?? []).map((note) => el("p", { className: "ps-note", testId: "distributed-note" }, note)),
      stragglerCallout(data),
      barsNote,
      el("div", { className: "ps-row" }, stepBars(slowest.shown, stragglerWorker), waitBars(waiting.shown, stragglerWorker)),
      data.wait_method !== undefined ? el("p", { className: "ps-note" }, `Wait: collectives ${data.wait_method}.`) : null,
      heatmapHost,
      el("section", {}, sectionHead("Ranks (mean per step)", csv("ranks", () => table.sortState())), table.root),
      el(
        "section",
        {},
        sectionHead("Collectives (over the span, every rank)", csv("collectives", () => null)),
        collectivesTable(data.collectives),
      ),
      crossHost,
    );
  }

  /** Collectives matched across ranks, bandwidth per kind and the straggler table (their own route). */
  function loadCrossRank(host: HTMLElement, signal: AbortSignal): Promise<void> {
    return loadInto(
      {
        host,
        fetch: (fetchSignal) => fetchCrossRank(ctx.api, run!.name, spanIndex, fetchSignal),
        what: "the collectives across ranks",
        testIdPrefix: "cross",
        errorTitle: "The collectives across ranks could not be computed",
        render: (data, renderSignal) =>
          replaceChildren(host, crossRankSection(data, { api: ctx.api, run: run!.name, spanIndex, signal: renderSignal })),
      },
      signal,
    );
  }

  /** The rank × step heat map, below the per-rank bars (its own route: the matrix of every rank's steps). */
  function loadHeatmap(host: HTMLElement, signal: AbortSignal): Promise<void> {
    return loadInto(
      {
        host,
        fetch: (fetchSignal) => fetchStepMatrix(ctx.api, run!.name, spanIndex, fetchSignal),
        what: "the rank × step heat map",
        testIdPrefix: "heatmap",
        errorTitle: "The rank × step heat map could not be computed",
        render: (matrix, renderSignal) =>
          replaceChildren(
            host,
            createHeatmap(matrix, {
              api: ctx.api,
              run: run!.name,
              spanIndex,
              metric: ctx.param("heat"),
              onMetricChange: (metric) => ctx.setParams({ heat: metric === "step_time" ? null : metric }),
              onOpen: (worker, span, window) =>
                ctx.navigate("trace", { start: String(window.start), end: String(window.end), select: null }, { worker, span }),
              signal: renderSignal,
            }),
          ),
      },
      signal,
    );
  }

  function csv(table: "ranks" | "collectives", sort: () => SortState | null): HTMLElement {
    return csvDownloadLink({
      api: ctx.api,
      route: "distributed",
      params: () => ({ run: run!.name, span_index: spanIndex }),
      state: () => ({ table, sort: sort(), filter: "" }),
      testId: `distributed-${table}-csv`,
      what: `the ${table}`,
    });
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
