// "Download CSV" next to a table: a link to the table's own route with format=csv and the
// table's current state (sort, filter, grouping), so the file holds exactly the rows shown, in
// their order (the backend filters and sorts by the page's rules: tb_plugin/views/table_csv.py).
import type { ApiClient, QueryParams } from "../api/client";
import { formatSortParam, type SortState } from "../lib/table_model";
import { el } from "./dom";

/** What a table's download asks the route for, besides the route's own parameters. */
export interface CsvState {
  /** Which of the route's tables (`events`, `operators`, ...) when it answers several. */
  readonly table?: string;
  readonly sort: SortState | null;
  readonly filter: string;
}

/** The query of a CSV download: the route's parameters, then format, table, sort and filter. */
export function csvParams(routeParams: QueryParams, state: CsvState): QueryParams {
  return {
    ...routeParams,
    format: "csv",
    table: state.table,
    sort: state.sort !== null ? formatSortParam(state.sort) : undefined,
    filter: state.filter.trim() !== "" ? state.filter : undefined,
  };
}

export interface CsvDownloadOptions {
  readonly api: ApiClient;
  readonly route: string;
  /** Read at click time: the route's parameters and the table's state then. */
  readonly params: () => QueryParams;
  readonly state: () => CsvState;
  readonly testId: string;
  /** What the file holds, for the tooltip ("the operators as shown"). */
  readonly what: string;
}

export function csvDownloadLink(options: CsvDownloadOptions): HTMLAnchorElement {
  const link = el(
    "a",
    {
      className: "ps-download ps-csv-download",
      testId: options.testId,
      attrs: { download: "", title: `Download ${options.what} as CSV: the rows shown, in this order` },
    },
    "Download CSV",
  );
  const update = (): void => {
    link.href = options.api.url(options.route, csvParams(options.params(), options.state()));
  };
  // Refreshed before the browser follows the link, so it always carries the current state.
  link.addEventListener("pointerdown", update);
  link.addEventListener("focus", update);
  link.addEventListener("click", update);
  update();
  return link;
}
