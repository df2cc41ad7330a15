// Modules: the nn.Module hierarchy (recorded with with_modules=True) as an expandable tree
// table with calls and forward/backward time, host and device. A column header sorts the
// children of every module by that column. URL parameters: modules.sort. The table is tree_table.ts, its columns,
// figures and order model.ts.
import { fetchModules, type ModulesData } from "../../api/modules";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { emptyNote, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { formatCount } from "../../lib/format";
import { indexTree } from "../../lib/tree_model";
import type { ViewContext, ViewDefinition } from "../types";
import { hiddenColumnsText, moduleValues, recordedColumns } from "./model";
import { createModulesTable } from "./tree_table";

function mountModules(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "modules-page" });
  host.appendChild(page);
  if (ref === null) return;
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Modules"), body);

  function show(data: ModulesData): void {
    const nodes = data.nodes;
    if (!data.available || nodes === null) {
      replaceChildren(
        body,
        emptyNote(
          "modules-unavailable",
          "This span records no modules",
          data.hint ?? "Record with torch.profiler.profile(with_modules=True, with_stack=True) to see modules.",
        ),
      );
      return;
    }
    const index = indexTree(nodes.parent);
    const values = moduleValues(nodes, index);
    const { columns, hidden } = recordedColumns(values);
    const table = createModulesTable(ctx, nodes, index, values, columns);
    const expandAll = el("button", { className: "ps-button", testId: "modules-expand-all", attrs: { type: "button" } }, "Expand all");
    const collapseAll = el("button", { className: "ps-button", testId: "modules-collapse-all", attrs: { type: "button" } }, "Collapse all");
    expandAll.addEventListener("click", () => table.expandAll());
    collapseAll.addEventListener("click", () => table.collapseAll());
    const hiddenText = hiddenColumnsText(hidden);
    replaceChildren(
      body,
      el(
        "div",
        { className: "ps-controls" },
        expandAll,
        collapseAll,
        el("span", { className: "ps-count", testId: "modules-count" }, `${formatCount(Math.max(0, nodes.name.length - 1))} modules`),
      ),
      hiddenText === null ? null : el("p", { className: "ps-note", testId: "modules-hidden-columns" }, hiddenText),
      el("div", { className: "ps-tree-scroll" }, table.root),
    );
  }

  void loadInto(
    {
      host: body,
      fetch: (signal) => fetchModules(ctx.api, ref, signal),
      what: "the modules",
      testIdPrefix: "modules",
      errorTitle: "The modules could not be computed",
      render: show,
    },
    ctx.signal,
  );
}

export const modulesView: ViewDefinition = {
  id: "modules",
  label: "Modules",
  scope: "span",
  mount: mountModules,
};
