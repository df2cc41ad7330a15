// A flame graph (icicle: root on top) drawn on a canvas: frame widths ∝ total time, colours by
// name, labels where they fit, a tooltip on hover, click to zoom into a frame (click an
// ancestor above it, or the zoomed frame itself, to go back up), and search highlighting.
// Layout, colours, search and the tooltip's text are pure (lib/flame_layout.ts), the drawing is flame_canvas.ts;
// this file keeps the graph's state and listens.
// Names are drawn with fillText, never parsed as markup.
import {
  focusAfterClick,
  focusAfterKey,
  frameAt,
  frameName,
  frameTooltipText,
  layoutFlame,
  validFocus,
  type FlameLayout,
  type FlameTree,
  type SearchResult,
} from "../lib/flame_layout";
import { el } from "./dom";
import { drawFlame, ROW_HEIGHT } from "./flame_canvas";

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
    drawFlame(canvas, { tree, layout, width, search, hovered });
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
      if (node !== null) tooltip.textContent = frameTooltipText(tree, node, focus, options.formatValue);
    }
    tooltip.hidden = node === null;
    if (node !== null && event !== null) placeTooltip(event);
  }

  function setFocus(node: number): void {
    node = validFocus(tree, node);
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
    setFocus(focusAfterClick(tree, node, focus));
    setHovered(hitTest(event), event);
  });
  canvas.addEventListener("keydown", (event) => {
    const next = focusAfterKey(tree, event.key, focus);
    if (next === null) return;
    setFocus(next);
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
