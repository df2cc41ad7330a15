// Styles of the analysis views and their components (tables, charts, cards, tooltips),
// injected once next to the shell's stylesheet and built on its colour variables.
import { injectStyleOnce } from "./dom";

const STYLE_ELEMENT_ID = "profscope-view-styles";

const CSS = `
.ps-page { display: flex; flex-direction: column; gap: 20px; max-width: 1400px; }
.ps-page h2 { font-size: 16px; font-weight: 500; margin: 0 0 10px; }
.ps-page h3 { font-size: 13px; font-weight: 600; margin: 0 0 8px; }
.ps-page > div:empty { display: none; }
.ps-muted { color: var(--ps-fg-muted); }
.ps-note { color: var(--ps-fg-muted); font-size: 12px; margin: 6px 0 0; }
.ps-warn { color: var(--ps-error-fg); font-size: 12px; margin: 6px 0 0; }
.ps-panel { border: 1px solid var(--ps-border); border-radius: 6px; padding: 12px 16px; background: var(--ps-bg); }
.ps-row { display: flex; flex-wrap: wrap; gap: 16px; align-items: stretch; }
.ps-row > * { flex: 1 1 360px; min-width: 0; }
.ps-has-tip { text-decoration: underline dotted var(--ps-fg-muted); text-underline-offset: 3px; cursor: help; }
.ps-has-tip:focus-visible, [data-tip]:focus-visible { outline: 2px solid var(--ps-accent); outline-offset: 1px; }
.ps-tooltip {
  position: fixed; z-index: 1000; max-width: 360px; padding: 6px 9px; border-radius: 4px; pointer-events: none;
  background: var(--ps-fg); color: var(--ps-bg); font-size: 12px; line-height: 1.4; white-space: pre-wrap;
  overflow-wrap: anywhere; box-shadow: 0 2px 8px rgba(0,0,0,0.25);
}
.ps-kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 0; }
.ps-kv dt { color: var(--ps-fg-muted); }
.ps-kv dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.ps-config { display: flex; flex-wrap: wrap; gap: 16px 40px; align-items: flex-start; }
.ps-config .ps-kv { flex: 1 1 320px; }
.ps-marker-form { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; flex: 1 1 320px; }
.ps-marker-form label { color: var(--ps-fg-muted); }
.ps-input, .ps-select, .ps-button {
  font: inherit; color: var(--ps-fg); background: var(--ps-bg); border: 1px solid var(--ps-border);
  border-radius: 4px; padding: 3px 8px;
}
.ps-input { min-width: 180px; }
.ps-button { cursor: pointer; background: var(--ps-bg-raised); }
.ps-button:hover { background: var(--ps-bg-hover); }
.ps-link { font: inherit; color: var(--ps-accent); background: none; border: 0; padding: 0; cursor: pointer; text-decoration: underline; }
.ps-cards { display: flex; flex-wrap: wrap; gap: 12px; }
.ps-card { flex: 0 1 380px; border: 1px solid var(--ps-border); border-radius: 6px; padding: 10px 14px; background: var(--ps-bg-raised); }
.ps-card h3 { margin-bottom: 8px; overflow-wrap: anywhere; }
.ps-big { font-size: 20px; font-weight: 500; }
.ps-table { border-collapse: collapse; font-variant-numeric: tabular-nums; width: 100%; }
.ps-table th, .ps-table td { padding: 4px 10px; border-bottom: 1px solid var(--ps-border); text-align: left; vertical-align: top; }
.ps-table th { font-weight: 600; color: var(--ps-fg-muted); white-space: nowrap; }
.ps-table td.ps-num, .ps-table th.ps-num { text-align: right; white-space: nowrap; }
.ps-table tfoot td { font-weight: 600; border-bottom: 0; }
.ps-table pre { margin: 0; font: 11px/1.45 var(--ps-mono); white-space: pre-wrap; overflow-wrap: anywhere; }
.ps-name-cell { overflow-wrap: anywhere; }
.ps-inline-bar { display: inline-block; vertical-align: middle; width: 80px; height: 8px; margin-left: 8px;
  background: var(--ps-border); border-radius: 2px; overflow: hidden; }
.ps-inline-bar > span { display: block; height: 100%; }
.ps-swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; flex: none; }
.ps-chart { margin: 0; min-width: 0; }
.ps-chart figcaption { font-weight: 600; margin: 0 0 8px; }
.ps-uplot { width: 100%; min-height: 40px; }
.ps-uplot .u-axis { color: var(--ps-fg-muted); }
.ps-legend { list-style: none; margin: 8px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12px; }
.ps-legend li { display: inline-flex; align-items: center; gap: 2px; }
.ps-legend-value { color: var(--ps-fg-muted); margin-left: 6px; font-variant-numeric: tabular-nums; }
.ps-legend-title { font-size: 12px; color: var(--ps-fg-muted); margin: 6px 0 0; min-height: 1.45em; }
.ps-bar-list { display: flex; flex-direction: column; gap: 3px; }
.ps-bar-row { display: grid; grid-template-columns: minmax(0, 2fr) minmax(60px, 1.2fr) max-content; gap: 8px;
  align-items: center; font: inherit; color: inherit; background: none; border: 0; padding: 2px 4px; text-align: left;
  border-radius: 3px; width: 100%; }
button.ps-bar-row { cursor: pointer; }
button.ps-bar-row:hover { background: var(--ps-bg-hover); }
.ps-bar-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 12px; }
.ps-bar-track { height: 12px; background: var(--ps-bg-raised); border-radius: 2px; overflow: hidden; }
.ps-bar-fill { display: block; height: 100%; }
.ps-bar-value { font-size: 12px; color: var(--ps-fg-muted); font-variant-numeric: tabular-nums; text-align: right; min-width: 70px; }
.ps-share-bar { display: flex; height: 22px; border-radius: 3px; overflow: hidden; background: var(--ps-bg-raised); }
.ps-share-segment { display: block; height: 100%; }
.ps-controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
.ps-controls label { display: inline-flex; gap: 6px; align-items: center; color: var(--ps-fg-muted); }
.ps-count { color: var(--ps-fg-muted); margin-left: auto; font-variant-numeric: tabular-nums; }
.ps-csv-download { font-size: 12px; white-space: nowrap; }
.ps-section-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; margin: 0 0 8px; }
.ps-section-head h3, .ps-section-head h2 { margin: 0; }
.ps-section-head .ps-csv-download { margin-left: auto; }
.ps-vtable { border: 1px solid var(--ps-border); border-radius: 6px; overflow: hidden; position: relative; }
.ps-vtable::after { content: ""; position: absolute; top: 0; right: 0; bottom: 0; width: 28px; pointer-events: none;
  background: linear-gradient(to right, transparent, var(--ps-fg-muted)); opacity: 0; transition: opacity 0.15s; z-index: 3; }
.ps-vtable[data-more-right="true"]::after { opacity: 0.22; }
.ps-vtable-sticky { position: sticky; z-index: 1; background: var(--ps-bg); }
.ps-vtable-th.ps-vtable-sticky { z-index: 3; background: var(--ps-bg-raised); }
.ps-vtable-row:hover .ps-vtable-sticky { background: var(--ps-bg-hover); }
.ps-vtable-row[aria-selected="true"] .ps-vtable-sticky { background: var(--ps-bg-selected); }
.ps-vtable[data-more-left="true"] .ps-vtable-sticky-last { box-shadow: 4px 0 4px -3px rgba(0, 0, 0, 0.25); }
.ps-vtable-scroll { overflow: auto; position: relative; scrollbar-width: thin; }
.ps-vtable-inner { position: relative; }
.ps-vtable-head { display: grid; position: sticky; top: 0; z-index: 2; background: var(--ps-bg-raised);
  border-bottom: 1px solid var(--ps-border); }
.ps-vtable-th { min-width: 0; }
.ps-vtable-sort { display: flex; flex-direction: column; justify-content: flex-end; align-items: flex-start;
  width: 100%; height: 100%; font: inherit; font-weight: 600; color: var(--ps-fg-muted); background: none; border: 0;
  padding: 6px 8px; cursor: pointer; text-align: left; }
.ps-vtable-sort:hover { color: var(--ps-fg); background: var(--ps-bg-hover); }
.ps-vtable-th[aria-sort="ascending"] .ps-vtable-sort, .ps-vtable-th[aria-sort="descending"] .ps-vtable-sort { color: var(--ps-fg); }
.ps-vtable-sort.ps-align-right { align-items: flex-end; text-align: right; }
.ps-vtable-sort.ps-align-center { align-items: center; text-align: center; }
.ps-vtable-label { white-space: nowrap; }
.ps-vtable-unit { font-weight: 400; font-size: 11px; min-height: 1.3em; }
.ps-vtable-arrow { color: var(--ps-accent); white-space: pre; }
.ps-vtable-body { position: relative; }
.ps-vtable-row { display: grid; position: absolute; left: 0; right: 0; top: 0; align-items: center;
  border-bottom: 1px solid var(--ps-border); cursor: pointer; box-sizing: border-box; will-change: transform; }
.ps-vtable-row:hover { background: var(--ps-bg-hover); }
.ps-vtable-row[aria-selected="true"] { background: var(--ps-bg-selected); }
.ps-vtable-row:focus-visible { outline: 2px solid var(--ps-accent); outline-offset: -2px; }
.ps-vtable-td { padding: 0 8px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0;
  font-variant-numeric: tabular-nums; }
.ps-align-right { text-align: right; }
.ps-align-center { text-align: center; }
.ps-vtable-empty { padding: 16px; color: var(--ps-fg-muted); }
.ps-drill { border: 1px solid var(--ps-accent); }
.ps-drill-head { display: flex; gap: 12px; align-items: flex-start; justify-content: space-between; margin-bottom: 10px; }
.ps-drill-head h2 { overflow-wrap: anywhere; margin: 0; }
.ps-drill section { margin-top: 14px; }
.ps-drill-scroll { max-height: 360px; overflow: auto; }
.ps-drill-scroll th { position: sticky; top: 0; background: var(--ps-bg); z-index: 1; }
.ps-recos { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 10px; }
.ps-reco { border-left: 3px solid var(--ps-accent); padding: 4px 0 4px 12px; }
.ps-reco p { margin: 0 0 4px; }
.ps-evidence { display: flex; flex-wrap: wrap; gap: 2px 16px; margin: 0; font-size: 12px; color: var(--ps-fg-muted); }
.ps-evidence div { display: flex; gap: 4px; }
.ps-evidence dt::after { content: ":"; }
.ps-evidence dd { margin: 0; color: var(--ps-fg); font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.ps-view-loading { color: var(--ps-fg-muted); padding: 24px 0; }
.ps-view-empty h2 { font-size: 16px; font-weight: 500; margin: 0 0 6px; }
.ps-view-empty p { margin: 0; color: var(--ps-fg-muted); }
.ps-view-empty p + p { margin-top: 6px; }
.ps-view-empty .ps-empty-how { color: var(--ps-fg); }
.ps-view-empty .ps-button { margin-top: 10px; }
`;

/** Adds the stylesheet once per document. */
export function injectViewStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
