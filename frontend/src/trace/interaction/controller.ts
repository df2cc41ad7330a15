// Mouse, wheel, trackpad and keyboard on the timeline canvas. It changes the view through its
// host and asks for a frame; it never draws. Gestures:
//   wheel / pinch: zoom around the cursor · sideways swipe: pan · shift+wheel: scroll tracks
//   drag: pan (and scroll) · shift+drag or drag on the time axis: measure a range
//   click: select a slice (a busy block: zoom into it) · click a group header: collapse it
//   W/S: zoom in/out · A/D: pan · F or Z: zoom to the range or the selected slice · Esc: clear
//   drag the label column's edge: resize it · click a track name: pin it to the top
//   / : search · N / Shift+N (or Enter / Shift+Enter): next / previous match
import { panBy, TimeScale, zoomAround, type Viewport } from "../time_scale";
import type { Hit } from "./hit_test";
import { isDrag, keyMotion, motionKeyOf, wheelActions, type MotionKey } from "./navigation";

export interface InteractionHost {
  readonly canvas: HTMLCanvasElement;
  /** Element whose keydown events drive the keyboard (the viewer's root). */
  readonly keyTarget: HTMLElement;
  headerWidth(): number;
  axisHeight(): number;
  /** Width of the timeline area, CSS px. */
  timelineWidth(): number;
  spanDuration(): number;
  view(): Viewport;
  setView(view: Viewport): void;
  scrollBy(px: number): void;
  /** Page height for wheel deltas given in pages. */
  pageHeight(): number;
  /** What is at canvas coordinates (CSS px). */
  hitAt(x: number, y: number): Hit | null;
  hover(hit: Hit | null, clientX: number, clientY: number): void;
  click(hit: Hit | null): void;
  toggleGroup(group: string): void;
  setRange(range: Viewport | null): void;
  range(): Viewport | null;
  /** A range drag moved over canvas y (CSS px) from `y0` to `y1`; null: from the time axis (every track). */
  setRangeRows(y0: number | null, y1: number | null): void;
  /** A range drag ended with a range: summarise what lies in it. */
  rangeDone(): void;
  /** The label column's width follows a drag of its edge (canvas x, CSS px). */
  setHeaderWidth(px: number): void;
  /** The pointer is over the label column's edge (a resize cursor). */
  gripHover(on: boolean): void;
  /** Step through the matches of the search box (1: next, -1: previous); focus the search box. */
  searchStep(direction: 1 | -1): void;
  focusSearch(): void;
  zoomToSelection(): void;
  clearSelection(): void;
  requestFrame(): void;
}

type DragMode = "pan" | "range" | "resize";

/** How close to the label column's edge a press resizes it, px. */
const RESIZE_GRIP_PX = 4;

interface DragState {
  readonly mode: DragMode;
  readonly startX: number;
  readonly startY: number;
  lastX: number;
  lastY: number;
  /** Offset µs where a range drag started. */
  readonly anchorTime: number;
  moved: boolean;
}

function isTextInput(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
}

export class InteractionController {
  private readonly held = new Set<MotionKey>();
  private lastStep: number | null = null;
  private drag: DragState | null = null;
  /** Last pointer position over the canvas (CSS px), for zooming around it with W/S. */
  private pointer: { x: number; y: number } | null = null;
  private readonly cleanups: (() => void)[] = [];

  constructor(private readonly host: InteractionHost) {
    const canvas = host.canvas;
    const win = canvas.ownerDocument.defaultView ?? window;
    this.listen(canvas, "wheel", (event) => this.onWheel(event as WheelEvent), { passive: false });
    this.listen(canvas, "mousedown", (event) => this.onMouseDown(event as MouseEvent));
    this.listen(canvas, "mousemove", (event) => this.onHoverMove(event as MouseEvent));
    this.listen(canvas, "mouseleave", () => {
      this.pointer = null;
      if (this.drag === null) host.hover(null, 0, 0);
    });
    this.listen(win, "mousemove", (event) => this.onDragMove(event as MouseEvent));
    this.listen(win, "mouseup", (event) => this.onMouseUp(event as MouseEvent));
    this.listen(host.keyTarget, "keydown", (event) => this.onKeyDown(event as KeyboardEvent));
    this.listen(win, "keyup", (event) => this.onKeyUp(event as KeyboardEvent));
    this.listen(win, "blur", () => this.held.clear());
  }

