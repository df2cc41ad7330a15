// The Modules page, the pure part: its columns, the figures per module (the root's the sum of the top-level
// modules), which columns were recorded at all, how a header click cycles the sort, the children's order for a
// sort, and a cell's text. No DOM.
import type { ModuleTree } from "../../api/modules";
import { MODULES_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { formatCount } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import type { SortState } from "../../lib/table_model";
import type { TreeIndex } from "../../lib/tree_model";

export type ModuleMetric = "calls" | "forward_host" | "forward_device" | "backward_host" | "backward_device";
export type ModuleValues = Record<ModuleMetric, number[]>;

export interface ModuleColumn {
  readonly id: string;
  readonly label: string;
  readonly unit?: string;
  readonly tip: string;
  readonly metric: ModuleMetric;
}

export const COLUMNS: readonly ModuleColumn[] = [
  { id: "calls", label: "Calls", tip: DEF.calls, metric: "calls" },
  { id: "forward_host", label: "Forward host", unit: "µs", tip: DEF.forwardHost, metric: "forward_host" },
  { id: "forward_device", label: "Forward device", unit: "µs", tip: DEF.forwardDevice, metric: "forward_device" },
  { id: "backward_host", label: "Backward host", unit: "µs", tip: DEF.backwardHost, metric: "backward_host" },
  { id: "backward_device", label: "Backward device", unit: "µs", tip: DEF.backwardDevice, metric: "backward_device" },
];

/** Shown before any header is clicked: the order the modules were recorded in. */
export const NATURAL_ORDER: SortState = { column: "order", direction: "asc" };

/**
 * The metric values to show per node. The "(model)" root carries no time of its own in the
 * answer, so it shows the sum of its children (the top-level modules) instead.
 */
export function moduleValues(nodes: ModuleTree, index: TreeIndex): ModuleValues {
  const metrics: ModuleMetric[] = ["calls", "forward_host", "forward_device", "backward_host", "backward_device"];
  const out = {} as ModuleValues;
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

/**
 * The columns shown and the lower-case labels of those left out: a time column that is zero everywhere (no GPU,
 * or an inference run without backward) is left out; calls always show.
 */
export function recordedColumns(values: ModuleValues): { readonly columns: ModuleColumn[]; readonly hidden: string[] } {
  const recorded = (metric: ModuleMetric): boolean => metric === "calls" || values[metric].some((value) => value > 0);
  return {
    columns: COLUMNS.filter((column) => recorded(column.metric)),
    hidden: COLUMNS.filter((column) => !recorded(column.metric)).map((column) => column.label.toLowerCase()),
  };
}

/** The note for the columns left out; null when none is. */
export function hiddenColumnsText(hidden: readonly string[]): string | null {
  if (hidden.length === 0) return null;
  return `Nothing recorded for ${hidden.join(", ")} in this span: ${hidden.length === 1 ? "that column is" : "those columns are"} left out.`;
}

/**
 * The sort after a click on header `id`: a new column sorts descending (the name ascending), a second click
 * reverses it, a third goes back to the recorded order.
 */
export function nextSort(sort: SortState, id: string): SortState {
  const first = id === "name" ? "asc" : "desc";
  if (sort.column !== id) return { column: id, direction: first };
  return sort.direction === first ? { column: id, direction: first === "asc" ? "desc" : "asc" } : NATURAL_ORDER;
}

/** The order of siblings for a sort (ties in the recorded order); undefined: the recorded order itself. */
export function moduleComparator(
  sort: SortState,
  names: readonly string[],
  columns: readonly ModuleColumn[],
  values: ModuleValues,
): ((a: number, b: number) => number) | undefined {
  if (sort.column === NATURAL_ORDER.column) return undefined;
  const sign = sort.direction === "asc" ? 1 : -1;
  if (sort.column === "name") return (a, b) => sign * (names[a] ?? "").localeCompare(names[b] ?? "") || a - b;
  const column = columns.find((candidate) => candidate.id === sort.column);
  if (column === undefined) return undefined;
  const metric = values[column.metric];
  return (a, b) => sign * ((metric[a] ?? 0) - (metric[b] ?? 0)) || a - b;
}

/** A cell's text: calls as a count (a dash on the root, which has none of its own), times in µs. */
export function moduleCellText(metric: ModuleMetric, node: number, value: number): string {
  return metric === "calls" ? (node === 0 && value === 0 ? "—" : formatCount(value)) : formatMicrosNumber(value);
}
