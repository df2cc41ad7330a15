// Call stacks: the span's call tree (Python frames, operators, annotations merged by call
// path) as a flame graph, weighted by host time or by the device time frames launched. A line says where the
// Python frames come from (the trace's Python function events, or the operators' Call stack argument), or why
// there are none and how to record them.
// URL parameters: stacks.weight (host|device), stacks.search. The page keeps the choices and the loading; the
// controls are controls.ts, the graph of an answer flame_section.ts.
import { fetchFlameGraph, isFlameWeight, type FlameGraphData, type FlameWeight } from "../../api/stacks";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { searchFrames } from "../../lib/flame_layout";
import type { ViewContext, ViewDefinition } from "../types";
import { createStacksControls } from "./controls";
import { showFlameSection, type FlameSection } from "./flame_section";
import { searchSummaryText } from "./model";

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
  let shown: FlameSection | null = null;

  const controls = createStacksControls(
    ctx.api,
    ref,
    { weight, query },
    {
      weight: (value) => {
        weight = value;
        ctx.setParams({ weight: value === "host" ? null : value });
        load();
      },
      search: (text) => {
        query = text;
        ctx.setParams({ search: query.trim() === "" ? null : query });
        applySearch();
      },
    },
    ctx.signal,
  );
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Call stacks"), controls.root, body);
  const loader = createHostLoader(ctx.signal);

  function applySearch(): void {
    if (shown === null || shown.graph === null) return;
    const result = query.trim() === "" ? null : searchFrames(shown.tree, query);
    shown.graph.setSearch(result);
    controls.setSummary(searchSummaryText(result, shown.tree.total[0] ?? 0));
  }

  function pickName(name: string): void {
    controls.setSearchText(name);
    query = name;
    ctx.setParams({ search: query });
    applySearch();
  }

  function load(): void {
    shown = null;
    controls.setSummary("");
    void loader.load({
      host: body,
      fetch: (signal) => fetchFlameGraph(ctx.api, ref!, weight, signal),
      what: "the call stacks",
      testIdPrefix: "stacks",
      errorTitle: "The call stacks could not be computed",
      render: (data: FlameGraphData, signal: AbortSignal) => {
        shown = showFlameSection(body, data, weight, pickName, signal);
        applySearch();
      },
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
