// An error box. The message is shown as text, verbatim: it often quotes a trace file.
import { el } from "./dom";

export function createErrorPanel(testId: string, title: string, message: string): HTMLElement {
  return el(
    "div",
    { className: "ps-error", testId, attrs: { role: "alert" } },
    el("h2", {}, title),
    el("pre", { className: "ps-error-message", testId: `${testId}-message` }, message),
  );
}
