// Ranks side by side: the same step of every worker of the run stacked on one time axis, aligned by
// the step's start or by the traces' clocks (baseTimeNanoseconds). Each worker's slices come from its
// own trace/tracks and trace/slices, asked for in its own time (the window minus its shift); collectives
// are drawn strong so a straggler's late collective shows at a glance. One canvas; names are drawn as
// canvas text or set as text content, never HTML. Drag pans, the wheel zooms, a click opens that
// worker's span in the single-span viewer at the same window. The drawing is rank_stack_canvas.ts, the pointer
// rank_stack_pointer.ts, the slices' loading rank_stack_slices.ts.
import type { ApiClient } from "../../api/client";
import { fetchRankPlacement, type RankAlign, type RankPlacement } from "../../api/rank_steps";
import { fetchTracks, type SlicesData, type TrackInfo } from "../../api/trace";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { injectRanksStyles } from "../../components/ranks_styles";
import { drawRankStack } from "./rank_stack_canvas";
import {
  COMPACT_ABOVE,
  type AxisWindow,
  type Drawn,
  type WorkerRows,
  initialWindow,
  layoutWorkers,
  placementNotes,
  stackedTracks,
  workerAtY,
  workerWindow,
} from "./rank_stack_model";
import { attachStackPointer } from "./rank_stack_pointer";
import { createSliceLoader } from "./rank_stack_slices";
import { ignoreAbort } from "../../api/abort";

/** Workers stacked at most: beyond, a stack is no longer read at a glance (the heat map covers 1,000 ranks). */
export const MAX_WORKERS = 64;

export interface RankStackOptions {
  readonly api: ApiClient;
  readonly run: string;
  readonly spanIndex: number;
  readonly align: RankAlign;
  readonly step: string | null;
  readonly onChange: (align: RankAlign, step: string | null) => void;
  /** Open one worker's span in the single-span viewer at a window of its own trace time. */
  readonly onOpenWorker: (worker: string, span: string, window: AxisWindow) => void;
  readonly onClose: () => void;
  readonly signal: AbortSignal;
}

export function mountRankStack(host: HTMLElement, options: RankStackOptions): void {
  injectRanksStyles(host.ownerDocument);
  const root = el("div", { className: "ps-rank-stack", testId: "rank-stack" });
  // Until the placement is drawn (or when it fails), the way back to the single-span viewer.
  const body = el("div", {});
  root.append(controls(null, options), body);
  host.appendChild(root);
  void loadInto(
    {
      host: body,
      fetch: (signal) => fetchRankPlacement(options.api, options.run, options.spanIndex, options.align, options.step, signal),
      what: "every worker's step on one time axis",
      waitingFor: "every worker's span",
      testIdPrefix: "rank-stack",
      errorTitle: "Cannot place the ranks side by side",
      render: (placement) => show(root, placement, options),
    },
    options.signal,
  );
}

function controls(placement: RankPlacement | null, options: RankStackOptions): HTMLElement {
  const button = (align: RankAlign, text: string, title: string): HTMLButtonElement => {
    const b = el("button", { className: "ps-trace-button", testId: `rank-stack-align-${align}`, attrs: { type: "button", title, "aria-pressed": String(options.align === align) } }, text);
    b.addEventListener("click", () => options.onChange(align, placement?.step ?? options.step), { signal: options.signal });
    return b;
  };
  const stepPicker = el("select", { className: "ps-select", testId: "rank-stack-step", attrs: { "aria-label": "Step" } });
  for (const name of placement?.steps ?? []) stepPicker.appendChild(new Option(name, name));
  if (placement?.step != null) stepPicker.value = placement.step;
  stepPicker.addEventListener("change", () => options.onChange(options.align, stepPicker.value), { signal: options.signal });
  const close = el("button", { className: "ps-trace-button", testId: "rank-stack-close", attrs: { type: "button" } }, "One span");
  close.addEventListener("click", () => options.onClose(), { signal: options.signal });
  return el(
    "div",
    { className: "ps-rank-stack-bar" },
    el("strong", {}, "Ranks side by side"),
    el("label", {}, "Step ", stepPicker),
    el(
      "span",
      { className: "ps-segmented", attrs: { role: "group", "aria-label": "Align ranks" } },
      button("step", "Align by step start", "Every rank's step starts at 0: a collective further right started later within its step."),
      button("time", "Align by time", "The traces' clocks (baseTimeNanoseconds): 0 is the earliest start of the step on any rank; a rank that started late shows so."),
    ),
    close,
  );
}

