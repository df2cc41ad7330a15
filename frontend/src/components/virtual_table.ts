// A sortable, filterable table that stays fast with any number of rows: rows have a fixed
// height and only the ones in view (plus a few) are in the DOM, absolutely positioned in a
// body as tall as all rows. Cells are text only; a cell whose text is cut shows it whole in a tooltip.
// Sorting/filtering logic: lib/table_model.ts; the header and the row elements: virtual_table_parts.ts.
import {
  filterRows,
  rowAfterKey,
  scrollToReveal,
  sortOnHeaderClick,
  sortRows,
  visibleWindow,
  type RowWindow,
  type SortDirection,
  type SortState,
  type SortValue,
} from "../lib/table_model";
import { el } from "./dom";
import { installTooltips } from "./tooltip";
import { columnGrid, createTableHeader, fillRow, makeRow, type RenderedRow } from "./virtual_table_parts";

export interface TableColumn<T> {
  readonly id: string;
  readonly label: string;
  /** Unit shown in the header, e.g. "µs". */
  readonly unit?: string;
  /** Header tooltip: what the column is and how it is computed. */
  readonly tip?: string;
  /** Minimum width, px; `grow` > 0 lets the column take a share of spare width. */
  readonly width: number;
  readonly grow?: number;
  readonly align?: "left" | "right" | "center";
  readonly sortValue: (row: T) => SortValue;
  readonly text: (row: T) => string;
  /** Tooltip of a cell (e.g. the full name when it is cut). */
  readonly cellTip?: (row: T) => string | null;
  /** Extra class of a cell (e.g. a badge look for a flag); the text stays plain text. */
  readonly cellClass?: (row: T) => string | null;
  /** Direction of the first click on the header (numbers: largest first). */
  readonly firstDirection?: SortDirection;
}

export interface VirtualTableOptions<T> {
  readonly columns: readonly TableColumn<T>[];
  readonly rowKey: (row: T) => string;
  /** Text the filter box searches in. */
  readonly filterText: (row: T) => string;
  readonly sort: SortState;
  readonly onSortChange?: (sort: SortState) => void;
  /** Click, Enter or Space on a row. */
  readonly onActivate?: (row: T) => void;
  readonly label: string;
  readonly testId: string;
  /** Shown instead of rows when the filter matches nothing. */
  readonly emptyText?: string;
  readonly rowHeight?: number;
  /** Height of the scrolling area, px (the table is shorter when its rows are). */
  readonly maxHeight?: number;
  /** How many leading columns stay in view while the table scrolls sideways (names, picks). */
  readonly stickyColumns?: number;
  /** Aborting removes the table's observers. */
  readonly signal?: AbortSignal;
}

export interface VirtualTable<T> {
  readonly root: HTMLElement;
  setRows(rows: readonly T[]): void;
  setFilter(query: string): void;
  setSort(sort: SortState): void;
  setSelected(key: string | null): void;
  /** The rows after filtering and sorting, in display order. */
  visibleRows(): readonly T[];
  /** The sort and filter now applied (what a CSV download asks for). */
  sortState(): SortState;
  filterQuery(): string;
}

const DEFAULT_ROW_HEIGHT = 28;
const DEFAULT_MAX_HEIGHT = 520;

// Header labels are 13px semibold; the sort arrow and the cell padding come on top.
const HEADER_FONT = "600 13px Roboto, system-ui, -apple-system, \"Segoe UI\", Helvetica, Arial, sans-serif";
const HEADER_EXTRA_PX = 16 + 12;
let measureContext: CanvasRenderingContext2D | null | undefined;

/** The width a header label needs on one line, px: measured where a canvas is at hand, else estimated. */
export function headerLabelWidth(label: string): number {
  if (measureContext === undefined) {
    try {
      measureContext = typeof document !== "undefined" ? (document.createElement("canvas").getContext?.("2d") ?? null) : null;
    } catch {
      measureContext = null;
    }
  }
  if (measureContext !== null) {
    measureContext.font = HEADER_FONT;
    return Math.ceil(measureContext.measureText(label).width) + HEADER_EXTRA_PX;
  }
  return Math.ceil(label.length * 8) + HEADER_EXTRA_PX;
}

/** A column's width: as declared, but never narrower than its header label (headers never overlap). */
export function columnWidth(column: { readonly width: number; readonly label: string }): number {
  return Math.max(column.width, headerLabelWidth(column.label));
}

