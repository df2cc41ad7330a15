// Active memory over time, drawn on a canvas from the `memory_snapshot/timeline` answer of the current window: per
// pixel the live bytes of the largest allocation sites stacked (one colour per site) and the rest in grey, the
// highest/lowest active bytes, reserved bytes (dashed), the device's capacity when known, out-of-memory entries (red)
// and record_function ranges in a lane above. Wheel or W/S zooms around the pointer, a drag or A/D pans,
// double-click shows the whole snapshot; hovering reads the site under the pointer; a click picks that moment (the
// page then shows what is alive there) and, on a band, pins that site's largest allocation, whose life is then
// outlined across the plot.
// Texts are drawn with fillText, never parsed as markup. This file keeps the window, the loading and what the
// pointer reads; the drawing is timeline_canvas.ts, the controls timeline_pointer.ts.
import type { SnapshotTimeline } from "../../api/snapshot";
import { el } from "../../components/dom";
import { bandAt, clampWindow, type Window } from "../../lib/snapshot_model";
import { clearTimeline, drawTimeline, LANE, LEFT, PLOT_HEIGHT, type PinnedLife } from "./timeline_canvas";
import { columnAt, hoverLines, timelineMax } from "./timeline_model";
import { attachTimelineControls } from "./timeline_pointer";

export interface SnapshotTimelineOptions {
  readonly axis: "time_us" | "entry";
  readonly span: Window;
  readonly initial: Window;
  readonly capacity: number | null;
  readonly reservedKnown: boolean;
  /** Asks for the window at a width in pixels; the chart draws what it answers. */
  readonly load: (window: Window, width: number) => void;
  /** The window changed (zoom or pan), for the URL. */
  readonly onWindow: (window: Window) => void;
  /** A click picked the moment after entry `row` (at `time`), on the band of `site` (null: on no band). */
  readonly onPick: (row: number, time: number, site: number | null) => void;
  readonly signal: AbortSignal;
}

export interface SnapshotTimelineChart {
  readonly root: HTMLElement;
  /** Draw an answer (ignored unless it is of the current window). */
  show(data: SnapshotTimeline): void;
  pin(life: PinnedLife | null): void;
  readonly window: () => Window;
}

export function createSnapshotTimeline(options: SnapshotTimelineOptions): SnapshotTimelineChart {
  const canvas = el("canvas", { attrs: { tabindex: "0", role: "img", "aria-label": "Active memory over time" } });
  const tooltip = el("div", { className: "ps-tooltip", testId: "snapshot-tooltip", hidden: true, attrs: { role: "tooltip" } });
  const readout = el("p", { className: "ps-hover-line", testId: "snapshot-hover" });
  const root = el("div", { className: "ps-snapshot-timeline", testId: "snapshot-timeline" }, canvas, tooltip, readout);
  let window = clampWindow(options.initial, options.span);
  let data: SnapshotTimeline | null = null;
  let pinned: PinnedLife | null = null;
  let requested = "";
  let timer: number | undefined;

  const width = (): number => Math.max(100, Math.floor(root.clientWidth || 900));
  const plotWidth = (): number => Math.max(10, width() - LEFT);

  function request(): void {
    globalThis.clearTimeout(timer);
    timer = globalThis.setTimeout(() => {
      const key = `${window.start}:${window.end}:${plotWidth()}`;
      if (key === requested) return;
      requested = key;
      options.load(window, plotWidth());
    }, 60) as unknown as number;
  }

  function setWindow(next: Window): void {
    window = clampWindow(next, options.span);
    options.onWindow(window);
    draw();
    request();
  }

  function draw(): void {
    const w = width();
    const context = clearTimeline(canvas, w);
    if (context === null) return;
    root.dataset["start"] = String(window.start);
    root.dataset["end"] = String(window.end);
    if (data === null) return;
    const { reservedKnown, capacity, axis, span } = options;
    const drawn = drawTimeline(context, { data, window, span, axis, capacity, reservedKnown, pinned, width: w, plotWidth: plotWidth() });
    root.dataset["columns"] = String(drawn.columns);
    root.dataset["column_width"] = drawn.columnWidth.toFixed(2);
  }

  /** The bytes at a pointer's height, on the scale the current answer is drawn with. */
  function bytesAt(clientY: number): number {
    if (data === null) return Number.NaN;
    const max = timelineMax(data, options.reservedKnown, options.capacity);
    return ((LANE + PLOT_HEIGHT - (clientY - canvas.getBoundingClientRect().top)) / PLOT_HEIGHT) * max;
  }

  function fractionAt(clientX: number): number | null {
    const rect = canvas.getBoundingClientRect();
    const px = clientX - rect.left - LEFT;
    if (px < 0) return null;
    return Math.min(Math.max(px / plotWidth(), 0), 1);
  }

  function hover(event: PointerEvent): void {
    if (data === null) return;
    const fraction = fractionAt(event.clientX);
    if (fraction === null) {
      tooltip.hidden = true;
      return;
    }
    const d = data;
    const { t, column } = columnAt(d, window, fraction);
    if (!(column >= 0 && column < d.time.length)) {
      tooltip.hidden = true;
      return;
    }
    const rect = canvas.getBoundingClientRect();
    const lines = hoverLines(d, { t, column, bytes: bytesAt(event.clientY) }, { axis: options.axis, origin: options.span.start, reservedKnown: options.reservedKnown });
    tooltip.textContent = lines.join("\n");
    tooltip.hidden = false;
    tooltip.style.left = `${event.clientX - rect.left + 12}px`;
    tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    readout.textContent = lines.join(" · ");
  }

  function pick(event: PointerEvent): void {
    const fraction = fractionAt(event.clientX);
    if (fraction === null || data === null) return;
    const d = data;
    const { t, column } = columnAt(d, window, fraction);
    const row = d.sample_row[column];
    const hit = bandAt(d.bands, d.other, column, bytesAt(event.clientY));
    const site = hit?.kind === "band" ? (d.sites[hit.index]?.site ?? null) : null;
    if (row !== undefined && Number.isFinite(row)) options.onPick(row, d.time[column] ?? t, site);
  }

  attachTimelineControls({
    canvas,
    span: options.span,
    window: () => window,
    setWindow,
    dragTo: (next) => {
      window = clampWindow(next, options.span);
      draw();
    },
    plotWidth,
    fractionAt,
    hover,
    leave: () => (tooltip.hidden = true),
    pick,
    signal: options.signal,
  });
  const observer = typeof ResizeObserver === "function" ? new ResizeObserver(() => {
    draw();
    request();
  }) : null;
  observer?.observe(root);
  options.signal.addEventListener("abort", () => {
    observer?.disconnect();
    globalThis.clearTimeout(timer);
  }, { once: true });
  request();

  return {
    root,
    show(next) {
      data = next;
      root.dataset["loaded"] = String(next.time.length);
      draw();
    },
    pin(life) {
      pinned = life;
      root.dataset["pinned"] = life === null ? "" : life.label;
      draw();
    },
    window: () => window,
  };
}
