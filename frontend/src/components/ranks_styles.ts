// Styles of ranks side by side (the Distributed view's heat map and the trace's stacked ranks), injected
// once per document, on top of the shell's colour variables.
import { injectStyleOnce } from "./dom";

const STYLE_ELEMENT_ID = "profscope-ranks-styles";

const CSS = `.ps-heatmap { display: flex; flex-direction: column; gap: 6px; }
.ps-heatmap-frame { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 4px 8px; align-items: start; }
.ps-heatmap-axis { font-size: 11px; color: var(--ps-fg-muted); font-variant-numeric: tabular-nums; position: relative; }
.ps-heatmap-canvas { display: block; cursor: pointer; border: 1px solid var(--ps-border); }
.ps-heatmap-scroll { overflow-x: auto; }
.ps-ranks-tip { position: fixed; z-index: 20; pointer-events: none; background: var(--ps-bg-raised); color: var(--ps-fg);
  border: 1px solid var(--ps-border); border-radius: 4px; padding: 6px 8px; font-size: 12px; box-shadow: 0 2px 8px rgba(0,0,0,0.2);
  font-variant-numeric: tabular-nums; max-width: 480px; }
.ps-ranks-tip p { margin: 0; overflow-wrap: anywhere; }
.ps-ranks-tip p:first-child { font-weight: 600; }
.ps-heatmap-legend { display: flex; gap: 6px; align-items: center; font-size: 12px; color: var(--ps-fg-muted); }
.ps-heatmap-swatch { display: inline-block; width: 14px; height: 10px; border: 1px solid var(--ps-border); }
.ps-rank-stack { display: flex; flex-direction: column; gap: 8px; padding: 8px 0; }
.ps-rank-stack-bar { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; }
.ps-rank-stack-canvas { display: block; width: 100%; box-sizing: border-box; cursor: grab; border: 1px solid var(--ps-border); }
.ps-rank-stack-scroll { max-height: 72vh; overflow-y: auto; }
.ps-rank-stack-bar .ps-segmented { display: inline-flex; }
.ps-rank-stack-bar .ps-segmented button + button { margin-left: -1px; }
.ps-rank-stack-bar .ps-segmented button[aria-pressed="true"] { background: var(--ps-accent); border-color: var(--ps-accent); color: #fff; }
`;

export function injectRanksStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
