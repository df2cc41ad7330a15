// Active memory over time, drawn on a canvas from the `memory_snapshot/timeline` answer of the current window: per
// pixel the live bytes of the largest allocation sites stacked (one colour per site) and the rest in grey, the
// highest/lowest active bytes, reserved bytes (dashed), the device's capacity when known, out-of-memory entries (red)
// and record_function ranges in a lane above. Wheel or W/S zooms around the pointer, a drag or A/D pans,
// double-click shows the whole snapshot; hovering reads the site under the pointer; a click picks that moment (the
// page then shows what is alive there) and, on a band, pins that site's largest allocation, whose life is then
// outlined across the plot.
// Texts are drawn with fillText, never parsed as markup.
import type { SnapshotTimeline } from "../../api/snapshot";
import { el } from "../../components/dom";
import { formatBytes } from "../../lib/format";
import { axisText, bandAt, clampWindow, panWindow, siteColor, zoomWindow, type Window } from "../../lib/snapshot_model";

export interface PinnedLife {
  readonly start: number;
  readonly end: number;
  readonly size: number;
  readonly label: string;
}

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

const HEIGHT = 280;
const LANE = 18;
const LEFT = 64;
const FONT = "11px system-ui, sans-serif";
const ZOOM_STEP = 0.8;

export function createSnapshotTimeline(options: SnapshotTimelineOptions): SnapshotTimelineChart {
  const canvas = el("canvas", { attrs: { tabindex: "0", role: "img", "aria-label": "Active memory over time" } });
  const tooltip = el("div", { className: "ps-tooltip", testId: "snapshot-tooltip", hidden: true, attrs: { role: "tooltip" } });
  const readout = el("p", { className: "ps-hover-line", testId: "snapshot-hover" });
  const root = el("div", { className: "ps-snapshot-timeline", testId: "snapshot-timeline" }, canvas, tooltip, readout);
  let window = clampWindow(options.initial, options.span);
  let data: SnapshotTimeline | null = null;
  let pinned: PinnedLife | null = null;
  let drag: { x: number; window: Window; moved: boolean } | null = null;
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

  function yScale(max: number, plotHeight: number): (bytes: number) => number {
    return (bytes) => LANE + plotHeight - (max > 0 ? (bytes / max) * plotHeight : 0);
  }

  function draw(): void {
    const dpr = globalThis.devicePixelRatio || 1;
    const w = width();
    canvas.width = Math.floor(w * dpr);
    canvas.height = Math.floor(HEIGHT * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${HEIGHT}px`;
    const context = canvas.getContext("2d");
    if (context === null) return;
    context.setTransform(dpr, 0, 0, dpr, 0, 0);
    context.clearRect(0, 0, w, HEIGHT);
    context.font = FONT;
    root.dataset["start"] = String(window.start);
    root.dataset["end"] = String(window.end);
    if (data === null) return;
    const d = data;
    const pixels = d.time.length;
    const plotHeight = HEIGHT - LANE - 20;
    let max = 0;
    for (let x = 0; x < pixels; x += 1) max = Math.max(max, d.active_max[x] ?? 0, options.reservedKnown ? (d.reserved[x] ?? 0) : 0);
    if (options.capacity !== null && options.capacity < max * 1.5) max = Math.max(max, options.capacity);
    max *= 1.05;
    const y = yScale(max, plotHeight);
    const column = plotWidth() / Math.max(pixels, 1);
    // Where this answer's window lies in the current one (drawn stretched while the next one loads).
    const scale = plotWidth() / (window.end - window.start);
    const xOf = (t: number): number => LEFT + (t - window.start) * scale;
    const step = (d.end - d.start) / Math.max(pixels, 1);
    for (let x = 0; x < pixels; x += 1) {
      const left = xOf(d.start + x * step);
      const cw = Math.max(1, step * scale + 0.5);
      let base = 0;
      for (let band = 0; band < d.bands.length; band += 1) {
        const value = d.bands[band]?.[x] ?? 0;
        if (value <= 0) continue;
        context.fillStyle = siteColor(d.sites[band]?.label ?? band);
        context.fillRect(left, y(base + value), cw, y(base) - y(base + value));
        base += value;
      }
      const other = d.other[x] ?? 0;
      if (other > 0) {
        context.fillStyle = "rgba(150, 150, 150, 0.55)";
        context.fillRect(left, y(base + other), cw, y(base) - y(base + other));
      }
    }
    root.dataset["columns"] = String(pixels);
    root.dataset["column_width"] = column.toFixed(2);
    // The envelope: highest and lowest active bytes per pixel.
    context.strokeStyle = "rgba(20, 20, 20, 0.85)";
    context.lineWidth = 1;
    context.beginPath();
    for (let x = 0; x < pixels; x += 1) {
      const px = xOf(d.start + (x + 0.5) * step);
      const py = y(d.active_max[x] ?? 0);
      if (x === 0) context.moveTo(px, py);
      else context.lineTo(px, py);
    }
    context.stroke();
    if (options.reservedKnown) {
      context.setLineDash([4, 3]);
      context.strokeStyle = "rgba(40, 90, 200, 0.9)";
      context.beginPath();
      for (let x = 0; x < pixels; x += 1) {
        const px = xOf(d.start + (x + 0.5) * step);
        const py = y(d.reserved[x] ?? 0);
        if (x === 0) context.moveTo(px, py);
        else context.lineTo(px, py);
      }
      context.stroke();
      context.setLineDash([]);
    }
    if (options.capacity !== null && options.capacity <= max) {
      context.strokeStyle = "rgba(200, 40, 40, 0.8)";
      context.beginPath();
      context.moveTo(LEFT, y(options.capacity));
      context.lineTo(w, y(options.capacity));
      context.stroke();
      context.fillStyle = "rgba(200, 40, 40, 0.9)";
      context.fillText(`capacity ${formatBytes(options.capacity)}`, LEFT + 4, y(options.capacity) - 3);
    }
    for (const marker of d.markers) {
      if (marker.action !== "oom") continue;
      const px = xOf(marker.time);
      context.fillStyle = "rgba(220, 30, 30, 0.9)";
      context.fillRect(px - 1, LANE, 2, plotHeight);
      context.fillText("out of memory", px + 3, LANE + 12);
    }
    // record_function ranges in the lane above.
    for (const range of d.annotations) {
      const left = Math.max(LEFT, xOf(range.start));
      const right = Math.min(w, xOf(range.end));
      if (right - left < 1) continue;
      const name = range.name ?? "";
      context.fillStyle = siteColor(name);
      context.globalAlpha = 0.45;
      context.fillRect(left, 1 + Math.min(range.depth, 2) * 5, right - left, LANE - 12);
      context.globalAlpha = 1;
      if (right - left > 40) {
        context.fillStyle = "#222";
        context.fillText(name, left + 2, LANE - 4, right - left - 4);
      }
    }
    if (pinned !== null) {
      const left = Math.max(LEFT, xOf(pinned.start));
      const right = Math.min(w, xOf(pinned.end));
      context.strokeStyle = "rgba(255, 140, 0, 1)";
      context.lineWidth = 2;
      context.strokeRect(left, LANE, Math.max(2, right - left), plotHeight);
      context.fillStyle = "rgba(255, 140, 0, 0.12)";
      context.fillRect(left, LANE, Math.max(2, right - left), plotHeight);
      context.lineWidth = 1;
    }
    // Axes: bytes on the left, the window's ends below.
    context.fillStyle = "#444";
    for (let tick = 0; tick <= 4; tick += 1) {
      const value = (max / 4) * tick;
      context.fillText(formatBytes(value), 2, y(value) + 4, LEFT - 6);
    }
    const origin = options.span.start;
    context.fillText(axisText(window.start, options.axis, origin), LEFT, HEIGHT - 4);
    const endText = axisText(window.end, options.axis, origin);
    context.fillText(endText, w - context.measureText(endText).width - 2, HEIGHT - 4);
  }

  /** The bytes at a pointer's height, on the scale the current answer is drawn with. */
  function bytesAt(clientY: number): number {
    if (data === null) return Number.NaN;
    const d = data;
    const plotHeight = HEIGHT - LANE - 20;
    let max = 0;
    for (let x = 0; x < d.time.length; x += 1) max = Math.max(max, d.active_max[x] ?? 0, options.reservedKnown ? (d.reserved[x] ?? 0) : 0);
    if (options.capacity !== null && options.capacity < max * 1.5) max = Math.max(max, options.capacity);
    max *= 1.05;
    return ((LANE + plotHeight - (clientY - canvas.getBoundingClientRect().top)) / plotHeight) * max;
  }

  function pixelAt(clientX: number): { x: number; fraction: number } | null {
    const rect = canvas.getBoundingClientRect();
    const px = clientX - rect.left - LEFT;
    if (px < 0) return null;
    return { x: px, fraction: Math.min(Math.max(px / plotWidth(), 0), 1) };
  }

  function hover(event: PointerEvent): void {
    if (data === null) return;
    const at = pixelAt(event.clientX);
    if (at === null) {
      tooltip.hidden = true;
      return;
    }
    const d = data;
    const t = window.start + at.fraction * (window.end - window.start);
    const column = Math.floor(((t - d.start) / (d.end - d.start)) * d.time.length);
    if (!(column >= 0 && column < d.time.length)) {
      tooltip.hidden = true;
      return;
    }
    const rect = canvas.getBoundingClientRect();
    const hit = bandAt(d.bands, d.other, column, bytesAt(event.clientY));
    const lines = [`${axisText(t, options.axis, options.span.start)} · active ${formatBytes(d.active_max[column] ?? Number.NaN)}`];
    if (hit?.kind === "band") {
      const site = d.sites[hit.index];
      lines.push(`${site?.label ?? "?"}: ${formatBytes(d.bands[hit.index]?.[column] ?? Number.NaN)}`);
      if (site?.frame?.file) lines.push(`${site.frame.file}:${site.frame.line ?? "?"}`);
    } else if (hit?.kind === "other") {
      lines.push(`other sites: ${formatBytes(d.other[column] ?? Number.NaN)}`);
    }
    if (options.reservedKnown) lines.push(`reserved ${formatBytes(d.reserved[column] ?? Number.NaN)}`);
    tooltip.textContent = lines.join("\n");
    tooltip.hidden = false;
    tooltip.style.left = `${event.clientX - rect.left + 12}px`;
    tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    readout.textContent = lines.join(" · ");
  }

  canvas.addEventListener("wheel", (event) => {
    const at = pixelAt(event.clientX);
    if (at === null) return;
    event.preventDefault();
    setWindow(zoomWindow(window, options.span, at.fraction, event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP));
  }, { signal: options.signal, passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, window, moved: false };
    canvas.setPointerCapture?.(event.pointerId);
  }, { signal: options.signal });
  canvas.addEventListener("pointermove", (event) => {
    if (drag !== null) {
      const dx = event.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) {
        window = clampWindow(panWindow(drag.window, options.span, -dx / plotWidth()), options.span);
        draw();
      }
      return;
    }
    hover(event);
  }, { signal: options.signal });
  canvas.addEventListener("pointerup", (event) => {
    const wasDrag = drag?.moved ?? false;
    drag = null;
    if (wasDrag) {
      setWindow(window);
      return;
    }
    const at = pixelAt(event.clientX);
    if (at === null || data === null) return;
    const d = data;
    const t = window.start + at.fraction * (window.end - window.start);
    const column = Math.floor(((t - d.start) / (d.end - d.start)) * d.time.length);
    const row = d.sample_row[column];
    const hit = bandAt(d.bands, d.other, column, bytesAt(event.clientY));
    const site = hit?.kind === "band" ? (d.sites[hit.index]?.site ?? null) : null;
    if (row !== undefined && Number.isFinite(row)) options.onPick(row, d.time[column] ?? t, site);
  }, { signal: options.signal });
  canvas.addEventListener("pointerleave", () => {
    tooltip.hidden = true;
  }, { signal: options.signal });
  canvas.addEventListener("dblclick", () => setWindow(options.span), { signal: options.signal });
  canvas.addEventListener("keydown", (event) => {
    const moves: Record<string, () => Window> = {
      w: () => zoomWindow(window, options.span, 0.5, ZOOM_STEP),
      s: () => zoomWindow(window, options.span, 0.5, 1 / ZOOM_STEP),
      a: () => panWindow(window, options.span, -0.2),
      d: () => panWindow(window, options.span, 0.2),
    };
    const move = moves[event.key.toLowerCase()];
    if (move === undefined) return;
    event.preventDefault();
    setWindow(move());
  }, { signal: options.signal });
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
