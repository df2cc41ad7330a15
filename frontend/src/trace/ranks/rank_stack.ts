// Ranks side by side: the same step of every worker of the run stacked on one time axis, aligned by
// the step's start or by the traces' clocks (baseTimeNanoseconds). Each worker's slices come from its
// own trace/tracks and trace/slices, asked for in its own time (the window minus its shift); collectives
// are drawn strong so a straggler's late collective shows at a glance. One canvas; names are drawn as
// canvas text or set as text content, never HTML. Drag pans, the wheel zooms, a click opens that
// worker's span in the single-span viewer at the same window.
import type { ApiClient } from "../../api/client";
import { fetchRankPlacement, type PlacedWorker, type RankAlign, type RankPlacement } from "../../api/rank_steps";
import { fetchSlices, fetchTracks, type SlicesData, type TrackInfo } from "../../api/trace";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { injectRanksStyles } from "../../components/ranks_styles";
import { formatDuration } from "../../lib/format";
import { colorForName } from "../render/colors";
import {
  COMPACT_ABOVE,
  COMPACT_PX,
  HEADER_PX,
  ROW_PX,
  type AxisWindow,
  type WorkerRows,
  initialWindow,
  niceStep,
  isCollectiveName,
  layoutWorkers,
  panWindow,
  stackedTracks,
  workerLabel,
  workerWindow,
  xOf,
  zoomWindow,
} from "./rank_stack_model";

/** Workers stacked at most: beyond, a stack is no longer read at a glance (the heat map covers 1,000 ranks). */
export const MAX_WORKERS = 64;
const AXIS_PX = 22;
const STRONG = "rgb(230, 81, 0)";

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