function show(root: HTMLElement, placement: RankPlacement, options: RankStackOptions): void {
  const workers = placement.workers.slice(0, MAX_WORKERS);
  const canvas = el("canvas", { className: "ps-rank-stack-canvas", testId: "rank-stack-canvas", attrs: { role: "img", "aria-label": `${placement.step ?? ""} of ${workers.length} ranks on one time axis` } });
  const tipBox = el("div", { className: "ps-ranks-tip", testId: "rank-stack-tooltip" });
  tipBox.hidden = true;
  const status = el("p", { className: "ps-note", testId: "rank-stack-status" });
  const bar = controls(placement, options);
  replaceChildren(
    root,
    bar,
    ...placementNotes(placement, MAX_WORKERS).map((note) => el("p", { className: "ps-note", testId: "rank-stack-note" }, note)),
    el(
      "p",
      { className: "ps-note" },
      placement.align === "step"
        ? "Aligned by step start: every rank's step begins at 0. Collectives are drawn in orange."
        : "Aligned by time: each trace's clock made absolute with its baseTimeNanoseconds; 0 is the earliest start of the step on any rank. Collectives are drawn in orange.",
    ),
    el("div", { className: "ps-rank-stack-scroll" }, canvas),
    status,
    tipBox,
  );
  root.dataset["align"] = placement.align;
  root.dataset["step"] = placement.step ?? "";
  root.dataset["workers"] = String(workers.length);
  if (workers.length === 0) {
    status.textContent = "No worker has this step.";
    return;
  }

  const tracksOf = new Map<string, TrackInfo[]>();
  const slicesOf = new Map<string, SlicesData>();
  let rows: WorkerRows[] = [];
  let window: AxisWindow = initialWindow(workers);
  let drawn: Drawn[] = [];
  const gutter = 220;

  const plotWidth = (): number => Math.max(200, (canvas.clientWidth || 1000) - gutter);
  const draw = (): void => {
    drawn = drawRankStack(canvas, root, { rows, window, slicesOf, align: placement.align, gutter });
  };
  const { fetchWindow, scheduleFetch } = createSliceLoader({
    api: options.api,
    run: options.run,
    workers,
    tracksOf,
    slicesOf,
    window: () => window,
    plotWidth,
    draw,
    status,
    root,
    signal: options.signal,
  });

  void Promise.all(
    workers.map(async (w) => {
      const result = await fetchTracks(options.api, { run: options.run, worker: w.worker, span: w.span }, options.signal);
      tracksOf.set(w.worker, result.kind === "ok" ? stackedTracks(result.data.tracks) : []);
    }),
  ).then(() => {
    if (options.signal.aborted) return;
    relayout();
    draw();
    fetchWindow();
  }).catch(ignoreAbort);

  let compact = workers.length > COMPACT_ABOVE;
  const rowsSwitch = el("label", { className: "ps-chart-option" });
  const compactBox = el("input", { testId: "rank-stack-compact", attrs: { type: "checkbox" } });
  compactBox.checked = compact;
  rowsSwitch.append(compactBox, "One row per rank");
  bar.appendChild(rowsSwitch);
  compactBox.addEventListener("change", () => {
    compact = compactBox.checked;
    relayout();
    draw();
  }, { signal: options.signal });

  function relayout(): void {
    rows = layoutWorkers(workers, (w) => tracksOf.get(w.worker) ?? [], compact);
    root.dataset["compact"] = String(compact);
  }

  attachStackPointer({
    canvas,
    tipBox,
    gutter,
    window: () => window,
    moveTo: (next) => {
      window = next;
      scheduleFetch();
    },
    plotWidth,
    drawn: () => drawn,
    workerAt: (y) => workerAtY(rows, y),
    onClick: (w) => options.onOpenWorker(w.worker, w.span, workerWindow(window, w)),
    signal: options.signal,
  });
  const observer = new ResizeObserver(() => scheduleFetch());
  observer.observe(canvas);
  options.signal.addEventListener("abort", () => observer.disconnect(), { once: true });
}
