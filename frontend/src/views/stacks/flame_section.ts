// The Call stacks page's graph of one answer: the summary line, where the Python frames come from, the zoom path
// with its reset, the flame graph with the line for the frame under the pointer, and the top frames by self time
// (a click highlights that name). Without frames or time, the note saying why.
import type { FlameGraphData, FlameWeight } from "../../api/stacks";
import { createBarList } from "../../components/bars";
import { el, replaceChildren } from "../../components/dom";
import { createFlameGraph, type FlameGraph } from "../../components/flame_graph";
import { emptyNote, metricLabel } from "../../components/view_parts";
import { STACKS_DEFINITIONS as DEF, stacksSourceText } from "../../lib/analysis_definitions";
import { buildFlameTree, frameName, pathTo, type FlameTree } from "../../lib/flame_layout";
import { formatCount } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";
import { WEIGHT_LABELS, frameHoverText, selfTimeByName, topSelfTip } from "./model";

const TOP_COUNT = 10;

/** The answer's tree, and its graph when there is one to draw. */
export interface FlameSection {
  readonly tree: FlameTree;
  readonly graph: FlameGraph | null;
}

/** Fill `body` with the answer's graph; `onPickName` is a top frame's name clicked. */
export function showFlameSection(
  body: HTMLElement,
  data: FlameGraphData,
  weight: FlameWeight,
  onPickName: (name: string) => void,
  signal: AbortSignal,
): FlameSection {
  const built = buildFlameTree(data);
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
    return { tree: built, graph: null };
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
      if (node === null) replaceChildren(hoverLine);
      else replaceChildren(hoverLine, frameHoverText(built, node));
    },
    signal,
  });
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

  const all = built.total[0] ?? 0;
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
    topSelfBars(built, onPickName),
  );
  return { tree: built, graph: created };
}

function topSelfBars(tree: FlameTree, onPickName: (name: string) => void): HTMLElement {
  const top = selfTimeByName(tree).slice(0, TOP_COUNT);
  const all = tree.total[0] ?? 0;
  return createBarList(
    top.map((entry) => ({ label: entry.name, value: entry.self, valueText: formatTime(entry.self), tip: topSelfTip(entry, all) })),
    {
      title: `Top ${TOP_COUNT} frames by self time (all call paths)`,
      titleTip: DEF.self,
      testId: "stacks-top-self",
      color: "#e15759",
      emptyText: "No self time recorded.",
      onSelect: (index) => {
        const entry = top[index];
        if (entry !== undefined) onPickName(entry.name);
      },
    },
  );
}