/** What `tipCutCell` reads and writes of a cell (an HTMLElement; a plain object in the unit tests). */
export interface CellLike {
  readonly scrollWidth: number;
  readonly clientWidth: number;
  readonly textContent: string | null;
  readonly dataset: DOMStringMap;
}

/**
 * Gives a cell whose text is cut (its text wider than the cell, shown with an ellipsis) its whole text as a
 * tooltip, unless the column gives it a tooltip of its own; a cell no longer cut loses the tooltip it was
 * given. Called when the pointer comes over a cell, so that only that cell is measured.
 */
export function tipCutCell(cell: CellLike): void {
  const own = cell.dataset["tip"] !== undefined && cell.dataset["tipCut"] === undefined;
  if (own) return;
  const text = cell.textContent ?? "";
  if (text !== "" && cell.scrollWidth > cell.clientWidth) {
    cell.dataset["tip"] = text;
    cell.dataset["tipCut"] = "true";
  } else if (cell.dataset["tipCut"] !== undefined) {
    delete cell.dataset["tip"];
    delete cell.dataset["tipCut"];
  }
}

function templateColumns(widths: readonly number[], grows: readonly number[]): string {
  return widths.map((width, i) => ((grows[i] ?? 0) > 0 ? `minmax(${width}px, ${grows[i]}fr)` : `${width}px`)).join(" ");
}

