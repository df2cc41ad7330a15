// The pure half of the data tables: sorting, filtering, and which rows a scrolled viewport
// shows. The DOM half is components/virtual_table.ts.

export type SortDirection = "asc" | "desc";
/** What a column sorts by; null (and NaN) mean "unknown" and always sort last. */
export type SortValue = number | string | boolean | null;

export interface SortState {
  readonly column: string;
  readonly direction: SortDirection;
}

/**
 * The order key of a text cell: lower-cased, each run of ASCII digits replaced by "0", its length
 * (one character) and the digits without leading zeros, so "step 9" < "step 10" and a digit run
 * compares with other characters as a digit does. Compared as UTF-16 code units. The CSV export
 * (tb_plugin/views/table_csv.py, text_sort_key) sorts by the same key, so a downloaded table has the
 * rows in the order the page shows them.
 */
export function textSortKey(text: string): string {
  return text.toLowerCase().replace(/[0-9]+/g, (run) => {
    const digits = run.replace(/^0+/, "");
    return `0${String.fromCharCode(digits.length)}${digits}`;
  });
}

function isMissing(value: SortValue): boolean {
  return value === null || (typeof value === "number" && Number.isNaN(value));
}

/** A present sort value ready to compare: text as its textSortKey, booleans as 0/1. */
type OrderKey = { readonly text: string } | number;

function orderKey(value: Exclude<SortValue, null>): OrderKey {
  if (typeof value === "string") return { text: textSortKey(value) };
  return typeof value === "boolean" ? Number(value) : value;
}

/** Ascending order of two keys of one column (a column never mixes text and numbers; if it did, numbers first). */
function compareAscending(a: OrderKey, b: OrderKey): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
}

/**
 * A sorted copy of `rows`. Stable (equal values keep their order), and rows whose value is
 * missing go last in both directions, so "sort by device time" never starts with blanks.
 */
export function sortRows<T>(rows: readonly T[], value: (row: T) => SortValue, direction: SortDirection): T[] {
  const sign = direction === "asc" ? 1 : -1;
  const present: { row: T; index: number; key: OrderKey }[] = [];
  const missing: T[] = [];
  rows.forEach((row, index) => {
    const raw = value(row);
    // Keys are computed once per row, not once per comparison.
    if (isMissing(raw)) missing.push(row);
    else present.push({ row, index, key: orderKey(raw as Exclude<SortValue, null>) });
  });
  present.sort((a, b) => compareAscending(a.key, b.key) * sign || a.index - b.index);
  return [...present.map((entry) => entry.row), ...missing];
}

/**
 * The rows whose text contains every word of `query`, ignoring case. An empty query keeps
 * every row (and returns the same array, so callers can skip work).
 */
export function filterRows<T>(rows: readonly T[], query: string, text: (row: T) => string): readonly T[] {
  const words = query.toLowerCase().split(/\s+/).filter((word) => word !== "");
  if (words.length === 0) return rows;
  return rows.filter((row) => {
    const haystack = text(row).toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

/** `column:direction` as kept in the URL, e.g. "device_self:desc". */
export function formatSortParam(state: SortState): string {
  return `${state.column}:${state.direction}`;
}

/** Reads a sort parameter; an unknown column or a malformed value gives `fallback`. */
export function parseSortParam(text: string | null, columns: readonly string[], fallback: SortState): SortState {
  if (text === null) return fallback;
  const match = /^([A-Za-z0-9_]+):(asc|desc)$/.exec(text);
  if (match === null || !columns.includes(match[1] ?? "")) return fallback;
  return { column: match[1] ?? fallback.column, direction: match[2] === "asc" ? "asc" : "desc" };
}

/** The rows to put in the DOM: indices [start, end). */
export interface RowWindow {
  readonly start: number;
  readonly end: number;
}

/**
 * Which rows of a fixed-row-height list a viewport shows, plus `overscan` rows on each side
 * so a fast scroll does not flash empty space.
 * @param scrollTop how far the rows are scrolled, px
 * @param viewportHeight height available to rows, px
 */
export function visibleWindow(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  rowCount: number,
  overscan = 8,
): RowWindow {
  if (rowCount <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, Number.isFinite(scrollTop) ? scrollTop : 0);
  const height = Math.max(0, Number.isFinite(viewportHeight) ? viewportHeight : 0);
  const first = Math.min(rowCount - 1, Math.floor(top / rowHeight));
  const last = Math.min(rowCount, Math.ceil((top + height) / rowHeight));
  return { start: Math.max(0, first - overscan), end: Math.min(rowCount, Math.max(last, first + 1) + overscan) };
}

/** The scrollTop that brings row `index` fully into a viewport, or null when it already is. */
export function scrollToReveal(index: number, scrollTop: number, viewportHeight: number, rowHeight: number): number | null {
  const rowTop = index * rowHeight;
  const rowBottom = rowTop + rowHeight;
  if (rowTop < scrollTop) return rowTop;
  if (rowBottom > scrollTop + viewportHeight) return Math.max(0, rowBottom - viewportHeight);
  return null;
}

/** The sort after a click on a column's header: the other direction on the sorted column, else its first direction. */
export function sortOnHeaderClick(sort: SortState, column: string, firstDirection: SortDirection = "desc"): SortState {
  const direction: SortDirection = sort.column === column ? (sort.direction === "asc" ? "desc" : "asc") : firstDirection;
  return { column, direction };
}

/** Where each of the first `count` columns is pinned while the table scrolls sideways: the widths before it. */
export function stickyOffsets(widths: readonly number[], count: number): number[] {
  return widths.slice(0, count).map((_, i) => widths.slice(0, i).reduce((sum, w) => sum + w, 0));
}

/**
 * The row a key moves the focus to from row `index` of `count` (`page` rows a page); undefined for a key that
 * moves nothing. Page and Home/End moves stay within the rows; an arrow past the ends gives an index outside them.
 */
export function rowAfterKey(key: string, index: number, page: number, count: number): number | undefined {
  const moves: Readonly<Record<string, number>> = {
    ArrowDown: index + 1,
    ArrowUp: index - 1,
    PageDown: Math.min(count - 1, index + page),
    PageUp: Math.max(0, index - page),
    Home: 0,
    End: count - 1,
  };
  return moves[key];
}
