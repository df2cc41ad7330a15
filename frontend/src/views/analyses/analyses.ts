// Analyses: the questions that come after the overview, one section each (idle time by cause, kernel
// launches, queue length, frequent kernel sequences, annotations), all over the Overview's steps. Each
// section loads its own route, so a slow or failing analysis leaves the others in place.
import { el, injectStyleOnce } from "../../components/dom";
import { injectViewStyles } from "../../components/view_styles";
import { spanRefOf } from "../../components/view_parts";
import { sectionFrame } from "./section_frame";
import { ANALYSIS_SECTIONS } from "./section_list";
import type { ViewContext, ViewDefinition } from "../types";

const STYLE_ELEMENT_ID = "profscope-analyses-styles";
const CSS = `
.ps-analysis { display: flex; flex-direction: column; gap: 10px; }
.ps-analysis h2 { margin: 0; }
.ps-analysis-body { display: flex; flex-direction: column; gap: 12px; }
.ps-analysis-table { display: flex; flex-direction: column; gap: 4px; }
.ps-analysis-empty { margin: 0; }
`;

function injectStyles(doc: Document): void {
  injectViewStyles(doc);
  injectStyleOnce(doc, STYLE_ELEMENT_ID, CSS);
}

function mountAnalyses(host: HTMLElement, ctx: ViewContext): void {
  injectStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "analyses-page" });
  host.appendChild(page);
  if (ref === null) return;
  const sectionCtx = {
    api: ctx.api,
    ref,
    signal: ctx.signal,
    framework: ctx.selection.run?.framework ?? null,
    navigate: ctx.navigate.bind(ctx),
  };
  for (const section of ANALYSIS_SECTIONS) {
    const frame = sectionFrame(section);
    page.appendChild(frame.root);
    section.mount(frame.body, sectionCtx);
  }
}

export const analysesView: ViewDefinition = {
  id: "analyses",
  label: "Analyses",
  scope: "span",
  mount: mountAnalyses,
};
