// The pure half of the data tables: sorting, filtering, and which rows a scrolled viewport
// shows. The DOM half is components/virtual_table.ts.

export type SortDirection = "asc" | "desc";
/** What a column sorts by; null (and NaN) mean "unknown" and always sort last. */
export type SortValue = number | string | boolean | null;

export interface SortState {
  readonly column: string;
  readonly direction: SortDirection;
}

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

function isMissing(value: SortValue): boolean {
  return value === null || (typeof value === "number" && Number.isNaN(value));
}

/** Ascending order of two values of one column; missing values are handled by the caller. */
function compareAscending(a: Exclude<SortValue, null>, b: Exclude<SortValue, null>): number {
  if (typeof a === "string" && typeof b === "string") return collator.compare(a, b);
  const x = typeof a === "boolean" ? Number(a) : typeof a === "number" ? a : Number.NaN;
  const y = typeof b === "boolean" ? Number(b) : typeof b === "number" ? b : Number.NaN;
  if (Number.isNaN(x) || Number.isNaN(y)) return collator.compare(String(a), String(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * A sorted copy of `rows`. Stable (equal values keep their order), and rows whose value is
 * missing go last in both directions, so "sort by device time" never starts with blanks.
 */
export function sortRows<T>(rows: readonly T[], value: (row: T) => SortValue, direction: SortDirection): T[] {
  const sign = direction === "asc" ? 1 : -1;
  const keyed = rows.map((row, index) => ({ row, index, key: value(row) }));
  keyed.sort((a, b) => {
    const aMissing = isMissing(a.key);
    const bMissing = isMissing(b.key);
    if (aMissing || bMissing) return aMissing === bMissing ? a.index - b.index : aMissing ? 1 : -1;
    const order = compareAscending(a.key as Exclude<SortValue, null>, b.key as Exclude<SortValue, null>) * sign;
    return order !== 0 ? order : a.index - b.index;
  });
  return keyed.map((entry) => entry.row);
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
