// How input moves the view, as pure functions: wheel and trackpad gestures become zoom, pan
// or scroll; held W/A/S/D keys become a zoom and pan rate per millisecond.

export interface WheelInput {
  readonly deltaX: number;
  readonly deltaY: number;
  /** 0 pixels, 1 lines, 2 pages (WheelEvent.deltaMode). */
  readonly deltaMode: number;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
  readonly shiftKey: boolean;
}

export type WheelAction =
  /** Multiply the view's duration by `factor` around the cursor (<1 zooms in). */
  | { readonly kind: "zoom"; readonly factor: number }
  /** Move the view by `px` timeline pixels (positive: later). */
  | { readonly kind: "pan"; readonly px: number }
  /** Scroll the tracks vertically by `px`. */
  | { readonly kind: "scroll"; readonly px: number };

const LINE_PX = 16;
/** Zoom per pixel of wheel: a mouse notch (100 px) zooms by about 1.2x. */
const WHEEL_ZOOM_PER_PX = 0.002;
/** Pinch gestures arrive as ctrl+wheel with small deltas: zoom faster per pixel. */
const PINCH_ZOOM_PER_PX = 0.01;

export function wheelPixels(delta: number, deltaMode: number, pagePx: number): number {
  if (deltaMode === 1) return delta * LINE_PX;
  if (deltaMode === 2) return delta * pagePx;
  return delta;
}

/**
 * Over the timeline: vertical wheel (or pinch, ctrl/cmd+wheel) zooms around the cursor,
 * horizontal wheel (trackpad swipe) pans, shift+wheel scrolls the tracks.
 */
export function wheelActions(input: WheelInput, pagePx: number): WheelAction[] {
  const dx = wheelPixels(input.deltaX, input.deltaMode, pagePx);
  const dy = wheelPixels(input.deltaY, input.deltaMode, pagePx);
  if (input.shiftKey) {
    // Browsers turn shift+wheel into horizontal deltas; either way it means "scroll".
    const px = dy !== 0 ? dy : dx;
    return px !== 0 ? [{ kind: "scroll", px }] : [];
  }
  if (input.ctrlKey || input.metaKey) {
    return dy !== 0 ? [{ kind: "zoom", factor: Math.exp(dy * PINCH_ZOOM_PER_PX) }] : [];
  }
  const actions: WheelAction[] = [];
  // A trackpad gesture carries both: a mostly sideways one is a pan, a mostly vertical one a zoom.
  if (Math.abs(dx) > Math.abs(dy)) {
    actions.push({ kind: "pan", px: dx });
  } else if (dy !== 0) {
    actions.push({ kind: "zoom", factor: Math.exp(dy * WHEEL_ZOOM_PER_PX) });
  }
  return actions;
}

/** Keys that move the view while held. */
export const MOTION_KEYS = ["w", "a", "s", "d"] as const;
export type MotionKey = (typeof MOTION_KEYS)[number];

export function motionKeyOf(key: string): MotionKey | null {
  const lower = key.toLowerCase();
  return (MOTION_KEYS as readonly string[]).includes(lower) ? (lower as MotionKey) : null;
}

/** Zoom speed with W/S: e^(rate·s), about 4.5x per second. */
export const KEY_ZOOM_RATE_PER_S = 1.5;
/** Pan speed with A/D: this many view widths per second. */
export const KEY_PAN_WIDTHS_PER_S = 1.2;

export interface KeyMotion {
  /** Multiply the duration by this (<1: zoom in). */
  readonly zoomFactor: number;
  /** Move by this fraction of the view's duration (positive: later). */
  readonly panFraction: number;
}

/** What the held keys do over `elapsedMs` (a frame). Opposite keys cancel out. */
export function keyMotion(held: ReadonlySet<MotionKey>, elapsedMs: number): KeyMotion {
  const seconds = Math.max(0, Math.min(elapsedMs, 100)) / 1000; // a stalled frame must not jump
  const zoomDirection = (held.has("s") ? 1 : 0) - (held.has("w") ? 1 : 0);
  const panDirection = (held.has("d") ? 1 : 0) - (held.has("a") ? 1 : 0);
  return {
    zoomFactor: Math.exp(zoomDirection * KEY_ZOOM_RATE_PER_S * seconds),
    panFraction: panDirection * KEY_PAN_WIDTHS_PER_S * seconds,
  };
}

/** A press shorter than this many pixels is a click, not a drag. */
export const DRAG_THRESHOLD_PX = 4;

export function isDrag(dx: number, dy: number): boolean {
  return Math.hypot(dx, dy) >= DRAG_THRESHOLD_PX;
}
