// The width of the timeline's name column: 220 px until a person drags its edge, then what they chose, kept in the
// browser's storage and never more than 60% of the canvas.

/** The label column's width until a person drags its edge (then kept in the browser's storage). */
export const HEADER_WIDTH = 220;
export const MIN_HEADER_WIDTH = 120;
/** The label column never takes more than this share of the canvas. */
const MAX_HEADER_SHARE = 0.6;
const HEADER_WIDTH_KEY = "profscope.trace.labelWidth";

/** The label column's width within what the canvas allows (a narrow canvas keeps room for the timeline). */
export function clampHeaderWidth(px: number, canvasWidth: number): number {
  const most = canvasWidth > 0 ? Math.max(MIN_HEADER_WIDTH, Math.floor(canvasWidth * MAX_HEADER_SHARE)) : Number.POSITIVE_INFINITY;
  return Math.round(Math.min(most, Math.max(MIN_HEADER_WIDTH, Number.isFinite(px) ? px : HEADER_WIDTH)));
}

export function storedHeaderWidth(win: Window): number {
  try {
    const stored = Number(win.localStorage.getItem(HEADER_WIDTH_KEY));
    return Number.isFinite(stored) && stored >= MIN_HEADER_WIDTH ? stored : HEADER_WIDTH;
  } catch {
    return HEADER_WIDTH;
  }
}

export function storeHeaderWidth(win: Window, px: number): void {
  try {
    win.localStorage.setItem(HEADER_WIDTH_KEY, String(Math.round(px)));
  } catch {
    // storage may be off (private windows, sandboxed frames): the width then lasts for this page
  }
}
