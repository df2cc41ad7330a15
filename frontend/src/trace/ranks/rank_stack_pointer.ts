// Ranks side by side, the pointer on the canvas: a drag pans the axis, the wheel zooms about the pointer, a
// click (a press without a drag) opens the worker under it, and hovering shows the drawn box's lines in the
// tooltip (set as text content).
import type { PlacedWorker } from "../../api/rank_steps";
import { el } from "../../components/dom";
import { AXIS_PX } from "./rank_stack_canvas";
import { type AxisWindow, type Drawn, drawnAt, panWindow, zoomWindow } from "./rank_stack_model";

/** What the pointer reads of the stack and how it moves it. */
export interface StackPointer {
  readonly canvas: HTMLCanvasElement;
  readonly tipBox: HTMLElement;
  readonly gutter: number;
  readonly window: () => AxisWindow;
  /** A new window: redraw now, ask for its slices soon. */
  readonly moveTo: (window: AxisWindow) => void;
  readonly plotWidth: () => number;
  readonly drawn: () => readonly Drawn[];
  /** The worker whose rows hold y, CSS px below the axis. */
  readonly workerAt: (y: number) => PlacedWorker | null;
  readonly onClick: (worker: PlacedWorker) => void;
  readonly signal: AbortSignal;
}

export function attachStackPointer(p: StackPointer): void {
  const { canvas, tipBox, signal } = p;
  let drag: { x: number; window: AxisWindow; moved: boolean } | null = null;
  canvas.addEventListener("mousedown", (event) => (drag = { x: event.clientX, window: p.window(), moved: false }), { signal });
  globalThis.addEventListener(
    "mouseup",
    (event) => {
      if (drag === null) return;
      const clicked = !drag.moved;
      drag = null;
      if (clicked && event.target === canvas) {
        const w = p.workerAt(event.clientY - canvas.getBoundingClientRect().top - AXIS_PX);
        if (w !== null) p.onClick(w);
      }
    },
    { signal },
  );
  canvas.addEventListener(
    "mousemove",
    (event) => {
      if (drag !== null && Math.abs(event.clientX - drag.x) > 3) {
        drag.moved = true;
        tipBox.hidden = true;
        p.moveTo(panWindow(drag.window, event.clientX - drag.x, p.plotWidth()));
        return;
      }
      const rect = canvas.getBoundingClientRect();
      const d = drawnAt(p.drawn(), event.clientX - rect.left, event.clientY - rect.top);
      if (d === null) {
        tipBox.hidden = true;
        return;
      }
      tipBox.replaceChildren(...d.lines.map((line) => el("p", {}, line)));
      tipBox.hidden = false;
      tipBox.style.left = `${Math.min(event.clientX + 12, globalThis.innerWidth - tipBox.offsetWidth - 4)}px`;
      tipBox.style.top = `${event.clientY + 14}px`;
    },
    { signal },
  );
  canvas.addEventListener("mouseleave", () => (tipBox.hidden = true), { signal });
  canvas.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault();
      const x = event.clientX - canvas.getBoundingClientRect().left - p.gutter;
      p.moveTo(zoomWindow(p.window(), Math.exp(event.deltaY * 0.002), Math.max(0, x), p.plotWidth()));
    },
    { signal, passive: false },
  );
}
