// Styles of the Memory, Distributed, Call stacks and Modules views (on top of view_styles.ts
// and the shell's colour variables), injected once per document.
import { injectStyleOnce } from "./dom";

const STYLE_ELEMENT_ID = "profscope-analysis-styles";

const CSS = `
.ps-button:disabled { opacity: 0.5; cursor: default; }
.ps-brushable .u-over { cursor: crosshair; }
.ps-brushable .u-select { background: rgba(245, 124, 0, 0.18); }
.ps-chart-head { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: baseline; margin-bottom: 6px; }
.ps-chart-head h3 { margin: 0; }
.ps-chart-option { display: inline-flex; gap: 4px; align-items: center; cursor: pointer; margin-left: auto; }
.ps-hover-line { font-size: 12px; color: var(--ps-fg-muted); min-height: 1.45em; margin: 4px 0 0; font-variant-numeric: tabular-nums; }
.ps-stacks-none { color: var(--ps-fg); border-left: 4px solid var(--ps-accent); background: var(--ps-bg-raised); padding: 6px 12px; border-radius: 0 6px 6px 0; }
.ps-range-bar { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; }
.ps-range-bar .ps-range-text { font-variant-numeric: tabular-nums; }
.ps-range-bar[data-selected="true"] .ps-range-text { color: var(--ps-accent); font-weight: 500; }
.ps-badge { color: var(--ps-error-fg); font-weight: 600; }
.ps-callout { border-left: 4px solid var(--ps-accent); background: var(--ps-bg-raised); padding: 10px 14px; border-radius: 0 6px 6px 0; }
.ps-callout p { margin: 0; }
.ps-callout .ps-callout-main { font-size: 14px; font-weight: 500; }
.ps-rank-chart { display: flex; flex-direction: column; gap: 4px; max-height: 480px; overflow: auto; }
.ps-rank-row { display: grid; grid-template-columns: minmax(120px, 220px) minmax(0, 1fr) 84px; gap: 10px; align-items: center; }
.ps-rank-row[data-straggler="true"] .ps-rank-name { color: var(--ps-accent); font-weight: 600; }
.ps-rank-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 12px; }
.ps-rank-track { height: 18px; background: var(--ps-bg-raised); border-radius: 2px; overflow: hidden; }
.ps-rank-bar { display: flex; height: 100%; }
.ps-rank-value { font-size: 12px; color: var(--ps-fg-muted); font-variant-numeric: tabular-nums; text-align: right; }
.ps-toggle { font: inherit; background: none; border: 0; padding: 0 4px 0 0; width: 18px; cursor: pointer; color: var(--ps-fg-muted); }
.ps-toggle:hover { color: var(--ps-fg); }
.ps-toggle-spacer { display: inline-block; width: 18px; }
.ps-sub-row td { background: var(--ps-bg-raised); font-size: 12px; }
.ps-sub-row td:first-child { padding-left: 32px; }
.ps-tree-scroll { max-height: 640px; overflow: auto; border: 1px solid var(--ps-border); border-radius: 6px; }
.ps-tree-table th { position: sticky; top: 0; background: var(--ps-bg-raised); z-index: 1; }
.ps-tree-table th button { font: inherit; font-weight: 600; color: inherit; background: none; border: 0; padding: 0; cursor: pointer; }
.ps-tree-table th[aria-sort="ascending"] button::after { content: " ▲"; color: var(--ps-accent); }
.ps-tree-table th[aria-sort="descending"] button::after { content: " ▼"; color: var(--ps-accent); }
.ps-tree-table tr:hover td { background: var(--ps-bg-hover); }
.ps-tree-name { white-space: nowrap; }
.ps-segmented { display: inline-flex; border: 1px solid var(--ps-border); border-radius: 4px; overflow: hidden; }
.ps-segmented button { font: inherit; color: var(--ps-fg); background: var(--ps-bg); border: 0; padding: 3px 10px; cursor: pointer; }
.ps-segmented button + button { border-left: 1px solid var(--ps-border); }
.ps-segmented button[aria-pressed="true"] { background: var(--ps-accent); color: var(--ps-accent-fg); }
.ps-flame { position: relative; width: 100%; }
.ps-flame canvas { display: block; width: 100%; cursor: pointer; }
.ps-flame canvas:focus-visible { outline: 2px solid var(--ps-accent); outline-offset: 2px; }
.ps-breadcrumb { display: flex; flex-wrap: wrap; gap: 2px 4px; align-items: center; font-size: 12px; min-height: 1.6em; }
.ps-breadcrumb button { max-width: 260px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ps-breadcrumb .ps-crumb-sep { color: var(--ps-fg-muted); }
.ps-download { color: var(--ps-accent); }
`;

export function injectAnalysisStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