export function createVirtualTable<T>(options: VirtualTableOptions<T>): VirtualTable<T> {
  const columns = options.columns;
  const rowHeight = options.rowHeight ?? DEFAULT_ROW_HEIGHT;
  let allRows: readonly T[] = [];
  let shown: readonly T[] = [];
  let query = "";
  let sort = options.sort;
  let selectedKey: string | null = null;
  /** Bumped whenever `shown` changes, so recycled row elements know to refill their cells. */
  let version = 0;
  let frame: number | null = null;
  let lastWindow: RowWindow = { start: 0, end: 0 };
  const pool: RenderedRow[] = [];

  const widths = columns.map(columnWidth);
  const grid = columnGrid(widths, templateColumns(widths, columns.map((column) => column.grow ?? 0)), options.stickyColumns ?? 0);
  const minWidth = widths.reduce((sum, width) => sum + width, 0);
  const header = createTableHeader(columns, grid, (column) => {
    applySort(sortOnHeaderClick(sort, column.id, column.firstDirection));
    options.onSortChange?.(sort);
  });

  const body = el("div", { className: "ps-vtable-body", attrs: { role: "rowgroup" } });
  const inner = el("div", { className: "ps-vtable-inner" }, header.root, body);
  inner.style.minWidth = `${minWidth}px`;
  const scroller = el("div", { className: "ps-vtable-scroll" }, inner);
  scroller.style.maxHeight = `${options.maxHeight ?? DEFAULT_MAX_HEIGHT}px`;
  const empty = el("div", { className: "ps-vtable-empty", hidden: true }, options.emptyText ?? "No rows match the filter.");
  const root = el(
    "div",
    { className: "ps-vtable", testId: options.testId, attrs: { role: "table", "aria-label": options.label } },
    scroller,
    empty,
  );

  function recompute(): void {
    const column = columns.find((candidate) => candidate.id === sort.column) ?? columns[0];
    const filtered = filterRows(allRows, query, options.filterText);
    shown = column === undefined ? filtered : sortRows(filtered, column.sortValue, sort.direction);
    version += 1;
    root.setAttribute("aria-rowcount", String(shown.length + 1));
    root.dataset["rows"] = String(shown.length);
    body.style.height = `${shown.length * rowHeight}px`;
    empty.hidden = shown.length > 0 || allRows.length === 0;
    header.update(sort);
    renderNow();
  }

  function applySort(next: SortState): void {
    sort = next;
    recompute();
  }

  function viewportHeight(): number {
    // The sticky header covers the top of the scrolling area.
    const height = scroller.clientHeight > 0 ? scroller.clientHeight : (options.maxHeight ?? DEFAULT_MAX_HEIGHT);
    return Math.max(rowHeight, height - header.root.offsetHeight);
  }

  function renderNow(): void {
    frame = null;
    const window = visibleWindow(scroller.scrollTop, viewportHeight(), rowHeight, shown.length);
    lastWindow = window;
    const count = window.end - window.start;
    while (pool.length < count) pool.push(makeRow(body, columns, grid, rowHeight));
    pool.forEach((rendered, slot) => {
      const index = window.start + slot;
      if (slot >= count) {
        rendered.element.hidden = true;
        rendered.index = -1;
        return;
      }
      rendered.element.hidden = false;
      const row = shown[index];
      if ((rendered.index !== index || rendered.version !== version) && row !== undefined) fillRow(rendered, row, index, version, columns, grid);
      rendered.element.style.transform = `translateY(${index * rowHeight}px)`;
      const selected = row !== undefined && selectedKey !== null && options.rowKey(row) === selectedKey;
      rendered.element.setAttribute("aria-selected", String(selected));
    });
  }

  function scheduleRender(): void {
    if (frame !== null) return;
    frame = requestAnimationFrame(renderNow);
  }

  function rowIndexOf(target: EventTarget | null): number | null {
    if (!(target instanceof Element)) return null;
    const element = target.closest<HTMLElement>(".ps-vtable-row");
    const index = Number(element?.dataset["index"]);
    return element !== null && Number.isInteger(index) ? index : null;
  }

  function activate(index: number): void {
    const row = shown[index];
    if (row !== undefined) options.onActivate?.(row);
  }

  function focusRow(index: number): void {
    if (index < 0 || index >= shown.length) return;
    const reveal = scrollToReveal(index, scroller.scrollTop, viewportHeight(), rowHeight);
    if (reveal !== null) scroller.scrollTop = reveal;
    renderNow();
    pool.find((rendered) => rendered.index === index && !rendered.element.hidden)?.element.focus({ preventScroll: true });
  }

  /** Marks the sides where columns lie out of view, so a cut-off table says it scrolls sideways. */
  function updateEdges(): void {
    const left = scroller.scrollLeft > 1;
    const right = scroller.scrollLeft + scroller.clientWidth < scroller.scrollWidth - 1;
    if (root.dataset["moreLeft"] !== String(left)) root.dataset["moreLeft"] = String(left);
    if (root.dataset["moreRight"] !== String(right)) root.dataset["moreRight"] = String(right);
  }

  scroller.addEventListener("scroll", scheduleRender, { passive: true });
  scroller.addEventListener("scroll", updateEdges, { passive: true });
  // Before the document's tooltip listener sees the event (it listens on the document, above the body).
  body.addEventListener("mouseover", (event) => {
    const cell = event.target instanceof Element ? event.target.closest<HTMLElement>(".ps-vtable-td") : null;
    if (cell !== null) tipCutCell(cell);
  });
  body.addEventListener("click", (event) => {
    const index = rowIndexOf(event.target);
    if (index !== null) activate(index);
  });
  body.addEventListener("keydown", (event) => {
    const index = rowIndexOf(event.target);
    if (index === null) return;
    const page = Math.max(1, Math.floor(viewportHeight() / rowHeight) - 1);
    const next = rowAfterKey(event.key, index, page, shown.length);
    if (event.key === "Enter" || event.key === " ") activate(index);
    else if (next !== undefined) focusRow(next);
    else return;
    event.preventDefault();
  });

  if (typeof ResizeObserver !== "undefined") {
    const observer = new ResizeObserver(() => {
      updateEdges();
      const window = visibleWindow(scroller.scrollTop, viewportHeight(), rowHeight, shown.length);
      if (window.start !== lastWindow.start || window.end !== lastWindow.end) scheduleRender();
    });
    observer.observe(scroller);
    options.signal?.addEventListener("abort", () => observer.disconnect(), { once: true });
  }
  options.signal?.addEventListener(
    "abort",
    () => {
      if (frame !== null) cancelAnimationFrame(frame);
      frame = null;
    },
    { once: true },
  );

  installTooltips(document);
  header.update(sort);
  return {
    root,
    setRows(rows) {
      allRows = rows;
      recompute();
    },
    setFilter(next) {
      if (next === query) return;
      query = next;
      scroller.scrollTop = 0;
      recompute();
    },
    setSort(next) {
      applySort(next);
    },
    setSelected(key) {
      selectedKey = key;
      renderNow();
    },
    visibleRows: () => shown,
    sortState: () => sort,
    filterQuery: () => query,
  };
}
