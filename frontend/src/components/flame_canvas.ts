// The flame graph's drawing: each laid-out frame as a box (width ∝ its total, colour by name; ancestors of the
// zoomed frame faded; while searching, matches highlighted and the rest dimmed), the frame under the pointer
// outlined, and names where they fit. Names are drawn with fillText, never parsed as markup.
import { fitLabel, frameColor, frameName, type FlameLayout, type FlameTree, type SearchResult } from "../lib/flame_layout";

export const ROW_HEIGHT = 18;
const LABEL_MIN_PX = 24;
const MATCH_COLOR = "hsl(292, 70%, 62%)";
const DIMMED_COLOR = "rgba(150, 150, 150, 0.35)";
const FONT = "11px system-ui, sans-serif";

export interface FlameFrameState {
  readonly tree: FlameTree;
  readonly layout: FlameLayout;
  /** CSS px. */
  readonly width: number;
  readonly search: SearchResult | null;
  readonly hovered: number | null;
}

/** Size the canvas to the layout's rows (its backing store only when that changes) and draw the frames. */
export function drawFlame(canvas: HTMLCanvasElement, state: FlameFrameState): void {
  const { tree, layout, width, search, hovered } = state;
  const dpr = window.devicePixelRatio || 1;
  const height = Math.max(1, layout.rows) * ROW_HEIGHT;
  canvas.style.height = `${height}px`;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }
  const ctx = canvas.getContext("2d");
  if (ctx === null) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = FONT;
  ctx.textBaseline = "middle";
  const measure = (text: string): number => ctx.measureText(text).width;
  const searching = search !== null && search.count > 0;
  for (const item of layout.frames) {
    const x = item.x * width;
    const w = item.width * width;
    const y = item.row * ROW_HEIGHT;
    const name = frameName(tree, item.node);
    const matched = searching && (search.matches[item.node] ?? 0) === 1;
    ctx.globalAlpha = item.ancestor ? 0.55 : 1;
    ctx.fillStyle = searching ? (matched ? MATCH_COLOR : DIMMED_COLOR) : frameColor(name);
    ctx.fillRect(x, y, Math.max(w - 1, 0.5), ROW_HEIGHT - 1);
    if (item.node === hovered) {
      ctx.strokeStyle = "#212121";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x + 0.75, y + 0.75, Math.max(w - 2.5, 0.5), ROW_HEIGHT - 2.5);
    }
    if (w >= LABEL_MIN_PX) {
      const label = fitLabel(name, w - 6, measure);
      if (label !== "") {
        ctx.fillStyle = "#1a1a1a";
        ctx.fillText(label, x + 3, y + ROW_HEIGHT / 2);
      }
    }
  }
  ctx.globalAlpha = 1;
}
