// A flame graph (icicle: root on top) drawn on a canvas: frame widths ∝ total time, colours by
// name, labels where they fit, a tooltip on hover, click to zoom into a frame (click an
// ancestor above it, or the zoomed frame itself, to go back up), and search highlighting.
// Layout, colours and search are pure (lib/flame_layout.ts); this file only draws and listens.
// Names are drawn with fillText, never parsed as markup.
import {
  fitLabel,
  frameAt,
  frameColor,
  frameName,
  layoutFlame,
  type FlameLayout,
  type FlameTree,
  type SearchResult,
} from "../lib/flame_layout";
import { formatCount, formatPercent } from "../lib/format";
import { el } from "./dom";

export interface FlameGraphOptions {
  readonly tree: FlameTree;
  readonly formatValue: (us: number) => string;
  readonly testId: string;
  readonly ariaLabel: string;
  /** The zoomed-in frame changed (the root when reset). */
  readonly onFocusChange?: (node: number) => void;
  /** The frame under the pointer, or null. */
  readonly onHover?: (node: number | null) => void;
  readonly signal: AbortSignal;
}

export interface FlameGraph {
  readonly root: HTMLElement;
  focus(node: number): void;
  readonly focused: () => number;
  setSearch(result: SearchResult | null): void;
}

const ROW_HEIGHT = 18;
const LABEL_MIN_PX = 24;
const MATCH_COLOR = "hsl(292, 70%, 62%)";
const DIMMED_COLOR = "rgba(150, 150, 150, 0.35)";
const FONT = "11px system-ui, sans-serif";

export function createFlameGraph(options: FlameGraphOptions): FlameGraph {
  const { tree } = options;
  const canvas = el("canvas", { attrs: { tabindex: "0", role: "img", "aria-label": options.ariaLabel } });
  const tooltip = el("div", { className: "ps-tooltip", testId: "flame-tooltip", hidden: true, attrs: { role: "tooltip" } });
  const root = el("div", { className: "ps-flame", testId: options.testId }, canvas, tooltip);
  let focus = 0;
  let search: SearchResult | null = null;
  let hovered: number | null = null;
  let width = 0;
  let layout: FlameLayout = { focus: 0, frames: [], rows: 0 };
  let frame: number | null = null;

  function relayout(): void {
    // Frames under half a pixel cannot be seen or pointed at: leave them (and their subtrees) out.
    layout = layoutFlame(tree, focus, width > 0 ? 0.5 / width : 0);
    root.dataset["frames"] = String(layout.frames.length);
    root.dataset["focus"] = frameName(tree, focus);
  }

  function draw(): void {
    frame = null;
    if (width <= 0) return;
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
      const matched = searching && (search!.matches[item.node] ?? 0) === 1;
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

  function schedule(): void {
    if (frame === null) frame = requestAnimationFrame(draw);
  }

  function hitTest(event: MouseEvent): number | null {
    const rect = canvas.getBoundingClientRect();
    if (rect.width <= 0) return null;
    const row = Math.floor((event.clientY - rect.top) / ROW_HEIGHT);
    const hit = frameAt(layout, (event.clientX - rect.left) / rect.width, row);
    return hit?.node ?? null;
  }

  function tooltipText(node: number): string {
    const total = tree.total[node] ?? 0;
    const all = tree.total[0] ?? 0;
    const focusTotal = tree.total[focus] ?? 0;
    const lines = [
      frameName(tree, node),
      `Total: ${options.formatValue(total)} (${formatPercent(all > 0 ? total / all : Number.NaN)} of all` +
        (focus !== 0 && focusTotal > 0 ? `, ${formatPercent(total / focusTotal)} of the zoomed frame)` : ")"),
      `Self: ${options.formatValue(tree.self[node] ?? Number.NaN)}`,
      `Calls: ${formatCount(tree.calls[node] ?? Number.NaN)}`,
    ];
    return lines.join("\n");
  }

  function placeTooltip(event: MouseEvent): void {
    const margin = 12;
    const box = tooltip.getBoundingClientRect();
    const left = Math.min(event.clientX + margin, window.innerWidth - box.width - 4);
    const top = event.clientY + margin + box.height > window.innerHeight ? event.clientY - box.height - margin : event.clientY + margin;
    tooltip.style.left = `${Math.max(4, left)}px`;
    tooltip.style.top = `${Math.max(4, top)}px`;
  }

  function setHovered(node: number | null, event: MouseEvent | null): void {
    if (node !== hovered) {
      hovered = node;
      options.onHover?.(node);
      schedule();
      if (node !== null) tooltip.textContent = tooltipText(node);
    }
    tooltip.hidden = node === null;
    if (node !== null && event !== null) placeTooltip(event);
  }

  function setFocus(node: number): void {
    if (node < 0 || node >= tree.count || (tree.depth[node] ?? -1) < 0) node = 0;
    if (node === focus) return;
    focus = node;
    relayout();
    schedule();
    options.onFocusChange?.(focus);
  }

  canvas.addEventListener("mousemove", (event) => setHovered(hitTest(event), event));
  canvas.addEventListener("mouseleave", () => setHovered(null, null));
  canvas.addEventListener("click", (event) => {
    const node = hitTest(event);
    if (node === null) return;
    // Clicking the zoomed frame goes one level up; anything else (an ancestor included) zooms to it.
    setFocus(node === focus ? (tree.parent[node] ?? -1) : node);
    setHovered(hitTest(event), event);
  });
  canvas.addEventListener("keydown", (event) => {
    if (event.key === "Escape" || event.key === "Home") setFocus(0);
    else if (event.key === "Backspace" || event.key === "ArrowUp") setFocus(Math.max(0, tree.parent[focus] ?? 0));
    else return;
    event.preventDefault();
  });

  const observer = new ResizeObserver(() => {
    const next = Math.floor(root.clientWidth);
    if (next <= 0 || next === width) return;
    width = next;
    relayout();
    draw();
  });
  observer.observe(root);
  options.signal.addEventListener(
    "abort",
    () => {
      observer.disconnect();
      if (frame !== null) cancelAnimationFrame(frame);
      frame = null;
    },
    { once: true },
  );
  relayout();

  return {
    root,
    focus: setFocus,
    focused: () => focus,
    setSearch(result) {
      search = result;
      root.dataset["matches"] = String(result?.count ?? 0);
      schedule();
    },
  };
}
