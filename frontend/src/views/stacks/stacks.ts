// Call stacks: the span's call tree (Python frames, operators, annotations merged by call
// path) as a flame graph, weighted by host time or by the device time frames launched. A line says where the
// Python frames come from (the trace's Python function events, or the operators' Call stack argument), or why
// there are none and how to record them.
// URL parameters: stacks.weight (host|device), stacks.search.
import { fetchFlameGraph, foldedStacksUrl, isFlameWeight, type FlameGraphData, type FlameWeight } from "../../api/stacks";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { createBarList } from "../../components/bars";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { createFlameGraph, type FlameGraph } from "../../components/flame_graph";
import { emptyNote, metricLabel, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { STACKS_DEFINITIONS as DEF, stacksSourceText } from "../../lib/analysis_definitions";
import { buildFlameTree, frameName, pathTo, searchFrames, type FlameTree } from "../../lib/flame_layout";
import { formatCount, formatPercent } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";
import type { ViewContext, ViewDefinition } from "../types";

const WEIGHT_LABELS: Readonly<Record<FlameWeight, string>> = { host: "Host time", device: "Device time" };
const TOP_COUNT = 10;
const SEARCH_DELAY_MS = 150;

/** Self time summed per frame name (a function called from many places adds up), largest first. */
export function selfTimeByName(tree: FlameTree): { name: string; self: number; calls: number }[] {
  const self = new Map<number, { self: number; calls: number }>();
  for (let node = 1; node < tree.count; node += 1) {
    if ((tree.depth[node] ?? -1) < 0) continue;
    const index = tree.nameIndex[node] ?? -1;
    const entry = self.get(index) ?? { self: 0, calls: 0 };
    entry.self += tree.self[node] ?? 0;
    entry.calls += tree.calls[node] ?? 0;
    self.set(index, entry);
  }
  return [...self.entries()]
    .map(([index, entry]) => ({ name: tree.names[index] ?? "", ...entry }))
    .filter((entry) => entry.self > 0)
    .sort((a, b) => b.self - a.self);
}

function mountStacks(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "stacks-page" });
  host.appendChild(page);
  if (ref === null) return;

  const weightParam = ctx.param("weight");
  let weight: FlameWeight = isFlameWeight(weightParam) ? weightParam : "host";
  let query = ctx.param("search") ?? "";

  const weightButtons = (["host", "device"] as const).map((value) => {
    const button = el(
      "button",
      { testId: `stacks-weight-${value}`, attrs: { type: "button", "aria-pressed": String(value === weight), "data-tip": DEF[value] } },
      WEIGHT_LABELS[value],
    );
    button.addEventListener("click", () => {
      if (value === weight) return;
      weight = value;
      ctx.setParams({ weight: value === "host" ? null : value });
      for (const other of weightButtons) other.setAttribute("aria-pressed", String(other === button));
      updateDownload();
      load();
    });
    return button;
  });
  const searchInput = el("input", {
    className: "ps-input",
    testId: "stacks-search",
    attrs: { type: "search", placeholder: "Highlight frames…", "aria-label": "Highlight frames whose name contains", spellcheck: "false" },
  });
  searchInput.value = query;
  const searchSummary = el("span", { className: "ps-count", testId: "stacks-search-summary", attrs: { "aria-live": "polite" } });
  const download = el("a", { className: "ps-download", testId: "stacks-download" }, "Download folded stacks");
  function updateDownload(): void {
    download.href = foldedStacksUrl(ctx.api, ref!, weight);
    download.setAttribute("download", `stacks.${weight}.folded.txt`);
    download.title = "frame;frame;leaf µs lines, for flamegraph.pl, speedscope or inferno";
  }
  updateDownload();
  const controls = el(
    "div",
    { className: "ps-controls" },
    el("span", { className: "ps-segmented", attrs: { role: "group", "aria-label": "Weight" } }, ...weightButtons),
    el("label", {}, "Search", searchInput),
    download,
    searchSummary,
  );
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Call stacks"), controls, body);

  const loader = createHostLoader(ctx.signal);
  let graph: FlameGraph | null = null;
  let tree: FlameTree | null = null;
  let searchTimer: number | undefined;

  function applySearch(): void {
    if (tree === null || graph === null) return;
    const result = query.trim() === "" ? null : searchFrames(tree, query);
    graph.setSearch(result);
    const all = tree.total[0] ?? 0;
    searchSummary.textContent =
      result === null
        ? ""
        : result.count === 0
          ? "no frame matches"
          : `${formatCount(result.count)} frame${result.count === 1 ? "" : "s"} match · ${formatTime(result.matchedTotal)} (${formatPercent(all > 0 ? result.matchedTotal / all : Number.NaN)} of all)`;
  }

  searchInput.addEventListener("input", () => {
    window.clearTimeout(searchTimer);
    searchTimer = window.setTimeout(() => {
      query = searchInput.value;
      ctx.setParams({ search: query.trim() === "" ? null : query });
      applySearch();
    }, SEARCH_DELAY_MS);
  });
  ctx.signal.addEventListener("abort", () => window.clearTimeout(searchTimer), { once: true });

  function show(data: FlameGraphData, signal: AbortSignal): void {
    const built = buildFlameTree(data);
    tree = built;
    // Where the Python frames come from; without any, why, and how to record them.
    const sourceText = stacksSourceText(data.stacksFrom, data.note);
    const source =
      sourceText === null || data.stacksFrom === null
        ? null
        : el(
            "p",
            { className: data.stacksFrom === "none" ? "ps-note ps-stacks-none" : "ps-note", testId: "stacks-source", attrs: { "data-from": data.stacksFrom } },
            sourceText,
          );
    if (built.count <= 1 || !((built.total[0] ?? 0) > 0)) {
      graph = null;
      replaceChildren(
        body,
        emptyNote(
          "stacks-empty",
          weight === "device" ? "No device time in this span" : "No host frames in this span",
          weight === "device"
            ? "No frame launched GPU work (a CPU-only run, or CUDA activity was not recorded). Switch to host time."
            : "The trace records no operators, annotations or Python frames.",
          source,
        ),
      );
      return;
    }
    const breadcrumb = el("nav", { className: "ps-breadcrumb", testId: "stacks-breadcrumb", attrs: { "aria-label": "Zoom path" } });
    const resetButton = el("button", { className: "ps-button", testId: "stacks-reset", attrs: { type: "button" } }, "Reset zoom");
    const hoverLine = el("p", { className: "ps-hover-line", testId: "stacks-hover" });
    const created = createFlameGraph({
      tree: built,
      formatValue: formatTime,
      testId: "flame-graph",
      ariaLabel: `Flame graph of ${WEIGHT_LABELS[weight].toLowerCase()}: ${formatTime(built.total[0] ?? 0)} in ${formatCount(built.count - 1)} frames`,
      onFocusChange: () => renderBreadcrumb(),
      onHover: (node) => {
        if (node === null) {
          replaceChildren(hoverLine);
          return;
        }
        const all = built.total[0] ?? 0;
        const total = built.total[node] ?? 0;
        replaceChildren(
          hoverLine,
          `${frameName(built, node)} — total ${formatTime(total)} (${formatPercent(all > 0 ? total / all : Number.NaN)}), ` +
            `self ${formatTime(built.self[node] ?? Number.NaN)}, ${formatCount(built.calls[node] ?? Number.NaN)} calls`,
        );
      },
      signal,
    });
    graph = created;
    resetButton.addEventListener("click", () => created.focus(0));

    function renderBreadcrumb(): void {
      const path = pathTo(built, created.focused());
      resetButton.disabled = path.length <= 1;
      const crumbs: (HTMLElement | string)[] = [];
      path.forEach((node, index) => {
        if (index > 0) crumbs.push(el("span", { className: "ps-crumb-sep", attrs: { "aria-hidden": "true" } }, "›"));
        const label = index === 0 ? "all" : frameName(built, node);
        if (index === path.length - 1) crumbs.push(el("strong", { testId: "stacks-focus" }, label));
        else {
          const button = el("button", { className: "ps-link", attrs: { type: "button", title: label } }, label);
          button.addEventListener("click", () => created.focus(node));
          crumbs.push(button);
        }
      });
      replaceChildren(breadcrumb, el("span", { className: "ps-muted" }, "Zoom:"), ...crumbs);
    }
    renderBreadcrumb();

    const top = selfTimeByName(built).slice(0, TOP_COUNT);
    const all = built.total[0] ?? 0;
    const topBars = createBarList(
      top.map((entry) => ({
        label: entry.name,
        value: entry.self,
        valueText: formatTime(entry.self),
        tip: `${entry.name}\nself ${formatTime(entry.self)} (${formatPercent(all > 0 ? entry.self / all : Number.NaN)}) over ${formatCount(entry.calls)} calls — click to highlight`,
      })),
      {
        title: `Top ${TOP_COUNT} frames by self time (all call paths)`,
        titleTip: DEF.self,
        testId: "stacks-top-self",
        color: "#e15759",
        emptyText: "No self time recorded.",
        onSelect: (index) => {
          const entry = top[index];
          if (entry === undefined) return;
          searchInput.value = entry.name;
          query = entry.name;
          ctx.setParams({ search: query });
          applySearch();
        },
      },
    );
    replaceChildren(
      body,
      el(
        "p",
        { className: "ps-note", testId: "stacks-summary" },
        metricLabel(WEIGHT_LABELS[weight], DEF[weight]),
        `: ${formatTime(all)} in ${formatCount(built.count - 1)} frames. Click a frame to zoom in; click the zoomed frame or one above it to go back up (Esc resets).`,
      ),
      source,
      el("div", { className: "ps-controls" }, breadcrumb, resetButton),
      created.root,
      hoverLine,
      topBars,
    );
    applySearch();
  }

  function load(): void {
    graph = null;
    tree = null;
    searchSummary.textContent = "";
    void loader.load({
      host: body,
      fetch: (signal) => fetchFlameGraph(ctx.api, ref!, weight, signal),
      what: "the call stacks",
      testIdPrefix: "stacks",
      errorTitle: "The call stacks could not be computed",
      render: show,
    });
  }

  load();
}

export const stacksView: ViewDefinition = {
  id: "stacks",
  label: "Call stacks",
  scope: "span",
  mount: mountStacks,
};
