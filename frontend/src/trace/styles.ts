// CSS of the trace viewer, injected once per document next to the shell's stylesheet. It uses
// the shell's colour variables, so both themes work.
import { injectStyleOnce } from "../components/dom";

const STYLE_ELEMENT_ID = "profscope-trace-styles";

const CSS = `
.ps-view[data-testid="view-trace"] { height: 100%; min-height: 420px; display: flex; flex-direction: column; }
.ps-trace { display: flex; flex-direction: column; flex: 1; min-height: 0; gap: 8px; }
.ps-trace-toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; }
.ps-trace-search { display: inline-flex; align-items: center; gap: 4px; }
.ps-trace-search input {
  font: inherit; color: var(--ps-fg); background: var(--ps-bg); width: 220px;
  border: 1px solid var(--ps-border); border-radius: 4px; padding: 3px 6px;
}
.ps-trace-button, .ps-trace-icon-button {
  font: inherit; color: var(--ps-fg); background: var(--ps-bg-raised); cursor: pointer;
  border: 1px solid var(--ps-border); border-radius: 4px; padding: 3px 8px; text-decoration: none; white-space: nowrap;
}
.ps-trace-button:hover, .ps-trace-icon-button:hover { background: var(--ps-bg-hover); }
.ps-trace-button:disabled { opacity: 0.5; cursor: default; }
.ps-trace-icon-button { padding: 0 7px; line-height: 20px; font-size: 16px; }
.ps-trace-button:focus-visible, .ps-trace-icon-button:focus-visible, .ps-trace-link:focus-visible,
.ps-trace-canvas:focus-visible { outline: 2px solid var(--ps-accent); outline-offset: -2px; }
.ps-trace-count { color: var(--ps-fg-muted); min-width: 70px; font-variant-numeric: tabular-nums; }
.ps-trace-status { color: var(--ps-fg-muted); font-size: 12px; }
.ps-trace-status[data-state="error"] { color: var(--ps-error-fg); }
.ps-trace-help { margin-left: auto; color: var(--ps-fg-muted); font-size: 11px; }
.ps-trace-body { display: flex; flex: 1; min-height: 0; border: 1px solid var(--ps-border); border-radius: 4px; overflow: hidden; }
.ps-trace-scroller { position: relative; flex: 1; min-width: 0; overflow-y: auto; overflow-x: hidden; }
.ps-trace-canvas { position: sticky; top: 0; display: block; outline: none; cursor: default; }
.ps-trace-canvas[data-cursor="pointer"] { cursor: pointer; }
.ps-trace-canvas[data-cursor="grabbing"] { cursor: grabbing; }
.ps-trace-canvas[data-cursor="col-resize"] { cursor: col-resize; }
.ps-trace-details.ps-trace-range { flex-basis: 500px; max-width: 55%; }
.ps-trace-range-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; margin: 0 0 6px; }
.ps-trace-range-filter { flex: 1; min-width: 140px; }
.ps-trace-range .ps-share-bar { margin-top: 4px; }
.ps-trace-range .ps-legend { margin-top: 6px; }
.ps-trace-details {
  flex: 0 0 360px; max-width: 45%; overflow-y: auto; border-left: 1px solid var(--ps-border);
  padding: 8px 12px; background: var(--ps-bg); font-size: 12px;
}
.ps-trace-details-header { display: flex; align-items: flex-start; gap: 8px; }
.ps-trace-details-header h3 { flex: 1; font-size: 13px; font-weight: 600; margin: 2px 0 8px; overflow-wrap: anywhere; font-family: var(--ps-mono);
  max-height: 9.5em; overflow-y: auto; }
.ps-trace-whole { margin: 0 0 8px; font-size: 12px; }
.ps-trace-whole-text { max-height: 240px; overflow: auto; font-family: var(--ps-mono); white-space: pre-wrap; overflow-wrap: anywhere;
  border: 1px solid var(--ps-border); border-radius: 4px; padding: 4px 6px; background: var(--ps-bg-raised); }
.ps-trace-fields { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0 0 8px; }
.ps-trace-fields dt { color: var(--ps-fg-muted); }
.ps-trace-fields dd { margin: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.ps-trace-details-actions { margin: 0 0 8px; }
.ps-trace-section { border-top: 1px solid var(--ps-border); padding: 6px 0; }
.ps-trace-section h4 { font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; color: var(--ps-fg-muted); margin: 0 0 4px; }
.ps-trace-link-row { display: flex; flex-direction: column; align-items: stretch; gap: 2px; margin: 0 0 6px; }
.ps-trace-link-label { color: var(--ps-fg-muted); }
.ps-trace-link {
  font: 12px/1.4 var(--ps-mono); text-align: left; color: var(--ps-fg); background: none; cursor: pointer;
  border: 1px solid transparent; border-radius: 3px; padding: 1px 4px; overflow-wrap: anywhere;
}
.ps-trace-link:hover { background: var(--ps-bg-hover); border-color: var(--ps-border); }
.ps-trace-link-name { color: var(--ps-accent); }
.ps-trace-args { border-collapse: collapse; width: 100%; }
.ps-trace-critical-bar { width: 30%; padding-left: 6px; }
.ps-trace-critical-fill { display: block; height: 8px; border-radius: 2px; min-width: 1px; }
.ps-trace-args th { text-align: left; font-weight: 400; color: var(--ps-fg-muted); padding: 1px 8px 1px 0; vertical-align: top; white-space: nowrap; }
.ps-trace-args td { font-family: var(--ps-mono); overflow-wrap: anywhere; padding: 1px 0; }
.ps-trace-range-counters th { white-space: normal; }
.ps-trace-range-counters thead th:not(:first-child) { text-align: right; padding: 1px 0 1px 8px; }
.ps-trace-range-counters td { white-space: nowrap; text-align: right; padding: 1px 0 1px 8px; overflow-wrap: normal; }
.ps-trace-stack { margin: 0; padding-left: 22px; font-family: var(--ps-mono); overflow-wrap: anywhere; }
.ps-trace-ancestors { display: flex; flex-direction: column; gap: 1px; }
.ps-trace-muted { color: var(--ps-fg-muted); }
.ps-trace-error { color: var(--ps-error-fg); overflow-wrap: anywhere; }
.ps-trace-tooltip {
  position: fixed; z-index: 10; pointer-events: none; max-width: 440px; padding: 5px 8px;
  background: var(--ps-bg-raised); color: var(--ps-fg); border: 1px solid var(--ps-border); border-radius: 4px;
  box-shadow: 0 2px 6px rgba(0, 0, 0, 0.2); font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere;
}
.ps-trace-tooltip strong { font-family: var(--ps-mono); font-weight: 600; }
.ps-trace-loading { color: var(--ps-fg-muted); padding: 24px 0; }
`;

export function injectTraceStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