  private listen(target: EventTarget, type: string, handler: (event: Event) => void, options?: AddEventListenerOptions): void {
    target.addEventListener(type, handler, options);
    this.cleanups.push(() => target.removeEventListener(type, handler, options));
  }

  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.held.clear();
  }

  /** True while keys are held: the viewer keeps animating. */
  get animating(): boolean {
    return this.held.size > 0;
  }

  /** Applies held keys for the time since the last frame. */
  step(now: number): void {
    if (this.held.size === 0) {
      this.lastStep = null;
      return;
    }
    const elapsed = this.lastStep === null ? 16 : now - this.lastStep;
    this.lastStep = now;
    const motion = keyMotion(this.held, elapsed);
    let view = this.host.view();
    const span = this.host.spanDuration();
    if (motion.zoomFactor !== 1) {
      const scale = this.scale();
      const x = this.pointer !== null && this.pointer.x >= this.host.headerWidth() ? this.pointer.x - this.host.headerWidth() : scale.width / 2;
      view = zoomAround(view, scale.pxToTime(x), motion.zoomFactor, span);
    }
    if (motion.panFraction !== 0) view = panBy(view, motion.panFraction * (view.end - view.start), span);
    this.host.setView(view);
  }

  private scale(): TimeScale {
    return new TimeScale(this.host.view(), this.host.timelineWidth());
  }

  private local(event: MouseEvent): { x: number; y: number } {
    const rect = this.host.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private onWheel(event: WheelEvent): void {
    const { x } = this.local(event);
    const headerWidth = this.host.headerWidth();
    if (x < headerWidth && !event.shiftKey) return; // over the names: the page scrolls the tracks
    const actions = wheelActions(event, this.host.pageHeight());
    if (actions.length === 0) return;
    event.preventDefault();
    const span = this.host.spanDuration();
    let view = this.host.view();
    for (const action of actions) {
      if (action.kind === "scroll") {
        this.host.scrollBy(action.px);
      } else if (action.kind === "pan") {
        view = panBy(view, this.scale().pxToDuration(action.px), span);
      } else {
        const anchor = new TimeScale(view, this.host.timelineWidth()).pxToTime(Math.max(0, x - headerWidth));
        view = zoomAround(view, anchor, action.factor, span);
      }
    }
    this.host.setView(view);
  }

  private onResizeGrip(x: number): boolean {
    return Math.abs(x - this.host.headerWidth()) <= RESIZE_GRIP_PX;
  }

  private onMouseDown(event: MouseEvent): void {
    if (event.button !== 0) return;
    const { x, y } = this.local(event);
    this.host.canvas.focus({ preventScroll: true });
    if (this.onResizeGrip(x)) {
      event.preventDefault();
      this.drag = { mode: "resize", startX: x, startY: y, lastX: x, lastY: y, anchorTime: 0, moved: false };
      return;
    }
    if (x < this.host.headerWidth()) {
      const hit = this.host.hitAt(x, y);
      if (hit?.kind === "group") this.host.toggleGroup(hit.group);
      else if (hit?.kind === "label") this.host.click(hit);
      return;
    }
    event.preventDefault(); // no text selection while dragging
    const onAxis = y < this.host.axisHeight();
    const mode: DragMode = event.shiftKey || onAxis ? "range" : "pan";
    if (mode === "range") this.host.setRangeRows(onAxis ? null : y, onAxis ? null : y);
    const anchorTime = this.scale().pxToTime(x - this.host.headerWidth());
    this.drag = { mode, startX: x, startY: y, lastX: x, lastY: y, anchorTime, moved: false };
    this.host.hover(null, 0, 0);
  }

  private onDragMove(event: MouseEvent): void {
    const drag = this.drag;
    if (drag === null) return;
    const { x, y } = this.local(event);
    if (!drag.moved && !isDrag(x - drag.startX, y - drag.startY)) return;
    drag.moved = true;
    if (drag.mode === "resize") {
      this.host.setHeaderWidth(x);
    } else if (drag.mode === "pan") {
      const dx = x - drag.lastX;
      const dy = y - drag.lastY;
      if (dx !== 0) this.host.setView(panBy(this.host.view(), -this.scale().pxToDuration(dx), this.host.spanDuration()));
      if (dy !== 0) this.host.scrollBy(-dy);
    } else {
      const time = this.scale().pxToTime(Math.max(0, Math.min(this.host.timelineWidth(), x - this.host.headerWidth())));
      this.host.setRange({ start: Math.min(drag.anchorTime, time), end: Math.max(drag.anchorTime, time) });
      if (drag.startY >= this.host.axisHeight()) this.host.setRangeRows(drag.startY, Math.max(this.host.axisHeight(), y));
    }
    drag.lastX = x;
    drag.lastY = y;
  }

  private onMouseUp(event: MouseEvent): void {
    const drag = this.drag;
    if (drag === null) return;
    this.drag = null;
    if (drag.moved) {
      if (drag.mode === "range" && this.host.range() !== null) this.host.rangeDone();
      return;
    }
    if (drag.mode === "resize") return;
    const { x, y } = this.local(event);
    if (drag.mode === "range") {
      this.host.setRange(null); // a click on the axis (or shift-click) clears the measurement
      return;
    }
    this.host.click(this.host.hitAt(x, y));
  }

  private onHoverMove(event: MouseEvent): void {
    const position = this.local(event);
    this.pointer = position;
    if (this.drag !== null) return;
    if (this.onResizeGrip(position.x)) {
      this.host.hover(null, 0, 0);
      this.host.gripHover(true);
      return;
    }
    this.host.gripHover(false);
    const hit = position.y >= this.host.axisHeight() ? this.host.hitAt(position.x, position.y) : null;
    this.host.hover(hit, event.clientX, event.clientY);
  }

  private onKeyDown(event: KeyboardEvent): void {
    if (isTextInput(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    const motion = motionKeyOf(event.key);
    if (motion !== null) {
      event.preventDefault();
      if (!this.held.has(motion)) {
        this.held.add(motion);
        this.host.requestFrame();
      }
      return;
    }
    switch (event.key) {
      case "/":
        event.preventDefault();
        this.host.focusSearch();
        break;
      case "n":
      case "N":
      case "Enter":
        // Only on the timeline itself: Enter on a button or a table row keeps its own meaning.
        if (event.target !== this.host.canvas) return;
        event.preventDefault();
        this.host.searchStep(event.shiftKey ? -1 : 1);
        break;
      case "f":
      case "F":
      case "z":
      case "Z":
        event.preventDefault();
        this.host.zoomToSelection();
        break;
      case "Escape":
        if (this.host.range() !== null) this.host.setRange(null);
        else this.host.clearSelection();
        break;
      default:
    }
  }

  private onKeyUp(event: KeyboardEvent): void {
    const motion = motionKeyOf(event.key);
    if (motion !== null) this.held.delete(motion);
  }
}