interface Drawn {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly lines: readonly string[];
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
  const notes = [...placement.notes];
  if (placement.workers.length > MAX_WORKERS) notes.push(`The first ${MAX_WORKERS} of ${placement.workers.length} ranks are stacked (the Distributed view's heat map shows all of them).`);
  if (placement.missing.length > 0) notes.push(`${placement.missing.length} worker(s) have no ${placement.step ?? "such step"}: ${placement.missing.slice(0, 8).join(", ")}${placement.missing.length > 8 ? ", …" : ""}.`);
  const canvas = el("canvas", { className: "ps-rank-stack-canvas", testId: "rank-stack-canvas", attrs: { role: "img", "aria-label": `${placement.step ?? ""} of ${workers.length} ranks on one time axis` } });
  const tipBox = el("div", { className: "ps-ranks-tip", testId: "rank-stack-tooltip" });
  tipBox.hidden = true;
  const status = el("p", { className: "ps-note", testId: "rank-stack-status" });
  const bar = controls(placement, options);
  replaceChildren(
    root,
    bar,
    ...notes.map((note) => el("p", { className: "ps-note", testId: "rank-stack-note" }, note)),
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
  let fetchController: AbortController | null = null;
  let timer: number | undefined;
  const gutter = 220;

  const ref = (w: PlacedWorker) => ({ run: options.run, worker: w.worker, span: w.span });
  const plotWidth = (): number => Math.max(200, (canvas.clientWidth || 1000) - gutter);

  void Promise.all(
    workers.map(async (w) => {
      const result = await fetchTracks(options.api, ref(w), options.signal);
      tracksOf.set(w.worker, result.kind === "ok" ? stackedTracks(result.data.tracks) : []);
    }),
  ).then(() => {
    if (options.signal.aborted) return;
    relayout();
    draw();
    fetchWindow();
  });

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

  function fetchWindow(): void {
    fetchController?.abort();
    const controller = new AbortController();
    fetchController = controller;
    options.signal.addEventListener("abort", () => controller.abort(), { once: true });
    const width = plotWidth();
    status.textContent = "Loading every rank's slices…";
    let pending = workers.length;
    for (const w of workers) {
      const tracks = (tracksOf.get(w.worker) ?? []).map((t) => t.id);
      const own = workerWindow(window, w);
      const done = (): void => {
        pending -= 1;
        if (pending === 0 && !controller.signal.aborted) {
          status.textContent = `${workers.length} rank(s), ${formatDuration(window.end - window.start)} shown. Drag to pan, wheel to zoom, click a rank to open its span.`;
          root.dataset["ready"] = "true";
        }
      };
      if (tracks.length === 0) {
        done();
        continue;
      }
      void fetchSlices(options.api, ref(w), { start: own.start, end: own.end, width, tracks }, controller.signal).then((result) => {
        if (controller.signal.aborted) return;
        if (result.kind === "ok") slicesOf.set(w.worker, result.data);
        draw();
        done();
      });
    }
  }

  function scheduleFetch(): void {
    draw(); // the tiles already here, moved at once
    if (timer !== undefined) clearTimeout(timer);
    root.dataset["ready"] = "false";
    timer = setTimeout(fetchWindow, 150) as unknown as number;
  }

  function draw(): void {
    const width = canvas.clientWidth || 1000;
    const height = AXIS_PX + (rows.length > 0 ? rows[rows.length - 1]!.bottom : 0);
    const ratio = globalThis.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext("2d");
    if (ctx === null) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const styles = getComputedStyle(root);
    const fg = styles.getPropertyValue("--ps-fg").trim() || "#222";
    const muted = styles.getPropertyValue("--ps-fg-muted").trim() || "#666";
    const raised = styles.getPropertyValue("--ps-bg-raised").trim() || "#f3f4f6";
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    const plot = width - gutter;
    drawn = [];
    drawAxis(ctx, plot, muted);
    for (const worker of rows) {
      const w = worker.worker;
      const top = AXIS_PX + worker.top;
      const label = workerLabel(w, placement.align === "time", formatDuration);
      const headerPx = worker.compact ? 0 : HEADER_PX;
      if (worker.compact) {
        ctx.fillStyle = fg;
        ctx.fillText(label, 4, top + COMPACT_PX / 2, gutter - 8);
      } else {
        ctx.fillStyle = raised;
        ctx.fillRect(0, top, width, HEADER_PX - 2);
        ctx.fillStyle = fg;
        ctx.fillText(label, 4, top + HEADER_PX / 2 - 1, gutter + plot - 8);
      }
      drawn.push({ x: 0, y: top, w: width, h: worker.bottom - worker.top, lines: [label, "Click to open this rank's span here"] });
      // The step's bounds on this worker.
      const s0 = Math.max(gutter, gutter + xOf(w.step_start + w.shift, window, plot));
      const s1 = Math.min(width, gutter + xOf(w.step_end + w.shift, window, plot));
      ctx.fillStyle = "rgba(120, 120, 120, 0.12)";
      ctx.fillRect(s0, top + headerPx, Math.max(0, s1 - s0), worker.bottom - worker.top - headerPx - (worker.compact ? 1 : 4));
      const data = slicesOf.get(w.worker);
      // Compact: every track in the rank's one row, the outermost slices first, collectives (any depth) on top.
      const passes = worker.compact ? [false, true] : [null];
      for (const collectivesOnly of passes) {
        for (const track of worker.tracks) {
          if (!worker.compact) {
            ctx.fillStyle = muted;
            ctx.fillText(track.track.name, 12, AXIS_PX + track.top + ROW_PX / 2, gutter - 16);
          }
          const window_ = data?.tracks.find((t) => t.id === track.track.id);
          if (data === undefined || window_ === undefined) continue;
          const rowY = (depth: number): number => AXIS_PX + track.top + (worker.compact ? 0 : depth * ROW_PX);
          const rowH = worker.compact ? COMPACT_PX - 1 : ROW_PX - 1;
          if (collectivesOnly !== true) {
            const b = window_.blocks;
            ctx.fillStyle = "rgba(128, 128, 128, 0.55)";
            for (let i = 0; i < b.start.length; i += 1) {
              const depth = b.depth[i]!;
              if (depth >= track.depths || (worker.compact && depth > 0)) continue;
              const x0 = Math.max(gutter, gutter + xOf(b.start[i]! + w.shift, window, plot));
              const x1 = gutter + xOf(b.end[i]! + w.shift, window, plot);
              if (x1 < gutter || x0 > width) continue;
              ctx.fillRect(x0, rowY(depth), Math.max(1, x1 - x0), rowH);
            }
          }
          const s = window_.slices;
          for (let i = 0; i < s.start.length; i += 1) {
            const depth = s.depth[i]!;
            if (depth >= track.depths) continue;
            const name = data.names[s.name[i]!] ?? "";
            const collective = isCollectiveName(name);
            if (collectivesOnly === true && !collective) continue;
            if (collectivesOnly === false && (collective || depth > 0)) continue;
            const start = s.start[i]! + w.shift;
            const x0 = gutter + xOf(start, window, plot);
            const x1 = gutter + xOf(start + s.dur[i]!, window, plot);
            if (x1 < gutter || x0 > width) continue;
            const left = Math.max(gutter, x0);
            const wide = Math.max(1, x1 - left);
            const y = rowY(depth);
            ctx.globalAlpha = collective ? 1 : worker.compact ? 0.35 : 0.5;
            ctx.fillStyle = collective ? STRONG : colorForName(name);
            ctx.fillRect(left, y, wide, rowH);
            ctx.globalAlpha = 1;
            if (wide > 40 && !worker.compact) {
              ctx.fillStyle = "#111";
              ctx.fillText(name, left + 2, y + ROW_PX / 2, wide - 4);
            }
            drawn.push({
              x: left, y, w: wide, h: rowH,
              lines: [name, `rank ${w.rank} · ${w.worker} · ${track.track.name}`, `starts at ${formatDuration(start)} on the axis, lasts ${formatDuration(s.dur[i]!)}`],
            });
          }
        }
      }
    }
  }

  function drawAxis(ctx: CanvasRenderingContext2D, plot: number, muted: string): void {
    const span = window.end - window.start;
    const step = niceStep(span / 8);
    ctx.fillStyle = muted;
    ctx.strokeStyle = "rgba(128,128,128,0.35)";
    for (let t = Math.ceil(window.start / step) * step; t <= window.end; t += step) {
      const x = gutter + xOf(t, window, plot);
      ctx.fillText(formatDuration(t), x + 2, AXIS_PX / 2);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, 0);
      ctx.lineTo(x + 0.5, canvas.clientHeight);
      ctx.stroke();
    }
  }

