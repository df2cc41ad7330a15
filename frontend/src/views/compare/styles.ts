// Styles of the Compare page and its run table (on top of view_styles.ts and the shell's
// colour variables), injected once per document.
import { injectStyleOnce } from "../../components/dom";

const STYLE_ELEMENT_ID = "profscope-compare-styles";

const CSS = `
.ps-cmp-pair { display: flex; flex-wrap: wrap; gap: 10px 24px; align-items: flex-end; }
.ps-cmp-pair label { display: flex; flex-direction: column; gap: 3px; color: var(--ps-fg-muted); font-size: 12px; min-width: 0; }
.ps-cmp-pair select { max-width: 460px; min-width: 240px; }
.ps-cmp-pair .ps-cmp-actions { display: flex; gap: 8px; align-items: center; }
.ps-cmp-batches { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin-top: 10px; font-size: 12px; color: var(--ps-fg-muted); }
.ps-cmp-batches label { display: inline-flex; gap: 6px; align-items: center; }
.ps-cmp-batch { min-width: 0; width: 130px; }
.ps-cmp-auto { margin: 10px 0 0; font-size: 12px; color: var(--ps-fg-muted); }
.ps-cmp-auto-warn { color: var(--ps-fg); border-left: 4px solid var(--ps-error-fg); background: var(--ps-bg-raised); padding: 6px 12px; border-radius: 0 6px 6px 0; }
.ps-cmp-throughput { color: var(--ps-fg-muted); font-size: 13px; }
.ps-cmp-role { display: inline-block; font-size: 11px; font-weight: 600; letter-spacing: 0.02em; text-transform: uppercase; }
.ps-cmp-role-base { color: #4e79a7; }
.ps-cmp-role-exp { color: var(--ps-accent); }
.ps-cmp-headline { font-size: 15px; margin: 0 0 10px; font-variant-numeric: tabular-nums; }
.ps-cmp-better { color: var(--ps-ok); }
.ps-cmp-worse { color: var(--ps-error-fg); }
.ps-cmp-bars { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content; gap: 6px 12px; align-items: center; }
.ps-cmp-bar-label { font-size: 12px; white-space: nowrap; }
.ps-cmp-bar-label small { display: block; color: var(--ps-fg-muted); font-size: 11px; max-width: 320px; overflow: hidden; text-overflow: ellipsis; }
.ps-cmp-track { height: 26px; background: var(--ps-bg-raised); border-radius: 3px; overflow: hidden; }
.ps-cmp-stack { display: flex; height: 100%; }
.ps-cmp-segment { display: block; height: 100%; min-width: 0; }
.ps-cmp-bar-value { font-size: 12px; font-variant-numeric: tabular-nums; text-align: right; }
.ps-cmp-mini { display: inline-flex; flex-direction: column; gap: 2px; width: 120px; vertical-align: middle; }
.ps-cmp-mini > span { display: block; height: 5px; border-radius: 1px; }
.ps-cmp-mini > span.ps-cmp-mini-exp { opacity: 0.55; }
.ps-cmp-callout { border-left: 4px solid var(--ps-accent); background: var(--ps-bg-raised); padding: 8px 14px; border-radius: 0 6px 6px 0; }
.ps-cmp-notes { margin: 0; padding-left: 18px; }
.ps-cmp-notes li { margin: 2px 0; }
.ps-cmp-only { font-weight: 600; }
.ps-cmp-only-base { color: #4e79a7; }
.ps-cmp-only-exp { color: var(--ps-accent); }
.ps-cmp-picks { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 0 0 8px; font-size: 12px; }
.ps-cmp-picks .ps-cmp-pick-text { color: var(--ps-fg-muted); }
.ps-vtable-td.ps-cmp-pick-baseline, .ps-vtable-td.ps-cmp-pick-experiment { font-weight: 600; }
.ps-vtable-td.ps-cmp-pick-baseline { color: #4e79a7; }
.ps-vtable-td.ps-cmp-pick-experiment { color: var(--ps-accent); }
.ps-vtable-td.ps-cmp-status-loading { color: var(--ps-fg-muted); }
.ps-vtable-td.ps-cmp-status-error { color: var(--ps-error-fg); }
.ps-cmp-section-head { display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: baseline; justify-content: space-between; }
details.ps-cmp-details > summary { cursor: pointer; font-size: 16px; font-weight: 500; margin: 0 0 10px; }
`;

/** Adds the stylesheet once per document. */
export function injectCompareStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
