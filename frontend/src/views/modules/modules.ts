// Modules: the nn.Module hierarchy (recorded with with_modules=True) as an expandable tree
// table with calls and forward/backward time, host and device. A column header sorts the
// children of every module by that column. URL parameters: modules.sort.
import { fetchModules, type ModuleTree, type ModulesData } from "../../api/modules";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { passiveTip } from "../../components/tooltip";
import { emptyNote, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { MODULES_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { formatCount } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import { allParents, expandedToDepth, flattenTree, indexTree, type TreeIndex } from "../../lib/tree_model";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import type { ViewContext, ViewDefinition } from "../types";

type ModuleMetric = "calls" | "forward_host" | "forward_device" | "backward_host" | "backward_device";

interface ModuleColumn {
  readonly id: string;
  readonly label: string;
  readonly unit?: string;
  readonly tip: string;
  readonly metric: ModuleMetric;
}

const COLUMNS: readonly ModuleColumn[] = [
  { id: "calls", label: "Calls", tip: DEF.calls, metric: "calls" },
  { id: "forward_host", label: "Forward host", unit: "µs", tip: DEF.forwardHost, metric: "forward_host" },
  { id: "forward_device", label: "Forward device", unit: "µs", tip: DEF.forwardDevice, metric: "forward_device" },
  { id: "backward_host", label: "Backward host", unit: "µs", tip: DEF.backwardHost, metric: "backward_host" },
  { id: "backward_device", label: "Backward device", unit: "µs", tip: DEF.backwardDevice, metric: "backward_device" },
];

/** Shown before any header is clicked: the order the modules were recorded in. */
const NATURAL_ORDER: SortState = { column: "order", direction: "asc" };

/**
 * The metric values to show per node. The "(model)" root carries no time of its own in the
 * answer, so it shows the sum of its children (the top-level modules) instead.
 */
export function moduleValues(nodes: ModuleTree, index: TreeIndex): Record<ModuleMetric, number[]> {
  const metrics: ModuleMetric[] = ["calls", "forward_host", "forward_device", "backward_host", "backward_device"];
  const out = {} as Record<ModuleMetric, number[]>;
  for (const metric of metrics) {
    const values = nodes[metric].map((value) => (Number.isFinite(value) ? value : 0));
    for (const root of index.roots) {
      const rootValue = values[root] ?? 0;
      if (rootValue === 0 && metric !== "calls") {
        values[root] = (index.children[root] ?? []).reduce((sum, child) => sum + (values[child] ?? 0), 0);
      }
    }
    out[metric] = values;
  }
  return out;
}

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
    // A time column that is zero everywhere (no GPU, or an inference run without backward) is left out.
    const recorded = (metric: ModuleMetric): boolean => metric === "calls" || values[metric].some((value) => value > 0);
    const columns = COLUMNS.filter((column) => recorded(column.metric));
    const hidden = COLUMNS.filter((column) => !recorded(column.metric)).map((column) => column.label.toLowerCase());
    const rootForward = index.roots.reduce((sum, rootNode) => sum + (values.forward_host[rootNode] ?? 0), 0);
    let expanded = expandedToDepth(index, 3);
    let sort = parseSortParam(ctx.param("sort"), columns.map((column) => column.id).concat(["name"]), NATURAL_ORDER);

    const headCells = new Map<string, HTMLElement>();
    const header = (id: string, label: string, tipText: string | null, numeric: boolean): HTMLElement => {
      const button = el("button", { attrs: { type: "button" } }, label);
      if (tipText !== null) passiveTip(button, tipText);
      button.addEventListener("click", () => {
        const first = id === "name" ? "asc" : "desc";
        sort =
          sort.column !== id
            ? { column: id, direction: first }
            : sort.direction === first
              ? { column: id, direction: first === "asc" ? "desc" : "asc" }
              : NATURAL_ORDER; // third click: back to the recorded order
        ctx.setParams({ sort: sort === NATURAL_ORDER ? null : formatSortParam(sort) });
        render();
      });
      const cell = el("th", { className: numeric ? "ps-num" : "", attrs: { scope: "col" } }, button);
      headCells.set(id, cell);
      return cell;
    };
    const head = el(
      "tr",
      {},
      header("name", "Module", null, false),
      ...columns.map((column) => header(column.id, column.unit !== undefined ? `${column.label} (${column.unit})` : column.label, column.tip, true)),
    );
    const tbody = el("tbody", {});
    const table = el("table", { className: "ps-table ps-tree-table", testId: "modules-table", attrs: { role: "treegrid", "aria-label": "Modules" } }, el("thead", {}, head), tbody);

    function comparator(): ((a: number, b: number) => number) | undefined {
      if (sort.column === NATURAL_ORDER.column) return undefined;
      const sign = sort.direction === "asc" ? 1 : -1;
      if (sort.column === "name") return (a, b) => sign * (nodes!.name[a] ?? "").localeCompare(nodes!.name[b] ?? "") || a - b;
      const column = columns.find((candidate) => candidate.id === sort.column);
      if (column === undefined) return undefined;
      const metric = values[column.metric];
      return (a, b) => sign * ((metric[a] ?? 0) - (metric[b] ?? 0)) || a - b;
    }

    function render(): void {
      for (const [id, cell] of headCells) {
        cell.setAttribute("aria-sort", sort.column === id ? (sort.direction === "asc" ? "ascending" : "descending") : "none");
      }
      const rows = flattenTree(index, expanded, comparator());
      table.dataset["rows"] = String(rows.length);
      replaceChildren(
        tbody,
        ...rows.map((row) => {
          const name = nodes!.name[row.node] ?? "";
          const toggle = row.hasChildren
            ? el(
                "button",
                {
                  className: "ps-toggle",
                  testId: "module-toggle",
                  attrs: { type: "button", "aria-expanded": String(row.expanded), "aria-label": `${row.expanded ? "Collapse" : "Expand"} ${name}` },
                },
                row.expanded ? "▾" : "▸",
              )
            : el("span", { className: "ps-toggle-spacer" });
          toggle.addEventListener("click", () => {
            expanded = new Set(expanded);
            if (row.expanded) expanded.delete(row.node);
            else expanded.add(row.node);
            render();
            tbody.querySelector<HTMLElement>(`tr[data-node="${row.node}"] [data-testid="module-toggle"]`)?.focus();
          });
          const nameCell = el("td", { className: "ps-tree-name" }, toggle, el("span", {}, name));
          nameCell.style.paddingLeft = `${8 + row.depth * 18}px`;
          if (row.node === 0 && name === "(model)") passiveTip(nameCell, DEF.root);
          return el(
            "tr",
            {
              testId: "module-row",
              attrs: {
                "data-node": String(row.node),
                "data-name": name,
                "data-depth": String(row.depth),
                "aria-level": String(row.depth + 1),
                ...(row.hasChildren ? { "aria-expanded": String(row.expanded) } : {}),
              },
            },
            nameCell,
            ...columns.map((column) => {
              const value = values[column.metric][row.node] ?? Number.NaN;
              const text = column.metric === "calls" ? (row.node === 0 && value === 0 ? "—" : formatCount(value)) : formatMicrosNumber(value);
              if (column.metric !== "forward_host" || !(rootForward > 0)) return el("td", { className: "ps-num" }, text);
              // Forward host time also as a bar: the module's share of the whole model's forward.
              const fill = el("span", {});
              fill.style.width = `${Math.min(100, Math.max(0, (value / rootForward) * 100))}%`;
              fill.style.background = "#4e79a7";
              return el("td", { className: "ps-num" }, text, el("span", { className: "ps-inline-bar", attrs: { "aria-hidden": "true" } }, fill));
            }),
          );
        }),
      );
    }

    const expandAll = el("button", { className: "ps-button", testId: "modules-expand-all", attrs: { type: "button" } }, "Expand all");
    const collapseAll = el("button", { className: "ps-button", testId: "modules-collapse-all", attrs: { type: "button" } }, "Collapse all");
    expandAll.addEventListener("click", () => {
      expanded = allParents(index);
      render();
    });
    collapseAll.addEventListener("click", () => {
      expanded = new Set(index.roots.filter((node) => (index.children[node] ?? []).length > 0));
      render();
    });
    render();
    replaceChildren(
      body,
      el(
        "div",
        { className: "ps-controls" },
        expandAll,
        collapseAll,
        el("span", { className: "ps-count", testId: "modules-count" }, `${formatCount(Math.max(0, nodes.name.length - 1))} modules`),
      ),
      hidden.length === 0
        ? null
        : el("p", { className: "ps-note", testId: "modules-hidden-columns" }, `Nothing recorded for ${hidden.join(", ")} in this span: ${hidden.length === 1 ? "that column is" : "those columns are"} left out.`),
      el("div", { className: "ps-tree-scroll" }, table),
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
