// The Distributed view's rank × step heat map (like a cluster view): one canvas as wide as the page, whatever
// the number of ranks (rows up to 28 px; 1,000 ranks are 560 rows of pixels, each the worst of its ranks), a text-only tooltip with
// the cell's figures, a click that opens that rank's step in the trace viewer. The drawing, the axes' labels and
// the legend are heatmap_canvas.ts.
import { fetchStepMatrix, type StepMatrix } from "../../api/rank_steps";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { injectRanksStyles } from "../../components/ranks_styles";
import { csvDownloadLink } from "../../components/csv_download";
import { metricLabel, sectionHead } from "../../components/view_parts";
import type { ApiClient } from "../../api/client";
import {
  HEAT_DEFINITIONS,
  HEAT_METRICS,
  type CellHit,
  type HeatMetric,
  cellAt,
  cellLines,
  cellWindow,
  cellsOf,
  columnWidth,
  isHeatMetric,
  rowLayout,
  tipPosition,
} from "../../lib/heatmap_model";
import { formatCount } from "../../lib/format";
import type { ViewContext } from "../types";
import { drawHeatAxes, drawHeatCells, heatLegend, sizeHeatCanvas } from "./heatmap_canvas";

export interface HeatmapOptions {
  readonly api: ApiClient;
  readonly run: string;
  readonly spanIndex: number;
  readonly metric: string | null;
  readonly onMetricChange: (metric: HeatMetric) => void;
  /** A cell clicked: open the worker's span at the step's window (its own trace time, µs). */
  readonly onOpen: (worker: string, span: string, window: { start: number; end: number }) => void;
  readonly signal: AbortSignal;
}

/** The heat map section; null when there is nothing to draw. */
export function createHeatmap(matrix: StepMatrix, options: HeatmapOptions): HTMLElement | null {
  if (matrix.ranks.length === 0 || matrix.steps.length === 0) return null;
  const doc = document;
  injectRanksStyles(doc);
  let metric: HeatMetric = isHeatMetric(options.metric) ? options.metric : "step_time";

  const picker = el("select", { className: "ps-select", testId: "heatmap-metric", attrs: { "aria-label": "Heat map figure" } });
  for (const m of HEAT_METRICS) picker.appendChild(new Option(m.label, m.id));
  picker.value = metric;
  const canvas = el("canvas", { className: "ps-heatmap-canvas", testId: "heatmap-canvas", attrs: { role: "img" } });
  const axis = el("div", { className: "ps-heatmap-axis", testId: "heatmap-rank-axis" });
  const stepAxis = el("div", { className: "ps-heatmap-axis", testId: "heatmap-step-axis" });
  const legendHost = el("div", {});
  const definition = el("div", {});
  const tipBox = el("div", { className: "ps-ranks-tip", testId: "heatmap-tooltip" });
  tipBox.hidden = true;
  const scrollBox = el("div", { className: "ps-heatmap-scroll" }, canvas, stepAxis);
  const root = el(
    "section",
    { className: "ps-heatmap", testId: "distributed-heatmap", attrs: { "data-ranks": String(matrix.ranks.length), "data-steps": String(matrix.steps.length) } },
    sectionHead(
      "Ranks × steps",
      el("label", {}, "Figure ", picker),
      csvDownloadLink({
        api: options.api,
        route: "distributed/matrix",
        params: () => ({ run: options.run, span_index: options.spanIndex }),
        state: () => ({ table: "matrix", sort: null, filter: "" }),
        testId: "heatmap-csv",
        what: "the rank × step figures",
      }),
    ),
    definition,
    el("div", { className: "ps-heatmap-frame" }, axis, scrollBox),
    legendHost,
    tipBox,
  );

  const layout = rowLayout(matrix.ranks.length);
  let colWidth = 0;

  function draw(): void {
    const cells = cellsOf(matrix, metric);
    // The width the page leaves beside the rank labels (the canvas's 1 px border on either side comes on top).
    const available = Math.max(240, (scrollBox.clientWidth || (root.clientWidth || 800) - 110) - 2);
    colWidth = columnWidth(matrix.steps.length, available);
    const width = sizeHeatCanvas(canvas, matrix.steps.length, layout, colWidth);
    canvas.setAttribute(
      "aria-label",
      `${HEAT_METRICS.find((m) => m.id === metric)?.label ?? ""} of ${formatCount(matrix.ranks.length)} ranks over ${formatCount(matrix.steps.length)} steps`,
    );
    if (!drawHeatCells(canvas, matrix, cells, metric, layout, colWidth)) return;
    drawHeatAxes(axis, stepAxis, matrix, layout, colWidth, width);
    legendHost.replaceChildren(heatLegend(metric));
    definition.replaceChildren(el("p", { className: "ps-note" }, metricLabel("How it is computed", HEAT_DEFINITIONS[metric])));
  }

  function hitAt(event: MouseEvent): CellHit | null {
    const rect = canvas.getBoundingClientRect();
    return cellAt(matrix, metric, layout, colWidth, event.clientX - rect.left, event.clientY - rect.top);
  }

  function showTip(event: MouseEvent): void {
    const hit = hitAt(event);
    if (hit === null) {
      tipBox.hidden = true;
      return;
    }
    tipBox.replaceChildren(...cellLines(matrix, hit).map((line) => el("p", {}, line)));
    tipBox.dataset["rank"] = String(matrix.ranks[hit.rank]?.rank ?? "");
    tipBox.dataset["step"] = matrix.steps[hit.step] ?? "";
    tipBox.hidden = false;
    const place = tipPosition(
      { x: event.clientX, y: event.clientY },
      { width: tipBox.offsetWidth, height: tipBox.offsetHeight },
      { width: window.innerWidth, height: window.innerHeight },
    );
    tipBox.style.left = `${place.left}px`;
    tipBox.style.top = `${place.top}px`;
  }

  canvas.addEventListener("mousemove", showTip, { signal: options.signal });
  canvas.addEventListener("mouseleave", () => (tipBox.hidden = true), { signal: options.signal });
  canvas.addEventListener(
    "click",
    (event) => {
      const hit = hitAt(event);
      if (hit === null) return;
      const rank = matrix.ranks[hit.rank];
      const window = cellWindow(matrix, hit);
      if (rank !== undefined && window !== null) options.onOpen(rank.worker, rank.span, window);
    },
    { signal: options.signal },
  );
  picker.addEventListener(
    "change",
    () => {
      if (!isHeatMetric(picker.value)) return;
      metric = picker.value;
      options.onMetricChange(metric);
      draw();
    },
    { signal: options.signal },
  );
  // Drawn once attached (its width decides the columns), and again when the page is resized.
  requestAnimationFrame(draw);
  const observer = new ResizeObserver(() => draw());
  observer.observe(root);
  options.signal.addEventListener("abort", () => observer.disconnect(), { once: true });
  return root;
}

/** Load the heat map into `host` from its own route (the matrix of every rank's steps); its figure is in the URL. */
export function loadHeatmap(host: HTMLElement, ctx: ViewContext, run: string, spanIndex: number, signal: AbortSignal): Promise<void> {
  return loadInto(
    {
      host,
      fetch: (fetchSignal) => fetchStepMatrix(ctx.api, run, spanIndex, fetchSignal),
      what: "the rank × step heat map",
      testIdPrefix: "heatmap",
      errorTitle: "The rank × step heat map could not be computed",
      render: (matrix, renderSignal) =>
        replaceChildren(
          host,
          createHeatmap(matrix, {
            api: ctx.api,
            run,
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
