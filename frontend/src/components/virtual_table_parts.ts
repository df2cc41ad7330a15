// The virtual table's header and rows: a header cell per column (its label with the sort arrow, its unit under it,
// its tooltip; a click sorts), and the pool of row elements that the rows in view are drawn into (recycled as the
// table scrolls: a row element is refilled only when its row or the rows changed). Leading columns may be pinned
// while the table scrolls sideways. Cells are text only.
import { stickyOffsets, type SortState } from "../lib/table_model";
import { el } from "./dom";
import { passiveTip } from "./tooltip";
import type { TableColumn } from "./virtual_table";

/** How the columns are laid out: the grid template, and how many leading columns are pinned where. */
export interface ColumnGrid {
  readonly template: string;
  readonly stickyCount: number;
  readonly stickyLeft: readonly number[];
}

export function columnGrid(widths: readonly number[], template: string, sticky: number): ColumnGrid {
  const stickyCount = Math.min(sticky, widths.length);
  return { template, stickyCount, stickyLeft: stickyOffsets(widths, stickyCount) };
}

/** A cell's pinned classes ("" for a column that scrolls). */
function stickyClasses(grid: ColumnGrid, index: number): string {
  if (index >= grid.stickyCount) return "";
  return ` ps-vtable-sticky${index === grid.stickyCount - 1 ? " ps-vtable-sticky-last" : ""}`;
}

function pin(grid: ColumnGrid, cell: HTMLElement, index: number): void {
  if (index >= grid.stickyCount) return;
  cell.classList.add("ps-vtable-sticky");
  if (index === grid.stickyCount - 1) cell.classList.add("ps-vtable-sticky-last");
  cell.style.left = `${grid.stickyLeft[index] ?? 0}px`;
}

export interface TableHeader {
  readonly root: HTMLElement;
  /** Show the sort: aria-sort on every header, the arrow on the sorted one. */
  update(sort: SortState): void;
}

/** The header row; `onSort(column)` is a click on a column's header. */
export function createTableHeader<T>(columns: readonly TableColumn<T>[], grid: ColumnGrid, onSort: (column: TableColumn<T>) => void): TableHeader {
  const headerCells = new Map<string, HTMLElement>();
  const root = el("div", { className: "ps-vtable-head", attrs: { role: "row" } });
  root.style.gridTemplateColumns = grid.template;
  columns.forEach((column, index) => {
    // Label (with the sort arrow) on one line, the unit under it, so every header has the same shape.
    const button = el(
      "button",
      { className: `ps-vtable-sort ps-align-${column.align ?? "left"}`, attrs: { type: "button", "data-column": column.id } },
      el(
        "span",
        { className: "ps-vtable-label" },
        column.label,
        el("span", { className: "ps-vtable-arrow", attrs: { "aria-hidden": "true" } }),
      ),
      el("span", { className: "ps-vtable-unit" }, column.unit ?? ""),
    );
    if (column.tip !== undefined) passiveTip(button, column.tip);
    button.addEventListener("click", () => onSort(column));
    const cell = el("div", { className: "ps-vtable-th", attrs: { role: "columnheader" } }, button);
    pin(grid, cell, index);
    headerCells.set(column.id, cell);
    root.appendChild(cell);
  });
  return {
    root,
    update(sort) {
      for (const [id, cell] of headerCells) {
        const active = id === sort.column;
        cell.setAttribute("aria-sort", active ? (sort.direction === "asc" ? "ascending" : "descending") : "none");
        const arrow = cell.querySelector(".ps-vtable-arrow");
        if (arrow !== null) arrow.textContent = active ? (sort.direction === "asc" ? " ▲" : " ▼") : "";
      }
    },
  };
}

/** A row element of the pool, the row it shows (index into the rows shown) and the rows' version it was filled for. */
export interface RenderedRow {
  readonly element: HTMLElement;
  readonly cells: HTMLElement[];
  index: number;
  version: number;
}

/** A new row element, appended to `body`. */
export function makeRow<T>(body: HTMLElement, columns: readonly TableColumn<T>[], grid: ColumnGrid, rowHeight: number): RenderedRow {
  const cells = columns.map((column, index) => {
    const cell = el("div", { className: `ps-vtable-td ps-align-${column.align ?? "left"}`, attrs: { role: "cell" } });
    pin(grid, cell, index);
    return cell;
  });
  const element = el("div", { className: "ps-vtable-row", attrs: { role: "row", tabindex: "0" } }, ...cells);
  element.style.gridTemplateColumns = grid.template;
  element.style.height = `${rowHeight}px`;
  body.appendChild(element);
  return { element, cells, index: -1, version: -1 };
}

/** Fill a row element with `row`, the `index`-th row shown, of the rows' `version`. */
export function fillRow<T>(rendered: RenderedRow, row: T, index: number, version: number, columns: readonly TableColumn<T>[], grid: ColumnGrid): void {
  rendered.index = index;
  rendered.version = version;
  rendered.element.dataset["index"] = String(index);
  rendered.element.setAttribute("aria-rowindex", String(index + 2));
  columns.forEach((column, columnIndex) => {
    const cell = rendered.cells[columnIndex];
    if (cell === undefined) return;
    cell.textContent = column.text(row);
    if (column.cellClass !== undefined) {
      const extra = column.cellClass(row);
      cell.className = `ps-vtable-td ps-align-${column.align ?? "left"}${stickyClasses(grid, columnIndex)}${extra !== null && extra !== "" ? ` ${extra}` : ""}`;
    }
    const cellTip = column.cellTip?.(row) ?? null;
    if (cellTip !== null && cellTip !== "") cell.dataset["tip"] = cellTip;
    else delete cell.dataset["tip"];
    delete cell.dataset["tipCut"]; // a cut text's tooltip is given again on hover (tipCutCell)
  });
}
