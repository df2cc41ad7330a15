// The Memory snapshot timeline's controls: the wheel or W/S zooms around the pointer (W/S: the middle), a drag or
// A/D pans, a double-click shows the whole snapshot; a move without a drag hovers, a press without a drag picks.
import { panWindow, zoomWindow, type Window } from "../../lib/snapshot_model";

const ZOOM_STEP = 0.8;

/** What the controls read of the chart and how they move it. */
export interface TimelineControls {
  readonly canvas: HTMLCanvasElement;
  readonly span: Window;
  readonly window: () => Window;
  /** A new window: kept, told to the page, drawn and asked for. */
  readonly setWindow: (next: Window) => void;
  /** A window while dragging: drawn only (the drag's end sets it). */
  readonly dragTo: (next: Window) => void;
  readonly plotWidth: () => number;
  /** Where a pointer's x lies in the plot, as a fraction of its width; null left of the plot. */
  readonly fractionAt: (clientX: number) => number | null;
  readonly hover: (event: PointerEvent) => void;
  readonly leave: () => void;
  readonly pick: (event: PointerEvent) => void;
  readonly signal: AbortSignal;
}

export function attachTimelineControls(c: TimelineControls): void {
  const { canvas, span, signal } = c;
  let drag: { x: number; window: Window; moved: boolean } | null = null;
  canvas.addEventListener("wheel", (event) => {
    const fraction = c.fractionAt(event.clientX);
    if (fraction === null) return;
    event.preventDefault();
    c.setWindow(zoomWindow(c.window(), span, fraction, event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP));
  }, { signal, passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, window: c.window(), moved: false };
    canvas.setPointerCapture?.(event.pointerId);
  }, { signal });
  canvas.addEventListener("pointermove", (event) => {
    if (drag !== null) {
      const dx = event.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) c.dragTo(panWindow(drag.window, span, -dx / c.plotWidth()));
      return;
    }
    c.hover(event);
  }, { signal });
  canvas.addEventListener("pointerup", (event) => {
    const wasDrag = drag?.moved ?? false;
    drag = null;
    if (wasDrag) {
      c.setWindow(c.window());
      return;
    }
    c.pick(event);
  }, { signal });
  canvas.addEventListener("pointerleave", () => c.leave(), { signal });
  canvas.addEventListener("dblclick", () => c.setWindow(span), { signal });
  canvas.addEventListener("keydown", (event) => {
    const window = c.window();
    const moves: Record<string, () => Window> = {
      w: () => zoomWindow(window, span, 0.5, ZOOM_STEP),
      s: () => zoomWindow(window, span, 0.5, 1 / ZOOM_STEP),
      a: () => panWindow(window, span, -0.2),
      d: () => panWindow(window, span, 0.2),
    };
    const move = moves[event.key.toLowerCase()];
    if (move === undefined) return;
    event.preventDefault();
    c.setWindow(move());
  }, { signal });
}