  function hit(event: MouseEvent): Drawn | null {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    // Slices were pushed after their worker's header: the last match is the most specific.
    for (let i = drawn.length - 1; i >= 0; i -= 1) {
      const d = drawn[i]!;
      if (x >= d.x && x <= d.x + d.w && y >= d.y && y <= d.y + d.h) return d;
    }
    return null;
  }

  function workerAt(event: MouseEvent): PlacedWorker | null {
    const y = event.clientY - canvas.getBoundingClientRect().top - AXIS_PX;
    return rows.find((r) => y >= r.top && y < r.bottom)?.worker ?? null;
  }

  let drag: { x: number; window: AxisWindow; moved: boolean } | null = null;
  canvas.addEventListener("mousedown", (event) => (drag = { x: event.clientX, window, moved: false }), { signal: options.signal });
  globalThis.addEventListener(
    "mouseup",
    (event) => {
      if (drag === null) return;
      const clicked = !drag.moved;
      drag = null;
      if (clicked && event.target === canvas) {
        const w = workerAt(event);
        if (w !== null) options.onOpenWorker(w.worker, w.span, workerWindow(window, w));
      }
    },
    { signal: options.signal },
  );
  canvas.addEventListener(
    "mousemove",
    (event) => {
      if (drag !== null && Math.abs(event.clientX - drag.x) > 3) {
        drag.moved = true;
        window = panWindow(drag.window, event.clientX - drag.x, plotWidth());
        tipBox.hidden = true;
        scheduleFetch();
        return;
      }
      const d = hit(event);
      if (d === null) {
        tipBox.hidden = true;
        return;
      }
      tipBox.replaceChildren(...d.lines.map((line) => el("p", {}, line)));
      tipBox.hidden = false;
      tipBox.style.left = `${Math.min(event.clientX + 12, globalThis.innerWidth - tipBox.offsetWidth - 4)}px`;
      tipBox.style.top = `${event.clientY + 14}px`;
    },
    { signal: options.signal },
  );
  canvas.addEventListener("mouseleave", () => (tipBox.hidden = true), { signal: options.signal });
  canvas.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault();
      const x = event.clientX - canvas.getBoundingClientRect().left - gutter;
      window = zoomWindow(window, Math.exp(event.deltaY * 0.002), Math.max(0, x), plotWidth());
      scheduleFetch();
    },
    { signal: options.signal, passive: false },
  );
  const observer = new ResizeObserver(() => scheduleFetch());
  observer.observe(canvas);
  options.signal.addEventListener("abort", () => {
    observer.disconnect();
    if (timer !== undefined) clearTimeout(timer);
  }, { once: true });
}
