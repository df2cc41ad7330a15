// A view that is not built yet: says so, says what it will answer, and echoes the selection.
import { el } from "../components/dom";
import { spanLabel } from "../lib/format";
import type { ViewId } from "../state/url_state";
import type { ViewContext, ViewDefinition, ViewScope } from "./types";

function selectionSummary(ctx: ViewContext, scope: ViewScope): HTMLElement {
  const { run, worker, span, spanIndex } = ctx.selection;
  const rows: [string, string][] = [];
  if (run !== null) rows.push(["Run", run.name]);
  if (scope === "span" && worker !== null) rows.push(["Worker", worker.name]);
  if (scope === "span" && worker !== null && span !== null) {
    rows.push(["Span", spanLabel(spanIndex, worker.spans.length, span)]);
  }
  return el("dl", { className: "ps-selection" }, ...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
}

export function placeholderView(id: ViewId, label: string, scope: ViewScope, purpose: string): ViewDefinition {
  return {
    id,
    label,
    scope,
    mount(host, ctx) {
      host.appendChild(
        el(
          "section",
          { className: "ps-placeholder", testId: "view-placeholder", attrs: { "data-view": id } },
          el("h2", {}, label),
          el("p", {}, `The ${label} view is not available yet.`),
          el("p", {}, purpose),
          selectionSummary(ctx, scope),
        ),
      );
    },
  };
}
