// All of the frontend's CSS, injected as one <style> element (the bundle ships nothing else;
// TensorBoard's CSP allows inline styles). Colours are variables so both themes share rules.
import { injectStyleOnce } from "./components/dom";

const STYLE_ELEMENT_ID = "profscope-styles";

const CSS = `
:root {
  --ps-bg: #ffffff;
  --ps-bg-raised: #f5f5f5;
  --ps-bg-hover: #eeeeee;
  --ps-bg-selected: #fff3e0;
  --ps-fg: #212121;
  --ps-fg-muted: #616161;
  --ps-border: #e0e0e0;
  --ps-accent: #f57c00;
  --ps-accent-fg: #ffffff;
  --ps-error-bg: #fdecea;
  --ps-error-fg: #b71c1c;
  --ps-error-border: #f5c6cb;
  --ps-code-bg: #f5f5f5;
  --ps-ok: #2e7d32;
  --ps-font: Roboto, system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  --ps-mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
  color-scheme: light;
}
:root[data-theme="dark"] {
  --ps-bg: #303030;
  --ps-bg-raised: #3a3a3a;
  --ps-bg-hover: #454545;
  --ps-bg-selected: #4a3a28;
  --ps-fg: #e8e8e8;
  --ps-fg-muted: #a8a8a8;
  --ps-border: #4d4d4d;
  --ps-accent: #ff9800;
  --ps-accent-fg: #212121;
  --ps-error-bg: #4a2626;
  --ps-error-fg: #ffb4ab;
  --ps-error-border: #6d3333;
  --ps-code-bg: #262626;
  --ps-ok: #81c784;
  color-scheme: dark;
}
html, body { margin: 0; height: 100%; background: var(--ps-bg); color: var(--ps-fg); }
body { font: 13px/1.45 var(--ps-font); }
.ps-app { display: flex; flex-direction: column; height: 100%; min-height: 0; }
.ps-toolbar {
  display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px;
  padding: 8px 16px; border-bottom: 1px solid var(--ps-border); background: var(--ps-bg-raised);
}
.ps-picker { display: inline-flex; align-items: center; gap: 6px; color: var(--ps-fg-muted); }
.ps-picker select {
  font: inherit; color: var(--ps-fg); background: var(--ps-bg); max-width: 320px;
  border: 1px solid var(--ps-border); border-radius: 4px; padding: 3px 6px;
}
.ps-picker select:disabled { opacity: 0.6; }
.ps-run-meta { margin-left: auto; color: var(--ps-fg-muted); }
.ps-span-notes { position: relative; color: var(--ps-fg-muted); }
.ps-span-notes > summary { cursor: pointer; }
/* Opens as a panel over the page, so the toolbar keeps its height. */
.ps-span-notes > ul {
  position: absolute; right: 0; top: calc(100% + 4px); z-index: 20; margin: 0; padding: 8px 12px 8px 28px;
  width: max-content; max-width: min(520px, 90vw); color: var(--ps-fg); background: var(--ps-bg-raised);
  border: 1px solid var(--ps-border); border-radius: 4px; box-shadow: 0 2px 8px rgba(0, 0, 0, 0.2);
}
.ps-span-notes li + li { margin-top: 4px; }
.ps-tabs { display: flex; gap: 2px; padding: 0 12px; border-bottom: 1px solid var(--ps-border); overflow-x: auto; }
.ps-tab {
  font: inherit; font-weight: 500; color: var(--ps-fg-muted); background: none; border: 0;
  border-bottom: 2px solid transparent; padding: 8px 12px; cursor: pointer; white-space: nowrap;
}
.ps-tab:hover { color: var(--ps-fg); background: var(--ps-bg-hover); }
.ps-tab[aria-selected="true"] { color: var(--ps-accent); border-bottom-color: var(--ps-accent); }
.ps-tab:focus-visible, .ps-run-button:focus-visible { outline: 2px solid var(--ps-accent); outline-offset: -2px; }
.ps-loading { position: relative; height: 22px; padding: 0 16px; display: flex; align-items: center;
  gap: 8px; font-size: 12px; color: var(--ps-fg-muted); border-bottom: 1px solid var(--ps-border); }
.ps-loading[hidden] { display: none; }
.ps-loading-track, .ps-run-progress {
  position: relative; overflow: hidden; height: 4px; border-radius: 2px; background: var(--ps-border);
}
.ps-loading-track { flex: 0 0 200px; }
.ps-loading-fill, .ps-run-progress-fill { position: absolute; inset: 0 auto 0 0; background: var(--ps-accent); }
.ps-indeterminate .ps-loading-fill { width: 30% !important; animation: ps-slide 1.2s ease-in-out infinite; }
@keyframes ps-slide { from { left: -30%; } to { left: 100%; } }
@media (prefers-reduced-motion: reduce) { .ps-indeterminate .ps-loading-fill { animation: none; left: 0; } }
.ps-banner { margin: 8px 16px 0; }
.ps-body { display: flex; flex: 1; min-height: 0; }
.ps-runs { flex: 0 0 240px; overflow-y: auto; border-right: 1px solid var(--ps-border); padding: 8px 0; }
.ps-runs h2 { font-size: 11px; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase;
  color: var(--ps-fg-muted); margin: 4px 16px 8px; }
.ps-runs ul { list-style: none; margin: 0; padding: 0; }
.ps-run-button {
  display: block; width: 100%; text-align: left; font: inherit; color: var(--ps-fg); background: none;
  border: 0; padding: 6px 16px; cursor: pointer;
}
.ps-run-button:hover { background: var(--ps-bg-hover); }
.ps-run-entry[aria-current="true"] .ps-run-button { background: var(--ps-bg-selected); }
.ps-run-name { display: block; overflow-wrap: anywhere; }
.ps-run-status { display: block; font-size: 11px; color: var(--ps-fg-muted); }
.ps-run-entry[data-status="error"] .ps-run-status { color: var(--ps-error-fg); }
.ps-run-progress { margin-top: 4px; }
.ps-runs-skipped { margin: 12px 16px 0; font-size: 12px; color: var(--ps-fg-muted); }
.ps-runs-skipped > summary { cursor: pointer; }
.ps-runs-skipped p { margin: 6px 0 4px; }
.ps-runs-skipped .ps-empty-list { padding-left: 16px; margin: 0; }
.ps-runs-skipped .ps-empty-list li { margin: 4px 0; color: var(--ps-fg); }
.ps-main { flex: 1; min-width: 0; overflow: auto; padding: 16px 24px; }
.ps-empty { max-width: 720px; margin: 32px auto; }
.ps-empty h2 { font-size: 18px; font-weight: 500; margin: 0 0 8px; }
.ps-empty p { margin: 0 0 10px; color: var(--ps-fg-muted); }
.ps-empty-list { margin: 0 0 14px; padding-left: 20px; }
.ps-empty-list li { margin: 2px 0; }
.ps-empty-list code { font: 12px/1.5 var(--ps-mono); }
.ps-empty-paths { color: var(--ps-fg-muted); font: 12px/1.5 var(--ps-mono); word-break: break-all; }
.ps-code {
  font: 12px/1.5 var(--ps-mono); background: var(--ps-code-bg); border: 1px solid var(--ps-border);
  border-radius: 4px; padding: 10px 12px; overflow-x: auto; white-space: pre; margin: 0 0 10px;
}
.ps-error {
  border: 1px solid var(--ps-error-border); background: var(--ps-error-bg); color: var(--ps-error-fg);
  border-radius: 4px; padding: 10px 14px;
}
.ps-error h2 { font-size: 14px; font-weight: 600; margin: 0 0 6px; }
.ps-error-message { font: 12px/1.5 var(--ps-mono); white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
[hidden] { display: none !important; }
@media (max-width: 720px) { .ps-runs { display: none; } }
`;

/** Adds the stylesheet once per document. */
export function injectStyles(doc: Document): void {
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}
