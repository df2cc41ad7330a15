// The Distributed page's two tables of the span: the ranks (mean per step; sortable, the sort in the URL, the
// straggler selected) and the collectives over the span, each with its CSV of the same rows.
import type { DistributedData, RankRow } from "../../api/distributed";
import { csvDownloadLink } from "../../components/csv_download";
import { el } from "../../components/dom";
import { sectionHead } from "../../components/view_parts";
import { createVirtualTable } from "../../components/virtual_table";
import { formatSortParam, parseSortParam, type SortState } from "../../lib/table_model";
import type { ViewContext } from "../types";
import { collectivesTable, rankColumns } from "./parts";

/** Which span the tables show (their CSV asks for the same). */
export interface SpanOfRun {
  readonly run: string;
  readonly spanIndex: number;
}

export function ranksSection(ctx: ViewContext, span: SpanOfRun, data: DistributedData, signal: AbortSignal): HTMLElement {
  const stragglerWorker = data.straggler?.worker ?? null;
  const columns = rankColumns();
  const table = createVirtualTable<RankRow>({
    columns,
    rowKey: (row) => row.worker,
    filterText: (row) => row.worker,
    sort: parseSortParam(ctx.param("sort"), columns.map((column) => column.id), { column: "rank", direction: "asc" }),
    onSortChange: (next) => ctx.setParams({ sort: formatSortParam(next) }),
    onActivate: (row) => table.setSelected(row.worker),
    label: "Ranks",
    testId: "distributed-rank-table",
    maxHeight: 360,
    signal,
  });
  table.setRows(data.ranks);
  if (stragglerWorker !== null) table.setSelected(stragglerWorker);
  return el("section", {}, sectionHead("Ranks (mean per step)", csv(ctx, span, "ranks", () => table.sortState())), table.root);
}

export function collectivesSection(ctx: ViewContext, span: SpanOfRun, data: DistributedData): HTMLElement {
  return el(
    "section",
    {},
    sectionHead("Collectives (over the span, every rank)", csv(ctx, span, "collectives", () => null)),
    collectivesTable(data.collectives),
  );
}

function csv(ctx: ViewContext, span: SpanOfRun, table: "ranks" | "collectives", sort: () => SortState | null): HTMLElement {
  return csvDownloadLink({
    api: ctx.api,
    route: "distributed",
    params: () => ({ run: span.run, span_index: span.spanIndex }),
    state: () => ({ table, sort: sort(), filter: "" }),
    testId: `distributed-${table}-csv`,
    what: `the ${table}`,
  });
}
