// The Operator page, the pure part: a row's label in the top charts, the table's first sort, the drill-down's key
// for a row, and the row a URL's drill-down names. No DOM.
import type { OperatorGrouping, OperatorKey, OperatorRow } from "../../api/operators";
import type { SortState } from "../../lib/table_model";
import { stackSummary } from "./columns";

/** A row as the charts name it: the operator, with its shapes or its stack's first frame when grouped by them. */
export function rowLabel(row: OperatorRow, groupBy: OperatorGrouping): string {
  if (groupBy === "input_shape") return `${row.name} ${row.input_shape ?? ""}`.trim();
  if (groupBy === "stack") return `${row.name} · ${stackSummary(row.stack ?? null)}`;
  return row.name;
}

/** Device self time first when the span has device work, else host self time; largest first. */
export function defaultSort(hasDevice: boolean): SortState {
  return { column: hasDevice ? "device_self" : "host_self", direction: "desc" };
}

/** What the drill-down asks for a row: its name, and its shapes when the rows are grouped by them. */
export function operatorKey(row: OperatorRow, groupBy: OperatorGrouping): OperatorKey {
  return { name: row.name, inputShape: groupBy === "input_shape" ? (row.input_shape ?? null) : null };
}

/** The row the URL's drill-down (operator.op, operator.op_shape) names: the first of that name (and shapes, if given). */
export function wantedRow(rows: readonly OperatorRow[], op: string | null, shape: string | null): OperatorRow | undefined {
  if (op === null) return undefined;
  return rows.find((candidate) => candidate.name === op && (shape === null || candidate.input_shape === shape));
}
