// The Modules page's tree table: a header per column (a click cycles its sort, kept in the URL), a row per module
// shown with its toggle indented by depth, forward host time also as a bar of the whole model's forward, and the
// expand-all and collapse-all actions. Names are text content.
import type { ModuleTree } from "../../api/modules";
import { el, replaceChildren } from "../../components/dom";
import { passiveTip } from "../../components/tooltip";
import { MODULES_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import { allParents, expandedToDepth, flattenTree, type TreeIndex, type TreeRow } from "../../lib/tree_model";
import type { ViewContext } from "../types";
import { NATURAL_ORDER, moduleCellText, moduleComparator, nextSort, type ModuleColumn, type ModuleValues } from "./model";

export interface ModulesTable {
  readonly root: HTMLElement;
  expandAll(): void;
  collapseAll(): void;
}

export function createModulesTable(
  ctx: Pick<ViewContext, "param" | "setParams">,
  nodes: ModuleTree,
  index: TreeIndex,
  values: ModuleValues,
  columns: readonly ModuleColumn[],
): ModulesTable {
  const rootForward = index.roots.reduce((sum, rootNode) => sum + (values.forward_host[rootNode] ?? 0), 0);
  let expanded = expandedToDepth(index, 3);
  let sort = parseSortParam(ctx.param("sort"), columns.map((column) => column.id).concat(["name"]), NATURAL_ORDER);

  const headCells = new Map<string, HTMLElement>();
  const header = (id: string, label: string, tipText: string | null, numeric: boolean): HTMLElement => {
    const button = el("button", { attrs: { type: "button" } }, label);
    if (tipText !== null) passiveTip(button, tipText);
    button.addEventListener("click", () => {
      sort = nextSort(sort, id);
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

  function render(): void {
    for (const [id, cell] of headCells) {
      cell.setAttribute("aria-sort", sort.column === id ? (sort.direction === "asc" ? "ascending" : "descending") : "none");
    }
    const rows = flattenTree(index, expanded, moduleComparator(sort, nodes.name, columns, values));
    table.dataset["rows"] = String(rows.length);
    replaceChildren(tbody, ...rows.map(rowOf));
  }

  function rowOf(row: TreeRow): HTMLElement {
    const name = nodes.name[row.node] ?? "";
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
        const text = moduleCellText(column.metric, row.node, value);
        if (column.metric !== "forward_host" || !(rootForward > 0)) return el("td", { className: "ps-num" }, text);
        // Forward host time also as a bar: the module's share of the whole model's forward.
        const fill = el("span", {});
        fill.style.width = `${Math.min(100, Math.max(0, (value / rootForward) * 100))}%`;
        fill.style.background = "#4e79a7";
        return el("td", { className: "ps-num" }, text, el("span", { className: "ps-inline-bar", attrs: { "aria-hidden": "true" } }, fill));
      }),
    );
  }

  render();
  return {
    root: table,
    expandAll() {
      expanded = allParents(index);
      render();
    },
    collapseAll() {
      expanded = new Set(index.roots.filter((node) => (index.children[node] ?? []).length > 0));
      render();
    },
  };
}
